// Click-style element arguments: comma-separated, positional or "KEYWORD
// value", with typed readers and errors that point at the argument.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "shoal/core/diag.hh"

namespace shoal {

struct Duration {  // a time interval ("10ms", "1.5", "2s", "100us")
  uint64_t ns = 0;
  double seconds() const { return double(ns) / 1e9; }
};
struct Bandwidth {  // bytes per second ("10Mbps", "100kb/s", "1GBps", "1250000")
  double bytes_per_sec = 0;
};
struct IPv4Addr {
  std::array<uint8_t, 4> b{};
  uint32_t host() const { return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3]; }
};
struct IPv6Addr {
  std::array<uint8_t, 16> b{};
};
struct EtherAddr {
  std::array<uint8_t, 6> b{};
};
struct DataString {  // raw bytes: quoted strings with C escapes and \<hex> blocks
  std::string bytes;
};
// File names checked when the configuration is (so `shoal check` reports
// them, at the argument): a file to read must open for reading and not be
// a folder; a file to write ("-": standard output) must be writable, or
// creatable in a folder that exists and is writable. Nothing is created.
struct InputPath {
  std::string path;
};
struct OutputPath {
  std::string path;
};
bool check_input_path(const std::string& path, std::string& why);
bool check_output_path(const std::string& path, std::string& why);

// Value parsers; each returns false on a malformed value.
bool parse_bool(std::string_view s, bool& out);
bool parse_int(std::string_view s, int64_t& out);
bool parse_uint(std::string_view s, uint64_t& out);
bool parse_double(std::string_view s, double& out);
bool parse_duration(std::string_view s, Duration& out);
bool parse_bandwidth(std::string_view s, Bandwidth& out);
bool parse_ipv4(std::string_view s, IPv4Addr& out);
bool parse_ipv6(std::string_view s, IPv6Addr& out);
bool parse_ether(std::string_view s, EtherAddr& out);
// An IP protocol: a number (0-255) or a name as Click's NameInfo knows them
// (icmp, igmp, ipip, tcp, udp, ipv6, gre, esp, ah, icmp6, sctp).
bool parse_ip_proto(std::string_view s, uint8_t& out);
// A TCP (proto 6) or UDP (17) port: a number, a PortInfo name, or a
// well-known service name ("ssh"); proto 0 takes either.
bool parse_port(std::string_view s, int proto, uint16_t& out);
// The space-separated words of s (Click's address lists in one argument).
std::vector<std::string_view> split_words(std::string_view s);
// "ADDR/LEN" or "ADDR/MASK" (and "ADDR" alone: a /32 when `bare` is allowed;
// Click's shortened networks: "18.26/16" is 18.26.0.0/16, "0/0" the default);
// addr and mask in host order, addr not masked.
bool parse_ipv4_prefix(std::string_view s, uint32_t& addr, uint32_t& mask, bool bare = false);
// Space-separated IPv4 (IPv6) addresses appended to out (host order); false
// with `bad` set to the first word that is not one.
bool parse_ipv4_list(std::string_view s, std::vector<uint32_t>& out, std::string& bad);
bool parse_ipv6_list(std::string_view s, std::vector<IPv6Addr>& out, std::string& bad);
bool parse_data(std::string_view s, DataString& out);
bool parse_string(std::string_view s, std::string& out);  // unquotes
// "SECONDS[.FRACTION]" exactly, to nanoseconds (no floating point).
bool parse_timestamp(std::string_view s, uint64_t& ns);
std::string_view trim(std::string_view s);
std::string format_ipv4(const uint8_t* b);
std::string format_ipv6(const uint8_t* b);
std::string format_ether(const uint8_t* b);
// Click's form (EtherAddress::unparse): 00-1A-2B-3C-4D-5E.
std::string format_ether_click(const uint8_t* b);

struct ArgItem {
  std::string keyword;  // empty for a positional argument
  std::string value;    // text after the keyword, trimmed
  std::string text;     // the whole argument as written
  Loc loc;              // where the argument starts
  bool used = false;
};

// Splits a configuration string on top-level commas (quotes, parentheses,
// brackets, braces and comments respected). `start` is where the string began.
std::vector<ArgItem> split_args(std::string_view config, Loc start, bool keywords = true);
// True when `s` starts with an all-caps keyword ("LIMIT 5", "STOP").
bool looks_like_keyword(std::string_view s, std::string* kw = nullptr, std::string* rest = nullptr);

class Args {
 public:
  Args(std::vector<ArgItem> items, Loc element_loc, std::string element_name);

  template <class T>
  Args& read(const char* kw, T& out) {
    return read_impl(kw, out, false, false);
  }
  template <class T>
  Args& read_m(const char* kw, T& out) {
    return read_impl(kw, out, true, false);
  }
  template <class T>
  Args& read_p(const char* kw, T& out) {
    return read_impl(kw, out, false, true);
  }
  template <class T>
  Args& read_mp(const char* kw, T& out) {
    return read_impl(kw, out, true, true);
  }
  template <class T>
  Args& read(const char* kw, std::optional<T>& out) {
    T v{};
    bool got = has(kw);
    read_impl(kw, v, false, false);
    if (got) out = v;
    return *this;
  }

  bool has(const char* kw) const;
  // All positional arguments not yet consumed, in order (marked used).
  std::vector<ArgItem*> rest_positional();
  // Every argument, untouched by keyword detection (Classifier, Script...).
  std::vector<ArgItem>& items() { return items_; }
  // Fails on unused arguments: unknown keywords or too many positionals.
  void complete();

  [[noreturn]] void fail(const ArgItem& at, const std::string& msg) const;
  [[noreturn]] void fail(const std::string& msg) const;
  const Loc& element_loc() const { return loc_; }

  // Documentation checks: while a Probe lives on a thread, every keyword a
  // configure() asks for on that thread is recorded, and a missing
  // mandatory argument does not fail (so later keywords are reached too).
  struct Probe {
    Probe();
    ~Probe();
    std::set<std::string> keywords;
  };
  // For elements that find a keyword among items() themselves.
  static void note_keyword(const char* kw);

 private:
  ArgItem* find_kw(const char* kw);
  ArgItem* next_positional();
  static bool probing();
  template <class T>
  Args& read_impl(const char* kw, T& out, bool mandatory, bool positional);
  template <class T>
  void convert(const ArgItem& a, const char* kw, T& out);

  std::vector<ArgItem> items_;
  Loc loc_;
  std::string ename_;
};

template <class T>
void Args::convert(const ArgItem& a, const char* kw, T& out) {
  std::string_view v = a.keyword.empty() ? std::string_view(a.text) : std::string_view(a.value);
  v = trim(v);
  bool ok = false;
  const char* what = "value";
  if constexpr (std::is_same_v<T, bool>) {
    ok = parse_bool(v, out), what = "boolean";
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    int64_t x;
    ok = parse_int(v, x) && x >= int64_t(std::numeric_limits<T>::min()) && x <= int64_t(std::numeric_limits<T>::max());
    if (ok) out = T(x);
    what = "integer";
  } else if constexpr (std::is_integral_v<T>) {
    uint64_t x;
    ok = parse_uint(v, x) && x <= uint64_t(std::numeric_limits<T>::max());
    if (ok) out = T(x);
    what = "unsigned integer";
  } else if constexpr (std::is_same_v<T, double>) {
    ok = parse_double(v, out), what = "real number";
  } else if constexpr (std::is_same_v<T, std::string>) {
    ok = parse_string(v, out), what = "string";
  } else if constexpr (std::is_same_v<T, Duration>) {
    ok = parse_duration(v, out), what = "time interval";
  } else if constexpr (std::is_same_v<T, Bandwidth>) {
    ok = parse_bandwidth(v, out), what = "bandwidth";
  } else if constexpr (std::is_same_v<T, IPv4Addr>) {
    ok = parse_ipv4(v, out), what = "IPv4 address";
  } else if constexpr (std::is_same_v<T, IPv6Addr>) {
    ok = parse_ipv6(v, out), what = "IPv6 address";
  } else if constexpr (std::is_same_v<T, EtherAddr>) {
    ok = parse_ether(v, out), what = "Ethernet address";
  } else if constexpr (std::is_same_v<T, DataString>) {
    ok = parse_data(v, out), what = "data string";
  } else if constexpr (std::is_same_v<T, InputPath> || std::is_same_v<T, OutputPath>) {
    constexpr bool in = std::is_same_v<T, InputPath>;
    ok = parse_string(v, out.path), what = "file name";
    std::string why;
    if (ok && out.path.empty()) fail(a, std::string(kw) + " is empty");
    if (ok && !(in ? check_input_path(out.path, why) : check_output_path(out.path, why)))
      fail(a, std::string(kw) + ": cannot " + (in ? "read" : "write") + " '" + out.path + "': " + why);
  } else {
    static_assert(sizeof(T) == 0, "unsupported argument type");
  }
  if (!ok)
    fail(a,
         std::string(kw) + " expects " +
             (what[0] == 'a' || what[0] == 'i' || what[0] == 'I' || what[0] == 'u' || what[0] == 'E' ? "an " : "a ") +
             what + ", got '" + std::string(v) + "'");
}

template <class T>
Args& Args::read_impl(const char* kw, T& out, bool mandatory, bool positional) {
  ArgItem* a = find_kw(kw);
  if (!a && positional) a = next_positional();
  if (!a) {
    if (mandatory && !probing()) fail(std::string("missing mandatory ") + kw + " argument");
    return *this;
  }
  a->used = true;
  convert(*a, kw, out);
  return *this;
}

}  // namespace shoal

// IPsec's security association and policy databases (RFC 4301 §4.4), written
// in the syntax of Linux's `ip xfrm state add` and `ip xfrm policy add`, so
// an operator copies a Linux set-up line for line:
//
//   ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001 reqid 1 mode tunnel
//       replay-window 1024 flag esn aead 'rfc4106(gcm(aes))' 0x<key+salt> 128
//   ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out
//       tmpl src 192.0.2.1 dst 192.0.2.2 proto esp reqid 1 mode tunnel
// (each command on one line, or continued with a backslash at a line's end)
//
// A Database is a value; SharedDatabase publishes snapshots of one to the
// workers (each picks up a change at its next batch) and keeps every SA's
// sequence counter and replay window across changes.
#pragma once
#include <array>
#include <atomic>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "shoal/crypto/replay.hh"

namespace shoal::crypto {

// The bytes first, at offset 0: every packet's policy match reads them as
// two 8-byte words just after the selector was written, and a load that
// straddles two stores (the bytes at offset 1, as they were) cannot be
// forwarded from them: measured 85% of the match's time in that stall.
// Aligned to 8 for the same reason: a selector's second address, at offset
// 17 unaligned, had its second word straddle the stores of its first and of
// the protocol (measured 40% of the match's time).
struct alignas(8) Addr {
  std::array<uint8_t, 16> b{};
  uint8_t family = 0;                     // 4, 6, or 0 (none)
  bool operator==(const Addr& o) const {  // two words, not a byte loop: on every packet
    uint64_t a[2], b2[2];
    __builtin_memcpy(a, b.data(), 16);
    __builtin_memcpy(b2, o.b.data(), 16);
    return family == o.family && a[0] == b2[0] && a[1] == b2[1];
  }
  std::strong_ordering operator<=>(const Addr& o) const {  // family first, then the bytes
    if (auto c = family <=> o.family; c != 0) return c;
    return b <=> o.b;
  }
  std::string str() const;
  // (inline, whole words: see above)
  static Addr v4(const uint8_t* p) {
    Addr a;
    a.set_v4(p);
    return a;
  }
  static Addr v6(const uint8_t* p) {
    Addr a;
    a.set_v6(p);
    return a;
  }
  // The same in place: a packet's selector is written field by field where
  // it lies (an Addr built aside and copied in went through a 16-byte load
  // of two 8-byte stores on the stack, a forwarding stall on every packet).
  void set_v4(const uint8_t* p) {
    uint32_t w;
    __builtin_memcpy(&w, p, 4);
    uint64_t lo = w, hi = 0;
    __builtin_memcpy(b.data(), &lo, 8);
    __builtin_memcpy(b.data() + 8, &hi, 8);
    family = 4;
  }
  void set_v6(const uint8_t* p) {
    __builtin_memcpy(b.data(), p, 16);
    family = 6;
  }
};
struct Prefix {
  Addr a;
  uint8_t len = 0;  // with a.family 0: any address of either family
  // (inline, branch-light: every packet's policy match calls it twice)
  bool contains(const Addr& x) const {
    if (a.family == 0) return true;
    if (x.family != a.family) return false;
    uint64_t p[2], q[2];
    __builtin_memcpy(p, a.b.data(), 16);
    __builtin_memcpy(q, x.b.data(), 16);
    // the bits that differ, most significant first: none may be within the prefix
    uint64_t d0 = __builtin_bswap64(p[0] ^ q[0]), d1 = __builtin_bswap64(p[1] ^ q[1]);
    if (len <= 64) return len == 0 || (d0 >> (64 - len)) == 0;
    return d0 == 0 && (d1 >> (128 - len)) == 0;
  }
  std::string str() const;
};

enum class Mode : uint8_t { Transport, Tunnel };
enum class Cipher : uint8_t { Null, AesCbc, AesCtr, AesGcm };
enum class Integ : uint8_t { None, HmacSha1, HmacSha256 };
enum class Dir : uint8_t { In, Out, Fwd };

// What `ip xfrm state add` says about one SA.
struct SAParams {
  Addr src, dst;
  uint32_t spi = 0;
  uint32_t reqid = 0;
  Mode mode = Mode::Transport;  // Linux's default
  Cipher cipher = Cipher::Null;
  std::string enc_key;  // AES key (16, 24 or 32 bytes)
  std::string salt;     // GCM's and CTR's 4-byte nonce (the key's tail in xfrm)
  Integ integ = Integ::None;
  std::string auth_key;
  uint8_t icv_len = 0;  // bytes
  bool esn = false;
  uint32_t replay_window = 1024;  // default here; `replay-window 0` turns the check off, as on Linux
  uint64_t seq_out = 0;           // `replay-oseq`: the last sequence number sent
  // `encap espinudp SPORT DPORT OADDR`: ESP in UDP (RFC 3948, NAT traversal)
  bool encap = false;
  uint16_t encap_sport = 0, encap_dport = 0;
  std::string suite() const;  // "aes128-gcm16", "aes256-ctr-hmac-sha1-96", ...
};

// The lock of one SA's replay window: held for a few instructions per
// packet, mostly by one worker (the fanout hashes an SA's packets to one),
// so a test-and-test-and-set spin: one atomic exchange to take it and a
// plain store to give it back, where std::mutex costs two atomic operations.
class SpinLock {
 public:
  void lock() {
    while (f_.exchange(true, std::memory_order_acquire))
      while (f_.load(std::memory_order_relaxed)) pause();
  }
  void unlock() { f_.store(false, std::memory_order_release); }

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::atomic<bool> f_{false};
};

// One SA with its run-time state, shared by every worker.
struct SA {
  explicit SA(SAParams p) : params(std::move(p)), window(params.replay_window) { next_seq = params.seq_out + 1; }
  const SAParams params;
  std::atomic<uint64_t> next_seq{1};  // outbound: fetch_add, never reused
  SpinLock mu;                        // inbound: the replay window
  ReplayWindow window;
  std::atomic<uint64_t> packets{0}, bytes{0}, replay{0}, integrity{0};
};

// An element's count of the packets and bytes it sent through an SA,
// added to the SA's shared counters when the SA changes and when the
// element flushes it (at the end of each batch, before its snapshot of the
// database changes): two atomic additions per batch instead of per packet.
class SaTally {
 public:
  void add(SA* sa, uint64_t bytes) {
    if (sa != sa_) {
      flush();
      sa_ = sa;
    }
    ++n_;
    b_ += bytes;
  }
  void flush() {
    if (sa_ && n_) {
      sa_->packets.fetch_add(n_, std::memory_order_relaxed);
      sa_->bytes.fetch_add(b_, std::memory_order_relaxed);
    }
    sa_ = nullptr;
    n_ = b_ = 0;
  }

 private:
  SA* sa_ = nullptr;
  uint64_t n_ = 0, b_ = 0;
};

struct Template {
  Addr src, dst;  // family 0: the packet's own addresses (transport mode)
  uint32_t reqid = 0, spi = 0;
  Mode mode = Mode::Transport;
};

// `ip xfrm policy add`: a selector, a direction, an action, a template.
struct Policy {
  Prefix src, dst;
  uint8_t proto = 0;  // 0: any
  uint16_t sport = 0, sport_mask = 0, dport = 0, dport_mask = 0;
  Dir dir = Dir::Out;
  bool allow = true;
  uint32_t priority = 0;
  bool has_tmpl = false;
  Template tmpl;
  uint64_t order = 0;  // insertion order, the tie-break among equal priorities
  SA* sa = nullptr;    // the SA the template picks, when it names both addresses (resolved per change)
  std::string str() const;
};

// The fields of a packet that policies select on.
struct Selector {
  Addr src, dst;
  uint8_t proto = 0;
  uint16_t sport = 0, dport = 0;  // TCP, UDP, SCTP ports; ICMP type and code as Linux keys them
};

// The security policy database's lookup (RFC 4301 §4.4.1: the first
// policy in priority order whose selector matches), by tuple space search
// (Srinivasan, Suri and Varghese, SIGCOMM 1999; Open vSwitch's classifier):
// the policies of a direction are grouped by their mask (each address's
// family and prefix length, whether the protocol and each port are
// selected), and each group is a hash table from the masked selector to its
// first policy. A lookup probes each group once, the groups in the order of
// the first policy they hold, and stops at a group whose first policy comes
// after the best match so far: a gateway of 10,000 tunnels whose policies
// share one mask probes one table, where a scan would try them all.
class PolicyIndex {
 public:
  // ps sorted by (priority, order), as Database keeps them.
  void build(const std::vector<Policy>& ps);
  // The index in ps of the first policy of `dir` that matches s; -1: none.
  int32_t match(Dir dir, const Selector& s) const;
  size_t groups(Dir dir) const { return by_dir_[size_t(dir)].size(); }

 private:
  struct Key {
    uint64_t src[2], dst[2];
    uint32_t ports;  // sport << 16 | dport
    uint32_t proto;
    bool operator==(const Key&) const = default;
  };
  struct Group {
    uint8_t sfam, dfam;           // 0: either family (and every address)
    uint64_t smask[2], dmask[2];  // the prefixes' bits, over the bytes as loaded
    uint32_t port_mask, proto_mask;
    int32_t first;                               // its first policy
    uint32_t shift;                              // 64 - log2(slots); 64: a short list
    std::vector<std::pair<Key, int32_t>> slots;  // open addressing (index -1: empty), or the list
    Key key_of(const Selector& s) const;
    int32_t find(const Key& k) const;
    void insert(const Key& k, int32_t idx);
  };
  static constexpr size_t kSmall = 4;  // policies a group compares in turn rather than hashes
  static uint64_t hash(const Key& k);
  std::vector<Group> by_dir_[3];
};

class Database {
 public:
  // One `ip xfrm state|policy add|delete|deleteall|flush` command (the
  // leading "ip xfrm" optional). false with err and the 1-based column of
  // the offending word.
  bool apply(std::string_view line, std::string& err, size_t& col);
  // Every non-comment line of a file; err is "file:line:col: what".
  bool load_file(const std::string& path, std::string& err);

  const std::vector<std::shared_ptr<SA>>& sas() const { return sas_; }
  const std::vector<Policy>& policies() const { return policies_; }

  // The SA for an inbound ESP packet (RFC 4301 §4.1: SPI and destination).
  SA* find_in(const Addr& dst, uint32_t spi) const;
  // The policy of the highest priority (lowest number) that matches, in
  // direction `dir`; nullptr when none does.
  const Policy* match(Dir dir, const Selector& s) const {
    int32_t i = index_.match(dir, s);
    return i < 0 ? nullptr : &policies_[size_t(i)];
  }
  // The same by trying every policy in turn (the reference of tests and
  // benchmarks).
  const Policy* match_linear(Dir dir, const Selector& s) const;
  const PolicyIndex& index() const { return index_; }
  // The SA a template picks for a packet (src/dst are the packet's, used
  // when the template leaves the addresses to it); nullptr when none.
  SA* find_out(const Template& t, const Addr& src, const Addr& dst) const;

  std::string list_sas() const;
  // Whether UDP datagrams to `port` may carry ESP: an SA's encapsulation
  // names it as its destination port.
  bool natt_port(uint16_t port) const {
    for (uint16_t p : natt_ports_)
      if (p == port) return true;
    return false;
  }
  std::string list_policies() const;

 private:
  bool state_cmd(std::string_view verb, std::vector<std::pair<std::string, size_t>>& w, size_t i, std::string& err,
                 size_t& col);
  bool command(std::string_view line, std::string& err, size_t& col);
  void resolve();  // each policy's SA, after a change
  bool policy_cmd(std::string_view verb, std::vector<std::pair<std::string, size_t>>& w, size_t i, std::string& err,
                  size_t& col);
  std::vector<std::shared_ptr<SA>> sas_;
  struct SpiHash {
    size_t operator()(const std::pair<Addr, uint32_t>& k) const {
      uint64_t w[2];
      __builtin_memcpy(w, k.first.b.data(), 16);
      return size_t((w[0] * 0x9e3779b97f4a7c15ull) ^ (w[1] * 0xbf58476d1ce4e5b9ull) ^
                    ((uint64_t(k.second) << 8 | k.first.family) * 0x94d049bb133111ebull)) >>
             16;
    }
  };
  std::unordered_map<std::pair<Addr, uint32_t>, SA*, SpiHash>
      by_spi_;  // the SAs by (dst, SPI), as commands change them
  // by_spi_ as every inbound packet looks in it (built by resolve): open
  // addressing over a power of two of slots, half full at most, probed from
  // the hash's top bits (no division, no node to chase).
  struct SpiSlot {
    uint64_t dst[2];
    uint32_t spi;
    uint8_t family;
    SA* sa;  // nullptr: empty
  };
  std::vector<SpiSlot> spi_slots_;
  uint32_t spi_shift_ = 64;
  std::vector<Policy> policies_;               // sorted by (priority, order) once resolved
  bool sorted_ = true;                         // (false: a policy was appended out of order)
  std::unordered_set<std::string> selectors_;  // the policies' selectors and directions (duplicates replace)
  PolicyIndex index_;                          // over policies_ (built by resolve)
  // The SAs of each (src, dst, mode), in the order added (templates without an SPI)
  std::map<std::tuple<Addr, Addr, Mode>, std::vector<SA*>> by_pair_;
  std::vector<uint16_t> natt_ports_;  // the SAs' encapsulation ports (set by resolve)
  uint64_t next_order_ = 0;
};

// A Database shared by elements and workers: a writer applies commands
// under a lock and publishes a new snapshot; readers hold the snapshot they
// last took and check a generation number per batch.
class SharedDatabase {
 public:
  SharedDatabase() : snap_(std::make_shared<Database>()) {}
  std::shared_ptr<const Database> snapshot() const {
    std::lock_guard<std::mutex> g(mu_);
    return snap_;
  }
  uint64_t generation() const { return gen_.load(std::memory_order_acquire); }
  bool load_file(const std::string& path, std::string& err);
  bool apply(std::string_view line, std::string& err);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Database> snap_;
  std::atomic<uint64_t> gen_{1};
};

}  // namespace shoal::crypto

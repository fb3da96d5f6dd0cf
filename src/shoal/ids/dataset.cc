#include "shoal/ids/dataset.hh"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "shoal/core/args.hh"

namespace shoal::ids {

namespace {

constexpr size_t kDefaultCapacity = size_t(1) << 24;  // values, when no memcap is given

size_t digest_len(Dataset::Type t) { return t == Dataset::Type::Md5 ? 16 : 32; }

bool unhex(std::string_view h, std::string& out) {
  if (h.size() % 2) return false;
  out.clear();
  for (size_t i = 0; i < h.size(); i += 2) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int a = nib(h[i]), b = nib(h[i + 1]);
    if (a < 0 || b < 0) return false;
    out.push_back(char(a << 4 | b));
  }
  return true;
}

}  // namespace

bool Dataset::parse_type(std::string_view w, Type& t) {
  static const std::pair<const char*, Type> kTypes[] = {
      {"string", Type::String}, {"md5", Type::Md5}, {"sha256", Type::Sha256}, {"ipv4", Type::Ipv4}, {"ip", Type::Ip}};
  for (const auto& [n, v] : kTypes)
    if (w == n) return t = v, true;
  return false;
}

const char* Dataset::type_name(Type t) {
  static const char* const kNames[] = {"string", "md5", "sha256", "ipv4", "ip"};
  return kNames[size_t(t)];
}

bool Dataset::value(const uint8_t* s, uint32_t n, std::string& out) const {
  switch (type_) {
    case Type::String:  // (an empty buffer is no value: its file line would be empty)
      if (n == 0) return false;
      out.assign(reinterpret_cast<const char*>(s), n);
      return true;
    case Type::Md5:
    case Type::Sha256:
      if (n != digest_len(type_)) return false;
      out.assign(reinterpret_cast<const char*>(s), n);
      return true;
    case Type::Ipv4:
      if (n != 4) return false;
      out.assign(reinterpret_cast<const char*>(s), 4);
      return true;
    case Type::Ip:
      if (n == 16) {
        out.assign(reinterpret_cast<const char*>(s), 16);
      } else if (n == 4) {  // an IPv4 address, mapped
        out.assign("\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
        out.append(reinterpret_cast<const char*>(s), 4);
      } else {
        return false;
      }
      return true;
  }
  return false;
}

bool Dataset::parse_line(std::string_view line, std::string& out) const {
  switch (type_) {
    case Type::String: {
      // base64, optionally followed by ",reputation" (datarep's form): the value only
      std::string_view b = trim(line.substr(0, line.find(',')));
      if (b.empty() || b.size() % 4) return false;
      out.resize(b.size() / 4 * 3);
      int got = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(b.data()), int(b.size()));
      if (got < 0) return false;
      size_t pad = size_t(std::count(b.end() - 2, b.end(), '='));
      out.resize(size_t(got) - pad);
      return true;
    }
    case Type::Md5:
    case Type::Sha256: {
      std::string_view h = trim(line.substr(0, line.find(',')));
      return h.size() == 2 * digest_len(type_) && unhex(h, out);
    }
    case Type::Ipv4: {
      std::string a(trim(line.substr(0, line.find(','))));
      uint8_t b[4];
      if (inet_pton(AF_INET, a.c_str(), b) != 1) return false;
      out.assign(reinterpret_cast<const char*>(b), 4);
      return true;
    }
    case Type::Ip: {
      std::string a(trim(line.substr(0, line.find(','))));
      uint8_t b[16];
      if (inet_pton(AF_INET6, a.c_str(), b) == 1) {
        out.assign(reinterpret_cast<const char*>(b), 16);
        return true;
      }
      if (inet_pton(AF_INET, a.c_str(), b) != 1) return false;
      return value(b, 4, out);
    }
  }
  return false;
}

std::string Dataset::text(const std::string& v) const {
  switch (type_) {
    case Type::String: {
      std::string b64(4 * ((v.size() + 2) / 3) + 1, '\0');
      b64.resize(size_t(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                                        reinterpret_cast<const unsigned char*>(v.data()), int(v.size()))));
      return b64;
    }
    case Type::Md5:
    case Type::Sha256: {
      std::string h;
      for (unsigned char c : v) h += fmt::format("{:02x}", c);
      return h;
    }
    case Type::Ipv4:
    case Type::Ip: {
      char buf[INET6_ADDRSTRLEN] = {};
      bool v4 = v.size() == 4 || (v.size() == 16 && std::memcmp(v.data(), "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0);
      inet_ntop(v4 ? AF_INET : AF_INET6, v.data() + (v.size() == 16 && v4 ? 12 : 0), buf, sizeof buf);
      return buf;
    }
  }
  return {};
}

bool Dataset::load(const std::string& path, std::string& err) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))  // (not a device or a pipe that never ends)
    return err = fmt::format("dataset '{}': cannot read '{}': not a file", name_, path), false;
  std::ifstream f(path, std::ios::binary);
  if (!f) return err = fmt::format("dataset '{}': cannot read '{}'", name_, path), false;
  std::string text((std::istreambuf_iterator<char>(f)), {});
  return load_text(text, path, err);
}

bool Dataset::load_text(std::string_view text, const std::string& name, std::string& err) {
  constexpr size_t kMaxLine = 64 * 1024;
  std::string v;
  int n = 0;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    ++n;
    if (line.size() > kMaxLine)
      return err = fmt::format("{}:{}: a line longer than {} bytes (dataset '{}')", name, n, kMaxLine, name_), false;
    std::string_view l = trim(line);
    if (l.empty() || l[0] == '#') continue;
    if (!parse_line(l, v))
      return err = fmt::format("{}:{}: not a {} value of dataset '{}'", name, n, type_name(type_), name_), false;
    std::lock_guard<std::mutex> g(mu_);
    if (values_.size() >= capacity_)
      return err = fmt::format("{}:{}: dataset '{}' is full ({} values)", name, n, name_, capacity_), false;
    values_.insert(v);
  }
  return true;
}

std::string Dataset::save_text() const {
  std::vector<std::string> lines;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const std::string& v : values_) lines.push_back(text(v));
  }
  std::sort(lines.begin(), lines.end());  // (a stable file for the same set)
  std::string out;
  for (const std::string& l : lines) out += l + '\n';
  return out;
}

bool Dataset::save(const std::string& path, std::string& err) const {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc | std::ios::binary);
    f << save_text();
    f.flush();
    if (!f) return err = fmt::format("dataset '{}': cannot write '{}'", name_, tmp), false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return err = fmt::format("dataset '{}': cannot write '{}': {}", name_, path, ec.message()), false;
  return true;
}

bool Dataset::contains(const uint8_t* s, uint32_t n) const {
  std::string v;
  if (!value(s, n, v)) return false;
  std::lock_guard<std::mutex> g(mu_);
  return values_.count(v) != 0;
}

bool Dataset::add(const uint8_t* s, uint32_t n) {
  std::string v;
  if (!value(s, n, v)) return false;
  std::lock_guard<std::mutex> g(mu_);
  if (values_.count(v)) return false;
  if (values_.size() >= capacity_) {
    full_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  values_.insert(std::move(v));
  return true;
}

bool Dataset::remove(const uint8_t* s, uint32_t n) {
  std::string v;
  if (!value(s, n, v)) return false;
  std::lock_guard<std::mutex> g(mu_);
  return values_.erase(v) != 0;
}

size_t Dataset::size() const {
  std::lock_guard<std::mutex> g(mu_);
  return values_.size();
}

bool parse_dataset(std::string_view v, DatasetUse& u, std::string& err) {
  std::vector<std::string_view> parts;
  for (size_t at = 0; at <= v.size();) {
    size_t c = v.find(',', at);
    if (c == std::string_view::npos) c = v.size();
    parts.push_back(trim(v.substr(at, c - at)));
    at = c + 1;
  }
  if (parts.size() < 2) return err = "dataset: needs a command and a name", false;
  static const std::pair<const char*, DatasetUse::Cmd> kCmds[] = {{"isset", DatasetUse::IsSet},
                                                                  {"isnotset", DatasetUse::IsNotSet},
                                                                  {"set", DatasetUse::Set},
                                                                  {"unset", DatasetUse::Unset}};
  bool known = false;
  for (const auto& [n, c] : kCmds)
    if (parts[0] == n) u.cmd = c, known = true;
  if (!known) return err = fmt::format("dataset: '{}' is not isset, isnotset, set or unset", parts[0]), false;
  if (parts[1].empty() || parts[1].size() > 63) return err = "dataset: a name of 1 to 63 characters", false;
  u.name = std::string(parts[1]);
  for (size_t i = 2; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    size_t sp = p.find(' ');
    std::string_view k = p.substr(0, sp), val = sp == std::string_view::npos ? "" : trim(p.substr(sp + 1));
    if (k == "type") {
      if (!Dataset::parse_type(val, u.type))
        return err = fmt::format("dataset: type '{}' (string, md5, sha256, ipv4, ip)", val), false;
      u.typed = true;
    } else if (k == "load" || k == "save" || k == "state") {
      if (val.empty()) return err = fmt::format("dataset: {} needs a file", k), false;
      if (k != "save") u.load = std::string(val);
      if (k != "load") u.save = std::string(val);
    } else if (k == "memcap") {
      if (!parse_suricata_size(val, u.memcap)) return err = fmt::format("dataset: bad memcap '{}'", val), false;
    } else if (k == "hashsize") {
      // a hint for Suricata's hash table; a set here grows as it needs
    } else {
      return err = fmt::format("dataset: '{}' is not type, load, save, state, memcap or hashsize", k), false;
    }
  }
  return true;
}

bool parse_suricata_size(std::string_view v, uint64_t& out) {
  size_t d = 0;
  uint64_t n = 0;
  while (d < v.size() && v[d] >= '0' && v[d] <= '9' && n < (uint64_t(1) << 40)) n = n * 10 + uint64_t(v[d++] - '0');
  std::string unit;
  for (char c : v.substr(d)) unit += char(std::tolower(static_cast<unsigned char>(c)));
  uint64_t mult = unit.empty() || unit == "b"   ? 1
                  : unit == "k" || unit == "kb" ? 1024
                  : unit == "m" || unit == "mb" ? 1024 * 1024
                  : unit == "g" || unit == "gb" ? 1024ull * 1024 * 1024
                                                : 0;
  if (d == 0 || !mult || n >= (uint64_t(1) << 40)) return false;
  out = n * mult;
  return true;
}

bool dataset_check(const DatasetUse& u, Dataset& set, const uint8_t* s, uint32_t n) {
  switch (u.cmd) {
    case DatasetUse::IsSet: return set.contains(s, n);
    case DatasetUse::IsNotSet: return !set.contains(s, n);
    case DatasetUse::Set: return set.add(s, n);
    case DatasetUse::Unset: return set.remove(s, n);
  }
  return false;
}

std::shared_ptr<Dataset> Datasets::bind(const DatasetUse& u, const std::string& dir, std::string& err) {
  auto in = [](const std::string& d, const std::string& f) {
    return f.empty() || f[0] == '/' || d.empty() ? f : (std::filesystem::path(d) / f).string();
  };
  const std::string& data = data_dir_.empty() ? dir : data_dir_;
  auto save_path = [&](const std::string& f) { return in(data, f); };
  auto load_path = [&](const std::string& f, bool state) {
    if (state) return in(data, f);
    std::string here = in(dir, f);
    return std::filesystem::exists(here) ? here : in(data, f);
  };
  auto it = sets_.find(u.name);
  if (it != sets_.end()) {
    if (u.typed && u.type != it->second->type())
      return err = fmt::format("dataset '{}': type {}, but it is a {} set", u.name, Dataset::type_name(u.type),
                               Dataset::type_name(it->second->type())),
             nullptr;
    if (!u.save.empty()) save_.emplace(u.name, save_path(u.save));
    return it->second;
  }
  if (!u.typed) return err = fmt::format("dataset '{}': the first rule that names it gives its type", u.name), nullptr;
  size_t cap = u.memcap ? std::max<size_t>(1, size_t(u.memcap / 64)) : kDefaultCapacity;
  auto set = std::make_shared<Dataset>(u.name, u.type, cap);
  if (!u.load.empty()) {
    // state: a file that is not there yet is an empty set (it is written at the end)
    bool state = !u.save.empty() && u.save == u.load;
    std::string file = load_path(u.load, state);
    if (!(state && !std::filesystem::exists(file)) && !set->load(file, err)) return nullptr;
  }
  if (!u.save.empty()) save_.emplace(u.name, save_path(u.save));
  sets_.emplace(u.name, set);
  return set;
}

bool Datasets::save_all(std::string& err) const {
  for (const auto& [name, file] : save_)
    if (!sets_.at(name)->save(file, err)) return false;
  return true;
}

}  // namespace shoal::ids

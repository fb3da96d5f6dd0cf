#include "shoal/crypto/sadb.hh"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

namespace shoal::crypto {

std::string Addr::str() const {
  char buf[INET6_ADDRSTRLEN] = "";
  if (family == 4) inet_ntop(AF_INET, b.data(), buf, sizeof buf);
  if (family == 6) inet_ntop(AF_INET6, b.data(), buf, sizeof buf);
  return family ? buf : "any";
}

std::string Prefix::str() const { return a.family ? fmt::format("{}/{}", a.str(), len) : "any"; }

std::string SAParams::suite() const {
  std::string s;
  uint32_t bits = uint32_t(enc_key.size()) * 8;
  switch (cipher) {
    case Cipher::Null: s = "null"; break;
    case Cipher::AesCbc: s = fmt::format("aes{}-cbc", bits); break;
    case Cipher::AesCtr: s = fmt::format("aes{}-ctr", bits); break;
    case Cipher::AesGcm: return fmt::format("aes{}-gcm{}", bits, icv_len);
  }
  if (integ == Integ::HmacSha1) s += fmt::format("-hmac-sha1-{}", icv_len * 8);
  if (integ == Integ::HmacSha256) s += fmt::format("-hmac-sha256-{}", icv_len * 8);
  return s;
}

std::string Policy::str() const {
  static const char* const kDir[] = {"in", "out", "fwd"};
  std::string s = fmt::format("src {} dst {}", src.str(), dst.str());
  if (proto) s += fmt::format(" proto {}", proto);
  if (sport_mask) s += fmt::format(" sport {}", sport);
  if (dport_mask) s += fmt::format(" dport {}", dport);
  s += fmt::format(" dir {} priority {} action {}", kDir[int(dir)], priority, allow ? "allow" : "block");
  if (has_tmpl) {
    s += " tmpl";
    if (tmpl.src.family) s += " src " + tmpl.src.str();
    if (tmpl.dst.family) s += " dst " + tmpl.dst.str();
    s += " proto esp";
    if (tmpl.spi) s += fmt::format(" spi {:#010x}", tmpl.spi);
    s += fmt::format(" reqid {} mode {}", tmpl.reqid, tmpl.mode == Mode::Tunnel ? "tunnel" : "transport");
  }
  return s;
}

namespace {

using Words = std::vector<std::pair<std::string, size_t>>;  // word, 1-based column

// Splits a command into words, with '...' and "..." quoting.
bool split(std::string_view line, Words& w, std::string& err, size_t& col) {
  size_t i = 0;
  while (i < line.size()) {
    if (std::isspace(uint8_t(line[i]))) {
      ++i;
      continue;
    }
    size_t start = i;
    std::string word;
    while (i < line.size() && !std::isspace(uint8_t(line[i]))) {
      if (line[i] == '\'' || line[i] == '"') {
        char q = line[i];
        size_t end = line.find(q, i + 1);
        if (end == std::string_view::npos) {
          err = "unterminated quote";
          col = i + 1;
          return false;
        }
        word.append(line.substr(i + 1, end - i - 1));
        i = end + 1;
      } else {
        word += line[i++];
      }
    }
    w.emplace_back(std::move(word), start + 1);
  }
  return true;
}

bool parse_addr(const std::string& s, Addr& a) {
  uint8_t buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) {
    a = Addr::v4(buf);
    return true;
  }
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    a = Addr::v6(buf);
    return true;
  }
  return false;
}

bool parse_prefix(const std::string& s, Prefix& p) {
  size_t slash = s.find('/');
  if (!parse_addr(s.substr(0, slash), p.a)) return false;
  uint32_t max = p.a.family == 4 ? 32 : 128;
  if (slash == std::string::npos) {
    p.len = uint8_t(max);
    return true;
  }
  std::string l = s.substr(slash + 1);
  if (l.empty() || l.size() > 3 || !std::all_of(l.begin(), l.end(), ::isdigit)) return false;
  uint32_t n = uint32_t(std::stoul(l));
  if (n > max) return false;
  p.len = uint8_t(n);
  if (n == 0) p.a.b = {};  // 0.0.0.0/0 and ::/0 stay per family, as Linux keeps them
  return true;
}

bool parse_u64(const std::string& s, uint64_t& v) {
  if (s.empty()) return false;
  try {
    size_t used = 0;
    v = std::stoull(s, &used, 0);  // decimal, or 0x hexadecimal as ip(8) reads them
    return used == s.size() && s[0] != '-';
  } catch (...) {
    return false;
  }
}

// ALGO-KEYMAT: 0x followed by hexadecimal digits, or the bytes of a string.
bool parse_key(const std::string& s, std::string& key) {
  key.clear();
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    std::string h = s.substr(2);
    if (h.size() % 2) return false;
    for (size_t i = 0; i < h.size(); i += 2) {
      if (!std::isxdigit(uint8_t(h[i])) || !std::isxdigit(uint8_t(h[i + 1]))) return false;
      key += char(std::stoi(h.substr(i, 2), nullptr, 16));
    }
    return true;
  }
  key = s;  // a string's bytes (empty only for cipher_null)
  return true;
}

bool parse_mode(const std::string& s, Mode& m) {
  if (s == "tunnel")
    m = Mode::Tunnel;
  else if (s == "transport")
    m = Mode::Transport;
  else
    return false;
  return true;
}

bool parse_proto_number(const std::string& s, uint8_t& p) {
  static const std::pair<const char*, uint8_t> kNames[] = {{"tcp", 6},  {"udp", 17},       {"sctp", 132}, {"dccp", 33},
                                                           {"icmp", 1}, {"ipv6-icmp", 58}, {"gre", 47},   {"any", 0}};
  for (auto& [n, v] : kNames)
    if (s == n) {
      p = v;
      return true;
    }
  uint64_t v;
  if (!parse_u64(s, v) || v > 255) return false;
  p = uint8_t(v);
  return true;
}

// A refusal at word `at` (past the last word: just after it), with the
// word's 1-based column.
bool refuse(const Words& w, size_t at, std::string why, std::string& err, size_t& col) {
  err = std::move(why);
  col = at < w.size() ? w[at].second : (w.empty() ? 1 : w.back().second + w.back().first.size() + 1);
  return false;
}

// Policies in the order they are tried: priority, then insertion.
bool before(const Policy& a, const Policy& b) {
  return a.priority != b.priority ? a.priority < b.priority : a.order < b.order;
}

// A policy's selector and direction as bytes: equal for two policies that
// `ip xfrm policy update` would take for one.
std::string selector_key(const Policy& p) {
  std::string k;
  auto put = [&](const void* d, size_t n) { k.append(static_cast<const char*>(d), n); };
  for (const Prefix* x : {&p.src, &p.dst}) {
    put(x->a.b.data(), 16);
    put(&x->a.family, 1);
    put(&x->len, 1);
  }
  put(&p.dir, 1);
  put(&p.proto, 1);
  for (const uint16_t* v : {&p.sport, &p.sport_mask, &p.dport, &p.dport_mask}) put(v, 2);
  return k;
}

}  // namespace

void Database::resolve() {
  spi_slots_.assign(std::bit_ceil(std::max<size_t>(by_spi_.size() * 2, 2)), SpiSlot{{0, 0}, 0, 0, nullptr});
  spi_shift_ = uint32_t(64 - std::countr_zero(spi_slots_.size()));
  for (const auto& [key, sa] : by_spi_) {
    size_t mask = spi_slots_.size() - 1;
    for (size_t i = (SpiHash()(key) << 16) >> spi_shift_;; i = (i + 1) & mask)
      if (!spi_slots_[i].sa) {
        SpiSlot& s = spi_slots_[i];
        __builtin_memcpy(s.dst, key.first.b.data(), 16);
        s.spi = key.second, s.family = key.first.family, s.sa = sa;
        break;
      }
  }
  natt_ports_.clear();
  for (const auto& sa : sas_)
    if (sa->params.encap &&
        std::find(natt_ports_.begin(), natt_ports_.end(), sa->params.encap_dport) == natt_ports_.end())
      natt_ports_.push_back(sa->params.encap_dport);
  by_pair_.clear();
  for (const auto& sa : sas_) by_pair_[{sa->params.src, sa->params.dst, sa->params.mode}].push_back(sa.get());
  if (!sorted_) {  // (policies are appended as they come: one sort per load, not an insertion each)
    std::sort(policies_.begin(), policies_.end(), before);
    sorted_ = true;
  }
  for (Policy& p : policies_)
    p.sa = p.has_tmpl && p.tmpl.src.family && p.tmpl.dst.family ? find_out(p.tmpl, p.tmpl.src, p.tmpl.dst) : nullptr;
  index_.build(policies_);
}

bool Database::apply(std::string_view line, std::string& err, size_t& col) {
  bool ok = command(line, err, col);
  resolve();  // an SA added or removed changes what the policies pick
  return ok;
}

bool Database::command(std::string_view line, std::string& err, size_t& col) {
  Words w;
  if (!split(line, w, err, col)) return false;
  size_t i = 0;
  if (i + 1 < w.size() && w[i].first == "ip" && w[i + 1].first == "xfrm") i += 2;
  auto fail = [&](size_t at, std::string why) {
    err = std::move(why);
    col = at < w.size() ? w[at].second : (line.size() + 1);
    return false;
  };
  if (i >= w.size()) return fail(i, "expected 'state' or 'policy'");
  const std::string& obj = w[i].first;
  if (obj != "state" && obj != "policy") return fail(i, fmt::format("expected 'state' or 'policy', not '{}'", obj));
  if (i + 1 >= w.size()) return fail(i + 1, "expected add, delete or flush");
  std::string verb = w[i + 1].first;
  if (verb != "add" && verb != "delete" && verb != "flush" && verb != "update")
    return fail(i + 1, fmt::format("'ip xfrm {} {}' is not supported here (add, update, delete, flush)", obj, verb));
  if (verb == "update") verb = "add";  // update replaces an existing entry
  return obj == "state" ? state_cmd(verb, w, i + 2, err, col) : policy_cmd(verb, w, i + 2, err, col);
}

bool Database::state_cmd(std::string_view verb, Words& w, size_t i, std::string& err, size_t& col) {
  auto fail = [&](size_t at, std::string why) { return refuse(w, at, std::move(why), err, col); };
  if (verb == "flush") {
    if (i < w.size() && !(w[i].first == "proto" && i + 1 < w.size() && w[i + 1].first == "esp" && i + 2 == w.size()))
      return fail(i, "expected 'flush' or 'flush proto esp'");
    sas_.clear();
    by_spi_.clear();
    return true;
  }
  SAParams p;
  bool have_spi = false, have_enc = false, have_auth = false, have_proto = false;
  size_t first = i;
  for (; i < w.size(); ++i) {
    const std::string& k = w[i].first;
    auto need = [&](size_t n) { return i + n < w.size(); };
    auto value = [&]() -> const std::string& { return w[++i].first; };
    if (k == "src" || k == "dst") {
      if (!need(1)) return fail(i + 1, fmt::format("'{}' needs an address", k));
      Addr& a = k == "src" ? p.src : p.dst;
      if (!parse_addr(value(), a)) return fail(i, fmt::format("'{}' is not an address", w[i].first));
    } else if (k == "proto") {
      if (!need(1)) return fail(i + 1, "'proto' needs a protocol");
      if (value() != "esp") return fail(i, fmt::format("proto '{}': only esp is supported", w[i].first));
      have_proto = true;
    } else if (k == "spi") {
      uint64_t v;
      if (!need(1) || !parse_u64(value(), v) || v > 0xffffffffu || v < 256)
        return fail(i, "'spi' needs a number from 256 to 0xffffffff (RFC 4303 reserves 1-255)");
      p.spi = uint32_t(v);
      have_spi = true;
    } else if (verb == "delete") {
      return fail(i, fmt::format("'{}': 'state delete' takes src, dst, proto and spi", k));
    } else if (k == "reqid") {
      uint64_t v;
      if (!need(1) || !parse_u64(value(), v) || v > 0xffffffffu) return fail(i, "'reqid' needs a 32-bit number");
      p.reqid = uint32_t(v);
    } else if (k == "mode") {
      if (!need(1) || !parse_mode(value(), p.mode)) return fail(i, "'mode' is tunnel or transport");
    } else if (k == "replay-window") {
      uint64_t v;
      if (!need(1) || !parse_u64(value(), v) || v > ReplayWindow::kMaxWindow)
        return fail(i, fmt::format("'replay-window' needs a number up to {}", ReplayWindow::kMaxWindow));
      p.replay_window = uint32_t(v);
    } else if (k == "replay-oseq" || k == "seq") {
      uint64_t v;
      if (!need(1) || !parse_u64(value(), v) || v > 0xffffffffu) return fail(i, fmt::format("'{}' needs a number", k));
      if (k == "replay-oseq") p.seq_out = (p.seq_out & ~uint64_t(0xffffffff)) | v;
    } else if (k == "replay-oseq-hi") {
      uint64_t v;
      if (!need(1) || !parse_u64(value(), v) || v > 0xffffffffu) return fail(i, "'replay-oseq-hi' needs a number");
      p.seq_out = (p.seq_out & 0xffffffffu) | (v << 32);
    } else if (k == "encap") {
      if (!need(4)) return fail(i, "'encap' needs a type, a source port, a destination port and an address");
      const std::string& type = value();
      if (type != "espinudp") return fail(i, fmt::format("encap '{}': espinudp (RFC 3948) is supported", type));
      uint64_t sp, dp;
      if (!parse_u64(value(), sp) || sp == 0 || sp > 65535) return fail(i, "the encapsulation's source port: 1-65535");
      if (!parse_u64(value(), dp) || dp == 0 || dp > 65535)
        return fail(i, "the encapsulation's destination port: 1-65535");
      Addr oa;
      if (!parse_addr(value(), oa)) return fail(i, fmt::format("'{}' is not an address", w[i].first));
      p.encap = true;
      p.encap_sport = uint16_t(sp);
      p.encap_dport = uint16_t(dp);
    } else if (k == "flag") {
      if (!need(1)) return fail(i + 1, "'flag' needs a flag");
      while (i + 1 < w.size() && w[i + 1].first == "esn") {
        p.esn = true;
        ++i;
      }
      if (!p.esn) return fail(i + 1, fmt::format("flag '{}' is not supported (esn is)", w[i + 1].first));
    } else if (k == "aead") {
      if (!need(3)) return fail(i, "'aead' needs a name, a key and an ICV length");
      const std::string& name = value();
      size_t name_at = i;
      if (name != "rfc4106(gcm(aes))") return fail(name_at, fmt::format("aead '{}': rfc4106(gcm(aes)) is", name));
      std::string key;
      if (!parse_key(value(), key) || (key.size() != 20 && key.size() != 28 && key.size() != 36))
        return fail(i, "rfc4106(gcm(aes)) needs a 16, 24 or 32-byte key followed by a 4-byte salt");
      uint64_t bits;
      if (!parse_u64(value(), bits) || (bits != 64 && bits != 96 && bits != 128))
        return fail(i, "the ICV length of rfc4106(gcm(aes)) is 64, 96 or 128 bits");
      p.cipher = Cipher::AesGcm;
      p.enc_key = key.substr(0, key.size() - 4);
      p.salt = key.substr(key.size() - 4);
      p.icv_len = uint8_t(bits / 8);
      have_enc = have_auth = true;
    } else if (k == "enc") {
      if (!need(2)) return fail(i, "'enc' needs a name and a key");
      const std::string& name = value();
      size_t name_at = i;
      std::string key;
      if (!parse_key(value(), key)) return fail(i, "a key is 0x followed by hexadecimal digits, or a string");
      if (name == "cbc(aes)" || name == "aes") {
        if (key.size() != 16 && key.size() != 24 && key.size() != 32)
          return fail(i, "cbc(aes) needs a 16, 24 or 32-byte key");
        p.cipher = Cipher::AesCbc;
        p.enc_key = key;
      } else if (name == "rfc3686(ctr(aes))") {
        if (key.size() != 20 && key.size() != 28 && key.size() != 36)
          return fail(i, "rfc3686(ctr(aes)) needs a 16, 24 or 32-byte key followed by a 4-byte nonce");
        p.cipher = Cipher::AesCtr;
        p.enc_key = key.substr(0, key.size() - 4);
        p.salt = key.substr(key.size() - 4);
      } else if (name == "ecb(cipher_null)" || name == "cipher_null") {
        if (!key.empty()) return fail(i, "cipher_null takes an empty key (\"\")");
        p.cipher = Cipher::Null;
      } else {
        return fail(name_at,
                    fmt::format("enc '{}': cbc(aes), rfc3686(ctr(aes)) and ecb(cipher_null) are supported", name));
      }
      have_enc = true;
    } else if (k == "auth" || k == "auth-trunc") {
      if (!need(k == "auth" ? 2 : 3))
        return fail(i, fmt::format("'{}' needs a name, a key{}", k, k == "auth" ? "" : " and a truncation length"));
      const std::string& name = value();
      size_t name_at = i;
      if (name == "hmac(sha1)" || name == "sha1")
        p.integ = Integ::HmacSha1;
      else if (name == "hmac(sha256)" || name == "sha256")
        p.integ = Integ::HmacSha256;
      else
        return fail(name_at, fmt::format("auth '{}': hmac(sha1) and hmac(sha256) are supported", name));
      if (!parse_key(value(), p.auth_key) || p.auth_key.empty())
        return fail(i, "a key is 0x followed by hexadecimal digits, or a string");
      uint32_t full = p.integ == Integ::HmacSha1 ? 160 : 256;
      uint64_t bits = 96;  // Linux's default truncation, for hmac(sha256) too
      if (k == "auth-trunc" && (!parse_u64(value(), bits) || bits % 8 || bits < 96 || bits > full))
        return fail(i, fmt::format("the truncation length is a multiple of 8 from 96 to {} bits", full));
      p.icv_len = uint8_t(bits / 8);
      have_auth = true;
    } else {
      return fail(i, fmt::format("'{}' is not supported in 'ip xfrm state {}'", k, verb));
    }
  }
  if (!p.src.family || !p.dst.family) return fail(first, "an SA needs src and dst");
  if (p.src.family != p.dst.family) return fail(first, "src and dst are of different families");
  if (!have_proto) return fail(first, "an SA needs 'proto esp'");
  if (!have_spi) return fail(first, "an SA needs an spi");
  auto key = std::make_pair(p.dst, p.spi);
  auto it = by_spi_.find(key);
  if (verb == "delete") {
    if (it == by_spi_.end()) return fail(first, fmt::format("no SA with dst {} spi {:#010x}", p.dst.str(), p.spi));
    SA* gone = it->second;
    by_spi_.erase(it);
    std::erase_if(sas_, [&](const std::shared_ptr<SA>& s) { return s.get() == gone; });
    return true;
  }
  if (!have_enc) return fail(first, "an ESP SA needs 'enc' or 'aead'");
  if (p.cipher != Cipher::AesGcm && !have_auth && p.cipher != Cipher::Null)
    return fail(first, "encryption without integrity is refused (RFC 4303 §3.2): add auth-trunc");
  if (p.cipher == Cipher::AesGcm && p.integ != Integ::None) return fail(first, "aead takes no separate auth");
  if (p.cipher == Cipher::Null && !have_auth) return fail(first, "cipher_null needs auth");
  auto sa = std::make_shared<SA>(std::move(p));
  if (it != by_spi_.end()) {
    SA* old = it->second;
    std::erase_if(sas_, [&](const std::shared_ptr<SA>& s) { return s.get() == old; });
  }
  by_spi_[key] = sa.get();
  sas_.push_back(std::move(sa));
  return true;
}

bool Database::policy_cmd(std::string_view verb, Words& w, size_t i, std::string& err, size_t& col) {
  auto fail = [&](size_t at, std::string why) { return refuse(w, at, std::move(why), err, col); };
  if (verb == "flush") {
    if (i < w.size()) return fail(i, "expected 'policy flush' alone");
    policies_.clear();
    selectors_.clear();
    return true;
  }
  Policy p;
  bool have_dir = false, in_tmpl = false;
  size_t first = i;
  for (; i < w.size(); ++i) {
    const std::string& k = w[i].first;
    auto need = [&](size_t n) { return i + n < w.size(); };
    auto value = [&]() -> const std::string& { return w[++i].first; };
    auto number = [&](uint64_t max, uint64_t& v) { return need(1) && parse_u64(value(), v) && v <= max; };
    if (k == "tmpl") {
      if (in_tmpl) return fail(i, "one template per policy is supported (one ESP SA, no SA bundles)");
      if (verb == "delete") return fail(i, "'policy delete' takes a selector and dir");
      in_tmpl = p.has_tmpl = true;
    } else if (in_tmpl) {
      uint64_t v;
      if (k == "src" || k == "dst") {
        if (!need(1) || !parse_addr(value(), k == "src" ? p.tmpl.src : p.tmpl.dst))
          return fail(i, fmt::format("tmpl {} needs an address", k));
      } else if (k == "proto") {
        if (!need(1) || value() != "esp") return fail(i, "tmpl proto: only esp is supported");
      } else if (k == "spi") {
        if (!number(0xffffffffu, v)) return fail(i, "tmpl spi needs a 32-bit number");
        p.tmpl.spi = uint32_t(v);
      } else if (k == "reqid") {
        if (!number(0xffffffffu, v)) return fail(i, "tmpl reqid needs a 32-bit number");
        p.tmpl.reqid = uint32_t(v);
      } else if (k == "mode") {
        if (!need(1) || !parse_mode(value(), p.tmpl.mode)) return fail(i, "tmpl mode is tunnel or transport");
      } else if (k == "level") {
        if (!need(1) || (value() != "required" && w[i].first != "use")) return fail(i, "level is required or use");
      } else {
        return fail(i, fmt::format("'{}' is not a template field (src, dst, proto, spi, reqid, mode, level)", k));
      }
    } else if (k == "src" || k == "dst") {
      if (!need(1) || !parse_prefix(value(), k == "src" ? p.src : p.dst))
        return fail(i, fmt::format("'{}' needs ADDR[/PLEN]", k));
    } else if (k == "proto") {
      if (!need(1) || !parse_proto_number(value(), p.proto)) return fail(i, "'proto' needs a protocol name or number");
    } else if (k == "sport" || k == "dport" || k == "type" || k == "code") {
      uint64_t v;
      if (!number(k == "type" || k == "code" ? 255 : 65535, v)) return fail(i, fmt::format("'{}' needs a number", k));
      // Linux keys ICMP's type as the source port and its code as the destination port
      bool s = k == "sport" || k == "type";
      (s ? p.sport : p.dport) = uint16_t(v);
      (s ? p.sport_mask : p.dport_mask) = 0xffff;
    } else if (k == "dir") {
      if (!need(1)) return fail(i + 1, "'dir' is in, out or fwd");
      const std::string& d = value();
      if (d == "in")
        p.dir = Dir::In;
      else if (d == "out")
        p.dir = Dir::Out;
      else if (d == "fwd")
        p.dir = Dir::Fwd;
      else
        return fail(i, "'dir' is in, out or fwd");
      have_dir = true;
    } else if (k == "action") {
      if (!need(1)) return fail(i + 1, "'action' is allow or block");
      const std::string& a = value();
      if (a != "allow" && a != "block") return fail(i, "'action' is allow or block");
      p.allow = a == "allow";
    } else if (k == "priority") {
      uint64_t v;
      if (!number(0xffffffffu, v)) return fail(i, "'priority' needs a 32-bit number");
      p.priority = uint32_t(v);
    } else {
      return fail(i, fmt::format("'{}' is not supported in 'ip xfrm policy {}'", k, verb));
    }
  }
  if (!have_dir) return fail(first, "a policy needs 'dir in|out|fwd'");
  if (p.src.a.family && p.dst.a.family && p.src.a.family != p.dst.a.family)
    return fail(first, "src and dst are of different families");
  if (p.has_tmpl && p.tmpl.mode == Mode::Tunnel && (!p.tmpl.src.family || !p.tmpl.dst.family))
    return fail(first, "a tunnel-mode template needs src and dst");
  auto same = [&](const Policy& q) {
    return q.dir == p.dir && q.src.a == p.src.a && q.src.len == p.src.len && q.dst.a == p.dst.a &&
           q.dst.len == p.dst.len && q.proto == p.proto && q.sport == p.sport && q.sport_mask == p.sport_mask &&
           q.dport == p.dport && q.dport_mask == p.dport_mask;
  };
  // (a set of the selectors held: a file of many policies is not searched once per line)
  std::string sel = selector_key(p);
  auto it = selectors_.count(sel) ? std::find_if(policies_.begin(), policies_.end(), same) : policies_.end();
  if (verb == "delete") {
    if (it == policies_.end()) return fail(first, "no such policy");
    policies_.erase(it);
    selectors_.erase(sel);
    return true;
  }
  if (it != policies_.end()) policies_.erase(it);  // as 'update' (Linux's 'add' refuses a duplicate: File exists)
  p.order = next_order_++;
  if (!policies_.empty() && before(p, policies_.back())) sorted_ = false;  // resolve() sorts
  policies_.push_back(p);
  selectors_.insert(std::move(sel));
  return true;
}

bool Database::load_file(const std::string& path, std::string& err) {
  std::ifstream in(path);
  if (!in) {
    err = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    return false;
  }
  std::string line, cmd;
  size_t n = 0, cmd_line = 0;
  while (std::getline(in, line)) {
    ++n;
    if (cmd.empty()) cmd_line = n;
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    while (!line.empty() && std::isspace(uint8_t(line.back()))) line.pop_back();
    bool more = !line.empty() && line.back() == '\\';  // a command continued on the next line
    if (more) line.pop_back();
    cmd += line;
    cmd += ' ';
    if (more) continue;
    if (cmd.find_first_not_of(' ') != std::string::npos) {
      std::string why;
      size_t col = 1;
      if (!command(cmd, why, col)) {
        // a column in a continued command counts from the command's first line
        err = fmt::format("{}:{}:{}: {}", path, cmd_line, col, why);
        resolve();
        return false;
      }
    }
    cmd.clear();
  }
  if (!cmd.empty() && cmd.find_first_not_of(' ') != std::string::npos) {
    std::string why;
    size_t col = 1;
    if (!command(cmd, why, col)) {
      err = fmt::format("{}:{}:{}: {}", path, cmd_line, col, why);
      resolve();
      return false;
    }
  }
  resolve();
  return true;
}

SA* Database::find_in(const Addr& dst, uint32_t spi) const {
  if (spi_slots_.empty()) return nullptr;
  uint64_t w[2];
  __builtin_memcpy(w, dst.b.data(), 16);
  size_t mask = spi_slots_.size() - 1;
  for (size_t i = (SpiHash()({dst, spi}) << 16) >> spi_shift_;; i = (i + 1) & mask) {
    const SpiSlot& s = spi_slots_[i];
    if (!s.sa) return nullptr;
    if (s.spi == spi && s.dst[0] == w[0] && s.dst[1] == w[1] && s.family == dst.family) return s.sa;
  }
}

const Policy* Database::match_linear(Dir dir, const Selector& s) const {
  for (const Policy& p : policies_) {
    if (p.dir != dir || !p.src.contains(s.src) || !p.dst.contains(s.dst)) continue;
    if ((p.src.a.family && p.src.a.family != s.src.family) || (p.dst.a.family && p.dst.a.family != s.dst.family))
      continue;
    if (p.proto && p.proto != s.proto) continue;
    if ((s.sport & p.sport_mask) != p.sport || (s.dport & p.dport_mask) != p.dport) continue;
    return &p;
  }
  return nullptr;
}

SA* Database::find_out(const Template& t, const Addr& src, const Addr& dst) const {
  const Addr& want_dst = t.dst.family ? t.dst : dst;
  const Addr& want_src = t.src.family ? t.src : src;
  if (t.spi) {
    SA* sa = find_in(want_dst, t.spi);
    return sa && sa->params.mode == t.mode ? sa : nullptr;
  }
  auto it = by_pair_.find({want_src, want_dst, t.mode});
  if (it == by_pair_.end()) return nullptr;
  for (SA* sa : it->second)  // (in the order the SAs were added)
    if (!t.reqid || sa->params.reqid == t.reqid) return sa;
  return nullptr;
}

std::string Database::list_sas() const {
  std::string s;
  for (const auto& sa : sas_) {
    const SAParams& p = sa->params;
    s += fmt::format(
        "src {} dst {} proto esp spi {:#010x} reqid {} mode {} suite {}{}{} replay-window {} oseq {} packets {} "
        "bytes {} replay {} integrity {}\n",
        p.src.str(), p.dst.str(), p.spi, p.reqid, p.mode == Mode::Tunnel ? "tunnel" : "transport", p.suite(),
        p.esn ? " flag esn" : "",
        p.encap ? fmt::format(" encap espinudp {} {}", p.encap_sport, p.encap_dport) : std::string(), p.replay_window,
        sa->next_seq.load() - 1, sa->packets.load(), sa->bytes.load(), sa->replay.load(), sa->integrity.load());
  }
  return s;
}

std::string Database::list_policies() const {
  std::string s;
  for (const Policy& p : policies_) s += p.str() + "\n";
  return s;
}

bool SharedDatabase::load_file(const std::string& path, std::string& err) {
  std::lock_guard<std::mutex> g(mu_);
  auto next = std::make_shared<Database>(*snap_);
  if (!next->load_file(path, err)) return false;
  snap_ = std::move(next);
  gen_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

bool SharedDatabase::apply(std::string_view line, std::string& err) {
  std::lock_guard<std::mutex> g(mu_);
  auto next = std::make_shared<Database>(*snap_);
  size_t col = 1;
  if (!next->apply(line, err, col)) {
    err = fmt::format("column {}: {}", col, err);
    return false;
  }
  snap_ = std::move(next);
  gen_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

}  // namespace shoal::crypto

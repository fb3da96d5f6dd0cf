#include "shoal/classbench/classbench.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "shoal/kernels/checksum.hh"

namespace shoal::classify {

namespace {

bool parse_u32(const std::string& s, uint32_t& v, uint32_t max) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(s.c_str(), &end, 0);  // decimal or 0x hex
  if (errno || *end || x > max || s[0] == '-' || s[0] == '+') return false;
  v = uint32_t(x);
  return true;
}

bool parse_prefix(const std::string& s, uint32_t& addr, uint32_t& mask) {
  size_t slash = s.find('/');
  if (slash == std::string::npos) return false;
  uint32_t len;
  if (!parse_u32(s.substr(slash + 1), len, 32)) return false;
  uint32_t a = 0;
  int parts = 0;
  std::string ip = s.substr(0, slash);
  size_t pos = 0;
  while (parts < 4) {
    size_t dot = ip.find('.', pos);
    std::string part = ip.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    uint32_t b;
    if (part.empty() || part.size() > 3 || !std::all_of(part.begin(), part.end(), ::isdigit) ||
        !parse_u32(part, b, 255))
      return false;
    a = a << 8 | b;
    ++parts;
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  if (parts != 4 || pos == 0 || ip.find('.', pos) != std::string::npos) return false;
  mask = len == 0 ? 0 : ~uint32_t(0) << (32 - len);
  addr = a & mask;
  return true;
}

// "lo : hi", "lo:hi", "lo: hi"... from tokens starting at i.
bool parse_range(const std::vector<std::string>& t, size_t& i, uint16_t& lo, uint16_t& hi) {
  if (i >= t.size()) return false;
  std::string s = t[i++];
  while (i < t.size() && (s.find(':') == std::string::npos || s.back() == ':')) s += t[i++];
  size_t c = s.find(':');
  if (c == std::string::npos) return false;
  uint32_t a, b;
  if (!parse_u32(s.substr(0, c), a, 65535) || !parse_u32(s.substr(c + 1), b, 65535) || a > b) return false;
  lo = uint16_t(a), hi = uint16_t(b);
  return true;
}

bool parse_masked(const std::string& s, uint32_t max, uint32_t& v, uint32_t& m) {
  size_t slash = s.find('/');
  if (slash == std::string::npos) return false;
  return parse_u32(s.substr(0, slash), v, max) && parse_u32(s.substr(slash + 1), m, max);
}

}  // namespace

bool parse_rule(const std::string& line, k::ClsRule& r, std::string& err) {
  std::vector<std::string> t;
  {
    std::istringstream in(line);
    for (std::string w; in >> w;) t.push_back(w);
  }
  r = k::ClsRule{};
  r.sp_hi = r.dp_hi = 0xffff;
  if (t.empty() || t[0].empty() || t[0][0] != '@') return err = "a rule starts with '@' (ClassBench format)", false;
  t[0].erase(0, 1);
  if (t.size() < 2) return err = "expected '@SRC/LEN DST/LEN SP_LO : SP_HI DP_LO : DP_HI PROTO/MASK'", false;
  if (!parse_prefix(t[0], r.src, r.smask)) return err = fmt::format("source: '{}' is not ADDR/LEN", t[0]), false;
  if (!parse_prefix(t[1], r.dst, r.dmask)) return err = fmt::format("destination: '{}' is not ADDR/LEN", t[1]), false;
  size_t i = 2;
  if (!parse_range(t, i, r.sp_lo, r.sp_hi)) return err = "source ports: expected LO : HI (0-65535, LO <= HI)", false;
  if (!parse_range(t, i, r.dp_lo, r.dp_hi))
    return err = "destination ports: expected LO : HI (0-65535, LO <= HI)", false;
  uint32_t v, m;
  if (i >= t.size() || !parse_masked(t[i], 0xff, v, m))
    return err = fmt::format("protocol: expected VALUE/MASK such as 0x06/0xFF{}",
                             i < t.size() ? ", got '" + t[i] + "'" : ""),
           false;
  if (v & ~m) return err = fmt::format("protocol: value {:#x} has bits outside mask {:#x}", v, m), false;
  r.proto = uint8_t(v), r.proto_mask = uint8_t(m);
  ++i;
  if (i < t.size() && t[i].find('/') != std::string::npos) {
    if (!parse_masked(t[i], 0xffff, v, m))
      return err = fmt::format("flags: expected VALUE/MASK, got '{}'", t[i]), false;
    if (v & ~m) return err = fmt::format("flags: value {:#x} has bits outside mask {:#x}", v, m), false;
    r.flags = uint16_t(v), r.flags_mask = uint16_t(m);
    ++i;
  }
  bool ethertype_given = false;
  r.action = 0;
  for (; i < t.size(); i += 2) {
    const std::string& key = t[i];
    if (i + 1 >= t.size()) return err = fmt::format("option '{}' needs a value", key), false;
    const std::string& val = t[i + 1];
    if (key == "port" || key == "action") {
      if (!parse_u32(val, v, 255)) return err = fmt::format("port: '{}' is not an output number 0-255", val), false;
      r.action = int32_t(v);
    } else if (key == "ethertype") {
      ethertype_given = true;
      if (val == "any") {
        r.ethertype = r.ethertype_mask = 0;
      } else {
        if (!parse_u32(val, v, 0xffff)) return err = fmt::format("ethertype: '{}' is not 0-0xFFFF or any", val), false;
        r.ethertype = uint16_t(v), r.ethertype_mask = 0xffff;
      }
    } else if (key == "vlan") {
      if (val == "any") {
        r.vlan = r.vlan_mask = 0, r.untagged = 0;
      } else if (val == "none") {
        r.vlan = r.vlan_mask = 0, r.untagged = 1;
      } else {
        if (!parse_u32(val, v, 4095)) return err = fmt::format("vlan: '{}' is not 0-4095, any or none", val), false;
        r.vlan = uint16_t(v), r.vlan_mask = 0x0fff, r.untagged = 0;
      }
    } else {
      return err = fmt::format("unknown option '{}' (port, ethertype, vlan)", key), false;
    }
  }
  bool wild = r.smask == 0 && r.dmask == 0 && r.sp_lo == 0 && r.sp_hi == 0xffff && r.dp_lo == 0 && r.dp_hi == 0xffff &&
              r.proto_mask == 0 && r.flags_mask == 0;
  if (!ethertype_given) r.ethertype = 0x0800, r.ethertype_mask = 0xffff;
  r.ip = !wild;
  if (r.ip) {
    if (r.ethertype_mask == 0) {
      r.ethertype = 0x0800, r.ethertype_mask = 0xffff;  // IPv4 fields: IPv4 frames
    } else if (r.ethertype != 0x0800) {
      return err =
                 fmt::format("ethertype {:#06x} with address, port, protocol or flag fields: those need IPv4 (0x0800)",
                             r.ethertype),
             false;
    }
  }
  return true;
}

std::string unparse_rule(const k::ClsRule& r) {
  auto pfx = [](uint32_t a, uint32_t m) {
    int len = m == 0 ? 0 : 32 - __builtin_ctz(m);
    return fmt::format("{}.{}.{}.{}/{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, len);
  };
  std::string s = fmt::format("@{}\t{}\t{} : {}\t{} : {}\t{:#04x}/{:#04x}\t{:#06x}/{:#06x}", pfx(r.src, r.smask),
                              pfx(r.dst, r.dmask), r.sp_lo, r.sp_hi, r.dp_lo, r.dp_hi, r.proto, r.proto_mask, r.flags,
                              r.flags_mask);
  if (r.ethertype_mask == 0)
    s += "\tethertype any";
  else if (r.ethertype != 0x0800)
    s += fmt::format("\tethertype {:#06x}", r.ethertype);
  if (r.vlan_mask) s += fmt::format("\tvlan {}", r.vlan);
  if (r.untagged) s += "\tvlan none";
  if (r.action) s += fmt::format("\tport {}", r.action);
  return s;
}

bool for_each_rule_line(const std::string& text, const std::string& name,
                        const std::function<bool(const std::string& line, std::string& why)>& rule, std::string& err) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    size_t h = line.find('#');
    if (h != std::string::npos) line.erase(h);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string why;
    if (!rule(line, why)) return err = fmt::format("{}:{}: {}", name, n, why), false;
  }
  return true;
}

bool read_rule_file(const std::string& path, std::string& text, std::string& err) {
  std::ifstream f(path);
  if (!f) return err = fmt::format("cannot read rules file '{}'", path), false;
  std::stringstream ss;
  ss << f.rdbuf();
  text = ss.str();
  return true;
}

bool parse_rules(const std::string& text, const std::string& name, std::vector<k::ClsRule>& out, std::string& err) {
  return for_each_rule_line(
      text, name,
      [&](const std::string& line, std::string& why) {
        k::ClsRule r;
        if (!parse_rule(line, r, why)) return false;
        out.push_back(r);
        return true;
      },
      err);
}

bool load_rules(const std::string& path, std::vector<k::ClsRule>& out, std::string& err) {
  std::string text;
  return read_rule_file(path, text, err) && parse_rules(text, path, out, err);
}

bool parse_flavor(const std::string& s, Flavor& f) {
  if (s == "acl") return f = Flavor::Acl, true;
  if (s == "fw") return f = Flavor::Fw, true;
  if (s == "ipc") return f = Flavor::Ipc, true;
  return false;
}

const char* flavor_name(Flavor f) { return f == Flavor::Acl ? "acl" : f == Flavor::Fw ? "fw" : "ipc"; }

// ---------------------------------------------------------------- generator
namespace {

struct Weighted {
  double w;
  int lo, hi;  // a value drawn uniformly from [lo, hi]
};

int draw(std::mt19937& rng, std::initializer_list<Weighted> ws) {
  double total = 0;
  for (auto& x : ws) total += x.w;
  double u = std::uniform_real_distribution<double>(0, total)(rng);
  for (auto& x : ws) {
    if (u < x.w) return std::uniform_int_distribution<int>(x.lo, x.hi)(rng);
    u -= x.w;
  }
  return ws.begin()->lo;
}

const uint16_t kWellKnown[] = {80, 443, 22, 25, 53, 21, 23, 110, 143, 161, 389, 445, 1433, 3306, 3389, 8080, 5060, 123};

struct Profile {
  std::initializer_list<Weighted> src_len, dst_len;
  double sport_any, sport_exact;             // else the ephemeral range
  double dport_any, dport_exact, dport_eph;  // else a short range or 0-1023
  double tcp, udp, icmp;                     // else any protocol
  double flags;                              // TCP rules with a flag test
};

}  // namespace

std::vector<k::ClsRule> generate(const GenSpec& spec) {
  std::mt19937 rng(spec.seed);
  static const Profile acl{{{5, 0, 0}, {5, 8, 15}, {10, 16, 23}, {30, 24, 31}, {50, 32, 32}},
                           {{3, 0, 0}, {12, 16, 23}, {35, 24, 31}, {50, 32, 32}},
                           0.97,
                           0.02,
                           0.10,
                           0.55,
                           0.15,
                           0.70,
                           0.20,
                           0.04,
                           0.10};
  static const Profile fw{{{40, 0, 0}, {20, 8, 23}, {15, 24, 31}, {25, 32, 32}},
                          {{30, 0, 0}, {20, 8, 23}, {20, 24, 31}, {30, 32, 32}},
                          0.80,
                          0.10,
                          0.30,
                          0.35,
                          0.20,
                          0.50,
                          0.25,
                          0.05,
                          0.05};
  static const Profile ipc{
      {{15, 0, 0}, {85, 8, 32}}, {{15, 0, 0}, {85, 8, 32}}, 0.70, 0.15, 0.30, 0.40, 0.15, 0.50, 0.30, 0.05, 0.05};
  const Profile& p = spec.flavor == Flavor::Acl ? acl : spec.flavor == Flavor::Fw ? fw : ipc;
  // address "sites": prefixes nest inside a few hundred /16s, as in real sets
  const size_t nsites = std::max<size_t>(8, spec.rules / 25);
  std::vector<uint32_t> src_sites(nsites), dst_sites(nsites);
  for (auto& s : src_sites) s = (rng() & 0xffff0000u) | 0x01000000u;
  for (auto& s : dst_sites) s = (rng() & 0xffff0000u) | 0x01000000u;
  auto addr = [&](const std::vector<uint32_t>& sites, int len, uint32_t& a, uint32_t& m) {
    uint32_t base = sites[rng() % sites.size()];
    // /8-/15 from the site's top bits; longer ones inside it
    uint32_t v = len <= 16 ? base : base | (rng() & 0xffffu);
    m = len == 0 ? 0 : ~uint32_t(0) << (32 - len);
    a = v & m;
  };
  const size_t body = spec.rules - (spec.catch_all && spec.rules > 0 ? 1 : 0);
  std::vector<k::ClsRule> out;
  out.reserve(spec.rules);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = 0; i < body; ++i) {
    k::ClsRule r{};
    r.sp_hi = r.dp_hi = 0xffff;
    r.ethertype = 0x0800, r.ethertype_mask = 0xffff;
    r.action = int32_t(rng() % uint32_t(std::max(1, spec.ports)));
    if (u(rng) < 0.005) {  // a non-IP rule: ARP or IPv6 frames
      r.ethertype = u(rng) < 0.5 ? 0x0806 : 0x86dd;
      out.push_back(r);
      continue;
    }
    r.ip = 1;
    addr(src_sites, draw(rng, p.src_len), r.src, r.smask);
    addr(dst_sites, draw(rng, p.dst_len), r.dst, r.dmask);
    double pr = u(rng);
    bool ports = true;
    if (pr < p.tcp) {
      r.proto = 6, r.proto_mask = 0xff;
    } else if (pr < p.tcp + p.udp) {
      r.proto = 17, r.proto_mask = 0xff;
    } else if (pr < p.tcp + p.udp + p.icmp) {
      r.proto = 1, r.proto_mask = 0xff, ports = false;
    } else {
      ports = u(rng) < 0.5;  // any protocol, sometimes with ports (TCP and UDP packets)
    }
    if (ports) {
      double s = u(rng);
      if (s >= p.sport_any) {
        if (s < p.sport_any + p.sport_exact) {
          r.sp_lo = r.sp_hi = uint16_t(1024 + rng() % 64512);
        } else {
          r.sp_lo = 1024;
        }
      }
      double d = u(rng);
      if (d < p.dport_any) {
      } else if (d < p.dport_any + p.dport_exact) {
        r.dp_lo = r.dp_hi = kWellKnown[rng() % std::size(kWellKnown)];
      } else if (d < p.dport_any + p.dport_exact + p.dport_eph) {
        r.dp_lo = 1024;
      } else if (u(rng) < 0.5) {
        r.dp_lo = 0, r.dp_hi = 1023;
      } else {
        r.dp_lo = uint16_t(rng() % 60000);
        r.dp_hi = uint16_t(r.dp_lo + 1 + rng() % 200);
      }
    }
    if (r.proto == 6 && u(rng) < p.flags) {
      if (u(rng) < 0.7)
        r.flags = 0x0010, r.flags_mask = 0x0010;  // established
      else
        r.flags = 0x0002, r.flags_mask = 0x0012;  // a bare SYN
    }
    if (u(rng) < 0.01) r.vlan = uint16_t(1 + rng() % 100), r.vlan_mask = 0x0fff;
    // a rule with nothing left to test is the catch-all's business
    if (!r.smask && !r.dmask && !r.proto_mask && r.sp_lo == 0 && r.sp_hi == 0xffff && r.dp_lo == 0 &&
        r.dp_hi == 0xffff && !r.flags_mask)
      r.smask = 0xff000000u, r.src = src_sites[0] & r.smask;
    out.push_back(r);
  }
  if (spec.catch_all && spec.rules > 0) {
    k::ClsRule r{};
    r.sp_hi = r.dp_hi = 0xffff;
    r.ethertype = 0x0800, r.ethertype_mask = 0xffff;
    r.action = 0;
    out.push_back(r);
  }
  return out;
}

std::vector<k::ClsKey> trace_keys(const std::vector<k::ClsRule>& rules, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<k::ClsKey> out;
  if (rules.empty()) return out;
  out.reserve(n);
  // a hot set: a twentieth of the rules gets half of the packets
  std::vector<uint32_t> hot(std::max<size_t>(1, rules.size() / 20));
  for (auto& h : hot) h = uint32_t(rng() % rules.size());
  for (size_t i = 0; i < n; ++i) {
    const k::ClsRule& r = rules[rng() % 2 ? hot[rng() % hot.size()] : rng() % rules.size()];
    k::ClsKey key;
    key.ethertype = r.ethertype_mask ? r.ethertype : (rng() % 8 ? 0x0800 : 0x0806);
    if (r.vlan_mask) {
      key.tagged = 1, key.vlan = r.vlan;
    } else if (!r.untagged && rng() % 20 == 0) {
      key.tagged = 1, key.vlan = uint16_t(rng() % 4096);
    }
    if (key.ethertype == 0x0800) {
      key.ip = 1;
      key.src = r.src | (rng() & ~r.smask);
      key.dst = r.dst | (rng() & ~r.dmask);
      if (r.proto_mask == 0xff) {
        key.proto = r.proto;
      } else {
        static const uint8_t any[] = {6, 6, 17, 17, 1, 47, 132};
        do key.proto = any[rng() % std::size(any)];
        while ((key.proto & r.proto_mask) != r.proto);
      }
      bool full_ports = r.sp_lo == 0 && r.sp_hi == 0xffff && r.dp_lo == 0 && r.dp_hi == 0xffff;
      if (!full_ports || r.flags_mask) {
        if (key.proto != 6 && key.proto != 17 && key.proto != 132) key.proto = r.flags_mask ? 6 : (rng() % 2 ? 6 : 17);
        if (r.flags_mask) key.proto = 6;
      }
      if (key.proto == 6 || key.proto == 17 || key.proto == 132) {
        key.sport = uint16_t(r.sp_lo + rng() % (uint32_t(r.sp_hi) - r.sp_lo + 1));
        key.dport = uint16_t(r.dp_lo + rng() % (uint32_t(r.dp_hi) - r.dp_lo + 1));
      }
      if (key.proto == 6) {
        static const uint16_t common[] = {0x0002, 0x0010, 0x0018, 0x0012, 0x0011, 0x0004};
        uint16_t f = common[rng() % std::size(common)];
        key.flags = uint16_t(0x5000 | ((f & ~r.flags_mask) | r.flags));
      }
    }
    out.push_back(key);
  }
  return out;
}

uint32_t build_frame(const k::ClsKey& key, uint32_t frame_len, uint8_t* buf) {
  static const uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0x02}, smac[6] = {0x02, 0, 0, 0, 0, 0x01};
  uint32_t l2 = key.tagged ? 18 : 14;
  uint32_t l4 = key.proto == 6 ? 20 : (key.proto == 17 || key.proto == 132) ? 8 : 0;
  uint32_t need = key.ethertype == 0x0800 ? l2 + 20 + l4 : l2;
  uint32_t len = std::max({frame_len, need, 60u});
  std::memset(buf, 0, len);
  std::memcpy(buf, dmac, 6);
  std::memcpy(buf + 6, smac, 6);
  if (key.tagged) {
    k::store_be16(buf + 12, 0x8100);
    k::store_be16(buf + 14, key.vlan);
  }
  k::store_be16(buf + l2 - 2, key.ethertype);
  if (key.ethertype != 0x0800) return len;
  uint8_t* ip = buf + l2;
  ip[0] = 0x45;
  k::store_be16(ip + 2, uint16_t(len - l2));
  k::store_be16(ip + 6, 0x4000);
  ip[8] = 64;
  ip[9] = key.proto;
  k::store_be32(ip + 12, key.src);
  k::store_be32(ip + 16, key.dst);
  k::store_be16(ip + 10, k::ip_checksum(ip, 20));
  uint8_t* t = ip + 20;
  if (l4) {
    k::store_be16(t, key.sport);
    k::store_be16(t + 2, key.dport);
  }
  if (key.proto == 6) {
    k::store_be16(t + 12, key.flags ? key.flags : 0x5000);
    k::store_be16(t + 14, 65535);
  } else if (l4 == 8) {
    k::store_be16(t + 4, uint16_t(len - l2 - 20));
  }
  return len;
}

}  // namespace shoal::classify

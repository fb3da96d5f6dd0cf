#include "shoal/routing/iproutetable.hh"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "shoal/core/args.hh"

namespace shoal {

// Click's form: ADDR/LEN, the gateway or '-', the output, tab-aligned.
std::string IPRoute::unparse() const {
  uint8_t a[4] = {uint8_t(addr >> 24), uint8_t(addr >> 16), uint8_t(addr >> 8), uint8_t(addr)};
  std::string s = fmt::format("{}/{}\t", format_ipv4(a), len);
  if (s.size() < 17) s += '\t';
  size_t l = s.size();
  if (gw) {
    uint8_t g[4] = {uint8_t(gw >> 24), uint8_t(gw >> 16), uint8_t(gw >> 8), uint8_t(gw)};
    s += format_ipv4(g) + '\t';
  } else {
    s += "-\t";
  }
  if (s.size() < l + 9) s += '\t';
  return s + std::to_string(port);
}

bool parse_route(std::string_view text, IPRoute& r, std::string& err) {
  std::vector<std::string_view> w;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t b = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > b) w.push_back(text.substr(b, i - b));
  }
  if (w.size() < 2 || w.size() > 3) {
    err = fmt::format("route '{}' is not 'ADDR/LEN [GATEWAY] OUTPUT'", trim(text));
    return false;
  }
  std::string_view pfx = w[0];
  size_t slash = pfx.find('/');
  IPv4Addr a;
  uint32_t named_addr, named_mask;
  // Click's forms: a name (AddressInfo: NAME, NAME:ipnet...), and a
  // shortened network before a prefix length ("18.26/16" is 18.26.0.0/16).
  std::string padded(pfx.substr(0, slash));
  if (slash != std::string_view::npos && std::count(padded.begin(), padded.end(), '.') < 3 && !padded.empty() &&
      std::isdigit(static_cast<unsigned char>(padded[0])))
    while (std::count(padded.begin(), padded.end(), '.') < 3) padded += ".0";
  bool named = slash == std::string_view::npos && !pfx.empty() && !std::isdigit(static_cast<unsigned char>(pfx[0])) &&
               parse_ipv4_prefix(pfx, named_addr, named_mask, true);
  if (named) {
    for (int k2 = 0; k2 < 4; ++k2) a.b[size_t(k2)] = uint8_t(named_addr >> (24 - 8 * k2));
  } else if (!parse_ipv4(padded, a)) {
    err = fmt::format("bad address in route '{}'", trim(text));
    return false;
  }
  uint64_t len = named ? uint64_t(std::countl_one(named_mask)) : 32;
  if (slash != std::string_view::npos) {
    IPv4Addr m;
    if (parse_uint(pfx.substr(slash + 1), len)) {
      if (len > 32) {
        err = fmt::format("prefix length {} is over 32 in route '{}'", len, trim(text));
        return false;
      }
    } else if (parse_ipv4(pfx.substr(slash + 1), m) && std::countl_one(m.host()) + std::countr_zero(m.host()) == 32) {
      len = uint64_t(std::countl_one(m.host()));
    } else {
      err = fmt::format("bad prefix length or mask in route '{}'", trim(text));
      return false;
    }
  }
  r.len = uint8_t(len);
  r.addr = a.host() & k::prefix_mask(r.len);
  r.gw = 0;
  if (w.size() == 3 && w[1] != "-") {
    IPv4Addr g;
    if (!parse_ipv4(w[1], g)) {
      err = fmt::format("bad gateway in route '{}'", trim(text));
      return false;
    }
    r.gw = g.host();
  }
  int64_t port;
  if (!parse_int(w.back(), port) || port < -1 || port > 65535) {
    err = fmt::format("bad output port in route '{}'", trim(text));
    return false;
  }
  r.port = int(port);
  return true;
}

void IPv4Routes::Radix::build(std::vector<std::pair<k::Prefix4, int32_t>> pfx) {
  // Shorter prefixes first: within a level a longer prefix overwrites the
  // slots it covers, and a node is made only after every shorter prefix is
  // in, so it starts as a copy of the slot it hangs from (leaf pushing).
  std::stable_sort(pfx.begin(), pfx.end(), [](const auto& a, const auto& b) { return a.first.len < b.first.len; });
  nodes.assign(1, Node{});
  nodes[0].fill(-1);
  for (const auto& [p, nh] : pfx) {
    uint32_t addr = p.addr & k::prefix_mask(p.len);
    uint32_t level = p.len ? (p.len - 1) / 8 : 0;  // the node level the prefix ends in
    size_t n = 0;
    for (uint32_t l = 0; l < level; ++l) {
      uint32_t b = (addr >> (24 - 8 * l)) & 0xff;
      int32_t v = nodes[n][b];
      if (v < -1) {
        n = size_t(-2 - v);
        continue;
      }
      nodes.emplace_back();
      nodes.back().fill(v);  // the covering route, pushed down
      int32_t child = int32_t(nodes.size() - 1);
      nodes[n][b] = -2 - child;
      n = size_t(child);
    }
    uint32_t bits = p.len - 8 * level;  // 0..8 bits of this level's byte
    uint32_t first = (addr >> (24 - 8 * level)) & 0xff & (bits ? 0xffu << (8 - bits) : 0);
    uint32_t count = 1u << (8 - bits);
    // (no slot of this level has a node yet: nodes below it come only from
    // longer prefixes, which are inserted later)
    for (uint32_t b = first; b < first + count; ++b) nodes[n][b] = nh;
  }
}

void IPv4Routes::Range::build(std::vector<std::pair<k::Prefix4, int32_t>> pfx) {
  for (auto& [p, nh] : pfx) p.addr &= k::prefix_mask(p.len);
  // Shorter prefixes first at one address, so nested prefixes come after the
  // ones that hold them; a repeated prefix keeps its last next hop.
  std::stable_sort(pfx.begin(), pfx.end(), [](const auto& a, const auto& b) {
    return a.first.addr != b.first.addr ? a.first.addr < b.first.addr : a.first.len < b.first.len;
  });
  starts.clear();
  hops.clear();
  auto emit = [&](uint64_t at, int32_t hop) {  // from `at` on, `hop` (until the next emit)
    if (at > 0xffffffffull) return;
    if (!starts.empty() && starts.back() == at) {
      hops.back() = hop;
      if (hops.size() > 1 && hops[hops.size() - 2] == hop) starts.pop_back(), hops.pop_back();
      return;
    }
    if (!hops.empty() && hops.back() == hop) return;
    starts.push_back(uint32_t(at));
    hops.push_back(hop);
  };
  emit(0, -1);
  struct Open {
    uint64_t end;  // the last address it covers
    int32_t hop;
  };
  std::vector<Open> open;  // the prefixes holding the current address, innermost last
  auto close_before = [&](uint64_t at) {
    while (!open.empty() && open.back().end < at) {
      uint64_t end = open.back().end;
      open.pop_back();
      emit(end + 1, open.empty() ? -1 : open.back().hop);
    }
  };
  for (size_t i = 0; i < pfx.size(); ++i) {
    const auto& [p, nh] = pfx[i];
    if (i + 1 < pfx.size() && pfx[i + 1].first.addr == p.addr && pfx[i + 1].first.len == p.len) continue;
    uint64_t end = uint64_t(p.addr) + (uint64_t(1) << (32 - p.len)) - 1;
    close_before(p.addr);
    emit(p.addr, nh);
    open.push_back({end, nh});
  }
  close_before(uint64_t(1) << 32);
}

bool IPv4Routes::build(Kind kind, const std::vector<IPRoute>& routes, Snapshot& s, std::string& err) {
  if (kind == Kind::Linear) return true;             // the scan reads the route list
  std::vector<k::Prefix4> pfx;                       // DIR-24-8 (16-bit next hops)
  std::vector<std::pair<k::Prefix4, int32_t>> rpfx;  // the radix trie and the ranges (any number)
  bool wide = kind == Kind::Radix || kind == Kind::Range;
  (wide ? rpfx.reserve(routes.size()) : pfx.reserve(routes.size()));
  std::unordered_map<uint64_t, uint32_t> ids;  // (gateway, port) -> next hop
  for (auto& r : routes) {
    uint64_t key = (uint64_t(r.gw) << 32) | uint32_t(r.port);
    auto [it, fresh] = ids.try_emplace(key, uint32_t(s.nexthops.size()));
    if (fresh) {
      if (kind == Kind::Dir24_8 && s.nexthops.size() >= k::Lpm4Table::kMaxNexthops) {
        err = "too many next hops for DIR-24-8 (at most 32766 distinct gateway and output pairs)";
        return false;
      }
      s.nexthops.push_back({r.gw, r.port});
    }
    if (wide)
      rpfx.push_back({{r.addr, r.len, 0}, int32_t(it->second)});
    else
      pfx.push_back({r.addr, r.len, uint16_t(it->second)});
  }
  if (kind == Kind::Radix) {
    s.radix.build(std::move(rpfx));
    return true;
  }
  if (kind == Kind::Range) {
    s.range.build(std::move(rpfx));
    return true;
  }
  return s.lpm.build(pfx, err);
}

}  // namespace shoal

#include "shoal/routing/iproutetable.hh"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "shoal/core/args.hh"

namespace shoal {

std::string IPRoute::unparse() const {
  uint8_t a[4] = {uint8_t(addr >> 24), uint8_t(addr >> 16), uint8_t(addr >> 8), uint8_t(addr)};
  std::string s = fmt::format("{}/{}", format_ipv4(a), len);
  if (gw) {
    uint8_t g[4] = {uint8_t(gw >> 24), uint8_t(gw >> 16), uint8_t(gw >> 8), uint8_t(gw)};
    s += " " + format_ipv4(g);
  }
  return s + " " + std::to_string(port);
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
  if (!parse_ipv4(pfx.substr(0, slash), a)) {
    err = fmt::format("bad address in route '{}'", trim(text));
    return false;
  }
  uint64_t len = 32;
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
  if (w.size() == 3) {
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

bool IPv4Routes::build(Kind kind, const std::vector<IPRoute>& routes, Snapshot& snap, std::string& err) {
  Snapshot* s = &snap;
  if (kind != Kind::Linear) {
    std::vector<k::Prefix4> pfx;
    pfx.reserve(routes.size());
    std::unordered_map<uint64_t, uint32_t> ids;  // (gateway, port) -> next hop
    for (auto& r : routes) {
      uint64_t key = (uint64_t(r.gw) << 32) | uint32_t(r.port);
      auto [it, fresh] = ids.try_emplace(key, uint32_t(s->nexthops.size()));
      if (fresh) {
        if (kind == Kind::Dir24_8 && s->nexthops.size() >= k::Lpm4Table::kMaxNexthops) {
          err = "too many next hops for DIR-24-8 (at most 32766 distinct gateway and output pairs)";
          return false;
        }
        s->nexthops.push_back({r.gw, r.port});
      }
      pfx.push_back({r.addr, r.len, uint16_t(it->second)});
      if (kind == Kind::Radix) {
        auto& nodes = s->radix.nodes;
        if (nodes.empty()) nodes.emplace_back();
        int32_t n = 0;
        for (int d = 0; d < r.len; ++d) {
          int b = (r.addr >> (31 - d)) & 1;
          if (nodes[size_t(n)].child[b] < 0) {
            nodes[size_t(n)].child[b] = int32_t(nodes.size());
            nodes.emplace_back();
          }
          n = nodes[size_t(n)].child[b];
        }
        nodes[size_t(n)].nexthop = int32_t(it->second);
      }
    }
    if (kind == Kind::Radix && s->radix.nodes.empty()) s->radix.nodes.emplace_back();
    if (kind == Kind::Dir24_8 && !s->lpm.build(pfx, err)) return false;
  }
  return true;
}

}  // namespace shoal

#include "shoal/routing/ip6routetable.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "shoal/core/args.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

namespace {
bool is_zero16(const uint8_t* a) {
  for (int i = 0; i < 16; ++i)
    if (a[i]) return false;
  return true;
}
void mask6(uint8_t* a, uint32_t len) {
  for (uint32_t i = 0; i < 16; ++i) {
    uint32_t bits = len > 8 * i ? std::min<uint32_t>(8, len - 8 * i) : 0;
    a[i] &= uint8_t(bits == 8 ? 0xff : (0xff00 >> bits) & 0xff);
  }
}
}  // namespace

std::string IP6Route::unparse() const {
  std::string s = fmt::format("{}/{}", format_ipv6(addr), len);
  if (!is_zero16(gw)) s += " " + format_ipv6(gw);
  return s + " " + std::to_string(port);
}

bool parse_route6(std::string_view text, IP6Route& r, std::string& err) {
  std::vector<std::string_view> w;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t b = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > b) w.push_back(text.substr(b, i - b));
  }
  auto fail = [&](std::string m) { return err = fmt::format("{} in route '{}'", m, trim(text)), false; };
  if (w.size() < 2 || w.size() > 4) return fail("expected 'ADDR/LEN [GATEWAY] OUTPUT'");
  IPv6Addr a;
  size_t sl = w[0].find('/');
  if (!parse_ipv6(w[0].substr(0, sl), a)) return fail("bad IPv6 address");
  uint64_t len = 128;
  size_t gw_at = 1;
  if (sl != std::string_view::npos) {
    if (!parse_uint(w[0].substr(sl + 1), len) || len > 128) return fail("bad prefix length");
  } else if (w.size() == 4) {  // ADDR MASK GW OUT
    IPv6Addr m;
    if (!parse_ipv6(w[1], m)) return fail("bad mask");
    len = 0;
    while (len < 128 && (m.b[len / 8] >> (7 - len % 8)) & 1) ++len;
    gw_at = 2;
  }
  std::memcpy(r.addr, a.b.data(), 16);
  r.len = uint8_t(len);
  mask6(r.addr, r.len);
  std::memset(r.gw, 0, 16);
  if (w.size() > gw_at + 1) {
    IPv6Addr g;
    if (!parse_ipv6(w[gw_at], g)) return fail("bad gateway");
    std::memcpy(r.gw, g.b.data(), 16);
  }
  int64_t port;
  if (!parse_int(w.back(), port) || port < -1 || port > 65535) return fail("bad output port");
  r.port = int(port);
  return true;
}

IPv6Routes::Key IPv6Routes::key(const IP6Route& r) {
  Key k{{}, r.len};
  std::memcpy(k.first.data(), r.addr, 16);
  return k;
}

bool IPv6Routes::build(const Options&, const std::vector<IP6Route>& routes, Snapshot& s, std::string&) {
  std::vector<k::Prefix6> pfx;
  pfx.reserve(routes.size());
  std::map<std::pair<std::string, int>, int32_t> ids;
  for (const IP6Route& r : routes) {
    auto [it, fresh] =
        ids.try_emplace({std::string(reinterpret_cast<const char*>(r.gw), 16), r.port}, int32_t(s.nexthops.size()));
    if (fresh) {
      NextHop nh;
      std::memcpy(nh.gw, r.gw, 16);
      nh.port = r.port;
      s.nexthops.push_back(nh);
    }
    pfx.push_back({k::load_be64(r.addr), k::load_be64(r.addr + 8), r.len, it->second});
  }
  s.lpm.build(pfx);
  return true;
}

}  // namespace shoal

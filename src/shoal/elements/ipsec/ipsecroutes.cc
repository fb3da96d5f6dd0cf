#include "shoal/elements/ipsec/ipsecroutes.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "shoal/crypto/sa_handles.hh"
#include "shoal/elements/ipsec/clicksa.hh"

namespace shoal {

crypto::SAParams click_sa_params(uint32_t spi, std::string enc_key, std::string auth_key, uint32_t replay,
                                 uint32_t oosize) {
  crypto::SAParams p;
  p.spi = spi;
  p.mode = crypto::Mode::Tunnel;
  p.cipher = crypto::Cipher::AesCbc;
  p.enc_key = std::move(enc_key);
  p.integ = crypto::Integ::HmacSha1;
  p.auth_key = std::move(auth_key);
  p.icv_len = 12;
  p.replay_window = oosize;
  p.seq_out = replay ? replay - 1 : 0;  // the last one sent: the next is REPLAY
  return p;
}

namespace {
std::vector<std::string_view> words(std::string_view t) {
  std::vector<std::string_view> w;
  size_t i = 0;
  while (i < t.size()) {
    while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
    size_t b = i;
    while (i < t.size() && !std::isspace(static_cast<unsigned char>(t[i]))) ++i;
    if (i > b) w.push_back(t.substr(b, i - b));
  }
  return w;
}
// A key: hex digits (an optional 0x), or a Click string (quotes, escapes,
// \<hex> blocks) of the bytes themselves.
bool parse_key(std::string_view w, std::string& out) {
  std::string_view h = w.substr(0, 2) == "0x" || w.substr(0, 2) == "0X" ? w.substr(2) : w;
  bool hex = !h.empty() && h.size() % 2 == 0 &&
             std::all_of(h.begin(), h.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  if (hex && (h.size() >= 32 || h.size() != w.size())) {
    out.clear();
    for (size_t i = 0; i < h.size(); i += 2) out += char(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
    return true;
  }
  DataString d;
  if (!parse_data(w, d)) return false;
  out = std::move(d.bytes);
  return true;
}
}  // namespace

bool parse_ipsec_route(std::string_view text, IPsecRoute& r, std::string& err) {
  auto w = words(text);
  r = IPsecRoute{};
  if (w.size() < 7) return parse_route(text, static_cast<IPRoute&>(r), err);
  // the route's own words, then the SA's five (Click's cp_ipsec_route)
  std::string base;
  for (size_t i = 0; i + 5 < w.size(); ++i) base += std::string(w[i]) + " ";
  if (w.size() > 8 || !parse_route(base, static_cast<IPRoute&>(r), err)) {
    err = fmt::format("route '{}' is not 'ADDR/LEN [GATEWAY] OUTPUT [SPI ENCRYPT_KEY AUTH_KEY REPLAY OOSIZE]'",
                      trim(text));
    return false;
  }
  const auto* sw = &w[w.size() - 5];
  uint64_t spi, replay, oos;
  std::string ek, ak;
  if (!parse_uint(sw[0], spi) || spi == 0 || spi > 0xffffffffu)
    return err = fmt::format("route '{}': SPI '{}' is not a number from 1 to 2^32-1", trim(text), sw[0]), false;
  if (!parse_key(sw[1], ek) || (ek.size() != 16 && ek.size() != 24 && ek.size() != 32))
    return err = fmt::format(
               "route '{}': ENCRYPT_KEY must be an AES key of 16, 24 or 32 bytes (32, 48 or 64 hex "
               "digits)",
               trim(text)),
           false;
  if (!parse_key(sw[2], ak) || ak.size() < 16 || ak.size() > 64)
    return err = fmt::format("route '{}': AUTH_KEY must be an HMAC-SHA1 key of 16 to 64 bytes (32 to 128 hex digits)",
                             trim(text)),
           false;
  if (!parse_uint(sw[3], replay) || replay > 0xffffffffu)
    return err = fmt::format("route '{}': REPLAY '{}' is not a 32-bit sequence number", trim(text), sw[3]), false;
  if (!parse_uint(sw[4], oos) || oos > crypto::ReplayWindow::kMaxWindow)
    return err = fmt::format("route '{}': OOSIZE '{}' is not a window of 0 to {} packets", trim(text), sw[4],
                             crypto::ReplayWindow::kMaxWindow),
           false;
  r.sa = std::make_shared<crypto::SA>(
      click_sa_params(uint32_t(spi), std::move(ek), std::move(ak), uint32_t(replay), uint32_t(oos)));
  for (int i = 0; i < 5; ++i) r.sa_text += (i ? " " : "") + std::string(sw[i]);
  return true;
}

std::string IPsecRoute::unparse() const { return sa ? IPRoute::unparse() + "\t" + sa_text : IPRoute::unparse(); }

bool IPsecRoutes::build(const Options&, const std::vector<IPsecRoute>& routes, Snapshot& s, std::string& err) {
  std::vector<std::pair<k::Prefix4, int32_t>> pfx;
  pfx.reserve(routes.size());
  s.handles.assign(routes.size(), 0);
  for (size_t i = 0; i < routes.size(); ++i) {
    const IPsecRoute& r = routes[i];
    pfx.push_back({{r.addr, r.len, 0}, int32_t(i)});
    if (!r.sa) continue;
    uint32_t h = crypto::sa_handle(r.sa);
    if (!h) return err = "too many IPsec SAs in this process", false;
    auto [it, fresh] = s.by_spi.emplace(r.sa->params.spi, h);
    if (!fresh && it->second != h)
      return err = fmt::format("route {}: SPI {} is another route's already", r.unparse(), r.sa->params.spi), false;
    s.handles[i] = h;
  }
  s.radix.build(std::move(pfx));
  return true;
}

bool IPsecRoutes::lookup_text(const Snapshot& s, std::string_view addr, std::string& out) {
  IPv4Addr a;
  if (!parse_ipv4(trim(addr), a)) return false;
  int32_t i = s.radix.nodes.empty() ? -1 : s.radix.lookup(a.host());
  if (i < 0) return out = "-1", true;
  const IPsecRoute& r = s.routes[size_t(i)];
  out = std::to_string(r.port);
  if (r.gw) {
    uint8_t g[4] = {uint8_t(r.gw >> 24), uint8_t(r.gw >> 16), uint8_t(r.gw >> 8), uint8_t(r.gw)};
    out += " " + format_ipv4(g);
  }
  return true;
}

}  // namespace shoal

// What Click's IPsec pieces share (RadixIPsecLookup, IPsecESPEncap,
// IPsecAuthHMACSHA1, IPsecAES, IPsecESPUnencap): the SA a packet was routed
// with, carried in the annotations as a handle (crypto/sa_handles.hh; Click
// carries a pointer), and each worker's keyed cipher per SA.
//
// The SA annotation is the 4-byte user annotation (Anno::user), which
// TunnelDecap also uses: the two do not meet on one path.
#pragma once
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <unordered_map>

#include "shoal/core/packet.hh"
#include "shoal/crypto/esp.hh"
#include "shoal/crypto/sa_handles.hh"

namespace shoal {

inline void set_sa_anno(Packet* p, uint32_t handle) { std::memcpy(p->anno().user, &handle, 4); }
inline uint32_t sa_anno(const Packet* p) {
  uint32_t h;
  std::memcpy(&h, p->anno().user, 4);
  return h;
}

// The SAs of Click's route syntax: AES-CBC (the key's length: 128, 192 or
// 256 bits) with HMAC-SHA1-96, tunnel mode, first sequence number REPLAY
// (1 when REPLAY is 0), a replay window of OOSIZE packets (0: no check).
crypto::SAParams click_sa_params(uint32_t spi, std::string enc_key, std::string auth_key, uint32_t replay,
                                 uint32_t oosize);

class ClickSaCiphers {
 public:
  // The SA p's annotation names; nullptr when none.
  static crypto::SA* sa(const Packet* p) { return crypto::sa_by_handle(sa_anno(p)); }
  // This worker's cipher for sa, keyed when first used; nullptr (with one
  // message) when the crypto library refuses the SA.
  crypto::EspCipher* cipher(const crypto::SA* sa, const std::string& who) {
    if (sa == last_sa_) return last_;
    auto& c = m_[sa];
    if (!c) {
      try {
        c = std::make_unique<crypto::EspCipher>(sa->params, crypto::Engine::OpenSsl);
      } catch (const std::exception& e) {
        m_.erase(sa);
        if (!warned_) fmt::print(stderr, "shoal: {}: spi {}: {}\n", who, sa->params.spi, e.what());
        warned_ = true;
        return nullptr;
      }
    }
    last_sa_ = sa;
    return last_ = c.get();
  }

 private:
  std::unordered_map<const crypto::SA*, std::unique_ptr<crypto::EspCipher>> m_;
  const crypto::SA* last_sa_ = nullptr;
  crypto::EspCipher* last_ = nullptr;
  bool warned_ = false;
};

}  // namespace shoal

// IPsecAuthHMACSHA1: Click's ESP authentication step: computes and appends,
// or checks and removes, the HMAC-SHA1-96 ICV (RFC 2404) of the ESP packet.
#include <openssl/crypto.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/ipsec/clicksa.hh"

namespace shoal {

class IPsecAuthHMACSHA1 : public PacketElement<IPsecAuthHMACSHA1> {
 public:
  void configure(Args& a) override {
    a.read_mp("VERIFY", verify_);
    a.complete();
  }
  void initialize() override {
    r_nosa_ = add_drop_reason("no-sa");
    r_short_ = add_drop_reason("short");
    r_icv_ = add_drop_reason("bad-icv");
    r_room_ = add_drop_reason("no-room");
    r_crypto_ = add_drop_reason("crypto-error");
  }
  void add_handlers() override { add_stat_handler("drops", bad_); }
  int process(Packet* p) {
    crypto::SA* sa = ClickSaCiphers::sa(p);
    if (!sa) return drop_code(r_nosa_);
    crypto::EspCipher* c = ciphers_.cipher(sa, name());
    if (!c) return drop_code(r_crypto_);
    uint32_t n = c->icv_len();
    uint8_t icv[64];
    if (!verify_) {
      if (p->tailroom() < n && (!p->shift_data(-int32_t(n - p->tailroom())) || p->tailroom() < n))
        return drop_code(r_room_);
      uint32_t len = p->length();
      if (!mac(*c, p->data(), len, icv)) return drop_code(r_crypto_);
      std::memcpy(p->put(n), icv, n);
      return 0;
    }
    if (p->length() < 8 + c->iv_len() + n) return drop_code(r_short_);
    uint32_t len = p->length() - n;
    if (!mac(*c, p->data(), len, icv)) return drop_code(r_crypto_);
    if (CRYPTO_memcmp(icv, p->data() + len, n) != 0) {
      bad_.add();
      sa->integrity.fetch_add(1, std::memory_order_relaxed);
      return noutputs() > 1 ? 1 : drop_code(r_icv_);
    }
    p->take(n);
    return 0;
  }

 private:
  static bool mac(crypto::EspCipher& c, const uint8_t* d, uint32_t len, uint8_t* out) {
    try {
      c.icv(d, len, out);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }
  ClickSaCiphers ciphers_;
  bool verify_ = false;
  Stat bad_;
  uint16_t r_nosa_ = 0, r_short_ = 0, r_icv_ = 0, r_room_ = 0, r_crypto_ = 0;
};
SHOAL_ELEMENT(
    IPsecAuthHMACSHA1, .name = "IPsecAuthHMACSHA1", .ports = "1/1-2", .processing = "a/ah",
    .summary = "computes or verifies an ESP packet's HMAC-SHA1-96 ICV",
    .description =
        "Click's IPsec authentication step, on a packet that starts with its ESP header and carries an SA "
        "annotation (RadixIPsecLookup). VERIFY false (Click writes 0) computes HMAC-SHA1 (RFC 2404) over the "
        "whole packet under the SA's key and appends its first 96 bits; true (1) computes it over all but the "
        "last 12 bytes, compares in constant time and removes them when they match. A packet whose ICV does not "
        "match is counted in `drops` and leaves on output 1 if there is one, else is dropped (bad-icv). See "
        "IPsecAES for the order of the steps. Drops: no-sa, short, bad-icv, no-room, crypto-error.",
    .args = {{"VERIFY", "boolean", "false (0): compute and append; true (1): verify and remove"}},
    .handlers = {{"drops", "r", "packets whose ICV did not match"}},
    .example = "StripIPHeader -> IPsecAuthHMACSHA1(1) -> IPsecAES(0) -> IPsecESPUnencap -> CheckIPHeader -> [0]rt;");

}  // namespace shoal

// IPsecAES: Click's ESP encryption step: AES-CBC over the ESP payload, in
// place, under the key of the SA the packet's annotation names.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/ipsec/clicksa.hh"

namespace shoal {

class IPsecAES : public PacketElement<IPsecAES> {
 public:
  void configure(Args& a) override {
    a.read_mp("ENCRYPT", encrypt_);
    a.complete();
  }
  void initialize() override {
    r_nosa_ = add_drop_reason("no-sa");
    r_len_ = add_drop_reason("bad-length");
    r_crypto_ = add_drop_reason("crypto-error");
  }
  int process(Packet* p) {
    crypto::SA* sa = ClickSaCiphers::sa(p);
    if (!sa) return drop_code(r_nosa_);
    crypto::EspCipher* c = ciphers_.cipher(sa, name());
    if (!c) return drop_code(r_crypto_);
    uint32_t ivl = c->iv_len(), blk = c->align(), len = p->length();
    if (len < 8 + ivl + blk) return drop_code(r_len_);
    uint32_t text = len - 8 - ivl;
    // An ICV already there (IPsecAuthHMACSHA1 before this step, Click's
    // order) is not a whole block: it stays out of the cipher.
    if (text % blk == c->icv_len() % blk && c->icv_len() % blk) text -= c->icv_len();
    if (text == 0 || text % blk) return drop_code(r_len_);
    uint8_t* esp = p->data();
    try {
      c->cipher_only(esp + 8, esp + 8 + ivl, text, encrypt_);
    } catch (const std::exception&) {
      return drop_code(r_crypto_);
    }
    return 0;
  }

 private:
  ClickSaCiphers ciphers_;
  bool encrypt_ = true;
  uint16_t r_nosa_ = 0, r_len_ = 0, r_crypto_ = 0;
};
SHOAL_ELEMENT(
    IPsecAES, .name = "IPsecAES", .ports = "1/1", .processing = "a/a",
    .summary = "encrypts or decrypts an ESP payload with AES-CBC",
    .description =
        "Click's IPsec cipher step, on a packet that starts with its ESP header and carries an SA annotation "
        "(RadixIPsecLookup). ENCRYPT true (Click writes 1) encrypts the payload, padding and trailer after the IV "
        "in place with AES-CBC (RFC 3602) under the SA's key and the IV IPsecESPEncap wrote; false (0) decrypts. "
        "An HMAC-SHA1-96 ICV at the end (12 bytes past the last whole block) is left as it is. Written in RFC "
        "4303's order (IPsecAES(1) before IPsecAuthHMACSHA1(0) on the way out, IPsecAuthHMACSHA1(1) before "
        "IPsecAES(0) on the way in) the pieces make and take standard ESP with AES-CBC and HMAC-SHA1-96 in tunnel "
        "mode, as Linux's xfrm and IPsecInbound/IPsecOutbound do. Click's own ipsec-router.click authenticates "
        "before it encrypts: that order works too, between gateways that both use it (the ICV then covers the "
        "plaintext and is sent in the clear), but it is not RFC 4303. Drops: no-sa, bad-length (a payload that "
        "is not whole blocks), crypto-error.",
    .args = {{"ENCRYPT", "boolean", "true (1): encrypt, false (0): decrypt"}},
    .example = "rt[1] -> IPsecESPEncap -> IPsecAES(1) -> IPsecAuthHMACSHA1(0) -> IPsecEncap(50) -> [0]rt;");

}  // namespace shoal

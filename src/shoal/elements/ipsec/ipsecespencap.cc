// IPsecESPEncap: Click's ESP encapsulation step (RFC 4303 §2): the ESP
// header, the IV, the padding and the trailer around the packet, for the
// SA its annotation names.
#include "shoal/elements/common.hh"
#include "shoal/elements/ipsec/clicksa.hh"
#include "shoal/kernels/esp.hh"

namespace shoal {

class IPsecESPEncap : public PacketElement<IPsecESPEncap> {
 public:
  void configure(Args& a) override { a.complete(); }
  void initialize() override {
    r_nosa_ = add_drop_reason("no-sa");
    r_notip_ = add_drop_reason("not-ip");
    r_seq_ = add_drop_reason("seq-exhausted");
    r_room_ = add_drop_reason("no-room");
    r_big_ = add_drop_reason("too-long");
    r_crypto_ = add_drop_reason("crypto-error");
  }
  int process(Packet* p) {
    crypto::SA* sa = ClickSaCiphers::sa(p);
    if (!sa) return drop_code(r_nosa_);
    crypto::EspCipher* c = ciphers_.cipher(sa, name());
    if (!c) return drop_code(r_crypto_);
    uint8_t v = p->length() ? p->data()[0] >> 4 : 0;
    if (v != 4 && v != 6) return drop_code(r_notip_);
    uint32_t ivl = c->iv_len(), inner = p->length(), pad = c->pad_for(inner);
    uint32_t front = 8 + ivl, back = pad + 2;
    if (20 + front + inner + back + c->icv_len() > 65535) return drop_code(r_big_);
    if (p->headroom() < front || p->tailroom() < back) {  // move the data within its buffer
      int32_t by = p->headroom() < front ? int32_t(front - p->headroom()) : -int32_t(back - p->tailroom());
      if (!p->shift_data(by) || p->headroom() < front || p->tailroom() < back) return drop_code(r_room_);
    }
    // RFC 4303 §3.3.3: a sequence number is never sent twice (Click's
    // IPsecESPEncap starts over at REPLAY; this drops instead)
    uint64_t seq = sa->next_seq.fetch_add(1, std::memory_order_relaxed);
    if (seq > 0xffffffffu) return drop_code(r_seq_);
    p->put(back);
    uint8_t* esp = p->push(front);
    // tunnel mode: the next header is the inner packet's version (Click
    // writes the inner packet's protocol, which no peer reads)
    k::esp_layout(esp, front, 0, 0, ivl, inner, pad, v == 4 ? 4 : 41, sa->params.spi, uint32_t(seq));
    try {
      c->make_iv(seq, esp + 8);
    } catch (const std::exception&) {
      return drop_code(r_crypto_);
    }
    p->set_network_header(0);
    sa->packets.fetch_add(1, std::memory_order_relaxed);
    sa->bytes.fetch_add(inner, std::memory_order_relaxed);
    return 0;
  }

 private:
  ClickSaCiphers ciphers_;
  uint16_t r_nosa_ = 0, r_notip_ = 0, r_seq_ = 0, r_room_ = 0, r_big_ = 0, r_crypto_ = 0;
};
SHOAL_ELEMENT(
    IPsecESPEncap, .name = "IPsecESPEncap", .ports = "1/1", .processing = "a/a",
    .summary = "adds an ESP header, IV, padding and trailer",
    .description =
        "Click's first IPsec step. Takes an IP packet whose SA annotation RadixIPsecLookup set (output 1) and wraps "
        "it for tunnel mode (RFC 4303): SPI and the SA's next sequence number, an IV (AES-CBC: 16 bytes, the "
        "sequence number encrypted under the SA's key, never repeated), then after the packet RFC 4303's default "
        "padding (1, 2, 3...) to the cipher's block, the pad length and the next header (4 for IPv4 inside, 41 "
        "for IPv6). Nothing is encrypted or authenticated yet: IPsecAES(1) and IPsecAuthHMACSHA1(0) follow, then "
        "IPsecEncap(50). Unlike Click's, a sequence number is never reused: when the 32-bit space is spent the "
        "packet is dropped (seq-exhausted; the SA must be replaced). Drops: no-sa (no SA annotation), not-ip, "
        "seq-exhausted, no-room, too-long, crypto-error.",
    .example = "rt[1] -> IPsecESPEncap -> IPsecAES(1) -> IPsecAuthHMACSHA1(0) -> IPsecEncap(50) -> [0]rt;");

}  // namespace shoal

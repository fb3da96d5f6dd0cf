// IPsecESPUnencap: Click's last inbound IPsec step: the anti-replay check,
// then the ESP header, IV, padding and trailer removed (RFC 4303 §3.4).
#include "shoal/elements/common.hh"
#include "shoal/elements/ipsec/clicksa.hh"

namespace shoal {

class IPsecESPUnencap : public PacketElement<IPsecESPUnencap> {
 public:
  void configure(Args& a) override { a.complete(); }
  void initialize() override {
    r_nosa_ = add_drop_reason("no-sa");
    r_short_ = add_drop_reason("short");
    r_replay_ = add_drop_reason("replay");
    r_pad_ = add_drop_reason("bad-padding");
    r_dummy_ = add_drop_reason("dummy");
    r_nh_ = add_drop_reason("bad-next-header");
  }
  int process(Packet* p) {
    crypto::SA* sa = ClickSaCiphers::sa(p);
    if (!sa) return drop_code(r_nosa_);
    uint32_t ivl = sa->params.cipher == crypto::Cipher::AesCbc ? 16 : 8;
    uint32_t len = p->length();
    if (len < 8 + ivl + 2) return drop_code(r_short_);
    const uint8_t* esp = p->data();
    uint64_t seq = k::load_be32(esp + 4);
    {
      // the ICV was checked before this step (IPsecAuthHMACSHA1(1)): the
      // window may move (RFC 4303 §3.4.3)
      std::lock_guard g(sa->mu);
      if (!sa->window.check(seq, false)) {
        sa->replay.fetch_add(1, std::memory_order_relaxed);
        return drop_code(r_replay_);
      }
      sa->window.update(seq);
    }
    const uint8_t* text = esp + 8 + ivl;
    uint32_t text_len = len - 8 - ivl;
    uint32_t pad = text[text_len - 2];
    uint8_t nh = text[text_len - 1];
    if (pad + 2 > text_len) return drop_code(r_pad_);
    for (uint32_t i = 0; i < pad; ++i)  // RFC 4303 §2.4: the default padding is 1, 2, 3...
      if (text[text_len - 2 - pad + i] != uint8_t(i + 1)) return drop_code(r_pad_);
    if (nh == 59) return drop_code(r_dummy_);  // RFC 4303 §2.6: traffic-flow-confidentiality padding
    if (nh != 4 && nh != 41) return drop_code(r_nh_);
    p->take(pad + 2);
    p->pull(8 + ivl);
    p->set_network_header(0);
    return 0;
  }

 private:
  uint16_t r_nosa_ = 0, r_short_ = 0, r_replay_ = 0, r_pad_ = 0, r_dummy_ = 0, r_nh_ = 0;
};
SHOAL_ELEMENT(
    IPsecESPUnencap, .name = "IPsecESPUnencap", .ports = "1/1", .processing = "a/a",
    .summary = "checks an ESP packet's sequence number and removes its ESP framing",
    .description =
        "Click's last inbound IPsec step, on a decrypted, authenticated ESP packet (after IPsecAES(0) and "
        "IPsecAuthHMACSHA1(1)) with an SA annotation. The sequence number must pass the SA's replay window (OOSIZE "
        "packets below the highest seen; RFC 4303 §3.4.3), which then moves; the padding must be RFC 4303's "
        "default (1, 2, 3...) and the next header a tunnelled IPv4 (4) or IPv6 (41) packet. The ESP header, IV, "
        "padding and trailer are removed and the inner packet goes on. Drops: no-sa, short, replay, bad-padding, "
        "dummy (next header 59, traffic-flow-confidentiality padding), bad-next-header.",
    .example = "StripIPHeader -> IPsecAuthHMACSHA1(1) -> IPsecAES(0) -> IPsecESPUnencap -> CheckIPHeader -> [0]rt;");

}  // namespace shoal

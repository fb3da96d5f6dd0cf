// IPsecInbound: the inbound half of an ESP gateway (RFC 4301 §5.2, RFC 4303
// §3.4): SA by SPI, anti-replay, ICV before decryption, padding, then the
// inner packet checked against the inbound policies.
#include <cstring>
#include <mutex>

#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ipsec/ipsecbase.hh"

namespace shoal {

class IPsecInbound : public IPsecBase<IPsecInbound> {
 public:
  void configure(Args& a) override {
    read_sad(a);
    a.complete();
  }
  void initialize() override {
    load_sad();
    r_notip_ = add_drop_reason("not-ip");
    r_frag_ = add_drop_reason("fragment");
    r_short_ = add_drop_reason("short");
    r_spi_ = add_drop_reason("unknown-spi");
    r_len_ = add_drop_reason("bad-length");
    r_replay_ = add_drop_reason("replay");
    r_icv_ = add_drop_reason("integrity");
    r_pad_ = add_drop_reason("bad-padding");
    r_dummy_ = add_drop_reason("dummy");
    r_nh_ = add_drop_reason("bad-next-header");
    r_inner_ = add_drop_reason("bad-inner");
    r_block_ = add_drop_reason("policy-block");
    r_mismatch_ = add_drop_reason("policy-mismatch");
    r_crypto_ = add_drop_reason("crypto-error");
  }
  void add_handlers() override {
    add_sad_handlers();
    add_stat_handler("decrypted", decrypted_);
    add_stat_handler("bypassed", bypassed_);
  }

  int process(Packet* p) {
    int v = ip_version(p);
    if (!v) return drop_code(r_notip_);
    uint8_t* ip = p->data();
    uint32_t hl = v == 4 ? uint32_t(ip[0] & 0xf) * 4 : 40;
    uint8_t proto = v == 4 ? ip[9] : ip[6];
    if (proto != 50) {
      // RFC 4301 §5.2: clear traffic that an inbound policy wants protected is dropped
      const crypto::Policy* pol = inbound_policy(selector(ip, p->length()));
      if (pol && !pol->allow) return drop_code(r_block_);
      if (pol && pol->has_tmpl) return drop_code(r_mismatch_);
      bypassed_.add();
      return noutputs() > 1 ? 1 : 0;
    }
    if (v == 4 && (k::load_be16(ip + 6) & 0x3fff)) return drop_code(r_frag_);  // reassemble first
    uint8_t* esp = ip + hl;
    uint32_t esp_len = p->length() - hl;
    if (esp_len < 8) return drop_code(r_short_);
    crypto::Addr dst = v == 4 ? crypto::Addr::v4(ip + 16) : crypto::Addr::v6(ip + 24);
    crypto::SA* sa = db_->find_in(dst, k::load_be32(esp));
    if (!sa) return drop_code(r_spi_);
    const crypto::SAParams& sp = sa->params;
    crypto::EspCipher* cp = cipher(sa);
    if (!cp) return drop_code(r_crypto_);
    crypto::EspCipher& c = *cp;
    uint32_t ivl = c.iv_len(), icvl = c.icv_len();
    if (esp_len < 8 + ivl + icvl + 4) return drop_code(r_len_);
    uint32_t text_len = esp_len - 8 - ivl - icvl;
    if (text_len % c.align()) return drop_code(r_len_);

    uint64_t seq;
    {
      std::lock_guard<std::mutex> g(sa->mu);
      seq = sa->window.infer(k::load_be32(esp + 4), sp.esn);
      if (!sa->window.check(seq, sp.esn)) {
        sa->replay.fetch_add(1, std::memory_order_relaxed);
        return drop_code(r_replay_);
      }
    }
    bool failed = false;
    if (!run_cipher(c, false, esp, text_len, seq, failed)) {
      if (failed) return drop_code(r_crypto_);
      sa->integrity.fetch_add(1, std::memory_order_relaxed);
      return drop_code(r_icv_);
    }
    {
      std::lock_guard<std::mutex> g(sa->mu);  // another worker may have taken it meanwhile
      if (!sa->window.check(seq, sp.esn)) {
        sa->replay.fetch_add(1, std::memory_order_relaxed);
        return drop_code(r_replay_);
      }
      sa->window.update(seq);
    }

    uint8_t* text = esp + 8 + ivl;
    uint32_t pad = text[text_len - 2];
    uint8_t nh = text[text_len - 1];
    if (pad + 2 > text_len) return drop_code(r_pad_);
    uint32_t body = text_len - 2 - pad;
    for (uint32_t i = 0; i < pad; ++i)  // RFC 4303 §2.4: the default padding is 1, 2, 3...
      if (text[body + i] != uint8_t(i + 1)) return drop_code(r_pad_);
    if (nh == 59) return drop_code(r_dummy_);  // RFC 4303 §2.6: traffic-flow-confidentiality padding

    if (sp.mode == crypto::Mode::Tunnel) {
      if (nh != 4 && nh != 41) return drop_code(r_nh_);
      uint32_t inner_len;
      if (nh == 4) {
        if (body < 20 || (text[0] >> 4) != 4 || (text[0] & 0xf) < 5) return drop_code(r_inner_);
        inner_len = k::load_be16(text + 2);
        if (inner_len < uint32_t(text[0] & 0xf) * 4) return drop_code(r_inner_);
      } else {
        if (body < 40 || (text[0] >> 4) != 6) return drop_code(r_inner_);
        inner_len = 40u + k::load_be16(text + 4);
      }
      if (inner_len > body) return drop_code(r_inner_);
      const crypto::Policy* pol = inbound_policy(selector(text, inner_len));
      if (pol && !pol->allow) return drop_code(r_block_);
      if (pol && !(pol->has_tmpl && fits(pol->tmpl, *sa))) return drop_code(r_mismatch_);
      p->pull(hl + 8 + ivl);
      p->take(p->length() - inner_len);
    } else {
      if (nh == 4 || nh == 41) return drop_code(r_nh_);  // a tunnel packet in a transport-mode SA
      std::memmove(ip + 8 + ivl, ip, hl);
      p->pull(8 + ivl);
      p->take(p->length() - (hl + body));
      ip = p->data();
      if (v == 4) {
        ip[9] = nh;
        k::store_be16(ip + 2, uint16_t(hl + body));
        k::set_ipv4_header_checksum(ip, hl);
      } else {
        ip[6] = nh;
        k::store_be16(ip + 4, uint16_t(body));
      }
      const crypto::Policy* pol = inbound_policy(selector(ip, p->length()));
      if (pol && !pol->allow) return drop_code(r_block_);
      if (pol && pol->has_tmpl && !fits(pol->tmpl, *sa)) return drop_code(r_mismatch_);
    }
    ip = p->data();
    if ((ip[0] >> 4) == 4)
      std::memcpy(p->anno().dst_ip, ip + 16, 4);
    else
      std::memcpy(p->anno().dst_ip6, ip + 24, 16);
    p->clear_headers();
    p->set_network_header(0);
    sa->packets.fetch_add(1, std::memory_order_relaxed);
    sa->bytes.fetch_add(body, std::memory_order_relaxed);
    decrypted_.add();
    return 0;
  }

 private:
  // The inbound policy of a packet: `dir fwd` (a gateway forwards), else `dir in`.
  const crypto::Policy* inbound_policy(const crypto::Selector& s) const {
    const crypto::Policy* pol = db_->match(crypto::Dir::Fwd, s);
    return pol ? pol : db_->match(crypto::Dir::In, s);
  }
  // Whether the SA a packet came through is the one a policy's template asks for.
  static bool fits(const crypto::Template& t, const crypto::SA& sa) {
    const crypto::SAParams& p = sa.params;
    return t.mode == p.mode && (!t.reqid || t.reqid == p.reqid) && (!t.spi || t.spi == p.spi) &&
           (!t.dst.family || t.dst == p.dst) && (!t.src.family || t.src == p.src);
  }

  uint16_t r_notip_ = 0, r_frag_ = 0, r_short_ = 0, r_spi_ = 0, r_len_ = 0, r_replay_ = 0, r_icv_ = 0, r_pad_ = 0,
           r_dummy_ = 0, r_nh_ = 0, r_inner_ = 0, r_block_ = 0, r_mismatch_ = 0, r_crypto_ = 0;
  Stat decrypted_, bypassed_;
};
SHOAL_ELEMENT(
    IPsecInbound, .name = "IPsecInbound", .ports = "1/1-2", .processing = "a/a",
    .summary = "decrypts and checks ESP packets (RFC 4303) as its IPsec SAs and policies say",
    .description =
        "Takes IP packets (IPv4 or IPv6, starting at the IP header). An ESP packet (protocol 50) finds its SA by "
        "SPI and destination address in the SAD file (see IPsecOutbound for the file), then: the anti-replay "
        "window (RFC 4303 §3.4.3, the SA's `replay-window`, default 1024, with ESN's high half inferred as "
        "Appendix A2 says) is checked before the ICV, the ICV is checked before decryption (AES-GCM checks as "
        "it decrypts, as do the HMAC suites with CRYPTO ipsec-mb, in one job; a packet whose tag is wrong is "
        "dropped and nothing of it is used), the window is updated only for "
        "packets that authenticate, the padding must be RFC 4303's default, and the next header must fit the "
        "SA's mode. Tunnel mode: the inner packet leaves on output 0 (outer header, ESP and trailer removed). "
        "Transport mode: the IP header is rebuilt around the payload. The result is then checked against the "
        "inbound policies (`dir fwd`, else `dir in`): a matching policy must be `action allow` with a template "
        "that this SA fits (mode, reqid, spi, addresses), as Linux's policy check does. A packet that is not "
        "ESP leaves on output 1 if there is one, else on output 0, unless an inbound policy with a template "
        "selects it (clear traffic that should have been protected: dropped). DST_IP (or DST_IP6) is set to "
        "the result's destination. An outer IPv4 fragment is dropped (put an IPReassembler first).\n\n"
        "Drops, each counted with its reason: not-ip, fragment, short, unknown-spi, bad-length (not a whole "
        "number of blocks, or shorter than IV and ICV), replay (seen, or below the window), integrity (ICV "
        "mismatch), bad-padding, dummy (next header 59), bad-next-header, bad-inner, policy-block, "
        "policy-mismatch, crypto-error (the crypto library failed; said once on standard error). The `sa` handler "
        "shows each SA's replay and integrity drops.",
    .args = {{"SAD", "file", "the SA and policy database (ip xfrm commands)"},
             {"CRYPTO", "auto|ipsec-mb|openssl",
              "the crypto engine: auto (the default) takes intel-ipsec-mb for AES-GCM when it is built in and the "
              "CPU has AES-NI, and OpenSSL's EVP for the HMAC suites; or one of them for every SA"},
             {"VERBOSE", "boolean", "say what the SAD file held when it loads (default true)"}},
    .handlers = {{"sa", "r", "the SAs: addresses, SPI, suite, packets, bytes, replay and integrity drops"},
                 {"policies", "r", "the policies, in the order they are matched"},
                 {"crypto", "r", "each SA's crypto engine (ipsec-mb or openssl)"},
                 {"xfrm", "w", "applies one ip xfrm command (state/policy add, update, delete, flush) at run time"},
                 {"decrypted", "r", "ESP packets accepted"},
                 {"bypassed", "r", "packets that were not ESP and passed"}},
    .example = "FromDump(esp.pcap) -> Strip(14) -> CheckIPHeader -> IPsecInbound(SAD gw.sad) -> Queue -> ...;");

}  // namespace shoal

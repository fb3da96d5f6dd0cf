// IPsecOutbound: the outbound half of an ESP gateway (RFC 4301 §5.1): the
// policy of each packet, then its SA's ESP transform, tunnel or transport.
#include <cstring>

#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ipsec/ipsecbase.hh"

namespace shoal {

class IPsecOutbound : public IPsecBase<IPsecOutbound> {
 public:
  void configure(Args& a) override {
    read_sad(a);
    a.read("TTL", ttl_);
    a.complete();
  }
  void initialize() override {
    load_sad();
    r_notip_ = add_drop_reason("not-ip");
    r_block_ = add_drop_reason("policy-block");
    r_nosa_ = add_drop_reason("no-sa");
    r_seq_ = add_drop_reason("seq-exhausted");
    r_frag_ = add_drop_reason("transport-fragment");
    r_ext_ = add_drop_reason("transport-ext-header");
    r_family_ = add_drop_reason("family-mismatch");
    r_big_ = add_drop_reason("too-long");
    r_room_ = add_drop_reason("no-room");
    r_crypto_ = add_drop_reason("crypto-error");
  }
  void add_handlers() override {
    add_sad_handlers();
    add_stat_handler("encrypted", encrypted_);
    add_stat_handler("bypassed", bypassed_);
  }

  int process(Packet* p) {
    int v = ip_version(p);
    if (!v) return drop_code(r_notip_);
    crypto::Selector sel = selector(p->data(), p->length());
    const crypto::Policy* pol = db_->match(crypto::Dir::Out, sel);
    if (!pol || (pol->allow && !pol->has_tmpl)) {  // no policy, or one that lets it pass in the clear
      bypassed_.add();
      return noutputs() > 1 ? 1 : 0;
    }
    if (!pol->allow) return drop_code(r_block_);
    crypto::SA* sa = pol->sa ? pol->sa : db_->find_out(pol->tmpl, sel.src, sel.dst);
    if (!sa) return drop_code(r_nosa_);
    const crypto::SAParams& sp = sa->params;
    if (sp.mode == crypto::Mode::Transport && sp.dst.family != v) return drop_code(r_family_);
    crypto::EspCipher* cp = cipher(sa);
    if (!cp) return drop_code(r_crypto_);
    crypto::EspCipher& c = *cp;
    uint32_t ivl = c.iv_len(), icvl = c.icv_len();

    // where the ESP header goes, and what it protects
    uint32_t hdr = 0;  // bytes of IP header kept in front (transport mode)
    uint8_t nh;
    if (sp.mode == crypto::Mode::Tunnel) {
      nh = v == 4 ? 4 : 41;
    } else if (v == 4) {
      hdr = uint32_t(p->data()[0] & 0xf) * 4;
      if (k::load_be16(p->data() + 6) & 0x3fff) return drop_code(r_frag_);  // RFC 4303 §3.3: whole datagrams
      nh = p->data()[9];
    } else {
      hdr = 40;
      nh = p->data()[6];
      if (nh == 0 || nh == 43 || nh == 44 || nh == 60) return drop_code(r_ext_);
    }
    uint32_t inner = p->length() - hdr;
    uint32_t pad = c.pad_for(inner);
    uint32_t text = inner + pad + 2;
    uint32_t outer = sp.mode == crypto::Mode::Tunnel ? (sp.dst.family == 4 ? 20 : 40) : hdr;
    uint32_t front = (sp.mode == crypto::Mode::Tunnel ? outer : 0) + 8 + ivl, back = pad + 2 + icvl;
    uint32_t total = outer + 8 + ivl + text + icvl;
    if (total > (sp.dst.family == 4 ? 65535u : 65535u + 40u)) return drop_code(r_big_);
    if (p->headroom() < front || p->tailroom() < back) {  // move the data within its buffer
      int32_t by = p->headroom() < front ? int32_t(front - p->headroom()) : -int32_t(back - p->tailroom());
      if (!p->shift_data(by) || p->headroom() < front || p->tailroom() < back) return drop_code(r_room_);
    }
    uint64_t seq = sa->next_seq.fetch_add(1, std::memory_order_relaxed);
    if (!sp.esn && seq > 0xffffffffu) return drop_code(r_seq_);  // RFC 4303 §3.3.3: never cycle

    uint8_t tos = v == 4 ? p->data()[1] : uint8_t((k::load_be32(p->data()) >> 20) & 0xff);
    uint8_t* t = p->put(pad + 2);
    for (uint32_t i = 0; i < pad; ++i) t[i] = uint8_t(i + 1);  // RFC 4303 §2.4's default padding
    t[pad] = uint8_t(pad);
    t[pad + 1] = nh;
    p->put(icvl);
    uint8_t* start = p->push(front);
    if (hdr) std::memmove(start, start + front, hdr);  // the IP header moves to the front
    uint8_t* esp = start + outer;
    k::store_be32(esp, sp.spi);
    k::store_be32(esp + 4, uint32_t(seq));
    bool failed = false;
    if (!run_cipher(c, true, esp, text, seq, failed)) return drop_code(r_crypto_);

    uint8_t* ip = start;
    if (sp.mode == crypto::Mode::Tunnel) {
      if (sp.dst.family == 4) {
        ip[0] = 0x45;
        ip[1] = tos;  // DSCP and ECN copied from the inner header (RFC 4301 §5.1.2.1, RFC 6040)
        k::store_be16(ip + 4, ip_id_++);
        k::store_be16(ip + 6, 0);
        ip[8] = ttl_;
        std::memcpy(ip + 12, sp.src.b.data(), 4);
        std::memcpy(ip + 16, sp.dst.b.data(), 4);
      } else {
        k::store_be32(ip, (6u << 28) | (uint32_t(tos) << 20));
        ip[7] = ttl_;
        std::memcpy(ip + 8, sp.src.b.data(), 16);
        std::memcpy(ip + 24, sp.dst.b.data(), 16);
      }
    }
    if ((ip[0] >> 4) == 4) {
      ip[9] = 50;
      k::store_be16(ip + 2, uint16_t(p->length()));
      k::set_ipv4_header_checksum(ip, uint32_t(ip[0] & 0xf) * 4);
      std::memcpy(p->anno().dst_ip, ip + 16, 4);  // routed by the tunnel's endpoint
    } else {
      ip[6] = 50;
      k::store_be16(ip + 4, uint16_t(p->length() - 40));
      std::memcpy(p->anno().dst_ip6, ip + 24, 16);
    }
    p->clear_headers();
    p->set_network_header(0);
    p->set_transport_header((ip[0] >> 4) == 4 ? uint32_t(ip[0] & 0xf) * 4 : 40);
    sa->packets.fetch_add(1, std::memory_order_relaxed);
    sa->bytes.fetch_add(inner, std::memory_order_relaxed);
    encrypted_.add();
    return 0;
  }

 private:
  uint8_t ttl_ = 64;
  uint16_t ip_id_ = 0;
  uint16_t r_notip_ = 0, r_block_ = 0, r_nosa_ = 0, r_seq_ = 0, r_frag_ = 0, r_ext_ = 0, r_family_ = 0, r_big_ = 0,
           r_room_ = 0, r_crypto_ = 0;
  Stat encrypted_, bypassed_;
};
SHOAL_ELEMENT(
    IPsecOutbound, .name = "IPsecOutbound", .ports = "1/1-2", .processing = "a/a",
    .summary = "encrypts IP packets as its IPsec policies say (ESP, RFC 4303)",
    .description =
        "Takes IP packets (IPv4 or IPv6, starting at the IP header). Each is matched against the outbound "
        "policies of the SAD file (`dir out`, highest priority first; selectors on addresses, protocol and "
        "ports); a packet that a template-carrying policy selects is protected with the SA the template picks "
        "(tunnel: a new outer header with the SA's addresses, DSCP/ECN copied, TTL; transport: ESP inserted "
        "after the IP header), padded with RFC 4303's default padding, and leaves on output 0 with its "
        "DST_IP (or DST_IP6) annotation set to the destination of the new header, ready for route lookup. "
        "A packet that no policy selects, or that an `action allow` policy without a template selects, leaves "
        "in the clear on output 1 if there is one, else on output 0 (as Linux sends it). Sequence numbers come "
        "from one counter per SA shared by every worker, so they never repeat; without ESN a 32-bit counter "
        "that would cycle is refused (RFC 4303 §3.3.3). IVs: the 64-bit sequence number for GCM and CTR, the "
        "sequence number encrypted under the SA's key for CBC.\n\n"
        "The SAD file holds `ip xfrm state add` and `ip xfrm policy add` commands (the leading `ip xfrm` "
        "optional; `#` comments; a trailing backslash continues a line), so a Linux set-up is copied line for "
        "line. Suites: `aead 'rfc4106(gcm(aes))'` (AES-128/192/256-GCM, ICV 64/96/128), `enc "
        "'rfc3686(ctr(aes))'` or `enc 'cbc(aes)'` with `auth-trunc 'hmac(sha1)'` or `'hmac(sha256)'`, and "
        "`enc 'ecb(cipher_null)'` with an auth; `mode tunnel|transport`, `reqid`, `replay-window` (default "
        "1024 here, where Linux's is 0), `flag esn`, `replay-oseq`. Elements that name the same SAD file share "
        "one database. Crypto: intel-ipsec-mb (VPP's and DPDK's software crypto) or OpenSSL's EVP (CRYPTO), keys "
        "expanded once per SA and worker.\n\n"
        "Drops, each counted with its reason: not-ip, policy-block (an `action block` policy), no-sa (the "
        "template finds no SA), seq-exhausted, transport-fragment (transport mode protects whole datagrams), "
        "transport-ext-header (IPv6 extension headers in transport mode), family-mismatch, too-long, no-room, "
        "crypto-error (the crypto library failed; said once on standard error).",
    .args = {{"SAD", "file", "the SA and policy database (ip xfrm commands)"},
             {"TTL", "unsigned", "the outer header's TTL or hop limit in tunnel mode (default 64)"},
             {"CRYPTO", "auto|ipsec-mb|openssl",
              "the crypto engine: auto (the default) takes intel-ipsec-mb for AES-GCM when it is built in and the "
              "CPU has AES-NI, and OpenSSL's EVP for the HMAC suites; or one of them for every SA"},
             {"VERBOSE", "boolean", "say what the SAD file held when it loads (default true)"}},
    .handlers = {{"sa", "r", "the SAs: addresses, SPI, suite, last sequence number sent, packets, bytes, drops"},
                 {"policies", "r", "the policies, in the order they are matched"},
                 {"crypto", "r", "each SA's crypto engine (ipsec-mb or openssl)"},
                 {"xfrm", "w", "applies one ip xfrm command (state/policy add, update, delete, flush) at run time"},
                 {"encrypted", "r", "packets protected"},
                 {"bypassed", "r", "packets sent in the clear (no policy, or an allow policy without a template)"}},
    .example =
        "FromDump(clear.pcap) -> Strip(14) -> CheckIPHeader -> out :: IPsecOutbound(SAD gw.sad) -> "
        "EtherEncap(0x0800, 0:0:0:0:0:1, 0:0:0:0:0:2) -> ToDump(esp.pcap);");

}  // namespace shoal

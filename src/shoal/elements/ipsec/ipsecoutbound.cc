// IPsecOutbound: the outbound half of an ESP gateway (RFC 4301 §5.1): the
// policy of each packet, then its SA's ESP transform, tunnel or transport.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ipsec/ipsecbase.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/steps/esp_out.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"

namespace shoal {

class IPsecOutbound : public IPsecBase<IPsecOutbound, offload::OffloadableElement<PacketElement<IPsecOutbound>>> {
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
    add_stat_handler("device_sealed", device_sealed_);
    add_stat_handler("host_sealed", host_sealed_);
    mirror_.add_handler(*this);
  }

  // The CPU path: the decision, then the transform with the SA's cipher.
  int process(Packet* p) {
    Decision d;
    int r;
    bool reserved = pre_next_ < pre_.size() && pre_[pre_next_].p == p;
    if (reserved) {  // decided by begin_batch
      d = pre_[pre_next_].d;
      r = pre_[pre_next_++].r;
    } else {
      r = decide(p, d, true);
    }
    if (r != kTransform) return r;
    const crypto::SAParams& sp = d.sa->params;
    crypto::EspCipher* cp = cipher(d.sa);
    if (!cp) return drop_code(r_crypto_);
    crypto::EspCipher& c = *cp;
    uint32_t ivl = c.iv_len(), icvl = c.icv_len();
    uint32_t inner = p->length() - d.hdr;
    uint32_t pad = c.pad_for(inner);
    uint32_t text = inner + pad + 2;
    uint32_t outer = d.tunnel ? (sp.dst.family == 4 ? 20 : 40) : d.hdr;
    uint32_t udp = sp.encap ? 8 : 0;  // ESP in UDP (RFC 3948)
    uint32_t front = (d.tunnel ? outer : 0) + udp + 8 + ivl, back = pad + 2 + icvl;
    if (outer + udp + 8 + ivl + text + icvl > (sp.dst.family == 4 ? 65535u : 65535u + 40u)) return drop_code(r_big_);
    if (p->headroom() < front || p->tailroom() < back) {  // move the data within its buffer
      int32_t by = p->headroom() < front ? int32_t(front - p->headroom()) : -int32_t(back - p->tailroom());
      if (!p->shift_data(by) || p->headroom() < front || p->tailroom() < back) return drop_code(r_room_);
    }
    uint64_t seq = 0;
    if (!(reserved ? reserved_seq(d.sa, seq) : next_seq(d.sa, seq))) return drop_code(r_seq_);
    p->put(back);
    uint8_t* start = p->push(front);
    uint8_t* esp = k::esp_layout(start, front, d.hdr, outer + udp, ivl, inner, pad, d.nh, sp.spi, uint32_t(seq));
    k::esp_outer_header(start, d.tunnel ? sp.dst.family : 0, sp.src.b.data(), sp.dst.b.data(), d.tos, ttl_,
                        d.tunnel && sp.dst.family == 4 ? ip_id_++ : 0, p->length(), udp ? 17 : 50);
    if (queuing_ && c.mb_jobs()) {  // the rest when the batch's queue completes
      queue_.add(c, true, esp, text, seq, uint32_t(pend_.size()));
      pend_.push_back({p, d.sa, inner, slot_, 0, uint16_t(outer), udp != 0});
      return 0;
    }
    bool failed = false;
    if (!run_cipher(c, true, esp, text, seq, failed)) return drop_code(r_crypto_);
    return seal_done(p, d.sa, inner, outer, udp != 0);
  }
  // Decides every packet of the batch first, so that each SA's sequence
  // numbers for it are taken with one atomic add (an SA's counter is
  // shared by every worker: one add per packet was a third of the
  // element's own time with AES-GCM).
  void begin_batch(PacketBatch* b) {
    IPsecBase::begin_batch(b);
    pre_.clear();
    resv_.clear();
    pre_next_ = 0;
    b->for_each([&](uint32_t, Packet* p) {
      Pre& e = pre_.emplace_back();
      e.p = p;
      e.r = decide(p, e.d, true);
      if (e.r != kTransform) return;
      auto it = std::find_if(resv_.begin(), resv_.end(), [&](const Resv& x) { return x.sa == e.d.sa; });
      if (it == resv_.end()) it = resv_.insert(resv_.end(), {e.d.sa, 0, 0});
      ++it->end;
    });
    for (Resv& x : resv_) {
      x.next = x.sa->next_seq.fetch_add(x.end, std::memory_order_relaxed);
      x.end += x.next;
    }
  }
  bool finish_batch(PacketBatch* b) {
    pre_.clear();
    pre_next_ = 0;
    queuing_ = false;
    if (queue_.empty()) return false;
    complete_queue();
    bool changed = settle(b, pend_);
    pend_.clear();
    return changed;
  }

  // ---- offload (NBA's form): the host decides, the device lays out and seals
  void offload_declare(offload::Plan& plan) override {
    // room for the largest outer header, a UDP header (ESP in UDP), ESP header and IV; padding, trailer and ICV
    whole_ = plan.add_resizable(40 + 8 + 8 + 16, 15 + 2 + 32);
    jobs_ = plan.add_block(sizeof(k::EspJob), 0);
    acc_ = plan.add_block(0, 16);  // GHASH's sum per packet, when its sealing is split among threads
    plan.annos.pred |= offload_uses_pred();
  }
  bool offload_resizes() const override { return true; }
  void offload_pre(offload::Aggregate& a) override {
    refresh();
    keys_.refresh(db_);
    auto* jobs = reinterpret_cast<k::EspJob*>(a.block_in(jobs_));
    for (uint32_t i = 0; i < a.n; ++i) jobs[i] = job(a.batch->at(i));
  }
  bool offload_launch(offload::Launch& L, std::string& err) override {
    offload_ctl(L);
    const k::EspKeys* keys;
    const uint32_t* te0;
    if (!keys_.launch(L, mirror_, keys, te0, err)) return false;
    // GCM and CTR packets sealed by several threads each (as many as the
    // longest text's chunks; k::esp_seal_chunk), on a device
    const uint32_t per = L.host ? 0 : split_threads(*L.agg);
    const k::EspOutStep::Params o{L.view, L.ctl, L.block_in(jobs_), keys, te0, r_room_, per};
    L.run<k::EspOutStep>(o);
    if (per) {
      auto* acc = reinterpret_cast<uint32_t*>(L.block_out(acc_));
      L.run_split<k::EspSealChunkStep>({o, acc, per}, per);
      L.run<k::EspSealEndStep>({o, acc});
    }
    return true;
  }
  // The threads per packet that seal the aggregate's GCM and CTR packets
  // (0: none, or splitting is off: SHOAL_ESP_SPLIT=0, to measure the
  // difference).
  uint32_t split_threads(offload::Aggregate& a) const {
    if (!esp_split_enabled()) return 0;
    const auto* jobs = reinterpret_cast<const k::EspJob*>(a.block_in(jobs_));
    uint32_t per = 0;
    for (uint32_t i = 0; i < a.n; ++i) {
      const k::EspJob& j = jobs[i];
      if (j.action != k::kEspSeal) continue;
      const k::EspKeys& kk = keys_.keys(j.sa);
      if (!k::esp_split_suite(kk.suite)) continue;
      const uint32_t len = a.batch->at(i)->length();
      if (len < uint32_t(j.trim) + j.hdr) continue;
      per = std::max(per, k::esp_chunks(kk, len - j.trim - j.hdr + j.pad + 2u));
    }
    // (a jumbo packet's threads take several chunks each: EspSealChunkStep)
    return std::min(per, kMaxSplit);
  }
  // At completion: the packets the device sealed get their annotations and
  // counts; those left to the host (an SA whose suite the device does not
  // do) take the CPU path now.
  void offload_post(offload::Aggregate& a, size_t step) override {
    const auto* jobs = reinterpret_cast<const k::EspJob*>(a.block_in(jobs_));
    queuing_ = true;
    for (uint32_t i = 0; i < a.n; ++i) {
      if (!a.reached(i, step)) continue;
      Packet* p = a.batch->at(i);
      if (jobs[i].action == k::kEspHost) {
        host_packet(a, step, i);
      } else if (jobs[i].action == k::kEspSeal && a.verdict(i) == 0) {
        crypto::SA* sa = keys_.sa(jobs[i].sa);
        sealed(p, sa, p->length() - esp_overhead(p, *sa, jobs[i]));
        (a.on_device ? device_sealed_ : host_sealed_).add();  // (the kernels on the host: every slot was busy)
      }
    }
    host_done(a, step);
  }
  // An aggregate that stays on the host: the CPU path (intel-ipsec-mb's
  // jobs for a whole aggregate), not the portable kernels; when begun, as
  // a device aggregate takes its sequence numbers and IP IDs when packed.
  // Not while an SA stays on the host (the null cipher): in a device
  // aggregate its packets take their numbers at completion, and a host
  // aggregate's would pass them.
  HostDirect offload_host_direct() override {
    if (snap()) return HostDirect::No;
    refresh();  // (the snapshot and its key table follow the database)
    keys_.refresh(db_);
    return keys_.covers_all() ? HostDirect::AtArrival : HostDirect::No;
  }
  void offload_host_run(offload::Aggregate& a, size_t step) override {
    refresh();
    pre_.clear();
    pre_next_ = 0;
    if (step == 0) begin_batch(a.batch);  // every packet reaches the first step: sequence numbers reserved at once
    queuing_ = true;
    for (uint32_t i = 0; i < a.n; ++i)
      if (a.reached(i, step)) host_packet(a, step, i);
    pre_.clear();
    pre_next_ = 0;
    host_done(a, step);
  }

 private:
  static constexpr int kTransform = INT32_MAX;
  // Packet i of an aggregate through the CPU path: its result now, or (a
  // queued job) when host_done() completes the queue.
  void host_packet(offload::Aggregate& a, size_t step, uint32_t i) {
    slot_ = i;
    a.set_result(i, step, process(a.batch->at(i)));
  }
  void host_done(offload::Aggregate& a, size_t step) {
    queuing_ = false;
    if (!queue_.empty()) {
      complete_queue();
      for (const Pend& e : pend_) a.set_result(e.slot, step, e.r);
      pend_.clear();
    }
    tally_.flush();
  }
  struct Decision {
    crypto::SA* sa = nullptr;
    uint32_t hdr = 0, trim = 0;
    uint8_t nh = 0, tos = 0;
    bool tunnel = false;
  };
  // What happens to p: a result (an output port or a drop code), or
  // kTransform with the SA and the layout's parameters. `trim` takes the
  // link-layer padding off now (the CPU path), else says how much there is.
  int decide(Packet* p, Decision& d, bool trim) {
    uint32_t len = p->length();
    int v = ip_version(p, trim ? nullptr : &d.trim);
    if (!v) return drop_code(r_notip_);
    len -= d.trim;
    crypto::Selector sel = selector(p->data(), len);
    const crypto::Policy* pol = db_->match(crypto::Dir::Out, sel);
    if (!pol || (pol->allow && !pol->has_tmpl)) {  // no policy, or one that lets it pass in the clear
      bypassed_.add();
      return noutputs() > 1 ? 1 : 0;
    }
    if (!pol->allow) return drop_code(r_block_);
    d.sa = pol->sa ? pol->sa : db_->find_out(pol->tmpl, sel.src, sel.dst);
    if (!d.sa) return drop_code(r_nosa_);
    const crypto::SAParams& sp = d.sa->params;
    if (sp.mode == crypto::Mode::Transport && sp.dst.family != v) return drop_code(r_family_);
    const uint8_t* ip = p->data();
    d.tos = v == 4 ? ip[1] : uint8_t((k::load_be32(ip) >> 20) & 0xff);
    d.tunnel = sp.mode == crypto::Mode::Tunnel;
    if (d.tunnel) {
      d.nh = v == 4 ? 4 : 41;
    } else if (v == 4) {
      d.hdr = uint32_t(ip[0] & 0xf) * 4;
      if (k::load_be16(ip + 6) & 0x3fff) return drop_code(r_frag_);  // RFC 4303 §3.3: whole datagrams
      d.nh = ip[9];
    } else {
      d.hdr = 40;
      d.nh = ip[6];
      if (d.nh == 0 || d.nh == 43 || d.nh == 44 || d.nh == 60) return drop_code(r_ext_);
    }
    return kTransform;
  }
  // A packet sealed by the queue, waiting for it to complete.
  struct Pend {
    Packet* p;
    crypto::SA* sa;
    uint32_t inner, slot;
    int r;
    uint16_t outer;
    bool udp;
  };
  void complete_queue() {
    queue_.finish([&](uint32_t t, bool ok, bool failed) {
      Pend& e = pend_[t];
      e.r = ok && !failed ? seal_done(e.p, e.sa, e.inner, e.outer, e.udp) : drop_code(r_crypto_);
    });
  }
  // After the cipher: ESP in UDP's header (its IPv6 checksum covers the
  // ciphertext), the annotations and counts.
  int seal_done(Packet* p, crypto::SA* sa, uint32_t inner, uint32_t outer, bool udp) {
    if (udp) k::esp_udp_header(p->data(), outer, sa->params.encap_sport, sa->params.encap_dport, p->length());
    sealed(p, sa, inner);
    host_sealed_.add();
    return 0;
  }
  // The SA's next sequence number; false when a 32-bit counter would cycle
  // (RFC 4303 §3.3.3).
  static bool next_seq(crypto::SA* sa, uint64_t& seq) {
    seq = sa->next_seq.fetch_add(1, std::memory_order_relaxed);
    return sa->params.esn || seq <= 0xffffffffu;
  }
  // The next of the numbers begin_batch took for the SA (a packet dropped
  // after its decision leaves its number unused: a gap, never a repeat).
  bool reserved_seq(crypto::SA* sa, uint64_t& seq) {
    for (Resv& x : resv_)
      if (x.sa == sa && x.next < x.end) {
        seq = x.next++;
        return sa->params.esn || seq <= 0xffffffffu;
      }
    return next_seq(sa, seq);  // (not reached: every decided packet has its number)
  }
  // The device's job for p: the host's decision and sequence number, or
  // kEspHost for an SA whose suite the device does not do.
  k::EspJob job(Packet* p) {
    k::EspJob j{};
    Decision d;
    int r = decide(p, d, false);
    j.trim = uint16_t(d.trim);
    if (r != kTransform) {
      j.action = r;
      return j;
    }
    const int32_t idx = keys_.index(d.sa);
    if (idx < 0) {
      j.action = k::kEspHost;  // (nothing counted yet: the host path decides again)
      j.trim = 0;
      return j;
    }
    const crypto::SAParams& sp = d.sa->params;
    const uint32_t ivl = iv_len(sp), blk = ivl == 16 ? 16 : 4;  // CBC pads to its block, the others to 4 bytes
    const uint32_t inner = p->length() - d.trim - d.hdr, pad = (blk - ((inner + 2) & (blk - 1))) & (blk - 1);
    const uint32_t outer = d.tunnel ? (sp.dst.family == 4 ? 20 : 40) : d.hdr, udp = sp.encap ? 8 : 0;
    if (outer + udp + 8 + ivl + inner + pad + 2 + sp.icv_len > (sp.dst.family == 4 ? 65535u : 65535u + 40u)) {
      j.action = drop_code(r_big_);
      return j;
    }
    if (!next_seq(d.sa, j.seq)) {
      j.action = drop_code(r_seq_);
      return j;
    }
    j.action = k::kEspSeal;
    j.sa = uint32_t(idx);
    j.hdr = uint16_t(d.hdr);
    j.pad = uint8_t(pad);
    j.nh = d.nh;
    j.tos = d.tos;
    j.outer = d.tunnel ? sp.dst.family : 0;
    j.ttl = ttl_;
    j.ip_id = d.tunnel && sp.dst.family == 4 ? ip_id_++ : 0;
    return j;
  }
  // The bytes a sealed packet gained (for the SA's byte count).
  static uint32_t esp_overhead(const Packet*, const crypto::SA& sa, const k::EspJob& j) {
    uint32_t outer = j.outer == 4 ? 20 : j.outer == 6 ? 40 : 0;
    return outer + j.hdr + (sa.params.encap ? 8 : 0) + 8 + iv_len(sa.params) + j.pad + 2 + sa.params.icv_len;
  }
  // The IV's bytes on the device path (CBC, CTR and GCM: the suites it does).
  static uint32_t iv_len(const crypto::SAParams& p) { return p.cipher == crypto::Cipher::AesCbc ? 16 : 8; }
  // A sealed packet's annotations and counts.
  void sealed(Packet* p, crypto::SA* sa, uint32_t inner) {
    const uint8_t* ip = p->data();
    if ((ip[0] >> 4) == 4)
      std::memcpy(p->anno().dst_ip, ip + 16, 4);  // routed by the tunnel's endpoint
    else
      std::memcpy(p->anno().dst_ip6, ip + 24, 16);
    p->clear_headers();
    p->set_network_header(0);
    p->set_transport_header((ip[0] >> 4) == 4 ? uint32_t(ip[0] & 0xf) * 4 : 40);
    tally_.add(sa, inner);
    encrypted_.add();
  }
  uint8_t ttl_ = 64;
  uint16_t ip_id_ = 0;
  uint16_t r_notip_ = 0, r_block_ = 0, r_nosa_ = 0, r_seq_ = 0, r_frag_ = 0, r_ext_ = 0, r_family_ = 0, r_big_ = 0,
           r_room_ = 0, r_crypto_ = 0;
  Stat encrypted_, bypassed_, device_sealed_, host_sealed_;
  uint32_t whole_ = 0, jobs_ = 0, acc_ = 0;
  static constexpr uint32_t kMaxSplit = 128;  // threads per packet (a 1500-byte packet's text takes 12)
  std::vector<Pend> pend_;
  struct Pre {  // a packet of the batch as begin_batch decided it
    Packet* p;
    int r;
    Decision d;
  };
  struct Resv {  // an SA's numbers taken for the batch: [next, end)
    crypto::SA* sa;
    uint64_t next, end;
  };
  std::vector<Pre> pre_;
  std::vector<Resv> resv_;
  size_t pre_next_ = 0;
  DeviceSaKeys keys_;
  offload::TableMirror mirror_;
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
        "1024 here, where Linux's is 0), `flag esn`, `replay-oseq`, `encap espinudp SPORT DPORT OADDR` (ESP in "
        "UDP for NAT traversal, RFC 3948: a UDP header with the SA's ports goes between the IP header and ESP, "
        "checksum 0 over IPv4, computed over IPv6; on the device too when offloaded). Elements that name the "
        "same SAD file share "
        "one database. Crypto: intel-ipsec-mb (VPP's and DPDK's software crypto) or OpenSSL's EVP (CRYPTO), keys "
        "expanded once per SA and worker.\n\n"
        "Drops, each counted with its reason: not-ip, policy-block (an `action block` policy), no-sa (the "
        "template finds no SA), seq-exhausted, transport-fragment (transport mode protects whole datagrams), "
        "transport-ext-header (IPv6 extension headers in transport mode), family-mismatch, too-long, no-room, "
        "crypto-error (the crypto library failed; said once on standard error).\n\n"
        "Offloadable (NBA's IPsec gateway): after an OffloadBalancer, batches for the device go there whole, "
        "with room to grow. The host decides each packet's policy, SA and sequence number in packet order (a "
        "pre-function block); the device's ESP kernels (kernels/esp.hh: AES-CTR or AES-CBC with HMAC-SHA1 "
        "or HMAC-SHA-256, AES-GCM) pad it, lay the headers out and seal it (CBC one thread per packet; GCM "
        "and CTR split among threads of 8 blocks each, then the tag or HMAC per packet; SHOAL_ESP_SPLIT=0 in "
        "the environment keeps a thread per packet), with the same bytes as the CPU (ESP in UDP too). Packets of an SA "
        "the device does not do (the null cipher) take the "
        "CPU path when their aggregate completes. Packets that would need their data moved within the buffer "
        "for room (the CPU path does that) are dropped on the device (no-room); FromDump and the I/O elements "
        "leave room. Sequence numbers taken by an aggregate the device failed are not used again (gaps are "
        "allowed; numbers never repeat).",
    .args = {{"SAD", "file", "the SA and policy database (ip xfrm commands)"},
             {"TTL", "unsigned", "the outer header's TTL or hop limit in tunnel mode (default 64)"},
             {"CRYPTO", "auto|ipsec-mb|openssl",
              "the crypto engine: auto (the default) takes intel-ipsec-mb for every suite when it is built in and "
              "the CPU has AES-NI (the HMAC suites' jobs of a batch queued into its multi-buffer manager), else "
              "OpenSSL's EVP; or one of them for every SA"},
             {"VERBOSE", "boolean", "say what the SAD file held when it loads (default true)"}},
    .handlers = {{"sa", "r", "the SAs: addresses, SPI, suite, last sequence number sent, packets, bytes, drops"},
                 {"policies", "r", "the policies, in the order they are matched"},
                 {"crypto", "r", "each SA's crypto engine (ipsec-mb or openssl)"},
                 {"xfrm", "w", "applies one ip xfrm command (state/policy add, update, delete, flush) at run time"},
                 {"encrypted", "r", "packets protected"},
                 {"bypassed", "r", "packets sent in the clear (no policy, or an allow policy without a template)"},
                 {"device_sealed", "r", "packets sealed by the kernels on the device (offloaded)"},
                 {"host_sealed", "r",
                  "packets sealed on the CPU (without offload, or for the offloaded path as host_opened says for "
                  "IPsecInbound)"},
                 {"offload_chain", "r", "the device chain, its ranges and blocks (NBA form)"},
                 {"offload_packets", "r", "packets that went through the chain"},
                 {"offload_uploads", "r", "device copies of the SAs' keys made"}},
    .example =
        "FromDump(clear.pcap) -> Strip(14) -> CheckIPHeader -> out :: IPsecOutbound(SAD gw.sad) -> "
        "EtherEncap(0x0800, 0:0:0:0:0:1, 0:0:0:0:0:2) -> ToDump(esp.pcap);");

}  // namespace shoal

// IPsecInbound: the inbound half of an ESP gateway (RFC 4301 §5.2, RFC 4303
// §3.4): SA by SPI, anti-replay, ICV before decryption, padding, then the
// inner packet checked against the inbound policies.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ipsec/ipsecbase.hh"
#include "shoal/kernels/steps/esp_in.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"

namespace shoal {

class IPsecInbound : public IPsecBase<IPsecInbound, offload::OffloadableElement<PacketElement<IPsecInbound>>> {
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
    r_keepalive_ = add_drop_reason("natt-keepalive");
    r_encap_ = add_drop_reason("encap-mismatch");
  }
  void add_handlers() override {
    add_sad_handlers();
    add_stat_handler("decrypted", decrypted_);
    add_stat_handler("bypassed", bypassed_);
    add_stat_handler("device_opened", device_opened_);
    add_stat_handler("host_opened", host_opened_);
    mirror_.add_handler(*this);
  }

  // The CPU path: the checks up to the replay window, the ICV and
  // decryption with the SA's cipher, then the rest.
  int process(Packet* p) {
    In in;
    int r = classify(p, in, nullptr);
    if (r != kOpen) return r;
    crypto::EspCipher* cp = cipher(in.sa);
    if (!cp) return drop_code(r_crypto_);
    uint8_t* esp = p->data() + in.hl + in.udp;
    // The rest when the batch's queue completes; not with ESN, whose high
    // half is inferred from the window as the packets before left it.
    if (queuing_ && !in.sa->params.esn) {
      queue_.add(*cp, false, esp, in.text_len, in.seq, uint32_t(pend_.size()));
      pend_.push_back({p, in, slot_, 0});
      return 0;
    }
    bool failed = false;
    bool ok = run_cipher(*cp, false, esp, in.text_len, in.seq, failed);
    return opened(p, in, ok, failed);
  }
  bool finish_batch(PacketBatch* b) {
    queuing_ = false;
    if (queue_.empty()) return false;
    complete_queue();
    bool changed = settle(b, pend_);
    pend_.clear();
    return changed;
  }

  // ---- offload (NBA's form): the host checks each packet up to the replay
  // window in packet order, the device checks the ICV and decrypts in place,
  // the host updates the window and takes the packet apart at completion.
  void offload_declare(offload::Plan& plan) override {
    whole_ = plan.add_resizable(0, 0);  // the whole packet, written in place
    jobs_ = plan.add_block(sizeof(k::EspInJob), 1);
    acc_ = plan.add_block(0, 16);  // GHASH's sum per packet, when its opening is split among threads
    plan.annos.pred |= offload_uses_pred();
  }
  bool offload_resizes() const override { return true; }  // (its host part decides where packets go)
  void offload_pre(offload::Aggregate& a) override {
    refresh();
    keys_.refresh(db_);
    auto* jobs = reinterpret_cast<k::EspInJob*>(a.block_in(jobs_));
    for (uint32_t i = 0; i < a.n; ++i) {
      k::EspInJob& j = jobs[i];
      j = k::EspInJob{};
      In in;
      uint32_t trim = 0;
      int r = classify(a.batch->at(i), in, &trim);
      if (r != kOpen) {  // (packets that pass in the clear lose their link-layer padding, as on the CPU)
        j.action = r;
        j.trim = uint16_t(trim);
        continue;
      }
      int32_t idx = keys_.index(in.sa);
      j.action = idx < 0 ? k::kEspHost : k::kEspOpen;  // (the host's path trims for itself)
      j.sa = uint32_t(idx < 0 ? 0 : idx);
      j.seq = in.seq;
      j.hdr = uint16_t(in.hl + in.udp);  // (ESP in UDP: the ESP header after the UDP header)
      j.text_len = in.text_len;
      j.trim = uint16_t(idx < 0 ? 0 : trim);
      j.try_next_epoch = in.sa->params.esn;
    }
  }
  bool offload_launch(offload::Launch& L, std::string& err) override {
    offload_ctl(L);
    const k::EspKeys* keys;
    const uint32_t* te0;
    if (!keys_.launch(L, mirror_, keys, te0, err)) return false;
    // GCM and CTR packets opened by several threads each (as many as the
    // longest text's chunks; k::esp_open_chunk), on a device
    const uint32_t per = L.host ? 0 : split_threads(*L.agg);
    const k::EspInStep::Params in{L.view, L.ctl, L.block_in(jobs_), L.block_out(jobs_), keys, te0, r_icv_, per};
    L.run<k::EspInStep>(in);
    if (per) {
      auto* acc = reinterpret_cast<uint32_t*>(L.block_out(acc_));
      L.run_split<k::EspOpenChunkStep>({in, acc, per}, per);
      L.run<k::EspOpenCheckStep>({in, acc});
      L.run_split<k::EspOpenCryptChunkStep>({in, per}, per);
    }
    return true;
  }
  // The threads per packet that open the aggregate's GCM and CTR packets
  // (0: none, or splitting is off: SHOAL_ESP_SPLIT=0, as IPsecOutbound's).
  uint32_t split_threads(offload::Aggregate& a) const {
    if (!esp_split_enabled()) return 0;
    const auto* jobs = reinterpret_cast<const k::EspInJob*>(a.block_in(jobs_));
    uint32_t per = 0;
    for (uint32_t i = 0; i < a.n; ++i) {
      const k::EspInJob& j = jobs[i];
      if (j.action != k::kEspOpen) continue;
      const k::EspKeys& kk = keys_.keys(j.sa);
      if (k::esp_split_suite(kk.suite)) per = std::max(per, k::esp_chunks(kk, j.text_len));
    }
    // (a jumbo packet's threads take several chunks each: EspOpenChunkStep)
    return std::min(per, kMaxSplit);
  }
  void offload_post(offload::Aggregate& a, size_t step) override {
    const auto* jobs = reinterpret_cast<const k::EspInJob*>(a.block_in(jobs_));
    const uint8_t* epoch = a.block_out(jobs_);
    queuing_ = true;
    for (uint32_t i = 0; i < a.n; ++i) {
      if (!a.reached(i, step)) continue;
      Packet* p = a.batch->at(i);
      const k::EspInJob& j = jobs[i];
      if (j.action == k::kEspHost) {
        host_packet(a, step, i);
        continue;
      }
      if (j.action != k::kEspOpen) continue;  // the host's result, given by the kernel
      crypto::SA* sa = keys_.sa(j.sa);
      uint32_t v = a.verdict(i);
      if (v) {  // the ICV did not match
        if (!k::verdict_dropped(v) || k::verdict_reason(v) != r_icv_) continue;
        a.set_result(i, step, bad_icv(sa, j.seq, true));  // (ESN's high half inferred from the window as it is now)
        continue;
      }
      In in;
      in.sa = sa;
      in.udp = sa->params.encap ? 8 : 0;  // (an SA's packets come in UDP exactly when it says so)
      in.hl = j.hdr - in.udp;
      in.ivl = sa->params.cipher == crypto::Cipher::AesCbc ? 16 : 8;
      in.text_len = j.text_len;
      in.seq = j.seq + (uint64_t(epoch[i]) << 32);
      (a.on_device ? device_opened_ : host_opened_).add();  // (the kernels on the host: every slot was busy)
      a.set_result(i, step, accept(p, in));
    }
    host_done(a, step);
  }
  // An aggregate that stays on the host: the CPU path (intel-ipsec-mb's
  // jobs for a whole aggregate), not the portable kernels.
  HostDirect offload_host_direct() override { return snap() ? HostDirect::No : HostDirect::AtTurn; }
  void offload_host_run(offload::Aggregate& a, size_t step) override {
    refresh();
    queuing_ = true;
    for (uint32_t i = 0; i < a.n; ++i)
      if (a.reached(i, step)) host_packet(a, step, i);
    host_done(a, step);
  }

 private:
  static constexpr int kOpen = INT32_MAX;
  // Packet i of an aggregate through the CPU path: its result now, or (a
  // queued job) when host_done() completes the queue.
  void host_packet(offload::Aggregate& a, size_t step, uint32_t i) {
    host_opened_.add();
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
  struct In {
    crypto::SA* sa = nullptr;
    uint32_t hl = 0, udp = 0, ivl = 0, text_len = 0;  // udp: 8 for ESP in UDP
    uint64_t seq = 0;
  };
  // Everything before the ICV: a result (an output port or a drop code), or
  // kOpen with the SA, the ESP packet's layout and its sequence number,
  // which the replay window has not seen. With `trim`, link-layer padding
  // is said there instead of taken off.
  int classify(Packet* p, In& in, uint32_t* trim) {
    int v = ip_version(p, trim);
    if (!v) return drop_code(r_notip_);
    const uint32_t len = p->length() - (trim ? *trim : 0);
    uint8_t* ip = p->data();
    uint32_t hl = v == 4 ? uint32_t(ip[0] & 0xf) * 4 : 40;
    uint8_t proto = v == 4 ? ip[9] : ip[6];
    uint32_t udp = 0;  // ESP in UDP: the UDP header's 8 bytes before ESP
    // (only a datagram's first fragment has its ports)
    if (proto == 17 && len >= hl + 8 && (v != 4 || (k::load_be16(ip + 6) & 0x1fff) == 0) &&
        db_->natt_port(k::load_be16(ip + hl + 2))) {
      int r = natt(ip, v, hl, len, udp);
      if (r != kOpen) return r;
    }
    if (proto != 50 && !udp) {
      // RFC 4301 §5.2: clear traffic that an inbound policy wants protected is dropped
      const crypto::Policy* pol = inbound_policy(selector(ip, len));
      if (pol && !pol->allow) return drop_code(r_block_);
      if (pol && pol->has_tmpl) return drop_code(r_mismatch_);
      bypassed_.add();
      return noutputs() > 1 ? 1 : 0;
    }
    if (v == 4 && (k::load_be16(ip + 6) & 0x3fff)) return drop_code(r_frag_);  // reassemble first
    uint8_t* esp = ip + hl + udp;
    uint32_t esp_len = len - hl - udp;
    if (esp_len < 8) return drop_code(r_short_);
    crypto::Addr dst;
    if (v == 4)
      dst.set_v4(ip + 16);
    else
      dst.set_v6(ip + 24);
    crypto::SA* sa = db_->find_in(dst, k::load_be32(esp));
    if (!sa) return drop_code(r_spi_);
    const crypto::SAParams& sp = sa->params;
    if (sp.encap != (udp != 0)) return drop_code(r_encap_);  // the SA says whether its packets come in UDP
    const uint32_t ivl = sp.cipher == crypto::Cipher::AesCbc ? 16 : sp.cipher == crypto::Cipher::Null ? 0 : 8;
    const uint32_t align = sp.cipher == crypto::Cipher::AesCbc ? 16 : 4, icvl = sp.icv_len;
    if (esp_len < 8 + ivl + icvl + 4) return drop_code(r_len_);
    uint32_t text_len = esp_len - 8 - ivl - icvl;
    if (text_len & (align - 1)) return drop_code(r_len_);
    // the check before the ICV's: without the SA's lock (replay.hh says why
    // that is sound); accept() checks again under it
    const uint64_t seq = sa->window.infer(k::load_be32(esp + 4), sp.esn);
    if (!sa->window.check(seq, sp.esn)) {
      sa->replay.fetch_add(1, std::memory_order_relaxed);
      return drop_code(r_replay_);
    }
    in.sa = sa, in.hl = hl, in.udp = udp, in.ivl = ivl, in.text_len = text_len, in.seq = seq;
    return kOpen;
  }
  // A packet opened by the queue, waiting for it to complete.
  struct Pend {
    Packet* p;
    In in;
    uint32_t slot;
    int r;
  };
  void complete_queue() {
    queue_.finish([&](uint32_t t, bool ok, bool failed) {
      Pend& e = pend_[t];
      e.r = opened(e.p, e.in, ok, failed);
    });
  }
  // After the ICV check and decryption.
  int opened(Packet* p, const In& in, bool ok, bool failed) {
    if (failed) return drop_code(r_crypto_);
    return ok ? accept(p, in) : bad_icv(in.sa, in.seq, false);
  }
  // A packet whose ICV did not match. A copy of a number that an earlier
  // packet has meanwhile been accepted with (of the same batch queued, or
  // aggregate offloaded) is a replay, as it is when the window is checked
  // first; else an integrity failure. `infer`: seq is the 32 bits on the
  // wire, ESN's high half inferred from the window as it is now.
  int bad_icv(crypto::SA* sa, uint64_t seq, bool infer) {
    bool replay;
    {
      std::lock_guard g(sa->mu);
      const bool esn = sa->params.esn;
      replay = !sa->window.check(infer ? sa->window.infer(uint32_t(seq), esn) : seq, esn);
    }
    if (replay) {
      sa->replay.fetch_add(1, std::memory_order_relaxed);
      return drop_code(r_replay_);
    }
    sa->integrity.fetch_add(1, std::memory_order_relaxed);
    return drop_code(r_icv_);
  }
  // A UDP datagram to a port an SA's encapsulation names (RFC 3948 §2.2):
  // a NAT keepalive (one byte, 0xff) is dropped; a payload that starts with
  // four zero bytes (the non-ESP marker: IKE) passes in the clear as other
  // traffic does; anything else is ESP after the UDP header (`udp` = 8). A
  // first fragment is dropped, as ESP fragments are (reassemble first).
  int natt(const uint8_t* ip, int v, uint32_t hl, uint32_t len, uint32_t& udp) {
    if (v == 4 && (k::load_be16(ip + 6) & 0x3fff)) return drop_code(r_frag_);  // reassemble first
    const uint8_t* u = ip + hl + 8;
    uint32_t plen = len - hl - 8;
    if (plen == 1 && u[0] == 0xff) return drop_code(r_keepalive_);
    if (plen >= 8 && k::load_be32(u) != 0) udp = 8;
    return kOpen;
  }
  // A packet whose ICV matched, decrypted in place: the window (checked
  // again: another packet, or worker, may have taken the number meanwhile)
  // and updated; then the padding, the next header, the inner packet and
  // the inbound policies.
  int accept(Packet* p, const In& in) {
    crypto::SA* sa = in.sa;
    const crypto::SAParams& sp = sa->params;
    {
      std::lock_guard g(sa->mu);
      if (!sa->window.check(in.seq, sp.esn)) {
        sa->replay.fetch_add(1, std::memory_order_relaxed);
        return drop_code(r_replay_);
      }
      sa->window.update(in.seq);
    }
    uint8_t* ip = p->data();
    const int v = ip[0] >> 4;
    const uint32_t hl = in.hl, udp = in.udp, ivl = in.ivl, text_len = in.text_len;
    uint8_t* text = ip + hl + udp + 8 + ivl;
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
      p->pull(hl + udp + 8 + ivl);
      p->take(p->length() - inner_len);
    } else {
      if (nh == 4 || nh == 41) return drop_code(r_nh_);  // a tunnel packet in a transport-mode SA
      std::memmove(ip + udp + 8 + ivl, ip, hl);
      p->pull(udp + 8 + ivl);
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
    tally_.add(sa, body);
    decrypted_.add();
    return 0;
  }
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
           r_dummy_ = 0, r_nh_ = 0, r_inner_ = 0, r_block_ = 0, r_mismatch_ = 0, r_crypto_ = 0, r_keepalive_ = 0,
           r_encap_ = 0;
  Stat decrypted_, bypassed_, device_opened_, host_opened_;
  uint32_t whole_ = 0, jobs_ = 0, acc_ = 0;
  static constexpr uint32_t kMaxSplit = 128;  // threads per packet (a 1500-byte packet's text takes 12)
  std::vector<Pend> pend_;
  DeviceSaKeys keys_;
  offload::TableMirror mirror_;
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
        "the result's destination. An outer IPv4 fragment is dropped (put an IPReassembler first). A UDP datagram "
        "to a port an SA's `encap espinudp` names (RFC 3948) is a NAT keepalive (one byte 0xff: dropped, "
        "natt-keepalive), IKE (four zero bytes first, the non-ESP marker: passes in the clear as other traffic "
        "does), or ESP, which is taken out of UDP and opened as above; an SA with encapsulation takes only ESP in "
        "UDP and one without only plain ESP (encap-mismatch).\n\n"
        "Drops, each counted with its reason: not-ip, fragment, short, unknown-spi, bad-length (not a whole "
        "number of blocks, or shorter than IV and ICV), replay (seen, or below the window), integrity (ICV "
        "mismatch), bad-padding, dummy (next header 59), bad-next-header, bad-inner, policy-block, "
        "policy-mismatch, crypto-error (the crypto library failed; said once on standard error), natt-keepalive, "
        "encap-mismatch. The `sa` handler "
        "shows each SA's replay and integrity drops.\n\n"
        "Offloadable (NBA's IPsec gateway): after an OffloadBalancer, batches for the device go there whole. The "
        "host checks each packet in packet order up to the replay window (SA, lengths, the window, ESN's high "
        "half); the device's ESP kernels (AES-GCM, AES-CTR or AES-CBC with HMAC-SHA1 or HMAC-SHA-256) check the ICV "
        "before anything is decrypted and decrypt in place (CBC one thread per packet; GCM and CTR split among "
        "threads of 8 blocks each: GHASH summed by chunks, the tag or HMAC checked per packet, then the text "
        "decrypted by chunks; SHOAL_ESP_SPLIT=0 in the environment keeps a thread per packet) (with ESN they also try "
        "the "
        "next epoch's high half, which earlier packets of the aggregate may have moved the window to); at "
        "completion the host updates the window in packet order (a copy of a number accepted meanwhile is a "
        "replay, also when its ICV failed, as the CPU path's order says) and takes the packet apart. Packets of "
        "an SA whose suite the device does not do take the CPU path at completion. Same packets, drops and SA "
        "counters as the CPU element.",
    .args = {{"SAD", "file", "the SA and policy database (ip xfrm commands)"},
             {"CRYPTO", "auto|ipsec-mb|openssl",
              "the crypto engine: auto (the default) takes intel-ipsec-mb for every suite when it is built in and "
              "the CPU has AES-NI (the HMAC suites' jobs of a batch queued into its multi-buffer manager), else "
              "OpenSSL's EVP; or one of them for every SA"},
             {"VERBOSE", "boolean", "say what the SAD file held when it loads (default true)"}},
    .handlers = {{"sa", "r", "the SAs: addresses, SPI, suite, packets, bytes, replay and integrity drops"},
                 {"policies", "r", "the policies, in the order they are matched"},
                 {"crypto", "r", "each SA's crypto engine (ipsec-mb or openssl)"},
                 {"xfrm", "w", "applies one ip xfrm command (state/policy add, update, delete, flush) at run time"},
                 {"decrypted", "r", "ESP packets accepted"},
                 {"bypassed", "r", "packets that were not ESP and passed"},
                 {"device_opened", "r",
                  "ESP packets whose ICV the device checked and that it decrypted (offloaded, on the device)"},
                 {"host_opened", "r",
                  "ESP packets of the offloaded path opened on the CPU: SAs whose suite the device does not do, "
                  "the balancer's CPU batches behind aggregates in flight, aggregates that found every device slot "
                  "busy"},
                 {"offload_chain", "r", "the device chain, its ranges and blocks (NBA form)"},
                 {"offload_packets", "r", "packets that went through the chain"},
                 {"offload_uploads", "r", "device copies of the SAs' keys made"}},
    .example = "FromDump(esp.pcap) -> Strip(14) -> CheckIPHeader -> IPsecInbound(SAD gw.sad) -> Queue -> ...;");

}  // namespace shoal

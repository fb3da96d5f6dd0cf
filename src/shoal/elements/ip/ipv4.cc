// CheckIPHeader and DecIPTTL, with their device forms GPUCheckIPHeader and
// GPUDecIPTTL. The per-packet decisions live in kernels/ (ipfwd.hh and the
// steps CheckIP4Step and DecTTLStep), shared by process() and the device.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/ipfwd.hh"
#include "shoal/kernels/steps/check_ip4.hh"
#include "shoal/kernels/steps/dec_ttl.hh"
#include "shoal/offload/element.hh"

namespace shoal {

// ---------------------------------------------------------------- CheckIPHeader
class CheckIPHeader : public offload::OffloadableElement<PacketElement<CheckIPHeader>> {
 public:
  void configure(Args& a) override {
    std::string badsrc, ifaces;
    a.read_p("OFFSET", off_).read_p("BADSRC", badsrc).read("CHECKSUM", checksum_).read("VERBOSE", verbose_);
    a.read("INTERFACES", ifaces);
    a.complete();
    // INTERFACES ADDR/LEN...: their networks' broadcast and zero addresses are bad sources.
    for (size_t i = 0; i < ifaces.size();) {
      size_t e = ifaces.find(' ', i);
      if (e == std::string::npos) e = ifaces.size();
      std::string one = ifaces.substr(i, e - i);
      i = e + 1;
      if (one.empty()) continue;
      size_t sl = one.find('/');
      IPv4Addr x;
      uint64_t len = 32;
      if (sl == std::string::npos || !parse_ipv4(one.substr(0, sl), x) || !parse_uint(one.substr(sl + 1), len) ||
          len > 32)
        a.fail(fmt::format("INTERFACES: '{}' is not ADDR/LEN", one));
      uint32_t mask = len ? ~uint32_t(0) << (32 - len) : 0;
      if (len < 31) {
        badsrc_.push_back((x.host() & mask) | ~mask);
        badsrc_.push_back(x.host() & mask);
      }
    }
    for (auto& w : split_args(badsrc, {}, false)) {
      for (size_t i = 0; i < w.text.size();) {  // space-separated addresses
        size_t e = w.text.find(' ', i);
        if (e == std::string::npos) e = w.text.size();
        std::string one = w.text.substr(i, e - i);
        i = e + 1;
        if (one.empty()) continue;
        IPv4Addr x;
        if (!parse_ipv4(one, x)) a.fail(fmt::format("BADSRC: bad address '{}'", one));
        badsrc_.push_back(x.host());
      }
    }
  }
  void initialize() override {
    // Click's reasons, in its order.
    r_[0] = add_drop_reason("tiny-packet");
    r_[1] = add_drop_reason("bad-ip-version");
    r_[2] = add_drop_reason("bad-ip-header-length");
    r_[3] = add_drop_reason("bad-ip-length");
    r_[4] = add_drop_reason("bad-ip-checksum");
    r_[5] = add_drop_reason("bad-source-address");
    r_[6] = add_drop_reason("bad-ip-options");
  }
  int process(Packet* p) {
    int bad = check(p);
    if (bad < 0) return 0;
    if (noutputs() > 1) {
      to_output1_[bad].add();
      return 1;
    }
    return drop_code(r_[bad]);
  }
  void add_handlers() override {
    add_read_handler("drop_details", [this] {
      std::string s;
      for (int i = 0; i < 7; ++i)
        s += fmt::format("{}\t{}\n", drop_reasons()[r_[i]].count.get() + to_output1_[i].get(),
                         drop_reasons()[r_[i]].name);
      return s;
    });
  }

  // ---- offload: the header (at most 60 bytes from OFFSET) and the packet
  // length go to the device; DST_IP comes back; later steps find the IP
  // header at OFFSET.
  void offload_declare(offload::Plan& plan) override {
    offload::Range r;
    r.anchor = offload::Anchor::Data;
    r.begin = int32_t(off_);
    r.end = int32_t(off_) + 60;
    range_ = plan.add(r);
    plan.annos.length = plan.annos.dst_ip = true;
    plan.annos.pred |= offload_uses_pred();
    plan.ip_at = int32_t(off_);
  }
  bool offload_launch(offload::Launch& L, std::string& err) override {
    offload_ctl(L);
    k::CheckIP4Step::Params p{
        L.view, L.ctl, range_, off_, badsrc_.data(), uint32_t(badsrc_.size()), checksum_, !gpu_form_ && noutputs() > 1,
        {}};
    for (int i = 0; i < 7; ++i) p.reasons[i] = r_[i];
    if (!L.host && !badsrc_.empty()) {
      if (!dev_badsrc_) dev_badsrc_ = offload::upload_shared(L.device, badsrc_.data(), badsrc_.size() * 4, err);
      if (!dev_badsrc_) return false;
      p.badsrc = static_cast<const uint32_t*>(dev_badsrc_.get());
      L.keep(dev_badsrc_);
    }
    L.run<k::CheckIP4Step>(p);
    return true;
  }
  bool offload_has_passed_hook() const override { return true; }
  // DST_IP came back from the device (set there, maybe rewritten to a
  // gateway by a later lookup): only the header annotations are set here.
  void offload_passed(Packet* p) override { passed(p, false); }
  void offload_left(Packet*, uint32_t v) override {
    if (!k::verdict_dropped(v)) to_output1_[k::verdict_detail(v) % 7].add();
  }

 private:
  // -1: good; else the reason index.
  int check(Packet* p) {
    uint32_t avail = p->length() > off_ ? p->length() - off_ : 0;
    int bad = k::ipv4_check(p->data() + off_, avail, checksum_, badsrc_.data(), uint32_t(badsrc_.size()));
    if (bad >= 0) return bad;
    passed(p);
    return -1;
  }
  // A good packet: the network and transport header annotations and DST_IP
  // are set, and link-level padding beyond the IP total length is trimmed,
  // as Click does.
  void passed(Packet* p, bool set_dst = true) {
    const uint8_t* ip = p->data() + off_;
    uint32_t hl = uint32_t(ip[0] & 0xf) * 4, len = k::load_be16(ip + 2);
    if (set_dst) std::memcpy(p->anno().dst_ip, ip + 16, 4);
    if (off_ + len < p->length()) p->take(p->length() - off_ - len);
    p->set_network_header(off_);
    p->set_transport_header(off_ + hl);
  }

  uint32_t off_ = 0;
  bool checksum_ = true, verbose_ = false;
  std::vector<uint32_t> badsrc_;
  uint16_t r_[7] = {};
  Stat to_output1_[7];  // bad packets sent to output 1, by reason
  uint32_t range_ = 0;
  std::shared_ptr<void> dev_badsrc_;
};
SHOAL_OFFLOADABLE_ELEMENT(
    CheckIPHeader,
    SHOAL_GPU_FORM(.name = "GPUCheckIPHeader", .summary = "checks IPv4 headers on the device (Snap form)",
                   .description = "CheckIPHeader's tests, checksum included, on the device: the header bytes (at "
                                  "most 60 from OFFSET) and the packet length go there, bad packets are dropped "
                                  "there with CheckIPHeader's reasons, good ones get their annotations set and "
                                  "padding trimmed on the host. Later device elements of the chain find the IP "
                                  "header at OFFSET.",
                   .example = "Batcher(4096, 100us) -> HostToDevice -> GPUCheckIPHeader(14) -> "
                              "GPUIPLookup(...) -> DeviceToHost -> CompletionQueue -> Debatcher -> ...;"),
    .name = "CheckIPHeader", .ports = "1/1-2", .processing = "a/ah", .summary = "checks IPv4 headers",
    .description =
        "Checks the IPv4 header at OFFSET: length at least 20, version 4, header length within the "
        "packet, total length within the packet and not below the header, checksum (unless CHECKSUM "
        "false), source not broadcast, multicast or in BADSRC, options within the header. Good packets "
        "get the network header annotation and DST_IP set, lose link padding beyond the IP length, and "
        "leave on output 0. Bad ones leave on output 1 if it exists, else are dropped with the reason "
        "(tiny-packet, bad-ip-version, bad-ip-header-length, bad-ip-length, bad-ip-checksum, "
        "bad-source-address, bad-ip-options).",
    .args = {{"OFFSET", "unsigned", "where the IP header starts (default 0; 14 after Ethernet)"},
             {"BADSRC", "addresses", "more source addresses to reject"},
             {"INTERFACES", "ADDR/LEN...",
              "the router's networks: their broadcast and zero "
              "addresses are bad sources"},
             {"CHECKSUM", "boolean", "verify the checksum (default true)"},
             {"VERBOSE", "boolean", "accepted for Click compatibility"}},
    .handlers = {{"drop_details", "r", "bad packets by reason"}},
    .example = "FromDump(in.pcap) -> CheckIPHeader(14) -> ...;");

// ---------------------------------------------------------------- DecIPTTL
class DecIPTTL : public offload::OffloadableElement<PacketElement<DecIPTTL>> {
 public:
  void configure(Args& a) override {
    a.read("MULTICAST", multicast_);
    a.complete();
  }
  void initialize() override {
    r_expired_ = add_drop_reason("ttl-expired");
    r_nohdr_ = add_drop_reason("no-ip-header");
  }
  int process(Packet* p) {
    int r = decide(p, noutputs() > 1);
    if (r == 1 || r == drop_code(r_expired_)) expired_.add();
    return r;
  }
  void add_handlers() override { add_stat_handler("expired", expired_); }

  // ---- offload: the TTL/checksum word is written; without MULTICAST the
  // destination's first byte is read. Both need a whole 20-byte header.
  void offload_declare(offload::Plan& plan) override {
    offload::Range w;
    w.anchor = offload::Anchor::IP;
    w.begin = 8, w.end = 12, w.need = 20, w.write = true, w.ip_at = plan.ip_at;
    word_ = plan.add(w);
    if (!multicast_) {
      offload::Range d = w;
      d.begin = 16, d.end = 17, d.write = false;
      dst_ = plan.add(d);
    }
    plan.annos.pred |= offload_uses_pred();
  }
  bool offload_launch(offload::Launch& L, std::string&) override {
    offload_ctl(L);
    L.run<k::DecTTLStep>({L.view, L.ctl, word_, dst_, multicast_, !gpu_form_ && noutputs() > 1, r_expired_, r_nohdr_});
    return true;
  }
  void offload_left(Packet*, uint32_t v) override {
    if (k::verdict_dropped(v) ? k::verdict_reason(v) == r_expired_ : k::verdict_port(v) == 1) expired_.add();
  }
  bool offload_has_host_packet() const override { return true; }
  // A skipped packet on the host (offload_left counts its expiry).
  int offload_host_packet(Packet* p) override { return decide(p, !gpu_form_ && noutputs() > 1); }

 private:
  // The step's decision (k::DecTTLStep::decide) on the packet's header.
  int decide(Packet* p, bool two_outputs) {
    bool hdr = p->has_network_header() && p->network_header_offset() >= 0 &&
               uint64_t(p->network_header_offset()) + 20 <= p->length();
    uint8_t* ip = hdr ? p->network_header() : nullptr;
    return k::DecTTLStep::decide(ip ? ip + 8 : nullptr, ip ? ip[16] : 0, multicast_, two_outputs, r_expired_, r_nohdr_);
  }
  bool multicast_ = true;
  uint16_t r_expired_ = 0, r_nohdr_ = 0;
  Stat expired_;
  uint32_t word_ = 0, dst_ = 0;
};
SHOAL_OFFLOADABLE_ELEMENT(
    DecIPTTL,
    SHOAL_GPU_FORM(.name = "GPUDecIPTTL", .summary = "decrements the IPv4 TTL on the device (Snap form)",
                   .description = "DecIPTTL on the device: only the TTL/checksum word goes there and back "
                                  "(and the destination's first byte without MULTICAST). Expired packets "
                                  "are dropped ('ttl-expired').",
                   .example = "... -> GPUIPLookup(10.0.0.0/8 0, 0/0 1) -> GPUDecIPTTL(PRED 0) -> "
                              "DeviceToHost -> ...;",
                   .skip = true),
    .name = "DecIPTTL", .ports = "1/1-2", .processing = "a/ah", .summary = "decrements the IPv4 TTL",
    .description =
        "Decrements the TTL of the packet's IP header (found through the network header "
        "annotation) and updates the checksum incrementally (RFC 1624). Packets whose TTL is "
        "1 or 0 leave on output 1 if it exists (for ICMPError), else are dropped (reason "
        "'ttl-expired'). With MULTICAST false, multicast packets pass unchanged.",
    .args = {{"MULTICAST", "boolean", "decrement multicast packets too (default true)"}},
    .handlers = {{"expired", "r", "packets whose TTL expired"}},
    .example =
        "CheckIPHeader(14) -> rt :: DirectIPLookup(...); rt[0] -> dt :: DecIPTTL -> out; dt[1] -> ICMPError(...);");

}  // namespace shoal

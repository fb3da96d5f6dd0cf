// CheckIPHeader: checks IPv4 headers as Click does; offloadable,
// GPUCheckIPHeader in Snap's form. The tests are k::ipv4_check (ipfwd.hh).
#include <fmt/format.h>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/kernels/steps/check_ip4.hh"
#include "shoal/offload/element.hh"

namespace shoal {

class CheckIPHeader : public offload::OffloadableElement<PacketElement<CheckIPHeader>> {
 public:
  explicit CheckIPHeader(bool checksum = true) : checksum_(checksum) {}
  void configure(Args& a) override {
    std::string badsrc, ifaces;
    a.read_p("OFFSET", off_).read_p("BADSRC", badsrc).read("CHECKSUM", checksum_).read("VERBOSE", verbose_);
    a.read("INTERFACES", ifaces);
    a.complete();
    // INTERFACES ADDR/LEN...: their networks' broadcast and zero addresses are bad sources.
    for (std::string_view one : split_words(ifaces)) {
      uint32_t addr, mask;
      if (!parse_ipv4_prefix(one, addr, mask)) a.fail(fmt::format("INTERFACES: '{}' is not ADDR/LEN", one));
      if (mask != 0xffffffffu && mask != 0xfffffffeu) {  // a /31 or /32 has no broadcast or zero address
        badsrc_.push_back((addr & mask) | ~mask);
        badsrc_.push_back(addr & mask);
      }
    }
    std::string bad;
    for (auto& w : split_args(badsrc, {}, false))
      if (!parse_ipv4_list(w.text, badsrc_, bad)) a.fail(fmt::format("BADSRC: bad address '{}'", bad));
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
  bool checksum_, verbose_ = false;
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

// Click's CheckIPHeader2: the same checks, the checksum not verified unless
// CHECKSUM true.
class CheckIPHeader2 : public CheckIPHeader {
 public:
  CheckIPHeader2() : CheckIPHeader(false) {}
};
SHOAL_ELEMENT(CheckIPHeader2, .name = "CheckIPHeader2", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks IPv4 headers, not their checksums",
              .description =
                  "CheckIPHeader with CHECKSUM false by default (Click's CheckIPHeader2): the same "
                  "arguments, checks, outputs and drop reasons; the checksum is verified only with "
                  "CHECKSUM true.",
              .args = {{"OFFSET", "unsigned", "where the IP header starts (default 0)"},
                       {"BADSRC", "addresses", "more source addresses to reject"},
                       {"INTERFACES", "ADDR/LEN...", "the router's networks, as CheckIPHeader's"},
                       {"CHECKSUM", "boolean", "verify the checksum (default false)"},
                       {"VERBOSE", "boolean", "accepted for Click compatibility"}},
              .handlers = {{"drop_details", "r", "bad packets by reason"}},
              .example = "FromDump(in.pcap) -> CheckIPHeader2(14) -> ...;");

}  // namespace shoal

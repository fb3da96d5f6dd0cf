// SetIPDSCP: sets the Differentiated Services Code Point of IPv4 packets,
// as Click's; GPUSetIPDSCP in Snap's form. Offloadable: its per-packet work
// is k::SetIPDSCPStep::apply, which process() and the device both call.
#include <fmt/format.h>

#include "shoal/elements/ip/dscp.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/kernels/steps/set_ip_dscp.hh"
#include "shoal/offload/element.hh"

namespace shoal {

class SetIPDSCP : public offload::OffloadableElement<PacketElement<SetIPDSCP>> {
 public:
  void configure(Args& a) override { dscp_ = read_dscp_arg(a); }
  void initialize() override { r_nohdr_ = add_drop_reason("no-ip-header"); }
  void add_handlers() override { add_dscp_handler(*this, dscp_); }
  int process(Packet* p) {
    uint8_t* ip = ip_header20(p);
    return k::SetIPDSCPStep::apply(ip, ip ? ip + 10 : nullptr, dscp_, r_nohdr_);
  }

  // ---- offload: the header's first word and its checksum word, both
  // written back; the header must be whole (20 bytes).
  void offload_declare(offload::Plan& plan) override {
    offload::Range r;
    r.anchor = offload::Anchor::IP;
    r.begin = 0, r.end = 2, r.need = 20, r.write = true, r.ip_at = plan.ip_at;
    word_ = plan.add(r);
    r.begin = 10, r.end = 12;
    csum_ = plan.add(r);
    plan.annos.pred |= offload_uses_pred();
  }
  bool offload_launch(offload::Launch& L, std::string&) override {
    offload_ctl(L);
    L.run<k::SetIPDSCPStep>({L.view, L.ctl, word_, csum_, dscp_, r_nohdr_});
    return true;
  }
  bool offload_has_host_packet() const override { return true; }
  int offload_host_packet(Packet* p) override { return process(p); }

 private:
  uint8_t dscp_ = 0;
  uint16_t r_nohdr_ = 0;
  uint32_t word_ = 0, csum_ = 0;
};
SHOAL_OFFLOADABLE_ELEMENT(
    SetIPDSCP,
    SHOAL_GPU_FORM(.name = "GPUSetIPDSCP",
                   .description = "Only the header's first word and its checksum go to the device and back.",
                   .example = "... -> HostToDevice -> GPUCheckIPHeader(14) -> GPUSetIPDSCP(46) -> "
                              "DeviceToHost -> ...;",
                   .skip = true),
    .name = "SetIPDSCP", .ports = "1/1", .processing = "a/a", .summary = "sets the IPv4 DSCP field",
    .description =
        "Sets the Differentiated Services Code Point (the upper six bits of the ToS byte) of "
        "the IPv4 header at the network header annotation to DSCP, keeping the ECN bits, and "
        "updates the header checksum incrementally (RFC 1624). Packets without an IPv4 header "
        "annotation are dropped ('no-ip-header'). Offloadable (NBA's form after a balancer, "
        "or GPUSetIPDSCP in Snap's form).",
    .args = {{"DSCP", "0-63", "the code point (e.g. 46, Expedited Forwarding)"}},
    .handlers = {{"dscp", "rw", "the code point set"}},
    .example =
        "FromDump(in.pcap) -> Strip(14) -> CheckIPHeader -> SetIPDSCP(46) -> Unstrip(14) -> "
        "ToDump(ef.pcap);");

}  // namespace shoal

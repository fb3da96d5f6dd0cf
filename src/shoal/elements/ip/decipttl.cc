// DecIPTTL: decrements the IPv4 TTL (RFC 1624 checksum update); offloadable,
// GPUDecIPTTL in Snap's form. The decision is k::DecTTLStep::decide.

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/kernels/steps/dec_ttl.hh"
#include "shoal/offload/element.hh"

namespace shoal {

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
  // A host aggregate: offload_host_packet on the packets themselves (nothing packed).
  HostDirect offload_host_direct() override { return gpu_form_ ? HostDirect::No : HostDirect::AtArrival; }

 private:
  // The step's decision (k::DecTTLStep::decide) on the packet's header.
  int decide(Packet* p, bool two_outputs) {
    uint8_t* ip = ip_header20(p);
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

// FlowIPLoadBalancerReverse: the backends' replies of a FlowIPLoadBalancer,
// given back the virtual address as their source.
#include <fmt/format.h>

#include "shoal/core/graph.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/nf/flowiploadbalancer.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/flowkey.hh"

namespace shoal {

class FlowIPLoadBalancerReverse : public Element {
 public:
  void configure(Args& a) override {
    a.read_mp("LB", lb_name_);
    a.complete();
  }
  void initialize() override {
    lb_ = dynamic_cast<FlowIPLoadBalancer*>(router().find(lb_name_));
    if (!lb_) throw std::runtime_error(fmt::format("LB: '{}' is not a FlowIPLoadBalancer", lb_name_));
    if (!lb_->has_vip()) throw std::runtime_error(fmt::format("LB: '{}' has no VIP to give back", lb_name_));
    r_unknown_ = add_drop_reason("unknown-connection");
  }
  void push(int, PacketBatch* b) override {
    flow::FlowTable& t = lb_->manager().table();
    bool uniform = true;
    b->for_each([&](uint32_t i, Packet* p) {
      int out = reverse(t, p) ? 0 : noutputs() > 1 ? 1 : drop_code(r_unknown_);
      b->result(i) = int16_t(out);
      uniform &= out == 0;
    });
    if (uniform) return output_push(0, b);
    dispatch(b);
  }
  void add_handlers() override {
    add_stat_handler("rewritten", rewritten_);
    add_stat_handler("unknown", unknown_);
  }

 private:
  // A reply backend:bport -> client:cport belongs to the connection
  // client:cport -> VIP:bport, whose state names the backend.
  bool reverse(flow::FlowTable& t, Packet* p) {
    uint32_t len = 0;
    auto* ip = const_cast<uint8_t*>(flow_ip_header(p, len));
    bool ok = false;
    if (ip && (ip[0] >> 4) == 4 && len >= 20 && (ip[9] == 6 || ip[9] == 17)) {
      uint32_t hl = uint32_t(ip[0] & 0x0f) * 4;
      if ((k::load_be16(ip + 6) & 0x1fff) == 0 && len >= hl + 4) {
        uint32_t backend = k::load_be32(ip + 12), vip = lb_->vip();
        uint32_t client[4] = {k::load_be32(ip + 16), 0, 0, 0}, vip4[4] = {vip, 0, 0, 0};
        uint16_t bport = k::load_be16(ip + hl), cport = k::load_be16(ip + hl + 2);
        k::ParsedKey pk;
        k::canonicalize(pk, client, cport, vip4, bport);
        pk.key.proto = ip[9];
        pk.key.family = 4;
        uint32_t id = t.find(pk.key);
        if (id) {
          auto* st = reinterpret_cast<const LbState*>(t.state(id) + lb_->state_offset());
          if (st->addr == backend) {
            k::ip4_set_addr(ip, len, 12, vip);
            ok = true;
          }
        }
      }
    }
    (ok ? rewritten_ : unknown_).add();
    return ok;
  }
  std::string lb_name_;
  FlowIPLoadBalancer* lb_ = nullptr;
  uint16_t r_unknown_ = 0;
  Stat rewritten_, unknown_;
};
SHOAL_ELEMENT(
    FlowIPLoadBalancerReverse, .name = "FlowIPLoadBalancerReverse", .ports = "1/1-2", .processing = "h/h",
    .summary = "gives the backends' replies of a FlowIPLoadBalancer the virtual address back",
    .description =
        "For each TCP or UDP packet from a backend to a client, finds the connection the client opened to the "
        "LB's VIP (same ports) in the LB's flow table and, when the LB sent that connection to this backend, "
        "rewrites the source to the VIP (checksums updated). Other packets are 'unknown-connection': dropped, or "
        "sent to output 1 when it is connected. The LB must have a VIP and run on the same worker as the "
        "replies (one thread, or replies steered to the worker of their connection).",
    .args = {{"LB", "element", "the FlowIPLoadBalancer, mandatory"}},
    .handlers = {{"rewritten", "r", "replies given the VIP"}, {"unknown", "r", "packets of no balanced connection"}},
    .example =
        "lb :: FlowIPLoadBalancer(VIP 10.0.0.100, DST 10.0.1.1 10.0.1.2);\n"
        "FromDevice(back0) -> Strip(14) -> CheckIPHeader -> FlowIPLoadBalancerReverse(lb) -> ...;");

}  // namespace shoal

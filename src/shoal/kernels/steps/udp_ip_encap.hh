// Step kernel UdpIpEncapStep (see kernels/step.hh).
#pragma once
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/encap.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// UDPIPEncap: 28 bytes pushed in front of the resizable whole packet (NBA's
// "whole packet with size delta"), the UDP checksum over all of it; the IP
// IDs come from the host in a pre-function block (2 bytes per packet), so
// they follow the element's counter in packet order.
struct UdpIpEncapStep {
  struct Params {
    AggView a;
    StepCtl c;
    const uint8_t* ids;
    UdpIpEncapCfg cfg;
    int32_t r_room, r_big;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint32_t len = whole_len(p.a, i);
    if (len + kUdpIpHeaders > 65535) return step_result(p.a, p.c, i, -1 - p.r_big);
    uint8_t* h = whole_push(p.a, i, kUdpIpHeaders);
    if (!h) return step_result(p.a, p.c, i, -1 - p.r_room);
    udpip_encap(h, len, p.cfg, load_be16(p.ids + 2 * i));
    step_result(p.a, p.c, i, 0);
  }
};
SHOAL_STEP(UdpIpEncapStep)

}  // namespace shoal::k

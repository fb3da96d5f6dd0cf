// Offload step kernels: each is one element's per-packet function (from
// ipfwd.hh, lpm4.hh, lpm6.hh) applied to packet i of an aggregate. The
// device layer runs run(params, i) for every i: in a CUDA kernel, on the
// host backend's threads, or inline as the CPU fallback. Adding a step:
// write the struct here and name it in SHOAL_STEP_KERNELS.
#pragma once
#include "shoal/kernels/classify.hh"
#include "shoal/kernels/encap.hh"
#include "shoal/kernels/ids_scan.hh"
#include "shoal/kernels/ipfwd.hh"
#include "shoal/kernels/lpm4.hh"
#include "shoal/kernels/lpm6.hh"
#include "shoal/kernels/offload_abi.hh"

namespace shoal::k {

// DirectIPLookup: DIR-24-8 on the DST_IP annotation.
struct Route4Step {
  struct Params {
    AggView a;
    StepCtl c;
    Lpm4View t;
    const NextHop4* nh;
    int32_t noutputs, r_noroute, r_discard;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint8_t* d = p.a.dst_ip + 4 * i;
    int32_t nh = lpm4_lookup(p.t, load_be32(d));
    step_result(p.a, p.c, i, route4_apply(nh, p.nh, d, p.noutputs, p.r_noroute, p.r_discard));
  }
};

// LookupIP6Route: binary search on prefix lengths on the DST_IP6 annotation.
struct Route6Step {
  struct Params {
    AggView a;
    StepCtl c;
    Lpm6View t;
    const NextHop6* nh;
    int32_t noutputs, r_noroute, r_discard;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint8_t* d = p.a.dst_ip6 + 16 * i;
    int32_t nh = lpm6_lookup(p.t, load_be64(d), load_be64(d + 8));
    step_result(p.a, p.c, i, route6_apply(nh, p.nh, d, p.noutputs, p.r_noroute, p.r_discard));
  }
};

// CheckIPHeader: the header tests (checksum included) on the IP header
// range (at most 60 bytes from OFFSET); good packets' destination goes to
// the DST_IP annotation block for later steps. Bad ones leave on port 1
// (detail: the reason index) or are dropped.
struct CheckIP4Step {
  struct Params {
    AggView a;
    StepCtl c;
    uint32_t range, offset;
    const uint32_t* badsrc;
    uint32_t nbad;
    int32_t checksum, two_outputs;
    int32_t reasons[7];
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint32_t plen = p.a.plen[i];
    uint32_t avail = plen > p.offset ? plen - p.offset : 0;
    const uint8_t* ip = avail ? range_ptr(p.a, p.range, i) : nullptr;
    int bad = ip ? ipv4_check(ip, avail, p.checksum != 0, p.badsrc, p.nbad) : 0;
    if (bad < 0) {
      if (p.a.dst_ip)
        for (int j = 0; j < 4; ++j) p.a.dst_ip[4 * i + j] = ip[16 + j];
      step_result(p.a, p.c, i, 0);
    } else if (p.two_outputs) {
      step_result(p.a, p.c, i, 1, uint32_t(bad));
    } else {
      step_result(p.a, p.c, i, -1 - p.reasons[bad]);
    }
  }
};

// DecIPTTL: the TTL/checksum word (IP+8, written) and, without MULTICAST,
// the destination's first byte (IP+16, read).
struct DecTTLStep {
  struct Params {
    AggView a;
    StepCtl c;
    uint32_t word_range, dst_range;
    int32_t multicast, two_outputs, r_expired, r_nohdr;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint8_t* w = range_ptr(p.a, p.word_range, i, 4);
    if (!w) return step_result(p.a, p.c, i, -1 - p.r_nohdr);
    uint8_t dst0 = 0;
    if (!p.multicast) dst0 = *range_ptr(p.a, p.dst_range, i);
    if (dec_ttl(w, dst0, p.multicast != 0) == 0) return step_result(p.a, p.c, i, 0);
    step_result(p.a, p.c, i, p.two_outputs ? 1 : -1 - p.r_expired);
  }
};

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

// SDNClassifier: the frame's first kClsKeyBytes bytes (from OFFSET), the
// trees' first match; the rule's output, or a drop.
struct ClassifyStep {
  struct Params {
    AggView a;
    StepCtl c;
    ClsView t;
    uint32_t range;
    int32_t nomatch, r_runt, r_badip, r_nomatch;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint32_t len = range_len(p.a, p.range, i);
    const uint8_t* f = len ? range_ptr(p.a, p.range, i) : nullptr;
    bool missed;
    int r = cls_classify(p.t, f, len, p.nomatch, p.r_runt, p.r_badip, p.r_nomatch, missed);
    step_result(p.a, p.c, i, r, missed ? 1u : 0u);  // (the detail reaches the host when the frame leaves)
  }
};

}  // namespace shoal::k

// Every step kernel, for the backends' launch tables.
#define SHOAL_STEP_KERNELS(X) X(Route4Step) X(Route6Step) X(CheckIP4Step) X(DecTTLStep) X(UdpIpEncapStep) \
  X(IdsScanStep) X(ClassifyStep)

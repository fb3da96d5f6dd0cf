// The stateful firewall's per-packet decision (host+device): ordered
// ClassBench rules evaluated once per connection, the verdict kept in the
// flow's state, conntrack's view of what is NEW, ESTABLISHED, RELATED or
// INVALID, and only the replies of admitted connections let back.
#pragma once
#include "shoal/kernels/classify.hh"
#include "shoal/kernels/flowkey.hh"
#include "shoal/kernels/flowstate.hh"
#include "shoal/kernels/hd.hh"

namespace shoal::k {

// A flow's state in the flow layer (12 bytes, zero when the flow starts).
struct FwState {
  uint32_t gen;     // the rule set's generation the verdict was made under
  int32_t rule;     // the rule that decided (-1: the default policy)
  uint8_t verdict;  // kFwNone, kFwAccept, kFwDeny
  uint8_t pad[3];
};
constexpr uint8_t kFwNone = 0, kFwAccept = 1, kFwDeny = 2;

// The rule set as the decision sees it: rule r's action is 0 accept,
// anything else deny.
struct FwRules {
  ClsView view;
  uint32_t gen = 1;  // bumps on each rule change (never 0)
  uint8_t default_accept = 0;
  uint8_t midstream = 0;  // admit TCP connections first seen without their SYN
};

// What one packet gives the decision.
struct FwPacket {
  ClsKey key;           // the packet's own fields (ip 0 for IPv6: only Ethernet-type rules see it)
  uint8_t dir = 0;      // the flow layer's direction: 0 from the originator
  uint8_t related = 0;  // an ICMP error quoting the connection
  uint8_t tcp = 0;      // a TCP header (key.flags are its flags; not a later fragment)
  uint8_t invalid = 0;  // the flow layer found it outside its connection's window (conntrack's INVALID)
};

// A packet's FwPacket from its IP header (ip, len bytes on; nullptr: not
// IP) and its direction in the flow (with kFlowDirInvalid). The decision
// needs at most the first kFwHeaderBytes bytes from the IP header.
constexpr uint32_t kFwHeaderBytes = 80;
SHOAL_HD FwPacket fw_packet(const uint8_t* ip, uint32_t len, uint8_t dir) {
  FwPacket fp;
  fp.dir = dir & 1;
  fp.invalid = (dir & kFlowDirInvalid) != 0;
  if (!ip || len == 0) return fp;
  if ((ip[0] >> 4) == 4) {
    fp.key.ethertype = 0x0800;
    cls_key_ip4(ip, len, fp.key);
    uint32_t hl = uint32_t(ip[0] & 0x0f) * 4;
    bool first_frag = len >= 8 && (load_be16(ip + 6) & 0x1fff) == 0;
    fp.related = fp.key.proto == 1 && first_frag && len > hl && icmp4_is_error(ip[hl]);
    fp.tcp = fp.key.proto == 6 && first_frag && len >= hl + 14;
  } else {
    fp.key.ethertype = 0x86dd;
    fp.related = len > 40 && ip[6] == 58 && icmp6_is_error(ip[40]);
    fp.tcp = len >= 54 && ip[6] == 6;
    if (fp.tcp) fp.key.flags = load_be16(ip + 52);
  }
  return fp;
}

enum FwResult : int {
  kFwPass = 0,         // admitted (a new connection, or part of an admitted one)
  kFwDenied = 1,       // a rule (or the default) denies the connection
  kFwInvalid = 2,      // TCP flags no valid segment carries, a new connection not opened by a SYN, or a
                       // segment outside its connection's window
  kFwNotAdmitted = 3,  // a reply, or an ICMP error, for a connection that was never admitted
};

// Linux conntrack's table of valid TCP flag combinations (ECE, CWR and PSH
// aside): SYN, SYN+URG, SYN+ACK, RST, RST+ACK, FIN+ACK(+URG), ACK(+URG).
SHOAL_HD bool tcp_flags_valid(uint8_t flags) {
  switch (flags & 0x37) {  // FIN SYN RST ACK URG
    case 0x02:
    case 0x22:
    case 0x12:
    case 0x04:
    case 0x14:
    case 0x11:
    case 0x31:
    case 0x10:
    case 0x30: return true;
    default: return false;
  }
}

// The rule decision for the connection a packet belongs to: the key turned
// to the originator's direction. Sets s.
SHOAL_HD void fw_evaluate(const FwRules& r, FwState& s, const FwPacket& p) {
  ClsKey k = p.key;
  if (p.dir) {
    uint32_t a = k.src;
    k.src = k.dst;
    k.dst = a;
    uint16_t pt = k.sport;
    k.sport = k.dport;
    k.dport = pt;
  }
  int32_t rule = cls_lookup(r.view, k);
  s.rule = rule;
  s.verdict =
      rule >= 0 ? (r.view.rules[rule].action == 0 ? kFwAccept : kFwDeny) : (r.default_accept ? kFwAccept : kFwDeny);
  s.gen = r.gen;
}

// One packet of a flow. `evaluated` says the rules were looked at (a new
// connection, or the first packet after a rule change).
SHOAL_HD int fw_process(const FwRules& r, FwState& s, const FwPacket& p, bool& evaluated) {
  evaluated = false;
  bool tcp = p.tcp && !p.related;
  uint8_t flags = uint8_t(p.key.flags);
  if ((tcp && !tcp_flags_valid(flags)) || p.invalid) return kFwInvalid;
  if (p.related) return s.verdict == kFwAccept ? kFwPass : kFwNotAdmitted;
  if (s.verdict == kFwNone) {
    if (p.dir) return kFwNotAdmitted;
    if (tcp && !r.midstream && (flags & 0x17) != 0x02) return kFwInvalid;  // NEW without a SYN
    fw_evaluate(r, s, p);
    evaluated = true;
  } else if (s.gen != r.gen) {
    fw_evaluate(r, s, p);
    evaluated = true;
  }
  return s.verdict == kFwAccept ? kFwPass : kFwDenied;
}

}  // namespace shoal::k

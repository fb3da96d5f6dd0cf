// The flow layer's TCP connection tracking, as Linux conntrack follows a
// connection (SYN_SENT .. TIME_WAIT, CLOSE), and the timeout class each
// state (or protocol) puts a flow in. Host+device, like the key parser.
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

enum TcpState : uint8_t {
  kTcpNone,
  kTcpSynSent,
  kTcpSynRecv,
  kTcpEstablished,
  kTcpFinWait,
  kTcpCloseWait,
  kTcpLastAck,
  kTcpTimeWait,
  kTcpClose,
  // conntrack's SYN_SENT2: a simultaneous open (the responder's SYN to the
  // originator's), with window tracking only; its timeout is SYN_SENT's
  kTcpSynSent2,
};

// LAST_ACK, TIME_WAIT or CLOSE: both sides sent a FIN, or a reset closed it.
SHOAL_HD bool tcp_closed(uint8_t state) { return state >= kTcpLastAck && state <= kTcpClose; }

// Timeout classes: one per TCP state after NONE, then UDP (unreplied,
// replied), ICMP and every other protocol, then conntrack's two shorter TCP
// timeouts (retransmissions, unacknowledged data).
enum FlowClass : uint8_t {
  kClsTcpSynSent,
  kClsTcpSynRecv,
  kClsTcpEstablished,
  kClsTcpFinWait,
  kClsTcpCloseWait,
  kClsTcpLastAck,
  kClsTcpTimeWait,
  kClsTcpClose,
  kClsUdp,
  kClsUdpStream,
  kClsIcmp,
  kClsGeneric,
  // with window tracking (tcpwindow.hh): a connection whose last ACK
  // segment came again and again, or with data not yet acknowledged
  kClsTcpRetrans,
  kClsTcpUnack,
  kFlowClasses
};

constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpAck = 0x10;

// Beside a packet's direction in its flow (0 from the originator) where a
// device step reads it (AggView::fdir): the flow layer found the packet a
// TCP segment outside its connection's window (flow::kFactInvalid).
constexpr uint8_t kFlowDirInvalid = 2;
// The same in a packet's flow facts (Anno::flow_facts, flow::kFactInvalid).
constexpr uint8_t kFlowFactInvalid = 8;

// Per-flow TCP tracking bits kept beside the state.
struct TcpTrack {
  uint8_t state = kTcpNone;
  uint8_t fin = 0;        // bit d: a FIN was seen from direction d (0 originator, 1 responder)
  uint8_t first_fin = 0;  // the direction that closed first
  // picked up at its SYN-ACK (midstream): an ACK from either side completes
  // the handshake (Suricata's midstream SYN/ACK session takes the server's
  // ACK too, the client's may have gone unseen)
  uint8_t synack_pickup = 0;
};

// What a TCP segment does to a connection. Returns true when a SYN reopens a
// connection that had ended (TIME_WAIT or CLOSE): the caller starts a new
// flow for it. `midstream`: a connection first seen after its handshake is
// picked up as ESTABLISHED (conntrack's tcp_loose); otherwise it stays NONE
// and times out as a generic flow.
SHOAL_HD bool tcp_track(TcpTrack& t, uint8_t flags, uint8_t dir, bool midstream, bool async = false) {
  bool syn = flags & kTcpSyn, ack = flags & kTcpAck, fin = flags & kTcpFin, rst = flags & kTcpRst;
  if ((t.state == kTcpTimeWait || t.state == kTcpClose) && syn && !ack && dir == 0) return true;
  if (rst) {
    if (t.state != kTcpNone || midstream) t.state = kTcpClose;
    return false;
  }
  switch (t.state) {
    case kTcpNone:
      if (syn && !ack)
        t.state = kTcpSynSent;
      else if (midstream || (async && syn)) {  // (a server's side alone begins with its SYN-ACK)
        t.state = syn ? kTcpSynRecv : kTcpEstablished;
        t.synack_pickup = syn && midstream;
      }
      break;
    case kTcpSynSent:
      if (dir == 1 && syn)
        t.state = kTcpSynRecv;  // SYN-ACK, or a simultaneous open
      else if (async && dir == 0 && ack && !syn)
        t.state = kTcpEstablished;  // the client's side alone: its ACK, the SYN-ACK unseen
      break;
    case kTcpSynRecv:
      if (ack && !syn && (dir == 0 || async || t.synack_pickup))
        t.state = kTcpEstablished;  // (async: the server's side alone)
      break;
    case kTcpSynSent2:  // (window tracking's; a segment it could not check)
      if (syn && ack) t.state = kTcpSynRecv;
      break;
    default: break;
  }
  if (fin && t.state >= kTcpSynRecv && t.state <= kTcpCloseWait) {
    if (!t.fin) t.first_fin = dir;
    t.fin = uint8_t(t.fin | (1u << dir));
    t.state = t.fin == 3 ? kTcpLastAck : kTcpFinWait;
    return false;
  }
  if (t.state == kTcpFinWait && ack && dir != t.first_fin) {
    t.state = kTcpCloseWait;  // the other side acknowledged the first FIN and has data left to send
  } else if (t.state == kTcpLastAck && ack && dir == t.first_fin) {
    t.state = kTcpTimeWait;  // the last ACK, for the second FIN
  }
  return false;
}

// A TCP state's timeout class (NONE: a connection not tracked yet).
SHOAL_HD uint8_t tcp_state_class(uint8_t state) {
  return state == kTcpNone       ? uint8_t(kClsGeneric)
         : state == kTcpSynSent2 ? uint8_t(kClsTcpSynSent)
                                 : uint8_t(state - 1);
}

SHOAL_HD uint8_t flow_class(uint8_t proto, const TcpTrack& t, bool replied) {
  if (proto == 6) return tcp_state_class(t.state);
  if (proto == 17 || proto == 136) return replied ? uint8_t(kClsUdpStream) : uint8_t(kClsUdp);
  if (proto == 1 || proto == 58) return kClsIcmp;
  return kClsGeneric;
}

}  // namespace shoal::k

// A TCP connection's session checks, as Suricata's stream engine makes them
// (its "stream events"; a port of stream-tcp.c's packet and state
// functions, Suricata 8): the three-way handshake (which way the SYN, the
// SYN/ACK and the ACK go, their sequence and acknowledgement numbers), the
// four-way variant where both sides send a SYN, SYNs and SYN/ACKs sent
// again (those with another ISN or other options queued, up to a bound: a
// flood past it; the SYN/ACK picks the SYN it answers), an established
// connection's segments (their ACK against what the other side sent, their
// place in the receiver's window, SYNs and SYN/ACKs again), FINs and the
// states after them (FIN_WAIT1 .. TIME_WAIT, CLOSE_WAIT, LAST_ACK), resets
// (a reset's sequence number as the receiver's OS takes it: exactly the
// next one for BSD and Windows, within the window for Linux), keep-alives,
// zero-window probes, window updates, retransmissions, and the timestamps
// option (RFC 7323's PAWS, by the receiver's OS policy).
//
// A segment that fails a check raises its event. Where Suricata's engine
// rejects it (an error: a stale timestamp, a handshake or FIN segment with
// wrong numbers, a reset it would not take) the stream does not take it
// and an inline IPS drops it (stream.drop-invalid); an established
// connection's segment outside the window or with an impossible ACK is an
// event only, and the stream does not take it either. So a reset, a FIN or
// data the receiver would throw away does not end or feed the stream an
// IDS inspects: what evasions by a stale timestamp, a blind reset or a
// wrong acknowledgement count on.
//
// Where it departs from Suricata: connections picked up from a SYN/ACK
// (midstream or one-sided) are not checked; SACK blocks neither
// widen the window nor decide whether an old ACK is outdated (one with
// them counts as outdated); a segment wholly before the last ACK is taken
// as before the stream's base (Suricata's base_seq, which trails the last
// ACK by what it has not yet inspected).
#pragma once
#include <cstdint>
#include <vector>

#include "shoal/flow/reassembly.hh"  // Overlap: the receivers' OS policies
#include "shoal/ids/rules.hh"        // StreamEvent

namespace shoal::flow {

// What the checks read of a TCP segment.
struct TcpSeg {
  uint32_t seq = 0, ack = 0;
  uint16_t win = 0;
  uint8_t flags = 0;
  uint32_t len = 0;  // payload bytes
  bool has_ts = false;
  uint32_t tsval = 0, tsecr = 0;
  bool has_ws = false;
  uint8_t ws = 0;
  bool sackok = false;
  bool tfo = false;      // a TCP Fast Open option (kind 34, or 254 with its magic)
  bool signed_ = false;  // an MD5 signature or TCP-AO option (RFC 2385, 5925: what no observer can check)
  uint32_t secs = 0;     // the capture time, in seconds
  // The header at tcp (l4len bytes of it there), the payload's length; a
  // malformed option ends the options read.
  static TcpSeg parse(const uint8_t* tcp, uint32_t l4len, uint32_t payload, uint32_t secs);
};

class TcpSession {
 public:
  struct Config {
    bool midstream = false;      // stream.midstream
    bool async_oneside = false;  // stream.async-oneside
    bool inline_mode = false;    // stream.inline: an ACK the wrong way in the handshake is rejected
    uint8_t max_syn_queued = 10, max_synack_queued = 5;  // stream.max-syn-queued, max-synack-queued
  };
  // A segment in direction dir (0: the connection's first packet's, its
  // client's; 1: to the client), its receiver's OS policy. Returns the
  // events it raised (ids::StreamEvent bits); `valid` false when it failed
  // a check (Suricata's stream error: an inline IPS drops it).
  uint64_t check(const TcpSeg& s, uint8_t dir, Overlap receiver, const Config& cfg, bool& valid);
  // Whether the stream takes the segment last checked: not one that failed,
  // nor a reset that does not end the handshake (the client's, not
  // answering its SYN).
  bool taken() const { return taken_; }
  // The client's initial sequence number: a SYN sent again with another
  // one, or the SYN/ACK answering an earlier one, changes it before the
  // handshake ends.
  uint32_t client_isn() const { return side_[0].isn; }

  // Suricata's TCP states; kUnchecked: a connection picked up midstream.
  enum State : uint8_t {
    kNone,
    kSynSent,
    kSynRecv,
    kEstablished,
    kFinWait1,
    kFinWait2,
    kClosing,
    kCloseWait,
    kLastAck,
    kTimeWait,
    kClosed,
    kUnchecked
  };
  State state() const { return state_; }

 private:
  struct Side {  // one direction's sender (client: dir 0)
    uint32_t isn = 0, next_seq = 0, last_ack = 0, window = 0, next_win = 0;
    uint8_t wscale = 0;
    bool ts = false, zero_ts = false;  // it sent timestamps on its SYN; its last one was 0
    uint32_t last_ts = 0, last_pkt_ts = 0;
    bool keepalive = false;  // its last segment was a keep-alive
    bool rst_recv = false;   // it was sent a reset (during the SYN): its sender going on is suspect
  };
  // A SYN or SYN/ACK sent again with other settings (Suricata's TcpStateQueue).
  struct Queued {
    uint8_t flags = 0;  // kQ*
    uint8_t wscale = 0;
    uint16_t win = 0;
    uint32_t seq = 0, ack = 0, ts = 0, pkt_ts = 0;
    uint32_t len = 0;  // a SYN's data
    bool tfo = false;  // ... with a TFO option
    bool operator==(const Queued&) const = default;
  };
  static constexpr uint8_t kQSack = 1, kQWs = 2, kQTs = 4;

  // Each returns false for a segment that failed (an error); events go to
  // ev_ (raise() returns false, to end a check with it).
  bool raise(ids::StreamEvent e) { return ev_ |= uint64_t(1) << e, false; }
  bool skip(const TcpSeg& s, uint8_t dir);
  bool dispatch(State st, const TcpSeg& s, uint8_t dir, Overlap rcv, const Config& cfg);
  bool none(const TcpSeg& s, uint8_t dir, const Config& cfg);
  bool syn_sent(const TcpSeg& s, uint8_t dir, Overlap rcv, const Config& cfg);
  bool syn_recv(const TcpSeg& s, uint8_t dir, Overlap rcv, const Config& cfg);
  bool established(const TcpSeg& s, uint8_t dir, Overlap rcv);
  void data(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool fin(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool fin_wait1(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool fin_wait2(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool closing(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool close_wait(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool last_ack(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool time_wait(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool closed(const TcpSeg& s, uint8_t dir, Overlap rcv, const Config& cfg);
  bool reset(const TcpSeg& s, uint8_t dir, Overlap rcv);
  bool ack_ok(const Side& st, const TcpSeg& s, uint8_t dir);
  bool rst_ok(const TcpSeg& s, uint8_t dir, Overlap rcv);
  int retransmission(const Side& st, const TcpSeg& s);
  static void last_ack_up(Side& st, uint32_t ack) {
    if (int32_t(ack - st.last_ack) > 0) st.last_ack = ack;
  }
  static void next_win_up(Side& st) {
    if (int32_t(st.last_ack + st.window - st.next_win) > 0) st.next_win = st.last_ack + st.window;
  }
  void synack_update(const Queued& q);
  bool synsent_ts_ok(const TcpSeg& s, uint8_t dir) const;
  // PAWS (Suricata's StreamTcpValidateTimestamp), then the update a valid
  // one makes (StreamTcpHandleTimestamp).
  bool ts_valid(const TcpSeg& s, uint8_t dir, Overlap rcv) const;
  void ts_update(const TcpSeg& s, uint8_t dir, Overlap rcv);
  static Queued from_syn(const TcpSeg& s);
  static Queued from_synack(const TcpSeg& s, bool echo);
  Queued ssn_syn() const;
  void apply_syn(const Queued& q);

  State state_ = kNone, pstate_ = kNone;  // pstate_: the state before a reset closed it
  Side side_[2];                          // client, server
  bool timestamps_ = false, server_wscale_ = false, client_sackok_ = false, four_whs_ = false, tfo_ = false;
  bool async_ = false;            // stream.async-oneside, until packets come both ways: windows not checked
  bool confirmed_ = false;        // the server sent an ACK once established (a SYN/ACK after it is not a resend)
  bool evasion_ = false;          // a right-sequence, wrong-ACK segment came in the handshake
  bool midstream_ = false;        // picked up midstream (its first packet an ACK): windows not checked
  bool midstream_est_ = false;    // ... the other side's window not seen yet
  uint8_t mid_dir_ = 0;           // ... the direction of its first packet
  bool cfg_async_ = false;        // (stream.async-oneside, for the segment being checked)
  bool zwp_[2] = {false, false};  // a direction sent a zero-window probe
  bool seen_[2] = {false, false};
  std::vector<Queued> queue_;
  uint32_t syn_len_ = 0;  // the client's SYN's data
  bool taken_ = true;
  uint64_t ev_ = 0;
};

}  // namespace shoal::flow

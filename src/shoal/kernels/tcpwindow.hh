// TCP window tracking as Linux conntrack does it (nf_conntrack_proto_tcp.c's
// tcp_in_window, after Guido van Rooij's "Real Stateful TCP Packet Filtering
// in IP Filter"): per direction the highest sequence end sent, the highest
// end the receiver allowed (its ACK plus its window), the largest window and
// the highest ACK; a segment is in the window when
//   I.   seq <= sender.maxend                        (not past what the receiver allowed)
//   II.  seq + len >= sender.end - receiver.maxwin   (not older than a window)
//   III. sack <= receiver.end                        (acknowledges nothing not sent)
//   IV.  sack >= receiver.end - MAXACKWINDOW         (not an overly delayed ACK)
// and a reset must carry the sequence number the other side acknowledged
// last (RFC 5961's blind reset attack: a reset elsewhere in the window keeps
// the connection, one before it is invalid); the states follow conntrack's
// transition table (nf_conntrack_tcp_packet: tcp_conntrack below).
// Host+device, like the key parser; the flow layer keeps a TcpWindow per
// TCP flow when asked (flow::Config::tcp_window).
#pragma once
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/flowstate.hh"
#include "shoal/kernels/hd.hh"

namespace shoal::k {

// Per direction (conntrack's ip_ct_tcp_state).
struct TcpWinDir {
  uint32_t end;     // max of seq + len
  uint32_t maxend;  // max of ack + max(win, 1) seen from the other side
  uint32_t maxwin;  // max(win), scaled
  uint32_t maxack;  // max of ack
  uint8_t scale;    // window scale this side announced
  uint8_t flags;    // kWin*
  uint8_t pad[2];
};
// conntrack's IP_CT_TCP_FLAG_* values
constexpr uint8_t kWinScale = 0x01, kWinSackPerm = 0x02, kWinCloseInit = 0x04, kWinLiberal = 0x08, kWinUnacked = 0x10,
                  kWinMaxAckSet = 0x20;
// In TcpWindow::last_flags: a SYN was ignored in LAST_ACK, so the server's
// next ACK may be an RFC 5961 challenge ACK, not the ACK of the last FIN;
// the connection went through a simultaneous open (SYN_SENT2), so the
// responder's ACK in SYN_RECV completes it
constexpr uint8_t kWinExpChallengeAck = 0x40, kWinSimOpen = 0x80;

// A flow's window state (64 bytes, zero when the flow starts).
struct TcpWindow {
  TcpWinDir seen[2];   // by the flow's direction: 0 the originator
  uint32_t last_end;   // the last in-window ACK segment's end (a reset that follows it is genuine), or
                       // the last ignored segment's
  uint8_t last_index;  // conntrack's index (kSeg*) of the last in-window segment, and its direction
  uint8_t last_dir;
  uint8_t started;  // the first segment initialized the state
  // conntrack's IPS_SEEN_REPLY: a segment from the responder that was not
  // invalid (set by the flow table after the segment's own tracking)
  uint8_t seen_reply;
  // the last segment ignored (a SYN, maybe of a new connection on the tuple):
  // its window, and a SYN's options
  uint16_t last_win;
  uint8_t last_wscale, last_flags;
  // the last in-window ACK segment (conntrack's retransmission check: the
  // same segment again counts in retrans) or ignored segment
  uint32_t last_seq, last_ack;
  uint8_t retrans;
  // conntrack's IPS_ASSURED: a valid answer came to a connection with a
  // reply (the handshake's last ACK, or a picked-up connection's); set by
  // the flow table
  uint8_t assured;
  uint8_t pad2[2];
};
static_assert(sizeof(TcpWindow) == 64, "the flow state the window takes");

// conntrack's segment classes (get_conntrack_index)
enum TcpSegIndex : uint8_t { kSegSyn, kSegSynAck, kSegFin, kSegAck, kSegRst, kSegNone };

// What the check reads of a segment.
struct TcpSeg {
  uint32_t seq = 0, ack = 0, sack = 0, end = 0;
  uint16_t win = 0;
  uint8_t flags = 0;
  uint8_t index = kSegNone;
  const uint8_t* opts = nullptr;  // the options (header bytes 20..doff*4)
  uint32_t opt_len = 0;
};

// The verdict: in the window; outside it but harmless (a retransmission of
// acknowledged data, an overly delayed ACK: passes, moves nothing, as
// conntrack's NFCT_TCP_IGNORE); or invalid (conntrack's INVALID: a firewall
// drops it), with the reason.
enum TcpWinResult : uint8_t {
  kWinAccept,
  kWinIgnore,
  kWinSeqOver,   // SEQ is over the upper bound (over the window of the receiver)
  kWinAckOver,   // ACK is over the upper bound (ACKed data not seen yet)
  kWinBadRst,    // a reset before the sequence number the other side acknowledged
  kWinBadState,  // a segment the connection's state does not allow (conntrack's table: a FIN before the SYN-ACK...)
};

// A TCP segment from its IP header `ip` (captured bytes `cap`), the
// transport header at `l4_off`: false when the header is not all there.
// The length is the IP header's (the capture may be cut short).
SHOAL_HD bool tcp_segment(const uint8_t* ip, uint32_t cap, uint32_t l4_off, TcpSeg& s) {
  if (!ip || l4_off + 20 > cap) return false;
  const uint8_t* th = ip + l4_off;
  uint32_t doff = uint32_t(th[12] >> 4) * 4;
  if (doff < 20 || l4_off + doff > cap) return false;
  uint32_t total = (ip[0] >> 4) == 4 ? load_be16(ip + 2) : 40u + load_be16(ip + 4);
  if (total < l4_off + doff) return false;
  s.seq = load_be32(th + 4);
  s.ack = s.sack = load_be32(th + 8);
  s.win = load_be16(th + 14);
  s.flags = th[13];
  s.end = s.seq + (total - l4_off - doff) + ((s.flags & kTcpSyn) ? 1 : 0) + ((s.flags & kTcpFin) ? 1 : 0);
  s.index = (s.flags & kTcpRst)   ? kSegRst
            : (s.flags & kTcpSyn) ? ((s.flags & kTcpAck) ? kSegSynAck : kSegSyn)
            : (s.flags & kTcpFin) ? kSegFin
            : (s.flags & kTcpAck) ? kSegAck
                                  : kSegNone;
  s.opts = th + 20;
  s.opt_len = doff - 20;
  return true;
}

// Serial number arithmetic (RFC 1982), as the kernel's before()/after().
SHOAL_HD bool seq_before(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }
SHOAL_HD bool seq_after(uint32_t a, uint32_t b) { return int32_t(b - a) < 0; }

// Window scale and SACK-permitted from a SYN's options (conntrack's
// tcp_options); `sack` (optional) gets the highest right edge of a SACK
// option's blocks when it is after its value (tcp_sack).
SHOAL_HD void tcp_win_options(const TcpSeg& s, TcpWinDir* d, uint32_t* sack) {
  const uint8_t* p = s.opts;
  int len = int(s.opt_len);
  if (d) {
    d->scale = 0;
    d->flags &= kWinLiberal;
  }
  while (len > 0) {
    uint8_t op = *p++;
    if (op == 0) return;  // end of options
    if (op == 1) {        // no-op
      --len;
      continue;
    }
    if (len < 2) return;
    int sz = *p++;
    if (sz < 2 || sz > len) return;  // a silly or partial option
    if (d && op == 4 && sz == 2) {
      d->flags |= kWinSackPerm;
    } else if (d && op == 3 && sz == 3) {
      d->scale = p[0] > 14 ? 14 : p[0];
      d->flags |= kWinScale;
    } else if (sack && op == 5 && sz >= 10 && (sz - 2) % 8 == 0) {
      for (int i = 0; i < sz - 2; i += 8) {
        uint32_t right = load_be32(p + i + 4);
        if (seq_after(right, *sack)) *sack = right;
      }
      return;
    }
    p += sz - 2;
    len -= sz;
  }
}

// conntrack's MAXACKWINDOW: how far an ACK may lag behind what it acknowledges
SHOAL_HD uint32_t max_ack_window(const TcpWinDir& sender) { return sender.maxwin > 66000 ? sender.maxwin : 66000u; }

// The first segment of a flow (conntrack's tcp_new): from a SYN, the sender's
// end and options; from any other segment (a connection picked up in its
// middle), its end plus its window, and both directions liberal (only resets
// are checked then, as conntrack does for connections it picked up).
SHOAL_HD void tcp_win_start(TcpWindow& w, const TcpSeg& s, uint8_t dir) {
  TcpWinDir& d = w.seen[dir];
  d.end = s.end;
  d.maxwin = s.win ? s.win : 1;
  if (s.index == kSegSyn) {
    d.maxend = s.end;
    tcp_win_options(s, &d, nullptr);
  } else {
    d.maxend = s.end + d.maxwin;
    d.flags = w.seen[dir ^ 1].flags = kWinSackPerm | kWinLiberal;
  }
  w.last_index = kSegNone;
  w.started = 1;
}

// A SYN-ACK (or a simultaneous open's SYN) starts its sender's side
// (tcp_init_sender): scaling holds only when both sides announced it.
SHOAL_HD void tcp_win_init_sender(TcpWindow& w, const TcpSeg& s, uint8_t dir) {
  TcpWinDir& d = w.seen[dir];
  d.end = d.maxend = s.end;
  d.maxwin = s.win ? s.win : 1;
  tcp_win_options(s, &d, nullptr);
  if (dir == 1 && !((d.flags & kWinScale) && (w.seen[0].flags & kWinScale))) d.scale = w.seen[0].scale = 0;
}

// One segment against the window (conntrack's tcp_in_window), updating the
// state when it is in the window. A liberal side's segments outside it pass
// and move nothing (conntrack's be_liberal).
SHOAL_HD int tcp_in_window(TcpWindow& w, uint8_t state, const TcpSeg& in, uint8_t dir) {
  TcpWinDir& snd = w.seen[dir];
  TcpWinDir& rcv = w.seen[dir ^ 1];
  TcpSeg s = in;
  uint32_t win = s.win;
  const bool syn = s.flags & kTcpSyn, ack = s.flags & kTcpAck, rst = s.flags & kTcpRst;
  if (rcv.flags & kWinSackPerm) tcp_win_options(s, nullptr, &s.sack);
  if (snd.maxwin == 0) {
    if (syn) {
      tcp_win_init_sender(w, s, dir);
      if (!ack) return kWinAccept;  // a simultaneous open
    } else {
      // in the middle of a connection: this side's history is lost
      snd.end = s.end;
      uint32_t swin = win << snd.scale;
      snd.maxwin = swin ? swin : 1;
      snd.maxend = s.end + snd.maxwin;
      if (rcv.maxwin == 0)
        rcv.end = rcv.maxend = s.sack;  // (the other side not seen yet: III and IV pass until it is)
      else if (s.sack == rcv.end + 1)
        ++rcv.end;  // a reply to a keep-alive
    }
  } else if (syn && seq_after(s.end, snd.end) && (state == kTcpSynSent || state == kTcpSynRecv)) {
    tcp_win_init_sender(w, s, dir);  // a reinitialized TCP's SYN (RFC 793), or a SYN-ACK again
    if (dir == 1 && !ack) return kWinAccept;
  }
  if (!ack || (rst && s.ack == 0)) s.ack = s.sack = rcv.end;               // (no ACK, or a broken stack's RST+ACK 0)
  if (rst && s.seq == 0 && state == kTcpSynSent) s.seq = s.end = snd.end;  // a reset answering a SYN
  const bool liberal = snd.flags & kWinLiberal;
  if (!seq_before(s.seq, snd.maxend + 1)) {
    uint32_t overshot = s.end - snd.maxend + 1;
    bool ack_ok = seq_after(s.sack, rcv.end - max_ack_window(snd) - 1);
    bool in_recv = rcv.maxwin && seq_after(s.end, snd.end - rcv.maxwin - 1);
    if (in_recv && ack_ok && overshot <= rcv.maxwin && seq_before(s.sack, rcv.end + 1)) {
      // a TCP that sends more than the window allows: the ACK of it must still pass later
      snd.end = s.end;
      snd.flags |= kWinUnacked;
      return liberal ? kWinAccept : kWinIgnore;
    }
    return liberal ? kWinAccept : kWinSeqOver;
  }
  if (!seq_before(s.sack, rcv.end + 1)) return liberal ? kWinAccept : kWinAckOver;
  // already acknowledged data again, or an overly delayed ACK
  if (!(!rcv.maxwin || seq_after(s.end, snd.end - rcv.maxwin - 1)) ||
      !seq_after(s.sack, rcv.end - max_ack_window(snd) - 1))
    return liberal ? kWinAccept : kWinIgnore;
  if (!syn) win <<= snd.scale;
  uint32_t swin = win + (s.sack - s.ack);
  if (snd.maxwin < swin) snd.maxwin = swin;
  if (seq_after(s.end, snd.end)) {
    snd.end = s.end;
    snd.flags |= kWinUnacked;  // (data or a FIN the other side has not acknowledged)
  }
  if (ack) {
    if (!(snd.flags & kWinMaxAckSet)) {
      snd.maxack = s.ack;
      snd.flags |= kWinMaxAckSet;
    } else if (seq_after(s.ack, snd.maxack)) {
      snd.maxack = s.ack;
    }
  }
  if (rcv.maxwin != 0 && seq_after(s.end, snd.maxend)) rcv.maxwin += s.end - snd.maxend;
  if (seq_after(s.sack + win, rcv.maxend - 1)) rcv.maxend = s.sack + win + (win == 0 ? 1 : 0);
  if (s.ack == rcv.end) rcv.flags &= uint8_t(~kWinUnacked);
  if (s.index == kSegAck) {  // the same ACK segment again: a retransmission
    if (w.last_dir == dir && w.last_seq == s.seq && w.last_ack == s.ack && w.last_end == s.end && w.last_win == s.win) {
      if (w.retrans < 255) ++w.retrans;
    } else {
      w.last_dir = dir;
      w.last_seq = s.seq;
      w.last_ack = s.ack;
      w.last_end = s.end;
      w.last_win = s.win;
      w.retrans = 0;
    }
  }
  return kWinAccept;
}

// conntrack's state transitions (tcp_conntracks[dir][index][state]), the
// states in flowstate.hh's order (NONE .. CLOSE, SYN_SENT2), and two
// verdicts: the segment is invalid (IV), or ignored (IG: it passes and moves
// nothing; the connection may have restarted, and the other side's answer
// will tell).
constexpr uint8_t kCtInvalid = 10, kCtIgnore = 11;
//                NONE SYN_SENT SYN_RECV ESTABLISHED FIN_WAIT CLOSE_WAIT LAST_ACK TIME_WAIT CLOSE SYN_SENT2
//   originator SYN      SS SS IG IG IG IG IG SS SS S2
//              SYN+ACK  IV IV SR IV IV IV IV IV IV SR
//              ACK      ES IV ES ES CW CW TW TW CL IV
//   responder  SYN      IV S2 IV IV IV IV IV SS IV S2
//              SYN+ACK  IV SR IG IG IG IG IG IG IG SR
//              ACK      IV IG SR ES CW CW TW TW CL IG
//   either     FIN      IV IV FW FW LA LA LA TW CL IV
//              RST      IV CL CL CL CL CL CL CL CL CL
// (each row packed below 4 bits a state, NONE in the lowest: immediates,
// not a table in memory)
SHOAL_HD uint8_t tcp_ct_next(uint8_t dir, uint8_t index, uint8_t state) {
  uint64_t row;
  switch (index) {
    case kSegSyn: row = dir ? 0x9a1aaaaa9aull : 0x911bbbbb11ull; break;
    case kSegSynAck: row = dir ? 0x2bbbbbbb2aull : 0x2aaaaaa2aaull; break;
    case kSegFin: row = 0xa8766644aaull; break;
    case kSegAck: row = dir ? 0xb8775532baull : 0xa8775533a3ull; break;
    case kSegRst: row = 0x888888888aull; break;
    default: row = 0xaaaaaaaaaaull; break;  // no SYN, ACK, FIN or RST
  }
  return uint8_t((row >> (4 * state)) & 0xf);
}

// Whether a SYN (no ACK) from direction `dir` on a connection in `state`
// starts a new connection on the tuple: conntrack kills the old one when it
// closed by a FIN (or by a reset from the same side) and the SYN comes in
// TIME_WAIT or CLOSE from the originator, or in TIME_WAIT from the
// responder (who takes the originator's role); otherwise the SYN is
// ignored, and a SYN-ACK answering it takes the tracking up again.
SHOAL_HD bool tcp_ct_reopens(const TcpWindow& w, uint8_t state, uint8_t dir) {
  if (!(state == kTcpTimeWait || (state == kTcpClose && dir == 0))) return false;
  return ((w.seen[0].flags | w.seen[1].flags) & kWinCloseInit) || (w.last_dir == dir && w.last_index == kSegRst);
}

constexpr uint8_t kCtKeep = 0xff;  // tcp_conntrack's `next`: the flag-driven machine decides (a first segment)
// tcp_conntrack's `next` with an invalid verdict: the connection's timeout
// shrinks to UNACK's where it is longer (and at least 120 s)
constexpr uint8_t kCtShrink = 0xfe;

// One segment of a connection in conntrack state `state`, as
// nf_conntrack_tcp_packet takes it: the transition table, the checks of a
// reset, the window. Returns the verdict; when the segment is accepted,
// `next` is the connection's new state (kCtKeep for a connection's first
// segment, whose state the caller's pick-up rules set). The connection's
// state must not move otherwise.
SHOAL_HD int tcp_conntrack(TcpWindow& w, uint8_t state, const TcpSeg& s, uint8_t dir, uint8_t& next) {
  next = state;
  if (!w.started || state == kTcpNone) {
    if (!w.started) tcp_win_start(w, s, dir);
    next = kCtKeep;
    int r = tcp_in_window(w, state, s, dir);
    if (r == kWinAccept) w.last_index = s.index, w.last_dir = dir;
    return r;
  }
  uint8_t to = tcp_ct_next(dir, s.index, state);
  if (s.index == kSegSyn && to == kTcpSynSent && (state == kTcpTimeWait || state == kTcpClose))
    to = kCtIgnore;  // (a reopening SYN is the caller's)
  if (to == kCtInvalid) return kWinBadState;
  if (to == kCtIgnore) {
    if (s.index == kSegSynAck && w.last_index == kSegSyn && w.last_dir != dir && s.ack == w.last_end) {
      // this SYN-ACK answers a SYN ignored before: the endpoints are in step
      // on a new connection, the tracking was not; take it up from the SYN
      TcpWinDir& o = w.seen[w.last_dir];
      o.end = o.maxend = w.last_end;
      o.maxwin = w.last_win ? w.last_win : 1;
      o.scale = w.last_wscale;
      o.flags = uint8_t(w.last_flags & ~(kWinExpChallengeAck | kWinSimOpen));
      TcpWinDir& me = w.seen[dir];
      const uint8_t liberal = uint8_t(me.flags & kWinLiberal);
      me = TcpWinDir{};
      me.flags = liberal;
      state = kTcpSynSent;
      to = kTcpSynRecv;
    } else {
      w.last_index = s.index;
      w.last_dir = dir;
      w.last_seq = s.seq;
      w.last_end = s.end;
      w.last_win = s.win;
      if (s.index == kSegSyn && dir == 0) {  // its options, for the SYN-ACK that may answer it
        TcpWinDir seen{};
        tcp_win_options(s, &seen, nullptr);
        w.last_flags = uint8_t(seen.flags & (kWinScale | kWinSackPerm));
        w.last_wscale = (seen.flags & kWinScale) ? seen.scale : 0;
        // the server may answer with a challenge ACK (RFC 5961), which in
        // LAST_ACK would pass for the ACK of its last FIN
        if (state == kTcpLastAck) w.last_flags |= kWinExpChallengeAck;
      }
      // the server's ACK to a SYN on a connection it still has (a challenge
      // ACK): the reset the client answers it with carries its number
      if (state == kTcpSynSent && s.index == kSegAck && dir == 1) w.last_ack = s.ack;
      return kWinIgnore;
    }
  } else if (to == kTcpTimeWait && state == kTcpLastAck && s.index == kSegAck && w.last_dir != dir &&
             w.last_index == kSegSyn && (w.last_flags & kWinExpChallengeAck)) {
    w.last_flags &= uint8_t(~kWinExpChallengeAck);  // a challenge ACK: it passes and moves nothing
    return kWinIgnore;
  } else if (to == kTcpSynSent2) {
    // "tcp_conntracks table is not smart enough to handle simultaneous
    // open" (conntrack): remembered, whatever the window says
    w.last_flags |= kWinSimOpen;
  } else if (to == kTcpSynRecv && dir == 1 && s.index == kSegAck && (w.last_flags & kWinSimOpen)) {
    to = kTcpEstablished;  // the responder's ACK completes a simultaneous open
  } else if (to == kTcpClose && s.index == kSegRst) {
    bool in_window = state >= kTcpFinWait && state <= kTcpClose;  // a closing connection takes any reset
    const bool established = state == kTcpEstablished && w.assured;
    const TcpWinDir& rcv = w.seen[dir ^ 1];
    bool checked = in_window;  // (conntrack's `break`: on to the window check)
    if (!checked && (rcv.flags & kWinMaxAckSet) && w.last_index != kSegSyn) {
      if (s.seq == 0 && !established) {
        checked = true;
      } else {
        if (seq_before(s.seq, rcv.maxack)) return kWinBadRst;
        if (!established || s.seq == rcv.maxack ||
            (w.last_index == kSegAck && w.last_dir == dir && s.seq == w.last_end))
          checked = true;
        else
          to = state;  // in the window, not where expected: the connection stays
      }
    }
    if (!checked) {
      // a reset answering a SYN or an ACK let through unchecked (a SYN in a
      // connection the other side no longer has; a half-open connection),
      // or the client's reset answering a challenge ACK: not checked
      // against the window (it may acknowledge what the tracking skipped)
      in_window = (((w.seen_reply && w.last_index == kSegSyn) || (!w.assured && w.last_index == kSegAck)) &&
                   s.ack == w.last_end) ||
                  (state == kTcpSynSent && w.last_index == kSegAck && w.last_dir == 1 && s.seq == w.last_ack);
    }
    if (in_window) {
      w.last_index = s.index;
      w.last_dir = dir;
      next = to;
      return kWinAccept;
    }
  }
  int r = tcp_in_window(w, state, s, dir);
  if (r == kWinAccept) {
    w.last_index = s.index;
    w.last_dir = dir;
    next = to;
    if (to == kTcpFinWait && state != kTcpFinWait) w.seen[dir].flags |= kWinCloseInit;  // this side closed first
  } else if ((r == kWinSeqOver || r == kWinAckOver) && w.assured && (s.index == kSegFin || s.index == kSegRst)) {
    // nf_tcp_handle_invalid: a FIN or reset outside the window of an
    // assured connection is remembered as the last segment, or, answering
    // the other side's such FIN or reset, tells that the endpoints have
    // left the connection: its timeout shrinks to UNACK's (the caller's)
    if (w.last_dir != dir && (w.last_index == kSegFin || w.last_index == kSegRst)) {
      next = kCtShrink;
    } else {
      w.last_index = s.index;
      w.last_dir = dir;
    }
  }
  return r;
}

// The timeout class an accepted segment of conntrack index `index` leaves
// its connection in, `state` its new state (nf_conntrack_tcp_packet's
// choice): tcp_max_retrans identical ACK segments give the RETRANS timeout;
// a reset that leaves the connection open the CLOSE one; data or a FIN not
// yet acknowledged either way the UNACK one; a zero window the RETRANS one;
// each only where it is shorter than the state's; and a connection no reply
// has come for yet (picked up midstream) is ESTABLISHED for UNACK's time at
// most. `timeout_ns` by FlowClass.
constexpr uint8_t kTcpMaxRetrans = 3;
SHOAL_HD uint8_t tcp_timeout_class(const TcpWindow& w, uint8_t state, uint8_t index, bool replied,
                                   const uint64_t* timeout_ns) {
  const uint8_t st = tcp_state_class(state);
  uint8_t cls = st;
  if (w.retrans >= kTcpMaxRetrans && timeout_ns[st] > timeout_ns[kClsTcpRetrans])
    cls = kClsTcpRetrans;
  else if (index == kSegRst)
    cls = kClsTcpClose;
  else if (((w.seen[0].flags | w.seen[1].flags) & kWinUnacked) && timeout_ns[st] > timeout_ns[kClsTcpUnack])
    cls = kClsTcpUnack;
  else if (w.last_win == 0 && timeout_ns[st] > timeout_ns[kClsTcpRetrans])
    cls = kClsTcpRetrans;
  if (!replied && state == kTcpEstablished && timeout_ns[cls] > timeout_ns[kClsTcpUnack]) cls = kClsTcpUnack;
  return cls;
}

// One TCP segment of a connection with window tracking, as both flow tables
// take it (FlowTable::track_hashed on the CPU, dev_flow_packet on a device;
// written once). tcp_conn_segment checks it against the connection (t, w):
// `verdict` is tcp_conntrack's (kWinAccept when taken), and an accepted
// segment moves the state (conntrack's `next`, or tcp_track's for a first
// segment). Returns true when a SYN reopens the tuple instead (nothing
// checked): the caller ends the flow, starts a new one (t and w zero) and
// gives it the segment through tcp_conn_first.
SHOAL_HD bool tcp_conn_segment(TcpWindow& w, TcpTrack& t, const TcpSeg& seg, uint8_t tcp_flags, uint8_t dir,
                               bool midstream, bool async, int& verdict, uint8_t& next) {
  next = kCtKeep;
  verdict = kWinAccept;
  if ((tcp_flags & (kTcpSyn | kTcpAck | kTcpRst)) == kTcpSyn && tcp_ct_reopens(w, t.state, dir)) return true;
  verdict = tcp_conntrack(w, t.state, seg, dir, next);
  if (verdict != kWinAccept) return false;
  if (next == kCtKeep) {
    tcp_track(t, tcp_flags, dir, midstream, async);
  } else {
    t.state = next;
    if ((tcp_flags & kTcpFin) && !(tcp_flags & kTcpRst) && !(t.fin & (1u << dir))) {
      if (!t.fin) t.first_fin = dir;
      t.fin = uint8_t(t.fin | (1u << dir));
    }
  }
  return false;
}

// The first segment of a connection a SYN reopened (its originator's):
// tcp_conntrack's verdict (a first segment's: in).
SHOAL_HD int tcp_conn_first(TcpWindow& w, TcpTrack& t, const TcpSeg& seg, uint8_t tcp_flags, bool midstream,
                            bool async) {
  uint8_t next;
  const int v = tcp_conntrack(w, t.state, seg, 0, next);
  tcp_track(t, tcp_flags, 0, midstream, async);
  return v;
}

// After the segment (t.state its connection's new state, `old_state` the
// one before; `replied`: conntrack's SEEN_REPLY before it; `reopen`: it
// opened the flow again; `invalid`: its verdict was; `next` as
// tcp_conn_segment left it; `until`: when the connection would have
// expired before it). `renew` comes in true when the segment was accepted
// and leaves true when it renews the connection's time, with `cls` the
// timeout class (or -1: the state's). Marks conntrack's ASSURED and
// SEEN_REPLY. Returns true when the segment is a reset taken before any
// reply, which ends the connection at once (nf_conntrack_tcp_packet: "If
// only reply is a RST, we can consider ourselves not to have an established
// connection ... delete the conntrack immediately"): the caller removes the
// flow.
SHOAL_HD bool tcp_conn_settle(TcpWindow& w, const TcpTrack& t, uint8_t old_state, uint8_t index, uint8_t dir,
                              bool replied, bool reopen, bool invalid, uint8_t next, uint64_t until, uint64_t now,
                              const uint64_t* timeout_ns, bool& renew, int& cls) {
  bool kill = false;
  if (renew) {
    if (!replied && !reopen && index == kSegSyn && old_state == kTcpSynSent)
      renew = false;  // a SYN again: its timeout is not renewed
    else
      cls = tcp_timeout_class(w, t.state, index, replied, timeout_ns);
    kill = !replied && index == kSegRst;
  }
  // ASSURED: a valid answer to a connection with a reply
  if (renew && replied && !w.assured && (old_state == kTcpSynRecv || old_state == kTcpEstablished) &&
      t.state == kTcpEstablished)
    w.assured = 1;
  // (conntrack marks the reply seen after the segment's tracking, and not
  // for an invalid one; an ignored one counts)
  if (dir == 1 && !invalid) w.seen_reply = 1;
  if (!renew && next == kCtShrink) {
    // an invalid FIN or reset answering the other side's: the endpoints
    // have left; the timeout shrinks to UNACK's from now
    // (nf_tcp_handle_invalid), where at least 120 s and more are left
    const uint64_t left = until > now ? until - now : 0, unack = timeout_ns[kClsTcpUnack];
    if (left >= 120000000000ull && left > unack) renew = true, cls = kClsTcpUnack;
  }
  return kill;
}

}  // namespace shoal::k

#include "shoal/flow/tcp_session.hh"

#include <algorithm>

#include "shoal/ids/rules.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal::flow {

namespace {
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;
constexpr uint32_t kPaws24Days = 24 * 24 * 60 * 60;  // RFC 7323's bound on an idle timestamp
constexpr uint8_t kWscaleMax = 14;

// Sequence-space comparisons (modulo 2^32)
bool gt(uint32_t a, uint32_t b) { return int32_t(a - b) > 0; }
bool ge(uint32_t a, uint32_t b) { return int32_t(a - b) >= 0; }
bool le(uint32_t a, uint32_t b) { return int32_t(a - b) <= 0; }
bool lt(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }

// A receiver that takes timestamps its own way (Suricata's OS policies)
bool zero_ts_ok(Overlap r) {  // a timestamp of 0 is taken
  return r == Overlap::OldLinux || r == Overlap::Windows || r == Overlap::Windows2k3 || r == Overlap::Vista ||
         r == Overlap::Solaris;
}
}  // namespace

TcpSeg TcpSeg::parse(const uint8_t* t, uint32_t l4len, uint32_t payload, uint32_t secs) {
  TcpSeg s;
  s.len = payload;
  s.secs = secs;
  if (l4len < 20) return s;
  s.seq = k::load_be32(t + 4);
  s.ack = k::load_be32(t + 8);
  s.flags = t[13];
  s.win = k::load_be16(t + 14);
  uint32_t hlen = std::min<uint32_t>(uint32_t(t[12] >> 4) * 4, l4len);
  for (uint32_t i = 20; i < hlen;) {
    uint8_t kind = t[i];
    if (kind == 0) break;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= hlen) break;
    uint8_t olen = t[i + 1];
    if (olen < 2 || i + olen > hlen) break;
    const uint8_t* o = t + i;
    if (kind == 8 && olen == 10) {
      s.has_ts = true;
      s.tsval = k::load_be32(o + 2);
      s.tsecr = k::load_be32(o + 6);
    } else if (kind == 3 && olen == 3) {
      s.has_ws = true;
      s.ws = o[2] <= kWscaleMax ? o[2] : 0;  // (Suricata's TCP_GET_WSCALE)
    } else if (kind == 4 && olen == 2) {
      s.sackok = true;
    } else if (kind == 34 && (olen == 2 || (olen >= 6 && olen <= 18 && olen % 2 == 0))) {
      s.tfo = true;
    } else if ((kind == 253 || kind == 254) && olen >= 4 && k::load_be16(o + 2) == 0xf989) {
      s.tfo = true;  // (TFO's experimental option)
    } else if ((kind == 19 && olen == 18) || (kind == 29 && olen >= 4)) {
      s.signed_ = true;
    }
    i += olen;
  }
  return s;
}

// Suricata's StreamTcpPacket: the checks before the state's (keep-alives,
// zero-window probes, window updates, ACKs older than one seen, segments
// wholly acknowledged already), the state's, then the check for a sender
// that goes on after its reset was taken.
uint64_t TcpSession::check(const TcpSeg& s, uint8_t dir, Overlap receiver, const Config& cfg, bool& valid) {
  ev_ = 0;
  taken_ = true;
  cfg_async_ = cfg.async_oneside;
  dir &= 1;
  if (receiver == Overlap::Default || receiver == Overlap::First || receiver == Overlap::Last)
    receiver = Overlap::Bsd;  // (Suricata's default policy)
  seen_[dir] = true;
  if (async_ && seen_[0] && seen_[1]) async_ = false;  // (packets both ways: not one-sided)
  if (!(s.flags & kAck) && s.ack != 0) raise(ids::kStreamPktBrokenAck);
  valid = true;
  if (state_ == kNone) {
    valid = none(s, dir, cfg);
  } else if (state_ != kUnchecked) {
    if (!skip(s, dir)) valid = dispatch(state_, s, dir, receiver, cfg);
    if (valid && !(s.flags & kRst) && side_[dir ^ 1].rst_recv) {  // the reset's sender goes on
      side_[dir ^ 1].rst_recv = false;
      raise(ids::kStreamSuspectedRstInject);
    }
    // a signed reset the receiver may not take does not end the stream
    if ((s.flags & kRst) && s.signed_) taken_ = false;
  }
  taken_ = taken_ && valid;
  return ev_;
}

// Segments the state is not shown (Suricata skips them): true when s is one.
bool TcpSession::skip(const TcpSeg& s, uint8_t dir) {
  Side &snd = side_[dir], &rcv = side_[dir ^ 1];
  const bool plain = !(s.flags & (kSyn | kFin | kRst));
  const bool only_ack = (s.flags & (kAck | kSyn | kFin | kRst)) == kAck;
  const uint32_t win = uint32_t(s.win) << rcv.wscale;  // (as the receiver's stream counts it)
  if (plain && s.len <= 1 && s.ack == rcv.last_ack && s.seq == snd.next_seq - 1) {  // a keep-alive
    snd.keepalive = true;
    return taken_ = false, true;
  }
  if (plain && s.len == 0 && s.win && win == rcv.window && rcv.keepalive && s.ack == rcv.last_ack &&
      s.seq == snd.next_seq) {  // its ACK
    rcv.keepalive = false;
    return taken_ = false, true;
  }
  snd.keepalive = false;
  const bool established = state_ >= kEstablished;
  // the ACK of a zero-window probe
  const bool zwp_ack = established && s.len == 0 && only_ack && zwp_[dir ^ 1] && (uint32_t(s.win) << snd.wscale) == 0 &&
                       rcv.window == 0 && s.seq == snd.next_seq && s.ack == rcv.last_ack;
  zwp_[dir ^ 1] = false;
  if (zwp_ack) return taken_ = false, true;
  const bool fin_ack = (state_ == kTimeWait || state_ == kCloseWait || state_ == kLastAck) && s.flags == kAck &&
                       s.len == 0 && snd.next_seq + 1 == s.seq && s.ack == rcv.next_seq + 1;
  const bool window_update = established && s.len == 0 && plain && s.win && win != rcv.window &&
                             s.ack == rcv.last_ack && s.seq == snd.next_seq;
  if (!fin_ack && !window_update) {
    // a window shrunk by more than the ACK moved it, from a segment past
    // what was seen both ways (Suricata's bug 1238)
    if (state_ >= kEstablished && state_ != kClosed && plain && win < rcv.window) {
      uint32_t diff = rcv.window - win, adiff = s.ack - rcv.last_ack;
      if (diff > s.len && gt(s.ack, rcv.next_seq) && gt(s.seq, snd.next_seq) &&
          ((win > 1024 && diff > adiff + 32) || (win <= 1024 && diff > adiff))) {
        raise(ids::kStreamPktBadWindowUpdate);
        return taken_ = false, true;
      }
    }
    // an ACK older than one already seen (SACK blocks are not weighed: a
    // segment with them counts as outdated too)
    if (established && s.len == 0 && only_ack && s.seq == snd.next_seq && lt(s.ack, rcv.last_ack))
      return taken_ = false, true;
  }
  // data wholly before what its receiver acknowledged: delivered already
  // (Suricata's base_seq, taken as the last ACK: the stream is inspected up
  // to it)
  if (state_ >= kSynRecv && s.len && le(s.seq + s.len, snd.last_ack)) {
    raise(ids::kStreamPktSpuriousRetransmission);
    return taken_ = false, true;
  }
  return false;
}

bool TcpSession::dispatch(State st, const TcpSeg& s, uint8_t dir, Overlap rcv, const Config& cfg) {
  switch (st) {
    case kSynSent: return syn_sent(s, dir, rcv, cfg);
    case kSynRecv: return syn_recv(s, dir, rcv, cfg);
    case kEstablished: return established(s, dir, rcv);
    case kFinWait1: return fin_wait1(s, dir, rcv);
    case kFinWait2: return fin_wait2(s, dir, rcv);
    case kClosing: return closing(s, dir, rcv);
    case kCloseWait: return close_wait(s, dir, rcv);
    case kLastAck: return last_ack(s, dir, rcv);
    case kTimeWait: return time_wait(s, dir, rcv);
    case kClosed: return closed(s, dir, rcv, cfg);
    default: return true;
  }
}

// No session yet: a SYN opens one; a reset, or a FIN that no midstream
// pick-up takes, is not part of any.
bool TcpSession::none(const TcpSeg& s, uint8_t dir, const Config& cfg) {
  if (s.flags & kRst) return raise(ids::kStreamRstButNoSession);
  if (s.flags & kFin) {
    if (!cfg.midstream || s.len == 0) return raise(ids::kStreamFinButNoSession);
    state_ = kUnchecked;
    return true;
  }
  if ((s.flags & (kSyn | kAck)) == kSyn) {
    state_ = kSynSent;
    async_ = cfg.async_oneside;  // (Suricata's: the window checks are relaxed for the session)
    Side& c = side_[0];
    c.isn = s.seq;
    c.next_seq = s.seq + 1;
    if (s.has_ts) {
      c.ts = true;
      c.last_ts = s.tsval;
      c.zero_ts = s.tsval == 0;
      c.last_pkt_ts = s.secs;
    }
    side_[1].window = s.win;
    if (s.has_ws) server_wscale_ = true, side_[1].wscale = s.ws;
    client_sackok_ = s.sackok;
    syn_len_ = s.len;
    if (s.tfo) {
      tfo_ = true;
      c.next_seq += s.len;  // (TFO: the SYN's data is the stream's)
    }
    return true;
  }
  if ((s.flags & kAck) && !(s.flags & kSyn) && cfg.midstream) {
    // an ACK first, picked up midstream (Suricata's): the windows are not
    // checked, scaling taken as the most. Suricata takes its sender for the
    // client; here the flow layer's direction stands (it may have taken the
    // other side for the client, by the ports), so the sender's side is
    // the one the packet's direction names
    state_ = kEstablished;
    midstream_ = midstream_est_ = true;
    mid_dir_ = dir;
    async_ = cfg.async_oneside;
    Side &c = side_[dir], &sv = side_[dir ^ 1];
    c.wscale = sv.wscale = kWscaleMax;
    c.isn = s.seq - 1;
    c.next_seq = s.seq + s.len;
    c.window = uint32_t(s.win) << c.wscale;
    c.last_ack = s.seq;
    c.next_win = c.last_ack + c.window;
    sv.isn = s.ack - 1;
    sv.next_seq = sv.isn + 1;
    sv.last_ack = s.ack;
    sv.next_win = sv.last_ack;
    if (s.has_ts) {
      c.last_ts = s.tsval, sv.last_ts = s.tsecr;
      timestamps_ = true;
      c.last_pkt_ts = s.secs;
      sv.zero_ts = s.tsecr == 0, c.zero_ts = s.tsval == 0;
    }
    return true;
  }
  // a SYN/ACK first: a midstream pick-up (not checked), or nothing
  if (cfg.midstream || ((s.flags & kSyn) && cfg.async_oneside)) state_ = kUnchecked;
  return true;
}

// Suricata's StreamTcpValidateAck: the ACK is within what the receiver of
// stream st can have seen (not past its window, not far behind); not, a
// pkt_invalid_ack event.
bool TcpSession::ack_ok(const Side& st, const TcpSeg& s, uint8_t dir) {
  if (!(s.flags & kAck)) return true;
  if ((gt(s.ack, st.last_ack) && le(s.ack, st.next_win)) || s.ack == st.last_ack) return true;
  if (lt(s.ack, st.last_ack) && !(st.window != 0 && lt(s.ack, st.last_ack - st.window))) return true;
  // (SYN_SENT: the reset answering the SYN acknowledges it)
  if (!lt(s.ack, st.last_ack) && state_ == kSynSent && dir == 1 && (s.flags & kRst) && s.ack == st.isn + 1) return true;
  return raise(ids::kStreamPktInvalidAck);
}

// Suricata's StreamTcpValidateRst: its timestamp, its ACK, and its sequence
// number as the receiver's OS takes it (BSD, Windows...: exactly the next
// one; Linux, Solaris: within the window; HP-UX 11: at or after it).
bool TcpSession::rst_ok(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  const Side& snd = side_[dir];
  if ((s.flags & kAck) && s.ack && !ack_ok(side_[dir ^ 1], s, dir)) return raise(ids::kStreamRstInvalidAck);
  // signed (MD5, TCP-AO): whether its receiver takes it cannot be told; it
  // is taken, and its sender going on after it is a suspected injection
  if (s.signed_) side_[dir ^ 1].rst_recv = true;
  if (async_) return ge(s.seq, snd.next_seq);
  switch (rcv) {
    case Overlap::Hpux11: return ge(s.seq, snd.next_seq);
    case Overlap::OldLinux:
    case Overlap::Linux:
    case Overlap::Solaris: return ge(s.seq + s.len, snd.last_ack) && lt(s.seq, snd.next_seq + snd.window);
    default: return s.seq == snd.next_seq;
  }
}

// A reset in the states after the handshake: taken, it closes the session.
bool TcpSession::reset(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  if (!rst_ok(s, dir, rcv)) return false;
  pstate_ = state_, state_ = kClosed;
  Side &snd = side_[dir], &other = side_[dir ^ 1];
  if ((s.flags & kAck) && ack_ok(other, s, dir)) last_ack_up(other, s.ack);
  last_ack_up(snd, s.seq);
  if (timestamps_) ts_update(s, dir, rcv);
  return true;
}

// Suricata's StreamTcpPacketIsRetransmission: 1 for data the receiver
// acknowledged (wholly or in part), 2 for data in flight; a
// pkt_retransmission event.
int TcpSession::retransmission(const Side& st, const TcpSeg& s) {
  if (s.len == 0) return 0;
  const uint32_t end = s.seq + s.len;
  int r = (lt(s.seq, st.last_ack) && gt(end, st.last_ack)) || le(end, st.last_ack) ? 1 : le(end, st.next_seq) ? 2 : 0;
  if (r) raise(ids::kStreamPktRetransmission);
  return r;
}

bool TcpSession::syn_sent(const TcpSeg& s, uint8_t dir, Overlap rcv, const Config& cfg) {
  Side &c = side_[0], &sv = side_[1];
  const bool synack = (s.flags & (kSyn | kAck)) == (kSyn | kAck);
  if (synack && dir == 1) {
    if (s.ack != c.isn + 1 && s.ack != c.next_seq) {  // the answer to an earlier SYN?
      auto q = std::find_if(queue_.begin(), queue_.end(), [&](const Queued& x) {
        return s.ack == x.seq + 1 || (x.tfo && s.ack == x.seq + 1 + x.len);
      });
      if (q != queue_.end()) apply_syn(*q);
    }
    if (!s.tfo && !tfo_) {
      if (s.ack != c.isn + 1) return raise(ids::kStream3whsSynackWithWrongAck);
    } else {
      if (s.ack == c.isn + 1 && s.ack != c.next_seq) {
        c.next_seq = c.isn;  // the server took the SYN but not its data
        raise(ids::kStream3whsSynackTfoDataIgnored);
      } else if (s.ack != c.next_seq) {
        return raise(ids::kStream3whsSynackWithWrongAck);
      }
      tfo_ = true;
    }
    if (!synsent_ts_ok(s, dir)) {
      // a SYN sent again with another timestamp: the one this answers
      Queued search = from_synack(s, true);
      auto q = std::find_if(queue_.begin(), queue_.end(), [&](const Queued& x) {
        return (x.flags & kQTs) == (search.flags & kQTs) && x.ts == search.ts;
      });
      if (q == queue_.end()) return raise(ids::kStreamPktInvalidTimestamp);
      apply_syn(*q);
    }
    queue_.clear();
    synack_update(from_synack(s, false));
    return true;
  }
  if (synack) {  // to the server: only in a four-way handshake, answering the server's SYN
    if (!four_whs_) return raise(ids::kStream3whsSynackInWrongDirection);
    if (s.ack != sv.isn + 1) return raise(ids::kStream4whsSynackWithWrongAck);
    if (s.seq != c.isn) return raise(ids::kStream4whsSynackWithWrongSyn);
    state_ = kSynRecv;
    c.isn = s.seq;
    c.next_seq = s.seq + 1;
    sv.window = s.win;
    if (s.has_ts && sv.ts) {
      c.last_ts = s.tsval;
      timestamps_ = true;
      c.last_pkt_ts = s.secs;
      if (s.tsval == 0) c.zero_ts = true;
    } else {
      sv.last_ts = c.last_ts = 0;
      sv.zero_ts = false;
    }
    sv.last_ack = s.ack;
    c.last_ack = c.isn + 1;
    sv.wscale = server_wscale_ && s.has_ws ? s.ws : 0;
    c.next_win = c.last_ack + c.window;
    sv.next_win = sv.last_ack + sv.window;
    return true;
  }
  if (!synsent_ts_ok(s, dir)) return raise(ids::kStreamPktInvalidTimestamp);
  if (s.flags & kRst) {
    if (!rst_ok(s, dir, rcv)) return false;
    // the client's reset must answer its own SYN; the server's ends the attempt
    if (dir == 1 || (s.seq == c.isn && s.win == 0 && s.ack == c.isn + 1)) {
      side_[dir ^ 1].rst_recv = true;
      pstate_ = state_, state_ = kClosed;
      queue_.clear();
    }
    taken_ = false;  // (not the stream's: no data yet)
    return true;
  }
  if (s.flags & kFin) return taken_ = false, true;
  if (s.flags & kSyn) {
    if (dir == 1) {  // the server's own SYN: a four-way handshake
      four_whs_ = true;
      sv.isn = s.seq;
      sv.next_seq = s.seq + 1;
      if (s.has_ts) {
        sv.last_ts = s.tsval;
        sv.zero_ts = s.tsval == 0;
        sv.last_pkt_ts = s.secs;
        sv.ts = true;
      }
      sv.window = s.win;
      server_wscale_ = s.has_ws;
      sv.wscale = s.has_ws ? s.ws : 0;
      client_sackok_ = s.sackok;
      return true;
    }
    // the SYN sent again: one with another ISN or other settings keeps the
    // earlier ones queued (up to max_syn_queued: a flood past it; Suricata
    // 8's), the latest wins; the SYN/ACK tells which one the server took
    Queued pkt = from_syn(s), cur = ssn_syn();
    if (!(pkt == cur)) {
      bool known = std::any_of(queue_.begin(), queue_.end(), [&](const Queued& x) {
        return x.seq == cur.seq && (x.flags & kQTs) == (cur.flags & kQTs) && x.ts == cur.ts;
      });
      if (!known) {
        if (queue_.size() >= cfg.max_syn_queued)
          raise(ids::kStream3whsSynFlood);
        else
          queue_.push_back(cur);
      }
    }
    apply_syn(pkt);
    return true;
  }
  if (s.flags & kAck) {
    // the client's ACK with no SYN/ACK seen: one side of the connection only
    if (!cfg.async_oneside) return taken_ = false, true;
    if (s.seq != c.next_seq) return raise(ids::kStream3whsAsyncWrongSeq);
    async_ = true;
    state_ = kEstablished;
    queue_.clear();
    c.window = s.win;
    c.last_ack = s.seq;
    c.next_win = c.last_ack + c.window;
    sv.isn = s.ack - 1;
    sv.next_seq = sv.isn + 1;
    sv.last_ack = sv.next_seq;
    sv.next_win = sv.last_ack;
    if (server_wscale_) c.wscale = kWscaleMax;
    if (s.has_ts && c.ts) {
      timestamps_ = true;
      c.ts = false;
      c.last_pkt_ts = s.secs;
    } else {
      c.last_ts = 0;
      c.zero_ts = false;
    }
  }
  return true;
}

bool TcpSession::syn_recv(const TcpSeg& s, uint8_t dir, Overlap rcv, const Config& cfg) {
  Side &c = side_[0], &sv = side_[1];
  if (s.flags & kRst) {
    if (!rst_ok(s, dir, rcv)) return false;
    // after a right-sequence, wrong-ACK segment these receivers keep the
    // connection: the reset is a stray one to them
    const bool kept = evasion_ && (rcv == Overlap::Linux || rcv == Overlap::OldLinux || rcv == Overlap::Solaris);
    if (!kept) {
      pstate_ = state_, state_ = kClosed;
      if (timestamps_) ts_update(s, dir, rcv);
    }
    return true;
  }
  if (s.flags & kFin) {
    if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
    return fin(s, dir, rcv);
  }
  if ((s.flags & (kSyn | kAck)) == (kSyn | kAck)) {  // the SYN/ACK sent again
    if (dir == 0) return raise(ids::kStream3whsSynackToserverOnSynRecv);
    if (s.ack != c.last_ack) return raise(ids::kStream3whsSynackResendWithDifferentAck);
    if (s.seq != sv.isn) {  // another ISN: queued, the ACK tells which one the client took
      Queued q = from_synack(s, false);
      if (std::find(queue_.begin(), queue_.end(), q) == queue_.end()) {
        if (queue_.size() >= cfg.max_synack_queued) return raise(ids::kStream3whsSynackFlood);
        queue_.push_back(q);
      }
    }
    return true;
  }
  if (s.flags & kSyn) {
    if (dir == 1) return raise(ids::kStream3whsSynToclientOnSynRecv);
    if (s.seq != c.isn) return raise(ids::kStream3whsSynResendDiffSeqOnSynRecv);
    return true;
  }
  if (!(s.flags & kAck)) return taken_ = false, true;
  if (!queue_.empty()) {  // the ACK of a queued SYN/ACK
    auto q = std::find_if(queue_.begin(), queue_.end(),
                          [&](const Queued& x) { return x.seq == s.ack - 1 && x.ack == s.seq; });
    if (q != queue_.end()) synack_update(*q);
  }
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  if (four_whs_ && dir == 1) {  // the four-way handshake's last ACK (from the server)
    if (s.seq != sv.next_seq) return raise(ids::kStream4whsWrongSeq);
    if (!ack_ok(c, s, dir)) return raise(ids::kStream4whsInvalidAck);
    if (timestamps_) ts_update(s, dir, rcv);
    last_ack_up(c, s.ack);
    sv.next_seq += s.len;
    c.window = uint32_t(s.win) << c.wscale;
    c.next_win = c.last_ack + c.window;
    state_ = kEstablished;
    return true;
  }
  bool missed_ack = false;  // the server sends: the client's ACK was not seen
  if (dir == 1 && !tfo_) {
    if (cfg.inline_mode) {  // inline, every packet is seen: an ACK the wrong way is not the handshake's
      if (s.len > 0 && s.ack == c.last_ack && s.seq == sv.next_seq) return raise(ids::kStream3whsAckDataInject);
      return raise(ids::kStream3whsAckInWrongDir);
    }
    missed_ack = true;
  }
  if (s.seq == c.next_seq && s.ack == sv.next_seq) {  // the handshake's ACK
    if (timestamps_) ts_update(s, dir, rcv);
    last_ack_up(sv, s.ack);
    c.next_seq += s.len;
    sv.window = uint32_t(s.win) << sv.wscale;
    sv.next_win = sv.last_ack + sv.window;
  } else if (cfg.async_oneside && s.seq == sv.next_seq) {  // the server's side only
    sv.next_seq += s.len;
    sv.last_ack = s.seq;
    c.window = uint32_t(s.win) << c.wscale;
    c.last_ack = s.ack;
    if (timestamps_) ts_update(s, dir, rcv);
  } else if (s.seq == c.next_seq) {
    // the right sequence with a wrong ACK: the server resets, but Linux and
    // Solaris keep the connection (an evasion)
    evasion_ = true;
    return raise(ids::kStream3whsRightSeqWrongAckEvasion);
  } else if (dir == 1 && !cfg.inline_mode && gt(s.seq, c.next_seq) && gt(s.ack, c.last_ack)) {
    if (timestamps_) ts_update(s, dir, rcv);  // (the server acknowledges data not seen: lost)
    last_ack_up(c, s.ack);
    sv.next_seq = s.seq + s.len;
    c.window = s.win;
    c.next_win = c.last_ack + (uint32_t(s.win) << c.wscale);
    sv.next_win = sv.last_ack + sv.window;
  } else if (gt(s.seq, c.next_seq) && le(s.seq, c.next_win) && s.ack == sv.next_seq) {
    if (timestamps_) ts_update(s, dir, rcv);  // (data after the ACK, the ACK lost)
    c.next_seq = s.seq + s.len;
    last_ack_up(sv, s.ack);
    sv.window = uint32_t(s.win) << sv.wscale;
    sv.next_win = sv.last_ack + sv.window;
  } else if ((missed_ack || tfo_) && s.ack == c.last_ack && s.seq == sv.next_seq) {
    if (ge(s.seq + s.len, sv.next_seq)) sv.next_seq = s.seq + s.len;  // the server's data after its SYN/ACK
    sv.window = uint32_t(s.win) << sv.wscale;
    sv.next_win = sv.last_ack + sv.window;
  } else {
    return raise(ids::kStream3whsWrongSeqWrongAck);
  }
  state_ = kEstablished;
  return true;
}

// Suricata's StreamTcpHandleFin (from SYN_RECV or ESTABLISHED): the FIN's
// ACK, and its place in the window.
bool TcpSession::fin(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  Side &snd = side_[dir], &other = side_[dir ^ 1];
  if (!ack_ok(other, s, dir)) return raise(ids::kStreamFinInvalidAck);
  if (!(ge(s.seq, snd.last_ack) && le(s.seq + s.len, snd.next_win))) return raise(ids::kStreamFinOutOfWindow);
  if (dir == 0 && (s.flags & kSyn)) return raise(ids::kStreamFinSyn);
  state_ = dir == 0 ? kCloseWait : kFinWait1;
  snd.next_seq = s.seq + s.len + (dir == 0 ? 0 : 1);  // (Suricata's, as it counts them)
  other.window = uint32_t(s.win) << other.wscale;
  if (timestamps_) ts_update(s, dir, rcv);
  if (lt(other.next_seq, s.ack)) other.next_seq = s.ack;  // (the other side's data the capture missed)
  if (s.flags & kAck) last_ack_up(other, s.ack);
  return true;
}

bool TcpSession::established(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  Side &c = side_[0], &sv = side_[1];
  if (s.flags & kRst) {
    if (!rst_ok(s, dir, rcv)) return false;
    pstate_ = state_, state_ = kClosed;
    Side &snd = side_[dir], &other = side_[dir ^ 1];
    other.next_seq = s.ack;
    snd.next_seq = s.seq + s.len + (dir == 0 ? 0 : 1);
    snd.window = uint32_t(s.win) << snd.wscale;
    if ((s.flags & kAck) && ack_ok(other, s, dir)) last_ack_up(other, s.ack);
    last_ack_up(snd, s.seq);
    if (timestamps_) ts_update(s, dir, rcv);
    return true;
  }
  if (s.flags & kFin) {
    if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
    return fin(s, dir, rcv);
  }
  if ((s.flags & (kSyn | kAck)) == (kSyn | kAck)) {
    if (dir == 0) return raise(ids::kStreamEstSynackToserver);
    if (s.ack != c.last_ack) return raise(ids::kStreamEstSynackResendWithDifferentAck);
    if (s.seq != sv.isn) return raise(ids::kStreamEstSynackResendWithDiffSeq);
    // the server did not get the handshake's ACK; once it sent an ACK of
    // its own, it had
    if (confirmed_) return raise(ids::kStreamEstSynackResend);
    return taken_ = false, true;
  }
  if (s.flags & kSyn) {
    if (dir == 1) return raise(ids::kStreamEstSynToclient);
    return raise(s.seq != c.isn ? ids::kStreamEstSynResendDiffSeq : ids::kStreamEstSynResend);
  }
  if (!(s.flags & kAck)) return taken_ = false, true;  // (a segment without an ACK: not the stream's)
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  if (dir == 1) confirmed_ = true;
  data(s, dir, rcv);
  return true;
}

// Suricata's HandleEstablishedPacketToServer and ...ToClient: an ACK
// segment's acknowledgement and place in the window. What fails is an
// event, and the stream does not take the segment (but it is no error: an
// inline IPS forwards it).
void TcpSession::data(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  Side &snd = side_[dir], &other = side_[dir ^ 1];
  const uint32_t end = s.seq + s.len;
  if (s.flags & kAck) {
    const bool zwp_data = zwp_[dir ^ 1] && s.ack == other.next_seq + 1;  // (it acknowledges a probe's byte)
    if (!zwp_data && !ack_ok(other, s, dir)) {
      raise(ids::kStreamEstInvalidAck);
      taken_ = false;
      return;
    }
  }
  if (midstream_est_ && dir != mid_dir_) {  // picked up midstream: the other side's first window
    snd.window = uint32_t(s.win) << snd.wscale;
    snd.next_win = snd.last_ack + snd.window;
    midstream_est_ = false;
  }
  if ((s.len == 0 || s.len == 1) && s.seq == snd.next_seq - 1) {
    // a keep-alive
  } else if (!ge(end, snd.last_ack)) {  // entirely before what was acknowledged
    if (async_) {
      if (dir == 1 || gt(s.seq, snd.last_ack)) snd.last_ack = s.seq;
    } else if (midstream_ && dir == mid_dir_ && cfg_async_ && (snd.next_seq == s.seq || snd.last_ack == snd.isn + 1)) {
      if (gt(s.seq, snd.last_ack)) snd.last_ack = s.seq;  // (the other side's SYN and SYN/ACK missed)
      async_ = true;
    } else if (!(gt(snd.last_ack, snd.next_seq) && gt(end, snd.next_seq))) {
      raise(ids::kStreamEstPktBeforeLastAck);
      taken_ = false;
      return;
    }  // (else: acknowledged data the capture missed)
  }
  bool probe = false;
  if (s.len == 1 && s.seq == snd.next_seq && snd.window == 0) {  // a zero-window probe
    probe = true;
    zwp_[dir] = true;
  } else if (ge(end, snd.next_seq)) {
    snd.next_seq = end;
  }
  if (probe) return;
  if (!le(end, snd.next_win) && !async_ && !midstream_) {
    raise(ids::kStreamEstPacketOutOfWindow);
    taken_ = false;
    return;
  }
  other.window = uint32_t(s.win) << other.wscale;
  if (s.flags & kAck) last_ack_up(other, s.ack);
  if (timestamps_) ts_update(s, dir, rcv);
  next_win_up(other);
}

// After a FIN: Suricata's FIN_WAIT1 (the server's FIN came first), CLOSING
// (both FINs, neither acknowledged), FIN_WAIT2, TIME_WAIT; CLOSE_WAIT (the
// client's came first), LAST_ACK. Each takes a reset, a FIN, a SYN (a
// shutdown's resend) or an ACK segment by its rules.
bool TcpSession::fin_wait1(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  Side &c = side_[0], &sv = side_[1];
  if (s.flags & kRst) return reset(s, dir, rcv);
  if (s.flags & kFin) {
    if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
    const bool with_ack = s.flags & kAck;
    Side &snd = side_[dir], &other = side_[dir ^ 1];
    bool retrans = retransmission(snd, s) != 0;
    if (!retrans && dir == 1 && with_ack && sv.next_seq - 1 == s.seq && c.last_ack == s.ack) retrans = true;
    if (!retrans && (lt(s.seq, snd.next_seq - 1) || gt(s.seq, snd.last_ack + snd.window)))
      return raise(ids::kStreamFin1FinWrongSeq);
    if (!ack_ok(other, s, dir)) return raise(ids::kStreamFin1InvalidAck);
    if (!retrans) {
      state_ = with_ack ? kTimeWait : kClosing;
      other.window = uint32_t(s.win) << other.wscale;
    }
    if (timestamps_) ts_update(s, dir, rcv);
    if (retrans && with_ack && dir == 1) return true;  // (Suricata's: the server's FIN/ACK again moves nothing)
    if (lt(other.next_seq - 1, s.ack)) other.next_seq = s.ack;
    if (snd.next_seq - (with_ack && dir == 0 ? 0 : 1) == s.seq) snd.next_seq = s.seq + s.len;
    if (s.flags & kAck) last_ack_up(other, s.ack);
    return true;
  }
  if (s.flags & kSyn) return raise(ids::kStreamShutdownSynResend);
  if (!(s.flags & kAck)) return taken_ = false, true;
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  Side &snd = side_[dir], &other = side_[dir ^ 1];
  const bool retrans = retransmission(snd, s) != 0;
  if (!ack_ok(other, s, dir)) return raise(ids::kStreamFin1InvalidAck);
  if (dir == 0) {
    if (!lt(s.ack, sv.next_seq) && !retrans && s.ack == sv.next_seq) {
      if (le(s.seq + s.len, c.next_win) || async_ || midstream_) {
        if (s.seq == c.next_seq) state_ = kFinWait2;
      } else {
        return raise(ids::kStreamFin1AckWrongSeq);
      }
      sv.window = uint32_t(s.win) << sv.wscale;
    }
  } else if (!retrans) {
    if (le(s.seq + s.len, sv.next_win) || async_ || midstream_) {
      if (s.seq == sv.next_seq - 1) state_ = kFinWait2;
    } else {
      return raise(ids::kStreamFin1AckWrongSeq);
    }
    c.window = uint32_t(s.win) << c.wscale;
  }
  if (timestamps_) ts_update(s, dir, rcv);
  if (lt(other.next_seq - 1, s.ack)) other.next_seq = s.ack;
  if (snd.next_seq - dir == s.seq) snd.next_seq = s.seq + s.len;
  last_ack_up(other, s.ack);
  next_win_up(other);
  return true;
}

bool TcpSession::fin_wait2(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  if (s.flags & kRst) return reset(s, dir, rcv);
  Side &snd = side_[dir], &other = side_[dir ^ 1];
  if (s.flags & kFin) {
    if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
    bool retrans = s.seq == snd.next_seq - 1 && s.ack == other.last_ack;
    if (!retrans) retrans = retransmission(snd, s) != 0;
    if (!retrans && (lt(s.seq, snd.next_seq) || gt(s.seq, snd.last_ack + snd.window)))
      return raise(ids::kStreamFin2FinWrongSeq);
    if (!ack_ok(other, s, dir)) return raise(ids::kStreamFin2InvalidAck);
    if (!retrans) {
      state_ = kTimeWait;
      if (dir == 0 && snd.next_seq == s.seq) snd.next_seq += s.len;
      other.window = uint32_t(s.win) << other.wscale;
    }
    if (timestamps_) ts_update(s, dir, rcv);
    if (lt(other.next_seq, s.ack)) other.next_seq = s.ack;
    if (s.flags & kAck) last_ack_up(other, s.ack);
    return true;
  }
  if (s.flags & kSyn) return raise(ids::kStreamShutdownSynResend);
  if (!(s.flags & kAck)) return taken_ = false, true;
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  const bool retrans = retransmission(snd, s) != 0;
  if (!ack_ok(other, s, dir)) return raise(ids::kStreamFin2InvalidAck);
  if (!retrans) {
    if (!(le(s.seq + s.len, snd.next_win) || async_ || midstream_)) return raise(ids::kStreamFin2AckWrongSeq);
    other.window = uint32_t(s.win) << other.wscale;
  }
  if (timestamps_) ts_update(s, dir, rcv);
  if (snd.next_seq == s.seq) snd.next_seq += s.len;
  last_ack_up(other, s.ack);
  next_win_up(other);
  return true;
}

bool TcpSession::closing(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  if (s.flags & kRst) return reset(s, dir, rcv);
  if (s.flags & kSyn) return raise(ids::kStreamShutdownSynResend);
  if (!(s.flags & kAck)) return taken_ = false, true;
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  Side &snd = side_[dir], &other = side_[dir ^ 1];
  const bool retrans = retransmission(snd, s) != 0;
  if (s.seq != snd.next_seq) return raise(ids::kStreamClosingAckWrongSeq);
  if (!ack_ok(other, s, dir)) return raise(ids::kStreamClosingInvalidAck);
  if (!retrans) {
    state_ = kTimeWait;
    side_[0].window = uint32_t(s.win) << side_[0].wscale;  // (Suricata's, either way)
  }
  if (timestamps_) ts_update(s, dir, rcv);
  if (lt(other.next_seq, s.ack)) other.next_seq = s.ack;
  last_ack_up(other, s.ack);
  return true;
}

bool TcpSession::close_wait(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  if (s.flags & kRst) return reset(s, dir, rcv);
  Side &snd = side_[dir], &other = side_[dir ^ 1];
  if (s.flags & kFin) {
    if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
    const bool retrans = retransmission(snd, s) != 0;
    if (!retrans && (lt(s.seq, snd.next_seq) || gt(s.seq, snd.last_ack + snd.window)))
      return raise(ids::kStreamClosewaitFinOutOfWindow);
    if (!ack_ok(other, s, dir)) return raise(ids::kStreamClosewaitInvalidAck);
    if (!retrans) {
      if (dir == 1) state_ = kLastAck;  // (the server's FIN; the client's again changes nothing)
      other.window = uint32_t(s.win) << other.wscale;
    }
    if (timestamps_) ts_update(s, dir, rcv);
    if (lt(other.next_seq, s.ack)) other.next_seq = s.ack;
    if (s.flags & kAck) last_ack_up(other, s.ack);
    return true;
  }
  if (s.flags & kSyn) return raise(ids::kStreamShutdownSynResend);
  if (!(s.flags & kAck)) return taken_ = false, true;
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  const bool retrans = retransmission(snd, s) != 0;
  if (s.len > 0 && le(s.seq + s.len, snd.last_ack)) return raise(ids::kStreamClosewaitPktBeforeLastAck);
  if (gt(s.seq, snd.last_ack + snd.window)) return raise(ids::kStreamClosewaitAckOutOfWindow);
  if (!ack_ok(other, s, dir)) return raise(ids::kStreamClosewaitInvalidAck);
  if (!retrans) other.window = uint32_t(s.win) << other.wscale;
  if (timestamps_) ts_update(s, dir, rcv);
  if (lt(other.next_seq, s.ack)) other.next_seq = s.ack;
  if (s.seq == snd.next_seq) snd.next_seq += s.len;
  last_ack_up(other, s.ack);
  return true;
}

bool TcpSession::last_ack(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  if (s.flags & kRst) return reset(s, dir, rcv);
  if (s.flags & kFin) return taken_ = false, true;
  if (s.flags & kSyn) return raise(ids::kStreamShutdownSynResend);
  if (!(s.flags & kAck)) return taken_ = false, true;
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  if (dir == 1) return taken_ = false, true;  // (only the client's last ACK is looked at)
  Side &c = side_[0], &sv = side_[1];
  const bool retrans = retransmission(c, s) != 0;
  if (!ack_ok(sv, s, dir)) return raise(ids::kStreamLastackInvalidAck);
  if (!retrans) {
    if (lt(s.seq, c.next_seq)) {
      // (before what was sent: not the last ACK)
    } else if (s.seq != c.next_seq && s.seq != c.next_seq + 1) {
      return raise(ids::kStreamLastackAckWrongSeq);
    } else {
      pstate_ = state_, state_ = kClosed;
    }
    sv.window = uint32_t(s.win) << sv.wscale;
  }
  if (timestamps_) ts_update(s, dir, rcv);
  if (lt(sv.next_seq, s.ack)) sv.next_seq = s.ack;
  last_ack_up(sv, s.ack);
  return true;
}

bool TcpSession::time_wait(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  if (s.flags & kRst) return reset(s, dir, rcv);
  if (s.flags & kFin) return taken_ = false, true;
  if (s.flags & kSyn) return raise(ids::kStreamShutdownSynResend);
  if (!(s.flags & kAck)) return taken_ = false, true;
  if (timestamps_ && !ts_valid(s, dir, rcv)) return raise(ids::kStreamPktInvalidTimestamp);
  Side &snd = side_[dir], &other = side_[dir ^ 1];
  const bool retrans = retransmission(snd, s) != 0;
  if (!retrans) {
    const bool right = dir == 0 ? s.seq == snd.next_seq || s.seq == snd.next_seq + 1
                                : s.seq == snd.next_seq - 1 || s.seq == snd.next_seq;
    if (!right) {
      if (dir == 1 && s.len > 0 && s.seq == snd.last_ack) return taken_ = false, true;  // (a retransmission)
      return raise(ids::kStreamTimewaitAckWrongSeq);
    }
  }
  if (!ack_ok(other, s, dir)) return raise(ids::kStreamTimewaitInvalidAck);
  if (!retrans) {
    pstate_ = state_, state_ = kClosed;
    other.window = uint32_t(s.win) << other.wscale;
  }
  if (timestamps_) ts_update(s, dir, rcv);
  if (lt(other.next_seq, s.ack)) other.next_seq = s.ack;
  last_ack_up(other, s.ack);
  return true;
}

// Closed: a reset is nothing more; a side whose reset the other did not
// send (a reset while the SYN waited) goes on in the state before.
bool TcpSession::closed(const TcpSeg& s, uint8_t dir, Overlap rcv, const Config& cfg) {
  if (s.flags & kRst) return taken_ = false, true;
  if (!side_[dir].rst_recv && side_[dir ^ 1].rst_recv && pstate_ != kClosed) {
    if (!dispatch(pstate_, s, dir, rcv, cfg)) return false;
    if (state_ == kClosed) state_ = pstate_;
    return true;
  }
  return taken_ = false, true;
}

TcpSession::Queued TcpSession::from_syn(const TcpSeg& s) {
  Queued q;
  q.seq = s.seq;
  q.len = s.len;
  q.tfo = s.tfo;
  q.win = s.win;
  q.pkt_ts = s.secs;
  if (s.sackok) q.flags |= kQSack;
  if (s.has_ws) q.flags |= kQWs, q.wscale = s.ws;
  if (s.has_ts) q.flags |= kQTs, q.ts = s.tsval;
  return q;
}

// A SYN/ACK as queued (its own timestamp), or as searched for among the
// queued SYNs (echo: the timestamp it echoes).
TcpSession::Queued TcpSession::from_synack(const TcpSeg& s, bool echo) {
  Queued q = from_syn(s);
  q.len = 0, q.tfo = false;
  if (s.has_ts) q.ts = echo ? s.tsecr : s.tsval;
  if (echo)
    q.seq = 0;
  else
    q.ack = s.ack;
  return q;
}

TcpSession::Queued TcpSession::ssn_syn() const {
  Queued q;
  q.seq = side_[0].isn;
  q.len = syn_len_;
  q.tfo = tfo_;
  q.win = uint16_t(side_[1].window);
  q.pkt_ts = side_[0].last_pkt_ts;
  if (client_sackok_) q.flags |= kQSack;
  if (server_wscale_) q.flags |= kQWs, q.wscale = side_[1].wscale;
  if (side_[0].ts) q.flags |= kQTs, q.ts = side_[0].last_ts;
  return q;
}

void TcpSession::apply_syn(const Queued& q) {
  Side& c = side_[0];
  c.isn = q.seq;
  c.next_seq = q.seq + 1 + (q.tfo ? q.len : 0);
  syn_len_ = q.len;
  tfo_ = q.tfo;
  if (q.flags & kQTs) {
    c.last_pkt_ts = q.pkt_ts;
    c.last_ts = q.ts;
    c.ts = true;
  }
  server_wscale_ = q.flags & kQWs;
  side_[1].wscale = server_wscale_ ? q.wscale : 0;
  side_[1].window = q.win;
  client_sackok_ = q.flags & kQSack;
}

// The session as a SYN/ACK (or a queued one the ACK answers) leaves it.
void TcpSession::synack_update(const Queued& q) {
  Side &c = side_[0], &sv = side_[1];
  state_ = kSynRecv;
  sv.isn = q.seq;
  sv.next_seq = q.seq + 1;
  c.window = q.win;
  if ((q.flags & kQTs) && c.ts) {
    sv.last_ts = q.ts;
    timestamps_ = true;
    sv.last_pkt_ts = q.pkt_ts;
    if (q.ts == 0) sv.zero_ts = true;
  } else {
    c.last_ts = sv.last_ts = 0;
    c.zero_ts = false;
  }
  c.last_ack = q.ack;
  sv.last_ack = sv.isn + 1;
  c.wscale = server_wscale_ && (q.flags & kQWs) ? q.wscale : 0;
  sv.next_win = sv.last_ack + sv.window;
  c.next_win = c.last_ack + c.window;
  four_whs_ = false;
}

// The answer to the SYN must echo the client's timestamp (an evil server's
// reset or FIN with another is not the one the client takes).
bool TcpSession::synsent_ts_ok(const TcpSeg& s, uint8_t dir) const {
  if (dir == 0 || !s.has_ts) return true;
  const Side& r = side_[0];
  if (r.ts) return !(r.last_ts != 0 && s.tsecr != 0 && s.tsecr != r.last_ts);
  return !(r.last_ts == 0 && s.tsecr != 0);
}

bool TcpSession::ts_valid(const TcpSeg& s, uint8_t dir, Overlap rcv) const {
  if (!s.has_ts) return true;
  const Side& snd = side_[dir];
  const uint32_t ts = s.tsval;
  uint32_t last_ts = snd.last_ts;
  bool check = true;
  if (snd.zero_ts) {  // the sender's timestamps started at 0
    if (rcv == Overlap::Linux || rcv == Overlap::Windows2k3) {
      check = false;
    } else if ((rcv == Overlap::OldLinux || rcv == Overlap::Windows || rcv == Overlap::Vista) &&
               snd.next_seq == s.seq) {
      last_ts = ts;
      check = false;
    }
  }
  if (rcv == Overlap::Hpux11 && snd.next_seq != s.seq) check = false;
  if (ts == 0 && !zero_ts_ok(rcv)) return false;
  if (!check) return true;
  // Linux takes a timestamp one behind (its PAWS check is ts + 1 >= last)
  int32_t d = rcv == Overlap::Linux ? int32_t(ts - last_ts + 1) : int32_t(ts - last_ts);
  const uint32_t last_pkt_ts = snd.last_pkt_ts == 0 && midstream_ ? s.secs : snd.last_pkt_ts;
  bool stale = s.secs > last_pkt_ts + kPaws24Days;
  if (d >= 0 && !(snd.last_ts != 0 && stale)) return true;
  return snd.next_seq == s.seq && stale;  // (an idle connection's clock may have moved on)
}

void TcpSession::ts_update(const TcpSeg& s, uint8_t dir, Overlap rcv) {
  if (!s.has_ts) {
    if (rcv == Overlap::Solaris) timestamps_ = false;
    return;
  }
  Side& snd = side_[dir];
  const uint32_t ts = s.tsval;
  bool check = true;
  if (snd.zero_ts) {
    if (rcv == Overlap::Linux || rcv == Overlap::Windows2k3) {
      timestamps_ = false;
      check = false;
    } else if (rcv == Overlap::OldLinux || rcv == Overlap::Windows || rcv == Overlap::Vista) {
      snd.zero_ts = false;
      if (snd.next_seq == s.seq) {
        snd.last_ts = ts;
        check = false;
      }
    }
  }
  if (rcv == Overlap::Hpux11 && snd.next_seq != s.seq) check = false;
  if ((ts == 0 && !zero_ts_ok(rcv)) || !check) return;
  int32_t d = rcv == Overlap::Linux ? int32_t(ts - snd.last_ts + 1) : int32_t(ts - snd.last_ts);
  if (snd.last_pkt_ts == 0 && midstream_) snd.last_pkt_ts = s.secs;
  bool stale = s.secs > snd.last_pkt_ts + kPaws24Days;
  if (d >= 0 && !(snd.last_ts != 0 && stale)) {
    if (snd.next_seq == s.seq) snd.last_ts = ts;  // (RFC 7323: the segment at the left edge)
    snd.last_pkt_ts = s.secs;
  } else if (snd.next_seq == s.seq && stale) {
    snd.last_ts = ts;
    snd.last_pkt_ts = s.secs;
  }
}

}  // namespace shoal::flow

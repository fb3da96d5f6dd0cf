// flow::TcpSession: Suricata's TCP session checks (its stream events), one
// segment at a time against the events and verdicts Suricata's stream
// engine gives them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shoal/flow/tcp_session.hh"
#include "shoal/ids/rules.hh"

using namespace shoal;
using flow::Overlap;
using flow::TcpSeg;
using flow::TcpSession;

namespace {

constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;

TcpSeg seg(uint8_t flags, uint32_t seq, uint32_t ack, uint32_t len = 0, uint16_t win = 65535) {
  TcpSeg s;
  s.flags = flags, s.seq = seq, s.ack = ack, s.len = len, s.win = win;
  s.secs = 1000;
  return s;
}
TcpSeg ts(TcpSeg s, uint32_t val, uint32_t ecr) {
  s.has_ts = true, s.tsval = val, s.tsecr = ecr;
  return s;
}

// One segment through the session: its events' names, whether it failed a
// check (an error), whether the stream takes it.
struct Out {
  std::vector<std::string> events;
  bool valid = true, taken = true;
};
Out feed(TcpSession& t, const TcpSeg& s, uint8_t dir, const TcpSession::Config& cfg = {},
         Overlap rcv = Overlap::Default) {
  Out o;
  uint64_t ev = t.check(s, dir, rcv, cfg, o.valid);
  for (uint8_t e = 0; e < ids::kStreamEventCount; ++e)
    if (ev >> e & 1) o.events.push_back(ids::stream_event_name(e));
  o.taken = t.taken();
  return o;
}
using Names = std::vector<std::string>;

// client isn 100, server isn 500: SYN, SYN/ACK, ACK
void handshake(TcpSession& t, const TcpSession::Config& cfg = {}) {
  EXPECT_TRUE(feed(t, seg(kSyn, 100, 0), 0, cfg).events.empty());
  EXPECT_TRUE(feed(t, seg(kSyn | kAck, 500, 101), 1, cfg).events.empty());
  EXPECT_TRUE(feed(t, seg(kAck, 101, 501), 0, cfg).events.empty());
  EXPECT_EQ(t.state(), TcpSession::kEstablished);
}

}  // namespace

// A clean connection: no event, every segment taken, whatever its timing.
TEST(TcpSession, ACleanConnectionRaisesNothing) {
  TcpSession t;
  TcpSession::Config cfg;
  std::vector<std::pair<TcpSeg, uint8_t>> conv = {
      {ts(seg(kSyn, 100, 0), 10, 0), 0},
      {ts(seg(kSyn | kAck, 500, 101), 70, 10), 1},
      {ts(seg(kAck, 101, 501), 11, 70), 0},
      {ts(seg(kAck, 101, 501, 200), 11, 70), 0},     // data
      {ts(seg(kAck, 501, 301, 1000), 71, 11), 1},    // the reply
      {ts(seg(kAck, 301, 1501), 12, 71), 0},         // its ACK
      {ts(seg(kAck, 301, 1501, 1), 12, 71), 0},      // ...
      {ts(seg(kAck, 301, 1501, 0), 13, 71), 0},      // a keep-alive (seq one back)
      {ts(seg(kFin | kAck, 302, 1501), 14, 72), 0},  // the client closes
      {ts(seg(kFin | kAck, 1501, 303), 73, 14), 1},  // the server too
      {ts(seg(kAck, 303, 1502), 15, 73), 0},
  };
  for (size_t i = 0; i < conv.size(); ++i) {
    Out o = feed(t, conv[i].first, conv[i].second, cfg);
    EXPECT_TRUE(o.events.empty()) << "segment " << i << ": " << o.events.front();
    EXPECT_TRUE(o.valid) << i;
  }
  EXPECT_EQ(t.state(), TcpSession::kClosed) << "CLOSE_WAIT, LAST_ACK, then the last ACK";
}

// SYN_SENT: the SYN/ACK must come from the server and acknowledge the SYN.
TEST(TcpSession, TheSynAckMustAnswerTheSyn) {
  TcpSession a;
  feed(a, seg(kSyn, 100, 0), 0);
  Out o = feed(a, seg(kSyn | kAck, 500, 101), 0);  // from the client
  EXPECT_EQ(o.events, Names{"3whs_synack_in_wrong_direction"});
  EXPECT_FALSE(o.valid);
  o = feed(a, seg(kSyn | kAck, 500, 777), 1);
  EXPECT_EQ(o.events, Names{"3whs_synack_with_wrong_ack"});
  EXPECT_FALSE(o.valid);
  EXPECT_EQ(a.state(), TcpSession::kSynSent);
  EXPECT_TRUE(feed(a, seg(kSyn | kAck, 500, 101), 1).events.empty());
  EXPECT_EQ(a.state(), TcpSession::kSynRecv);

  // async-oneside: the client's ACK after its SYN, the SYN/ACK unseen
  TcpSession::Config async;
  async.async_oneside = true;
  TcpSession b;
  feed(b, seg(kSyn, 100, 0), 0, async);
  EXPECT_EQ(feed(b, seg(kAck, 150, 501), 0, async).events, Names{"3whs_async_wrong_seq"});
  EXPECT_TRUE(feed(b, seg(kAck, 101, 501), 0, async).events.empty());
  EXPECT_EQ(b.state(), TcpSession::kEstablished);
}

// A SYN sent again with another ISN: the earlier ones are queued (10 by
// default), one more is a flood; the SYN/ACK answering a queued one makes
// the session take that ISN (Suricata 8's).
TEST(TcpSession, SynsSentAgainAreQueuedAndAFloodIsAnEvent) {
  TcpSession t;
  feed(t, seg(kSyn, 1000, 0), 0);
  int floods = 0;
  for (uint32_t i = 1; i <= 14; ++i) {
    Out o = feed(t, seg(kSyn, 1000 + i * 100, 0), 0);
    EXPECT_TRUE(o.valid);
    floods += !o.events.empty();
    if (!o.events.empty()) {
      EXPECT_EQ(o.events, Names{"3whs_syn_flood"});
    }
  }
  EXPECT_EQ(floods, 4) << "10 queued, the 11th to 14th past the bound";
  EXPECT_EQ(t.client_isn(), 2400u) << "the latest SYN's";
  EXPECT_TRUE(feed(t, seg(kSyn | kAck, 9000, 1301), 1).events.empty()) << "the answer to a queued SYN";
  EXPECT_EQ(t.client_isn(), 1300u);
  EXPECT_TRUE(feed(t, seg(kAck, 1301, 9001), 0).events.empty());
  EXPECT_EQ(t.state(), TcpSession::kEstablished);

  // the same SYN again (a retransmission) is no new attempt
  TcpSession u;
  feed(u, seg(kSyn, 1000, 0), 0);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(feed(u, seg(kSyn, 1000, 0), 0).events.empty());
}

// SYN_RECV: resends the wrong way or with other numbers; the ACK that
// completes the handshake, and the one that only looks like it.
TEST(TcpSession, TheHandshakesLastStepIsChecked) {
  auto recv = [] {
    TcpSession t;
    feed(t, seg(kSyn, 100, 0), 0);
    feed(t, seg(kSyn | kAck, 500, 101), 1);
    return t;
  };
  TcpSession t = recv();
  EXPECT_EQ(feed(t, seg(kSyn | kAck, 500, 101), 0).events, Names{"3whs_synack_toserver_on_syn_recv"});
  EXPECT_EQ(feed(t, seg(kSyn | kAck, 500, 102), 1).events, Names{"3whs_synack_resend_with_different_ack"});
  EXPECT_EQ(feed(t, seg(kSyn, 500, 0), 1).events, Names{"3whs_syn_toclient_on_syn_recv"});
  EXPECT_EQ(feed(t, seg(kSyn, 99, 0), 0).events, Names{"3whs_syn_resend_diff_seq_on_syn_recv"});
  Out same = feed(t, seg(kSyn, 100, 0), 0);
  EXPECT_TRUE(same.events.empty() && same.valid);
  // the right sequence with a wrong acknowledgement: an evasion attempt
  Out ev = feed(t, seg(kAck, 101, 999, 10), 0);
  EXPECT_EQ(ev.events, Names{"3whs_right_seq_wrong_ack_evasion"});
  EXPECT_FALSE(ev.taken);
  EXPECT_EQ(feed(t, seg(kAck, 5000, 7000), 0).events, Names{"3whs_wrong_seq_wrong_ack"});
  EXPECT_EQ(t.state(), TcpSession::kSynRecv);
  EXPECT_TRUE(feed(t, seg(kAck, 101, 501), 0).events.empty());
  EXPECT_EQ(t.state(), TcpSession::kEstablished);

  // SYN/ACKs with other ISNs are queued (5): the ACK picks one
  TcpSession q = recv();
  for (uint32_t i = 1; i <= 5; ++i) EXPECT_TRUE(feed(q, seg(kSyn | kAck, 500 + i * 1000, 101), 1).events.empty());
  Out flood = feed(q, seg(kSyn | kAck, 9999, 101), 1);
  EXPECT_EQ(flood.events, Names{"3whs_synack_flood"});
  EXPECT_TRUE(feed(q, seg(kAck, 101, 2501), 0).events.empty()) << "the ACK of the second SYN/ACK";
  EXPECT_EQ(q.state(), TcpSession::kEstablished);

  // the server's data when its ACK was missed: taken in IDS mode, an
  // injection inline (every packet is seen there)
  TcpSession ids = recv();
  EXPECT_TRUE(feed(ids, seg(kAck, 501, 101, 50), 1).events.empty());
  EXPECT_EQ(ids.state(), TcpSession::kEstablished);
  TcpSession::Config inl;
  inl.inline_mode = true;
  TcpSession ips = recv();
  EXPECT_EQ(feed(ips, seg(kAck, 501, 101, 50), 1, inl).events, Names{"3whs_ack_data_inject"});
  EXPECT_EQ(feed(ips, seg(kAck, 501, 101, 0), 1, inl).events, Names{"3whs_ack_in_wrong_dir"});
}

// Both sides send a SYN: the client's SYN/ACK must answer the server's SYN
// and repeat its own ISN; the server's ACK must follow its SYN.
TEST(TcpSession, AFourWayHandshake) {
  auto start = [] {
    TcpSession t;
    feed(t, seg(kSyn, 100, 0), 0);
    EXPECT_TRUE(feed(t, seg(kSyn, 500, 0), 1).events.empty());
    return t;
  };
  TcpSession a = start();
  EXPECT_EQ(feed(a, seg(kSyn | kAck, 100, 502), 0).events, Names{"4whs_synack_with_wrong_ack"});
  EXPECT_EQ(feed(a, seg(kSyn | kAck, 101, 501), 0).events, Names{"4whs_synack_with_wrong_syn"});
  EXPECT_TRUE(feed(a, seg(kSyn | kAck, 100, 501), 0).events.empty());
  EXPECT_EQ(a.state(), TcpSession::kSynRecv);
  EXPECT_EQ(feed(a, seg(kAck, 999, 101), 1).events, Names{"4whs_wrong_seq"});
  EXPECT_TRUE(feed(a, seg(kAck, 501, 101), 1).events.empty());
  EXPECT_EQ(a.state(), TcpSession::kEstablished);
}

// An established connection: SYNs and SYN/ACKs again, acknowledgements of
// what was never sent, data outside the window or already acknowledged.
TEST(TcpSession, AnEstablishedConnectionsSegmentsAreChecked) {
  TcpSession t;
  handshake(t);
  EXPECT_EQ(feed(t, seg(kSyn, 100, 0), 0).events, Names{"est_syn_resend"});
  EXPECT_EQ(feed(t, seg(kSyn, 42, 0), 0).events, Names{"est_syn_resend_diff_seq"});
  EXPECT_EQ(feed(t, seg(kSyn, 500, 0), 1).events, Names{"est_syn_toclient"});
  EXPECT_EQ(feed(t, seg(kSyn | kAck, 500, 101), 0).events, Names{"est_synack_toserver"});
  EXPECT_EQ(feed(t, seg(kSyn | kAck, 500, 99), 1).events, Names{"est_synack_resend_with_different_ack"});
  EXPECT_EQ(feed(t, seg(kSyn | kAck, 501, 101), 1).events, Names{"est_synack_resend_with_diff_seq"});
  Out resend = feed(t, seg(kSyn | kAck, 500, 101), 1);  // the server missed the ACK: no event yet
  EXPECT_TRUE(resend.events.empty() && resend.valid && !resend.taken);
  EXPECT_TRUE(feed(t, seg(kAck, 501, 101, 10), 1).events.empty());  // the server's data: the handshake confirmed
  EXPECT_EQ(feed(t, seg(kSyn | kAck, 500, 101), 1).events, Names{"est_synack_resend"});

  // an ACK of server data never sent (past its window)
  Out inv = feed(t, seg(kAck, 101, 501 + 10 + 70000), 0);
  EXPECT_EQ(inv.events, (Names{"est_invalid_ack", "pkt_invalid_ack"}));
  EXPECT_TRUE(inv.valid) << "an event, no error: an inline IPS forwards it";
  EXPECT_FALSE(inv.taken);
  // data past the server's window
  Out oow = feed(t, seg(kAck, 101 + 65535, 511, 100), 0);
  EXPECT_EQ(oow.events, Names{"est_packet_out_of_window"});
  EXPECT_FALSE(oow.taken);
  // client data, acknowledged; then a copy of it
  EXPECT_TRUE(feed(t, seg(kAck, 101, 511, 1000), 0).events.empty());
  EXPECT_TRUE(feed(t, seg(kAck, 511, 1101), 1).events.empty());
  Out again = feed(t, seg(kAck, 101, 511, 1000), 0);  // (a retransmission of what was acknowledged)
  EXPECT_EQ(again.events, Names{"pkt_spurious_retransmission"});
  EXPECT_TRUE(again.valid && !again.taken);
  EXPECT_TRUE(feed(t, seg(kAck, 1101, 511, 100), 0).events.empty());
  EXPECT_TRUE(feed(t, seg(kAck, 511, 1201), 1).events.empty());
  EXPECT_EQ(feed(t, seg(kAck, 150, 511), 0).events, Names{"est_pkt_before_last_ack"});
  // a segment without an ACK is not the stream's
  Out noack = feed(t, seg(0x08, 1201, 0, 10), 0);
  EXPECT_TRUE(noack.events.empty() && !noack.taken);
}

// Timestamps (RFC 7323): a segment whose timestamp is older than the last
// one its sender sent is not taken (PAWS), nor a 0 one (BSD); Linux takes
// one a tick back; Windows 2003 does not check a sender that began at 0;
// after 24 days idle, any.
TEST(TcpSession, StaleTimestampsAreRejected) {
  auto start = [] {
    TcpSession t;
    feed(t, ts(seg(kSyn, 100, 0), 1000, 0), 0);
    feed(t, ts(seg(kSyn | kAck, 500, 101), 7000, 1000), 1);
    feed(t, ts(seg(kAck, 101, 501), 1001, 7000), 0);
    return t;
  };
  TcpSession t = start();
  Out old = feed(t, ts(seg(kAck, 101, 501, 10), 900, 7000), 0);
  EXPECT_EQ(old.events, Names{"pkt_invalid_timestamp"});
  EXPECT_FALSE(old.valid);
  EXPECT_FALSE(old.taken);
  // a reset with a stale timestamp does not end the connection
  Out rst = feed(t, ts(seg(kRst | kAck, 501, 101), 6000, 1001), 1);
  EXPECT_EQ(rst.events, Names{"pkt_invalid_timestamp"});
  EXPECT_EQ(t.state(), TcpSession::kEstablished);
  EXPECT_EQ(feed(t, ts(seg(kAck, 101, 501, 10), 0, 7000), 0).events, Names{"pkt_invalid_timestamp"});
  EXPECT_TRUE(feed(t, ts(seg(kAck, 101, 501, 10), 1001, 7000), 0).events.empty());

  TcpSession lx = start();  // a Linux receiver: one tick back is fine, two are not
  EXPECT_TRUE(feed(lx, ts(seg(kAck, 501, 101, 10), 6999, 1001), 1, {}, Overlap::Linux).events.empty());
  EXPECT_FALSE(feed(lx, ts(seg(kAck, 511, 101, 10), 6998, 1001), 1, {}, Overlap::Linux).valid);
  for (Overlap rcv : {Overlap::Bsd, Overlap::Windows2k3}) {  // a client whose timestamps began at 0
    TcpSession z;
    feed(z, ts(seg(kSyn, 100, 0), 0, 0), 0);
    feed(z, ts(seg(kSyn | kAck, 500, 101), 7000, 0), 1);
    feed(z, ts(seg(kAck, 101, 501), 0, 7000), 0, {}, rcv);
    EXPECT_EQ(feed(z, ts(seg(kAck, 101, 501, 10), 0, 7000), 0, {}, rcv).valid, rcv == Overlap::Windows2k3);
  }

  TcpSession idle = start();  // 25 days later, at the next sequence number
  TcpSeg late = ts(seg(kAck, 101, 501, 10), 5, 7000);
  late.secs += 25 * 86400;
  EXPECT_TRUE(feed(idle, late, 0).valid);

  // the server's answer to the SYN must echo the client's timestamp: an
  // evil reset with another is not the one the client takes
  TcpSession ev;
  feed(ev, ts(seg(kSyn, 100, 0), 1000, 0), 0);
  Out evil = feed(ev, ts(seg(kRst | kAck, 0, 101), 100, 100), 1);
  EXPECT_EQ(evil.events, Names{"pkt_invalid_timestamp"});
  EXPECT_EQ(ev.state(), TcpSession::kSynSent);
  EXPECT_TRUE(feed(ev, ts(seg(kSyn | kAck, 500, 101), 50, 1000), 1).events.empty());
}

// A FIN must acknowledge what was sent and lie within the window; a FIN
// with a SYN is no FIN; a SYN after one is a shutdown's resend.
TEST(TcpSession, FinsAndResetsAreChecked) {
  TcpSession a;
  handshake(a);
  Out fin = feed(a, seg(kFin | kAck, 101, 501 + 70000), 0);
  EXPECT_EQ(fin.events, (Names{"pkt_invalid_ack", "fin_invalid_ack"}));
  EXPECT_FALSE(fin.valid);
  EXPECT_EQ(feed(a, seg(kFin | kAck, 101 + 70000, 501), 0).events, Names{"fin_out_of_window"});
  EXPECT_EQ(feed(a, seg(kFin | kSyn | kAck, 101, 501), 0).events, Names{"fin_syn"});
  EXPECT_TRUE(feed(a, seg(kFin | kAck, 101, 501), 0).events.empty());
  EXPECT_EQ(a.state(), TcpSession::kCloseWait);
  EXPECT_EQ(feed(a, seg(kSyn, 100, 0), 0).events, Names{"shutdown_syn_resend"});

  // a reset is taken at the next sequence number (BSD, the default), or
  // within the window (Linux); its ACK must be one the sender could send
  TcpSession b;
  handshake(b);
  Out off = feed(b, seg(kRst, 120, 0), 0);
  EXPECT_FALSE(off.valid);
  EXPECT_TRUE(off.events.empty());
  EXPECT_EQ(b.state(), TcpSession::kEstablished);
  EXPECT_TRUE(feed(b, seg(kRst, 120, 0), 0, {}, Overlap::Linux).valid);
  TcpSession c;
  handshake(c);
  EXPECT_EQ(feed(c, seg(kRst | kAck, 501, 101 + 70000), 1).events, (Names{"pkt_invalid_ack", "rst_invalid_ack"}));
  EXPECT_TRUE(feed(c, seg(kRst | kAck, 501, 101), 1).valid);
  EXPECT_EQ(c.state(), TcpSession::kClosed);

  // no session: a reset, a FIN without data or midstream pick-up
  TcpSession none;
  EXPECT_EQ(feed(none, seg(kRst, 5, 0), 0).events, Names{"rst_but_no_session"});
  EXPECT_EQ(feed(none, seg(kFin | kAck, 5, 6), 0).events, Names{"fin_but_no_session"});
  TcpSession::Config mid;
  mid.midstream = true;
  EXPECT_TRUE(feed(none, seg(kFin | kAck, 5, 6, 10), 0, mid).events.empty());
  EXPECT_EQ(none.state(), TcpSession::kUnchecked);
}

// A connection picked up midstream (stream.midstream): its first packet's
// sender, whichever direction the flow layer gave it, is the side its
// numbers set up; windows are not checked, ACKs and timestamps are.
TEST(TcpSession, AMidstreamPickupFromEitherSide) {
  TcpSession::Config mid;
  mid.midstream = true;
  for (uint8_t first : {0, 1}) {
    SCOPED_TRACE(int(first));
    const uint8_t other = first ^ 1;
    TcpSession t;
    EXPECT_TRUE(feed(t, ts(seg(kAck, 7000, 3000, 100), 500, 90), first, mid).events.empty());
    EXPECT_EQ(t.state(), TcpSession::kEstablished);
    EXPECT_TRUE(feed(t, ts(seg(kAck, 3000, 7100), 91, 500), other, mid).events.empty()) << "its ACK";
    EXPECT_TRUE(feed(t, ts(seg(kAck, 7100, 3000, 100), 501, 91), first, mid).events.empty());
    EXPECT_EQ(feed(t, ts(seg(kAck, 7200, 3000, 100), 400, 91), first, mid).events, Names{"pkt_invalid_timestamp"});
    Out inv = feed(t, ts(seg(kAck, 3000, 7200 + 2000000000u), 92, 501), other, mid);  // (past even a 2^30 window)
    EXPECT_EQ(inv.events, (Names{"est_invalid_ack", "pkt_invalid_ack"})) << "an ACK of data never sent";
    EXPECT_TRUE(feed(t, ts(seg(kAck, 7200, 3000, 1 << 20), 502, 92), first, mid).events.empty())
        << "(the window is not checked)";
  }
  TcpSession off;  // without pick-up: no session, a reset is none's
  EXPECT_TRUE(feed(off, seg(kAck, 7000, 3000, 100), 0).events.empty());
  EXPECT_EQ(off.state(), TcpSession::kNone);
  EXPECT_EQ(feed(off, seg(kRst, 3000, 0), 1).events, Names{"rst_but_no_session"});
}

// TCP Fast Open: the SYN's data, and a server that took only the SYN.
TEST(TcpSession, FastOpen) {
  TcpSeg syn = seg(kSyn, 100, 0, 20);
  syn.tfo = true;
  TcpSession a;
  feed(a, syn, 0);
  EXPECT_TRUE(feed(a, seg(kSyn | kAck, 500, 121), 1).events.empty()) << "the data acknowledged";
  TcpSession b;
  feed(b, syn, 0);
  EXPECT_EQ(feed(b, seg(kSyn | kAck, 500, 101), 1).events, Names{"3whs_synack_tfo_data_ignored"});
  TcpSession c;
  feed(c, syn, 0);
  EXPECT_EQ(feed(c, seg(kSyn | kAck, 500, 111), 1).events, Names{"3whs_synack_with_wrong_ack"});
}

// The options read: timestamps, window scale (capped as Suricata's), SACK
// permitted, TFO; a malformed option ends the reading, never past the header.
TEST(TcpSession, OptionsAreRead) {
  std::vector<uint8_t> h(40, 0);
  h[12] = 0xa0, h[13] = kSyn, h[14] = 0x12, h[15] = 0x34;
  const uint8_t opts[] = {1, 3, 3, 7, 4, 2, 8, 10, 0, 0, 0, 5, 0, 0, 0, 6, 34, 2, 0, 0};
  std::copy(std::begin(opts), std::end(opts), h.begin() + 20);
  TcpSeg s = TcpSeg::parse(h.data(), 40, 0, 0);
  EXPECT_EQ(s.win, 0x1234);
  EXPECT_TRUE(s.has_ws && s.ws == 7 && s.sackok && s.has_ts && s.tsval == 5 && s.tsecr == 6 && s.tfo);
  h[23] = 15;  // a scale past 14 is taken as none (0)
  EXPECT_EQ(TcpSeg::parse(h.data(), 40, 0, 0).ws, 0);
  h[27] = 40;  // a length past the header
  s = TcpSeg::parse(h.data(), 40, 0, 0);
  EXPECT_FALSE(s.has_ts);
  EXPECT_TRUE(s.sackok);
  h[27] = 10;
  EXPECT_TRUE(TcpSeg::parse(h.data(), 40, 0, 0).has_ts);
  EXPECT_FALSE(TcpSeg::parse(h.data(), 30, 0, 0).has_ts) << "the header cut short";
}

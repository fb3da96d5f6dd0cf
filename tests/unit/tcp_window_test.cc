// TCP window tracking in the flow layer (kernels/tcpwindow.hh, conntrack's
// tcp_in_window): which segments are in their connection's window, which
// are INVALID and move nothing (a blind reset does not close the
// connection), which pass untracked; window scaling, SACK, wrap-around,
// midstream pick-up. The Linux kernel's own verdicts on the same segments
// are checked by tests/netns/conntrack_window.sh.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "flow_helpers.hh"
#include "helpers.hh"
#include "shoal/flow/devtable.hh"
#include "shoal/flow/flowtable.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/flowkey.hh"
#include "shoal/kernels/tcpwindow.hh"

namespace shoal {
namespace {

constexpr uint8_t S = k::kTcpSyn, A = k::kTcpAck, F = k::kTcpFin, R = k::kTcpRst;

struct Seg {
  uint32_t seq = 0, ack = 0;
  uint8_t flags = A;
  uint16_t win = 65535;
  uint16_t payload = 0;
  std::vector<uint8_t> opts;  // TCP options (padded to 4 bytes here)
};

std::vector<uint8_t> wscale(uint8_t s) { return {1, 3, 3, s}; }
std::vector<uint8_t> sack_perm() { return {1, 1, 4, 2}; }
std::vector<uint8_t> sack_block(uint32_t left, uint32_t right) {
  std::vector<uint8_t> o = {1, 1, 5, 10, 0, 0, 0, 0, 0, 0, 0, 0};
  k::store_be32(o.data() + 4, left);
  k::store_be32(o.data() + 8, right);
  return o;
}
std::vector<uint8_t> operator+(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// An IPv4 TCP segment from 10.0.0.1:40000 (dir 0) or 10.0.0.2:80 (dir 1).
std::vector<uint8_t> segment(int dir, const Seg& s) {
  std::vector<uint8_t> opts = s.opts;
  while (opts.size() % 4) opts.push_back(1);
  uint32_t th = 20 + uint32_t(opts.size());
  std::vector<uint8_t> p(20 + th + s.payload, 0);
  p[0] = 0x45;
  k::store_be16(p.data() + 2, uint16_t(p.size()));
  p[8] = 64;
  p[9] = 6;
  k::store_be32(p.data() + 12, dir ? 0x0a000002 : 0x0a000001);
  k::store_be32(p.data() + 16, dir ? 0x0a000001 : 0x0a000002);
  uint8_t* t = p.data() + 20;
  k::store_be16(t, dir ? 80 : 40000);
  k::store_be16(t + 2, dir ? 40000 : 80);
  k::store_be32(t + 4, s.seq);
  k::store_be32(t + 8, s.ack);
  t[12] = uint8_t((th / 4) << 4);
  t[13] = s.flags;
  k::store_be16(t + 14, s.win);
  if (!opts.empty()) std::memcpy(t + 20, opts.data(), opts.size());
  return p;
}

// One connection through a flow table that tracks windows.
struct Conn {
  std::unique_ptr<flow::FlowTable> t = std::make_unique<flow::FlowTable>();
  uint32_t id = 0;
  uint64_t now = 1;
  explicit Conn(bool window = true, bool midstream = true, uint32_t capacity = 16) {
    flow::Config c;
    c.capacity = capacity;
    c.tcp_window = window;
    c.midstream = midstream;
    t->init(c);
  }
  // The packet's facts (kFactInvalid when it is outside its window).
  uint8_t send(int dir, const Seg& s, bool whole_capture = true) {
    auto p = segment(dir, s);
    k::ParsedKey pk;
    k::parse_conn_key(p.data(), uint32_t(p.size()), pk);
    uint32_t len = uint32_t(p.size()), got;
    uint8_t d, fact;
    const uint8_t* ip = p.data();
    if (!whole_capture) len = 20 + 20;  // a capture cut after the TCP header
    t->track_batch(&pk, &len, &now, 1, &got, &d, &fact, &ip);
    ++now;
    EXPECT_NE(got, 0u);
    id = got;
    EXPECT_EQ(d, dir);
    return fact;
  }
  bool invalid(int dir, const Seg& s) { return send(dir, s) & flow::kFactInvalid; }
  uint8_t state() const { return t->flow(id).tcp.state; }
  uint64_t invalids() const {
    const flow::Counters& c = t->counters();
    return c.tcp_seq_over.get() + c.tcp_ack_over.get() + c.tcp_bad_rst.get();
  }
};

// Client ISN 1000, server ISN 5000; both windows 65535, no scaling. After
// it, the client has sent 1001.., the server 5001..
void handshake(Conn& c, const std::vector<uint8_t>& copts = {}, const std::vector<uint8_t>& sopts = {}) {
  EXPECT_FALSE(c.invalid(0, {.seq = 1000, .ack = 0, .flags = S, .opts = copts}));
  EXPECT_FALSE(c.invalid(1, {.seq = 5000, .ack = 1001, .flags = S | A, .opts = sopts}));
  EXPECT_FALSE(c.invalid(0, {.seq = 1001, .ack = 5001}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
}

TEST(TcpWindow, AConversationStaysInItsWindows) {
  Conn c;
  handshake(c);
  uint32_t cs = 1001, ss = 5001;
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE(c.invalid(0, {.seq = cs, .ack = ss, .payload = 1000}));
    cs += 1000;
    EXPECT_FALSE(c.invalid(1, {.seq = ss, .ack = cs, .payload = 1400}));
    ss += 1400;
    EXPECT_FALSE(c.invalid(0, {.seq = cs, .ack = ss}));
  }
  EXPECT_FALSE(c.invalid(0, {.seq = cs, .ack = ss, .flags = F | A}));
  EXPECT_FALSE(c.invalid(1, {.seq = ss, .ack = cs + 1, .flags = F | A}));
  EXPECT_FALSE(c.invalid(0, {.seq = cs + 1, .ack = ss + 1}));
  EXPECT_EQ(c.state(), k::kTcpTimeWait);
  EXPECT_EQ(c.invalids(), 0u);
  EXPECT_EQ(c.t->counters().tcp_ignored.get(), 0u);
}

// RFC 5961's blind reset: a reset whose number is not the one the other
// side acknowledged last. Before it (or beyond the window): INVALID, and the
// connection goes on; inside the window elsewhere: passes, the connection
// stays (the receiver sends a challenge ACK); at the number: closes.
TEST(TcpWindow, OnlyAResetAtTheAcknowledgedNumberClosesTheConnection) {
  Conn c;
  handshake(c);
  EXPECT_FALSE(c.invalid(0, {.seq = 1001, .ack = 5001, .payload = 500}));
  EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 1501}));
  // from the server: the client acknowledged 5001
  EXPECT_TRUE(c.invalid(1, {.seq = 4000, .ack = 0, .flags = R}));  // before it
  EXPECT_EQ(c.t->counters().tcp_bad_rst.get(), 1u);
  EXPECT_TRUE(c.invalid(1, {.seq = 3'000'000'000u, .ack = 0, .flags = R}));  // far away
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_FALSE(c.invalid(1, {.seq = 9000, .ack = 0, .flags = R}));  // inside the window
  EXPECT_EQ(c.state(), k::kTcpEstablished) << "a reset not at the expected number keeps the connection";
  // the connection goes on
  EXPECT_FALSE(c.invalid(0, {.seq = 1501, .ack = 5001, .payload = 100}));
  EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 1601}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 1601, .flags = R | A}));
  EXPECT_EQ(c.state(), k::kTcpClose);
  EXPECT_EQ(c.invalids(), 2u);
}

// A reset right after the same side's data (a server that sends its reply
// and resets, "foo:80 > bar: P 235946583:235946602, R 235946602") is genuine
// even before the other side acknowledged the data.
TEST(TcpWindow, AResetAfterItsSidesDataCloses) {
  Conn c;
  handshake(c);
  EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 1001, .payload = 19}));
  EXPECT_FALSE(c.invalid(1, {.seq = 5020, .ack = 1001, .flags = R | A}));
  EXPECT_EQ(c.state(), k::kTcpClose);
}

TEST(TcpWindow, DataBeyondTheWindowOrAckingUnsentDataIsInvalid) {
  Conn c;
  handshake(c);
  // the server allowed 65535 bytes from 1001 (conntrack lets a sender
  // overshoot by up to a window: it ignores such a segment)
  EXPECT_FALSE(c.invalid(0, {.seq = 1001 + 70000, .ack = 5001, .payload = 100}));
  EXPECT_EQ(c.t->counters().tcp_ignored.get(), 1u);
  EXPECT_TRUE(c.invalid(0, {.seq = 1001 + 200000, .ack = 5001, .payload = 100}));
  EXPECT_EQ(c.t->counters().tcp_seq_over.get(), 1u);
  // the server has sent nothing past 5001: acknowledging 6000 is acknowledging the unseen
  EXPECT_TRUE(c.invalid(0, {.seq = 1001, .ack = 6000, .payload = 100}));
  EXPECT_EQ(c.t->counters().tcp_ack_over.get(), 1u);
  // an invalid FIN does not start the close
  EXPECT_TRUE(c.invalid(1, {.seq = 5001 + 200000, .ack = 1001, .flags = F | A}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_EQ(c.invalids(), 3u);
  EXPECT_FALSE(c.invalid(0, {.seq = 1001, .ack = 5001, .payload = 100}));
}

// Retransmitting data the receiver acknowledged long ago passes (the
// receiver drops it), moves nothing and is no attack: conntrack's IGNORE.
TEST(TcpWindow, RetransmittingAcknowledgedDataPassesUntracked) {
  Conn c;
  handshake(c, {}, {});
  uint32_t cs = 1001;
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(c.invalid(0, {.seq = cs, .ack = 5001, .payload = 1400}));
    cs += 1400;
    EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = cs}));
  }
  EXPECT_FALSE(c.invalid(0, {.seq = 1001, .ack = 5001, .payload = 1400}));  // 140 KB old
  EXPECT_EQ(c.t->counters().tcp_ignored.get(), 1u);
  EXPECT_EQ(c.invalids(), 0u);
  // a reset with that old number is a blind one
  EXPECT_TRUE(c.invalid(0, {.seq = 1001, .ack = 0, .flags = R}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
}

// RFC 7323: a window scale counts when both sides announce it.
TEST(TcpWindow, WindowScalingCountsWhenBothSidesAnnounceIt) {
  for (bool both : {true, false}) {
    Conn c;
    handshake(c, wscale(7) + sack_perm(), both ? wscale(7) + sack_perm() : sack_perm());
    // the server announces 4096 << 7 = 512 KiB
    EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 1001, .win = 4096}));
    EXPECT_EQ(c.invalid(0, {.seq = 1001 + 200000, .ack = 5001, .payload = 1000}), !both)
        << (both ? "a 512 KiB window" : "4096 bytes: no scaling");
  }
}

// With SACK, an ACK may acknowledge (selectively) data beyond its number:
// the block's right edge must not pass what was sent, and data the block
// covers counts as acknowledged.
TEST(TcpWindow, SackBlocksAreCheckedToo) {
  Conn c;
  handshake(c, sack_perm(), sack_perm());
  EXPECT_FALSE(c.invalid(0, {.seq = 1001, .ack = 5001, .payload = 3000}));
  EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 1001, .opts = sack_block(2001, 4001)}));
  EXPECT_TRUE(c.invalid(1, {.seq = 5001, .ack = 1001, .opts = sack_block(2001, 9001)}))
      << "a SACK block past what the client sent";
  EXPECT_EQ(c.t->counters().tcp_ack_over.get(), 1u);
}

TEST(TcpWindow, SequenceNumbersWrapAround) {
  Conn c;
  const uint32_t ci = 0xffffff00u, si = 0xfffff000u;
  EXPECT_FALSE(c.invalid(0, {.seq = ci, .ack = 0, .flags = S}));
  EXPECT_FALSE(c.invalid(1, {.seq = si, .ack = ci + 1, .flags = S | A}));
  uint32_t cs = ci + 1, ss = si + 1;
  for (int i = 0; i < 20; ++i) {  // both numbers pass 2^32
    EXPECT_FALSE(c.invalid(0, {.seq = cs, .ack = ss, .payload = 1000}));
    cs += 1000;
    EXPECT_FALSE(c.invalid(1, {.seq = ss, .ack = cs, .payload = 1000}));
    ss += 1000;
  }
  EXPECT_LT(cs, ci);
  EXPECT_TRUE(c.invalid(1, {.seq = ss - 100000, .ack = 0, .flags = R}));
  EXPECT_TRUE(c.invalid(0, {.seq = cs + 300000, .ack = ss, .payload = 10}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_EQ(c.invalids(), 2u);
}

// A connection picked up in its middle is checked liberally, as conntrack
// does: its history is lost, so data anywhere passes; resets before the
// acknowledged number are still refused.
TEST(TcpWindow, AConnectionPickedUpMidstreamIsCheckedLiberally) {
  Conn c;
  EXPECT_FALSE(c.invalid(0, {.seq = 70000, .ack = 9000, .payload = 100}));
  EXPECT_FALSE(c.invalid(1, {.seq = 9000, .ack = 70100, .payload = 100}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_FALSE(c.invalid(0, {.seq = 70100 + 500000, .ack = 9100, .payload = 100}));
  EXPECT_TRUE(c.invalid(0, {.seq = 60000, .ack = 0, .flags = R}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
}

// A segment the capture cut short is measured by its IP header's length.
TEST(TcpWindow, ACutCaptureKeepsTheSegmentsLength) {
  Conn c;
  handshake(c);
  c.send(0, {.seq = 1001, .ack = 5001, .payload = 1400}, false);
  // the server may acknowledge all 1400 bytes
  EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 2401}));
  EXPECT_EQ(c.invalids(), 0u);
}

// Without window tracking the states follow the flags: a forged reset
// closes the connection (what the check prevents).
TEST(TcpWindow, WithoutTrackingAnyResetCloses) {
  Conn c(false);
  handshake(c);
  EXPECT_FALSE(c.invalid(1, {.seq = 3'000'000'000u, .ack = 0, .flags = R}));
  EXPECT_EQ(c.state(), k::kTcpClose);
}

// A SYN inside a live connection moves nothing; after a reset from the
// other side, a SYN is ignored too (conntrack keeps the connection), and the
// SYN-ACK that answers it takes the tracking up on the new connection, in
// the same flow; after a close by FINs a SYN starts a new flow, whose window
// starts afresh.
TEST(TcpWindow, ASynAfterTheCloseStartsAfresh) {
  Conn c;
  handshake(c);
  EXPECT_FALSE(c.invalid(0, {.seq = 777, .ack = 0, .flags = S}));
  EXPECT_EQ(c.state(), k::kTcpEstablished) << "a SYN inside a live connection moves nothing";
  EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 1001, .flags = R | A}));
  EXPECT_EQ(c.state(), k::kTcpClose);
  EXPECT_FALSE(c.invalid(0, {.seq = 900000, .ack = 0, .flags = S}));
  EXPECT_EQ(c.state(), k::kTcpClose);
  EXPECT_FALSE(c.invalid(1, {.seq = 123, .ack = 900001, .flags = S | A}));
  EXPECT_EQ(c.state(), k::kTcpSynRecv) << "taken up again by the SYN-ACK";
  EXPECT_FALSE(c.invalid(0, {.seq = 900001, .ack = 124, .payload = 10}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_TRUE(c.invalid(0, {.seq = 1001, .ack = 5001, .payload = 10})) << "the old connection's numbers";
  EXPECT_EQ(c.t->counters().reopened.get(), 0u);
  // closed by FINs: a SYN opens a new flow
  EXPECT_FALSE(c.invalid(0, {.seq = 900011, .ack = 124, .flags = F | A}));
  EXPECT_FALSE(c.invalid(1, {.seq = 124, .ack = 900012, .flags = F | A}));
  EXPECT_FALSE(c.invalid(0, {.seq = 900012, .ack = 125}));
  EXPECT_EQ(c.state(), k::kTcpTimeWait);
  EXPECT_FALSE(c.invalid(0, {.seq = 50, .ack = 0, .flags = S}));
  EXPECT_EQ(c.t->counters().reopened.get(), 1u);
  EXPECT_EQ(c.state(), k::kTcpSynSent);
  EXPECT_FALSE(c.invalid(1, {.seq = 7000, .ack = 51, .flags = S | A}));
  EXPECT_FALSE(c.invalid(0, {.seq = 51, .ack = 7001}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_EQ(c.invalids(), 1u);
}

// conntrack's table: segments a state does not allow are invalid and move
// nothing (a FIN or the client's ACK before the SYN-ACK, a SYN from the
// server on an established connection).
TEST(TcpWindow, SegmentsTheStateDoesNotAllowAreInvalid) {
  Conn c;
  EXPECT_FALSE(c.invalid(0, {.seq = 1000, .ack = 0, .flags = S}));
  EXPECT_TRUE(c.invalid(0, {.seq = 1001, .ack = 5001, .flags = F | A}));
  EXPECT_TRUE(c.invalid(0, {.seq = 1001, .ack = 5001}));
  EXPECT_EQ(c.state(), k::kTcpSynSent);
  EXPECT_FALSE(c.invalid(1, {.seq = 5000, .ack = 1001, .flags = S | A}));
  EXPECT_FALSE(c.invalid(0, {.seq = 1001, .ack = 5001}));
  EXPECT_TRUE(c.invalid(1, {.seq = 5001, .ack = 0, .flags = S}));
  EXPECT_TRUE(c.invalid(0, {.seq = 1001, .ack = 5001, .flags = S | A}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_EQ(c.t->counters().tcp_bad_state.get(), 4u);
}

// Trains (a connection's segments back to back, one direction) are checked
// segment by segment in a batch too: the same verdicts, facts, counters and
// states as one segment at a time, on bursts of data with forged and stale
// segments among them.
// conntrack's shorter timeouts for an established connection, on a
// simulated clock: data not yet acknowledged (UNACK), the same ACK segment
// again and again (RETRANS), a zero window (RETRANS), a reset inside the
// window that leaves it open (CLOSE's); acknowledged, it is back to
// ESTABLISHED's. A segment conntrack does not accept renews nothing. (The
// kernel's own timeouts on the same cases: tests/netns/conntrack_timeout.sh.)
TEST(TcpWindow, ConntracksShorterTimeoutsFollowTheWindow) {
  const uint64_t sec = 1'000'000'000;
  auto cls = [](Conn& c) { return c.t->flow(c.id).cls; };
  Conn c;
  handshake(c);
  EXPECT_EQ(cls(c), k::kClsTcpEstablished);
  c.send(0, {.seq = 1001, .ack = 5001, .payload = 500});
  EXPECT_EQ(cls(c), k::kClsTcpUnack);
  // it expires at UNACK's timeout (300 s), not ESTABLISHED's
  const uint64_t last = c.t->flow(c.id).last_ns;
  c.t->expire(last + 300 * sec - 1);
  EXPECT_EQ(c.t->size(), 1u);
  c.t->expire(last + 300 * sec);
  EXPECT_EQ(c.t->size(), 0u);

  Conn d;
  handshake(d);
  d.send(0, {.seq = 1001, .ack = 5001, .payload = 500});
  d.send(1, {.seq = 5001, .ack = 1501});  // acknowledged
  EXPECT_EQ(cls(d), k::kClsTcpEstablished);
  for (int i = 0; i < 3; ++i) d.send(1, {.seq = 5001, .ack = 1501});
  EXPECT_EQ(cls(d), k::kClsTcpRetrans);  // the same ACK four times
  d.send(0, {.seq = 1501, .ack = 5001});
  EXPECT_EQ(cls(d), k::kClsTcpEstablished);
  d.send(0, {.seq = 1501, .ack = 5001, .win = 0});
  EXPECT_EQ(cls(d), k::kClsTcpRetrans);  // a zero window
  d.send(0, {.seq = 1501, .ack = 5001, .win = 2000});
  EXPECT_EQ(cls(d), k::kClsTcpEstablished);
  d.send(1, {.seq = 5001 + 4000, .ack = 0, .flags = R});  // in the window, not at the number
  EXPECT_EQ(d.state(), k::kTcpEstablished);
  EXPECT_EQ(cls(d), k::kClsTcpClose);
  d.send(0, {.seq = 1501, .ack = 5001, .win = 2000, .payload = 10});
  EXPECT_EQ(cls(d), k::kClsTcpUnack);
  // beyond the window: invalid, renews nothing
  const flow::Flow& f = d.t->flow(d.id);
  const uint64_t before = f.last_ns;
  const uint8_t was = f.cls;
  EXPECT_TRUE(d.invalid(0, {.seq = 1511 + 300000, .ack = 5001, .payload = 10}));
  EXPECT_EQ(f.last_ns, before);
  EXPECT_EQ(f.cls, was);

  // picked up midstream with no reply yet: ESTABLISHED for UNACK's time at
  // most (and, as conntrack, RETRANS's while no window was seen in place)
  Conn m;
  m.send(0, {.seq = 1000, .ack = 5000});
  EXPECT_EQ(m.state(), k::kTcpEstablished);
  EXPECT_EQ(m.t->flow(m.id).cls, k::kClsTcpRetrans);  // (its liberal check kept no window)
  m.send(1, {.seq = 5000, .ack = 1000});
  EXPECT_EQ(m.t->flow(m.id).cls, k::kClsTcpUnack);  // (the first reply: not yet "replied")
  m.send(0, {.seq = 1000, .ack = 5000});
  EXPECT_EQ(m.t->flow(m.id).cls, k::kClsTcpEstablished);
}

// conntrack removes a connection that a reset ends before any reply came
// (nf_conntrack_tcp_packet: "If only reply is a RST ... delete the conntrack
// immediately"): a SYN the server refuses, a connection picked up midstream
// whose first reply is a reset. Its packet keeps the flow (the entry, state
// and all, stays until the next batch), and the next SYN on the tuple starts
// a new flow, in the same batch too. A reply counts once one of its segments
// was not invalid (conntrack's SEEN_REPLY): an invalid reset is none. (The
// kernel's own table on the same cases: tests/netns/conntrack_timeout.sh.)
TEST(TcpWindow, AResetBeforeAnyReplyRemovesTheConnection) {
  Conn c;
  c.send(0, {.seq = 1000, .ack = 0, .flags = S});
  EXPECT_FALSE(c.invalid(1, {.seq = 0, .ack = 1001, .flags = R | A}));
  EXPECT_EQ(c.t->size(), 0u);
  EXPECT_EQ(c.t->counters().reset.get(), 1u);
  EXPECT_FALSE(c.t->flow(c.id).flags & flow::Flow::kLive);
  EXPECT_EQ(c.state(), k::kTcpClose) << "the entry stays readable for the packet";
  c.send(0, {.seq = 2000, .ack = 0, .flags = S});
  EXPECT_EQ(c.t->size(), 1u);
  EXPECT_EQ(c.state(), k::kTcpSynSent) << "a new connection on the tuple";
  EXPECT_EQ(c.t->counters().inserts.get(), 2u);

  // replied: a reset closes it, for CLOSE's timeout, as before
  Conn e;
  handshake(e);
  EXPECT_FALSE(e.invalid(1, {.seq = 5001, .ack = 1001, .flags = R | A}));
  EXPECT_EQ(e.t->size(), 1u);
  EXPECT_EQ(e.state(), k::kTcpClose);
  EXPECT_EQ(e.t->counters().reset.get(), 0u);

  // midstream: a reply conntrack finds invalid (the server's SYN on an
  // established connection) is none, so a reset after it still ends it
  Conn m;
  m.send(0, {.seq = 1000, .ack = 5000});
  EXPECT_TRUE(m.invalid(1, {.seq = 5000, .ack = 0, .flags = S}));
  EXPECT_EQ(m.t->size(), 1u);
  EXPECT_FALSE(m.invalid(1, {.seq = 5000, .ack = 0, .flags = R}));
  EXPECT_EQ(m.t->size(), 0u);
  EXPECT_EQ(m.t->counters().reset.get(), 1u);
  // after a reply that was not, a reset leaves it CLOSE
  Conn v;
  v.send(0, {.seq = 1000, .ack = 5000});
  EXPECT_FALSE(v.invalid(1, {.seq = 5000, .ack = 1000}));
  EXPECT_FALSE(v.invalid(1, {.seq = 5000, .ack = 0, .flags = R}));
  EXPECT_EQ(v.t->size(), 1u);
  EXPECT_EQ(v.state(), k::kTcpClose);

  // in one batch: SYN, the refusal, the SYN again (a train of one tuple)
  Conn b;
  std::vector<std::vector<uint8_t>> p = {segment(0, {.seq = 1000, .ack = 0, .flags = S}),
                                         segment(1, {.seq = 0, .ack = 1001, .flags = R | A}),
                                         segment(0, {.seq = 3000, .ack = 0, .flags = S})};
  k::ParsedKey keys[3];
  uint32_t lens[3], ids[3];
  uint64_t nows[3] = {1, 2, 3};
  uint8_t dirs[3], facts[3];
  const uint8_t* ips[3];
  for (int i = 0; i < 3; ++i) {
    k::parse_conn_key(p[i].data(), uint32_t(p[i].size()), keys[i]);
    lens[i] = uint32_t(p[i].size());
    ips[i] = p[i].data();
  }
  b.t->track_batch(keys, lens, nows, 3, ids, dirs, facts, ips);
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_NE(ids[2], ids[1]) << "the SYN after the refusal is a new flow";
  EXPECT_NE(ids[2], 0u);
  EXPECT_EQ(b.t->size(), 1u);
  EXPECT_TRUE(b.t->flow(ids[2]).flags & flow::Flow::kLive);
  EXPECT_EQ(b.t->flow(ids[2]).tcp.state, k::kTcpSynSent);
  EXPECT_EQ(b.t->counters().reset.get(), 1u);
}

// RFC 5961's challenge ACKs, as conntrack takes them: a client whose SYN a
// server answers with an ACK (it still has the old connection) resets it
// with the ACK's number and connects again; a server's reset to a SYN let
// through in a live connection closes it (its window is not checked: it
// acknowledges the SYN); in LAST_ACK, the server's ACK after a client's SYN
// is a challenge ACK, not the ACK of its last FIN. (The kernel on the same
// cases: tests/netns/conntrack_timeout.sh.)
TEST(TcpWindow, ChallengeAcksAndResetsToSegmentsLetThrough) {
  Conn c;
  EXPECT_FALSE(c.invalid(0, {.seq = 1000, .ack = 0, .flags = S}));
  EXPECT_FALSE(c.invalid(1, {.seq = 777000, .ack = 424242}));  // ignored: the challenge ACK
  EXPECT_EQ(c.state(), k::kTcpSynSent);
  EXPECT_FALSE(c.invalid(0, {.seq = 424242, .ack = 0, .flags = R}));
  EXPECT_EQ(c.state(), k::kTcpClose);
  EXPECT_EQ(c.t->size(), 1u) << "a reply came (the challenge ACK): CLOSE, not removed";
  EXPECT_FALSE(c.invalid(0, {.seq = 5000, .ack = 0, .flags = S}));
  EXPECT_EQ(c.t->counters().reopened.get(), 1u);
  EXPECT_FALSE(c.invalid(1, {.seq = 9000, .ack = 5001, .flags = S | A}));
  EXPECT_FALSE(c.invalid(0, {.seq = 5001, .ack = 9001}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  // the reset must carry the ACK's number
  Conn c2;
  c2.send(0, {.seq = 1000, .ack = 0, .flags = S});
  c2.send(1, {.seq = 777000, .ack = 424242});
  EXPECT_TRUE(c2.invalid(0, {.seq = 424243, .ack = 0, .flags = R}));
  EXPECT_EQ(c2.state(), k::kTcpSynSent);

  Conn d;
  handshake(d);
  EXPECT_FALSE(d.invalid(0, {.seq = 900000, .ack = 0, .flags = S}));  // ignored
  EXPECT_FALSE(d.invalid(1, {.seq = 0, .ack = 900001, .flags = R | A}));
  EXPECT_EQ(d.state(), k::kTcpClose);
  Conn d2;  // (acknowledging anything else, it is checked, and out of the window)
  handshake(d2);
  d2.send(0, {.seq = 900000, .ack = 0, .flags = S});
  EXPECT_TRUE(d2.invalid(1, {.seq = 0, .ack = 900002, .flags = R | A}));
  EXPECT_EQ(d2.state(), k::kTcpEstablished);

  Conn e;
  handshake(e);
  EXPECT_FALSE(e.invalid(0, {.seq = 1001, .ack = 5001, .flags = F | A}));
  EXPECT_FALSE(e.invalid(1, {.seq = 5001, .ack = 1002, .flags = F | A}));
  EXPECT_EQ(e.state(), k::kTcpLastAck);
  EXPECT_FALSE(e.invalid(0, {.seq = 900000, .ack = 0, .flags = S}));
  EXPECT_FALSE(e.invalid(1, {.seq = 5002, .ack = 1002}));
  EXPECT_EQ(e.state(), k::kTcpLastAck) << "the challenge ACK moves nothing";
  EXPECT_FALSE(e.invalid(0, {.seq = 1002, .ack = 5002}));
  EXPECT_EQ(e.state(), k::kTcpTimeWait) << "the client's ACK of the FIN";
}

// conntrack's nf_tcp_handle_invalid: a FIN or reset outside the window of
// an assured connection is invalid but remembered as its last segment; the
// other side's answering one says the endpoints have left the connection,
// whose timeout then shrinks to UNACK's, from now.
TEST(TcpWindow, OutOfWindowFinsAndResetsShrinkAnAssuredConnectionsTimeout) {
  Conn c;
  handshake(c);
  EXPECT_TRUE(c.invalid(0, {.seq = 1001 + 300000, .ack = 5001, .flags = F | A}));
  EXPECT_EQ(c.t->tcp_window(c.id)->last_index, k::kSegFin);
  const flow::Flow& f = c.t->flow(c.id);
  EXPECT_EQ(f.cls, k::kClsTcpEstablished);
  const uint64_t before = f.last_ns;
  EXPECT_TRUE(c.invalid(1, {.seq = 5001 + 300000, .ack = 0, .flags = R}));
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_EQ(f.cls, k::kClsTcpUnack);
  EXPECT_GT(f.last_ns, before);
  // not assured (picked up, no answer yet): nothing remembered
  Conn m;
  m.send(0, {.seq = 1000, .ack = 5000});
  m.send(1, {.seq = 5000, .ack = 1000});
  EXPECT_FALSE(m.t->tcp_window(m.id)->assured);
  m.send(0, {.seq = 1000, .ack = 5000});
  EXPECT_TRUE(m.t->tcp_window(m.id)->assured) << "a valid answer after the reply";
}

// Simultaneous open (conntrack's SYN_SENT2): the responder's SYN to the
// originator's, the SYN-ACKs, and an ACK that completes it from either
// side; checked against the kernel by tests/netns/conntrack_window.sh and
// conntrack_timeout.sh.
TEST(TcpWindow, ASimultaneousOpenGoesThroughSynSent2) {
  Conn c;
  EXPECT_FALSE(c.invalid(0, {.seq = 1000, .flags = S}));
  EXPECT_FALSE(c.invalid(1, {.seq = 5000, .flags = S}));
  EXPECT_EQ(c.state(), k::kTcpSynSent2);
  EXPECT_STREQ(flow::tcp_state_name(c.state()), "SYN_SENT2");
  EXPECT_EQ(c.t->flow(c.id).cls, k::kClsTcpSynSent);      // (SYN_SENT's timeout, as conntrack's two minutes)
  EXPECT_TRUE(c.invalid(0, {.seq = 1001, .ack = 5001}));  // the originator's ACK: not yet
  EXPECT_TRUE(c.invalid(1, {.seq = 5001, .ack = 1001, .flags = F | A}));  // nor a FIN
  EXPECT_FALSE(c.invalid(1, {.seq = 5000, .flags = S}));                  // the SYN again
  EXPECT_EQ(c.state(), k::kTcpSynSent2);
  EXPECT_FALSE(c.invalid(0, {.seq = 1000, .ack = 5001, .flags = S | A}));
  EXPECT_EQ(c.state(), k::kTcpSynRecv);
  EXPECT_FALSE(c.invalid(1, {.seq = 5000, .ack = 1001, .flags = S | A}));  // (ignored)
  EXPECT_EQ(c.state(), k::kTcpSynRecv);
  EXPECT_FALSE(c.invalid(1, {.seq = 5001, .ack = 1001}));  // the responder's ACK completes it
  EXPECT_EQ(c.state(), k::kTcpEstablished);
  EXPECT_FALSE(c.invalid(0, {.seq = 1001, .ack = 5001, .payload = 100}));
  EXPECT_TRUE(c.invalid(0, {.seq = 1101 + 300000, .ack = 5001, .payload = 100}));

  // after an ordinary SYN-ACK the responder's ACK leaves SYN_RECV as it was
  Conn d;
  EXPECT_FALSE(d.invalid(0, {.seq = 1000, .flags = S}));
  EXPECT_FALSE(d.invalid(1, {.seq = 5000, .ack = 1001, .flags = S | A}));
  EXPECT_FALSE(d.invalid(1, {.seq = 5001, .ack = 1001}));
  EXPECT_EQ(d.state(), k::kTcpSynRecv);

  // the client completes it; a reset far from the window in SYN_SENT2 is
  // invalid (not a closing connection's, which any reset ends; its
  // acknowledgement field is not the 0 conntrack would take as answering
  // the SYN)
  Conn e;
  EXPECT_FALSE(e.invalid(0, {.seq = 1000, .flags = S}));
  EXPECT_FALSE(e.invalid(1, {.seq = 5000, .flags = S}));
  EXPECT_TRUE(e.invalid(1, {.seq = 9000000, .ack = 12345, .flags = R}));
  EXPECT_EQ(e.state(), k::kTcpSynSent2);
  EXPECT_FALSE(e.invalid(1, {.seq = 5000, .ack = 1001, .flags = S | A}));
  EXPECT_FALSE(e.invalid(0, {.seq = 1000, .ack = 5001, .flags = S | A}));
  EXPECT_FALSE(e.invalid(0, {.seq = 1001, .ack = 5001}));
  EXPECT_EQ(e.state(), k::kTcpEstablished);
}

TEST(TcpWindow, BatchesAndTrainsGiveTheVerdictsOfOneAtATime) {
  struct Side {
    uint32_t next;
  };
  std::mt19937 rng(17);
  std::vector<std::vector<uint8_t>> pkts;
  constexpr int kConns = 40;
  std::vector<std::array<Side, 2>> conns(kConns);
  std::vector<int> stage(kConns, 0);
  auto seg_of = [&](int c, int dir, const Seg& s) {
    auto p = segment(dir, s);
    k::store_be16(p.data() + 20 + (dir ? 2 : 0), uint16_t(30000 + c));  // the client's port names the connection
    pkts.push_back(std::move(p));
  };
  for (int c = 0; c < kConns; ++c) conns[c] = {Side{uint32_t(rng())}, Side{uint32_t(rng())}};
  while (pkts.size() < 20000) {
    int c = int(rng() % kConns);
    auto& cs = conns[c];
    if (stage[c] == 0) {
      seg_of(c, 0, {.seq = cs[0].next++, .ack = 0, .flags = S});
      seg_of(c, 1, {.seq = cs[1].next++, .ack = cs[0].next, .flags = S | A});
      seg_of(c, 0, {.seq = cs[0].next, .ack = cs[1].next});
      stage[c] = 1;
      continue;
    }
    int dir = int(rng() % 2);
    uint32_t burst = 1 + rng() % 12;
    for (uint32_t b = 0; b < burst; ++b) {
      uint16_t len = uint16_t(rng() % 3 ? 1000 : 0);
      uint32_t seq = cs[dir].next, ack = cs[dir ^ 1].next;
      int odd = int(rng() % 40);
      if (odd == 0) seq += 300000;  // beyond the window
      if (odd == 1) seq -= 200000;  // long acknowledged
      if (odd == 2) ack += 100000;  // acknowledges the unsent
      // a zero window now and then, and the same ACK again and again
      // (conntrack's shorter timeouts)
      uint16_t win = odd == 3 ? 0 : 65535;
      int times = odd == 4 ? 4 : 1;
      for (int t = 0; t < times; ++t) seg_of(c, dir, {.seq = seq, .ack = ack, .win = win, .payload = len});
      if (odd > 2) cs[dir].next += len;
    }
  }
  // per batch: its last packet's flow's state, timeout class and last time
  auto run = [&](uint32_t batch, std::vector<uint8_t>& facts, std::vector<uint64_t>& states) {
    Conn c(true, true, 2 * kConns);
    std::vector<k::ParsedKey> keys(pkts.size());
    std::vector<uint32_t> lens(pkts.size()), ids(pkts.size());
    std::vector<uint64_t> nows(pkts.size());
    std::vector<const uint8_t*> ips(pkts.size());
    std::vector<uint8_t> dirs(pkts.size());
    facts.assign(pkts.size(), 0);
    for (size_t i = 0; i < pkts.size(); ++i) {
      k::parse_conn_key(pkts[i].data(), uint32_t(pkts[i].size()), keys[i]);
      lens[i] = uint32_t(pkts[i].size());
      nows[i] = 1 + i;
      ips[i] = pkts[i].data();
    }
    for (size_t i = 0; i < pkts.size(); i += batch) {
      uint32_t n = uint32_t(std::min<size_t>(batch, pkts.size() - i));
      c.t->track_batch(&keys[i], &lens[i], &nows[i], n, &ids[i], &dirs[i], &facts[i], &ips[i]);
      for (uint32_t j = 0; j < n; ++j) {
        const flow::Flow& f = c.t->flow(ids[i + j]);
        states.push_back(uint64_t(f.tcp.state) | uint64_t(f.cls) << 8 | f.last_ns << 16);
      }
    }
    const flow::Counters& k = c.t->counters();
    return std::vector<uint64_t>{k.tcp_seq_over.get(), k.tcp_ack_over.get(), k.tcp_bad_rst.get(), k.tcp_bad_state.get(),
                                 k.tcp_ignored.get()};
  };
  std::vector<uint8_t> f1, f32;
  std::vector<uint64_t> s1, s32;
  auto c1 = run(1, f1, s1), c32 = run(32, f32, s32);
  EXPECT_EQ(f1, f32);
  EXPECT_EQ(c1, c32);
  EXPECT_GT(c1[0] + c1[1], 500u) << "the workload has invalid segments";
  EXPECT_GT(c1[4], 100u) << "and stale ones";
  // (states read after each batch: compare the last packet of each batch)
  std::set<uint64_t> classes;
  for (size_t i = 31; i < s1.size(); i += 32) {
    EXPECT_EQ(s1[i], s32[i]) << i;
    classes.insert((s1[i] >> 8) & 255);
  }
  EXPECT_TRUE(classes.count(k::kClsTcpUnack) && classes.count(k::kClsTcpRetrans) &&
              classes.count(k::kClsTcpEstablished))
      << "conntrack's shorter timeouts are exercised";
}

// The device flow table with window tracking (host backend here; CUDA under
// bench/gpu) against the CPU table on the same batches: hundreds of
// connections interleaved at rates 15x apart, through handshakes (with and
// without window scaling and SACK), refusals (a reset before any reply ends
// the flow), SYNs sent again, data with segments beyond the window, long
// acknowledged or acknowledging the unsent, zero windows, the same ACK
// again and again, resets at the right number, blind in the window or
// anywhere, SYNs into open connections, FIN closes and reopens on the same
// tuple, midstream pick-ups, sequence numbers that wrap, and timeouts short
// enough that connections expire and come back midstream. After every
// batch: every packet's flow, direction and verdict, every flow's fields
// and window state, and the counters are the CPU table's.
TEST(DeviceFlowTable, ChecksWindowsAsTheCpuTable) {
  std::mt19937 rng(23);
  constexpr int kConns = 300;
  struct Gen {
    uint32_t next[2];
    int stage = 0;  // 0 none, 1 SYN sent, 2 open, 3 and 4 closing (FIN, FIN back)
    int closer = 0;
    bool scaled = false;
  };
  std::vector<Gen> gens(kConns);
  std::vector<std::vector<uint8_t>> frames;
  auto emit = [&](int c, int dir, Seg s) {
    if (gens[c].scaled) s.win = uint16_t(s.win >> 7 ? s.win >> 7 : s.win);  // (scaled: 7 bits)
    auto ip = segment(dir, s);
    k::store_be16(ip.data() + 20 + (dir ? 2 : 0), uint16_t(20000 + c));  // the client's port names the connection
    std::vector<uint8_t> f(14, 0);
    f[12] = 0x08;  // IPv4
    f.insert(f.end(), ip.begin(), ip.end());
    frames.push_back(std::move(f));
  };
  auto isn = [&] { return rng() % 5 == 0 ? 0xffffffffu - rng() % 30000 : uint32_t(rng()); };  // some wrap
  while (frames.size() < 40000) {
    const int c = int(rng() % 4 ? rng() % 20 : rng() % kConns);  // 20 busy connections, 280 slow ones
    Gen& g = gens[c];
    const uint32_t r = rng() % 100;
    if (g.stage == 0) {
      g.next[0] = isn();
      g.next[1] = isn();
      g.scaled = false;
      if (r < 8) {  // picked up midstream
        g.stage = 2;
        continue;
      }
      g.scaled = r % 2;
      emit(c, 0, {.seq = g.next[0], .flags = S, .opts = g.scaled ? wscale(7) + sack_perm() : sack_perm()});
      g.stage = 1;
      continue;
    }
    if (g.stage == 1) {
      if (r < 10) {  // the SYN again
        emit(c, 0, {.seq = g.next[0], .flags = S});
      } else if (r < 16) {  // refused: a reset before any reply
        emit(c, 1, {.seq = 0, .ack = g.next[0] + 1, .flags = R | A});
        g.stage = 0;
      } else {
        ++g.next[0];
        emit(c, 1, {.seq = g.next[1]++, .ack = g.next[0], .flags = S | A, .opts = g.scaled ? wscale(7) : sack_perm()});
        emit(c, 0, {.seq = g.next[0], .ack = g.next[1]});
        g.stage = 2;
      }
      continue;
    }
    if (g.stage == 3) {  // the other side's FIN
      const int d = g.closer ^ 1;
      emit(c, d, {.seq = g.next[d]++, .ack = g.next[g.closer], .flags = F | A});
      g.stage = 4;
      continue;
    }
    if (g.stage == 4) {  // the last ACK: TIME_WAIT, and a SYN later reopens the tuple
      emit(c, g.closer, {.seq = g.next[g.closer], .ack = g.next[g.closer ^ 1]});
      g.stage = 0;
      continue;
    }
    const int dir = int(rng() % 2);
    if (r < 2) {  // a reset at the acknowledged number: closed
      emit(c, dir, {.seq = g.next[dir], .ack = g.next[dir ^ 1], .flags = R | A});
      g.stage = 0;
    } else if (r < 4) {  // a blind reset in the window
      emit(c, dir, {.seq = g.next[dir] + 1000, .flags = R});
    } else if (r < 5) {  // a reset anywhere
      emit(c, dir, {.seq = uint32_t(rng()), .flags = R});
    } else if (r < 6) {  // a SYN into the open connection
      emit(c, 0, {.seq = uint32_t(rng()), .flags = S});
    } else if (r < 9) {  // a FIN starts the close
      g.closer = dir;
      emit(c, dir, {.seq = g.next[dir]++, .ack = g.next[dir ^ 1], .flags = F | A});
      g.stage = 3;
    } else {
      const uint32_t burst = 1 + rng() % 10;
      for (uint32_t b = 0; b < burst; ++b) {
        const uint16_t len = uint16_t(rng() % 3 ? 1000 : 0);
        uint32_t seq = g.next[dir], ack = g.next[dir ^ 1];
        const int odd = int(rng() % 40);
        if (odd == 0) seq += 300000;  // beyond the window
        if (odd == 1) seq -= 200000;  // long acknowledged
        if (odd == 2) ack += 100000;  // acknowledges the unsent
        const uint16_t win = odd == 3 ? 0 : 65535;
        const int times = odd == 4 ? 4 : 1;  // the same ACK again and again
        for (int t = 0; t < times; ++t) emit(c, dir, {.seq = seq, .ack = ack, .win = win, .payload = len});
        if (odd > 2) g.next[dir] += len;
      }
    }
  }
  flow::Config c = test::short_timeouts(4096);
  const uint64_t ms = 1000000;
  c.tcp_window = true;
  c.midstream = true;
  flow::FlowTable cpu;
  cpu.init(c);
  auto d = test::open_test_device();
  ASSERT_TRUE(d);
  std::string err;
  flow::DeviceFlowTable gpu;
  ASSERT_TRUE(gpu.init(d, c, err)) << err;
  const uint64_t ops0 = d->operations();
  std::vector<uint32_t> ids, cpu_ids;
  std::vector<uint8_t> dirs, facts, cpu_dirs, cpu_facts;
  uint64_t compared = 0, windows = 0;
  std::set<uint8_t> classes;
  for (size_t b = 0; b < frames.size();) {
    const uint32_t n = uint32_t(std::min<size_t>(1 + rng() % 600, frames.size() - b));
    std::vector<uint8_t> bf;
    std::vector<uint32_t> bo, bl, lens(n);
    std::vector<uint64_t> nows(n);
    std::vector<k::ParsedKey> keys(n);
    std::vector<const uint8_t*> ips(n);
    for (uint32_t j = 0; j < n; ++j) {
      bo.push_back(uint32_t(bf.size()));
      bl.push_back(uint32_t(frames[b + j].size()));
      bf.insert(bf.end(), frames[b + j].begin(), frames[b + j].end());
      nows[j] = 1000 * ms + (b + j) * ms / 2;  // 0.5 ms a packet: 20 s in all
    }
    for (uint32_t j = 0; j < n; ++j) {
      ips[j] = bf.data() + bo[j] + 14;
      lens[j] = bl[j] - 14;
      k::parse_conn_key(ips[j], lens[j], keys[j]);
    }
    cpu.expire(nows[0]);  // expiry at the batch's first time, as FlowIPManager's
    ASSERT_TRUE(gpu.expire(nows[0], err)) << err;
    cpu_ids.assign(n, 0);
    cpu_dirs.assign(n, 0);
    cpu_facts.assign(n, 0);
    cpu.track_batch(keys.data(), lens.data(), nows.data(), n, cpu_ids.data(), cpu_dirs.data(), cpu_facts.data(),
                    ips.data());
    ASSERT_TRUE(gpu.track(bf.data(), bf.size(), bo.data(), bl.data(), n, ids, dirs, err, nows.data(), &facts)) << err;
    for (uint32_t j = 0; j < n; ++j) {
      ASSERT_EQ(ids[j] != 0, cpu_ids[j] != 0) << "packet " << b + j;
      ASSERT_EQ(dirs[j], cpu_dirs[j]) << "packet " << b + j;
      ASSERT_EQ(facts[j] & flow::kFactInvalid, cpu_facts[j] & flow::kFactInvalid) << "packet " << b + j;
    }
    std::vector<flow::DeviceFlowTable::Entry> got;
    ASSERT_TRUE(gpu.contents(got, err)) << err;
    ASSERT_EQ(got.size(), size_t(cpu.size())) << "packet " << b;
    for (auto& e : got) {
      const uint32_t id = cpu.find(e.key);
      ASSERT_NE(id, 0u) << "packet " << b;
      const flow::Flow& f = cpu.flow(id);
      const std::string at = flow::flow_tuple(f) + " after packet " + std::to_string(b + n - 1);
      ASSERT_EQ(e.orig_dir, f.orig_dir) << at;
      ASSERT_EQ(e.pkts[0], f.pkts[0]) << at;
      ASSERT_EQ(e.pkts[1], f.pkts[1]) << at;
      ASSERT_EQ(e.bytes[0], f.bytes[0]) << at;
      ASSERT_EQ(e.bytes[1], f.bytes[1]) << at;
      ASSERT_EQ(e.first_ns, f.first_ns) << at;
      ASSERT_EQ(e.last_ns, f.last_ns) << at;
      ASSERT_EQ(e.tcp.state, f.tcp.state) << at;
      ASSERT_EQ(e.tcp.fin, f.tcp.fin) << at;
      ASSERT_EQ(e.tcp.first_fin, f.tcp.first_fin) << at;
      ASSERT_EQ(e.cls, f.cls) << at;
      ASSERT_EQ(e.flags, f.flags & ~flow::Flow::kLive) << at;
      ASSERT_EQ(e.tcp_flags[0], f.tcp_flags[0]) << at;
      ASSERT_EQ(e.tcp_flags[1], f.tcp_flags[1]) << at;
      ASSERT_EQ(std::memcmp(&e.win, cpu.tcp_window(id), sizeof e.win), 0) << "window of " << at;
      windows += e.win.started;
      classes.insert(e.cls);
      ++compared;
    }
    const auto& dc = gpu.counters();
    const flow::Counters& cc = cpu.counters();
    ASSERT_EQ(dc.tcp_ignored, cc.tcp_ignored.get()) << "packet " << b;
    ASSERT_EQ(dc.tcp_seq_over, cc.tcp_seq_over.get());
    ASSERT_EQ(dc.tcp_ack_over, cc.tcp_ack_over.get());
    ASSERT_EQ(dc.tcp_bad_rst, cc.tcp_bad_rst.get());
    ASSERT_EQ(dc.tcp_bad_state, cc.tcp_bad_state.get());
    ASSERT_EQ(dc.reset, cc.reset.get());
    ASSERT_EQ(dc.expired, cc.expired.get());
    ASSERT_EQ(dc.reopened, cc.reopened.get());
    ASSERT_EQ(dc.inserts, cc.inserts.get());
    ASSERT_EQ(dc.live, cpu.size());
    b += n;
  }
  EXPECT_GT(d->operations(), ops0);  // the device did the work
  EXPECT_GT(compared, 20000u);
  EXPECT_GT(windows, 10000u);
  // what the traffic exercised
  const flow::Counters& cc = cpu.counters();
  EXPECT_GT(cc.reset.get(), 20u);
  EXPECT_GT(cc.reopened.get(), 20u);
  EXPECT_GT(cc.expired.get(), 100u);
  EXPECT_GT(cc.tcp_seq_over.get() + cc.tcp_ack_over.get(), 300u);
  EXPECT_GT(cc.tcp_bad_rst.get(), 10u);
  EXPECT_GT(cc.tcp_ignored.get(), 50u);
  EXPECT_EQ(cc.evicted.get(), 0u);
  EXPECT_TRUE(classes.count(k::kClsTcpUnack) && classes.count(k::kClsTcpRetrans) &&
              classes.count(k::kClsTcpEstablished) && classes.count(k::kClsTcpTimeWait));
  EXPECT_EQ(gpu.full_packets(), 0u);
}

}  // namespace
}  // namespace shoal

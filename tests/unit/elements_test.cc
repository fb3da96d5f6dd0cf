#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "helpers.hh"
#include "shoal/kernels/bytes.hh"

using namespace shoal;
using shoal::test::finish;
using shoal::test::read_pcap;
using shoal::test::run;
using shoal::test::tmpdir;

TEST(ElementDocs, EveryClassIsDocumented) {
  for (auto* i : Registry::instance().all()) {
    EXPECT_FALSE(i->summary.empty()) << i->name;
    EXPECT_FALSE(i->description.empty()) << i->name;
    EXPECT_FALSE(i->example.empty()) << i->name;
    PortRange in, out;
    EXPECT_TRUE(parse_port_counts(i->ports, in, out)) << i->name;
  }
}

TEST(Counter, AndDiscard) {
  auto r = run("FastUDPFlows(LENGTH 100, LIMIT 1000, FLOWS 10) -> c :: Counter -> d :: Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 1000u);
  EXPECT_EQ(r->n("c.byte_count"), 100000u);
  EXPECT_EQ(r->n("d.count"), 1000u);
  EXPECT_EQ(r->rt->accounting().dropped, 1000u);
  finish(*r);
}

TEST(Classifier, FirstMatchAndNoMatchDrops) {
  auto r = run(R"(
    FastUDPFlows(LIMIT 200, FLOWS 20, PROTO mix) -> c :: Classifier(12/0800 23/06, 12/0800 23/11, 12/0800 23/01);
    c[0] -> tcp :: Counter -> Discard; c[1] -> udp :: Counter -> Discard; c[2] -> icmp :: Counter -> Discard;
    FastUDPFlows(LIMIT 7, IPV6 true) -> c2 :: Classifier(12/0800) -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  // PROTO mix: flows f%10 in 0..5 TCP, 6..8 UDP, 9 ICMP; 200 packets over 20 flows.
  EXPECT_EQ(r->n("tcp.count"), 120u);
  EXPECT_EQ(r->n("udp.count"), 60u);
  EXPECT_EQ(r->n("icmp.count"), 20u);
  EXPECT_EQ(r->n("c2.drops"), 7u) << "IPv6 frames match no IPv4 pattern";
  finish(*r);
}

TEST(Classifier, MasksWildcardsNegationAndShortPackets) {
  auto r = run(R"(
    InfiniteSource(DATA \<aa bb cc dd>, LIMIT 3) -> a :: Classifier(0/a0%f0 1/b?, -) -> x :: Counter -> Discard; a[1] -> Discard;
    InfiniteSource(DATA \<aa bb>, LIMIT 2) -> b :: Classifier(!0/aa, 1/bbcc, -) -> Discard;
    b[1] -> Discard; b[2] -> y :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("x.count"), 3u);
  EXPECT_EQ(r->n("y.count"), 2u) << "1/bbcc reads past the end: no match";
  finish(*r);
  auto bad = run("InfiniteSource -> Classifier(12/080) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("even number of hex digits"), std::string::npos) << bad->errors;
}

TEST(Tee, CopiesEveryPacketToEveryOutput) {
  auto r = run(R"(
    FastUDPFlows(LIMIT 100) -> t :: Tee(3);
    t[0] -> a :: Counter -> Discard; t[1] -> b :: Counter -> Discard; t[2] -> c :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.count"), 100u);
  EXPECT_EQ(r->n("b.count"), 100u);
  EXPECT_EQ(r->n("c.count"), 100u);
  EXPECT_EQ(r->rt->accounting().created, 200u);
  finish(*r);
}

TEST(Tee, CopyFailuresAreCounted) {
  // A 64-buffer pool and a Queue that keeps everything: copies run out.
  auto r =
      run("FastUDPFlows(LIMIT 40, BURST 40) -> t :: Tee; t[0] -> Queue(1000) -> Unqueue(ACTIVE false) -> Discard; t[1] "
          "-> Queue(1000) -> Unqueue(ACTIVE false) -> Discard;",
          1, 64);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("t.copy_failures"), 16u);
  finish(*r);
}

TEST(Queue, CapacityDropsAndUnqueueDrains) {
  // SimpleQueue (as Click's) does not stop the source: a burst of 50 into
  // room for 10 loses 40.
  auto r = run(R"(
    FastUDPFlows(LIMIT 50, BURST 50) -> q :: SimpleQueue(10) -> u :: Unqueue(BURST 4) -> c :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("q.drops"), 40u);
  EXPECT_EQ(r->n("q.highwater_length"), 10u);
  EXPECT_EQ(r->n("c.count"), 10u);
  EXPECT_EQ(r->n("q.length"), 0u);
  finish(*r);
  // Queue's full-notifier: the source pushes no more than there is room
  // for and sleeps while the queue is full, so nothing is lost.
  r = run(R"(
    FastUDPFlows(LIMIT 50, BURST 50) -> q :: Queue(10) -> u :: Unqueue(BURST 4) -> c :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("q.drops"), 0u);
  EXPECT_EQ(r->n("q.highwater_length"), 10u);
  EXPECT_EQ(r->n("c.count"), 50u);
  finish(*r);
  // Also through elements between (one output each), and once the consumer
  // stops for good the source waits: the run ends with packets held, none lost.
  r = run(R"(
    InfiniteSource(LIMIT 30, BURST 8) -> Paint(1) -> q :: Queue(5) -> u :: Unqueue(BURST 1, LIMIT 12) -> c :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("q.drops"), 0u);
  EXPECT_EQ(r->n("c.count"), 12u);
  EXPECT_EQ(r->n("q.length"), 5u);
  finish(*r);
}

TEST(Queue, PacketsLeftInQueuesAreHeld) {
  auto r = run("FastUDPFlows(LIMIT 30) -> q :: Queue -> Unqueue(ACTIVE false) -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->rt->accounting().held, 30u);
  finish(*r);
}

TEST(PaintSwitch, CheckPaintAndSwitch) {
  auto r = run(R"(
    FastUDPFlows(LIMIT 10) -> Paint(1) -> ps :: PaintSwitch;
    ps[0] -> zero :: Counter -> Discard;
    ps[1] -> cp :: CheckPaint(1) -> one :: Counter -> Discard; cp[1] -> Discard;
    FastUDPFlows(LIMIT 10) -> Paint(5) -> p2 :: PaintSwitch -> Discard; p2[1] -> Discard;
    FastUDPFlows(LIMIT 4) -> s :: Switch(-1) -> Discard; s[1] -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("zero.count"), 0u);
  EXPECT_EQ(r->n("one.count"), 10u);
  EXPECT_EQ(r->n("p2.drops"), 10u) << "paint 5 has no output";
  EXPECT_EQ(r->n("s.drops"), 4u);
  finish(*r);
}

TEST(RoundRobinSwitch, AndHashSwitch) {
  auto r = run(R"(
    FastUDPFlows(LIMIT 9, BURST 9) -> rr :: RoundRobinSwitch;
    rr[0] -> a :: Counter -> Discard; rr[1] -> b :: Counter -> Discard; rr[2] -> c :: Counter -> Discard;
    FastUDPFlows(LIMIT 300, FLOWS 3) -> h :: HashSwitch(26, 12);
    h[0] -> x :: Counter -> Discard; h[1] -> y :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.count"), 3u);
  EXPECT_EQ(r->n("b.count"), 3u);
  EXPECT_EQ(r->n("c.count"), 3u);
  uint64_t x = r->n("x.count"), y = r->n("y.count");
  EXPECT_EQ(x + y, 300u);
  EXPECT_EQ(x % 100, 0u) << "each flow goes whole to one side";
  finish(*r);
}

TEST(Strip, UnstripEtherEncapRoundTrip) {
  std::string out = tmpdir() + "/strip.pcap";
  auto r =
      run("FastUDPFlows(LIMIT 5, LENGTH 80) -> Strip(14) -> Unstrip(14) -> Strip(14) -> "
          "EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:02) -> ToDump(" +
          out +
          ");"
          "InfiniteSource(DATA \\<01 02>, LIMIT 3) -> s :: Strip(3) -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("s.drops"), 3u);
  finish(*r);
  auto frames = read_pcap(out);
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[0].bytes.size(), 80u);
  EXPECT_EQ(frames[0].bytes[5], 0x02);
  EXPECT_EQ(frames[0].bytes[11], 0x01);
  EXPECT_EQ(k::load_be16(frames[0].bytes.data() + 12), 0x0800);
}

TEST(FromDump, ToDumpIsByteIdenticalWithNanoTimestamps) {
  std::string in = tmpdir() + "/gen.pcap", out = tmpdir() + "/copy.pcap";
  auto g =
      run("FastUDPFlows(LIMIT 64, FLOWS 8, IMIX true) -> SetTimestamp(1700000000.123456789) -> ToDump(" + in + ");");
  ASSERT_TRUE(g->ok) << g->errors;
  finish(*g);
  auto r = run("FromDump(" + in + ", STOP true) -> c :: Counter -> ToDump(" + out + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 64u);
  finish(*r);
  auto a = read_pcap(in), b = read_pcap(out);
  ASSERT_EQ(a.size(), 64u);
  ASSERT_EQ(b.size(), 64u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_EQ(b[i].ts, 1700000000123456789ull);
  }
}

TEST(FromDump, ReportsMissingAndTruncatedFiles) {
  auto r = run("FromDump(/nonexistent/x.pcap) -> Discard;");
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("test.click:1:10: error: FromDump@1: FILENAME: cannot read '/nonexistent/x.pcap': No "
                           "such file or directory"),
            std::string::npos)
      << r->errors;
  std::string in = tmpdir() + "/trunc-src.pcap", cut = tmpdir() + "/trunc.pcap";
  auto g = run("FastUDPFlows(LIMIT 10, LENGTH 100) -> ToDump(" + in + ");");
  finish(*g);
  {
    std::ifstream f(in, std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(f)), {});
    std::ofstream o(cut, std::ios::binary);
    o << s.substr(0, s.size() - 50);  // cut into the last record
  }
  auto t = run("FromDump(" + cut + ", STOP true) -> c :: Counter -> Discard;");
  ASSERT_TRUE(t->ok) << t->errors;
  EXPECT_EQ(t->n("c.count"), 9u);
  EXPECT_FALSE(t->h("FromDump@1.error").empty());
  // What could be read went through; the run still fails, saying how much.
  ASSERT_EQ(t->rt->errors().size(), 1u);
  EXPECT_NE(t->rt->errors()[0].find("truncated dump file"), std::string::npos) << t->rt->errors()[0];
  EXPECT_NE(t->rt->errors()[0].find("read 9 packets before it"), std::string::npos) << t->rt->errors()[0];
  finish(*t, true);
  // DAMAGE warn: the same, reported, and the run's status is not failed (Suricata's reading)
  auto w = run("FromDump(" + cut + ", STOP true, DAMAGE warn) -> c :: Counter -> Discard;");
  ASSERT_TRUE(w->ok) << w->errors;
  EXPECT_EQ(w->n("c.count"), 9u);
  EXPECT_NE(w->h("FromDump@1.error").find("truncated dump file"), std::string::npos);
  EXPECT_TRUE(w->rt->errors().empty());
  finish(*w);
  EXPECT_FALSE(run("FromDump(" + cut + ", DAMAGE maybe) -> Discard;")->ok);
}

// A capture cut shorter after FromDump mapped it (rotated, truncated by
// another process): reading past the new end raises SIGBUS, which FromDump
// turns into a read error, keeping what it had read.
TEST(FromDump, SurvivesTheFileShrinkingUnderIt) {
  std::string in = tmpdir() + "/shrink.pcap";
  auto g = run("FastUDPFlows(LIMIT 100000, LENGTH 100) -> ToDump(" + in + ");");
  finish(*g);
  auto r = test::load("FromDump(" + in + ", STOP true) -> c :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  r->rt = std::make_unique<Runtime>(r->prog, test::default_options());
  Diagnostics d;
  ASSERT_TRUE(r->rt->configure(d) && r->rt->initialize(d)) << d.text();
  ASSERT_EQ(::truncate(in.c_str(), 24 + 116 * 1000 + 50), 0);  // 1000 whole records, then part of one
  r->rt->run();
  r->ok = true;
  // The page holding the new end stays mapped, zero-filled past it: up to
  // 4 KiB of empty records come out before the fault on the next page.
  EXPECT_GE(r->n("c.count"), 1000u);
  EXPECT_LE(r->n("c.count"), 1000u + 4096 / 16);
  ASSERT_EQ(r->rt->errors().size(), 1u);
  EXPECT_NE(r->rt->errors()[0].find("became shorter"), std::string::npos) << r->rt->errors()[0];
  finish(*r, true);
}

TEST(InfiniteSource, DataLengthAndStop) {
  std::string out = tmpdir() + "/inf.pcap";
  auto r = run("InfiniteSource(DATA \\<de ad be ef>, LENGTH 6, LIMIT 4, BURST 3, STOP true) -> ToDump(" + out +
               ");"
               "InfiniteSource -> Discard;");  // unlimited: only STOP ends the run
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].bytes, (std::vector<uint8_t>{0xde, 0xad, 0xbe, 0xef, 0, 0}));
}

TEST(RatedSource, KeepsItsRate) {
  auto r = run("RatedSource(RATE 200, LIMIT 20, STOP true) -> c :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 20u);
  // 20 packets at 200/s take about 0.1 s; allow wide slack, but not zero.
  EXPECT_GT(r->rt->elapsed_ns(), 80000000u);
  finish(*r);
}

TEST(Script, AndDriverManager) {
  std::string out = tmpdir() + "/script.txt";
  auto r = run(R"(
    src :: FastUDPFlows(LIMIT 100, STOP true) -> c :: Counter -> s :: Switch(0) -> Discard; s[1] -> d1 :: Discard;
    Script(TYPE PASSIVE, set x $(add $(c.count) 1), write s.switch 1);
    DriverManager(wait_stop, write c.reset, stop);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 0u) << "DriverManager reset it after the stop request";
  finish(*r);
  // FastClick's timing idiom: pause waits for the source's stop request
  // (not for the poll timer), then every packet has been counted.
  auto t = run(R"(
    FastUDPFlows(LIMIT 1000000, STOP true) -> c :: Counter -> s :: Switch(0) -> Discard; s[1] -> Discard;
    DriverManager(set t0 $(now), pause, set t1 $(now), write s.switch $(if $(eq $(c.count) 1000000) 1 0), stop);
  )");
  ASSERT_TRUE(t->ok) << t->errors;
  EXPECT_EQ(t->h("s.switch"), "1") << "the driver went on before the last packet";
  finish(*t);
  // Click's print: a word that starts with a letter is a handler to read;
  // >FILE and >>FILE redirect.
  std::string pf = tmpdir() + "/print.txt";
  auto pr =
      run("FastUDPFlows(LIMIT 7, STOP true) -> c :: Counter -> Discard;\n"
          "DriverManager(wait_stop, print >" +
          pf + " c.count, print >>" + pf + " \"n $(c.count)\", stop);");
  ASSERT_TRUE(pr->ok) << pr->errors;
  finish(*pr);
  {
    std::ifstream f(pf);
    std::string all((std::istreambuf_iterator<char>(f)), {});
    EXPECT_EQ(all, "7\nn 7\n");
  }
  auto bad = run("Script(frobnicate 3);");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("unknown statement 'frobnicate'"), std::string::npos) << bad->errors;
  auto bad2 = run("Script(goto nowhere);");
  EXPECT_FALSE(bad2->ok);
  EXPECT_NE(bad2->errors.find("undefined label 'nowhere'"), std::string::npos) << bad2->errors;
}

TEST(Script, TypePacketChoosesPorts) {
  auto r = run(R"(
    FastUDPFlows(LIMIT 10) -> s :: Script(TYPE PACKET, init n 0, set n $(add $n 1),
                                          goto odd $(eq $(mod $n 2) 1), return 0, label odd, return 1);
    s[0] -> even :: Counter -> Discard;
    s[1] -> odd :: Counter -> Discard;
    FastUDPFlows(LIMIT 3) -> x :: Script(TYPE PACKET, exit) -> Discard;
    FastUDPFlows(LIMIT 2) -> e :: Script(TYPE PACKET, end) -> ended :: Counter -> Discard;
  )",
               1);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("even.count"), 5u);
  EXPECT_EQ(r->n("odd.count"), 5u);
  EXPECT_EQ(r->n("x.drops"), 3u);
  EXPECT_EQ(r->n("ended.count"), 2u);
  finish(*r);
  auto bad = run("FastUDPFlows -> Script(TYPE PACKET, wait 1s) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("'wait' cannot run inside a TYPE PACKET script"), std::string::npos) << bad->errors;
  auto ports = run("FastUDPFlows -> Script(TYPE ACTIVE, print \"hi\") -> Discard;");
  EXPECT_FALSE(ports->ok) << "only packet scripts have ports";
  // Click: a Script with ports and no TYPE is a packet script.
  auto dflt = run("FastUDPFlows(LIMIT 4) -> d :: Script(exit) -> Discard;");
  ASSERT_TRUE(dflt->ok) << dflt->errors;
  EXPECT_EQ(dflt->n("d.drops"), 4u);
  finish(*dflt);
}

TEST(Script, LoopsAndWritesAcrossWorkers) {
  auto r = run(R"(
    FastUDPFlows(LIMIT 64, FLOWS 16, ACTIVE false) -> c :: Counter -> Discard;
    Script(set i 0, label top, set i $(add $i 1), goto top $(lt $i 5), write FastUDPFlows@1.active true);
  )",
               2);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 64u) << "the write reached both workers' copies";
  finish(*r);
}

TEST(ToIPSummaryDump, RoundTripsThroughFromIPSummaryDump) {
  std::string txt = tmpdir() + "/sum.txt", txt2 = tmpdir() + "/sum2.txt";
  const char* fields = "timestamp ip_src sport ip_dst dport ip_proto ip_len ip_ttl ip_id tcp_seq tcp_flags payload_len";
  auto r = run(std::string("FastUDPFlows(LIMIT 30, FLOWS 10, PROTO mix, LENGTH 90) -> ToIPSummaryDump(") + txt +
               ", CONTENTS " + fields + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  auto r2 =
      run(std::string("FromIPSummaryDump(") + txt + ", STOP true, CHECKSUM true) -> c :: Counter -> ToIPSummaryDump(" +
          txt2 + ", CONTENTS " + fields + ");");
  ASSERT_TRUE(r2->ok) << r2->errors;
  EXPECT_EQ(r2->n("c.count"), 30u);
  finish(*r2);
  std::ifstream a(txt), b(txt2);
  std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(sa, sb) << "summary -> packets -> summary is the identity";
  EXPECT_NE(sa.find(" T 76 64 "), std::string::npos) << sa.substr(0, 300);
}

TEST(FromIPSummaryDump, ReportsBadLines) {
  std::string txt = tmpdir() + "/bad.txt";
  // A short line is Click's: its missing fields are absent, not an error.
  std::ofstream(txt) << "!data ip_src ip_dst ip_proto\n1.2.3.4 5.6.7.8 T\n1.2.3 5.6.7.8 U\n9.9.9.9 8.8.8.8 X\n"
                        "9.9.9.9 8.8.8.8\n";
  auto r = run("FromIPSummaryDump(" + txt + ", STOP true) -> c :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 2u);
  EXPECT_EQ(r->n("FromIPSummaryDump@1.bad_lines"), 2u);
  finish(*r);
}

TEST(Dispatch, MajorityKeepsTheBatchAndOrderIsKeptPerPort) {
  std::string out0 = tmpdir() + "/d0.pcap", out1 = tmpdir() + "/d1.pcap";
  // Every 5th packet is a TCP flow (PROTO mix flow 0..5 TCP): split, and check
  // each output keeps the generator's sequence order.
  auto r =
      run("FastUDPFlows(LIMIT 500, FLOWS 10, PROTO mix, BURST 64) -> c :: Classifier(23/11, -);"
          "c[0] -> ToDump(" +
          out0 + "); c[1] -> ToDump(" + out1 + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  for (auto& path : {out0, out1}) {
    auto f = read_pcap(path);
    ASSERT_FALSE(f.empty());
    uint64_t prev = 0;
    for (size_t i = 0; i < f.size(); ++i) {
      const uint8_t* ip = f[i].bytes.data() + 14;
      uint32_t l4 = 20 + (ip[9] == 6 ? 20 : 8);
      uint64_t seq = (uint64_t(k::load_be32(ip + l4)) << 32) | k::load_be32(ip + l4 + 4);
      if (i) {
        EXPECT_GT(seq, prev);
      }
      prev = seq;
    }
  }
  EXPECT_EQ(read_pcap(out0).size() + read_pcap(out1).size(), 500u);
}

TEST(Workers, FlowsStayOnOneWorkerInOrderAndLimitsAreGlobal) {
  std::string out = tmpdir() + "/mt.pcap";
  auto r = run("FastUDPFlows(LIMIT 4000, FLOWS 64) -> c :: Counter -> ToDump(" + out + ");", 2);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 4000u) << "handlers sum over workers";
  uint64_t w0 = r->rt->router(0).find("c")->output_count(0), w1 = r->rt->router(1).find("c")->output_count(0);
  EXPECT_EQ(w0 + w1, 4000u);
  EXPECT_GT(w0, 0u);
  EXPECT_GT(w1, 0u);
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 4000u);
  std::map<uint32_t, uint64_t> last;  // flow (source port) -> last sequence number
  for (auto& fr : f) {
    uint32_t sport = k::load_be16(fr.bytes.data() + 34);
    uint64_t seq = (uint64_t(k::load_be32(fr.bytes.data() + 42)) << 32) | k::load_be32(fr.bytes.data() + 46);
    auto it = last.find(sport);
    if (it != last.end()) {
      EXPECT_GT(seq, it->second) << "flow " << sport << " reordered";
    }
    last[sport] = seq;
  }
  EXPECT_EQ(last.size(), 64u);
}

TEST(Workers, FromDumpSpreadsByFlowAndStopsWhenAllCopiesFinish) {
  std::string in = tmpdir() + "/mt-in.pcap";
  auto g = run("FastUDPFlows(LIMIT 1000, FLOWS 32) -> ToDump(" + in + ");");
  finish(*g);
  auto r = run("FromDump(" + in + ", STOP true) -> c :: Counter -> Discard;", 2);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 1000u);
  finish(*r);
}

namespace shoal {
namespace {

// ReplayUnqueue: the trace preloaded, then replayed STOP times, byte for
// byte and in order (stripped headers included), with every copy accounted.
TEST(ReplayUnqueue, ReplaysTheTraceStopTimesByteForByte) {
  std::string in = test::tmpdir() + "/replay-in.pcap", out = test::tmpdir() + "/replay-out.pcap";
  auto g = test::run("FastUDPFlows(LIMIT 300, LENGTH 90, FLOWS 7, STOP true) -> ToDump(" + in + ");");
  ASSERT_TRUE(g->ok) << g->errors;
  test::finish(*g);
  auto r = test::run(
      "FromDump(" + in +
      ", STOP false) -> Strip(14) -> r :: ReplayUnqueue(STOP 3, BURST 50) -> Unstrip(14) -> c :: Counter -> ToDump(" +
      out + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 900u);
  EXPECT_EQ(r->n("r.loops"), 3u);
  EXPECT_EQ(r->n("r.loaded"), 0u) << "released at the end";
  test::finish(*r);
  auto a = test::read_pcap(in), b = test::read_pcap(out);
  ASSERT_EQ(a.size(), 300u);
  ASSERT_EQ(b.size(), 900u);
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(b[i].bytes, a[i % 300].bytes) << "packet " << i;
    ASSERT_EQ(b[i].ts, a[i % 300].ts) << "packet " << i;
  }
}

// Replay, pulled: the same packets in the same order, BURST at most per
// pull (Unqueue asks for more); while paused it gives nothing, and its
// puller sleeps on its notifier.
TEST(Replay, GivesTheTraceStopTimesWhenPulled) {
  std::string in = test::tmpdir() + "/replay-pull.pcap", out = test::tmpdir() + "/replay-pull-out.pcap";
  auto g = test::run("FastUDPFlows(LIMIT 120, LENGTH 80, FLOWS 5, STOP true) -> ToDump(" + in + ");");
  ASSERT_TRUE(g->ok) << g->errors;
  test::finish(*g);
  auto r = test::run("FromDump(" + in +
                     ", STOP false) -> r :: Replay(STOP 2, BURST 16) -> u :: Unqueue(BURST 64) -> c :: Counter -> "
                     "ToDump(" +
                     out + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 240u);
  EXPECT_EQ(r->n("r.loops"), 2u);
  test::finish(*r);
  auto a = test::read_pcap(in), b = test::read_pcap(out);
  ASSERT_EQ(b.size(), 240u);
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i].bytes, a[i % 120].bytes) << "packet " << i;
  auto paused = test::run("FromDump(" + in +
                          ", STOP false) -> r :: Replay(STOP 1, ACTIVE false) -> Unqueue -> c :: "
                          "Counter -> Discard; Script(wait 0.05, write s.x $(c.count), write r.active true);"
                          "s :: Script(TYPE PASSIVE, export x);");
  ASSERT_TRUE(paused->ok) << paused->errors;
  EXPECT_EQ(paused->h("s.x"), "0") << "nothing while paused";
  EXPECT_EQ(paused->n("c.count"), 120u) << "all once active (then Replay stops the router)";
  test::finish(*paused);
}

TEST(ReplayUnqueue, LimitAndOriginalsDroppedWithReasons) {
  std::string in = test::tmpdir() + "/replay-lim.pcap";
  auto g = test::run("FastUDPFlows(LIMIT 100, LENGTH 64, STOP true) -> ToDump(" + in + ");");
  ASSERT_TRUE(g->ok) << g->errors;
  test::finish(*g);
  auto r = test::run(
      "FromDump(" + in +
      ", STOP false) -> r :: ReplayUnqueue(STOP 2, LIMIT 40, FREEONTERMINATE false) -> c :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 80u);
  std::map<std::string, uint64_t> why;
  for (auto& d : r->rt->router(0).find("r")->drop_reasons()) why[d.name] = d.count.get();
  EXPECT_EQ(why["replay-ended"], 40u) << "the originals, not sent";
  EXPECT_GT(why["over-limit"], 0u) << "what the input gave past LIMIT";
  test::finish(*r);  // received + created = sent + dropped + held
  auto z = test::run("Idle -> ReplayUnqueue(STOP -2) -> Discard;");
  EXPECT_FALSE(z->ok);
}

}  // namespace
}  // namespace shoal

// Click's small elements (VLANEncap/VLANDecap/SetVLANAnno, StoreIPAddress,
// Resize, the queue family) and Click's Script language, checked against
// the values Click's own regression tests expect.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "helpers.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::test {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}
std::string hex(const std::vector<uint8_t>& b) {
  std::string s;
  for (uint8_t c : b) s += fmt::format("{:02x}", c);
  return s;
}
}  // namespace

TEST(VLANEncap, TagsUntagsAndKeepsTheTCIInTheAnnotation) {
  std::string out = tmpdir() + "/vlan.pcap";
  auto r = run(R"(
    InfiniteSource(DATA \<AAABACAD>, LIMIT 1, STOP true)
      -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> VLANEncap(1) -> t1 :: Tee(2)
      -> VLANDecap() -> VLANEncap(ANNO, NATIVE_VLAN 1) -> t2 :: Tee(2)
      -> VLANDecap() -> SetVLANAnno(2, 1) -> VLANEncap(ANNO, NATIVE_VLAN 1) -> t3 :: Tee(2)
      -> VLANEncap(0x1234, ETHERTYPE 0x88a8) -> VLANDecap() -> VLANDecap(ETHERTYPE 0x88a8) -> w :: ToDump()" +
               out + R"();
    t1[1] -> w; t2[1] -> w; t3[1] -> w;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 4u);
  // Order by content: which of Tee's paths reaches the file first is not the point.
  std::vector<std::string> got;
  got.reserve(f.size());
  for (auto& x : f) got.push_back(hex(x.bytes));
  std::sort(got.begin(), got.end());
  std::vector<std::string> want = {
      "020202020202010101010101"
      "0800aaabacad",  // native VLAN 1: untagged
      "020202020202010101010101"
      "81000001"
      "0800aaabacad",  // VLAN 1
      "020202020202010101010101"
      "81002002"
      "0800aaabacad",  // TCI 0x2002: PCP 1, VLAN 2
      // the same after an 802.1ad tag went on and came off again (the
      // 0x8100 VLANDecap in between leaves an 0x88a8 frame alone)
      "020202020202010101010101"
      "81002002"
      "0800aaabacad",
  };
  EXPECT_EQ(got, want);
}

TEST(StoreIPAddress, OffsetsAndHeaderFieldsWithIncrementalChecksums) {
  std::string out = tmpdir() + "/store.pcap";
  auto r = run(R"(
    InfiniteSource(LIMIT 4, STOP true, DATA \<45000028 00000000 400666ce 0a000001 0a000002 00010002 00000000 00000000 50000000 9bdf0000>)
      -> MarkIPHeader(0) -> SetIPAddress(1.0.0.2) -> r :: RoundRobinSwitch -> StoreIPAddress(0) -> w :: ToDump()" +
               out + R"();
    r[1] -> StoreIPAddress(src) -> w;
    r[2] -> StoreIPAddress(9.8.7.6, dst) -> w;
    r[3] -> StoreIPAddress(1.0.0.3, 36) -> w;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(hex({f[0].bytes.begin(), f[0].bytes.begin() + 4}), "01000002");
  EXPECT_EQ(hex({f[3].bytes.begin() + 36, f[3].bytes.begin() + 40}), "01000003");
  for (int i : {1, 2}) {
    const uint8_t* ip = f[size_t(i)].bytes.data();
    EXPECT_EQ(hex({f[size_t(i)].bytes.begin() + (i == 1 ? 12 : 16), f[size_t(i)].bytes.begin() + (i == 1 ? 16 : 20)}),
              i == 1 ? "01000002" : "09080706");
    // the incremental updates equal a full recomputation: the IP header
    // and the TCP checksum over the pseudo header both verify
    EXPECT_EQ(k::csum_fold(k::csum_partial(ip, 20)), 0) << i;
    uint32_t sum = k::ipv4_pseudo_sum(ip + 12, ip + 16, 6, 20);
    EXPECT_EQ(k::csum_fold(k::csum_partial(ip + 20, 20, sum)), 0) << i;
  }
}

TEST(Resize, GrowsIntoHeadroomAndShrinksToEmpty) {
  std::string out = tmpdir() + "/resize.pcap";
  auto r =
      run("InfiniteSource(DATA \"ABCD\", LIMIT 1, STOP true) -> Resize(HEAD -2) -> t :: Tee(2) -> "
          "Resize(+4, -2) -> w :: ToDump(" +
          out + "); t[1] -> Resize(HEAD -8) -> c :: Counter -> w;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("c.byte_count"), "0");
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 2u);
  size_t four = f[0].bytes.size() == 4 ? 0 : 1;
  ASSERT_EQ(f[four].bytes.size(), 4u);
  EXPECT_EQ(f[four].bytes[2], 'A') << "the stripped bytes come back from the headroom";
  EXPECT_EQ(f[four].bytes[3], 'B');
  EXPECT_EQ(f[1 - four].bytes.size(), 0u);
}

TEST(MixedQueue, InputOneJumpsTheQueue) {
  std::string out = tmpdir() + "/mixed.txt";
  auto r = run(R"(
    InfiniteSource(DATA \<01>, LIMIT 3, STOP true) -> m :: MixedQueue(3);
    InfiniteSource(DATA \<02 02>, LIMIT 2, STOP true) -> [1]m;
    m -> u :: Unqueue(ACTIVE false) -> c :: Counter -> Discard;
    DriverManager(pause, pause, read m.length, write u.active true, wait 20ms, stop);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  // capacity 3: input 1's two packets went to the front, each pushing the
  // back packet out when full
  EXPECT_EQ(r->n("c.count"), 3u);
  EXPECT_EQ(r->n("m.drops"), 2u);
  finish(*r);
}

TEST(Queue, CapacityAndResetHandlers) {
  auto r = run(R"(
    InfiniteSource(LIMIT 10, STOP true) -> q :: SimpleQueue(20) -> Idle;
    DriverManager(pause, write q.capacity 4, set a $(q.length), write q.reset, set b $(q.length),
                  write q.capacity 0, stop);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("q.length"), 0u);
  EXPECT_EQ(r->n("q.capacity"), 4u) << "capacity 0 refused";
  finish(*r);
}

TEST(Script, ClickExpressionsReadWithParametersAndPassiveRun) {
  std::string out = tmpdir() + "/expr.txt";
  std::string cfg = R"x(
    s :: Script(TYPE PASSIVE, returnq $(add $1 $2));
    Script(print >OUT $(sub 10 2 2),
           print >>OUT $(idiv 7 2) $(div 7 2) $(mod 7 3) $(neg 4) $(abs -3),
           print >>OUT "$(eq 10 0xA) $(lt abc abd) $(if $(gt 2 1) yes no) $(in b a b c)",
           print >>OUT $(s.run 40 2) $(length hello) $(htons 1) $(sprintf "%05x" 127),
           set x 0, label l, set x $(add $x 1), goto l $(lt $x 5), print >>OUT $x,
           stop);
  )x";
  for (size_t p; (p = cfg.find("OUT")) != std::string::npos;) cfg.replace(p, 3, out);
  auto r = run(cfg);
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  EXPECT_EQ(slurp(out), "6\n3 3.5 1 -4 3\ntrue true yes true\n42 5 256 0007f\n5\n");
}

TEST(Script, ExportedVariablesAreHandlers) {
  auto r = run(R"(
    InfiniteSource(LIMIT 5, STOP true) -> SimpleQueue -> u :: Unqueue(LIMIT 1)
      -> s :: Script(TYPE PACKET, export count 0, set count $(add $count 1), write u.reset);
    DriverManager(pause, wait 50ms, stop);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("s.count"), "5") << "Unqueue's reset handler restarts its LIMIT";
  finish(*r);
}

}  // namespace shoal::test

namespace shoal::test {

namespace {
// Runs FromIPSummaryDump over `in` into ToIPSummaryDump(FIELDS fields) and
// returns the lines that are not '!' headers.
std::string summary_round(const std::string& in, const std::string& fields, const std::string& middle = "") {
  std::string src = tmpdir() + "/sum-in.txt", out = tmpdir() + "/sum-out.txt";
  std::ofstream(src) << in;
  auto r = run("FromIPSummaryDump(" + src + ", STOP true, CHECKSUM true) -> " + middle + " ToIPSummaryDump(" + out +
               ", FIELDS " + fields + ");");
  if (!r->ok) return "load failed: " + r->errors;
  finish(*r);
  std::ifstream f(out);
  std::string line, body;
  while (std::getline(f, line))
    if (line.empty() || line[0] != '!') body += line + "\n";
  return body;
}
}  // namespace

TEST(IPSummaryDump, ClickFieldsSynonymsAndPacketLayout) {
  // Click's synonyms (src, proto...), TCP options, flags, payload quoting
  // and both MD5 forms (Click's text digest checked against its own test).
  EXPECT_EQ(summary_round("!data src dst sport dport proto tcp_flags tcp_opt payload\n"
                          "1.0.0.1 1.0.0.2 10 20 T SA mss1460;wscale10;sackok \"hi there\\n\"\n",
                          "ip_src dst proto tcp_flags tcp_opt tcp_off payload payload_len payload_md5_hex ip_len"),
            "1.0.0.1 1.0.0.2 T SA mss1460;wscale10;sackok 32 \"hi there\\n\" 9 12f6bb1941df66b8f138a446d4e8670c 61\n");
  EXPECT_EQ(summary_round("!data src dst proto\n1.0.0.1 1.0.0.2 U\n", "payload payload_len payload_md5 udp_len ttl"),
            "\"\" 0 u3bJz@iaYsq6aMaMSJVq_b 8 100\n");
  // ICMP names both ways; fragments; a field the packet lacks is '-'.
  EXPECT_EQ(
      summary_round("!data src dst icmp_type\n!proto I\n1.0.0.1 1.0.0.2 echo\n", "icmp_type_name icmp_type sport"),
      "echo 8 -\n");
  EXPECT_EQ(summary_round("!data src dst proto ip_fragoff\n1.0.0.1 1.0.0.2 T 1480+\n", "ip_frag ip_fragoff sport"),
            "f 1480+ -\n");
  // Timestamps moved before zero print signed.
  EXPECT_EQ(summary_round("!data timestamp\n0.1\n2.5\n", "timestamp", "AdjustTimestamp(-1) ->"),
            "-0.900000\n1.500000\n");
}

TEST(IPPrint, PrintsAsClickDoes) {
  // The lines of Click's own IPPrint-01 test.
  std::string in = tmpdir() + "/ipp.txt", err = tmpdir() + "/ipp.out";
  std::ofstream(in) << "!data timestamp src dst sport dport proto ip_len ip_hl tcp_off tcp_flags\n"
                       "1.00002 1.0.0.1 1.0.0.2 10 20 T 1500 40 20 A\n"
                       "1.00004 1.0.0.3 1.0.0.4 30 40 T 1000 20 40 SF\n";
  auto r = run("FromIPSummaryDump(" + in + ", STOP true) -> IPPrint(OUTFILE " + err + ") -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  EXPECT_EQ(slurp(err),
            "1.000020: 1.0.0.1.10 > 1.0.0.2.20: . 0:1440(1440,60,1500) ack 0 win 0\n"
            "1.000040: 1.0.0.3.30 > 1.0.0.4.40: SF 0:942(942,60,1000) win 0\n");
}

TEST(CheckTCPHeader, ChecksumsLengthsAndOutputOne) {
  std::string in = tmpdir() + "/chk.txt";
  std::ofstream(in) << "!data src dst sport dport proto payload\n"
                       "1.0.0.1 1.0.0.2 1 2 T \"abc\"\n1.0.0.1 1.0.0.2 1 2 U \"abc\"\n"
                       "1.0.0.1 1.0.0.2 - - I -\n";
  auto r = run("FromIPSummaryDump(" + in +
               ", STOP true, CHECKSUM true) -> t :: Tee(3);"
               "t[0] -> ct :: CheckTCPHeader -> Discard; t[1] -> cu :: CheckUDPHeader -> Discard;"
               "t[2] -> ci :: CheckICMPHeader -> Discard;"
               "FromIPSummaryDump(" +
               in + ", STOP true) -> bad :: CheckTCPHeader -> Discard; bad[1] -> b1 :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("ct.count"), 1u);
  EXPECT_EQ(r->n("cu.count"), 1u);
  EXPECT_EQ(r->n("ci.count"), 1u);
  EXPECT_EQ(r->n("ct.drops"), 2u);
  // without CHECKSUM true the TCP checksum is zero: output 1 takes it
  EXPECT_EQ(r->n("b1.count"), 3u);
  EXPECT_NE(r->h("bad.drop_details").find("1 packets due to:         bad TCP checksum"), std::string::npos)
      << r->h("bad.drop_details");
  finish(*r);
}

TEST(TimeFilter, IntervalAndEndCall) {
  // Click's TimeFilter-01: END_CALL extends the interval twice.
  std::string in = tmpdir() + "/tf.txt", out = tmpdir() + "/tf.out";
  std::ofstream(in) << "!data timestamp\n0.1\n0.2\n1.0\n1.2\n5.5\n";
  auto r = run("FromIPSummaryDump(" + in +
               ", STOP true) -> t :: TimeFilter(0, 1, END_CALL s.run $t) -> c :: Counter -> Discard;"
               "s :: Script(TYPE PASSIVE, init x 0, goto exit $(gt $x 1), set x $(add $x 1), print >>" +
               out + " $1, write t.extend_interval 1);");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 4u);
  EXPECT_EQ(r->n("t.drops"), 1u);
  finish(*r);
  EXPECT_EQ(slurp(out), "1.000000\n5.500000\n");
}

}  // namespace shoal::test

namespace shoal::test {

TEST(AddressInfo, NamesInArgumentsRoutesAndCompounds) {
  auto r = run(R"(
    AddressInfo(foo 1.2.3.4/20 00:01:02:03:04:05);
    PortInfo(svc 7000/udp other);
    rt :: LinearIPLookup(foo 0, foo:ipnet 1, foo:bcast 2);
    Idle -> rt; rt[0] -> Discard; rt[1] -> Discard; rt[2] -> Discard;
    InfiniteSource(LIMIT 1, STOP true) -> e :: UDPIPEncap(foo, svc, 1.0.0.1, ssh) -> EtherEncap(0x0800, foo, foo:eth)
      -> c :: { input -> u :: UDPIPEncap(1.0.0.2, svc, 1.0.0.3, other) -> output; PortInfo(svc 80/udp) } -> Discard;
    DriverManager(write rt.ctrl "add 18.26/16 1.0.0.1 0\nremove foo:bcast 2", set a $(rt.lookup 18.26.4.9),
                  set b $(rt.lookup 1.2.15.255), write rt.add 10.0.0.0/8 9.9.9.9 1, stop);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  std::string t = r->h("rt.table");
  EXPECT_NE(t.find("1.2.3.4/32\t\t-\t\t0"), std::string::npos) << t;
  EXPECT_NE(t.find("1.2.0.0/20\t\t-\t\t1"), std::string::npos) << t;
  EXPECT_NE(t.find("18.26.0.0/16\t\t1.0.0.1\t\t0"), std::string::npos) << t;
  EXPECT_EQ(t.find("1.2.15.255/32"), std::string::npos) << "removed through ctrl: " << t;
  std::string lk, err;
  ASSERT_TRUE(r->rt->read_handler("rt.lookup", lk, err, "10.1.2.3")) << err;
  EXPECT_EQ(lk, "1 9.9.9.9");
  ASSERT_TRUE(r->rt->read_handler("rt.lookup", lk, err, "1.2.3.4")) << err;
  EXPECT_EQ(lk, "0");
  ASSERT_TRUE(r->rt->read_handler("rt.lookup", lk, err, "200.0.0.1")) << err;
  EXPECT_EQ(lk, "-1");
  EXPECT_FALSE(r->rt->read_handler("rt.lookup", lk, err, "not-an-address"));
  finish(*r);
  // An unknown name is an error at the argument, as an unknown address is.
  auto bad = run("Idle -> UDPIPEncap(nowhere, 1, 1.0.0.1, 2) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("nowhere"), std::string::npos) << bad->errors;
}

TEST(Bypass, DetourWhileActiveAndEndCall) {
  auto r = run(R"(
    src :: InfiniteSource(LIMIT 4, STOP true, END_CALL done.run) -> Counter(COUNT_CALL 2 b.active true) -> b :: Bypass
      -> main :: Counter -> Discard;
    b[1] -> detour :: Counter -> [1]b;
    done :: Script(TYPE PASSIVE, set ended yes);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  // BURST 1: one packet a batch. As in Click, the packet that reaches the
  // count takes the detour already (the Counter calls before it pushes).
  EXPECT_EQ(r->n("main.count"), 4u);
  EXPECT_EQ(r->n("detour.count"), 3u);
  std::string v, err;
  ASSERT_TRUE(r->rt->read_handler("done.get", v, err, "ended")) << err;
  EXPECT_EQ(v, "yes") << "END_CALL ran at LIMIT";
  finish(*r);
}

}  // namespace shoal::test

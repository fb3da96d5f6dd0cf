// Click's IP elements for routers and traces: IPInputCombo and
// IPOutputCombo (against the chains of elements Click says they are),
// IPMirror, MarkIPCE, TruncateIPPayload, EraseIPPayload, CheckIPHeader2;
// and Click's analysis elements: AggregateIP and its siblings, TimeRange.
#include <fmt/format.h>

#include <fstream>
#include <map>

#include "helpers.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::test {

namespace {
std::string write_summary(const std::string& name, const std::string& text) {
  std::string path = tmpdir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}
// An element's drops by reason.
std::map<std::string, uint64_t> why(Run& r, const std::string& element) {
  std::map<std::string, uint64_t> m;
  for (auto& d : r.rt->router(0).find(element)->drop_reasons())
    if (d.count.get()) m[d.name] = d.count.get();
  return m;
}
}  // namespace

TEST(IPInputCombo, PaintsStripsChecksAndSetsTheDestination) {
  const std::string good = write_summary("ic-good.txt",
                                         "!data src dst proto\n"
                                         "5.5.5.5 10.0.0.9 U\n"     // forwarded
                                         "10.0.0.255 9.9.9.9 U\n"   // an interface's broadcast as source
                                         "10.0.0.255 10.0.0.1 U\n"  // ... to the interface itself: allowed
                                         "1.2.3.4 9.9.9.9 U\n"      // BADSRC
                                         "0.0.0.0 9.9.9.9 U\n"),    // (INTERFACES adds it)
      bad = write_summary("ic-bad.txt",
                          "!data src dst proto ip_len\n"
                          "5.5.5.5 10.0.0.9 U 200\n"  // IP length beyond the packet
                          "5.5.5.5 10.0.0.9 U -\n"),  // checksum 0 (no CHECKSUM)
      out = tmpdir() + "/ic-out.txt";
  auto r =
      run("FromIPSummaryDump(" + good +
          ", STOP true, CHECKSUM true) -> e :: EtherEncap(0x0800, 1:1:1:1:1:1, "
          "2:2:2:2:2:2) -> c :: IPInputCombo(3, INTERFACES 10.0.0.1/24, BADSRC 1.2.3.4)"
          "  -> rt :: LinearIPLookup(10.0.0.0/24 0, 0/0 1);"
          "FromIPSummaryDump(" +
          bad +
          ", STOP true) -> e;"
          "rt[0] -> ToIPSummaryDump(" +
          out + ", FIELDS link src dst ip_len); rt[1] -> ToIPSummaryDump(" + out + ", FIELDS link src dst ip_len);");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.drops"), 5u);
  EXPECT_EQ(why(*r, "c"),
            (std::map<std::string, uint64_t>{{"bad-source-address", 3}, {"bad-ip-length", 1}, {"bad-ip-checksum", 1}}));
  finish(*r);
  // painted 3, Ethernet gone, routed on DST_IP (10.0.0.0/24: both survivors)
  EXPECT_EQ(summary_lines(out, "|"), "3 5.5.5.5 10.0.0.9 28|3 10.0.0.255 10.0.0.1 28|");
}

TEST(IPOutputCombo, DoesWhatItsChainOfElementsDoes) {
  // Click defines it as DropBroadcasts -> PaintTee -> IPGWOptions ->
  // FixIPSrc -> DecIPTTL -> CheckLength: the same packets through both, each
  // output's bytes the same.
  const std::string in = write_summary("oc.txt",
                                       "!data link src dst proto ttl ip_opt payload\n"
                                       "0 1.0.0.1 2.0.0.1 U 64 . \"a\"\n"
                                       "1 1.0.0.2 2.0.0.1 U 64 . \"b\"\n"       // painted: a copy on 1
                                       "0 1.0.0.3 2.0.0.1 U 1 . \"c\"\n"        // expires: 3
                                       "0 1.0.0.4 2.0.0.1 U 9 rr{}+2 \"d\"\n"   // recorded
                                       "0 1.0.0.5 2.0.0.1 U 9 7=2:9:9 \"e\"\n"  // a bad pointer: 2
                                       "0 1.0.0.6 2.0.0.1 U 9 ssrr{^2.0.0.1,3.3.3.3} \"f\"\n"
                                       "1 1.0.0.7 2.0.0.1 U 9 . \"" +
                                           std::string(120, 'x') + "\"\n");  // painted and too long: 1 and 4
  std::string cfg = "FromIPSummaryDump(" + in +
                    ", STOP true, CHECKSUM true) -> t :: Tee;"
                    "t[0] -> oc :: IPOutputCombo(1, 10.0.1.1, 100);"
                    "t[1] -> DropBroadcasts -> pt :: PaintTee(1) -> g :: IPGWOptions(10.0.1.1) -> FixIPSrc(10.0.1.1)"
                    "  -> d :: DecIPTTL -> l :: CheckLength(100);";
  const char* chain_out[5] = {"l", "pt[1]", "g[1]", "d[1]", "l[1]"};
  for (int o = 0; o < 5; ++o) {
    cfg += fmt::format("oc[{}] -> ToDump({}/oc{}.pcap, ENCAP IP);", o, tmpdir(), o);
    cfg += fmt::format("{} -> ToDump({}/ch{}.pcap, ENCAP IP);", chain_out[o], tmpdir(), o);
  }
  auto r = run(cfg);
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  const size_t want[5] = {4, 2, 1, 1, 1};
  for (int o = 0; o < 5; ++o) {
    auto a = read_pcap(fmt::format("{}/oc{}.pcap", tmpdir(), o)),
         b = read_pcap(fmt::format("{}/ch{}.pcap", tmpdir(), o));
    EXPECT_EQ(a.size(), want[o]) << "output " << o;
    ASSERT_EQ(a.size(), b.size()) << "output " << o;
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].bytes, b[i].bytes) << "output " << o << " packet " << i;
  }
  // output 0: TTL down by one, 10.0.1.1 recorded, the checksum right
  auto ok = read_pcap(tmpdir() + "/oc0.pcap");
  ASSERT_EQ(ok.size(), 4u);
  const auto& rr = ok[2].bytes;
  ASSERT_GE(rr.size(), 32u);
  EXPECT_EQ(rr[8], 8);
  EXPECT_EQ(k::load_be32(rr.data() + 23), 0x0a000101u) << "the route recorded";
  EXPECT_EQ(k::ip_checksum(rr.data(), 32), 0);
}

TEST(IPMirror, SwapsAddressesPortsAndSequenceNumbers) {
  const std::string in = write_summary("mirror.txt",
                                       "!data src sport dst dport proto tcp_seq tcp_ack\n"
                                       "1.0.0.1 10 2.0.0.2 20 T 100 200\n1.0.0.3 30 2.0.0.4 40 U - -\n"),
                    out = tmpdir() + "/mirror-out.txt";
  auto r = run("FromIPSummaryDump(" + in +
               ", STOP true, CHECKSUM true) -> IPMirror -> c :: CheckIPHeader -> ct :: Classifier(9/06, -);"
               "ct[0] -> CheckTCPHeader -> s :: SetIPAddress(0.0.0.0) -> GetIPAddress(IP dst) -> "
               "w :: ToIPSummaryDump(" +
               out + ", FIELDS src sport dst dport tcp_seq tcp_ack); ct[1] -> CheckUDPHeader -> w;");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  EXPECT_EQ(summary_lines(out, "|"), "2.0.0.2 20 1.0.0.1 10 200 100|2.0.0.4 40 1.0.0.3 30 - -|")
      << "and the checksums still hold (the Check elements passed both)";
}

TEST(MarkIPCE, MarksEcnCapablePacketsAndKeepsTheChecksum) {
  const std::string in = write_summary("ce.txt",
                                       "!data src dst proto ip_ecn\n1.0.0.1 2.0.0.2 U ect2\n"
                                       "1.0.0.1 2.0.0.2 U no\n1.0.0.1 2.0.0.2 U ce\n"),
                    out = tmpdir() + "/ce-out.txt", forced = tmpdir() + "/ce-forced.txt";
  auto r = run("FromIPSummaryDump(" + in +
               ", STOP true, CHECKSUM true) -> m :: MarkIPCE -> CheckIPHeader -> "
               "ToIPSummaryDump(" +
               out +
               ", FIELDS ip_ecn);"
               "FromIPSummaryDump(" +
               in +
               ", STOP true, CHECKSUM true) -> f :: MarkIPCE(true) -> CheckIPHeader -> "
               "ToIPSummaryDump(" +
               forced + ", FIELDS ip_ecn);");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("m.marked"), 1u);
  EXPECT_EQ(r->n("f.marked"), 2u);
  EXPECT_EQ(why(*r, "m"), (std::map<std::string, uint64_t>{{"not-ect", 1}}));
  finish(*r);
  EXPECT_EQ(summary_lines(out, "|"), "ce|ce|");
  EXPECT_EQ(summary_lines(forced, "|"), "ce|ce|ce|");
}

TEST(TruncateIPPayload, KeepsTheHeadersAndLengthBytesOfPayload) {
  const std::string payload(100, 'p');
  const std::string in = write_summary("trunc.txt", "!data src dst proto payload\n1.0.0.1 2.0.0.2 T \"" + payload +
                                                        "\"\n1.0.0.1 2.0.0.2 U \"" + payload +
                                                        "\"\n1.0.0.1 2.0.0.2 I \"" + payload + "\"\n"),
                    a = tmpdir() + "/trunc-a.pcap", b = tmpdir() + "/trunc-b.pcap";
  auto r = run("FromIPSummaryDump(" + in +
               ", STOP true, CHECKSUM true) -> t :: Tee;"
               "t[0] -> TruncateIPPayload(10) -> ToDump(" +
               a +
               ", ENCAP IP);"
               "t[1] -> TruncateIPPayload(10, false) -> ToDump(" +
               b + ", ENCAP IP);");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  auto pa = read_pcap(a), pb = read_pcap(b);
  ASSERT_EQ(pa.size(), 3u);
  ASSERT_EQ(pb.size(), 3u);
  EXPECT_EQ(pa[0].bytes.size(), 20u + 20 + 10);  // TCP
  EXPECT_EQ(pa[1].bytes.size(), 20u + 8 + 10);   // UDP
  EXPECT_EQ(pa[2].bytes.size(), 20u + 8 + 10);   // ICMP
  for (const auto& f : pb) EXPECT_EQ(f.bytes.size(), 30u) << "the payload starts after the IP header";
  EXPECT_EQ(k::load_be16(pa[0].bytes.data() + 2), 20 + 20 + 100) << "the IP length says what the packet was";
}

TEST(EraseIPPayload, ZeroesTcpAndUdpPayloads) {
  const std::string in = write_summary("erase.txt",
                                       "!data src dst proto payload\n1.0.0.1 2.0.0.2 T \"secret\"\n"
                                       "1.0.0.1 2.0.0.2 U \"secret\"\n1.0.0.1 2.0.0.2 I \"ping\"\n"
                                       "1.0.0.1 2.0.0.2 47 \"gre\"\n"),
                    out = tmpdir() + "/erase.pcap";
  auto r = run("FromIPSummaryDump(" + in + ", STOP true, CHECKSUM true) -> e :: EraseIPPayload -> ToDump(" + out +
               ", ENCAP IP);");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("e.erased"), 2u);
  EXPECT_EQ(why(*r, "e"), (std::map<std::string, uint64_t>{{"not-tcp-udp-icmp", 1}})) << "GRE, as Click kills it";
  finish(*r);
  auto p = read_pcap(out);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(std::vector<uint8_t>(p[0].bytes.begin() + 40, p[0].bytes.end()), std::vector<uint8_t>(6, 0));
  EXPECT_EQ(k::load_be16(p[0].bytes.data() + 36), 0) << "the TCP checksum, no longer right";
  EXPECT_EQ(std::vector<uint8_t>(p[1].bytes.begin() + 28, p[1].bytes.end()), std::vector<uint8_t>(6, 0));
  EXPECT_EQ(std::string(p[2].bytes.begin() + 28, p[2].bytes.end()), "ping") << "ICMP is kept";
}

TEST(CheckIPHeader2, LeavesTheChecksumUnlessAsked) {
  const std::string in = write_summary("c2.txt", "!data src dst proto\n1.0.0.1 2.0.0.2 U\n");  // checksum 0
  auto r = run("FromIPSummaryDump(" + in +
               ", STOP true) -> t :: Tee; t[0] -> CheckIPHeader2 -> a :: Counter -> Discard;"
               "t[1] -> CheckIPHeader2(CHECKSUM true) -> b :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.count"), 1u);
  EXPECT_EQ(r->n("b.count"), 0u);
  finish(*r);
}

// The aggregate annotations of a summary's packets through `middle`.
std::string aggregates(const std::string& lines, const std::string& middle, const std::string& fields = "aggregate") {
  const std::string in = write_summary("agg-in.txt", lines), out = tmpdir() + "/agg-out.txt";
  auto r = run("FromIPSummaryDump(" + in + ", STOP true, CHECKSUM true) -> " + middle + " -> ToIPSummaryDump(" + out +
               ", FIELDS " + fields + ");");
  if (!r->ok) return "load failed: " + r->errors;
  finish(*r);
  return summary_lines(out, "|");
}

TEST(AggregateIP, ClicksFieldsPrefixesAndMasks) {
  const std::string pkts =
      "!data src dst sport dport proto ttl tcp_flags payload\n"
      "10.1.2.3 2.0.0.1 7 80 T 101 S \"xyzw\"\n"
      "192.168.0.9 2.0.0.2 8 53 U 64 - \"qrst\"\n";
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip src/8)"), "10|192|");
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip src/8, UNSHIFT_IP_ADDR true)"), "167772160|3221225472|");
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip ttl)"), "101|64|");
  // ttl 101 = 0x65, proto 6: (0x6506 & 0x3f0) >> 4 = 16; ttl 64, proto 17: (0x4011 & 0x3f0) >> 4 = 1
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip[8:2] & 0x3f0)"), "16|1|");
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip{64:8})"), "101|64|");
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip dport)"), "80|53|");
  EXPECT_EQ(aggregates(pkts, "AggregateIP(payload[0])"), std::to_string('x') + "|" + std::to_string('q') + "|")
      << "(Click reads a whole word: a payload of 4 bytes at least)";
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip ttl) -> AggregateIP(ip proto, INCREMENTAL true)"),
            std::to_string(101 * 256 + 6) + "|" + std::to_string(64 * 256 + 17) + "|");
  // A packet without the field: output 1.
  EXPECT_EQ(aggregates(pkts, "a :: AggregateIP(tcp syn) -> u :: Null; a[1] -> Paint(7) -> u", "aggregate link"),
            "1 0|0 7|");

  auto r =
      run("InfiniteSource(LIMIT 1, STOP true) -> a :: AggregateIP(ip[12:4]) -> Discard;"
          "InfiniteSource(LIMIT 1, STOP true) -> b :: AggregateIP(tcp{106:3}) -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("a.field"), "ip src");
  EXPECT_EQ(r->h("a.bit_offset"), "96");
  EXPECT_EQ(r->h("b.field"), "tcp{106:3}");
  EXPECT_EQ(r->h("b.header"), "tcp");
  finish(*r);
  for (const char* bad : {"ip[0:8]", "ip[2:4]", "ip src & 0x5", "foo", "ip src/40", "ip ttl[9]", "ip[1] junk"}) {
    auto rr = run(std::string("InfiniteSource(LIMIT 1, STOP true) -> AggregateIP(") + bad + ") -> Discard;");
    EXPECT_FALSE(rr->ok) << bad;
    EXPECT_NE(rr->errors.find("test.click:1:39: error: AggregateIP"), std::string::npos) << rr->errors;
  }
}

TEST(AggregateFilter, TheFirstFilterListingAnAggregateDecides) {
  const std::string pkts =
      "!data src dst proto ttl\n1.0.0.1 2.0.0.1 U 5\n1.0.0.1 2.0.0.1 U 11\n"
      "1.0.0.1 2.0.0.1 U 15\n1.0.0.1 2.0.0.1 U 30\n1.0.0.1 2.0.0.1 U 12\n";
  const std::string in = write_summary("af-in.txt", pkts), out = tmpdir() + "/af-out.txt";
  auto r = run("FromIPSummaryDump(" + in +
               ", STOP true) -> AggregateIP(ip ttl) -> f :: AggregateFilter(allow 1-10, "
               "1 11 12, drop 13-20, 0 15 30-40);"
               "f[0] -> Paint(0) -> w :: ToIPSummaryDump(" +
               out + ", FIELDS aggregate link); f[1] -> Paint(1) -> w;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("f.drops"), 1u) << "15: 'drop 13-20' comes first";
  finish(*r);
  EXPECT_EQ(summary_lines(out, "|"), "5 0|30 0|11 1|12 1|") << "(a batch leaves by output, each in order)";
  EXPECT_FALSE(run("InfiniteSource -> f :: AggregateFilter(2 1-3) -> Discard;")->ok) << "output 2 does not exist";
  EXPECT_FALSE(run("InfiniteSource -> f :: AggregateFilter(allow 3-1) -> Discard;")->ok);
}

TEST(AggregateIPAddrPair, NumbersPairsBothWaysAndForgetsSilentOnes) {
  const std::string pkts =
      "!data timestamp src dst\n1 1.0.0.1 2.0.0.2\n2 2.0.0.2 1.0.0.1\n3 1.0.0.1 3.0.0.3\n"
      "4 3.0.0.3 1.0.0.1\n20 2.0.0.2 1.0.0.1\n";
  EXPECT_EQ(aggregates(pkts, "AggregateIPAddrPair", "aggregate link"), "1 0|1 1|2 0|2 1|1 1|");
  // TIMEOUT 5: the first pair, silent from 2 to 20, comes back as a new pair, its first packet direction 0
  EXPECT_EQ(aggregates(pkts, "AggregateIPAddrPair(TIMEOUT 5)", "aggregate link"), "1 0|1 1|2 0|2 1|3 0|");
}

TEST(AggregateFirst, OnlyTheFirstOfEachAggregate) {
  const std::string pkts =
      "!data src dst ttl\n1.0.0.1 2.0.0.1 5\n1.0.0.2 2.0.0.1 6\n1.0.0.3 2.0.0.1 5\n"
      "1.0.0.4 2.0.0.1 7\n1.0.0.5 2.0.0.1 6\n";
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip ttl) -> AggregateFirst", "src"), "1.0.0.1|1.0.0.2|1.0.0.4|");
  EXPECT_EQ(aggregates(pkts, "AggregateIP(ip ttl) -> a :: AggregateFirst -> Discard; a[1]", "src"), "1.0.0.3|1.0.0.5|");
}

TEST(AggregateLength, AndAggregatePaint) {
  const std::string pkts = "!data link src dst proto payload\n3 1.0.0.1 2.0.0.1 U \"abc\"\n6 1.0.0.1 2.0.0.1 U \"\"\n";
  EXPECT_EQ(aggregates(pkts, "EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> AggregateLength"), "45|42|");
  EXPECT_EQ(aggregates(pkts, "EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> AggregateLength(IP true)"), "31|28|");
  EXPECT_EQ(aggregates(pkts, "AggregatePaint(2)"), "3|2|");
  EXPECT_EQ(aggregates(pkts, "AggregatePaint -> AggregatePaint(2, INCREMENTAL true)"), "15|26|");
}

TEST(TimeRange, TheEarliestAndTheLatest) {
  const std::string in = write_summary("tr.txt", "!data timestamp\n5.5\n2.25\n9.000000001\n");
  auto r = run("FromIPSummaryDump(" + in +
               ", STOP true) -> t :: TimeRange -> s :: TimeRange(SIMPLE true) -> Discard;"
               "Idle -> e :: TimeRange -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("t.range"), "2.250000 9.000000001");
  EXPECT_EQ(r->h("t.interval"), "6.750000001");
  EXPECT_EQ(r->h("s.first"), "5.500000") << "SIMPLE: the first packet's";
  EXPECT_EQ(r->h("e.first"), "0.000000");
  std::string err;
  ASSERT_TRUE(r->rt->write_handler("t.reset", "", err)) << err;
  EXPECT_EQ(r->h("t.last"), "0.000000");
  finish(*r);
}

TEST(IP6Mirror, WithMarkIP6HeaderAndTheAddressAnnotation) {
  // IPv6/UDP 2001:db8::1.1000 -> 2001:db8::2.2000
  const std::string pkt =
      "60000000000811402001"
      "0db8000000000000000000000001"
      "20010db8000000000000000000000002"
      "03e807d000080000";
  const std::string out = tmpdir() + "/ip6m.pcap";
  auto r = run("InfiniteSource(DATA \\<" + pkt +
               ">, LIMIT 2, STOP true) -> MarkIP6Header -> t :: Tee;"
               "t[0] -> GetIP6Address(24) -> a :: LookupIP6Route(2001:db8::2/128 0, ::/0 1);"
               "t[1] -> SetIP6Address(2001:db8::9) -> b :: LookupIP6Route(2001:db8::2/128 0, ::/0 1);"
               "a[0] -> ca0 :: Counter -> IP6Mirror -> ToDump(" +
               out +
               ", ENCAP IP); a[1] -> Discard;"
               "b[0] -> Discard; b[1] -> cb1 :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("ca0.count"), 2u) << "GetIP6Address(24): the destination";
  EXPECT_EQ(r->n("cb1.count"), 2u) << "SetIP6Address: its address";
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 2u);
  std::string h;
  for (uint8_t c : f[0].bytes) h += fmt::format("{:02x}", c);
  EXPECT_EQ(h,
            "6000000000081140"
            "20010db8000000000000000000000002"
            "20010db8000000000000000000000001"
            "07d003e800080000");
  EXPECT_FALSE(run("Idle -> GetIP6Address -> Discard;")->ok) << "OFFSET is mandatory";
}

TEST(FullNoteQueue, AndThreadSafeQueueAreQueues) {
  auto r =
      run("InfiniteSource(LIMIT 30, BURST 30) -> a :: FullNoteQueue(10) -> Discard(ACTIVE false);"
          "InfiniteSource(LIMIT 30, BURST 30) -> b :: ThreadSafeQueue(20) -> Discard(ACTIVE false);");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.length"), 10u);
  EXPECT_EQ(r->n("b.length"), 20u);
  EXPECT_EQ(r->h("b.capacity"), "20");
  finish(*r);
}

}  // namespace shoal::test

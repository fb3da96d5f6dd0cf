// Click's IP elements for routers and traces: IPInputCombo and
// IPOutputCombo (against the chains of elements Click says they are),
// IPMirror, MarkIPCE, TruncateIPPayload, EraseIPPayload, CheckIPHeader2;
// and Click's analysis elements: AggregateIP and its siblings, TimeRange.
#include <fmt/format.h>
#include <bit>
#include <random>
#include <set>

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

namespace shoal::test {

namespace {
std::string slurp_file(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
// Bytes as InfiniteSource's DATA writes them: \<hex>.
std::string data_arg(const std::vector<uint8_t>& b) {
  std::string s = "\\<";
  for (uint8_t x : b) s += fmt::format("{:02x}", x);
  return s + ">";
}
// An IPv6 packet from 2001:db8::1 to 2001:db8::2: extension headers (each
// {type, 8-byte-unit length}) then `payload` bytes of a UDP-like upper layer.
std::vector<uint8_t> ip6_packet(const std::vector<uint8_t>& exts, uint32_t payload, uint8_t upper = 17) {
  std::vector<uint8_t> p(40);
  p[0] = 0x6b, p[1] = 0x81, p[2] = 0x23, p[3] = 0x45;  // class 0xb8 (DSCP 46, ECN 0), flow 0x12345
  p[6] = exts.empty() ? upper : exts[0];
  p[7] = 64;
  p[8] = 0x20, p[9] = 0x01, p[10] = 0x0d, p[11] = 0xb8, p[23] = 1;
  p[24] = 0x20, p[25] = 0x01, p[26] = 0x0d, p[27] = 0xb8, p[39] = 2;
  for (size_t i = 0; i < exts.size(); ++i) {
    std::vector<uint8_t> h(8, 0);
    h[0] = i + 1 < exts.size() ? exts[i + 1] : upper;
    h[2] = uint8_t(0xa0 + i);  // (marks the header)
    p.insert(p.end(), h.begin(), h.end());
  }
  for (uint32_t i = 0; i < payload; ++i) p.push_back(uint8_t(i * 7 + 3));
  k::store_be16(p.data() + 4, uint16_t(p.size() - 40));
  return p;
}
}  // namespace

// RFC 8200 §4.5, checked against the packet it came from: each fragment
// has the unfragmentable part (through the last routing header; the
// destination options after it travel in the fragments), a fragment header
// naming what followed it, offsets on 8-byte units that tile the rest, the
// M flag on all but the last, one identification, and at most MTU bytes.
TEST(IP6Fragmenter, FragmentsAsRfc8200SaysAndTheyReassemble) {
  struct Case {
    std::vector<uint8_t> exts;
    uint32_t payload, unfrag;
  };
  const Case cases[] = {{{}, 3000, 40}, {{0, 60, 43}, 1500, 64}, {{0, 43, 60}, 1001, 56}, {{60}, 700, 40}};
  for (const Case& c : cases) {
    const std::vector<uint8_t> in = ip6_packet(c.exts, c.payload);
    const std::string out = tmpdir() + "/frag6.pcap";
    auto r =
        run(fmt::format("InfiniteSource(DATA {}, LIMIT 1, STOP true) -> MarkIP6Header -> fr :: IP6Fragmenter(600) -> "
                        "ToDump({}, ENCAP IPV6);",
                        data_arg(in), out));
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("fr.fragmented"), 1u);
    finish(*r);
    auto f = read_pcap(out);
    ASSERT_GE(f.size(), 2u);
    std::vector<uint8_t> rest;
    const uint32_t id = k::load_be32(f[0].bytes.data() + c.unfrag + 4);
    for (size_t i = 0; i < f.size(); ++i) {
      const std::vector<uint8_t>& q = f[i].bytes;
      SCOPED_TRACE(fmt::format("{} extension headers, fragment {}", c.exts.size(), i));
      ASSERT_LE(q.size(), 600u);
      ASSERT_GT(q.size(), c.unfrag + 8);
      EXPECT_EQ(k::load_be16(q.data() + 4), q.size() - 40);
      // the unfragmentable part is the original's, but for the next header that now names the fragment header
      std::vector<uint8_t> un(q.begin(), q.begin() + c.unfrag), want(in.begin(), in.begin() + c.unfrag);
      const size_t nh_at = c.unfrag == 40 ? 6 : c.unfrag - 8;
      EXPECT_EQ(un[nh_at], 44);
      un[nh_at] = want[nh_at];
      un[4] = want[4], un[5] = want[5];
      EXPECT_EQ(un, want);
      const uint8_t* fh = q.data() + c.unfrag;
      EXPECT_EQ(fh[0], in[nh_at]) << "the header after the unfragmentable part";
      EXPECT_EQ(k::load_be16(fh + 2) & ~7u, rest.size()) << "offsets tile the fragmentable part";
      EXPECT_EQ(k::load_be16(fh + 2) & 1u, i + 1 < f.size() ? 1u : 0u) << "M";
      EXPECT_EQ(k::load_be32(fh + 4), id);
      if (i + 1 < f.size()) {
        EXPECT_EQ((q.size() - c.unfrag - 8) % 8, 0u);
      }
      rest.insert(rest.end(), q.begin() + c.unfrag + 8, q.end());
    }
    EXPECT_EQ(rest, std::vector<uint8_t>(in.begin() + c.unfrag, in.end())) << "reassembled";
    // and IPReassembler puts the packet back together, byte for byte
    auto back = run(fmt::format(
        "InfiniteSource(DATA {}, LIMIT 1, STOP true) -> MarkIP6Header -> IP6Fragmenter(600) -> IPReassembler -> "
        "ToDump({}, ENCAP IPV6);",
        data_arg(in), out + ".re"));
    ASSERT_TRUE(back->ok) << back->errors;
    finish(*back);
    auto g = read_pcap(out + ".re");
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0].bytes, in) << c.exts.size() << " extension headers";
  }
  // Click's form: too big to output 1 (a router's Packet Too Big); a fragment
  // is never fragmented again; an MTU the headers fill.
  std::vector<uint8_t> big = ip6_packet({}, 1300), frag = ip6_packet({44}, 1000), deep = ip6_packet({0, 0, 0, 0}, 200);
  auto r = run(fmt::format(
      "InfiniteSource(DATA {}, LIMIT 2, STOP true) -> MarkIP6Header -> fr :: IP6Fragmenter(1280) -> ok :: Counter -> "
      "Discard; fr[1] -> tb :: Counter -> Discard;"
      "InfiniteSource(DATA {}, LIMIT 1) -> MarkIP6Header -> fr;"
      "InfiniteSource(DATA {}, LIMIT 1) -> MarkIP6Header -> f2 :: IP6Fragmenter(600, FRAGMENT true) -> ok2 :: "
      "Counter -> Discard;"
      "InfiniteSource(DATA {}, LIMIT 1) -> MarkIP6Header -> f3 :: IP6Fragmenter(56) -> Discard;",
      data_arg(ip6_packet({}, 100)), data_arg(big), data_arg(frag), data_arg(deep)));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("ok.count"), 2u) << "small enough: unchanged";
  EXPECT_EQ(r->n("tb.count"), 1u) << "too big: output 1, as Click";
  EXPECT_EQ(r->n("ok2.count"), 0u);
  EXPECT_EQ(why(*r, "f2"), (std::map<std::string, uint64_t>{{"already-fragment", 1}}));
  EXPECT_EQ(why(*r, "f3"), (std::map<std::string, uint64_t>{{"mtu-below-header", 1}}));
  finish(*r);
}

// IP6Encap's header (DST_ANNO too), SetIP6DSCP keeping ECN and the flow
// label, IP6Print's line and hex as Click prints them.
TEST(IP6Encap, HeaderDscpAndPrint) {
  const std::string out = tmpdir() + "/encap6.pcap", txt = tmpdir() + "/ip6print.txt";
  auto r = run(fmt::format(
      "InfiniteSource(DATA \\<0102030405>, LIMIT 1, STOP true) -> e :: IP6Encap(udp, 2001:db8::1, 2001:db8:0:0:1::9, "
      "HLIM 20, CLASS 0x03) -> SetIP6DSCP(10) -> IP6Print(x, CONTENTS true, NBYTES 44, OUTFILE {}) -> t :: Tee;"
      "t[0] -> ToDump({}, ENCAP IPV6); t[1] -> SetIP6Address(2001:db8::77) -> IP6Encap(41, ::1, DST_ANNO) -> "
      "d :: ToDump({}, ENCAP IPV6);",
      txt, out, out + "2"));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("e.dst"), "2001:db8::1:0:0:9") << "RFC 5952: the first of two equal runs of zeros";
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 1u);
  ASSERT_EQ(f[0].bytes.size(), 45u);
  const uint8_t* h = f[0].bytes.data();
  EXPECT_EQ(k::load_be32(h), 0x60000000u | (10u << 22) | (3u << 20)) << "DSCP 10, the class's ECN bits 3 kept";
  EXPECT_EQ(k::load_be16(h + 4), 5u);
  EXPECT_EQ(h[6], 17);
  EXPECT_EQ(h[7], 20);
  EXPECT_EQ(format_ipv6(h + 8), "2001:db8::1");
  EXPECT_EQ(format_ipv6(h + 24), "2001:db8::1:0:0:9");
  auto g = read_pcap(out + "2");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(format_ipv6(g[0].bytes.data() + 24), "2001:db8::77") << "DST_ANNO";
  EXPECT_EQ(g[0].bytes[6], 41);
  EXPECT_EQ(slurp_file(txt),
            "x: 2001:db8::1 -> 2001:db8::1:0:0:9 plen 5, next 17, hlim 20\n"
            "  62b00000 00051114 20010db8 00000000 00000000 00000001\n"
            "  20010db8 00000000 00010000 00000009 01020304 \n");
}

// SetIPECN's words and numbers, the checksum kept right (CheckIPHeader).
TEST(SetIPECN, SetsTheEcnBitsAndKeepsTheChecksum) {
  const std::string in = write_summary("ecn.txt", "!data src dst proto tos\n1.0.0.1 2.0.0.1 U 0xb9\n");
  for (auto [word, want] : std::vector<std::pair<std::string, int>>{
           {"no", 0}, {"ect1", 1}, {"ECT(1)", 1}, {"ECT(0)", 2}, {"ect2", 2}, {"CE", 3}, {"ce", 3}, {"2", 2}}) {
    const std::string out = tmpdir() + "/ecn.txt.out";
    auto r =
        run(fmt::format("FromIPSummaryDump({}, STOP true, CHECKSUM true) -> SetIPECN({}) -> CheckIPHeader -> "
                        "ToIPSummaryDump({}, FIELDS ip_tos);",
                        in, word, out));
    ASSERT_TRUE(r->ok) << r->errors;
    finish(*r);
    EXPECT_EQ(summary_lines(out, "|"), std::to_string(0xb8 | want) + "|") << word;
  }
  auto bad = run("Idle -> SetIPECN(ect3) -> Discard;");
  EXPECT_FALSE(bad->ok);
}

// AnonymizeIPAddr: prefix preserving (pairs share as many leading bits out
// as in), one-to-one, CLASS and PRESERVE_8 kept; checksums stay valid
// (CheckIPHeader, CheckTCPHeader and CheckUDPHeader pass every packet),
// and the addresses written are the 'map' handler's.
TEST(AnonymizeIPAddr, PreservesPrefixesClassesAndChecksums) {
  std::string out = tmpdir() + "/anon.pcap";
  auto r = run(R"(
    a :: AnonymizeIPAddr(CLASS 4, PRESERVE_8 18);
    InfiniteSource(LIMIT 1) -> UDPIPEncap(10.1.2.3, 1000, 18.26.4.9, 53) -> a;
    InfiniteSource(DATA \<0001 0002 00000007 00000000 5002 2000 0000 0000>, LIMIT 1)
      -> IPEncap(tcp, 192.168.7.7, 10.1.2.4) -> CheckIPHeader -> SetTCPChecksum -> a;
    InfiniteSource(LIMIT 1) -> UDPIPEncap(10.1.2.3, 1000, 18.26.4.9, 53) -> CheckIPHeader
      -> ICMPError(10.9.9.9, unreachable, port) -> a;
    a -> CheckIPHeader -> c :: IPClassifier(tcp, udp, icmp);
    c[0] -> ct :: CheckTCPHeader -> w :: ToDump()" +
               out + R"(, ENCAP IP);
    c[1] -> cu :: CheckUDPHeader -> w;
    c[2] -> ci :: CheckICMPHeader -> w;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  auto map = [&](const std::string& a) {
    std::string v, err;
    EXPECT_TRUE(r->rt->read_handler("a.map", v, err, a)) << err;
    IPv4Addr x;
    EXPECT_TRUE(parse_ipv4(v, x)) << v;
    return x.host();
  };
  auto text = [](uint32_t a) { return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255); };
  EXPECT_EQ(r->n("ct.count"), 1u) << "TCP checksum still right";
  EXPECT_EQ(r->n("cu.count"), 1u) << "UDP checksum still right";
  EXPECT_EQ(r->n("ci.count"), 1u) << "ICMP checksum right after the quoted packet changed";
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 3u);
  for (auto& x : f) {
    uint32_t src = k::load_be32(x.bytes.data() + 12), dst = k::load_be32(x.bytes.data() + 16);
    if (x.bytes[9] == 1) {  // the error, and the packet it quotes
      EXPECT_EQ(src, map("10.9.9.9"));
      EXPECT_EQ(dst, map("10.1.2.3"));
      EXPECT_EQ(k::load_be32(x.bytes.data() + 28 + 12), map("10.1.2.3"));
      EXPECT_EQ(k::load_be32(x.bytes.data() + 28 + 16), map("18.26.4.9"));
      continue;
    }
    bool udp = x.bytes[9] == 17;
    EXPECT_EQ(src, map(udp ? "10.1.2.3" : "192.168.7.7"));
    EXPECT_EQ(dst, map(udp ? "18.26.4.9" : "10.1.2.4"));
  }
  std::mt19937 g(5);
  std::vector<uint32_t> in;
  for (int i = 0; i < 600; ++i) in.push_back(g() >> (i % 3 ? 0 : 12) << (i % 3 ? 0 : 12));  // some share long prefixes
  for (uint32_t x : {0x0a000001u, 0x0a000002u, 0x0a000101u, 0x12000001u, 0x13000001u, 0x10000001u, 0x11000001u})
    in.push_back(x);
  std::map<uint32_t, uint32_t> m;
  std::set<uint32_t> outs;
  for (uint32_t x : in) {
    if (x == 0 || x == 0xffffffffu) continue;
    m[x] = map(text(x));
    outs.insert(m[x]);
  }
  EXPECT_EQ(outs.size(), m.size()) << "one to one";
  auto common = [](uint32_t a, uint32_t b) { return a == b ? 32 : std::countl_zero(a ^ b); };
  int bad = 0;
  for (auto i = m.begin(); i != m.end(); ++i)
    for (auto j = std::next(i); j != m.end(); ++j) bad += common(i->first, j->first) != common(i->second, j->second);
  EXPECT_EQ(bad, 0) << "pairs whose shared prefix length changed";
  auto cls = [](uint32_t a) { return std::countl_one(a) > 4 ? 4 : std::countl_one(a); };
  for (auto [x, y] : m) EXPECT_EQ(cls(x), cls(y)) << text(x) << " -> " << text(y);
  EXPECT_EQ(m[0x12000001u] >> 24, 18u);
  EXPECT_EQ(m[0x13000001u] >> 24, 19u);
  EXPECT_TRUE((m[0x10000001u] >> 25) == 8u) << "16 and 17 stay among themselves";
  EXPECT_EQ(map("0.0.0.0"), 0u);
  EXPECT_EQ(map("255.255.255.255"), 0xffffffffu);
  finish(*r);
}

}  // namespace shoal::test

namespace shoal::test {

// ICMPPingSource against ICMPPingResponder, under simulated time: replies
// come back 3 ms later (stamped when they arrive), the third request is
// lost and every reply is seen twice, so the summary says 10 sent, 9
// received, 9 duplicates, 10% loss, RTTs of 3 ms. The requests are Click's
// bytes: TTL 200, IP ID and sequence 1, 2, ..., the identifier as Click
// writes it on Linux, checksums right (CheckIPHeader and CheckICMPHeader
// pass them all).
TEST(ICMPPingSource, CountsRepliesAndRTTsAsPing) {
  std::string out = tmpdir() + "/ping.pcap";
  set_simulated_time(true);
  auto r = run(fmt::format(R"(
    ping :: ICMPPingSource(10.0.0.1, 10.0.0.2, INTERVAL 0.01, LIMIT 10, STOP true, DATA "hello", IDENTIFIER 7,
                           VERBOSE false)
      -> t :: Tee -> ToDump({}, ENCAP IP);
    t[1] -> CheckIPHeader -> ci :: CheckICMPHeader -> lose :: Classifier(26/0003, -);
    lose[0] -> Discard;
    lose[1] -> ICMPPingResponder -> Queue -> DelayUnqueue(0.003) -> SetTimestamp -> twice :: Tee;
    twice[0] -> ping; twice[1] -> ping;
  )",
                           out));
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("ping.summary"),
            "10 packets transmitted, 9 received, +9 duplicates, 10% packet loss\n"
            "rtt min/avg/max/mdev = 3.000/3.000/3.000/0.000\n");
  EXPECT_EQ(r->h("ping.rtt_min"), "0.003s");
  EXPECT_EQ(r->h("ping.count"), "10");
  EXPECT_EQ(r->n("ci.count"), 10u) << "every request's ICMP checksum is right";
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 10u);
  for (size_t i = 0; i < f.size(); ++i) {
    const auto& b = f[i].bytes;
    ASSERT_EQ(b.size(), 33u);
    EXPECT_EQ(b[8], 200) << "TTL";
    EXPECT_EQ(k::load_be16(b.data() + 4), i + 1) << "IP ID";
    EXPECT_EQ(b[20], 8) << "echo request";
    uint16_t id;
    std::memcpy(&id, b.data() + 24, 2);
    EXPECT_EQ(id, 7) << "the identifier in this machine's byte order";
    EXPECT_EQ(k::load_be16(b.data() + 26), i + 1) << "sequence";
    EXPECT_EQ(std::string(b.begin() + 28, b.end()), "hello");
  }
  EXPECT_EQ(f[9].ts - f[0].ts, 90'000'000u) << "every INTERVAL";
  finish(*r);
}

// Pulled, one request per packet asked for, LIMIT in all; with MIRROR each
// reply goes straight back out as the next request (past LIMIT); and MIRROR
// on a pulled output is an error, as in Click.
TEST(ICMPPingSource, PulledAndMirrored) {
  // (Batches of one packet, as `shoal click` makes them: a pull of 32 gets one.)
  Options one = default_options();
  one.batch_capacity = 1;
  auto r = run_with(R"(
    ICMPPingSource(1.0.0.1, 1.0.0.2, LIMIT 6, STOP true) -> Unqueue -> c :: Counter -> Discard;
    EtherPauseSource(0:0:0:0:0:1, 5, LIMIT 4) -> Unqueue -> e :: Counter -> Discard;
  )",
                    one);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 6u);
  EXPECT_EQ(r->n("e.count"), 4u);
  finish(*r);
  set_simulated_time(true);
  auto m = run(R"(
    ping :: ICMPPingSource(1.0.0.1, 1.0.0.2, INTERVAL 0.01, LIMIT 1, MIRROR true, DATA "again", VERBOSE false)
      -> c :: Counter -> ICMPPingResponder -> Queue -> DelayUnqueue(0.001) -> SetTimestamp -> ping;
    Script(wait 0.0505, stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(m->ok) << m->errors;
  EXPECT_EQ(m->n("c.count"), 41u) << "the first at 10 ms, then one a millisecond until 50 ms";
  EXPECT_EQ(m->h("ping.rtt_max"), "0.001s");
  finish(*m);
  auto bad = run("ICMPPingSource(1.0.0.1, 1.0.0.2, MIRROR true) -> Unqueue -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("MIRROR invalid on pull element"), std::string::npos) << bad->errors;
}

}  // namespace shoal::test

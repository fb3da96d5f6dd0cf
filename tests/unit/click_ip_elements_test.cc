// Click's IP elements for routers and traces: IPInputCombo and
// IPOutputCombo (against the chains of elements Click says they are),
// IPMirror, MarkIPCE, TruncateIPPayload, EraseIPPayload, CheckIPHeader2.
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

}  // namespace shoal::test

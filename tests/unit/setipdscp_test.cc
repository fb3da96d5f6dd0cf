// SetIPDSCP on the CPU, offloaded in NBA's form and in Snap's form (the
// host backend, or CUDA with SHOAL_TEST_DEVICE=cuda): the same frames, each
// with the DSCP set, the ECN bits kept and a header checksum that verifies.
#include <fmt/format.h>

#include "helpers.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/offload/element.hh"

namespace shoal {
namespace {

std::string dscp_tmp(const std::string& n) { return test::tmpdir() + "/dscp-" + n; }

// IMIX UDP/TCP/ICMP frames with ToS 0x03 (both ECN bits set) on some.
void make_input(const std::string& path) {
  auto r = test::run(
      fmt::format("FastUDPFlows(IMIX true, PROTO mix, FLOWS 64, LIMIT 3000, STOP true) -> ToDump({});", path));
  ASSERT_TRUE(r->ok) << r->errors;
  test::finish(*r);
}

void expect_marked(const std::vector<test::Frame>& frames, uint8_t dscp) {
  for (const auto& f : frames) {
    ASSERT_GE(f.bytes.size(), 34u);
    const uint8_t* ip = f.bytes.data() + 14;
    EXPECT_EQ(ip[1] >> 2, dscp);
    EXPECT_EQ(k::ip_checksum(ip, uint32_t(ip[0] & 0xf) * 4), 0) << "the header checksum verifies";
  }
}

TEST(SetIPDSCP, CpuNbaAndSnapFormsMarkEveryPacketAlike) {
  std::string in = dscp_tmp("in.pcap");
  make_input(in);
  auto input = test::read_pcap(in);
  ASSERT_EQ(input.size(), 3000u);
  constexpr const char* kGraph = "FromDump({}, STOP true) -> CheckIPHeader(14) -> {} -> Unstrip(0) -> ToDump({});";
  auto cpu = test::run(fmt::format(fmt::runtime(kGraph), in, "d :: SetIPDSCP(46)", dscp_tmp("cpu.pcap")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  auto cpu_out = test::read_pcap(dscp_tmp("cpu.pcap"));
  ASSERT_EQ(cpu_out.size(), input.size());
  expect_marked(cpu_out, 46);
  // Only the ToS byte and the checksum changed.
  for (size_t i = 0; i < input.size(); ++i) {
    auto a = input[i].bytes, b = cpu_out[i].bytes;
    ASSERT_EQ(a.size(), b.size());
    a[15] = b[15], a[24] = b[24], a[25] = b[25];
    EXPECT_EQ(a, b) << "packet " << i;
  }
  test::finish(*cpu);

  auto nba = test::run_with(
      fmt::format(fmt::runtime(kGraph), in, "OffloadBalancer(1) -> d :: SetIPDSCP(46)", dscp_tmp("nba.pcap")),
      test::default_options());
  ASSERT_TRUE(nba->ok) << nba->errors;
  EXPECT_EQ(nba->n("d.offload_packets"), input.size());
  EXPECT_EQ(nba->n("d.offload_cpu_fault"), 0u) << "the device did the work";
  EXPECT_GT(nba->n("d.offload_device_aggregates"), 0u);
  EXPECT_EQ(nba->h("d.offload_chain").substr(0, 7), "d\nrange");
  test::finish(*nba);

  auto snap = test::run_with(
      fmt::format(fmt::runtime(kGraph), in,
                  "Batcher(512) -> h :: HostToDevice -> GPUSetIPDSCP(46) -> DeviceToHost -> CompletionQueue -> "
                  "Debatcher",
                  dscp_tmp("snap.pcap")),
      test::default_options());
  ASSERT_TRUE(snap->ok) << snap->errors;
  EXPECT_EQ(snap->n("h.cpu_fault"), 0u) << "the device did the work";
  // (an aggregate that finds every device slot busy runs on the CPU, counted in cpu_busy)
  EXPECT_GT(snap->n("h.device_aggregates"), 0u);
  EXPECT_EQ(snap->n("h.device_aggregates") + snap->n("h.cpu_busy"), snap->n("h.aggregates"));
  // Two 2-byte ranges each way per packet.
  EXPECT_EQ(snap->n("h.roi_bytes"), 4 * input.size());
  test::finish(*snap);
  for (const char* v : {"nba.pcap", "snap.pcap"}) {
    auto out = test::read_pcap(dscp_tmp(v));
    ASSERT_EQ(out.size(), cpu_out.size()) << v;
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i].bytes, cpu_out[i].bytes) << v << " packet " << i;
  }
}

TEST(SetIPDSCP, KeepsEcnRejectsBadValuesAndDropsWhatIsNotIP) {
  // ECN bits kept: ToS 0xff (DSCP 63, both ECN bits) becomes 10 << 2 | 3.
  std::string in = dscp_tmp("ecn.pcap");
  auto gen =
      test::run(fmt::format("InfiniteSource(LENGTH 30, LIMIT 10, STOP true) -> UDPIPEncap(10.0.0.1, 1000, "
                            "10.0.0.2, 2000, TOS 255) -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:02) -> "
                            "ToDump({});",
                            in));
  ASSERT_TRUE(gen->ok) << gen->errors;
  test::finish(*gen);
  auto r = test::run(fmt::format("FromDump({}, STOP true) -> CheckIPHeader(14) -> d :: SetIPDSCP(10) -> ToDump({});",
                                 in, dscp_tmp("ecn-out.pcap")));
  ASSERT_TRUE(r->ok) << r->errors;
  std::string err;
  EXPECT_EQ(r->h("d.dscp"), "10");
  EXPECT_TRUE(r->rt->write_handler("d.dscp", "12", err)) << err;
  EXPECT_EQ(r->h("d.dscp"), "12");
  EXPECT_FALSE(r->rt->write_handler("d.dscp", "64", err));
  test::finish(*r);
  auto ecn = test::read_pcap(dscp_tmp("ecn-out.pcap"));
  ASSERT_EQ(ecn.size(), 10u);
  expect_marked(ecn, 10);
  for (const auto& f : ecn) EXPECT_EQ(f.bytes[15], 10 << 2 | 3);

  auto b = test::run("InfiniteSource(LIMIT 1, STOP true) -> SetIPDSCP(64) -> Discard;");
  EXPECT_FALSE(b->ok);
  EXPECT_NE(b->errors.find("DSCP: 64 is not 0-63"), std::string::npos) << b->errors;
  // Without a network header annotation: dropped with a reason.
  auto n = test::run("InfiniteSource(LIMIT 5, STOP true) -> d :: SetIPDSCP(1) -> Discard;");
  ASSERT_TRUE(n->ok) << n->errors;
  EXPECT_EQ(n->n("d.drops"), 5u);
  uint64_t nohdr = 0;
  for (auto& d : n->rt->router(0).find("d")->drop_reasons())
    if (d.name == "no-ip-header") nohdr = d.count.get();
  EXPECT_EQ(nohdr, 5u);
  test::finish(*n);
}

// Each GPU form registered by SHOAL_OFFLOADABLE_ELEMENT documents SKIP
// exactly when the element can run a skipped packet on the host, and is an
// offloadable element in Snap's form.
TEST(OffloadableElement, GpuFormsDocumentWhatTheyAccept) {
  int forms = 0;
  for (const ElementInfo* i : Registry::instance().all()) {
    if (!i->name.starts_with("GPU")) continue;
    std::unique_ptr<Element> e(i->make());
    auto* o = dynamic_cast<offload::Offloadable*>(e.get());
    if (!o) continue;
    ++forms;
    EXPECT_FALSE(o->offload_joins_chains()) << i->name << " is a Snap-form element";
    bool doc_skip = false, doc_pred = false;
    for (const ArgDoc& a : i->args) doc_skip |= a.name == "SKIP", doc_pred |= a.name == "PRED";
    EXPECT_TRUE(doc_pred) << i->name;
    EXPECT_EQ(doc_skip, o->offload_has_host_packet()) << i->name;
    EXPECT_EQ(i->ports, "1/1") << i->name;
  }
  EXPECT_GE(
      forms,
      7);  // GPUCheckIPHeader, GPUDecIPTTL, GPUIPLookup, GPUIP6Lookup, GPUSDNClassifier, GPUIDSMatcher, GPUSetIPDSCP
}

}  // namespace
}  // namespace shoal

// The capture reader against libpcap itself: classic pcap files in both byte
// orders and both timestamp precisions are read from the mapping with the
// same records, lengths and timestamps libpcap gives; truncated files and
// absurd record lengths are errors after the records that are whole; pcapng
// goes through libpcap.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "helpers.hh"
#include "shoal/io/pcap.hh"

namespace shoal {
namespace {

struct Rec {
  uint32_t sec, frac, wire;
  std::vector<uint8_t> bytes;
};

void put32(std::string& s, uint32_t v, bool swap) {
  if (swap) v = __builtin_bswap32(v);
  s.append(reinterpret_cast<const char*>(&v), 4);
}

// A classic pcap file, written by hand.
std::string pcap_file(const std::vector<Rec>& recs, bool swap, bool nano, uint32_t linktype = 1) {
  std::string s;
  put32(s, nano ? 0xa1b23c4du : 0xa1b2c3d4u, swap);
  uint16_t vmaj = 2, vmin = 4;
  if (swap) vmaj = __builtin_bswap16(vmaj), vmin = __builtin_bswap16(vmin);
  s.append(reinterpret_cast<const char*>(&vmaj), 2);
  s.append(reinterpret_cast<const char*>(&vmin), 2);
  put32(s, 0, swap);
  put32(s, 0, swap);
  put32(s, 65535, swap);
  put32(s, linktype, swap);
  for (const Rec& r : recs) {
    put32(s, r.sec, swap);
    put32(s, r.frac, swap);
    put32(s, uint32_t(r.bytes.size()), swap);
    put32(s, r.wire, swap);
    s.append(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size());
  }
  return s;
}

std::string write_file(const std::string& name, const std::string& bytes) {
  std::string path = test::tmpdir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

struct Got {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<uint64_t> ts;
  std::vector<uint32_t> wire;
  std::string err;
};

Got read_shoal(const std::string& path, bool* mapped = nullptr) {
  Got g;
  io::PcapReader rd;
  if (!rd.open(path, g.err)) return g;
  if (mapped) *mapped = rd.mapped();
  const uint8_t* d;
  uint32_t cap, wire;
  uint64_t ts;
  int r;
  while ((r = rd.next(d, cap, wire, ts, g.err)) == 1) {
    g.bytes.emplace_back(d, d + cap);
    g.ts.push_back(ts);
    g.wire.push_back(wire);
  }
  if (r == 0) g.err.clear();
  return g;
}

Got read_libpcap(const std::string& path) {
  Got g;
  char eb[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, eb);
  if (!p) return g.err = eb, g;
  pcap_pkthdr* h;
  const u_char* d;
  int r;
  while ((r = pcap_next_ex(p, &h, &d)) == 1) {
    g.bytes.emplace_back(d, d + h->caplen);
    g.ts.push_back(uint64_t(h->ts.tv_sec) * 1000000000ull + uint64_t(h->ts.tv_usec));
    g.wire.push_back(h->len);
  }
  if (r != PCAP_ERROR_BREAK) g.err = pcap_geterr(p);
  pcap_close(p);
  return g;
}

std::vector<Rec> random_records(std::mt19937& rng, int n, bool nano) {
  std::vector<Rec> recs;
  for (int i = 0; i < n; ++i) {
    Rec r{1700000000u + uint32_t(i), uint32_t(rng() % (nano ? 1000000000u : 1000000u)), 0, {}};
    r.bytes.resize(rng() % 1600);
    for (auto& b : r.bytes) b = uint8_t(rng());
    r.wire = uint32_t(r.bytes.size()) + (i % 3 == 0 ? 100 : 0);  // some snapped
    recs.push_back(std::move(r));
  }
  return recs;
}

TEST(PcapReader, MappedRecordsEqualLibpcapsInBothByteOrdersAndPrecisions) {
  std::mt19937 rng(5);
  for (bool swap : {false, true})
    for (bool nano : {false, true}) {
      auto recs = random_records(rng, 300, nano);
      std::string path = write_file(fmt::format("map-{}-{}.pcap", swap, nano), pcap_file(recs, swap, nano));
      bool mapped = false;
      Got a = read_shoal(path, &mapped), b = read_libpcap(path);
      EXPECT_TRUE(mapped) << "a classic pcap file is read from the mapping";
      EXPECT_EQ(a.err, "");
      ASSERT_EQ(b.err, "");
      ASSERT_EQ(a.bytes.size(), recs.size());
      EXPECT_EQ(a.bytes, b.bytes) << "swap " << swap << " nano " << nano;
      EXPECT_EQ(a.ts, b.ts);
      EXPECT_EQ(a.wire, b.wire);
    }
}

TEST(PcapReader, TruncatedFilesAndAbsurdLengthsAreErrorsAfterTheWholeRecords) {
  std::mt19937 rng(6);
  auto recs = random_records(rng, 20, true);
  std::string whole = pcap_file(recs, false, true);
  size_t last = 16 + recs.back().bytes.size();
  // cut inside the last record's data, and inside its header
  for (size_t cut : {size_t(1), last - 8}) {
    std::string path = write_file("cut.pcap", whole.substr(0, whole.size() - cut));
    Got a = read_shoal(path);
    EXPECT_EQ(a.bytes.size(), recs.size() - 1);
    EXPECT_NE(a.err.find("truncated"), std::string::npos) << a.err;
  }
  // a record claiming 1 GB
  std::string bad = whole;
  uint32_t huge = 1u << 30;
  std::memcpy(&bad[24 + 8], &huge, 4);
  Got a = read_shoal(write_file("huge.pcap", bad));
  EXPECT_TRUE(a.bytes.empty());
  EXPECT_NE(a.err.find("invalid packet capture length"), std::string::npos) << a.err;
  // just a header: no packets, no error
  Got e = read_shoal(write_file("empty.pcap", whole.substr(0, 24)));
  EXPECT_TRUE(e.bytes.empty());
  EXPECT_EQ(e.err, "");
}

TEST(PcapReader, PcapngIsMappedAndReadLikeLibpcap) {
  std::string path = std::string(SHOAL_SOURCE_DIR) + "/tests/golden/pcapng-in/in.pcapng";
  ASSERT_TRUE(std::ifstream(path).good()) << path;
  bool mapped = false;
  Got a = read_shoal(path, &mapped), b = read_libpcap(path);
  EXPECT_TRUE(mapped);
  EXPECT_EQ(a.err, "");
  EXPECT_FALSE(a.bytes.empty());
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.ts, b.ts);
  EXPECT_EQ(a.wire, b.wire);
}

// A big-endian pcapng written by hand, with what libpcap refuses: three
// interfaces of different link types (Ethernet at nanoseconds, 802.11,
// raw IP at 2^-10 s with a time offset), a simple packet block, a comment
// block, and a second section that starts interfaces over.
struct NgBuilder {
  std::string out;
  void u16(uint16_t v) { out += char(v >> 8), out += char(v); }
  void u32(uint32_t v) { u16(uint16_t(v >> 16)), u16(uint16_t(v)); }
  void block(uint32_t type, const std::string& body) {
    std::string b = body;
    while (b.size() % 4) b += '\0';
    u32(type), u32(uint32_t(b.size() + 12));
    out += b;
    u32(uint32_t(b.size() + 12));
  }
  static std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }
  static std::string be16(uint16_t v) { return {char(v >> 8), char(v)}; }
  void section() { block(0x0A0D0D0A, be32(0x1A2B3C4D) + be16(1) + be16(0) + std::string(8, '\xff')); }
  void iface(uint16_t lt, std::string opts = "") { block(1, be16(lt) + be16(0) + be32(65535) + opts + be32(0)); }
  void epb(uint32_t ifid, uint64_t units, const std::string& data) {
    block(6, be32(ifid) + be32(uint32_t(units >> 32)) + be32(uint32_t(units)) + be32(uint32_t(data.size())) +
                 be32(uint32_t(data.size())) + data);
  }
};

TEST(PcapReader, PcapngInterfacesEachWithTheirLinkTypeAndClock) {
  NgBuilder ng;
  ng.section();
  ng.iface(1, NgBuilder::be16(9) + NgBuilder::be16(1) + std::string("\x09\0\0\0", 4));  // ns
  ng.iface(105);
  std::string tsoff = NgBuilder::be16(14) + NgBuilder::be16(8) + NgBuilder::be32(0) + NgBuilder::be32(100);
  ng.iface(101, NgBuilder::be16(9) + NgBuilder::be16(1) + std::string("\x8a\0\0\0", 4) + tsoff);  // 2^-10 s, +100 s
  ng.epb(0, 1700000000123456789ull, std::string(60, 'e'));
  ng.epb(1, 5, std::string(40, 'w'));
  ng.epb(2, 1024 * 3 + 512, std::string(20, 'r'));
  ng.block(3, NgBuilder::be32(60) + std::string(60, 's'));  // simple packet: interface 0, no time
  ng.block(0x0BAD, "a comment nobody reads");
  ng.section();
  ng.iface(101);  // microseconds; interface 0 again
  ng.epb(0, 1500000, std::string(20, 'q'));
  std::string path = write_file("mixed.pcapng", ng.out);
  io::PcapReader rd;
  std::string err;
  ASSERT_TRUE(rd.open(path, err)) << err;
  EXPECT_TRUE(rd.pcapng());
  EXPECT_EQ(rd.linktype(), DLT_EN10MB);
  struct Want {
    int lt;
    uint64_t ts;
    char byte;
    uint32_t len;
  };
  const Want want[] = {{DLT_EN10MB, 1700000000123456789ull, 'e', 60},
                       {105, 5000, 'w', 40},
                       {DLT_RAW, 103500000000ull, 'r', 20},
                       {DLT_EN10MB, 0, 's', 60},
                       {DLT_RAW, 1500000000ull, 'q', 20}};
  for (const Want& w : want) {
    const uint8_t* d;
    uint32_t cap, wire;
    uint64_t ts;
    ASSERT_EQ(rd.next(d, cap, wire, ts, err), 1) << err;
    EXPECT_EQ(rd.packet_linktype(), w.lt);
    EXPECT_EQ(ts, w.ts);
    EXPECT_EQ(cap, w.len);
    EXPECT_EQ(char(d[0]), w.byte);
  }
  const uint8_t* d;
  uint32_t cap, wire;
  uint64_t ts;
  EXPECT_EQ(rd.next(d, cap, wire, ts, err), 0) << err;

  // FromDump carries the Ethernet and raw IP packets and drops the 802.11
  // one with a reason; cut inside the last block, it reads up to the cut.
  auto r = test::run("FromDump(" + path + ", STOP true) -> c :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 4u);
  uint64_t unsupported = 0;
  for (auto& d : r->rt->router(0).find("FromDump@1")->drop_reasons())
    if (d.name == "unsupported-link-type") unsupported = d.count.get();
  EXPECT_EQ(unsupported, 1u);
  test::finish(*r);
  std::string cut = write_file("cut.pcapng", ng.out.substr(0, ng.out.size() - 10));
  auto c = test::run("FromDump(" + cut + ", STOP true) -> c :: Counter -> Discard;");
  ASSERT_TRUE(c->ok) << c->errors;
  EXPECT_EQ(c->n("c.count"), 3u);
  ASSERT_EQ(c->rt->errors().size(), 1u);
  EXPECT_NE(c->rt->errors()[0].find("truncated"), std::string::npos) << c->rt->errors()[0];
  test::finish(*c, true);
}

// The writer against a real full disk (/dev/full) and a real file-size
// limit (RLIMIT_FSIZE, in a child process): the error names the file and
// the reason, the records lost are counted, and the file is cut at its last
// whole record, so libpcap reads every record written and nothing else.
TEST(PcapWriter, WriteErrorsAreCountedAndLeaveAWholeFile) {
  io::PcapWriter full;
  std::string err;
  EXPECT_FALSE(full.open("/dev/full", 1, 65535, true, err));
  EXPECT_EQ(err, "/dev/full: write failed: No space left on device");

  std::string path = test::tmpdir() + "/limited.pcap";
  uint8_t frame[300] = {};
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit rl{100000, 100000};
    setrlimit(RLIMIT_FSIZE, &rl);
    io::PcapWriter w;
    std::string e;
    if (!w.open(path, 1, 65535, true, e)) _exit(10);
    uint64_t lost = 0;
    for (int batch = 0; batch < 10; ++batch) {
      for (int i = 0; i < 100; ++i) {
        frame[0] = uint8_t(batch * 100 + i);
        w.write(frame, sizeof frame, sizeof frame, 1);
      }
      lost += w.flush();
    }
    bool closed = w.close();
    // 100000 bytes: the 24-byte header and 316-byte records hold 316 whole
    // records; all others are lost, and the error says why.
    bool ok = !closed && lost == 1000 - 316 && w.records_lost() == lost && w.records_written() == 1 + 316 &&
              w.error() == path + ": write failed: File too large";
    _exit(ok ? 0 : 11);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  Got a = read_libpcap(path);
  EXPECT_EQ(a.err, "");
  ASSERT_EQ(a.bytes.size(), 316u);
  for (size_t i = 0; i < a.bytes.size(); ++i) EXPECT_EQ(uint8_t(a.bytes[i][0]), uint8_t(i));
}

}  // namespace
}  // namespace shoal

// Click's small elements (VLANEncap/VLANDecap/SetVLANAnno, StoreIPAddress,
// Resize, the queue family) and Click's Script language, checked against
// the values Click's own regression tests expect.
#include <fmt/format.h>
#include <bit>
#include <set>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "helpers.hh"
#include "shoal/elements/io/ipsummarydump.hh"
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

namespace {
std::vector<uint8_t> ip_opt_bytes(const std::string& text) {
  std::string b;
  if (!ipsum::parse_ip_options(text, b)) return {0xff, 0xff, 0xff};  // (no option is that: a failed parse)
  return std::vector<uint8_t>(b.begin(), b.end());
}
std::string ip_opt_text(const std::vector<uint8_t>& b, bool padding = false) {
  std::string s;
  ipsum::write_ip_options(s, b.data(), b.size(), padding);
  return s;
}
}  // namespace

TEST(IPSummaryDump, IpOptionsInClicksText) {
  // The bytes, worked out from RFC 791: record route holds type 7, its
  // length, a pointer from 1 at the type byte (4: the first address), the
  // addresses; '+3' is room for three more.
  EXPECT_EQ(hex(ip_opt_bytes("rr{2.3.4.5}+3")),
            "071308"
            "02030405" +
                std::string(24, '0'));
  EXPECT_EQ(hex(ip_opt_bytes("rr{}+1")),
            "070704"
            "00000000");
  // Strict source route, the pointer at the third address (12); ',' before '^' is allowed.
  EXPECT_EQ(hex(ip_opt_bytes("ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2}")),
            "89130c"
            "80042d3c"
            "8004313d"
            "01010101"
            "02020202");
  EXPECT_EQ(ip_opt_bytes("ssrr{128.4.45.60,128.4.49.61,^1.1.1.1,2.2.2.2}"),
            ip_opt_bytes("ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2}"));
  EXPECT_EQ(hex(ip_opt_bytes("lsrr{1.2.3.4^}")),
            "830708"
            "01020304");
  // Timestamps (RFC 791: type 68, pointer from 5, overflow and flag nibbles);
  // '!' is the top bit.
  EXPECT_EQ(hex(ip_opt_bytes("ts{1,10000,!45}+2")),
            "441811"
            "00"
            "00000001"
            "00002710"
            "8000002d" +
                std::string(16, '0'));
  EXPECT_EQ(hex(ip_opt_bytes("ts.ip{1.0.0.1=!8320,1.0.0.2=8321}++5")),
            "441415"
            "51"
            "01000001"
            "80002080"
            "01000002"
            "00002081");
  // Addresses in a plain 'ts{' make it ts.ip, or ts.preip with a pointer among them.
  EXPECT_EQ(ip_opt_bytes("ts{1.0.0.1=!8320,1.0.0.2=8321}++5"), ip_opt_bytes("ts.ip{1.0.0.1=!8320,1.0.0.2=8321}++5"));
  EXPECT_EQ(ip_opt_bytes("ts.3{1.0.0.1=1,^1.0.0.3,1.0.0.4=?}+1"),
            ip_opt_bytes("ts.preip{1.0.0.1=1^1.0.0.3,1.0.0.4}+1"));
  EXPECT_EQ(ip_opt_bytes("ts{1.0.0.1=1^1.0.0.3}"), ip_opt_bytes("ts.preip{1.0.0.1=1^1.0.0.3}"));
  // Other options by number, padding by name.
  EXPECT_EQ(hex(ip_opt_bytes("nop;nop;eol")), "010100");
  EXPECT_EQ(hex(ip_opt_bytes("148=0:0;98")),
            "94040000"
            "62");
  EXPECT_EQ(hex(ip_opt_bytes(".")), "");

  // Written as Click writes them: what Click's FromIPSummaryDump-ipopt-01 expects.
  for (const char* canon :
       {"ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2}", "rr{2.3.4.5}+3", "rr{}+1",
        "ts.ip{1.0.0.1=!8320,1.0.0.2=8321^}++5", "ts.preip{1.0.0.1=1^1.0.0.3,1.0.0.4,0.0.0.0}", "ts{1,10000,!45}+2",
        "ts{1,10000,!45}+2;rr{}+1", "148=0:0", "lsrr{1.2.3.4^}", "ts.2{1.0.0.1=5}+1"})
    EXPECT_EQ(ip_opt_text(ip_opt_bytes(canon)), canon);
  EXPECT_EQ(ip_opt_text(ip_opt_bytes("ts{1,10000,!45^0,0};rr{}+1")), "ts{1,10000,!45}+2;rr{}+1");
  EXPECT_EQ(ip_opt_text(ip_opt_bytes("nop;nop;eol")), ".") << "padding is left out";
  EXPECT_EQ(ip_opt_text(ip_opt_bytes("nop;nop;eol"), true), "nop;nop;eol");

  // Refused text, and bytes that are no options: '?'.
  for (const char* bad : {"rr{1.2.3}", "rr{1.2.3.256}", "ts{1.0.0.1}", "ts.16{1}", "x", "rr{}+1;", "300", "7=1:300",
                          "rr{}+9;rr{}+1", "?"})
    EXPECT_EQ(ip_opt_bytes(bad), (std::vector<uint8_t>{0xff, 0xff, 0xff})) << bad;
  EXPECT_EQ(ip_opt_text({7, 2}), "?") << "a route option shorter than its pointer";
  EXPECT_EQ(ip_opt_text({68, 3, 5}), "?");
  EXPECT_EQ(ip_opt_text({1, 130, 10, 0, 0}), "?") << "an option longer than the header's options";
  EXPECT_EQ(ip_opt_text({1, 130}), "?");
  EXPECT_EQ(ip_opt_text({0, 7, 3, 4}), ".") << "nothing after EOL counts";
  // A header's worth of leading NOPs beyond 40 bytes is dropped as padding.
  EXPECT_EQ(ip_opt_bytes("nop;nop;nop;nop;nop;nop;nop;rr{}+8"), ip_opt_bytes("nop;nop;nop;nop;nop;rr{}+8"));
}

TEST(IPSummaryDump, IpOptionBytesSurviveTheirText) {
  // Generated well-formed options (pointers on an entry, room after the
  // pointer empty, as the text can say): written with padding and read
  // back, the bytes are the same.
  std::mt19937 rng(7);
  auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> o;
    while (o.size() < 40) {
      const uint32_t room = uint32_t(40 - o.size());
      const uint32_t kind = pick(5);
      std::vector<uint8_t> x;
      if (kind == 0) {
        x = {1};
      } else if (kind == 1 && room >= 3) {  // a route: n addresses, the pointer at entry k (n: full)
        const uint8_t type = std::array<uint8_t, 3>{7, 131, 137}[pick(3)];
        const uint32_t n = pick((room - 3) / 4 + 1), k = pick(n + 1);
        x = {type, uint8_t(3 + 4 * n), uint8_t(4 + 4 * k)};
        for (uint32_t e = 0; e < n; ++e)
          for (int b = 0; b < 4; ++b) x.push_back(type == 7 && e >= k ? 0 : uint8_t(rng()));
      } else if (kind == 2 && room >= 4) {  // timestamps: flag 0, 1 or 3
        const uint8_t flag = std::array<uint8_t, 3>{0, 1, 3}[pick(3)];
        const uint32_t size = flag ? 8 : 4, n = pick((room - 4) / size + 1), k = pick(n + 1);
        x = {68, uint8_t(4 + size * n), uint8_t(5 + size * k), uint8_t(pick(16) << 4 | flag)};
        for (uint32_t e = 0; e < n; ++e) {
          const bool after = e >= k;
          for (int b = 0; b < 4 && flag; ++b) x.push_back(after && flag == 1 ? 0 : uint8_t(rng()));
          for (int b = 0; b < 4; ++b) x.push_back(after ? 0 : uint8_t(rng()));
        }
      } else if (kind == 3 && room >= 3) {  // another option, with data
        uint8_t type;
        do type = uint8_t(rng());
        while (type <= 1 || type == 7 || type == 68 || type == 131 || type == 137);
        x = {type, uint8_t(3 + pick(std::min(room - 3, 8u) + 1))};
        while (x.size() < x[1]) x.push_back(uint8_t(rng()));
      } else {
        break;
      }
      o.insert(o.end(), x.begin(), x.end());
    }
    if (pick(2) && o.size() < 40) o.push_back(0);
    const std::string text = ip_opt_text(o, true);
    ASSERT_EQ(ip_opt_bytes(text), o) << text;
  }
  // Mangled text (characters changed, cut, repeated): what parses writes
  // back to text that parses to the same bytes, and nothing reads out of
  // bounds (the sanitizer builds run this too).
  const std::string seeds[] = {"ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2}",
                               "rr{2.3.4.5}+3",
                               "ts.ip{1.0.0.1=!8320,1.0.0.2=8321^}++5",
                               "ts.preip{1.0.0.1=1^1.0.0.3,1.0.0.4=?}+1",
                               "ts{1,10000,!45}+2;rr{}+1;nop;eol",
                               "148=0:0;98;lsrr{1.2.3.4^}"};
  const std::string alphabet = "0123456789.,;:{}^=!?+rstlpnoei x";
  for (int round = 0; round < 20000; ++round) {
    std::string t = seeds[pick(std::size(seeds))];
    for (uint32_t m = pick(4) + 1; m > 0; --m) {
      const uint32_t at = pick(uint32_t(t.size()) + 1);
      switch (pick(3)) {
        case 0:
          if (at < t.size()) t[at] = alphabet[pick(uint32_t(alphabet.size()))];
          break;
        case 1: t.resize(at); break;
        default: t.insert(at, t.substr(at, pick(8)));
      }
    }
    std::string b;
    if (!ipsum::parse_ip_options(t, b)) continue;
    ASSERT_LE(b.size(), 40u) << t;
    std::vector<uint8_t> bytes(b.begin(), b.end());
    const std::string again = ip_opt_text(bytes, true);
    if (again == "?") continue;  // (text can make bytes no option reads, as Click's can: '7' alone)
    ASSERT_EQ(ip_opt_text(ip_opt_bytes(again), true), again) << t << " -> " << again;
  }
}

TEST(IPSummaryDump, ClicksBinaryRecords) {
  // One record, as Click's format lays it out: its length (itself
  // included), then ip_src, ip_dst (4 bytes), sport, dport (2), ip_proto (1),
  // ip_opt (a length byte, the bytes).
  const std::string in = tmpdir() + "/bin-in.txt", bin = tmpdir() + "/bin.dump";
  std::ofstream(in) << "!data src dst sport dport proto ip_opt\n1.0.0.1 1.0.0.2 10 20 T rr{}+1\n";
  auto r = run("FromIPSummaryDump(" + in + ", STOP true) -> ToIPSummaryDump(" + bin +
               ", BINARY true, FIELDS src dst sport dport proto ip_opt);");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  const std::string file = slurp(bin);
  const std::string header = "!IPSummaryDump 1.3\n!data ip_src ip_dst sport dport ip_proto ip_opt\n!binary\n";
  ASSERT_EQ(file.substr(0, header.size()), header);
  EXPECT_EQ(hex(std::vector<uint8_t>(file.begin() + long(header.size()), file.end())),
            "0000001a"
            "01000001"
            "01000002"
            "000a"
            "0014"
            "06"
            "08"
            "07070400000000"
            "00");

  // Packets of every protocol, with IP and TCP options, through a binary
  // dump and back: the same text as written directly.
  const char* fields =
      "ntimestamp ip_src sport ip_dst dport ip_proto ip_len ip_ttl ip_id ip_tos ip_frag ip_fragoff ip_hl ip_opt "
      "tcp_seq tcp_ack tcp_flags tcp_window tcp_urp tcp_opt udp_len icmp_type icmp_code payload_len count";
  const std::string direct = tmpdir() + "/bin-direct.txt", back = tmpdir() + "/bin-back.txt";
  std::ofstream(in) << "!data timestamp src dst sport dport proto ip_opt tcp_opt ip_fragoff tcp_flags payload\n"
                       "1.5 1.0.0.1 1.0.0.2 10 20 T ts.ip{1.0.0.1=5}+1 mss1460;sackok . SA \"abc\"\n"
                       "2.25 1.0.0.3 1.0.0.4 30 40 U ssrr{1.2.3.4^5.6.7.8} - 0! - \"de\"\n"
                       "3.125 1.0.0.5 1.0.0.6 - - I . - 1480+ - \"\"\n";
  r = run(
      "FastUDPFlows(LIMIT 20, FLOWS 4, PROTO mix, LENGTH 80) -> t :: Tee;"
      "FromIPSummaryDump(" +
      in +
      ", STOP true, CHECKSUM true) -> t;"
      "t[0] -> ToIPSummaryDump(" +
      direct + ", FIELDS " + fields + "); t[1] -> ToIPSummaryDump(" + bin + ", BINARY true, FIELDS " + fields + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  r = run("FromIPSummaryDump(" + bin + ", STOP true, CHECKSUM true) -> c :: Counter -> ToIPSummaryDump(" + back +
          ", FIELDS " + fields + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 23u);
  finish(*r);
  EXPECT_EQ(slurp(back), slurp(direct));
  EXPECT_NE(slurp(direct).find(" ts.ip{1.0.0.1=5}+1 "), std::string::npos) << slurp(direct);

  // A record cut short: the packets before it, then a counted bad record.
  std::string cut = slurp(bin);
  cut.resize(cut.size() - 3);
  std::ofstream(bin, std::ios::trunc) << cut;
  r = run("f :: FromIPSummaryDump(" + bin + ", STOP true) -> c :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 22u);
  EXPECT_EQ(r->n("f.bad_lines"), 1u);
  finish(*r);

  // Fields without a binary form are a configuration error, as in Click.
  r = run("InfiniteSource(LIMIT 1) -> ToIPSummaryDump(" + bin + ", BINARY true, FIELDS src payload);");
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("cannot use field payload with BINARY"), std::string::npos) << r->errors;
}

TEST(IPSummaryDump, GarbageBinaryRecordsAreBadLinesNotCrashes) {
  // Random records after the header (lengths right, wrong, cut short; the
  // contents random): every record makes a packet or a counted bad line,
  // and the sanitizer builds watch the reading.
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    std::string f = "!IPSummaryDump 1.3\n!data ip_src ip_dst sport dport ip_proto ip_opt tcp_opt ip_len\n!binary\n";
    uint32_t records = 0;
    for (int k = 0; k < 20; ++k) {
      const uint32_t body = rng() % 60;
      uint32_t len = body + 4;
      if (rng() % 8 == 0) len = rng() % 70;     // a length that lies
      if (rng() % 10 == 0) len |= 0x80000000u;  // a metadata record
      for (int sh = 24; sh >= 0; sh -= 8) f += char(len >> sh);
      for (uint32_t i = 0; i < body; ++i) f += char(rng());
      ++records;
    }
    const std::string in = tmpdir() + "/garbage.dump";
    std::ofstream(in, std::ios::binary | std::ios::trunc) << f;
    auto r = run("f :: FromIPSummaryDump(" + in + ", STOP true) -> c :: Counter -> Discard;");
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_LE(r->n("c.count") + r->n("f.bad_lines"), records);
    finish(*r);
  }
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
               ", STOP true, CHECKSUM true) -> t :: Tee;"
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
  // Click's add refuses a prefix already routed; set replaces it.
  EXPECT_FALSE(r->rt->write_handler("rt.add", "10.0.0.0/8 8.8.8.8 0", err));
  EXPECT_NE(err.find("conflict with existing route '10.0.0.0/8 9.9.9.9 1'"), std::string::npos) << err;
  ASSERT_TRUE(r->rt->write_handler("rt.set", "10.0.0.0/8 8.8.8.8 0", err)) << err;
  ASSERT_TRUE(r->rt->read_handler("rt.lookup", lk, err, "10.1.2.3")) << err;
  EXPECT_EQ(lk, "0 8.8.8.8");
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

namespace shoal::test {
namespace {
// The first byte of each packet ToDump wrote: which source it came from.
std::string sources(const std::string& pcap) {
  std::string s;
  for (auto& f : read_pcap(pcap)) s += char('a' + f.bytes.at(0) - 1);
  return s;
}
// Three pull sources of 5, 3 and 4 packets (bytes 1, 2, 3) through a
// scheduler, pulled to a file until all are empty: the run ends by itself,
// since the scheduler's notifier sleeps once all three have.
std::string schedule(const std::string& sched) {
  std::string out = tmpdir() + "/sched.pcap";
  auto r = run(fmt::format(R"(
    a :: InfiniteSource(DATA \<01>, LIMIT 5); b :: InfiniteSource(DATA \<02>, LIMIT 3);
    c :: InfiniteSource(DATA \<03>, LIMIT 4);
    a -> [0]s :: {}; b -> [1]s; c -> [2]s;
    s -> Unqueue(BURST 4) -> ToDump({}, ENCAP IP);
  )",
                           sched, out));
  if (!r->ok) return "error: " + r->errors;
  finish(*r);
  return sources(out);
}
}  // namespace

TEST(PullSchedulers, PriorityRoundRobinAndStrideOrders) {
  EXPECT_EQ(schedule("PrioSched"), "aaaaabbbcccc");
  EXPECT_EQ(schedule("RoundRobinSched"), "abcabcabcaca");
  // Tickets 4:2:1 give strides 16384:32768:65536; an input that strode
  // goes back before those with an equal pass (Click's list), and an empty
  // input strides too, so the others go on.
  EXPECT_EQ(schedule("StrideSched(4, 2, 1)"), "aabaabcabccc");
  // An input with no tickets is never pulled (and the run still ends).
  EXPECT_EQ(schedule("StrideSched(1, 0, 1)"), "accaaccaa");
  auto bad = run("Idle -> [0]s :: StrideSched(1); Idle -> [1]s; s -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("need 2 arguments"), std::string::npos) << bad->errors;
}

// StrideSwitch with tickets 4:2:1, a packet at a time: the same order as
// StrideSched's while its inputs last (the smallest pass first; a port
// that strode goes back before an equal pass), 8:4:2 over 14 packets.
TEST(StrideSwitch, SendsInProportionToTickets) {
  const std::string out = tmpdir() + "/strideswitch.txt";
  auto r =
      run("InfiniteSource(LIMIT 14, STOP true) -> s :: StrideSwitch(4, 2, 1);"
          "s[0] -> Paint(0) -> w :: ToIPSummaryDump(" +
          out + ", FIELDS link); s[1] -> Paint(1) -> w; s[2] -> Paint(2) -> w;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("s.config"), "4, 2, 1");
  finish(*r);
  EXPECT_EQ(summary_lines(out, ""), "00100120010012");
  EXPECT_FALSE(run("Idle -> s :: StrideSwitch(1); s[0] -> Discard; s[1] -> Discard;")->ok) << "a ticket per output";
}

// Click's CRC is the catalogue's CRC-32/MPEG-2 (polynomial 0x04C11DB7 high
// bit first, from 0xFFFFFFFF, no final complement), whose check value over
// "123456789" is 0x0376E6E7, stored in the CPU's (little-endian) order.
TEST(SetCRC32, TheCatalogueCheckValueAndCheckCRC32) {
  const std::string a = tmpdir() + "/crc-a.pcap", b = tmpdir() + "/crc-b.pcap";
  auto r =
      run("InfiniteSource(DATA \"123456789\", LIMIT 1, STOP true) -> SetCRC32 -> t :: Tee(3);"
          "t[0] -> ToDump(" +
          a + "); t[1] -> ok :: CheckCRC32 -> ToDump(" + b +
          "); t[2] -> StoreData(0, \"X\") -> bad :: CheckCRC32 -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("bad.drops"), 1u) << "a damaged packet";
  finish(*r);
  EXPECT_EQ(hex(read_pcap(a).at(0).bytes), "313233343536373839e7e67603");
  EXPECT_EQ(hex(read_pcap(b).at(0).bytes), "313233343536373839") << "checked and removed";
}

TEST(ARPResponder, TableHandlersAsClick) {
  auto r = run(R"(
    AddressInfo(a 1.0.0.2/24 00:01:02:03:04:05, b 00:01:02:03:04:06);
    Idle -> ar :: ARPResponder(a:ipnet b:eth, a) -> Discard;
    DriverManager(stop);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("ar.table"), "1.0.0.2/32 00-01-02-03-04-05\n1.0.0.0/24 00-01-02-03-04-06\n");
  std::string v, err;
  ASSERT_TRUE(r->rt->read_handler("ar.lookup", v, err, "1.0.0.1")) << err;
  EXPECT_EQ(v, "00-01-02-03-04-06");
  ASSERT_TRUE(r->rt->read_handler("ar.lookup", v, err, "1.0.0.2")) << err;
  EXPECT_EQ(v, "00-01-02-03-04-05");
  ASSERT_TRUE(r->rt->read_handler("ar.lookup", v, err, "9.9.9.9")) << err;
  EXPECT_EQ(v, "");
  ASSERT_TRUE(r->rt->write_handler("ar.remove", "1.0.0.2", err)) << err;
  EXPECT_FALSE(r->rt->write_handler("ar.remove", "1.0.0.2", err)) << "already removed";
  ASSERT_TRUE(r->rt->write_handler("ar.add", "1.0.0.0/24 2:2:2:2:2:2", err)) << err;
  ASSERT_TRUE(r->rt->write_handler("ar.add", "7.0.0.1 7.0.0.2 3:3:3:3:3:3", err)) << err;
  EXPECT_EQ(r->h("ar.table"),
            "1.0.0.0/24 02-02-02-02-02-02\n7.0.0.1/32 03-03-03-03-03-03\n7.0.0.2/32 03-03-03-03-03-03\n");
  EXPECT_FALSE(r->rt->write_handler("ar.add", "7.0.0.3", err)) << "no ETH";
  EXPECT_NE(err.find("missing ETH"), std::string::npos) << err;
  ASSERT_TRUE(r->rt->write_handler("ar.config", "", err)) << err;
  EXPECT_EQ(r->h("ar.table"), "");
  finish(*r);
}

}  // namespace shoal::test

namespace shoal::test {

// Under simulated time (the clock moves only when nothing is left to do):
// RatedUnqueue's bucket starts with one token (20 ms of 10/s rounds to
// none, and holds at least one) and gains one every 100 ms, so in 2 s it
// moves 1 + 19 packets (the timer at 2.000 s fires after the Script's);
// RatedSplitter lets through about the same share of a 100/s source (one
// packet every 10 ms) and sends the rest to output 1: its bucket, as
// Click's, gains floor(10 * scale / 1000) per 1 ms tick, a token in just
// over 100 ms, so after the first packet the next one that finds a token
// comes 110 ms later: 1 + 18 by 1.99 s, when the source's 200th leaves.
TEST(RatedUnqueue, RateUnderSimulatedTime) {
  set_simulated_time(true);
  auto r = run(R"(
    InfiniteSource(LIMIT 1000) -> q :: Queue(10) -> u :: RatedUnqueue(10) -> c :: Counter -> Discard;
    RatedSource(RATE 100, LIMIT 200) -> s :: RatedSplitter(10);
    s[0] -> c0 :: Counter -> Discard; s[1] -> c1 :: Counter -> Discard;
    Script(wait 2, stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 20u);
  EXPECT_EQ(r->n("q.drops"), 0u) << "the source waits for room";
  EXPECT_EQ(r->n("c0.count"), 19u);
  EXPECT_EQ(r->n("c0.count") + r->n("c1.count"), 200u);
  EXPECT_EQ(r->h("u.rate"), "10");
  finish(*r);
  auto bad = run("Idle -> RatedUnqueue(10, BURST_DURATION 1, BURST_SIZE 5) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("at most one of BURST_DURATION and BURST_SIZE"), std::string::npos) << bad->errors;
}

}  // namespace shoal::test

namespace shoal::test {

// TimedSource's packets come every INTERVAL of simulated time, the first
// one INTERVAL after start; Clipboard pastes what the last packet on input
// 0 had at the ranges (nothing yet: zeros for the first).
TEST(Clipboard, CopiesRangesBetweenTimedStreams) {
  std::string out = tmpdir() + "/clip.pcap";
  set_simulated_time(true);
  auto r = run(fmt::format(R"(
    c :: Clipboard(0/1, 2/2);
    TimedSource(0.0015, "ABCDEFG", LIMIT 2) -> [0]c[0] -> Discard;
    TimedSource(0.001, "abcdefg", LIMIT 3, STOP true) -> [1]c[1] -> ToDump({}, ENCAP IP);
  )",
                           out));
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 3u);
  auto text = [](const Frame& x) { return std::string(x.bytes.begin(), x.bytes.end()); };
  EXPECT_EQ(text(f[0]), std::string("\0b\0\0efg", 7)) << "1 ms: the clipboard is still empty";
  EXPECT_EQ(text(f[1]), "AbCDefg") << "2 ms: after the 1.5 ms packet";
  EXPECT_EQ(text(f[2]), "AbCDefg") << "3 ms: both fire; the timer set first (at 1.5 ms) first";
  EXPECT_EQ(f[1].ts - f[0].ts, 1000000u);
  EXPECT_EQ(r->n("c.copied"), 2u);
  EXPECT_EQ(r->n("c.pasted"), 3u);
  finish(*r);
}

}  // namespace shoal::test

namespace shoal::test {

TEST(StaticSwitchPullSwitch, ChooseTheirPort) {
  auto r = run(R"(
    InfiniteSource(LIMIT 5, STOP true) -> s :: StaticSwitch(1);
    s[0] -> c0 :: Counter -> Discard; s[1] -> c1 :: Counter -> Discard;
    InfiniteSource(DATA \<01>, LIMIT 3) -> qa :: Queue -> [0]ps :: PullSwitch(1);
    InfiniteSource(DATA \<02>, LIMIT 4) -> qb :: Queue -> [1]ps;
    ps -> u :: Unqueue -> cp :: Counter -> Discard;
    DriverManager(wait 20ms, set a $(cp.count), write ps.switch 0, wait 20ms, write ps.switch -1, stop);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c0.count"), 0u);
  EXPECT_EQ(r->n("c1.count"), 5u);
  EXPECT_EQ(r->n("cp.count"), 7u) << "input 1's four, then input 0's three";
  EXPECT_EQ(r->n("qa.length") + r->n("qb.length"), 0u);
  finish(*r);
  auto bad = run("Idle -> s :: StaticSwitch(2); s[0] -> Discard; s[1] -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("OUTPUT 2 out of range"), std::string::npos) << bad->errors;
}

// AverageCounter over simulated time: 101 packets of 64 bytes, one every
// 10 ms from t = 0 to 1 s; the rate is over the time from the first to the
// last (Click's), so 101 per second.
TEST(AverageCounter, RatesOverTheMeasuredTime) {
  set_simulated_time(true);
  auto r = run(R"(
    RatedSource(LENGTH 64, RATE 100, LIMIT 101, STOP true) -> ac :: AverageCounter -> Discard;
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("ac.count"), 101u);
  EXPECT_EQ(r->n("ac.byte_count"), 6464u);
  EXPECT_EQ(r->n("ac.link_count"), 6464u * 8 + 101u * 24 * 8);
  EXPECT_EQ(r->h("ac.time"), "1.000000");
  EXPECT_EQ(r->h("ac.rate"), "101");
  finish(*r);
}

// RandomSample keeps about P of the packets, the rest on output 1; the
// same seed gives the same choice.
TEST(RandomSample, ShareAndRepeatability) {
  auto once = [] {
    auto r = run(R"(
      InfiniteSource(LIMIT 20000, STOP true) -> s :: RandomSample(0.25);
      s[0] -> c0 :: Counter -> Discard; s[1] -> c1 :: Counter -> Discard;
    )");
    EXPECT_TRUE(r->ok) << r->errors;
    uint64_t n = r->n("c0.count");
    EXPECT_EQ(n + r->n("c1.count"), 20000u);
    finish(*r);
    return n;
  };
  uint64_t a = once();
  EXPECT_NEAR(double(a), 5000, 300);  // 0.25 of 20000, well within 5 sigma (61 each)
  EXPECT_EQ(once(), a);
  auto bad = run("Idle -> RandomSample(1.5) -> Discard;");
  EXPECT_FALSE(bad->ok);
}

}  // namespace shoal::test

namespace shoal::test {

// HostEtherFilter passes frames for us, broadcast and multicast, and sends
// those for other hosts (and, with DROP_OWN, our own) to output 1; MarkMACHeader puts the
// network header after the MAC header, which IPPrint's ETHER then shows.
TEST(HostEtherFilter, TypesAndDropsByDestination) {
  std::string out = tmpdir() + "/hef.txt";
  auto r = run(fmt::format(R"(
    us :: InfiniteSource(\<000000000001 000000000002 0800>, LIMIT 1);
    bc :: InfiniteSource(\<ffffffffffff 000000000002 0800>, LIMIT 2);
    mc :: InfiniteSource(\<01005e000001 000000000002 0800>, LIMIT 3);
    them :: InfiniteSource(\<000000000009 000000000002 0800>, LIMIT 4);
    own :: InfiniteSource(\<000000000001 000000000001 0800>, LIMIT 5);
    h :: HostEtherFilter(0:0:0:0:0:1, DROP_OWN true);
    us -> h; bc -> h; mc -> h; them -> h; own -> h;
    h[0] -> c0 :: Counter -> Discard;
    h[1] -> x :: Counter -> Discard;
    InfiniteSource(\<000102030405 060708090a0b 0800 4500001c 00000000 4011 0000 0a000001 0a000002 0000000000000000>,
                   LIMIT 1)
      -> MarkMACHeader -> IPPrint(m, TIMESTAMP false, ETHER true, OUTFILE {}) -> Discard;
  )",
                           out));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c0.count"), 6u) << "for us, broadcast and multicast";
  EXPECT_EQ(r->n("x.count"), 9u) << "for others, and our own";
  finish(*r);  // closes OUTFILE
  EXPECT_EQ(slurp(out).rfind("m: 06-07-08-09-0A-0B > 00-01-02-03-04-05: 10.0.0.1", 0), 0u) << slurp(out);
}

}  // namespace shoal::test

namespace shoal::test {

// Align leaves data at the alignment asked (a second Align finds nothing to
// move) and the bytes unchanged; GetIPAddress takes Click's 'IP dst' form.
TEST(Align, MovesDataToTheAlignmentAndKeepsIt) {
  std::string out = tmpdir() + "/align.pcap";
  auto r = run(fmt::format(R"(
    InfiniteSource(DATA \<45 00 00 14 00 00 00 00 40 11 00 00 0a 00 00 01 0a 00 00 09>, LIMIT 3)
      -> a1 :: Align(8, 3) -> a2 :: Align(8, 3) -> MarkIPHeader -> GetIPAddress(IP dst)
      -> a3 :: Align(4, 0) -> ToDump({}, ENCAP IP);
  )",
                           out));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a2.moved"), 0u);
  EXPECT_EQ(r->n("a3.moved"), 3u) << "3 mod 8 is not 0 mod 4";
  finish(*r);
  auto frames = read_pcap(out);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(hex(frames[2].bytes),
            "450000140000000040110000"
            "0a000001"
            "0a000009");
  auto bad = run("Idle -> Align(3, 0) -> Discard;");
  EXPECT_FALSE(bad->ok);
}

}  // namespace shoal::test

namespace shoal::test {

TEST(Message, PrintsOrFailsTheConfiguration) {
  auto ok = run("Message(\"hello\"); Idle -> Discard;");
  ASSERT_TRUE(ok->ok) << ok->errors;
  finish(*ok);
  auto bad = run("Message(\"this needs eth1\", ERROR); Idle -> Discard;");
  ASSERT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("this needs eth1"), std::string::npos) << bad->errors;
  EXPECT_FALSE(run("Message(x, LOUD);")->ok);
}

}  // namespace shoal::test

namespace shoal::test {

// Click's AggregateCounter-01 counts, plus a frozen second input, AGGREGATE_FREEZE and bytes.
TEST(AggregateCounter, CountsPerAggregateAndWritesClickFiles) {
  std::string in = tmpdir() + "/agg.txt", in2 = tmpdir() + "/agg2.txt", out = tmpdir() + "/agg-out.txt";
  std::ofstream(in) << "!data aggregate\n1\n1\n0\n0\n0\n2\n3\n2\n";
  std::ofstream(in2) << "!data aggregate\n3\n9\n";
  auto r = run(fmt::format(R"(
    FromIPSummaryDump({}, STOP true) -> a :: AggregateCounter -> Discard;
    f2 :: FromIPSummaryDump({}, STOP true, ACTIVE false) -> [1]a;
    FromIPSummaryDump({}, STOP true) -> b :: AggregateCounter(BYTES true, AGGREGATE_FREEZE 2) -> Discard;
    DriverManager(wait_stop 2, write f2.active true, wait 10ms, write a.write_text_file {});
  )",
                           in, in2, in, out));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.count"), 9u) << "3 on input 1 counted, 9 there not";
  EXPECT_EQ(r->n("a.nagg"), 4u);
  EXPECT_EQ(r->n("b.nagg"), 2u) << "frozen at two aggregates";
  EXPECT_EQ(r->n("b.count"), 5u * 40u) << "40-byte TCP/IP packets of aggregates 1 and 0";
  finish(*r);
  EXPECT_EQ(slurp(out), "!IPAggregate 1.0\n!num_nonzero 4\n0 3\n1 2\n2 2\n3 2\n");
  // A threshold may call the element's own handlers (no deadlock): cleared
  // after four packets, the last four are counted.
  auto r2 = run(fmt::format(R"(
    FromIPSummaryDump({}, STOP true, BURST 1) -> c :: AggregateCounter(COUNT_CALL 4 c.clear) -> Discard;
  )",
                            in));
  ASSERT_TRUE(r2->ok) << r2->errors;
  EXPECT_EQ(r2->n("c.count"), 4u);
  EXPECT_EQ(r2->n("c.nagg"), 3u);
  finish(*r2);
}

}  // namespace shoal::test

namespace shoal::test {

// Click's notifier-01: two sorted inputs merge in time order; a third
// switched on later is merged after the stop event the dry inputs raised.
TEST(TimeSortedSched, MergesByTimestampAndStopsWhenDry) {
  std::string d1 = tmpdir() + "/tss1.txt", d2 = tmpdir() + "/tss2.txt", out = tmpdir() + "/tss-out.txt";
  std::ofstream(d1) << "!data timestamp ip_src\n0.0 1.0.0.0\n0.1 1.0.0.1\n0.2 1.0.0.2\n";
  std::ofstream(d2) << "!data timestamp ip_src\n0.05 1.0.1.0\n0.15 1.0.1.1\n0.25 1.0.1.2\n";
  auto r = run(fmt::format(R"(
    f1 :: FromIPSummaryDump({});
    f2 :: FromIPSummaryDump({}, ACTIVE false);
    tss :: TimeSortedSched(STOP true);
    f1 -> [0]tss; f2 -> q :: Queue -> [1]tss;
    tss -> ToIPSummaryDump({}, FIELDS ip_src);
    DriverManager(wait, write f2.active true, wait);
  )",
                           d1, d2, out));
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  std::string body = summary_lines(out);
  EXPECT_EQ(body, "1.0.0.0 1.0.0.1 1.0.0.2 1.0.1.0 1.0.1.1 1.0.1.2 ") << "input 1 was switched on after the first stop";
  // Both at once: interleaved by time.
  auto r2 = run(fmt::format(R"(
    tss :: TimeSortedSched(STOP true);
    FromIPSummaryDump({}) -> [0]tss; FromIPSummaryDump({}) -> [1]tss;
    tss -> ToIPSummaryDump({}, FIELDS ip_src);
  )",
                            d1, d2, out));
  ASSERT_TRUE(r2->ok) << r2->errors;
  finish(*r2);
  body = summary_lines(out);
  EXPECT_EQ(body, "1.0.0.0 1.0.1.0 1.0.0.1 1.0.1.1 1.0.0.2 1.0.1.2 ");
}

}  // namespace shoal::test

namespace shoal::test {

// 1250-byte packets on a 1 MB/s link leave 1.25 ms apart, stamped with the
// time their last bit arrives; SetTimestampDelta makes that relative.
TEST(LinkUnqueue, PacesPacketsByBandwidth) {
  std::string out = tmpdir() + "/link.txt";
  auto r = run(fmt::format(R"(
    InfiniteSource(LENGTH 1250, LIMIT 3, STOP true) -> Queue -> l :: LinkUnqueue(2ms, 1MBps)
      -> SetTimestampDelta -> ToIPSummaryDump({}, FIELDS timestamp);
    DriverManager(wait_stop, wait 20ms);
  )",
                           out));
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  std::string body = summary_lines(out);
  EXPECT_EQ(body, "0.000000 0.001250 0.002500 ");
  EXPECT_FALSE(run("Idle -> Queue -> LinkUnqueue(1ms, 0) -> Discard;")->ok);
}

// DelayShaper under simulated time: three packets stamped at once leave
// 30 ms later, together (their delays overlap); the one pulled after the
// input's queue went empty and filled again is woken by the queue's
// notifier, and each leaving packet is stamped with its departure.
TEST(DelayShaper, HoldsEachPacketItsDelay) {
  std::string out = tmpdir() + "/delay.txt";
  set_simulated_time(true);
  auto r = run(fmt::format(R"(
    src :: InfiniteSource(LIMIT 3, STOP false) -> SetTimestamp -> q :: Queue;
    late :: InfiniteSource(LIMIT 1, ACTIVE false) -> SetTimestamp -> q;
    q -> d :: DelayShaper(30ms) -> c :: Counter -> SetTimestampDelta -> ToIPSummaryDump({}, FIELDS timestamp);
    s :: Script(export early, export due, export late,
                wait 20ms, set early $(c.count), wait 20ms, set due $(c.count),
                wait 60ms, write late.active true, wait 20ms, set late $(c.count), wait 80ms, stop);
  )",
                           out));
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  std::string body = summary_lines(out);
  // Relative to the first departure (30 ms after the first three were
  // stamped); the late packet, stamped at 100 ms, leaves at 130 ms.
  EXPECT_EQ(body, "0.000000 0.000000 0.000000 0.100000 ");
  EXPECT_EQ(r->h("s.early"), "0") << "held for 30 ms";
  EXPECT_EQ(r->h("s.due"), "3");
  EXPECT_EQ(r->h("s.late"), "3") << "the late packet is held too";
  EXPECT_EQ(r->n("c.count"), 4u);
  EXPECT_EQ(r->h("d.delay"), "0.030000");
  EXPECT_FALSE(run("Idle -> DelayShaper -> Discard;")->ok) << "DELAY is mandatory";
}

// DelayUnqueue under simulated time, as Click's: it holds one packet at a
// time; one without a timestamp is stamped when pulled, so three of them
// leave 30 ms apart; three stamped together leave together, 30 ms after
// their stamp. Each leaves with its departure as its timestamp.
TEST(DelayUnqueue, HoldsEachPacketDelayAfterItsTimestamp) {
  for (bool stamped : {false, true}) {
    std::string out = tmpdir() + "/delayu.txt";
    set_simulated_time(true);
    auto r = run(fmt::format(R"(
      InfiniteSource(LIMIT 3, STOP false) -> {} q :: Queue -> d :: DelayUnqueue(30ms) -> c :: Counter
        -> SetTimestampDelta -> ToIPSummaryDump({}, FIELDS timestamp);
      s :: Script(wait 200ms, stop);
    )",
                             stamped ? "SetTimestamp ->" : "", out));
    set_simulated_time(false);
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("c.count"), 3u);
    EXPECT_EQ(r->h("d.size"), "0");
    EXPECT_EQ(r->h("d.delay"), "0.030000s");
    finish(*r);
    EXPECT_EQ(summary_lines(out), stamped ? "0.000000 0.000000 0.000000 " : "0.000000 0.030000 0.060000 ");
  }
  EXPECT_FALSE(run("Idle -> DelayUnqueue -> Discard;")->ok) << "DELAY is mandatory";
}

// Click's sleepiness: a Queue's pullers sleep once 9 pulls in a row found it
// empty (its empty signal stays active when a pull empties it: packets that
// come between bursts do not make them sleep and wake for each), a
// QuickNoteQueue's as soon as a pull empties it.
TEST(Queue, PullersSleepAfterNineEmptyPullsQuickNoteQueuesAtOnce) {
  auto r = run(R"(
    InfiniteSource(LIMIT 3, STOP false) -> q :: Queue(10) -> Unqueue(ACTIVE false) -> Discard;
    InfiniteSource(LIMIT 3, STOP false) -> k :: QuickNoteQueue(10) -> Unqueue(ACTIVE false) -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  for (const char* name : {"q", "k"}) {
    const bool quick = std::string(name) == "k";
    Element* q = r->rt->router(0).find(name);
    ASSERT_TRUE(q && q->notifier());
    EXPECT_TRUE(q->notifier()->active) << name << ": three packets queued";
    PacketBatch* b = q->pull(0, 32);
    ASSERT_TRUE(b) << name;
    EXPECT_EQ(b->live(), 3u) << name;
    q->drop_all(b, q->add_drop_reason("test"));
    EXPECT_EQ(q->notifier()->active, !quick) << name << ": emptied by a pull";
    for (int i = 1; i <= 9; ++i) {
      EXPECT_EQ(q->pull(0, 32), nullptr) << name;
      EXPECT_EQ(q->notifier()->active, !quick && i < 9) << name << ": after empty pull " << i;
    }
  }
  finish(*r);
}

// NotifierDebug shows signals as Click does: numbered in initialization
// order (a Queue's full signal, then its empty one), KIND.WORD/MASK:VALUE, a
// scheduler's signal the combination of its inputs'.
TEST(NotifierDebug, ShowsSignalsAsClickDoes) {
  auto r = run(R"(
    q1 :: Queue(10); q2 :: NotifierQueue(10);
    InfiniteSource(LIMIT 3) -> p :: NotifierDebug -> q1;
    Idle -> q2;
    q1 -> [0] s :: RoundRobinSched; q2 -> [1] s;
    s -> n :: NotifierDebug -> u :: Unqueue(ACTIVE false) -> Discard;
    Idle -> q3 :: Queue -> x :: NotifierDebug -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("p.signal"), "full.0/1:1*") << "q1 has room";
  EXPECT_EQ(r->h("n.signal"), "empty.0/6:2*") << "q1 has packets, q2 none";
  EXPECT_EQ(r->h("x.signal"), "empty.0/10:0") << "q3: full is bit 3, empty bit 4";
  EXPECT_EQ(r->h("u.scheduled"), "false");
  finish(*r);
}

// AggregateIPFlows: one number for both directions (paint 0 for the first
// packet's direction), a new number after UDP_TIMEOUT of packet time, other
// protocols on output 1, and a later fragment whose first never comes held
// (with what follows it) and let go unresolved at the stop.
TEST(AggregateIPFlows, NumbersFlowsBothWays) {
  std::string dir = tmpdir(), in = dir + "/agg.in", out0 = dir + "/agg0.txt", out1 = dir + "/agg1.txt";
  {
    std::ofstream f(in);
    f << "!data timestamp src sport dst dport proto ip_id ip_fragoff ip_len\n"
         "1.0 1.0.0.1 10 1.0.0.2 20 U 1 0 100\n"
         "2.0 1.0.0.2 20 1.0.0.1 10 U 2 0 100\n"
         "3.0 1.0.0.1 10 1.0.0.2 20 47 3 0 100\n"
         "100.0 1.0.0.1 10 1.0.0.2 20 U 4 0 100\n"
         "101.0 1.0.0.1 11 1.0.0.2 20 T 5 24 80\n"
         "102.0 1.0.0.3 30 1.0.0.4 40 T 6 0 100\n";
  }
  auto r = run(fmt::format(R"(
    FromIPSummaryDump({}, STOP true) -> a :: AggregateIPFlows
      -> ToIPSummaryDump({}, FIELDS aggregate link ip_id);
    a[1] -> ToIPSummaryDump({}, FIELDS aggregate ip_id);
  )",
                           in, out0, out1));
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  auto body = [](const std::string& path) { return summary_lines(path, "|"); };
  // The TCP packet after the waiting fragment waits behind it, then goes on
  // at the stop with its own flow number.
  EXPECT_EQ(body(out0), "1 0 1|1 1 2|2 0 4|3 0 6|");
  EXPECT_EQ(body(out1), "0 3|0 5|");
  EXPECT_EQ(r->h("a.count"), "2") << "the timed-out flow was replaced";
}

}  // namespace shoal::test

namespace shoal::test {

// EtherMirror swaps the addresses and leaves the rest; a runt is a counted drop.
TEST(EtherMirror, SwapsSourceAndDestination) {
  std::string out = tmpdir() + "/mirror.txt";
  auto r = run(fmt::format(R"(
    InfiniteSource(\<000102030405 060708090a0b 0800 4500001c 00000000 4011 0000 0a000001 0a000002 0000000000000000>,
                   LIMIT 2)
      -> m :: EtherMirror -> MarkMACHeader -> IPPrint(m, TIMESTAMP false, ETHER true, OUTFILE {}) -> c :: Counter -> Discard;
    InfiniteSource(\<00010203040506070809>, LIMIT 3) -> m;
  )",
                           out));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 2u);
  std::map<std::string, uint64_t> why;
  for (auto& d : r->rt->router(0).find("m")->drop_reasons()) why[d.name] = d.count.get();
  EXPECT_EQ(why["too-short"], 3u) << "the runts";
  finish(*r);
  EXPECT_EQ(slurp(out).rfind("m: 00-01-02-03-04-05 > 06-07-08-09-0A-0B: 10.0.0.1", 0), 0u) << slurp(out);
}

}  // namespace shoal::test

namespace shoal::test {

namespace {
// RFC 1071's sum over the pseudo-header and the segment, written out here
// as the oracle (0 when the stored checksum is right).
uint16_t l4_sum(const std::vector<uint8_t>& ip) {
  const uint32_t hl = (ip[0] & 0xfu) * 4, len = uint32_t(ip[2]) << 8 | ip[3];
  uint64_t s = 0;
  auto word = [&](size_t i) { return uint32_t(ip[i]) << 8 | (i + 1 < len ? ip[i + 1] : 0); };
  for (size_t i = 12; i < 20; i += 2) s += word(i);
  s += ip[9] + (len - hl);
  for (size_t i = hl; i < len; i += 2) s += word(i);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(~s & 0xffff);
}
}  // namespace

// SetTCPChecksum and SetUDPChecksum: right sums by the oracle (the UDP
// datagram's odd length pads with a zero byte), FIXOFF's repair of a data
// offset, and what is not theirs to sum: output 1, or a drop by reason.
TEST(SetL4Checksum, TcpAndUdpSumsAsRfc1071) {
  std::string tcp = tmpdir() + "/tcpsum.pcap", udp = tmpdir() + "/udpsum.pcap";
  auto r = run(fmt::format(R"(
    InfiniteSource(\<0050 1f90 00000001 00000000 f012 2000 dead 0000 0102>, LIMIT 2)
      -> IPEncap(tcp, 10.0.0.1, 10.0.0.2) -> t :: SetTCPChecksum(FIXOFF true) -> ToDump({}, ENCAP IP);
    InfiniteSource(\<41424344 45>, LIMIT 2) -> UDPIPEncap(10.0.0.1, 53, 10.0.0.9, 5353, CHECKSUM false)
      -> u :: SetUDPChecksum -> ToDump({}, ENCAP IP);
    InfiniteSource(\<0102>, LIMIT 3) -> IPEncap(udp, 1.1.1.1, 2.2.2.2) -> t2 :: SetTCPChecksum -> Discard;
    InfiniteSource(\<0102>, LIMIT 1) -> IPEncap(udp, 1.1.1.1, 2.2.2.2) -> u2 :: SetUDPChecksum;
    u2[0] -> Discard; u2[1] -> short :: Counter -> Discard;
  )",
                           tcp, udp));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("short.count"), 1u) << "a UDP length past the packet goes to output 1";
  std::map<std::string, uint64_t> why;
  for (auto& d : r->rt->router(0).find("t2")->drop_reasons()) why[d.name] = d.count.get();
  EXPECT_EQ(why["not-tcp"], 3u);
  finish(*r);
  auto t = read_pcap(tcp), u = read_pcap(udp);
  ASSERT_EQ(t.size(), 2u);
  ASSERT_EQ(u.size(), 2u);
  for (auto& p : t) {
    EXPECT_EQ(l4_sum(p.bytes), 0) << "the TCP checksum verifies";
    EXPECT_EQ(p.bytes[20 + 12] >> 4, 5) << "FIXOFF: an offset of 15 words past a 22-byte segment becomes 5";
  }
  for (auto& p : u) {
    EXPECT_EQ(l4_sum(p.bytes), 0) << "the UDP checksum verifies";
    EXPECT_NE(p.bytes[26] | p.bytes[27], 0);
  }
}

// ICMPPingEncap: echo requests from SRC to DST with IDENTIFIER, both sums
// right, the sequence counting from 1 and stepping from 65535 to 1 (Click's;
// ICMPIPEncap's comes back through 0); src and dst are handlers.
TEST(ICMPPingEncap, EchoRequestsWithClicksSequence) {
  std::string out = tmpdir() + "/ping.pcap";
  auto r = run(fmt::format(R"(
    InfiniteSource(\<00112233>, LIMIT 65536) -> p :: ICMPPingEncap(1.0.0.1, 2.0.0.2, IDENTIFIER 7)
      -> CheckICMPHeader -> CheckIPHeader -> ToDump({}, ENCAP IP);
  )",
                           out));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("p.dst"), "2.0.0.2");
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 65536u) << "every packet passed the header checks";
  auto seq = [&](size_t i) { return uint32_t(f[i].bytes[26]) << 8 | f[i].bytes[27]; };
  EXPECT_EQ(f[0].bytes[20], 8) << "echo request";
  EXPECT_EQ(uint32_t(f[0].bytes[24]) << 8 | f[0].bytes[25], 7u);
  EXPECT_EQ(seq(0), 1u);
  EXPECT_EQ(seq(65534), 65535u);
  EXPECT_EQ(seq(65535), 1u) << "0 is skipped";
  EXPECT_EQ(f[0].bytes.size(), 32u) << "20 + 8 + the 4 bytes of data";
  auto bad = run("Idle -> ICMPPingEncap(1.0.0.1) -> Discard;");
  EXPECT_FALSE(bad->ok) << "DST is mandatory";
}

// Shaper and BandwidthShaper under simulated time (it starts on a second):
// 10 packets (or 1,000 bytes of 100-byte packets) a second, one every
// 100 ms from the start, are 20 packets by 1.95 s; the puller sleeps
// between them. Output 1 gives what the rate holds back, unshaped.
TEST(Shaper, PacketsAndBytesPerSecondUnderSimulatedTime) {
  set_simulated_time(true);
  auto r = run(R"(
    InfiniteSource(LIMIT 1000) -> Queue(10) -> s :: Shaper(10) -> Unqueue -> c :: Counter -> Discard;
    InfiniteSource(LENGTH 100, LIMIT 1000) -> Queue(10) -> b :: BandwidthShaper(1000Bps) -> Unqueue
      -> c2 :: Counter -> Discard;
    InfiniteSource(LIMIT 50, STOP false) -> Queue(100) -> s1 :: Shaper(1);
    s1[0] -> Unqueue -> k0 :: Counter -> Discard; s1[1] -> Unqueue -> k1 :: Counter -> Discard;
    Script(wait 1.95, stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 20u);
  EXPECT_EQ(r->n("c2.count"), 20u);
  EXPECT_EQ(r->n("k0.count") + r->n("k1.count"), 50u);
  EXPECT_LE(r->n("k0.count"), 3u) << "at most a packet a second on output 0";
  EXPECT_EQ(r->h("s.rate"), "10");
  EXPECT_EQ(r->h("b.rate"), "1000Bps");
  finish(*r);
  EXPECT_FALSE(run("Idle -> Shaper -> Discard;")->ok) << "RATE is mandatory";
  EXPECT_FALSE(run("Idle -> BandwidthShaper(fast) -> Discard;")->ok);
}

// Meter under simulated time: 2 packets a millisecond against Meter(1000).
// Click's average (alpha 1/16, 10 fractional bits, a millisecond's count
// folded in when the next begins) of 2 a millisecond is 2056 * (1 -
// (15/16)^k) after k whole milliseconds; the threshold, 1000/s, is 1024,
// first reached at k = 11: the 22 packets of the first 11 ms go to output
// 0, the other 3978 to output 1. BandwidthMeter of 100-byte packets (200
// kB/s) passes 100 kB/s at the same packet and 150 kB/s 22 packets later
// (2056 * (1 - (15/16)^k) >= 1536 at k = 22), and never 1 MB/s.
TEST(Meter, SwitchesWithClicksMovingAverage) {
  set_simulated_time(true);
  auto r = run(R"(
    RatedSource(RATE 2000, LIMIT 4000, STOP true) -> m :: Meter(1000);
    m[0] -> c0 :: Counter -> Discard; m[1] -> c1 :: Counter -> Discard;
    RatedSource(LENGTH 100, RATE 2000, LIMIT 4000, STOP true) -> b :: BandwidthMeter(100kBps, 150kBps, 1MBps);
    b[0] -> b0 :: Counter -> Discard; b[1] -> b1 :: Counter -> Discard;
    b[2] -> b2 :: Counter -> Discard; b[3] -> b3 :: Counter -> Discard;
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c0.count"), 22u);
  EXPECT_EQ(r->n("c1.count"), 3978u);
  EXPECT_EQ(r->n("b0.count"), 22u);
  EXPECT_EQ(r->n("b1.count"), 22u);
  EXPECT_EQ(r->n("b2.count"), 3956u);
  EXPECT_EQ(r->n("b3.count"), 0u);
  EXPECT_EQ(r->h("b.meters"), "100000 150000 1000000");
  finish(*r);
  auto bad = run("Idle -> m :: Meter(1000, 500) -> Discard; m[1] -> Discard; m[2] -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("rate 2 must be greater than rate 1"), std::string::npos) << bad->errors;
  auto ports = run("Idle -> m :: Meter(1000, 2000) -> Discard; m[1] -> Discard;");
  EXPECT_FALSE(ports->ok);
  EXPECT_NE(ports->errors.find("2 rates need 3 outputs"), std::string::npos) << ports->errors;
}

}  // namespace shoal::test

namespace shoal::test {

// FrontDropQueue(3) given five numbered echo requests keeps the last three:
// the two oldest were pushed out (its drops), and the source was never
// held back.
TEST(FrontDropQueue, AFullQueueDropsItsOldest) {
  std::string out = tmpdir() + "/frontdrop.txt";
  auto r = run(fmt::format(R"(
    InfiniteSource(\<00>, LIMIT 5, STOP false) -> ICMPPingEncap(1.1.1.1, 2.2.2.2) -> q :: FrontDropQueue(3);
    s :: Script(export len, export drops, wait 0.1, set len $(q.length), set drops $(q.drops),
                write u.active true, wait 0.1, stop);
    q -> u :: Unqueue(ACTIVE false) -> ToIPSummaryDump({}, FIELDS icmp_seq);
  )",
                           out));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("s.len"), "3");
  EXPECT_EQ(r->h("s.drops"), "2");
  finish(*r);
  EXPECT_EQ(summary_lines(out), "3 4 5 ");
}

}  // namespace shoal::test

namespace shoal::test {

// RED under simulated time: 2,000 packets a second into a queue served at
// 1,000 a second. Without RED the queue would fill and drop; with RED(5,
// 50, 0.02) it settles where about half the packets are dropped early:
// Gentle RED's probability reaches 1/2 at an average of about 75 (0.02 at
// 50, 1 at 100), and nothing is dropped by the queue. Pulled (after the
// queue) it finds the queue upstream and drops about as many.
TEST(RED, HoldsTheQueueBelowItsCapacityByDroppingEarly) {
  set_simulated_time(true);
  auto r = run(R"(
    RatedSource(RATE 2000, LIMIT 5000, STOP false) -> r :: RED(5, 50, 0.02) -> q :: Queue(200)
      -> RatedUnqueue(1000) -> c :: Counter -> Discard;
    RatedSource(RATE 2000, LIMIT 5000, STOP false) -> q2 :: Queue(200) -> r2 :: RED(5, 50, 0.02)
      -> RatedUnqueue(1000) -> c2 :: Counter -> Discard;
    s :: Script(export avg, wait 2.5, set avg $(r.avg_queue_size), stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  const uint64_t red = r->n("r.drops"), passed = r->n("c.count"), queued = r->n("q.length");
  EXPECT_EQ(r->n("q.drops"), 0u) << "RED kept the queue from overflowing";
  EXPECT_EQ(red + passed + queued, 5000u);
  EXPECT_GT(red, 2000u);
  EXPECT_LT(red, 2900u);
  const double avg = std::stod(r->h("s.avg"));
  EXPECT_GT(avg, 50) << "past MAX_THRESH, where half the packets go";
  EXPECT_LT(avg, 100) << "below the kill threshold";
  EXPECT_EQ(r->h("r.queues"), "q\n");
  EXPECT_EQ(r->h("r2.queues"), "q2\n") << "pulled: the queue upstream";
  EXPECT_GT(r->n("r2.drops"), 2000u);
  EXPECT_EQ(r->h("r.max_p"), "0.02");
  finish(*r);
  auto bad = run("Idle -> RED(50, 5, 0.02) -> Queue -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("MAX_THRESH must be at least MIN_THRESH"), std::string::npos) << bad->errors;
  auto lonely = run("Idle -> RED(5, 50, 0.02) -> Discard;");
  EXPECT_FALSE(lonely->ok);
  EXPECT_NE(lonely->errors.find("no nearby queues"), std::string::npos) << lonely->errors;
  EXPECT_FALSE(run("Idle -> RED(5, 50, 0.02, QUEUES nosuch) -> Queue -> Discard;")->ok);
}

// AdaptiveRED under simulated time: overloaded (2,000 a second into 1,000),
// its MAX_P climbs every 500 ms while the average sits above the middle of
// its band (TARGET 20: 10 to 30); lightly loaded it falls by a tenth each
// time, toward 0.01.
// CoDel under simulated time: 1,200 packets a second into a link of 1,000.
// Without it the queue fills; with it the sojourn time stays
// above 5 ms for 100 ms, CoDel starts dropping, faster as the delay lasts
// (INTERVAL/sqrt(count)), and the queue stays under half full. Under the link's
// rate it drops nothing.
TEST(CoDel, DropsWhenTheDelayStandsAndOnlyThen) {
  set_simulated_time(true);
  auto r = run(R"(
    RatedSource(RATE 1200, LIMIT 20000, STOP false) -> SetTimestamp -> q :: Queue(1000) -> c :: CoDel
      -> RatedUnqueue(1000) -> Discard;
    RatedSource(RATE 1200, LIMIT 20000, STOP false) -> SetTimestamp -> q2 :: Queue(1000) -> RatedUnqueue(1000)
      -> Discard;
    RatedSource(RATE 900, LIMIT 20000, STOP false) -> SetTimestamp -> q3 :: Queue(1000) -> l :: CoDel(5ms, 100ms)
      -> RatedUnqueue(1000) -> Discard;
    s :: Script(export a, export b, wait 6, set a $(q.length), set b $(q2.length), stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_GT(r->n("c.drops"), 500u);
  EXPECT_EQ(r->n("q.drops"), 0u) << "the queue never overflowed";
  EXPECT_EQ(r->h("s.b"), "1000") << "without CoDel it filled (its source then waits on it)";
  EXPECT_LT(std::stoul(r->h("s.a")), 500u);
  EXPECT_EQ(r->n("l.drops"), 0u) << "no standing delay, no drop";
  EXPECT_EQ(r->h("l.target"), "0.005000");
  finish(*r);
}

TEST(AdaptiveRED, MaxPFollowsTheLoad) {
  set_simulated_time(true);
  auto r = run(R"(
    RatedSource(RATE 2000, LIMIT 8000, STOP false) -> a :: AdaptiveRED(20, 0.02) -> q :: Queue(200)
      -> RatedUnqueue(1000) -> c :: Counter -> Discard;
    RatedSource(RATE 300, LIMIT 1000, STOP false) -> b :: AdaptiveRED(20, 0.02) -> q2 :: Queue(200)
      -> RatedUnqueue(1000) -> Discard;
    s :: Script(export pa, export pb, wait 2.7, set pa $(a.max_p), set pb $(b.max_p), stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("a.min_thresh"), "10");
  EXPECT_EQ(r->h("a.max_thresh"), "30");
  EXPECT_GT(std::stod(r->h("s.pa")), 0.025) << "raised under overload";
  EXPECT_EQ(r->n("q.drops"), 0u) << "and the queue never overflowed";
  // 0.02 * 0.9^5 in Click's fixed point: 1311 -> 1179 -> 1061 -> 954 -> 858 -> 772 (/65536)
  EXPECT_EQ(r->h("s.pb"), fmt::format("{:g}", 772 / 65536.0)) << "lowered five times under light load";
  finish(*r);
}

}  // namespace shoal::test

namespace shoal::test {

// Rates and times at the edges of their types: a bandwidth past 2^63 bytes
// a second is the largest rate (under UBSan its conversion was undefined),
// a duration past 2^63 ns is refused, and LinkUnqueue's bandwidth is at
// least a byte a second (a packet's time on the link stays finite).
TEST(Args, BandwidthsAndDurationsAtTheEdges) {
  auto r = run(R"(
    InfiniteSource(LIMIT 10) -> Queue -> BandwidthRatedUnqueue(1e30Bps) -> c :: Counter -> Discard;
    InfiniteSource(LIMIT 10) -> Queue -> s :: BandwidthShaper(1e300GBps) -> Unqueue -> c2 :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 10u);
  EXPECT_EQ(r->n("c2.count"), 10u);
  finish(*r);
  auto late = run("Idle -> Queue -> LinkUnqueue(1e300s, 1Mbps) -> Discard;");
  EXPECT_FALSE(late->ok);
  EXPECT_NE(late->errors.find("LATENCY expects a time interval"), std::string::npos) << late->errors;
  auto slow = run("Idle -> Queue -> LinkUnqueue(1ms, 0.5Bps) -> Discard;");
  EXPECT_FALSE(slow->ok);
  EXPECT_NE(slow->errors.find("at least 1 byte a second"), std::string::npos) << slow->errors;
}

// Click's small standard elements: RandomSource's bytes and RandomSwitch's
// choices against the C library's random() (Click's generator, seeded by
// RandomSeed), the others by their effect.
TEST(RandomSource, ClicksRandomBytes) {
  const std::string out = tmpdir() + "/random.pcap";
  auto r = run("RandomSeed(7); RandomSource(10, LIMIT 3, STOP true) -> ToDump(" + out + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  ::srandom(7);  // the oracle: glibc's random(), one word per 4 bytes, little-endian
  auto frames = read_pcap(out);
  ASSERT_EQ(frames.size(), 3u);
  for (auto& f : frames) {
    std::vector<uint8_t> want;
    for (int w = 0; w < 3; ++w) {
      const uint32_t x = uint32_t(::random());
      for (int k = 0; k < 4 && want.size() < 10; ++k) want.push_back(uint8_t(x >> (8 * k)));
    }
    EXPECT_EQ(f.bytes, want);
  }
}

TEST(RandomSwitch, ClicksChoices) {
  auto r =
      run("RandomSeed(3); InfiniteSource(LIMIT 400, STOP true) -> s :: RandomSwitch;"
          "s[0] -> c0 :: Counter -> Discard; s[1] -> c1 :: Counter -> Discard; s[2] -> c2 :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  // click_random(0, 2): rejection sampling of random() in thirds of 2^31
  ::srandom(3);
  uint64_t want[3] = {};
  const uint32_t count = 0x80000000u / 3, max = count * 3;
  for (int i = 0; i < 400; ++i) {
    uint32_t x;
    while ((x = uint32_t(::random())) >= max) {}
    ++want[x / count];
  }
  EXPECT_EQ(r->n("c0.count"), want[0]);
  EXPECT_EQ(r->n("c1.count"), want[1]);
  EXPECT_EQ(r->n("c2.count"), want[2]);
  finish(*r);
}

TEST(StoreData, MaskedBytesAndGrowth) {
  const std::string a = tmpdir() + "/sd-a.pcap", b = tmpdir() + "/sd-b.pcap", c = tmpdir() + "/sd-c.pcap";
  auto r =
      run("InfiniteSource(DATA \\<00000000>, LIMIT 1, STOP true) -> t :: Tee;"
          "t[0] -> StoreData(1, \\<FFFF>, MASK \\<0F>) -> ToDump(" +
          a +
          ");"
          "t[1] -> StoreData(3, \\<AABB>) -> ToDump(" +
          b +
          ");"
          "t[2] -> StoreData(3, \\<AABB>, GROW true) -> ToDump(" +
          c + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  EXPECT_EQ(hex(read_pcap(a).at(0).bytes), "000fff00") << "the mask's byte changes its bits, the next whole";
  EXPECT_EQ(hex(read_pcap(b).at(0).bytes), "000000aa") << "what fits";
  EXPECT_EQ(hex(read_pcap(c).at(0).bytes), "000000aabb");
}

TEST(SetPacketType, ForDropBroadcasts) {
  auto r =
      run("InfiniteSource(LIMIT 3, STOP true) -> t :: Tee; t[0] -> SetPacketType(BROADCAST) -> d :: "
          "DropBroadcasts -> a :: Counter -> Discard; t[1] -> SetPacketType(HOST) -> DropBroadcasts -> b :: "
          "Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.count"), 0u);
  EXPECT_EQ(r->n("b.count"), 3u);
  finish(*r);
  EXPECT_FALSE(run("Idle -> SetPacketType(SIDEWAYS) -> Discard;")->ok);
}

TEST(PullTee, AndStaticPullSwitch) {
  auto r =
      run("InfiniteSource(LIMIT 5) -> Queue -> pt :: PullTee(2) -> Unqueue -> c0 :: Counter -> "
          "Discard; pt[1] -> c1 :: Counter -> Discard;"
          "InfiniteSource(LIMIT 4) -> q0 :: Queue; InfiniteSource(LIMIT 6) -> q1 :: Queue;"
          "q0 -> [0]s :: StaticPullSwitch(1); q1 -> [1]s; s -> Unqueue -> k :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c0.count"), 5u);
  EXPECT_EQ(r->n("c1.count"), 5u);
  EXPECT_EQ(r->n("k.count"), 6u) << "input 1 only";
  EXPECT_EQ(r->n("q0.length"), 4u);
  finish(*r);
}

TEST(TimedUnqueue, BurstsEveryIntervalUnderSimulatedTime) {
  set_simulated_time(true);
  auto r = run(R"(
    InfiniteSource(LIMIT 100, BURST 100) -> Queue(200) -> u :: TimedUnqueue(100ms, 3) -> c :: Counter -> Discard;
    InfiniteSource(LIMIT 100, BURST 100) -> Queue(200) -> k :: TimedSink(250ms);
    Script(wait 1.05, stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  // pulls at 0, 0.1 ... 1.0 s, 3 each but the first, which (as in Click)
  // takes what the queue holds when the first packet wakes it
  EXPECT_GE(r->n("c.count"), 31u);
  EXPECT_LE(r->n("c.count"), 33u);
  EXPECT_EQ(r->n("k.count"), 5u) << "at 0, 0.25, 0.5, 0.75, 1.0 s";
  EXPECT_EQ(r->h("k.interval"), "0.250000");
  finish(*r);
  EXPECT_FALSE(run("Idle -> Queue -> TimedUnqueue -> Discard;")->ok) << "INTERVAL is mandatory";
}

TEST(Pad, ToALengthAndNoLonger) {
  const std::string a = tmpdir() + "/pad-a.pcap", b = tmpdir() + "/pad-b.pcap";
  auto r = run("InfiniteSource(DATA \\<0102>, LIMIT 1, STOP true) -> t :: Tee; t[0] -> Pad(6) -> ToDump(" + a +
               "); t[1] -> Pad(1, MAXLENGTH 1) -> ToDump(" + b + ");");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  EXPECT_EQ(hex(read_pcap(a).at(0).bytes), "010200000000");
  EXPECT_EQ(hex(read_pcap(b).at(0).bytes), "01") << "MAXLENGTH cuts";
  EXPECT_FALSE(run("Idle -> Pad(10, MAXLENGTH 5) -> Discard;")->ok);
}

TEST(StoreEtherAddress, AndEnsureEther) {
  const std::string a = tmpdir() + "/sea.pcap", b = tmpdir() + "/ee.pcap";
  // a 20-byte IPv4 header (no payload), 1.0.0.1 -> 2.0.0.2
  const std::string ip = "4500001400000000400600000100000102000002";
  auto r = run("InfiniteSource(DATA \\<" + ip +
               ">, LIMIT 1, STOP true) -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> t :: Tee;"
               "t[0] -> StoreEtherAddress(a:b:c:d:e:f, src) -> ToDump(" +
               a +
               ");"
               "t[1] -> Strip(14) -> MarkIPHeader -> EnsureEther(0x0800, 3:3:3:3:3:3, 4:4:4:4:4:4) -> w :: ToDump(" +
               b +
               ");"
               "InfiniteSource(DATA \\<" +
               ip + ">, LIMIT 1, STOP true) -> MarkIPHeader -> EnsureEther(0x0800, 3:3:3:3:3:3, 4:4:4:4:4:4) -> w;");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  EXPECT_EQ(hex(read_pcap(a).at(0).bytes).substr(0, 24), "0202020202020a0b0c0d0e0f");
  auto e = read_pcap(b);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(hex(e[0].bytes).substr(0, 28), "0202020202020101010101010800") << "the stripped header, back";
  EXPECT_EQ(hex(e[1].bytes).substr(0, 28), "0404040404040303030303030800") << "none: the arguments'";
  EXPECT_EQ(e[1].bytes.size(), 34u);
}

TEST(CheckARPHeader, LengthsOfTheHeaderAndItsAddresses) {
  const std::string arp =
      "0001080006040001"
      "020202020202"
      "0a000001"
      "000000000000"
      "0a000002";
  auto r = run("InfiniteSource(DATA \\<" + arp +
               ">, LIMIT 1, STOP true) -> a :: CheckARPHeader -> Discard;"
               "InfiniteSource(DATA \\<" +
               arp.substr(0, 40) +
               ">, LIMIT 1, STOP true) -> b :: CheckARPHeader -> "
               "Discard; InfiniteSource(DATA \\<0001080005040001>, LIMIT 1, STOP true) -> c :: CheckARPHeader -> "
               "Discard; InfiniteSource(DATA \\<000108>, LIMIT 1, STOP true) -> d :: CheckARPHeader -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.count"), 1u);
  EXPECT_EQ(r->n("a.drops"), 0u);
  EXPECT_NE(r->h("b.drop_details").find("1\tbad-arp-length"), std::string::npos) << r->h("b.drop_details");
  EXPECT_NE(r->h("c.drop_details").find("1\tbad-hardware-length"), std::string::npos);
  EXPECT_NE(r->h("d.drop_details").find("1\ttiny-packet"), std::string::npos);
  finish(*r);
}

TEST(Suppressor, DropsWhatASuppressedPortTakes) {
  // The pull ports' Unqueues sleep on Suppressor's per-output notifiers
  // (their queue empty, or their port suppressed) and wake when the port is
  // let through again: the run ends by itself, no task left polling.
  set_simulated_time(true);
  auto r =
      run("InfiniteSource(LIMIT 3) -> [0]s :: Suppressor; src1 :: InfiniteSource(LIMIT 4, ACTIVE false) -> [1]s;"
          "s[0] -> a :: Counter -> Discard; s[1] -> b :: Counter -> Discard;"
          "Script(write s.active1 false, write src1.active true);"
          "q0 :: Queue -> [0]p :: Suppressor; q1 :: Queue -> [1]p; p[0] -> Unqueue -> c :: Counter -> Discard;"
          "p[1] -> u :: Unqueue -> d :: Counter -> Discard; InfiniteSource(LIMIT 2) -> q0;"
          "src3 :: InfiniteSource(LIMIT 5, ACTIVE false) -> q1; Script(write p.active1 false, write src3.active "
          "true, wait 0.1, write k.x $(d.count)/$(q1.length), write p.active1 true);"
          "k :: Script(TYPE PASSIVE, export x);");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.count"), 3u);
  EXPECT_EQ(r->n("b.count"), 0u);
  EXPECT_EQ(r->n("s.drops"), 4u);
  EXPECT_EQ(r->h("s.active1"), "false");
  EXPECT_EQ(r->n("c.count"), 2u);
  EXPECT_EQ(r->h("k.x"), "0/5") << "a suppressed pull output gives nothing";
  EXPECT_EQ(r->n("d.count"), 5u) << "and all once let through";
  EXPECT_EQ(r->h("u.scheduled"), "false") << "asleep, not polling";
  finish(*r);
  EXPECT_FALSE(run("Idle -> s :: Suppressor; s[0] -> Discard; s[1] -> Discard;")->ok) << "one input, two outputs";
}

TEST(DRRSched, SharesBytesByDeficitRoundRobin) {
  const std::string out = tmpdir() + "/drr.txt";
  auto r =
      run("InfiniteSource(LENGTH 100, LIMIT 60, BURST 60) -> Paint(0) -> q0 :: Queue;"
          "InfiniteSource(LENGTH 400, LIMIT 30, BURST 30) -> Paint(1) -> q1 :: Queue;"
          "InfiniteSource(LENGTH 1500, LIMIT 10, BURST 10) -> Paint(2) -> q2 :: Queue;"
          "q0 -> [0]d :: DRRSched(500); q1 -> [1]d; q2 -> [2]d;"
          "d -> Unqueue(BURST 1, LIMIT 40) -> ToIPSummaryDump(" +
          out + ", FIELDS link);");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  // The oracle: Shreedhar and Varghese's loop, one packet a pull.
  std::deque<uint32_t> q[3] = {std::deque<uint32_t>(60, 100), std::deque<uint32_t>(30, 400),
                               std::deque<uint32_t>(10, 1500)};
  int64_t deficit[3] = {};
  int next = 0;
  std::string want;
  for (int k = 0; k < 40;) {
    for (int j = 0; j < 3; ++j) {
      if (q[next].empty()) {
        deficit[next] = 0;
      } else if (q[next].front() <= deficit[next]) {
        deficit[next] -= q[next].front();
        q[next].pop_front();
        want += std::to_string(next) + "|";
        ++k;
        goto pulled;
      }
      next = (next + 1) % 3;
      deficit[next] += 500;
    }
  pulled:;
  }
  EXPECT_EQ(summary_lines(out, "|"), want);
}

}  // namespace shoal::test

namespace shoal::test {

// FastClick's latency elements under simulated time: a 1,000 packet/s
// source, each packet held 5 ms by DelayUnqueue, so every latency is 5,000
// us exactly. The numbers are written in network order (NET_ORDER, followed
// by the recorder through COUNTER and by TimestampDiff through it), each
// seen once; SAMPLE 4 times one packet in four.
TEST(TimestampDiff, LatenciesOfNumberedPacketsUnderSimulatedTime) {
  const std::string out = tmpdir() + "/numbered.pcap";
  set_simulated_time(true);
  auto r = run(fmt::format(R"(
    RatedSource(LENGTH 60, RATE 1000, LIMIT 200) -> np :: NumberPacket(OFFSET 20, NET_ORDER true)
      -> rt :: RecordTimestamp(COUNTER np, OFFSET 20, N 1000) -> SetTimestamp -> Queue(1000) -> DelayUnqueue(0.005)
      -> td :: TimestampDiff(rt, OFFSET 20) -> t :: Tee;
    t[0] -> c :: CheckNumberPacket(20, 200, NET_ORDER true) -> ToDump({}, ENCAP IP);
    t[1] -> rs :: RecordTimestamp(OFFSET 20, NET_ORDER true, SAMPLE 4) -> Queue(1000) -> DelayUnqueue(0.002)
      -> ts :: TimestampDiff(rs, OFFSET 20, SAMPLE 4, NANO true) -> Discard;
    Script(wait 1, stop);
  )",
                           out));
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("np.count"), 200u);
  EXPECT_EQ(r->h("rt.net_order"), "true") << "NumberPacket's order, through COUNTER";
  EXPECT_EQ(r->n("rt.recorded"), 200u);
  for (const char* h : {"average", "min", "max", "median", "perc99", "perc00", "perc100"})
    EXPECT_EQ(r->h(std::string("td.") + h), "5000") << h;
  EXPECT_EQ(r->h("td.stddev"), "0");
  EXPECT_EQ(r->h("td.index"), "199");
  EXPECT_EQ(r->h("td.last"), "5000");
  EXPECT_EQ(r->h("c.max"), "[0] : 1");
  EXPECT_EQ(r->h("c.min"), "[0] : 1") << "every number seen once";
  EXPECT_EQ(r->n("rs.recorded"), 50u);
  EXPECT_EQ(r->h("ts.average"), "2000000") << "nanoseconds";
  EXPECT_EQ(r->h("ts.index"), "49");
  finish(*r);
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 200u);
  for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(k::load_be64(f[i].bytes.data() + 20), i) << "packet " << i;
}

// FastClick's percentiles (the delay P% of the way through, sorted), the
// BEGIN parameter, the mean and the standard deviation against a direct
// computation, over latencies that grow by 1 ms a packet: a source at
// 1,000/s into a link that takes one packet every 2 ms.
TEST(TimestampDiff, StatisticsAgainstADirectComputation) {
  set_simulated_time(true);
  auto r = run(R"(
    RatedSource(LENGTH 60, RATE 1000, LIMIT 40) -> NumberPacket -> rt :: RecordTimestamp(OFFSET 40)
      -> Queue(100) -> RatedUnqueue(500) -> td :: TimestampDiff(rt) -> Discard;
    Script(wait 1, stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  std::vector<double> d;
  std::istringstream in(r->h("td.dump_list"));
  for (double x; in >> x;) d.push_back(x);
  ASSERT_EQ(d.size(), 40u);
  EXPECT_LT(d.front(), d.back()) << "the queue grows";
  auto perc = [](std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    size_t i = size_t(p * double(v.size()) / 100);
    return v[std::min(i, v.size() - 1)];
  };
  auto g = [](double x) { return fmt::format("{:.12g}", x); };
  auto with = [&](const std::string& h, const std::string& param) {
    std::string v, err;
    return r->rt->read_handler(h, v, err, param) ? v : "error: " + err;
  };
  EXPECT_EQ(with("td.perc", "90"), g(perc(d, 90)));
  EXPECT_EQ(r->h("td.perc99"), g(perc(d, 99)));
  EXPECT_EQ(r->h("td.median"), g(perc(d, 50)));
  std::vector<double> late(d.begin() + 30, d.end());
  EXPECT_EQ(with("td.perc", "50 30"), g(perc(late, 50))) << "from the 30th delay on";
  EXPECT_EQ(with("td.min", "30"), g(*std::min_element(late.begin(), late.end())));
  EXPECT_EQ(with("td.avg_tc", "0 30"), with("td.average", "30")) << "every packet is of class 0";
  EXPECT_EQ(with("td.avg_tc", "1"), "0") << "none of class 1";
  EXPECT_EQ(with("td.avg_tc", ""), with("td.average", "")) << "no class: all";
  EXPECT_EQ(with("td.avg_tc", "x"), "error: avg_tc: 'x' is not a class (0-255)");
  double mean = 0, var = 0;
  for (double x : d) mean += x / double(d.size());
  for (double x : d) var += (x - mean) * (x - mean) / double(d.size());
  EXPECT_NEAR(std::stod(r->h("td.average")), mean, 1e-6);
  EXPECT_NEAR(std::stod(r->h("td.stddev")), std::sqrt(var), 1e-6);
  EXPECT_EQ(with("td.perc", "101"), "error: perc: '101' is not a percentile (0 to 100)");
  finish(*r);
}

// What does not fit: a packet too short for the number is lengthened (its
// IPv4 header says so, checksum and all); a number beyond the recorder's
// table passes untimed; a packet whose time was never noted, or was read
// already, goes to output 1 (or is dropped); a number beyond COUNT is out
// of scope. With two workers, every worker's copy
// shares the numbers and the tables.
TEST(TimestampDiff, ShortUnrecordedAndOutOfScopePackets) {
  const std::string in = tmpdir() + "/short.txt", out = tmpdir() + "/short.pcap";
  std::ofstream(in) << "!data src dst proto ip_len\n1.0.0.1 2.0.0.1 U 28\n1.0.0.2 2.0.0.1 U 28\n";
  auto r = run(fmt::format(R"(
    FromIPSummaryDump({}, CHECKSUM true) -> NumberPacket(40) -> CheckIPHeader -> ToDump({}, ENCAP IP);
    InfiniteSource(LENGTH 64, LIMIT 10) -> np :: NumberPacket -> rt :: RecordTimestamp(OFFSET 40, N 4)
      -> c :: CheckNumberPacket(40, 8) -> td :: TimestampDiff(rt) -> td2 :: TimestampDiff(rt) -> Discard;
    td[1] -> un :: Counter -> Discard;
  )",
                           in, out));
  ASSERT_TRUE(r->ok) << r->errors;
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].bytes.size(), 48u);
  EXPECT_EQ(k::load_be16(f[0].bytes.data() + 2), 48u) << "the IP length follows (CheckIPHeader passed it)";
  EXPECT_EQ(r->n("rt.recorded"), 4u);
  EXPECT_EQ(r->n("rt.out_of_range"), 6u);
  EXPECT_EQ(r->n("c.drops"), 2u) << "numbers 8 and 9 are out of scope";
  EXPECT_EQ(r->h("c.max"), "[0] : 1");
  EXPECT_EQ(r->h("c.min"), "[0] : 1") << "0-7 seen once each";
  EXPECT_EQ(r->h("td.index"), "3");
  EXPECT_EQ(r->n("un.count"), 4u) << "numbers 4-7 were never noted";
  EXPECT_EQ(r->n("td2.drops"), 4u) << "td read 0-3 first";
  finish(*r);
  auto bad = run("Idle -> RecordTimestamp -> td :: TimestampDiff(nothing) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("not a RecordTimestamp"), std::string::npos) << bad->errors;

  // two workers: each packet numbered once, timed once
  set_simulated_time(true);
  auto two = run(R"(
    s0 :: RatedSource(LENGTH 60, RATE 1000, LIMIT 100) -> np :: NumberPacket -> rt :: RecordTimestamp(OFFSET 40)
      -> Queue(400) -> DelayUnqueue(0.001) -> td :: TimestampDiff(rt) -> c :: CheckNumberPacket(40, 200) -> Discard;
    s1 :: RatedSource(LENGTH 60, RATE 1000, LIMIT 100) -> np;
    StaticThreadSched(s0 0, s1 1);
    Script(wait 1, stop);
  )",
                 2);
  set_simulated_time(false);
  ASSERT_TRUE(two->ok) << two->errors;
  EXPECT_EQ(two->n("np.count"), 200u);
  EXPECT_EQ(two->h("td.index"), "199");
  EXPECT_EQ(two->h("td.max"), "1000");
  EXPECT_EQ(two->h("c.max"), "[0] : 1");
  EXPECT_EQ(two->h("c.min"), "[0] : 1");
  finish(*two);
}

}  // namespace shoal::test

namespace shoal::test {

// Hub: in on N, out on every other output; Burster: TimedUnqueue pulling
// up to 8 every 10 ms (the first pull takes what the queue has by then);
// Click's other names for Null.
TEST(Hub, EveryOutputButTheInputsAndBursterAndNullNames) {
  auto r = run(R"(
    h :: Hub;
    InfiniteSource(LIMIT 3) -> [0]h; InfiniteSource(LIMIT 5) -> [1]h; InfiniteSource(LIMIT 7) -> [2]h;
    h[0] -> c0 :: Counter -> Discard; h[1] -> c1 :: Counter -> Discard; h[2] -> c2 :: Counter -> Discard;
    InfiniteSource(LIMIT 4) -> NullElement -> Null1 -> Null2 -> Null3 -> Null4 -> Null5 -> Null6 -> Null7 -> Null8
      -> PushNullElement -> Queue -> PullNullElement -> Unqueue -> cn :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c0.count"), 5u + 7u);
  EXPECT_EQ(r->n("c1.count"), 3u + 7u);
  EXPECT_EQ(r->n("c2.count"), 3u + 5u);
  EXPECT_EQ(r->n("cn.count"), 4u);
  finish(*r);
  auto lone = run("h :: Hub; InfiniteSource(LIMIT 2, STOP true) -> [0]h[0] -> Discard;");
  ASSERT_TRUE(lone->ok) << lone->errors;
  EXPECT_EQ(lone->n("h.drops"), 2u) << "nowhere else to go";
  finish(*lone);

  set_simulated_time(true);
  auto b = run(R"(
    InfiniteSource(LIMIT 20) -> Queue(100) -> bu :: Burster(0.01) -> c :: Counter -> Discard;
    Script(wait 0.005, set a $(c.count), wait 0.01, set b $(c.count), wait 0.01, set c $(c.count), wait 0.03,
           write s.x $(sub $b $a)/$(sub $c $b)/$(c.count), stop);
    s :: Script(TYPE PASSIVE, export x);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(b->ok) << b->errors;
  EXPECT_EQ(b->h("bu.burst"), "8");
  EXPECT_EQ(b->h("s.x"), "8/8/20");
  finish(*b);
}

}  // namespace shoal::test

namespace shoal::test {

// PullSwitch offers the chosen input's empty-notifier: the Unqueue pulling
// from it sleeps while that queue is empty (no polling: the run ends by
// itself, its task unscheduled), wakes when packets come to it, and when a
// write switches to an input that has some.
TEST(PullSwitch, ThePullerSleepsOnTheChosenInputsNotifier) {
  set_simulated_time(true);
  auto r = run(R"(
    InfiniteSource(DATA \<01>, LIMIT 3) -> qa :: Queue -> [0]ps :: PullSwitch(0);
    RatedSource(DATA \<02>, RATE 100, LIMIT 4) -> qb :: Queue -> [1]ps;
    ps -> u :: Unqueue -> c :: Counter -> Discard;
    Script(wait 0.1, set a $(c.count), write ps.switch 1, wait 0.5, set b $(c.count), write s.x $a/$b);
    s :: Script(TYPE PASSIVE, export x);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->h("s.x"), "3/7") << "input 0's three, then input 1's four";
  EXPECT_EQ(r->h("u.scheduled"), "false") << "asleep on the notifier, not polling";
  finish(*r);
  auto poll = run(R"(
    InfiniteSource(LIMIT 3) -> [0]ps :: PullSwitch(0); Idle -> [1]ps;
    ps -> u :: Unqueue -> c :: Counter -> Discard;
  )");
  ASSERT_TRUE(poll->ok) << poll->errors;
  EXPECT_EQ(poll->n("c.count"), 3u);
  finish(*poll);
}

}  // namespace shoal::test

namespace shoal::test {

// FastClick's multi-thread counters count every worker's packets: two
// sources on two workers into one CounterMP and two AverageCounters.
TEST(CounterMP, FastClicksThreadSafeCountersCountEveryWorkersPackets) {
  auto r = run(R"(
    s0 :: InfiniteSource(LIMIT 70) -> c :: CounterMP -> a :: AverageCounterMP -> i :: AverageCounterIMP -> Discard;
    s1 :: InfiniteSource(LIMIT 50) -> c;
    StaticThreadSched(s0 0, s1 1);
  )",
               2);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 120u);
  EXPECT_EQ(r->n("a.count"), 120u);
  EXPECT_EQ(r->n("i.count"), 120u);
  finish(*r);
}

// ScheduleInfo: tickets share a worker between tasks in proportion; a
// compound's factor scales its components, an outer full name overrides.
TEST(ScheduleInfo, TicketsShareTheWorkerInProportion) {
  auto r = run(R"(
    a :: InfiniteSource(BURST 1, LIMIT 40000, STOP true) -> ca :: Counter -> Discard;
    b :: InfiniteSource(BURST 1) -> cb :: Counter -> Discard;
    ScheduleInfo(a 2, b 0.5);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.tickets"), 2048u);
  EXPECT_EQ(r->n("b.tickets"), 512u);
  ASSERT_GT(r->n("cb.count"), 0u);
  EXPECT_NEAR(double(r->n("ca.count")) / double(r->n("cb.count")), 4.0, 0.1) << r->n("cb.count");
  finish(*r);

  auto c = run(R"(
    elementclass C { i :: InfiniteSource(LIMIT 1) -> output; j :: InfiniteSource(LIMIT 1) -> output; ScheduleInfo(i 0.5) }
    c :: C -> Discard; d :: C -> Discard;
    ScheduleInfo(c 4, d/j 10.5);
  )");
  ASSERT_TRUE(c->ok) << c->errors;
  EXPECT_EQ(c->n("c/i.tickets"), 2048u) << "4 x 0.5";
  EXPECT_EQ(c->n("c/j.tickets"), 4096u) << "4 x the default";
  EXPECT_EQ(c->n("d/j.tickets"), 10752u) << "the outer full name overrides";
  finish(*c);

  auto bad = run("ScheduleInfo(a fast); a :: Idle;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("expected 'ELEMENT PARAM'"), std::string::npos) << bad->errors;
}

// Search strips up to (or past) a pattern and UnstripAnno puts it back;
// StripTransportHeader leaves the payload first, the Unstrips undo it.
TEST(Search, StripsToThePatternAndUnstripAnnoAndTransportHeaderStripsUndo) {
  std::string out = tmpdir() + "/search.pcap";
  auto r = run(R"(
    InfiniteSource(DATA "GET / HTTP/1.0\r\nHost: x\r\n\r\nbody", LIMIT 1) -> t :: Tee(3);
    t[0] -> Search("\r\n\r\n") -> w :: ToDump()" +
               out + R"(, ENCAP IP);
    t[1] -> s :: Search("Host", STRIP_AFTER false) -> w;
    t[2] -> Search("Host") -> Search("\r\n\r\n") -> UnstripAnno -> w;
    InfiniteSource(DATA "no pattern", LIMIT 1) -> m :: Search("GET") -> w;
    m[1] -> nf :: Counter -> Discard;
    InfiniteSource(DATA "payload", LIMIT 1) -> UDPIPEncap(1.0.0.1, 1111, 2.0.0.2, 2222)
      -> StripTransportHeader -> u :: Tee(2) -> w;
    u[1] -> UnstripTransportHeader -> UnstripIPHeader -> w;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  EXPECT_EQ(r->n("nf.count"), 1u) << "not found: output 1, unchanged";
  std::vector<std::string> got;
  for (auto& f : read_pcap(out)) got.push_back(std::string(f.bytes.begin(), f.bytes.end()));
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), 5u);
  std::vector<std::string> want = {"GET / HTTP/1.0\r\nHost: x\r\n\r\nbody", "Host: x\r\n\r\nbody", "body", "payload",
                                   ""};
  want.back() = got[0];  // the whole UDP packet (binary): checked by length and tail
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got[0].size(), 20u + 8u + 7u);
  EXPECT_EQ(got[0].substr(28), "payload");
  EXPECT_EQ(got, want);
  auto bad = run("Idle -> Search(\"\") -> Discard;");
  EXPECT_FALSE(bad->ok);
}

// SetRandIPAddress stays in its prefix; LIMIT bounds the addresses drawn.
// RandomBitErrors changes about P of the bits; set and clear only set and
// clear.
TEST(SetRandIPAddress, InThePrefixWithALimitAndRandomBitErrorsAtTheRate) {
  std::string out = tmpdir() + "/rand.pcap";
  auto r = run(R"(
    RandomSeed(7);
    InfiniteSource(DATA \<00000000 00000000 00000000 00000000 00000000>, LIMIT 2000)
      -> t :: Tee(2) -> SetRandIPAddress(10.20.0.0/16) -> StoreIPAddress(16) -> Paint(1) -> w :: ToDump()" +
               out + R"(, ENCAP IP);
    t[1] -> SetRandIPAddress(192.168.0.0/16, 5) -> StoreIPAddress(16) -> Paint(2) -> w;
    InfiniteSource(DATA \<00000000000000000000000000000000>, LIMIT 1000)
      -> RandomBitErrors(0.1) -> Truncate(16) -> w;
    InfiniteSource(DATA \<FFFFFFFF>, LIMIT 100) -> RandomBitErrors(0.5, set) -> w;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  finish(*r);
  std::set<std::string> a16, limited;
  uint64_t bits = 0, flipped_frames = 0, ones = 0;
  for (auto& f : read_pcap(out)) {
    const auto& b = f.bytes;
    if (b.size() == 20 && b[16] == 10) {
      EXPECT_EQ(b[17], 20);
      a16.insert(std::string(b.begin() + 16, b.end()));
    } else if (b.size() == 20) {
      EXPECT_EQ(b[16], 192);
      EXPECT_EQ(b[17], 168);
      limited.insert(std::string(b.begin() + 16, b.end()));
    } else if (b.size() == 16) {
      ++flipped_frames;
      for (uint8_t x : b) bits += std::popcount(unsigned(x));
    } else {
      ASSERT_EQ(b.size(), 4u);
      for (uint8_t x : b) ones += x == 0xff;
    }
  }
  EXPECT_GT(a16.size(), 1500u) << "2000 draws in 65536 addresses";
  EXPECT_LE(limited.size(), 5u);
  EXPECT_GE(limited.size(), 2u);
  ASSERT_EQ(flipped_frames, 1000u);
  EXPECT_NEAR(double(bits) / (1000.0 * 128), 0.1, 0.01);
  EXPECT_EQ(ones, 400u) << "set leaves set bits set";
}

// QuitWatcher stops the router when a watched task stops; TimestampAccum
// measures every packet; CPUSwitch sends by worker; ChangeUID keeps root's
// (real) IDs.
TEST(QuitWatcher, StopsWhenTheSourceEndsAndTimestampAccumAndCPUSwitch) {
  auto r = run(R"(
    s :: InfiniteSource(LIMIT 100) -> SetTimestamp -> ta :: TimestampAccum -> c :: Counter -> Discard;
    RatedSource(RATE 1000) -> ec :: Counter -> Discard;
    QuitWatcher(s);
    ChangeUID();
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 100u);
  EXPECT_LT(r->n("ec.count"), 2000u) << "the endless source did not keep it running";
  EXPECT_EQ(r->n("ta.count"), 100u);
  EXPECT_LE(std::stod(r->h("ta.min")), std::stod(r->h("ta.max")));
  EXPECT_GE(std::stod(r->h("ta.average_time")), 0.0);
  finish(*r);

  for (int threads : {2, 3}) {  // the source runs on one worker, whichever: its own copy watches it
    auto w = run(R"(s :: InfiniteSource(LIMIT 100) -> c :: Counter -> Discard;
                    e :: RatedSource(RATE 1000) -> ec :: Counter -> Discard; QuitWatcher(s);)",
                 threads);
    ASSERT_TRUE(w->ok) << w->errors;
    EXPECT_EQ(w->n("c.count"), 100u) << threads << " workers: not stopped before the source ended";
    EXPECT_LT(w->n("ec.count"), 2000u) << threads << " workers: stopped within 2 s of it";
    finish(*w);
  }

  auto cs = run(R"(
    a :: InfiniteSource(LIMIT 5) -> s :: CPUSwitch; b :: InfiniteSource(LIMIT 7) -> s;
    StaticThreadSched(a 0, b 1);
    s[0] -> c0 :: Counter -> Discard; s[1] -> c1 :: Counter -> Discard;
  )",
                2);
  ASSERT_TRUE(cs->ok) << cs->errors;
  EXPECT_EQ(cs->n("c0.count"), 5u);
  EXPECT_EQ(cs->n("c1.count"), 7u);
  finish(*cs);
}

}  // namespace shoal::test

namespace shoal::test {

// EtherVLANEncap's header and Click's `config` text; its handlers change
// the tag; StripEtherVLANHeader(-1) sends untagged frames to output 1 and
// strips tagged ones to the network header.
TEST(EtherVLANEncap, TagsAndStripEtherVLANHeaderUndoes) {
  std::string out = tmpdir() + "/vlan.pcap";
  auto r = run(fmt::format(R"(
    e :: EtherVLANEncap(0x86dd, 1:1:1:1:1:1, 2:2:2:2:2:2, VLAN_ID 9, VLAN_PCP 3, NATIVE_VLAN 5);
    InfiniteSource(DATA "abcd", LIMIT 1) -> e -> t :: Tee -> ToDump({}, ENCAP ETHER);
    t[1] -> s :: StripEtherVLANHeader(-1) -> c :: Counter -> Discard;
    s[1] -> u :: Counter -> Discard;
    InfiniteSource(DATA "abcd", LIMIT 1) -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> s;
  )",
                           out));
  ASSERT_TRUE(r->ok) << r->errors;
  auto f = read_pcap(out);
  ASSERT_EQ(f.size(), 1u);
  const std::vector<uint8_t> want = {2, 2,    2,    2,    2,    2,    1,    1,   1,   1,   1,
                                     1, 0x81, 0x00, 0x60, 0x09, 0x86, 0xdd, 'a', 'b', 'c', 'd'};
  EXPECT_EQ(f[0].bytes, want);
  EXPECT_EQ(r->h("e.config"), "01-01-01-01-01-01, 02-02-02-02-02-02, 34525, VLAN_ID 9, VLAN_PCP 3, NATIVE_VLAN 5");
  EXPECT_EQ(r->h("e.vlan_tci"), "24585");
  EXPECT_EQ(r->n("c.count"), 1u);
  EXPECT_EQ(r->n("u.count"), 1u) << "untagged, and NATIVE_VLAN -1";
  std::string err;
  EXPECT_TRUE(r->rt->write_handler("e.vlan_id", "5", err)) << err;
  EXPECT_EQ(r->h("e.config"), "01-01-01-01-01-01, 02-02-02-02-02-02, 34525, VLAN_ID 5, VLAN_PCP 3, NATIVE_VLAN 5");
  EXPECT_FALSE(r->rt->write_handler("e.vlan_pcp", "8", err));
  finish(*r);
}

}  // namespace shoal::test

namespace shoal::test {

// Unqueue2 moves no more than the queue downstream has room for, so nothing
// is dropped there, where Unqueue's bursts overflow it; SortedIPLookup
// routes by the longest match.
TEST(Unqueue2, NeverOverflowsTheQueueDownstream) {
  set_simulated_time(true);
  auto r = run(R"(
    InfiniteSource(LIMIT 1000) -> q1 :: Queue(2000) -> u :: Unqueue2(0) -> q2 :: Queue(10)
      -> TimedUnqueue(0.001, 5) -> c :: Counter -> Discard;
    InfiniteSource(LIMIT 1000) -> p1 :: Queue(2000) -> Unqueue(BURST 32) -> p2 :: Queue(10)
      -> TimedUnqueue(0.001, 5) -> d :: Counter -> Discard;
    rt :: SortedIPLookup(10.0.0.0/8 0, 10.1.0.0/16 1, 0/0 2);
    InfiniteSource(LIMIT 3) -> IPEncap(udp, 1.1.1.1, 10.1.2.3) -> rt;
    rt[0] -> Discard; rt[1] -> c1 :: Counter -> Discard; rt[2] -> Discard;
    Script(wait 0.3, stop);
  )");
  set_simulated_time(false);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("q2.drops"), 0u);
  EXPECT_EQ(r->n("c.count"), 1000u);
  EXPECT_EQ(r->n("u.count"), 1000u);
  EXPECT_GT(r->n("p2.drops"), 0u) << "Unqueue's bursts overflow the small queue";
  EXPECT_EQ(r->n("c1.count"), 3u) << "10.1.2.3: the /16 wins";
  finish(*r);
}

}  // namespace shoal::test

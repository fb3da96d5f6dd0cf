// The IDS with the flow layer: flow options, flowbits, Suricata's actions,
// HTTP transactions through libhtp, and the link types FromDump decodes.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <pcap/pcap.h>
#include <zlib.h>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "helpers.hh"
#include "shoal/flow/http.hh"
#include "shoal/flow/sip.hh"
#include "shoal/ids/decode_events.hh"
#include "shoal/ids/engine.hh"
#include "shoal/ids/threshold.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/flowhash.hh"

using namespace shoal;
using namespace shoal::ids;

namespace {

using Bytes = std::vector<uint8_t>;

// An IPv4 packet (TCP with seq/ack/flags, or UDP) from a:sp to b:dp.
Bytes ip4(uint32_t a, uint32_t b, uint8_t proto, uint16_t sp, uint16_t dp, const std::string& data, uint32_t seq = 0,
          uint32_t ack = 0, uint8_t flags = 0x18) {
  uint32_t l4 = proto == 6 ? 20 : 8;
  Bytes ip(20 + l4, 0);
  ip[0] = 0x45, ip[8] = 64, ip[9] = proto;
  uint32_t tot = 20 + l4 + uint32_t(data.size());
  ip[2] = uint8_t(tot >> 8), ip[3] = uint8_t(tot);
  for (int i = 0; i < 4; ++i) ip[12 + i] = uint8_t(a >> (24 - 8 * i)), ip[16 + i] = uint8_t(b >> (24 - 8 * i));
  ip[20] = uint8_t(sp >> 8), ip[21] = uint8_t(sp), ip[22] = uint8_t(dp >> 8), ip[23] = uint8_t(dp);
  if (proto == 6) {
    for (int i = 0; i < 4; ++i) ip[24 + i] = uint8_t(seq >> (24 - 8 * i)), ip[28 + i] = uint8_t(ack >> (24 - 8 * i));
    ip[32] = 0x50, ip[33] = flags;
    ip[34] = 0xff, ip[35] = 0xff;  // (a window: the session checks keep data within it)
  } else {
    ip[24] = uint8_t((8 + data.size()) >> 8), ip[25] = uint8_t(8 + data.size());
  }
  ip.insert(ip.end(), data.begin(), data.end());
  return ip;
}

Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes f(a.size() + b.size());
  std::copy(a.begin(), a.end(), f.begin());
  std::copy(b.begin(), b.end(), f.begin() + std::ptrdiff_t(a.size()));
  return f;
}

Bytes ether(const Bytes& ip) { return concat({2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0}, ip); }

// An Ethernet frame with 802.1Q tags (the outer one 802.1ad when there are several).
Bytes tagged(const std::vector<uint16_t>& ids, const Bytes& ip) {
  Bytes f = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
  for (size_t i = 0; i < ids.size(); ++i) {
    uint16_t tpid = i == 0 && ids.size() > 1 ? 0x88a8 : 0x8100;  // (QinQ's outer tag)
    f.insert(f.end(), {uint8_t(tpid >> 8), uint8_t(tpid), uint8_t(0x20 | ids[i] >> 8), uint8_t(ids[i])});
  }
  f.insert(f.end(), {8, 0});
  return concat(f, ip);
}

// An IPv4 header around a payload (no transport header: a tunnel's).
Bytes ip4_raw(uint32_t a, uint32_t b, uint8_t proto, const Bytes& payload) {
  uint32_t tot = 20 + uint32_t(payload.size());
  Bytes ip(tot, 0);  // (sized once: g++ 12 -O2 misjudges an insert after a 20-byte vector)
  ip[0] = 0x45, ip[8] = 64, ip[9] = proto;
  ip[2] = uint8_t(tot >> 8), ip[3] = uint8_t(tot);
  for (int i = 0; i < 4; ++i) ip[12 + i] = uint8_t(a >> (24 - 8 * i)), ip[16 + i] = uint8_t(b >> (24 - 8 * i));
  std::copy(payload.begin(), payload.end(), ip.begin() + 20);
  return ip;
}

void write_pcap(const std::string& path, const std::vector<Bytes>& frames, int linktype = 1) {
  io::PcapWriter w;
  std::string err;
  ASSERT_TRUE(w.open(path, linktype, 65535, true, err)) << err;
  for (size_t i = 0; i < frames.size(); ++i)
    w.write(frames[i].data(), uint32_t(frames[i].size()), uint32_t(frames[i].size()), 1700000000000000000ull + i);
  ASSERT_TRUE(w.close()) << w.error();
}

// Frames through TunnelDecap and an IDSMatcher: its EVE records, and how
// many inner packets the decapsulation made.
std::vector<nlohmann::json> run_tunneled(const std::string& name, const std::vector<Bytes>& frames,
                                         const std::string& rules, const std::string& extra, uint64_t& inner) {
  std::string dir = test::tmpdir(), pcap = dir + "/" + name + ".pcap", rf = dir + "/" + name + ".rules",
              eve = dir + "/" + name + ".json";
  write_pcap(pcap, frames);
  std::ofstream(rf) << rules;
  std::remove(eve.c_str());
  auto r = test::run(fmt::format(
      "FromDump({}, STOP true) -> tun :: TunnelDecap -> FlowIPManager -> ids :: IDSMatcher(RULES {}, EVE {}, "
      "QUIET true{}) -> Discard; ids[1] -> Discard;",
      pcap, rf, eve, extra));
  EXPECT_TRUE(r->ok) << r->errors;
  std::vector<nlohmann::json> out;
  if (!r->ok) return out;
  test::finish(*r);
  inner = r->n("tun.inner");
  std::ifstream f(eve);
  for (std::string line; std::getline(f, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

constexpr uint32_t kClient = 0x0a000001, kServer = 0x0a000002;  // 10.0.0.1, 10.0.0.2

// A TCP conversation: handshake, then each (dir, data) in order, seq/ack kept.
struct Conv {
  uint16_t port, server;
  uint32_t cseq = 1000, sseq = 5000;
  std::vector<Bytes> out;
  explicit Conv(uint16_t client_port = 40000, uint16_t server_port = 80) : port(client_port), server(server_port) {
    out.push_back(ether(ip4(kClient, kServer, 6, port, server, "", cseq - 1, 0, 0x02)));
    out.push_back(ether(ip4(kServer, kClient, 6, server, port, "", sseq - 1, cseq, 0x12)));
    out.push_back(ether(ip4(kClient, kServer, 6, port, server, "", cseq, sseq, 0x10)));
  }
  void send(int dir, const std::string& d) {
    if (dir == 0) {
      out.push_back(ether(ip4(kClient, kServer, 6, port, server, d, cseq, sseq, 0x18)));
      cseq += uint32_t(d.size());
    } else {
      out.push_back(ether(ip4(kServer, kClient, 6, server, port, d, sseq, cseq, 0x18)));
      sseq += uint32_t(d.size());
    }
  }
  void fin(int dir) {
    if (dir == 0)
      out.push_back(ether(ip4(kClient, kServer, 6, port, server, "", cseq++, sseq, 0x11)));
    else
      out.push_back(ether(ip4(kServer, kClient, 6, server, port, "", sseq++, cseq, 0x11)));
  }
};

struct IdsRun {
  std::unique_ptr<test::Run> r;
  std::vector<nlohmann::json> eve;                           // alert records
  std::vector<nlohmann::json> flows, drops;                  // flow and drop records
  std::map<std::string, std::vector<nlohmann::json>> other;  // the other records, by event_type
  std::vector<uint32_t> sids() const {
    std::vector<uint32_t> s;
    for (auto& j : eve) s.push_back(j["alert"]["signature_id"]);
    return s;
  }
};

IdsRun run_ids(const std::string& name, const std::vector<Bytes>& frames, const std::string& rules, bool ips = false,
               bool midstream = false, const std::string& extra = "", const std::string& before_ids = "",
               const test::Options* opt = nullptr) {
  std::string dir = test::tmpdir(), pcap = dir + "/" + name + ".pcap", rf = dir + "/" + name + ".rules",
              eve = dir + "/" + name + "-eve.json";
  write_pcap(pcap, frames);
  std::ofstream(rf) << rules;
  std::remove(eve.c_str());
  IdsRun out;
  std::string cfg = fmt::format(
      "FromDump({}, STOP true) -> FlowIPManager(MIDSTREAM {}) -> {} ids :: IDSMatcher(RULES {}, "
      "EVE {}, IPS {}, QUIET true{}); ids[0] -> pass :: Counter -> Discard; ids[1] -> "
      "out1 :: Counter -> Discard;",
      pcap, midstream, before_ids, rf, eve, ips, extra);
  out.r = opt ? test::run_with(cfg, *opt) : test::run(cfg);
  EXPECT_TRUE(out.r->ok) << out.r->errors;
  if (!out.r->ok) return out;
  test::finish(*out.r, false, opt && opt->offload.device.fault_rate > 0);
  std::ifstream f(eve);
  for (std::string line; std::getline(f, line);) {
    auto j = nlohmann::json::parse(line);
    std::string type = j["event_type"];
    (type == "alert"  ? out.eve
     : type == "flow" ? out.flows
     : type == "drop" ? out.drops
                      : out.other[type])
        .push_back(j);
  }
  return out;
}

// The sids of the rules whose header conditions an IP packet meets.
std::vector<uint32_t> header_hits(const RuleSet& set, const Bytes& ip) {
  PacketInfo p;
  EXPECT_TRUE(parse_packet(ip.data(), uint32_t(ip.size()), p));
  std::vector<uint32_t> out;
  for (const Rule& r : set.rules())
    if (header_matches(r, p)) out.push_back(r.sid);
  return out;
}

// How many of the rules in `text` the loader refuses (each one reported).
size_t refused(const std::string& text) {
  RuleSet set;
  std::string err;
  EXPECT_TRUE(set.load_text(text, "t", Vars(), false, err)) << err;
  return set.problems().size();
}

}  // namespace

TEST(IdsFlow, EstablishedAndDirectionFollowTheHandshake) {
  Conv c;
  // data before the SYN-ACK: not established (the SYN is answered after it)
  std::vector<Bytes> frames = {c.out[0], ether(ip4(kClient, kServer, 6, 40000, 80, "early", 1000, 0, 0x08)), c.out[1],
                               c.out[2]};
  c.out = frames;
  c.send(0, "hello server");
  c.send(1, "hello client");
  // UDP: established once the reply came
  c.out.push_back(ether(ip4(kClient, kServer, 17, 5353, 53, "question")));
  c.out.push_back(ether(ip4(kServer, kClient, 17, 53, 5353, "answer")));
  c.out.push_back(ether(ip4(kClient, kServer, 17, 5353, 53, "question again")));
  // (the client's "hello server" starts where "early" did: the stream keeps
  // the first data, "early" then " server", and inspects what is new)
  auto r = run_ids("flowdir", c.out,
                   "alert tcp any any -> any any (content:\" server\"; flow:established,to_server; sid:1;)\n"
                   "alert tcp any any -> any any (content:\"hello\"; flow:to_client; sid:2;)\n"
                   "alert tcp any any -> any any (content:\"early\"; flow:not_established; sid:3;)\n"
                   "alert tcp any any -> any any (content:\"early\"; flow:established; sid:4;)\n"
                   "alert udp any any -> any any (content:\"question\"; flow:established; sid:5;)\n"
                   "alert udp any any -> any any (content:\"question\"; flow:not_established,to_server; sid:6;)\n"
                   "alert udp any any -> any any (content:\"answer\"; flow:from_server; sid:7;)\n");
  ASSERT_TRUE(r.r->ok);
  auto sids = r.sids();
  std::sort(sids.begin(), sids.end());
  EXPECT_EQ(sids, (std::vector<uint32_t>{1, 2, 3, 5, 6, 7}));
}

TEST(IdsFlow, FlowbitsCarryStateBetweenPacketsOfAFlow) {
  Conv c;
  c.send(0, "LOGIN user");
  c.send(1, "OK welcome");
  c.send(0, "RETR secret");
  Conv other(40001);  // a second connection never logs in
  other.send(0, "RETR secret");
  std::vector<Bytes> frames = c.out;
  frames.insert(frames.end(), other.out.begin(), other.out.end());
  auto r =
      run_ids("flowbits", frames,
              "alert tcp any any -> any any (content:\"LOGIN\"; flowbits:set,logged_in; flowbits:noalert; sid:1;)\n"
              "alert tcp any any -> any any (content:\"RETR\"; flowbits:isset,logged_in; sid:2;)\n"
              "alert tcp any any -> any any (content:\"RETR\"; flowbits:isnotset,logged_in; sid:3;)\n"
              "alert tcp any any -> any any (content:\"OK\"; flowbits:isset,logged_in|other; sid:4;)\n"
              "alert tcp any any -> any any (content:\"OK\"; flowbits:isset,logged_in&other; sid:5;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.sids(), (std::vector<uint32_t>{4, 2, 3})) << "noalert raises nothing; the other flow has no bit";
}

TEST(IdsFlow, FlowintsCountPerFlowInRuleOrder) {
  std::vector<Bytes> frames;
  for (int i = 0; i < 5; ++i) frames.push_back(ether(ip4(kClient, kServer, 17, 5000, 53, "ping")));
  for (int i = 0; i < 2; ++i) frames.push_back(ether(ip4(kClient, kServer, 17, 5001, 53, "ping")));
  auto r = run_ids("flowint", frames,
                   // the count goes up on every ping, the comparison after it sees the new value
                   "alert udp any any -> any any (content:\"ping\"; flowint:pings,+,1; flowint:pings,>,3; sid:1;)\n"
                   // once per flow: not set, then set
                   "alert udp any any -> any any (content:\"ping\"; flowint:first,notset; flowint:first,=,7; sid:2;)\n"
                   // compared with another flowint's value
                   "alert udp any any -> any any (content:\"ping\"; flowint:lim,=,2; flowint:pings,==,lim; sid:3;)\n"
                   // a flowint never set compares with nothing
                   "alert udp any any -> any any (content:\"ping\"; flowint:nothing,<,5; sid:4;)\n"
                   "alert udp any any -> any any (content:\"ping\"; flowint:first,isset; flowint:first,-,1; "
                   "flowint:first,==,3; sid:5;)\n");
  ASSERT_TRUE(r.r->ok);
  std::map<uint32_t, int> per_sid;
  for (uint32_t sid : r.sids()) ++per_sid[sid];
  EXPECT_EQ(per_sid[1], 2) << "the 4th and 5th ping of the first flow; the second counts its own";
  EXPECT_EQ(per_sid[2], 2) << "the first ping of each flow";
  EXPECT_EQ(per_sid[3], 2) << "the 2nd ping of each flow";
  EXPECT_EQ(per_sid[4], 0);
  EXPECT_EQ(per_sid[5], 1) << "first goes 7, 6, 5, 4, 3 on the first flow's pings";
  RuleSet bad;
  std::string err, many;
  for (int i = 0; i < int(kMaxFlowints) + 1; ++i)
    many += fmt::format("alert udp any any -> any any (flowint:n{},+,1; sid:{};)\n", i, 100 + i);
  EXPECT_TRUE(
      bad.load_text("alert udp any any -> any any (flowint:x,+; sid:1;)\n"
                    "alert udp any any -> any any (flowint:x,isset,3; sid:2;)\n"
                    "alert udp any any -> any any (flowint:x,~,1; sid:3;)\n"
                    "alert udp any any -> any any (flowint:x,=,99999999999; sid:4;)\n" +
                        many,
                    "f", Vars(), false, err));
  EXPECT_EQ(bad.problems().size(), 5u) << "four malformed, and the 17th name a flow cannot keep";
  EXPECT_EQ(bad.rules().size(), size_t(kMaxFlowints));
}

// hostbits and xbits: bits per host or pair of hosts, across flows, until
// they expire (packet time).
TEST(IdsFlow, HostbitsAndXbitsOutliveFlowsUntilTheyExpire) {
  struct At {
    Bytes frame;
    uint64_t s;  // seconds into the capture
  };
  std::vector<At> at = {
      {ether(ip4(kClient, kServer, 17, 1000, 53, "login")), 0},      // the client logs in
      {ether(ip4(kClient, kServer, 17, 1001, 53, "fetch")), 1},      // another flow of it
      {ether(ip4(kClient + 7, kServer, 17, 1000, 53, "fetch")), 2},  // a host that did not
      {ether(ip4(kClient, kServer, 17, 1002, 53, "hello")), 3},      // the pair talks
      {ether(ip4(kServer, kClient, 17, 53, 1003, "again")), 4},      // ... either way
      {ether(ip4(kServer, kClient + 7, 17, 53, 1004, "again")), 5},  // another pair
      {ether(ip4(kServer, kClient, 17, 53, 1005, "again")), 20},     // expired (5 s)
      {ether(ip4(kClient, kServer, 17, 1006, 53, "fetch")), 40},     // expired (30 s, the default)
  };
  std::string dir = test::tmpdir(), pcap = dir + "/hostbits.pcap", rules = dir + "/hostbits.rules",
              eve = dir + "/hostbits-eve.json";
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(pcap, 1, 65535, true, err)) << err;
    for (const At& a : at)
      w.write(a.frame.data(), uint32_t(a.frame.size()), uint32_t(a.frame.size()),
              1700000000000000000ull + a.s * 1000000000ull);
    ASSERT_TRUE(w.close());
  }
  std::ofstream(rules)
      << "alert udp any any -> any any (content:\"login\"; hostbits:set,authed,src; hostbits:noalert; sid:1;)\n"
         "alert udp any any -> any any (content:\"fetch\"; hostbits:isset,authed,src; sid:2;)\n"
         "alert udp any any -> any any (content:\"fetch\"; hostbits:isnotset,authed; sid:3;)\n"
         "alert udp any any -> any any (content:\"hello\"; xbits:set,talked,track ip_pair,expire 5; "
         "xbits:noalert; sid:4;)\n"
         "alert udp any any -> any any (content:\"again\"; xbits:isset,talked,track ip_pair; sid:5;)\n"
         "alert udp any any -> any any (content:\"again\"; xbits:isset,talked,track ip_src; sid:6;)\n";
  std::remove(eve.c_str());
  auto r = test::run(
      fmt::format("FromDump({}, STOP true) -> FlowIPManager -> ids :: IDSMatcher(RULES {}, EVE {}, QUIET true) -> "
                  "Discard; ids[1] -> Discard;",
                  pcap, rules, eve));
  ASSERT_TRUE(r->ok) << r->errors;
  test::finish(*r);
  std::vector<std::pair<uint32_t, uint64_t>> got;  // (sid, pcap_cnt)
  std::ifstream f(eve);
  for (std::string line; std::getline(f, line);)
    if (auto j = nlohmann::json::parse(line); j["event_type"] == "alert")
      got.emplace_back(j["alert"]["signature_id"], j["pcap_cnt"]);
  std::sort(got.begin(), got.end(), [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, uint64_t>>{{2, 2}, {3, 3}, {5, 5}, {3, 8}}))
      << "the login's host, on another flow; the other host has none; the pair either way, not another pair "
         "nor the server alone; nothing once expired";
  EXPECT_EQ(refused("alert ip any any -> any any (xbits:set,x; sid:1;)\n"
                    "alert ip any any -> any any (xbits:set,x,track ip_both; sid:2;)\n"
                    "alert ip any any -> any any (hostbits:isset,x,expire 3; sid:3;)\n"
                    "alert ip any any -> any any (hostbits:flip,x; sid:4;)\n"),
            4u);
}

// tag: the packets after an alert, of its session or of a host, become EVE
// packet records (Suricata's tagged packets); the alerting packet is not one.
TEST(IdsActions, TagLogsWhatFollowsAnAlert) {
  Conv c;
  c.send(0, "attack");  // the 4th packet
  c.send(1, "r1");
  c.send(0, "x2");
  c.send(1, "r3");
  c.send(0, "x4");  // past the session tag's 3 packets
  std::vector<Bytes> frames = c.out;
  frames.push_back(ether(ip4(kClient + 9, kServer, 17, 999, 53, "mark")));   // 9: a host tag's start
  frames.push_back(ether(ip4(kServer, kClient + 9, 17, 53, 999, "reply")));  // 10: either way
  frames.push_back(ether(ip4(kClient + 5, kServer, 17, 998, 53, "other")));  // 11: another host
  std::string rules =
      "alert tcp any any -> any any (content:\"attack\"; tag:session,3,packets; sid:1;)\n"
      "alert udp any any -> any any (content:\"mark\"; tag:host,60,seconds,src; sid:2;)\n";
  auto r = run_ids("tag", frames, rules, false, false, ", EVE_TAGGED_PACKETS true");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.sids(), (std::vector<uint32_t>{1, 2}));
  std::vector<uint64_t> cnt;
  for (const auto& j : r.other["packet"]) {
    cnt.push_back(j["pcap_cnt"]);
    EXPECT_TRUE(j.contains("packet") && j.contains("src_ip")) << j.dump();
  }
  EXPECT_EQ(cnt, (std::vector<uint64_t>{5, 6, 7, 10}));
  EXPECT_EQ(r.r->n("ids.tagged"), 4u);
  auto quiet = run_ids("tag-off", frames, rules);
  ASSERT_TRUE(quiet.r->ok);
  EXPECT_TRUE(quiet.other["packet"].empty()) << "no records unless asked (Suricata's tagged-packets)";
  EXPECT_EQ(quiet.r->n("ids.tagged"), 4u);
  EXPECT_EQ(refused("alert ip any any -> any any (tag:flow; sid:1;)\n"
                    "alert ip any any -> any any (tag:session,10; sid:2;)\n"
                    "alert ip any any -> any any (tag:session,10,packets,src; sid:3;)\n"
                    "alert ip any any -> any any (tag:host,10,minutes; sid:4;)\n"),
            4u);
}

// stream-event: a stream's data past the reassembly depth (STREAM_DEPTH,
// Suricata's stream.reassembly.depth) raises reassembly_depth_reached on
// the packet that took it there, once a direction; packets past the depth
// are inspected one by one (as Suricata's). A hole no ACK went past (a
// reset before the data was acknowledged) is no reassembly_seq_gap.
TEST(IdsFlow, StreamEventsAndTheReassemblyDepth) {
  Conv c;
  c.send(0, std::string(40, 'a'));
  c.send(0, std::string(40, 'b'));  // the 5th packet: past 50 bytes
  c.send(0, std::string(40, 'c'));
  c.send(1, "ok");
  auto r = run_ids("depth", c.out,
                   "alert tcp any any -> any any (stream-event:reassembly_depth_reached; sid:1;)\n"
                   "alert tcp any any -> any any (content:\"ccc\"; sid:2;)\n"
                   "alert tcp any any -> any any (content:\"aaa\"; sid:3;)\n"
                   "alert tcp any any -> any any (stream-event:reassembly_seq_gap; sid:4;)\n",
                   false, false, ", STREAM_DEPTH 50, EVE_ANOMALY_STREAM true");
  ASSERT_TRUE(r.r->ok);
  auto sids = r.sids();
  std::sort(sids.begin(), sids.end());
  EXPECT_EQ(sids, (std::vector<uint32_t>{1, 2, 3}));
  for (const auto& a : r.eve) {
    if (a["alert"]["signature_id"] == 1) {
      EXPECT_EQ(a["pcap_cnt"], 5);
    }
    if (a["alert"]["signature_id"] == 2) {
      EXPECT_EQ(a["pcap_cnt"], 6) << "on its packet, not the stream";
    }
  }
  size_t stream_anomalies = 0;
  for (const auto& a : r.other["anomaly"])
    if (a["anomaly"]["type"] == "stream") {
      EXPECT_EQ(a["anomaly"]["event"], "stream.reassembly_depth_reached");
      ++stream_anomalies;
    }
  EXPECT_EQ(stream_anomalies, 1u);

  // a hole in the server's data, then a reset that acknowledges none of it
  Conv g;
  g.send(1, "Please ");
  uint32_t acked = g.sseq;
  g.sseq += 4;  // (4 bytes the capture never had)
  g.send(1, "Me ");
  g.send(1, "In!");
  g.out.push_back(ether(ip4(kClient, kServer, 6, g.port, g.server, "", g.cseq, acked, 0x14)));  // RST, ACK
  auto gap = run_ids("unacked-gap", g.out, "alert tcp any any -> any any (stream-event:reassembly_seq_gap; sid:4;)\n");
  ASSERT_TRUE(gap.r->ok);
  EXPECT_TRUE(gap.sids().empty());
  ASSERT_FALSE(gap.other["stats"].empty());
  EXPECT_EQ(gap.other["stats"].back()["stats"]["tcp"]["reassembly_gap"], 0);

  RuleSet set;
  std::string err;
  EXPECT_TRUE(
      set.load_text("alert tcp any any -> any any (stream-event:reassembly_segment_before_base_seq; sid:1;)\n"
                    "alert tcp any any -> any any (requires: version >= 9; sid:2;)\n"
                    "alert tcp any any -> any any (requires: version >= 8.1; sid:3;)\n"
                    "alert tcp any any -> any any (requires: feature geoip; sid:4;)\n"
                    "alert tcp any any -> any any (requires: feature ja4, version >= 7.0.3 < 9; sid:5;)\n"
                    "alert tcp any any -> any any (requires: version >= 8; sid:6;)\n",
                    "s", Vars(), false, err));
  std::vector<uint32_t> loaded;
  for (const Rule& x : set.rules()) loaded.push_back(x.sid);
  EXPECT_EQ(loaded, (std::vector<uint32_t>{5, 6})) << "an event not raised, and what Suricata 8.0 does not meet";
}

// The TCP session checks (flow::TcpSession): a reset with the wrong
// sequence number (a blind injection) does not end the stream an IDS
// inspects, a SYN sent again on an established connection is a stream
// event, and an inline IPS drops what failed a check ("stream error",
// Suricata's stream.drop-invalid).
TEST(IdsStream, TheSessionChecksKeepInjectedSegmentsOutOfTheStream) {
  Conv c;
  c.send(0, "GET /att");
  c.out.push_back(ether(ip4(kClient, kServer, 6, c.port, c.server, "", c.cseq - 30, c.sseq, 0x02)));  // SYN again
  // a reset "from the server" whose sequence number is not the server's next
  c.out.push_back(ether(ip4(kServer, kClient, 6, c.server, c.port, "", c.sseq + 5000, c.cseq, 0x14)));
  c.send(0, "ack HTTP/1.0\r\n\r\n");
  c.send(1, "HTTP/1.0 200 OK\r\n\r\n");
  const std::string rules =
      "alert tcp any any -> any any (content:\"attack\"; sid:1;)\n"
      "alert tcp any any -> any any (stream-event:est_syn_resend_diff_seq; sid:2;)\n"
      "alert tcp any any -> any any (stream-event:est_syn_resend; sid:3;)\n";
  auto ids = run_ids("session-checks", c.out, rules, false, false, ", EVE_ANOMALY_STREAM true");
  ASSERT_TRUE(ids.r->ok);
  EXPECT_EQ(ids.sids(), (std::vector<uint32_t>{2, 1})) << "the stream went on past the reset";
  EXPECT_EQ(ids.r->n("ids.stream_rejected"), 2u) << "the reset and the SYN";
  size_t anomalies = 0;
  for (const auto& a : ids.other["anomaly"]) anomalies += a["anomaly"]["event"] == "stream.est_syn_resend_diff_seq";
  EXPECT_EQ(anomalies, 1u);
  ASSERT_EQ(ids.flows.size(), 1u);
  EXPECT_EQ(ids.flows[0]["tcp"]["state"], "established") << "the reset did not close it";

  auto ips = run_ids("session-checks-ips", c.out, rules, true);
  ASSERT_TRUE(ips.r->ok);
  EXPECT_EQ(ips.r->n("ids.stream_error_dropped"), 2u);
  EXPECT_EQ(ips.r->n("out1.count"), 2u);
  ASSERT_EQ(ips.drops.size(), 2u);
  EXPECT_EQ(ips.drops[0]["drop"]["reason"], "stream error");
  EXPECT_EQ(ips.drops[0].value("pcap_cnt", 0), 5);
  EXPECT_EQ(ips.drops[1].value("pcap_cnt", 0), 6);
  ASSERT_FALSE(ips.other["stats"].empty());
  EXPECT_EQ(ips.other["stats"].back()["stats"]["ips"]["drop_reason"]["stream_error"], 2);
  EXPECT_EQ(ips.other["stats"].back()["stats"]["flow"]["end"]["tcp_state"]["established"], 1);
  {  // offloaded (the device scans, the host inspects): the same drops
    test::Options o = test::default_options();
    o.offload.device.delay_us = 20;
    auto off = run_ids("session-checks-off", c.out, rules, true, false, "", "OffloadBalancer(FRACTION 1) ->", &o);
    ASSERT_TRUE(off.r->ok);
    EXPECT_EQ(off.r->n("ids.stream_error_dropped"), 2u);
    EXPECT_EQ(off.r->n("out1.count"), 2u);
    EXPECT_EQ(off.sids(), (std::vector<uint32_t>{2, 1}));
    EXPECT_GT(off.r->n("ids.offload_device_packets"), 0u) << "the device scanned the packets";
  }
  auto kept = run_ids("session-checks-ips-off", c.out, rules, true, false, ", STREAM_DROP_INVALID false");
  ASSERT_TRUE(kept.r->ok);
  EXPECT_EQ(kept.r->n("ids.stream_error_dropped"), 0u);
  EXPECT_EQ(kept.r->n("out1.count"), 0u);
}

// A SYN sent again with other ISNs: past 10 queued, each is a flood event
// (Suricata 8's 3whs_syn_flood); the server's SYN/ACK answers one of them,
// and the stream follows that one.
TEST(IdsStream, SynsSentAgainWithOtherIsnsFollowTheOneAnswered) {
  std::vector<Bytes> f;
  for (uint32_t i = 0; i < 13; ++i)
    f.push_back(ether(ip4(kClient, kServer, 6, 40000, 80, "", 7000 + i * 1000, 0, 0x02)));
  const uint32_t isn = 7000 + 4 * 1000;  // (the fifth)
  f.push_back(ether(ip4(kServer, kClient, 6, 80, 40000, "", 90000, isn + 1, 0x12)));
  f.push_back(ether(ip4(kClient, kServer, 6, 40000, 80, "", isn + 1, 90001, 0x10)));
  f.push_back(ether(ip4(kClient, kServer, 6, 40000, 80, "GET /se", isn + 1, 90001, 0x18)));
  f.push_back(ether(ip4(kClient, kServer, 6, 40000, 80, "cret HTTP/1.0\r\n\r\n", isn + 8, 90001, 0x18)));
  auto r = run_ids("syn-flood", f,
                   "alert tcp any any -> any any (stream-event:3whs_syn_flood; sid:1;)\n"
                   "alert tcp any any -> any any (content:\"secret\"; sid:2;)\n"
                   "alert tcp any any -> any any (stream-event:3whs_synack_with_wrong_ack; sid:3;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.sids(), (std::vector<uint32_t>{1, 1, 2}));
}

// A retransmission with other bytes ("EVIL" over "GOOD", before the server
// acknowledged them). IDS mode: the stream rules see what the receiver keeps,
// by its host-os-policy (old-linux takes the new bytes, windows and Suricata's
// default bsd keep the first). Inline IPS: the retransmission is normalized
// to the bytes inspected (its TCP checksum updated) and the stream's bytes
// are inspected again on it, as Suricata's stream.inline.
TEST(IdsStream, OverlapsFollowTheReceiversPolicyAndAnInlineIpsNormalizes) {
  Conv c;
  const uint32_t at = c.cseq;
  c.send(0, "GOOD");
  Bytes evil = ether(ip4(kClient, kServer, 6, c.port, c.server, "EVIL", at, c.sseq, 0x18));
  {  // a valid TCP checksum
    uint8_t* ip = evil.data() + 14;
    uint32_t l4len = uint32_t(evil.size()) - 34;
    uint32_t sum = k::csum_partial(ip + 20, l4len, k::ipv4_pseudo_sum(ip + 12, ip + 16, 6, l4len));
    k::store_be16(ip + 36, k::csum_fold(sum));
  }
  c.out.push_back(evil);
  c.out.push_back(ether(ip4(kServer, kClient, 6, c.server, c.port, "", c.sseq, c.cseq, 0x10)));  // the ACK
  c.fin(0);
  c.fin(1);
  const std::string rules =
      "alert tcp-stream any any -> any any (content:\"GOOD\"; sid:1;)\n"
      "alert tcp-stream any any -> any any (content:\"EVIL\"; sid:2;)\n"
      "alert tcp-pkt any any -> any any (content:\"EVIL\"; sid:3;)\n";
  auto stream_sids = [](const IdsRun& r) {
    std::vector<uint32_t> s;
    for (uint32_t x : r.sids())
      if (x != 3) s.push_back(x);
    return s;
  };
  for (auto [hosts, want] : {std::pair{"old-linux 10.0.0.2", 2u}, std::pair{"windows 10.0.0.0/8", 1u},
                             std::pair{"old-linux 10.0.0.1", 1u}, std::pair{"", 1u}}) {
    SCOPED_TRACE(hosts);
    auto r = run_ids("overlap-ids", c.out, rules, false, false,
                     fmt::format(", STREAM_INSPECT acked, HOST_OS_POLICY \"{}\"", hosts));
    ASSERT_TRUE(r.r->ok);
    EXPECT_EQ(stream_sids(r), std::vector<uint32_t>{want});
    const std::vector<uint32_t> all = r.sids();
    EXPECT_EQ(std::count(all.begin(), all.end(), 3u), 1) << "the packet as it came";
  }
  // inline IPS: the EVIL packet leaves as GOOD, its checksum right
  std::string dir = test::tmpdir(), pcap = dir + "/inline.pcap", rf = dir + "/inline.rules",
              eve = dir + "/inline-eve.json", outp = dir + "/inline-out.pcap";
  write_pcap(pcap, c.out);
  std::ofstream(rf) << rules;
  std::remove(eve.c_str());
  auto r = test::run(
      fmt::format("FromDump({}, STOP true) -> FlowIPManager -> ids :: IDSMatcher(RULES {}, EVE {}, IPS true, QUIET "
                  "true) -> ToDump({});",
                  pcap, rf, eve, outp));
  ASSERT_TRUE(r->ok) << r->errors;
  test::finish(*r);
  EXPECT_EQ(r->n("ids.stream_normalized"), 1u);
  EXPECT_EQ(r->n("ids.stream_normalized_bytes"), 4u);
  EXPECT_EQ(r->n("ids.stream_reinspections"), 1u);
  std::vector<uint32_t> sids;
  std::ifstream f(eve);
  for (std::string line; std::getline(f, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event_type"] == "alert") sids.push_back(j["alert"]["signature_id"]);
  }
  EXPECT_EQ(sids, (std::vector<uint32_t>{1, 1})) << "GOOD on the stream, again on the retransmission; no EVIL";
  {  // the overlap with other bytes is a stream event inline (Suricata checks it there), not in IDS mode
    const std::string ev = "alert tcp any any -> any any (stream-event:reassembly_overlap_different_data; sid:9;)\n";
    auto ips = run_ids("overlap-event", c.out, ev, true);
    ASSERT_TRUE(ips.r->ok);
    EXPECT_EQ(ips.sids(), std::vector<uint32_t>{9});
    ASSERT_EQ(ips.eve.size(), 1u);
    EXPECT_EQ(ips.eve[0].value("pcap_cnt", 0), 5);
    auto ids = run_ids("overlap-event-ids", c.out, ev, false, false, ", STREAM_INSPECT acked");
    ASSERT_TRUE(ids.r->ok);
    EXPECT_TRUE(ids.sids().empty());
  }
  auto frames = test::read_pcap(outp);
  ASSERT_EQ(frames.size(), c.out.size());
  const Bytes& got = frames[4].bytes;  // (the handshake's three, GOOD, then the retransmission)
  ASSERT_EQ(got.size(), evil.size());
  EXPECT_EQ(std::string(got.end() - 4, got.end()), "GOOD");
  const uint8_t* ip = got.data() + 14;
  uint32_t l4len = uint32_t(got.size()) - 34;
  EXPECT_EQ(k::csum_fold(k::csum_partial(ip + 20, l4len, k::ipv4_pseudo_sum(ip + 12, ip + 16, 6, l4len))), 0)
      << "the TCP checksum holds";
}

// An inline IPS inspects data held past a hole on the segment that ends it,
// with the held data before it (Suricata's inline raw inspection): a drop
// rule stops the packet that completes its match while the hole is still
// open, and what it found is not reported again when the hole becomes a gap
// or fills.
// Held data that arrived before the segment ahead of it is matched across
// the two once delivered (not missed).
TEST(IdsStream, AnInlineIpsInspectsDataHeldPastAHole) {
  auto conv = [](bool reversed, bool filled = false) {
    Conv c;
    c.send(0, "hello ");
    const uint32_t hole = c.cseq;
    c.cseq += 4;  // a hole (lost; sent again when `filled`)
    Conv tail = c;
    tail.out.clear();
    tail.send(0, "dro");
    tail.send(0, "p me");
    if (reversed) std::swap(tail.out[0], tail.out[1]);
    c.out.insert(c.out.end(), tail.out.begin(), tail.out.end());
    c.cseq = tail.cseq;
    if (filled) c.out.push_back(ether(ip4(kClient, kServer, 6, c.port, c.server, "xyz ", hole, c.sseq, 0x18)));
    c.out.push_back(ether(ip4(kClient, kServer, 6, c.port, c.server, "", c.cseq, c.sseq, 0x14)));  // RST
    return c.out;
  };
  const std::string alert = "alert tcp-stream any any -> any any (content:\"drop me\"; sid:1;)\n";
  auto pcap_cnts = [](const IdsRun& r) {
    std::vector<uint64_t> n;
    for (const auto& j : r.eve) n.push_back(j.value("pcap_cnt", uint64_t(0)));
    return n;
  };
  auto in_order = run_ids("held-inline", conv(false), alert, true);
  ASSERT_TRUE(in_order.r->ok);
  EXPECT_EQ(in_order.sids(), std::vector<uint32_t>{1}) << "once: not again when the hole became a gap";
  EXPECT_EQ(pcap_cnts(in_order), std::vector<uint64_t>{6}) << "on the segment that completed it, held";
  EXPECT_EQ(in_order.r->n("ids.stream_held_inspections"), 2u);
  auto ids = run_ids("held-ids", conv(false), alert, false);
  ASSERT_TRUE(ids.r->ok);
  EXPECT_EQ(ids.sids(), std::vector<uint32_t>{1});
  EXPECT_EQ(pcap_cnts(ids), std::vector<uint64_t>{7}) << "IDS: once delivered, at the reset";
  EXPECT_EQ(ids.r->n("ids.stream_held_inspections"), 0u);
  auto filled = run_ids("held-filled", conv(false, true), alert, true);
  ASSERT_TRUE(filled.r->ok);
  EXPECT_EQ(filled.sids(), std::vector<uint32_t>{1}) << "not again when the hole filled";
  EXPECT_EQ(pcap_cnts(filled), std::vector<uint64_t>{6});
  // a window shorter than the match: inspected held, "drop me" is not
  // found (the window reaches back 2 bytes before "p me"); delivered after
  // the gap in one piece, it is (nothing was taken as found that was not)
  auto narrow = run_ids("held-narrow", conv(false), alert, true, false, ", STREAM_WINDOW 2");
  ASSERT_TRUE(narrow.r->ok);
  EXPECT_EQ(narrow.sids(), std::vector<uint32_t>{1});
  EXPECT_EQ(pcap_cnts(narrow), std::vector<uint64_t>{7}) << "at the reset";
  auto reversed = run_ids("held-reversed", conv(true), alert, true);
  ASSERT_TRUE(reversed.r->ok);
  EXPECT_EQ(reversed.sids(), std::vector<uint32_t>{1}) << "across two held segments that came the other way round";
  EXPECT_EQ(pcap_cnts(reversed), std::vector<uint64_t>{7}) << "found once delivered";
  // a drop rule drops the packet that completed its match (and the flow's after it)
  auto drop = run_ids("held-drop", conv(false), "drop tcp-stream any any -> any any (content:\"drop me\"; sid:1;)\n",
                      true, false, ", EVE_DROP_FLOWS all");
  ASSERT_TRUE(drop.r->ok);
  ASSERT_GE(drop.drops.size(), 1u);
  EXPECT_EQ(drop.drops[0].value("pcap_cnt", uint64_t(0)), 6u);
  EXPECT_EQ(drop.r->n("out1.count"), 2u) << "the packet, and the reset after it";
  EXPECT_EQ(drop.r->n("pass.count"), 5u);
}

// Inline inspection (an IPS's: arrival, held data inspected as it comes)
// against inspection on acknowledgement, on streams with 10% of their
// segments swapped with the next: the same alerts per connection, none
// missed, none twice. (Each pattern occurs once a connection: a rule that
// matched within a window is not reported again for another occurrence in
// it, and a hole starts the inline window over, so a second occurrence
// could alert inline only.)
TEST(IdsStream, InlineInspectionOfReorderedStreamsFindsWhatAckedInspectionFinds) {
  std::mt19937 rng(7);
  std::vector<std::string> pats;
  std::string rules;
  for (int i = 0; i < 40; ++i) {
    std::string p;
    for (int k = 0; k < 7; ++k) p += char('a' + rng() % 26);
    pats.push_back(p);
    rules += fmt::format("alert tcp-stream any any -> any any (content:\"{}\"; sid:{};)\n", p, i + 1);
  }
  std::vector<Bytes> frames;
  for (uint16_t conn = 0; conn < 30; ++conn) {
    Conv c(uint16_t(41000 + conn));
    std::vector<std::pair<uint32_t, std::string>> segs;  // (offset, bytes)
    size_t used = 0;  // (each pattern once a connection: a window's rule matches again only past a hole)
    for (uint32_t i = 0; i < 60; ++i) {
      std::string d;
      for (int k = 0; k < 40; ++k) d += char('a' + rng() % 26);
      if (rng() % 8 == 0) d.replace(rng() % 34, 7, pats[(conn * 7 + used++) % pats.size()]);
      segs.emplace_back(i * 40, d);
    }
    for (size_t i = 0; i + 1 < segs.size(); ++i)
      if (rng() % 10 == 0) std::swap(segs[i], segs[i + 1]), ++i;
    std::set<uint32_t> got;
    uint32_t next = 0;
    for (auto& [off, d] : segs) {
      c.out.push_back(ether(ip4(kClient, kServer, 6, c.port, c.server, d, c.cseq + off, c.sseq, 0x18)));
      got.insert(off / 40);
      while (got.count(next)) ++next;
      c.out.push_back(ether(ip4(kServer, kClient, 6, c.server, c.port, "", c.sseq, c.cseq + next * 40, 0x10)));
    }
    frames.insert(frames.end(), c.out.begin(), c.out.end());
  }
  auto alerts = [](const IdsRun& r) {
    std::multiset<std::pair<int, uint32_t>> a;
    for (const auto& j : r.eve) a.insert({j["src_port"].get<int>(), j["alert"]["signature_id"].get<uint32_t>()});
    return a;
  };
  auto inline_ips = run_ids("reorder-inline", frames, rules, true, false, ", STREAM_INSPECT arrival");
  auto acked_ips = run_ids("reorder-acked", frames, rules, true, false, ", STREAM_INSPECT acked");
  ASSERT_TRUE(inline_ips.r->ok && acked_ips.r->ok);
  EXPECT_GT(inline_ips.r->n("ids.stream_held_inspections"), 20u) << "segments came held";
  EXPECT_GT(acked_ips.eve.size(), 100u);
  auto a = alerts(inline_ips), b = alerts(acked_ips);
  std::vector<std::pair<int, uint32_t>> only_inline, only_acked;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_inline));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_acked));
  auto packets = [](const IdsRun& r, const std::vector<std::pair<int, uint32_t>>& which) {
    std::string out;
    for (const auto& j : r.eve)
      for (const auto& [port, sid] : which)
        if (j["src_port"] == port && j["alert"]["signature_id"] == sid)
          out += fmt::format(" {}/{}@{}", port, sid, j.value("pcap_cnt", 0));
    return out;
  };
  EXPECT_TRUE(only_inline.empty() && only_acked.empty())
      << "(port, sid) inline only: " << fmt::format("{}", fmt::join(only_inline, " "))
      << "; on acknowledgement only: " << fmt::format("{}", fmt::join(only_acked, " ")) << "; inline at"
      << packets(inline_ips, only_inline) << packets(inline_ips, only_acked) << "; acked at"
      << packets(acked_ips, only_inline) << packets(acked_ips, only_acked);
}

// A flow dropped in IPS mode ends without its end's inspection, and the
// transaction it left open is not logged (Suricata makes no flow-end pseudo
// packets for a dropped flow); in IDS mode the same transaction is logged
// at the flow's end.
TEST(IdsActions, ADroppedFlowLogsNothingItLeftOpen) {
  Conv c;
  c.send(0, "GET /x HTTP/1.1\r\nHost: a.example\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nServer: SimpleHTTP/0.6\r\nContent-Length: 100\r\n\r\npart");
  c.send(0, "");
  std::string rules = "drop http any any -> any any (http.server; content:\"SimpleHTTP/\"; sid:1;)\n";
  auto ips = run_ids("drop-open-tx", c.out, rules, true);
  ASSERT_TRUE(ips.r->ok);
  EXPECT_EQ(ips.sids(), (std::vector<uint32_t>{1}));
  EXPECT_TRUE(ips.other["http"].empty()) << "the dropped flow's open transaction";
  ASSERT_EQ(ips.flows.size(), 1u);
  auto ids = run_ids("drop-open-tx-ids", c.out, rules);
  ASSERT_TRUE(ids.r->ok);
  ASSERT_EQ(ids.other["http"].size(), 1u) << "logged at the flow's end";
  EXPECT_EQ(ids.other["http"][0]["http"]["status"], 200);
}

// Suricata's app-layer.error-policy: a SIP response sent to the server is
// an error of Suricata's parser (it parses requests that way); the policy
// decides that packet, and the flow's after it, before the rules see them.
TEST(IdsActions, TheAppLayerErrorPolicyDecidesAPacketAParserCouldNotTake) {
  auto sip = [](const std::string& first, const std::string& cseq) {
    return first +
           "\r\nVia: SIP/2.0/UDP 10.0.0.1:5060\r\nFrom: <sip:a@x>\r\nTo: <sip:b@x>\r\nCall-ID: 1@x\r\nCSeq: " + cseq +
           "\r\nContent-Length: 0\r\n\r\n";
  };
  std::vector<Bytes> frames = {
      ether(ip4(kClient, kServer, 17, 5060, 5060, sip("INVITE sip:b@x SIP/2.0", "1 INVITE"))),
      ether(ip4(kServer, kClient, 17, 5060, 5060, sip("SIP/2.0 100 Trying", "1 INVITE"))),
      ether(ip4(kClient, kServer, 17, 5060, 5060, sip("SIP/2.0 200 OK", "1 INVITE"))),  // the wrong way
      ether(ip4(kClient, kServer, 17, 5060, 5060, sip("ACK sip:b@x SIP/2.0", "1 ACK"))),
  };
  const std::string rules = "alert udp any any -> any any (flow:to_server; sid:2;)\n";
  struct Case {
    const char* policy;
    bool ips;
    size_t alerts, out1, app_dropped;
  };
  for (const Case& c :
       {Case{"ignore", true, 3, 0, 0}, Case{"drop-packet", true, 2, 1, 1}, Case{"drop-flow", true, 1, 2, 1},
        Case{"auto", true, 1, 2, 1}, Case{"pass-flow", true, 1, 0, 0}, Case{"pass-packet", true, 2, 0, 0},
        Case{"drop-packet", false, 3, 0, 0}, Case{"auto", false, 3, 0, 0}}) {
    SCOPED_TRACE(fmt::format("{}, {}", c.policy, c.ips ? "IPS" : "IDS"));
    auto r = run_ids("app-error", frames, rules, c.ips, false,
                     fmt::format(", APP_ERROR_POLICY {}, EVE_DROP_FLOWS all", c.policy));
    ASSERT_TRUE(r.r->ok);
    EXPECT_EQ(r.eve.size(), c.alerts);
    if (c.ips) {
      EXPECT_EQ(r.r->n("out1.count"), c.out1);
    }
    EXPECT_EQ(r.r->n("ids.app_error_dropped"), c.app_dropped);
    if (c.app_dropped) {
      ASSERT_FALSE(r.drops.empty());
      EXPECT_EQ(r.drops[0]["drop"]["reason"], "applayer error");
      EXPECT_EQ(r.drops[0].value("pcap_cnt", 0), 3);
    }
  }
  {  // the flow record names the policy (Suricata's exception_policy, with the flow output's option)
    auto r = run_ids("app-error-flow", frames, rules, true, false,
                     ", APP_ERROR_POLICY drop-flow, EVE_EXCEPTION_POLICY true");
    ASSERT_TRUE(r.r->ok);
    ASSERT_EQ(r.flows.size(), 1u);
    EXPECT_EQ(r.flows[0]["flow"]["exception_policy"],
              nlohmann::json::parse(R"([{"target": "app_layer_error", "policy": "drop_flow"}])"));
  }
  {  // offloaded: the same decisions
    test::Options o = test::default_options();
    o.offload.device.delay_us = 20;
    auto off = run_ids("app-error-off", frames, rules, true, false, ", APP_ERROR_POLICY drop-packet",
                       "OffloadBalancer(FRACTION 1) ->", &o);
    ASSERT_TRUE(off.r->ok);
    EXPECT_EQ(off.eve.size(), 2u);
    EXPECT_EQ(off.r->n("out1.count"), 1u);
    EXPECT_EQ(off.r->n("ids.app_error_dropped"), 1u);
    EXPECT_GT(off.r->n("ids.offload_device_packets"), 0u) << "the device scanned the packets";
  }
  auto bad = test::run("i :: Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, APP_ERROR_POLICY drop) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("APP_ERROR_POLICY 'drop'"), std::string::npos) << bad->errors;
}

TEST(IdsActions, PassSilencesTheFlowAndDropBlocksItInIpsMode) {
  Conv c;
  c.send(0, "trusted hello");
  c.send(0, "attack one");
  c.send(0, "attack two");
  std::string rules =
      "alert tcp any any -> any any (content:\"attack\"; sid:1;)\n"
      "pass tcp any any -> any any (content:\"trusted\"; sid:2;)\n";
  auto passed = run_ids("pass", c.out, rules);
  ASSERT_TRUE(passed.r->ok);
  EXPECT_TRUE(passed.eve.empty()) << "a pass rule passes the whole flow, and logs nothing";
  EXPECT_EQ(passed.r->n("ids.passed"), 1u);
  EXPECT_EQ(passed.r->n("ids.flow_passed"), 2u);

  Conv d;
  d.send(0, "hello");
  d.send(0, "attack one");
  d.send(0, "more data");
  std::string drop = "drop tcp any any -> any any (content:\"attack\"; sid:3;)\n";
  auto ids = run_ids("drop-ids", d.out, drop, false);
  ASSERT_TRUE(ids.r->ok);
  ASSERT_EQ(ids.eve.size(), 1u);
  EXPECT_EQ(ids.eve[0]["alert"]["action"], "allowed") << "IDS mode never drops";
  EXPECT_EQ(ids.r->n("ids.dropped"), 0u);
  // EVE: Suricata's drop output defaults (flows start, no alert object): the
  // packet the rule dropped; the flow's later ones in that direction are not
  // logged again
  auto start = run_ids("drop-ips-start", d.out, drop, true);
  ASSERT_TRUE(start.r->ok);
  ASSERT_EQ(start.drops.size(), 1u);
  EXPECT_EQ(start.drops[0]["drop"]["reason"], "rules");
  EXPECT_FALSE(start.drops[0].contains("alert"));
  EXPECT_EQ(start.r->n("out1.count"), 2u) << "both dropped all the same";
  auto ips = run_ids("drop-ips", d.out, drop, true, false, ", EVE_DROP_FLOWS all, EVE_DROP_ALERTS true");
  ASSERT_TRUE(ips.r->ok);
  ASSERT_EQ(ips.eve.size(), 1u);
  EXPECT_EQ(ips.eve[0]["alert"]["action"], "blocked");
  EXPECT_EQ(ips.r->n("ids.dropped"), 1u);
  EXPECT_EQ(ips.r->n("ids.flow_dropped"), 1u) << "the flow's later packet is dropped uninspected";
  EXPECT_EQ(ips.r->n("out1.count"), 2u);
  EXPECT_EQ(ips.r->n("pass.count"), d.out.size() - 2);
  // IPS with output 1 unconnected: the dropped packets are dropped there,
  // counted by reason, on the CPU and offloaded alike
  for (bool offloaded : {false, true}) {
    std::string dir = test::tmpdir(), pcap = dir + "/one-output.pcap", rf = dir + "/one-output.rules";
    write_pcap(pcap, d.out);
    std::ofstream(rf) << drop;
    test::Options o = test::default_options();
    o.offload.device.delay_us = 20;
    auto one = test::run_with(fmt::format("FromDump({}, STOP true) -> FlowIPManager -> {} ids :: IDSMatcher(RULES {}, "
                                          "IPS true, QUIET true, ENGINE builtin) -> pass :: Counter -> Discard;",
                                          pcap, offloaded ? "OffloadBalancer(FRACTION 1) ->" : "", rf),
                              o);
    ASSERT_TRUE(one->ok) << one->errors;
    test::finish(*one, false);
    EXPECT_EQ(one->n("ids.dropped"), 1u) << offloaded;
    EXPECT_EQ(one->n("ids.drops"), 2u) << offloaded << ": the packet the rule dropped and the flow's later one";
    EXPECT_EQ(one->n("pass.count"), d.out.size() - 2) << offloaded;
    EXPECT_EQ(one->n("ids.offload_device_packets") > 0, offloaded) << "the device scanned the packets";
  }
  // IPS: a packet that only alerts goes on (output 0), as Suricata forwards it
  auto alert_ips = run_ids("alert-ips", d.out, "alert tcp any any -> any any (content:\"attack\"; sid:4;)\n", true);
  ASSERT_TRUE(alert_ips.r->ok);
  ASSERT_EQ(alert_ips.eve.size(), 1u);
  EXPECT_EQ(alert_ips.eve[0]["alert"]["action"], "allowed");
  EXPECT_EQ(alert_ips.r->n("out1.count"), 0u);
  EXPECT_EQ(alert_ips.r->n("pass.count"), d.out.size());
  // EVE_DROP_FLOWS all: a drop record per dropped packet (EVE_DROP_ALERTS:
  // with its rule), and the flow's record with its action
  ASSERT_EQ(ips.drops.size(), 2u);
  EXPECT_EQ(ips.drops[0]["drop"]["reason"], "rules");
  EXPECT_EQ(ips.drops[0]["alert"]["signature_id"], 3);
  EXPECT_EQ(ips.drops[1]["drop"]["reason"], "flow drop");
  ASSERT_EQ(ips.flows.size(), 1u);
  EXPECT_EQ(ips.flows[0]["flow"]["action"], "drop");
  EXPECT_EQ(ips.flows[0]["flow"]["alerted"], true);
  EXPECT_EQ(ips.flows[0]["flow"]["pkts_toserver"], 5) << "the handshake's two and three data segments";
  EXPECT_EQ(ips.flows[0]["flow"]["reason"], "shutdown");
  EXPECT_EQ(ips.flows[0]["flow_id"], ips.eve[0]["flow_id"]);
  EXPECT_EQ(ips.flows[0]["src_port"], 40000) << "the originator is the source";
  ASSERT_EQ(passed.flows.size(), 1u);
  EXPECT_EQ(passed.flows[0]["flow"]["action"], "pass");
  EXPECT_EQ(passed.flows[0]["flow"]["alerted"], false);

  // alert then pass: the pass rule's `alert` logs it, once; the flow is passed all the same
  std::string loud =
      "alert tcp any any -> any any (content:\"attack\"; sid:1;)\n"
      "pass tcp any any -> any any (content:\"trusted\"; alert; sid:2;)\n";
  auto told = run_ids("pass-alert", c.out, loud);
  ASSERT_TRUE(told.r->ok);
  ASSERT_EQ(told.eve.size(), 1u);
  EXPECT_EQ(told.eve[0]["alert"]["signature_id"], 2);
  EXPECT_EQ(told.r->n("ids.flow_passed"), 2u);
  ASSERT_EQ(told.flows.size(), 1u);
  EXPECT_EQ(told.flows[0]["flow"]["action"], "pass");
  EXPECT_EQ(told.flows[0]["flow"]["alerted"], true);
}

// Suricata applies a drop or pass to the whole flow only where the match
// was on the stream or a transaction, or the rule looks at no payload
// (IP-only, ports included); a payload matched on a packet before the
// connection is established (a SYN's data, the handshake's last ACK with
// data) acts on that packet alone.
// The flow record's tcp.state and state as Suricata's stream engine names
// them (from the server's side), by who closed first and how far.
TEST(IdsFlows, TcpStatesAreNamedFromTheServersSide) {
  auto closing = [](std::vector<int> fins_then_acks) {
    Conv c;
    c.send(0, "hi");
    for (int step : fins_then_acks) {
      if (step < 2) {
        c.fin(step);
      } else {  // an ACK from side step - 2
        c.out.push_back(step == 2 ? ether(ip4(kClient, kServer, 6, c.port, c.server, "", c.cseq, c.sseq, 0x10))
                                  : ether(ip4(kServer, kClient, 6, c.server, c.port, "", c.sseq, c.cseq, 0x10)));
      }
    }
    auto r = run_ids("tcp-states", c.out, "alert tcp any any -> any any (content:\"zz\"; sid:1;)\n");
    EXPECT_TRUE(r.r->ok);
    EXPECT_EQ(r.flows.size(), 1u);
    for (const char* side : {"ts_max_regions", "tc_max_regions"}) {  // (in order: one stream buffer region each)
      if (!r.flows.empty()) {
        EXPECT_EQ(r.flows[0]["tcp"].value(side, 0), 1) << side;
      }
    }
    return r.flows.empty()
               ? std::pair<std::string, std::string>()
               : std::pair<std::string, std::string>{r.flows[0]["tcp"]["state"], r.flows[0]["flow"]["state"]};
  };
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(closing({0, 3}), (P{"close_wait", "established"})) << "the client's FIN, acknowledged";
  EXPECT_EQ(closing({1}), (P{"fin_wait1", "established"})) << "the server's FIN";
  EXPECT_EQ(closing({1, 2}), (P{"fin_wait2", "established"})) << "... acknowledged";
  EXPECT_EQ(closing({0, 1}), (P{"last_ack", "closed"})) << "both FINs, the client's first";
  EXPECT_EQ(closing({1, 0}), (P{"time_wait", "closed"})) << "both FINs, the server's first";
}

TEST(IdsActions, APacketsMatchActsOnThePacketAndAStreamsOnTheFlow) {
  Conv c;
  std::vector<Bytes> frames = {ether(ip4(kClient, kServer, 6, 40000, 80, "attack syn", 999, 0, 0x02)), c.out[1],
                               ether(ip4(kClient, kServer, 6, 40000, 80, "attack ack", 1000, 5000, 0x18))};
  c.cseq += 10;
  c.out = frames;
  c.send(0, "hello");
  c.send(0, "attack three");
  c.send(0, "after");
  c.fin(0);
  c.fin(1);
  std::string drop = "drop tcp any any -> any any (content:\"attack\"; sid:3;)\n";
  auto ips = run_ids("drop-scope", c.out, drop, true);
  ASSERT_TRUE(ips.r->ok);
  EXPECT_EQ(ips.eve.size(), 3u);
  EXPECT_EQ(ips.r->n("ids.dropped"), 3u) << "the SYN, the last ACK of the handshake and the established segment";
  EXPECT_EQ(ips.r->n("ids.flow_dropped"), 3u) << "only the established match drops the flow: then after, 2 FINs";
  EXPECT_EQ(ips.r->n("pass.count"), 2u) << "the SYN-ACK and hello";
  ASSERT_EQ(ips.flows.size(), 1u);
  EXPECT_EQ(ips.flows[0]["flow"]["action"], "drop");
  // the session as Suricata's stream engine saw it: a dropped flow's FINs
  // never reached it; in IDS mode they did (the originator closed first)
  EXPECT_EQ(ips.flows[0]["tcp"]["state"], "established");
  auto ids = run_ids("drop-scope-ids", c.out, drop, false);
  ASSERT_TRUE(ids.r->ok);
  ASSERT_EQ(ids.flows.size(), 1u);
  // Suricata names the states from the server's side: the client's FIN,
  // CLOSE_WAIT; the server's FIN after it, LAST_ACK (its flow closed)
  EXPECT_EQ(ids.flows[0]["tcp"]["state"], "last_ack");
  EXPECT_EQ(ids.flows[0]["flow"]["state"], "closed");

  // a pass on the SYN's data passes that packet; the later match alerts
  auto pass = run_ids("pass-scope", c.out,
                      "pass tcp any any -> any any (content:\"syn\"; sid:2;)\n"
                      "alert tcp any any -> any any (content:\"three\"; sid:1;)\n");
  ASSERT_TRUE(pass.r->ok);
  EXPECT_EQ(pass.sids(), (std::vector<uint32_t>{1}));
  EXPECT_EQ(pass.r->n("ids.flow_passed"), 0u);
  // a rule on addresses and ports only passes the flow from its first match
  auto ports = run_ids("pass-ports", c.out,
                       "pass tcp any 80 -> any any (sid:2;)\n"
                       "alert tcp any any -> any any (content:\"three\"; sid:1;)\n");
  ASSERT_TRUE(ports.r->ok);
  EXPECT_TRUE(ports.eve.empty());
  EXPECT_EQ(ports.r->n("ids.flow_passed"), 6u) << "the SYN-ACK from port 80 matched: the six packets after it";
}

// A rule of an application protocol acts on the flow when it checks nothing
// else, and on its packet when it checks the packet (dsize, flags): Suricata's
// application-layer and packet signature types.
TEST(IdsActions, AnApplicationRulesPacketKeywordsActOnThePacket) {
  Conv c;
  c.send(0, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  c.send(0, "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n");
  c.fin(0);
  auto pkt = run_ids("app-dsize", c.out, "drop http any any -> any any (dsize:0; sid:1;)\n", true);
  ASSERT_TRUE(pkt.r->ok);
  EXPECT_EQ(pkt.r->n("ids.flow_dropped"), 0u);
  EXPECT_GE(pkt.r->n("ids.dropped"), 1u) << "the FIN, once the flow is HTTP";
  ASSERT_EQ(pkt.flows.size(), 1u);
  EXPECT_FALSE(pkt.flows[0]["flow"].contains("action"));
  auto app = run_ids("app-only", c.out, "drop http any any -> any any (sid:1;)\n", true);
  ASSERT_TRUE(app.r->ok);
  ASSERT_EQ(app.flows.size(), 1u);
  EXPECT_EQ(app.flows[0]["flow"]["action"], "drop");
  EXPECT_GE(app.r->n("ids.flow_dropped"), 1u);
}

// Suricata's stream.midstream-policy decides a connection seen without its
// handshake; one with its handshake is inspected as usual.
TEST(IdsActions, TheMidstreamPolicyDecidesConnectionsPickedUpMidstream) {
  Conv whole(40001);
  whole.send(1, "uid=0(root)");
  std::vector<Bytes> frames = {ether(ip4(kClient, kServer, 6, 40000, 80, "id\n", 1000, 5000, 0x18)),
                               ether(ip4(kServer, kClient, 6, 80, 40000, "uid=0(root)", 5000, 1003, 0x18))};
  frames.insert(frames.end(), whole.out.begin(), whole.out.end());
  std::string rules = "alert tcp any any -> any any (content:\"uid=0\"; sid:1;)\n";
  auto policy = [&](const std::string& name, const std::string& pol, bool ips, bool pickup) {
    return run_ids(name, frames, rules, ips, pickup,
                   fmt::format(", MIDSTREAM_POLICY {}, EVE_EXCEPTION_POLICY true", pol));
  };
  auto flow_of = [](const IdsRun& r, int port) {
    for (const auto& f : r.flows)
      if (f["src_port"] == port || f["dest_port"] == port) return f["flow"];
    return nlohmann::json();
  };
  auto pass = policy("mid-pass", "pass-flow", false, false);
  ASSERT_TRUE(pass.r->ok);
  ASSERT_EQ(pass.eve.size(), 1u) << "the handshaken connection's alert only";
  EXPECT_EQ(pass.eve[0]["src_port"], 80);
  EXPECT_EQ(pass.eve[0]["dest_port"], 40001);
  EXPECT_EQ(pass.r->n("ids.flow_passed"), 2u);
  EXPECT_EQ(flow_of(pass, 40000)["action"], "pass");
  EXPECT_EQ(flow_of(pass, 40000)["exception_policy"][0]["policy"], "pass_flow");
  EXPECT_EQ(flow_of(pass, 40000)["exception_policy"][0]["target"], "stream_midstream");
  EXPECT_FALSE(flow_of(pass, 40001).contains("exception_policy"));

  auto bypass = policy("mid-bypass", "bypass", true, false);
  ASSERT_TRUE(bypass.r->ok);
  EXPECT_EQ(bypass.eve.size(), 1u);
  EXPECT_EQ(bypass.r->n("ids.flow_bypassed"), 2u);
  EXPECT_EQ(flow_of(bypass, 40000)["state"], "bypassed");
  EXPECT_TRUE(bypass.drops.empty());

  auto drop = policy("mid-drop", "drop-flow", true, false);
  ASSERT_TRUE(drop.r->ok);
  EXPECT_EQ(drop.eve.size(), 1u);
  ASSERT_EQ(drop.drops.size(), 2u);
  EXPECT_EQ(drop.drops[0]["drop"]["reason"], "stream midstream");
  EXPECT_EQ(drop.drops[1]["drop"]["reason"], "flow drop");
  EXPECT_EQ(drop.r->n("ids.flow_dropped"), 2u);
  EXPECT_EQ(drop.r->n("out1.count"), 2u) << "the midstream pair (the packet that only alerted goes on)";
  EXPECT_EQ(flow_of(drop, 40000)["action"], "drop");
  // auto: drop-flow in IPS mode without pick-up
  auto autop = policy("mid-auto", "auto", true, false);
  ASSERT_TRUE(autop.r->ok);
  EXPECT_EQ(autop.r->n("ids.flow_dropped"), 2u);

  // not applicable: drop-flow in IDS mode, bypass with pick-up (ignore)
  for (auto [name, pol, ips, pickup] : {std::tuple{"mid-drop-ids", "drop-flow", false, false},
                                        std::tuple{"mid-bypass-pickup", "bypass", false, true}}) {
    auto r = policy(name, pol, ips, pickup);
    ASSERT_TRUE(r.r->ok);
    EXPECT_EQ(r.eve.size(), 2u) << name;
    EXPECT_EQ(r.r->n("ids.flow_dropped") + r.r->n("ids.flow_bypassed") + r.r->n("ids.flow_passed"), 0u) << name;
    // a connection picked up midstream: the policy Suricata 8 names is ignore
    if (pickup)
      EXPECT_EQ(flow_of(r, 40000)["exception_policy"][0]["policy"], "ignore") << name;
    else
      EXPECT_FALSE(flow_of(r, 40000).contains("exception_policy")) << name;
    EXPECT_FALSE(flow_of(r, 40001).contains("exception_policy")) << "its handshake was seen";
  }
  // with pick-up, pass-flow: tracked, parsed and logged, not detected
  auto picked = policy("mid-pass-pickup", "pass-flow", false, true);
  ASSERT_TRUE(picked.r->ok);
  EXPECT_EQ(picked.eve.size(), 1u);
  EXPECT_EQ(flow_of(picked, 40000)["action"], "pass");
}

TEST(IdsHttp, RulesMatchTransactionBuffersAcrossSegments) {
  Conv c;
  // the request line split over two segments: only reassembly sees "/admin/login.php"
  c.send(0, "GET /adm");
  c.send(0,
         "in/login.php?user=root HTTP/1.1\r\nHost: Example.COM\r\nUser-Agent: EvilBot/1.0\r\n"
         "Cookie: session=abc\r\n\r\n");
  c.send(1,
         "HTTP/1.1 404 Not Found\r\nServer: nginx\r\nContent-Length: 15\r\nContent-Type: text/plain\r\n\r\n"
         "no such page!!!");
  auto r =
      run_ids("http", c.out,
              "alert http any any -> any any (http.uri; content:\"/admin/login.php\"; sid:1;)\n"
              "alert http any any -> any any (http.host; content:\"example.com\"; sid:2;)\n"
              "alert http any any -> any any (http.host; content:\"Example\"; sid:3;)\n"  // normalized: lower case
              "alert http any any -> any any (http.user_agent; content:\"EvilBot\"; startswith_no; sid:4;)\n"
              "alert tcp any any -> any any (content:\"session=\"; http_cookie; sid:5;)\n"
              "alert tcp any any -> any any (uricontent:\"user=root\"; sid:6;)\n"
              "alert http any any -> any any (flow:to_client; http.stat_code; content:\"404\"; sid:7;)\n"
              "alert http any any -> any any (flow:to_client; file.data; content:\"no such page\"; sid:8;)\n"
              "alert http any any -> any any (pcre:\"/login\\.php\\?user=/U\"; sid:9;)\n"
              "alert http any any -> any any (urilen:>20; sid:10;)\n"
              "alert http any any -> any any (urilen:<5; sid:11;)\n"
              "alert http any any -> any any (http.uri; content:\"EvilBot\"; sid:12;)\n"
              "alert http any any -> any any (http.method; content:\"GET\"; http.uri; content:\"admin\"; "
              "sid:13;)\n"
              "alert http any any -> any any (http.server; content:\"nginx\"; sid:14;)\n"
              // every buffer's items must hold, not only the first buffer's
              "alert http any any -> any any (http.method; content:\"GET\"; http.host; content:\"nomatch\"; "
              "sid:15;)\n"
              "alert http any any -> any any (http.method; content:\"GET\"; http.host; content:!\".com\"; "
              "endswith; sid:16;)\n"
              "alert http any any -> any any (http.host; bsize:11; sid:17;)\n"
              "alert http any any -> any any (http.host; bsize:>11; sid:18;)\n"
              "alert http any any -> any any (http.start; content:\"GET /adm\"; startswith; content:\"Cookie: \"; "
              "sid:19;)\n"
              "alert http any any -> any any (flow:to_client; http.content_len; content:\"15\"; bsize:2; sid:20;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 1u) << r.r->h("ids.problems");  // sid 4: an unknown option
  auto sids = r.sids();
  std::sort(sids.begin(), sids.end());
  EXPECT_EQ(sids, (std::vector<uint32_t>{1, 2, 5, 6, 7, 8, 9, 10, 13, 14, 17, 19, 20}));
  EXPECT_EQ(r.r->n("ids.http_connections"), 1u);
  EXPECT_EQ(r.r->n("ids.http_transactions"), 1u);
  for (auto& j : r.eve) {
    EXPECT_EQ(j["app_proto"], "http");
    EXPECT_EQ(j["http"]["hostname"], "example.com");
    EXPECT_EQ(j["http"]["url"], "/admin/login.php?user=root");
    EXPECT_GT(j["pcap_cnt"].get<int>(), 3) << "after the handshake";
  }
}

// A header the request did not send is no buffer: a negated content on it
// fails and `absent` holds; a header sent empty is a buffer of length 0.
// Suricata's IDS mode (STREAM_INSPECT acked): a direction's data goes to
// the HTTP parser once the other side acknowledged it, and a transaction's
// rules are inspected on packets of their direction: the request's rules on
// the client's packet after the server's acknowledgement (the response, by
// then acknowledged too, in the alert's metadata), the response's on the
// server's next packet; data never acknowledged at the flow's end. On
// arrival (the default, and IPS mode), each on the packet that completed it.
TEST(IdsHttp, AcknowledgedDataIsParsedAndInspectedOnItsDirectionsPacket) {
  Conv c;
  c.send(0, "GET /index.html HTTP/1.1\r\nHost: a.example\r\n\r\n");  // 4
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");    // 5: acknowledges 4
  c.send(0, "");                                                     // 6: acknowledges 5
  c.send(1, "");                                                     // 7
  c.send(0, "GET /late HTTP/1.1\r\nHost: a.example\r\n\r\n");        // 8: never acknowledged
  std::string rules =
      "alert http any any -> any any (http.uri; content:\"/index\"; sid:1;)\n"
      "alert http any any -> any any (http.stat_code; content:\"200\"; sid:2;)\n"
      "alert http any any -> any any (flow:to_server; http.uri; content:\"/late\"; sid:3;)\n";
  auto at = [](const IdsRun& r) {
    std::map<uint32_t, int> m;  // sid: the packet it alerted on (0: the flow's end)
    for (const auto& j : r.eve) m[j["alert"]["signature_id"]] = j.value("pcap_cnt", 0);
    return m;
  };
  auto acked = run_ids("http-acked", c.out, rules, false, false, ", STREAM_INSPECT acked");
  ASSERT_TRUE(acked.r->ok);
  EXPECT_EQ(at(acked), (std::map<uint32_t, int>{{1, 6}, {2, 7}, {3, 0}}));
  for (const auto& j : acked.eve)
    if (j["alert"]["signature_id"] == 1) {
      EXPECT_EQ(j["direction"], "to_server");
      EXPECT_EQ(j["http"]["status"], 200) << "the response, acknowledged by the alert's packet";
      EXPECT_EQ(j["http"]["length"], 5);
    }
  auto arrival = run_ids("http-arrival", c.out, rules);
  ASSERT_TRUE(arrival.r->ok);
  EXPECT_EQ(at(arrival), (std::map<uint32_t, int>{{1, 4}, {2, 5}, {3, 8}}));
}

// A rule with payload items and a transaction buffer: the payload items
// match the stream data delivered for the transaction, and stay matched
// while its buffers come (here a response header in one segment, the body's
// end in a later one), as Suricata's stream inspection engine.
TEST(IdsHttp, PayloadItemsMatchedEarlierInTheTransactionStayMatched) {
  Conv c;
  c.send(0, "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nX-Marker: yes\r\nContent-Length: 20\r\n\r\nhead");
  c.send(0, "");
  c.send(1, "-of-it-tail-secret");
  c.send(0, "");
  std::string rules =
      "alert http any any -> any any (content:\"X-Marker: yes\"; file_data; content:\"tail-secret\"; sid:1;)\n"
      "alert http any any -> any any (content:\"X-Marker: no\"; file_data; content:\"tail-secret\"; sid:2;)\n"
      "alert http any any -> any any (content:\"Host: a\"; file_data; content:\"tail-secret\"; sid:3;)\n";
  for (const char* mode : {"arrival", "acked"}) {
    auto r = run_ids(fmt::format("http-stream-tx-{}", mode), c.out, rules, false, false,
                     fmt::format(", STREAM_INSPECT {}", mode));
    ASSERT_TRUE(r.r->ok);
    EXPECT_EQ(r.sids(), (std::vector<uint32_t>{1})) << mode
                                                    << ": the marker was in the response's stream, the "
                                                       "Host in the request's";
  }
}

// pcre captures in EVE, as Suricata writes them: an alert's own in
// alert.context, the packet's pktvars and the flow's flowvars (kept from
// earlier packets and noalert rules) in its metadata, and the flowvars in
// the flow record.
TEST(IdsHttp, PcreCapturesGoToAlertContextAndMetadata) {
  if (!have_pcre()) GTEST_SKIP() << "built without PCRE2";
  Conv c;
  c.send(0,
         "GET /?token=abc123 HTTP/1.1\r\nHost: x\r\nUser-Agent: Mozilla/5.0 (X11; Ubuntu/8.10) Firefox/3.0.13\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  std::string rules =
      "alert http any any -> any any (http.uri; pcre:\"/token=(?P<flow_token>\\w+)/\"; noalert; sid:1;)\n"
      "alert http any any -> any any (http.user_agent; pcre:\"/^([a-zA-Z]+).*Ubuntu\\/(\\d+\\.\\d).*Firefox\\/(.*)/, "
      "alert:user_agent, flow:ubuntu, pkt:firefox\"; sid:2;)\n"
      "alert http any any -> any any (http.stat_code; content:\"200\"; sid:3;)\n";
  auto r = run_ids("pcre-vars", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.sids(), (std::vector<uint32_t>{2, 3}));
  const auto& a = r.eve[0];
  EXPECT_EQ(a["alert"]["context"]["user_agent"], "Mozilla") << a;
  EXPECT_EQ(a["metadata"]["pktvars"], nlohmann::json::parse(R"([{"firefox":"3.0.13"}])"));
  EXPECT_EQ(a["metadata"]["flowvars"], nlohmann::json::parse(R"([{"token":"abc123"},{"ubuntu":"8.1"}])"));
  const auto& b = r.eve[1];
  EXPECT_FALSE(b["alert"].contains("context"));
  EXPECT_FALSE(b["metadata"].contains("pktvars")) << "another packet";
  EXPECT_EQ(b["metadata"]["flowvars"].size(), 2u) << "the flow keeps them";
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_EQ(r.flows[0]["metadata"]["flowvars"][1]["ubuntu"], "8.1");
}

// Suricata's netflow records (a record per direction of a flow, from its
// sender, with its own counts, TTLs and TCP flags; the server's only once it
// answered) and metadata records (a packet whose rules captured pktvars).
TEST(IdsFlows, NetflowAndMetadataRecords) {
  if (!have_pcre()) GTEST_SKIP() << "built without PCRE2";
  Bytes q = ip4(kClient, kServer, 17, 5000, 53, "query uid=7");
  q[8] = 60;  // a TTL of 60 on the second query
  std::vector<Bytes> frames = {ether(ip4(kClient, kServer, 17, 5000, 53, "query")), ether(q),
                               ether(ip4(kServer, kClient, 17, 53, 5000, "answer")),
                               ether(ip4(kClient, kServer, 17, 5001, 53, "unanswered"))};
  auto r =
      run_ids("netflow", frames, "alert udp any any -> any any (pcre:\"/uid=(?P<pkt_uid>\\d+)/\"; noalert; sid:1;)\n",
              false, false, ", EVE_TYPES \"flow netflow metadata\"");
  ASSERT_TRUE(r.r->ok);
  const auto& nf = r.other["netflow"];
  ASSERT_EQ(nf.size(), 3u) << "two for the answered flow, one for the other";
  std::map<std::string, nlohmann::json> by;  // "src port>dest port" -> netflow
  for (const auto& j : nf) by[fmt::format("{}>{}", int(j["src_port"]), int(j["dest_port"]))] = j["netflow"];
  EXPECT_EQ(by["5000>53"]["pkts"], 2);
  EXPECT_EQ(by["5000>53"]["min_ttl"], 60);
  EXPECT_EQ(by["5000>53"]["max_ttl"], 64);
  EXPECT_EQ(by["53>5000"]["pkts"], 1);
  EXPECT_EQ(by["5001>53"]["pkts"], 1);
  EXPECT_FALSE(by.count("53>5001"));
  ASSERT_EQ(r.other["metadata"].size(), 1u);
  const auto& m = r.other["metadata"][0];
  EXPECT_EQ(m["pcap_cnt"], 2);
  EXPECT_EQ(m["metadata"]["pktvars"], nlohmann::json::parse(R"([{"uid":"7"}])"));
  auto only = run_ids("netflow-only", frames, "alert udp any any -> any any (content:\"zz\"; sid:1;)\n", false, false,
                      ", EVE_TYPES netflow");
  ASSERT_TRUE(only.r->ok);
  EXPECT_EQ(only.other["netflow"].size(), 3u) << "without flow records or an application layer";
  EXPECT_FALSE(
      test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, EVE_TYPES \"netflows\") -> Discard;")->ok);
}

TEST(IdsHttp, AnAbsentHeaderIsNoBuffer) {
  for (bool sent : {false, true}) {
    Conv c;
    c.send(0, std::string("GET / HTTP/1.1\r\nHost: x\r\n") + (sent ? "Referer: \r\n" : "") + "\r\n");
    c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    auto r = run_ids("httpabsent", c.out,
                     "alert http any any -> any any (http.referer; content:!\"example\"; sid:1;)\n"
                     "alert http any any -> any any (http.referer; absent; sid:2;)\n"
                     "alert http any any -> any any (http.referer; absent: or_else; content:!\"example\"; sid:3;)\n"
                     "alert http any any -> any any (http.referer; bsize:0; sid:4;)\n"
                     "alert http any any -> any any (http.user_agent; absent; sid:5;)\n");
    ASSERT_TRUE(r.r->ok);
    auto sids = r.sids();
    std::sort(sids.begin(), sids.end());
    EXPECT_EQ(sids, sent ? (std::vector<uint32_t>{1, 3, 4, 5}) : (std::vector<uint32_t>{2, 3, 5}))
        << (sent ? "Referer sent empty" : "no Referer");
  }
  // no host: neither a Host header nor one in the target (CONNECT's "/" is
  // no authority): no http.host buffer, no hostname in the record
  for (const char* req : {"GET / HTTP/1.0\r\n\r\n", "CONNECT / HTTP/1.1\r\nX: y\r\n\r\n"}) {
    Conv c;
    c.send(0, req);
    c.send(1, "HTTP/1.1 200 OK\r\n\r\n");
    auto r = run_ids("httpnohost", c.out,
                     "alert http any any -> any any (http.host; bsize:<3; sid:1;)\n"
                     "alert http any any -> any any (http.host; absent; sid:2;)\n");
    ASSERT_TRUE(r.r->ok);
    EXPECT_EQ(r.sids(), (std::vector<uint32_t>{2})) << req;
    ASSERT_FALSE(r.other["http"].empty()) << req;
    EXPECT_FALSE(r.other["http"][0]["http"].contains("hostname")) << req;
  }
}

TEST(IdsHttp, TransactionsAndFilesAreLoggedAsSuricataLogsThem) {
  Conv c;
  // 0: a chunked download named by Content-Disposition
  c.send(0, "GET /dl/get.php?id=7 HTTP/1.1\r\nHost: files.example:8080\r\nReferer: http://a.example/\r\n\r\n");
  c.send(1,
         "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream; x=y\r\nContent-Disposition: attachment; "
         "filename=\"eicar.txt\"\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  // 1: an upload (PUT): a file to the server, named by the path
  c.send(0, "PUT /upload/report.pdf HTTP/1.1\r\nHost: files.example\r\nContent-Length: 4\r\n\r\nabcd");
  c.send(1, "HTTP/1.1 201 Created\r\nLocation: /upload/report.pdf\r\nContent-Length: 0\r\n\r\n");
  // 2: a transaction a config rule keeps out of the logs
  c.send(0, "GET /quiet HTTP/1.1\r\nHost: files.example\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  // 3: a download the capture cuts short
  c.send(0, "GET /partial.bin HTTP/1.1\r\nHost: files.example\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
  const std::string rules =
      "alert http any any -> any any (msg:\"dl\"; http.uri; content:\"/dl/\"; sid:1;)\n"
      "config http any any -> any any (http.uri; content:\"/quiet\"; config:logging disable, type tx, scope tx; "
      "sid:2;)\n";
  auto r = run_ids("httplog", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.sids(), (std::vector<uint32_t>{1})) << "a config rule raises no alert";
  EXPECT_EQ(r.eve[0]["tx_id"], 0);
  auto& http = r.other["http"];
  ASSERT_EQ(http.size(), 3u) << "transactions 0, 1 and 3; 2 is not logged";
  EXPECT_EQ(http[0]["tx_id"], 0);
  EXPECT_EQ(http[0]["src_ip"], "10.0.0.1") << "http records go from the client";
  EXPECT_EQ(http[0]["dest_port"], 80);
  EXPECT_EQ(http[0]["http"]["hostname"], "files.example");
  EXPECT_EQ(http[0]["http"]["http_port"], 8080);
  EXPECT_EQ(http[0]["http"]["url"], "/dl/get.php?id=7");
  EXPECT_EQ(http[0]["http"]["http_content_type"], "application/octet-stream") << "parameters cut, as Suricata";
  EXPECT_EQ(http[0]["http"]["http_refer"], "http://a.example/");
  EXPECT_EQ(http[0]["http"]["status"], 200);
  EXPECT_EQ(http[1]["http"]["http_method"], "PUT");
  EXPECT_EQ(http[1]["http"]["redirect"], "/upload/report.pdf");
  EXPECT_EQ(http[2]["tx_id"], 3);
  EXPECT_EQ(http[2]["http"]["url"], "/partial.bin") << "logged at the flow's end, incomplete";
  auto& files = r.other["fileinfo"];
  ASSERT_EQ(files.size(), 3u);
  std::map<std::string, nlohmann::json> by_name;
  for (auto& f : files) by_name[f["fileinfo"]["filename"]] = f;
  ASSERT_EQ(by_name.count("eicar.txt"), 1u);
  EXPECT_EQ(by_name["eicar.txt"]["fileinfo"]["size"], 11) << "the chunks' data, not their framing";
  EXPECT_EQ(by_name["eicar.txt"]["fileinfo"]["state"], "CLOSED");
  EXPECT_EQ(by_name["eicar.txt"]["src_ip"], "10.0.0.2") << "a response's file comes from the server";
  EXPECT_EQ(by_name["eicar.txt"]["app_proto"], "http");
  EXPECT_EQ(by_name["eicar.txt"]["http"]["http_method"], "GET");
  ASSERT_EQ(by_name.count("/upload/report.pdf"), 1u);
  EXPECT_EQ(by_name["/upload/report.pdf"]["fileinfo"]["size"], 4);
  EXPECT_EQ(by_name["/upload/report.pdf"]["src_ip"], "10.0.0.1");
  EXPECT_EQ(by_name["/upload/report.pdf"]["fileinfo"]["tx_id"], 1);
  ASSERT_EQ(by_name.count("/partial.bin"), 1u);
  EXPECT_EQ(by_name["/partial.bin"]["fileinfo"]["state"], "TRUNCATED");
  EXPECT_EQ(by_name["/partial.bin"]["fileinfo"]["size"], 10);
  // EVE_TYPES chooses the records
  auto only = run_ids("httplog-alerts", c.out, rules, false, false, ", EVE_TYPES alert");
  ASSERT_TRUE(only.r->ok);
  EXPECT_EQ(only.sids(), (std::vector<uint32_t>{1}));
  EXPECT_TRUE(only.other.empty() && only.flows.empty());
  // EVE_OUTPUTS: more files, each taking its types (a type may go to two)
  std::string dir = test::tmpdir(), fa = dir + "/multi-alerts.json", fb = dir + "/multi-nsm.json";
  std::remove(fa.c_str()), std::remove(fb.c_str());
  auto multi = run_ids("httplog-multi", c.out, rules, false, false,
                       fmt::format(", EVE_TYPES alert, EVE_OUTPUTS \"{} alert; {} http flow\"", fa, fb));
  ASSERT_TRUE(multi.r->ok);
  EXPECT_EQ(multi.sids(), (std::vector<uint32_t>{1}));
  EXPECT_TRUE(multi.other.empty() && multi.flows.empty()) << "EVE keeps its own types";
  auto types_in = [](const std::string& path) {
    std::map<std::string, int> n;
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);) ++n[nlohmann::json::parse(line)["event_type"]];
    return n;
  };
  EXPECT_EQ(types_in(fa), (std::map<std::string, int>{{"alert", 1}}));
  auto nsm = types_in(fb);
  EXPECT_EQ(nsm.size(), 2u);
  EXPECT_EQ(nsm["http"], int(r.other["http"].size()));
  EXPECT_EQ(nsm["flow"], int(r.flows.size()));
  for (const char* o : {"\"/dev/null alert; /dev/null flow\"", "\"x.json\"", "\"x.json alert imap\""}) {
    auto b =
        test::run(fmt::format("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, EVE_OUTPUTS {}) -> Discard;", o));
    EXPECT_FALSE(b->ok) << o;
    EXPECT_NE(b->errors.find("EVE_OUTPUTS: "), std::string::npos) << b->errors;
  }
  auto bad = test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, EVE_TYPES \"alert imap\") -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("EVE_TYPES: unknown type 'imap'"), std::string::npos) << bad->errors;
}

// Junk before a response line, which libhtp passes on as body (HTTP
// evasions): the file is the real response's, named by its headers, its
// size without the junk (Suricata opens a response's file only once the
// response line is in).
TEST(IdsHttp, JunkBeforeTheResponseLineIsNoPartOfItsFile) {
  for (const char* junk : {" \t\r\n", "foobar\r\n", " \r"}) {
    Conv c;
    c.send(0, "GET /broken/x.bin HTTP/1.1\r\nHost: evader.example\r\n\r\n");
    c.send(1, std::string(junk) +
                  "HTTP/1.1 200 ok\r\nContent-Disposition: attachment; filename=\"eicar.txt\"\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    c.fin(1);
    c.fin(0);
    auto r = run_ids("httpjunk", c.out, "alert http any any -> any any (file.data; content:\"hello\"; sid:1;)\n");
    ASSERT_TRUE(r.r->ok);
    EXPECT_EQ(r.sids(), (std::vector<uint32_t>{1})) << junk;
    auto& files = r.other["fileinfo"];
    ASSERT_EQ(files.size(), 1u) << junk;
    EXPECT_EQ(files[0]["fileinfo"]["filename"], "eicar.txt") << junk;
    EXPECT_EQ(files[0]["fileinfo"]["size"], 5) << junk;
    EXPECT_EQ(files[0]["fileinfo"]["state"], "CLOSED") << junk;
  }
}

// libhtp's warnings and its transactions' flags are Suricata's HTTP
// events: app-layer-event rules meet them, EVE has an anomaly record of each.
TEST(IdsHttp, ParserWarningsAreAppLayerEvents) {
  Conv c;
  c.send(0, "GET /a HTTP/1.1\r\nAuthorization: Foo bar\r\n\r\n");  // no Host, a scheme nobody knows
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 2\r\n\r\nok");
  c.send(0, "GET /b HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer abc\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  c.fin(0);
  c.fin(1);
  auto r = run_ids("httpevents", c.out,
                   "alert http any any -> any any (flow:established,to_server; "
                   "app-layer-event:http.missing_host_header; sid:1;)\n"
                   "alert http any any -> any any (app-layer-event:http.request_auth_unrecognized; sid:2;)\n"
                   "alert http any any -> any any (app-layer-event:http.abnormal_ce_header; sid:3;)\n"
                   "alert http any any -> any any (http.uri; content:\"/b\"; "
                   "app-layer-event:http.request_auth_unrecognized; sid:4;)\n"
                   "alert http any any -> any any (app-layer-event:http.missing_host_header; "
                   "flowint:http.anomaly.count,+,1; flowint:http.anomaly.count,==,1; sid:5;)\n");
  ASSERT_TRUE(r.r->ok);
  auto sids = r.sids();
  std::sort(sids.begin(), sids.end());
  EXPECT_EQ(sids, (std::vector<uint32_t>{1, 2, 5}))
      << "identity is no abnormal Content-Encoding, a bearer token a known scheme";
  std::set<std::string> anomalies;
  for (const auto& a : r.other["anomaly"]) {
    EXPECT_EQ(a["anomaly"]["app_proto"], "http");
    EXPECT_EQ(a["anomaly"]["type"], "applayer");
    anomalies.insert(a["anomaly"]["event"]);
  }
  EXPECT_EQ(anomalies, (std::set<std::string>{"MISSING_HOST_HEADER", "REQUEST_AUTH_UNRECOGNIZED"}));
  EXPECT_EQ(refused("alert http any any -> any any (app-layer-event:http.request_chunk_extension; sid:1;)\n"), 1u)
      << "an event this engine does not raise is refused, not silently never met";
}

// A request body sent gzip'd is read decoded (http.request_body, and the
// POST body's file), as Suricata since 7.0.16; clear text under a gzip
// header is read as sent.
TEST(IdsHttp, AGzippedRequestBodyIsReadDecoded) {
  const std::string json = "{\"sdk_version\":\"2.1\",\"device_id\":\"abc\"}";
  z_stream z{};
  ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string gz(256, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(json.data()));
  z.avail_in = uInt(json.size());
  z.next_out = reinterpret_cast<Bytef*>(gz.data());
  z.avail_out = uInt(gz.size());
  ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  gz.resize(z.total_out);
  deflateEnd(&z);
  for (const std::string& sent : {gz, json}) {
    Conv c;
    c.send(0, "POST /api HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: " +
                  std::to_string(sent.size()) + "\r\n\r\n" + sent.substr(0, 9));
    c.send(0, sent.substr(9));  // (the stream across segments)
    c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    auto r = run_ids("reqgzip", c.out,
                     "alert http any any -> any any (flow:to_server; http.request_body; content:\"|22|device_id|22|\"; "
                     "sid:1;)\n"
                     "alert http any any -> any any (flow:to_server; file.data; content:\"sdk_version\"; sid:2;)\n");
    ASSERT_TRUE(r.r->ok);
    std::vector<uint32_t> got = r.sids();
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, (std::vector<uint32_t>{1, 2})) << (sent == gz ? "gzip'd" : "clear text");
    ASSERT_EQ(r.other["fileinfo"].size(), 1u);
    EXPECT_EQ(r.other["fileinfo"][0]["fileinfo"]["size"], json.size()) << "the decoded body";
  }
}

TEST(IdsHttp, ABodyTheServerEndsByClosingIsInspectedAtItsFin) {
  // a response without length (ends at the close), one with a lower-case
  // status line, and a chunked body whose final chunk never comes
  auto conv = [](const std::string& response) {
    Conv c;
    c.send(0, "GET /f HTTP/1.1\r\nHost: h\r\n\r\n");
    c.send(1, response);
    c.fin(1);
    c.fin(0);
    return c.out;
  };
  const std::string rules = "alert http any any -> any any (file.data; content:\"secret\"; sid:1;)\n";
  // (the packet that completes the body: the FIN, 6, or the data, 5)
  for (const auto& [resp, at] : std::vector<std::pair<std::string, int>>{
           {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nthe secret body", 6},
           {"http/1.1 200 ok\r\nContent-Length: 15\r\n\r\nthe secret body", 5},
           {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nf\r\nthe secret body\r\n", 6}}) {
    auto r = run_ids("close", conv(resp), rules);
    ASSERT_TRUE(r.r->ok);
    ASSERT_EQ(r.sids(), (std::vector<uint32_t>{1})) << resp;
    EXPECT_EQ(r.eve[0]["pcap_cnt"], at) << resp;
  }
  // no FIN at all: the capture ends inside the body; at the flow's end what
  // came of it is inspected (an alert without a packet, of transaction 0)
  Conv cut;
  cut.send(0, "GET /f HTTP/1.1\r\nHost: h\r\n\r\n");
  cut.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nthe secret body, then the capture stops");
  auto r = run_ids("cut", cut.out, rules);
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.sids(), (std::vector<uint32_t>{1}));
  EXPECT_EQ(r.eve[0]["tx_id"], 0);
  EXPECT_FALSE(r.eve[0].contains("pcap_cnt"));
  EXPECT_EQ(r.eve[0]["app_proto"], "http");
}

TEST(IdsHttp, HeadersCutByTheCloseAreInspectedAndLogged) {
  // each side closes inside its headers: no empty line ends them
  const std::string rules =
      "alert http any any -> any any (flow:established,from_server; content:\"ng1nx\"; http_header; sid:1;)\n"
      "alert http any any -> any any (flow:established,to_server; http.user_agent; content:\"probe\"; sid:2;)\n";
  Conv c;
  c.send(0, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
  c.send(1, "HTTP/1.0 200 OK\r\nServer:ng1nx\r\n");
  c.fin(1);
  c.fin(0);
  auto r = run_ids("cut-response", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.sids(), (std::vector<uint32_t>{1}));
  ASSERT_EQ(r.other["http"].size(), 1u);
  EXPECT_EQ(r.other["http"][0]["http"]["status"], 200);
  EXPECT_TRUE(r.other["anomaly"].empty()) << r.other["anomaly"][0].dump() << ": libhtp's own error";
  Conv q;
  q.send(0, "GET /a HTTP/1.1\r\nHost: h\r\nUser-Agent: probe\r\n");
  q.fin(0);
  q.fin(1);
  auto s = run_ids("cut-request", q.out, rules);
  ASSERT_TRUE(s.r->ok);
  EXPECT_EQ(s.sids(), (std::vector<uint32_t>{2}));
}

namespace {
// A DNS message: one question, and for a response one A answer.
std::string dns_msg(uint16_t id, bool response, const std::string& qname, uint16_t qtype) {
  std::string m;
  auto u16 = [&](uint16_t v) { m += char(v >> 8), m += char(v & 0xff); };
  for (uint16_t v :
       {id, uint16_t(response ? 0x8180 : 0x0100), uint16_t(1), uint16_t(response ? 1 : 0), uint16_t(0), uint16_t(0)})
    u16(v);
  size_t at = 0;
  while (at < qname.size()) {
    size_t dot = std::min(qname.find('.', at), qname.size());
    m += char(dot - at);
    m += qname.substr(at, dot - at);
    at = dot + 1;
  }
  m += '\0';
  u16(qtype), u16(1);
  if (response) {
    for (uint16_t v : {uint16_t(0xc00c), uint16_t(1), uint16_t(1), uint16_t(0), uint16_t(60), uint16_t(4)}) u16(v);
    m += std::string("\xc6\x33\x64\x07", 4);  // 198.51.100.7
  }
  return m;
}
}  // namespace

TEST(IdsDns, RulesReadQueriesAndAnswersOverUdpAndTcp) {
  std::vector<Bytes> f;
  // UDP: a query for an A record and its answer
  f.push_back(ether(ip4(kClient, kServer, 17, 40001, 53, dns_msg(0x42, false, "evil.example.net", 1))));
  f.push_back(ether(ip4(kServer, kClient, 17, 53, 40001, dns_msg(0x42, true, "evil.example.net", 1))));
  // TCP: a query for an MX record, split over two segments
  Conv c(40002, 53);
  std::string q = dns_msg(0x43, false, "mail.example.org", 15);
  std::string framed = std::string(1, char(q.size() >> 8)) + char(q.size() & 0xff) + q;
  c.send(0, framed.substr(0, 9));
  c.send(0, framed.substr(9));
  f.insert(f.end(), c.out.begin(), c.out.end());
  auto r = run_ids("dns", f,
                   "alert dns any any -> any any (msg:\"q\"; dns.query; content:\"evil\"; sid:1;)\n"
                   "alert dns any any -> any any (dns.queries.rrname; content:\"example.net\"; endswith; sid:2;)\n"
                   "alert dns any any -> any any (dns.answers.rrname; content:\"evil\"; sid:3;)\n"
                   "alert dns any any -> any any (dns.rrtype:MX; sid:4;)\n"
                   "alert dns any any -> any any (dns_query; content:\"mail.\"; startswith; sid:5;)\n"
                   "alert udp any any -> any any (dns.query; content:\"example.org\"; sid:6;)\n"
                   "alert dns any any -> any any (dns.opcode:!0; sid:7;)\n"
                   "alert dns any any -> any any (dns.response.rrname; content:\"evil\"; sid:8;)\n"
                   "alert http any any -> any any (dns.query; content:\"x\"; sid:9;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 1u) << "sid 9: DNS buffers in an http rule";
  std::multiset<uint32_t> sids;
  for (auto& j : r.eve) sids.insert(j["alert"]["signature_id"].get<uint32_t>());
  // 1: the UDP request only; 2: both UDP messages; 3, 8: the response; 4, 5:
  // the TCP query once reassembled; 6: no UDP rule reads DNS on TCP
  EXPECT_EQ(sids, (std::multiset<uint32_t>{1, 2, 2, 3, 4, 5, 8}));
  EXPECT_EQ(r.r->n("ids.dns_messages"), 3u);
  for (auto& j : r.eve) {
    EXPECT_EQ(j["app_proto"], "dns");
    EXPECT_EQ(j["dns"]["version"], 3);
    if (j["alert"]["signature_id"] == 3) {
      EXPECT_EQ(j["dns"]["type"], "response");
      EXPECT_EQ(j["dns"]["flags"], "8180");
      EXPECT_EQ(j["dns"]["answers"][0]["rdata"], "198.51.100.7");
      EXPECT_EQ(j["dns"]["grouped"]["A"][0], "198.51.100.7");
      EXPECT_EQ(j["direction"], "to_client");
      EXPECT_EQ(j["tx_id"], 1) << "the response is the flow's second transaction";
    }
  }
  auto& dns = r.other["dns"];
  ASSERT_EQ(dns.size(), 3u);
  EXPECT_EQ(dns[0]["dns"]["queries"][0]["rrname"], "evil.example.net");
  EXPECT_EQ(dns[0]["dns"]["id"], 0x42);
  EXPECT_EQ(dns[1]["src_ip"], "10.0.0.2") << "a DNS record goes the way its message went";
  EXPECT_EQ(dns[2]["proto"], "TCP");
  EXPECT_EQ(dns[2]["dns"]["queries"][0]["rrtype"], "MX");
  for (auto& fl : r.flows) EXPECT_EQ(fl["app_proto"], "dns");
}

namespace {
// A self-signed certificate (EC P-256) with this subject and serial, DER.
std::string make_cert(const std::string& cn, long serial) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME* nm = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(nm, "C", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("FR"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(nm, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Shoal"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(x, nm);
  X509_sign(x, key, EVP_sha256());
  unsigned char* der = nullptr;
  int n = i2d_X509(x, &der);
  std::string out(reinterpret_cast<char*>(der), size_t(n));
  OPENSSL_free(der);
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}
std::string hexdigest(const EVP_MD* md, const std::string& s) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), out, &len, md, nullptr);
  std::string h;
  for (unsigned int i = 0; i < len; ++i) h += fmt::format("{:02x}", out[i]);
  return h;
}
struct TlsBuilder {
  std::string b;
  void u8(unsigned v) { b += char(v & 0xff); }
  void u16(unsigned v) { u8(v >> 8), u8(v); }
  void u24(unsigned v) { u8(v >> 16), u16(v & 0xffff); }
};
// A handshake message in a record.
std::string record(uint8_t type, const std::string& body) {
  TlsBuilder r;
  r.u8(type), r.u16(0x0303), r.u16(unsigned(body.size()));
  return r.b + body;
}
std::string handshake(uint8_t type, const std::string& body) {
  TlsBuilder h;
  h.u8(type), h.u24(unsigned(body.size()));
  return record(22, h.b + body);
}
std::string ext(unsigned type, const std::string& data) {
  TlsBuilder e;
  e.u16(type), e.u16(unsigned(data.size()));
  return e.b + data;
}
}  // namespace

TEST(IdsTls, HandshakeBuffersFingerprintsAndRecords) {
  // ClientHello: TLS 1.2 legacy version, a GREASE cipher, SNI, groups, point
  // formats, signature algorithms, ALPN h2, supported_versions with 1.3
  TlsBuilder ch;
  ch.u16(0x0303);
  ch.b += std::string(32, '\x11');
  ch.u8(0);
  ch.u16(6), ch.u16(0x0a0a), ch.u16(0x1301), ch.u16(0xc02b);
  ch.u8(1), ch.u8(0);
  TlsBuilder sni, groups, pf, sig, alpn, sv;
  sni.u16(3 + 15), sni.u8(0), sni.u16(15), sni.b += "www.example.com";
  groups.u16(4), groups.u16(29), groups.u16(23);
  pf.u8(1), pf.u8(0);
  sig.u16(4), sig.u16(0x0403), sig.u16(0x0804);
  alpn.u16(3), alpn.u8(2), alpn.b += "h2";
  sv.u8(4), sv.u16(0x0304), sv.u16(0x0303);
  std::string exts =
      ext(0, sni.b) + ext(10, groups.b) + ext(11, pf.b) + ext(13, sig.b) + ext(16, alpn.b) + ext(43, sv.b);
  ch.u16(unsigned(exts.size()));
  ch.b += exts;
  // ServerHello (TLS 1.2, no supported_versions), Certificate, then both
  // sides change cipher spec
  TlsBuilder sh;
  sh.u16(0x0303);
  sh.b += std::string(32, '\x22');
  sh.u8(0), sh.u16(0xc02b), sh.u8(0);
  std::string sexts = ext(0xff01, std::string(1, '\0'));
  sh.u16(unsigned(sexts.size()));
  sh.b += sexts;
  std::string cert = make_cert("shoal.example", 0xe0);
  TlsBuilder cm;
  cm.u24(unsigned(cert.size() + 3)), cm.u24(unsigned(cert.size()));
  cm.b += cert;
  Conv c(40100, 443);
  std::string hello = handshake(1, ch.b);
  c.send(0, hello.substr(0, 20));  // the ClientHello over two segments
  c.send(0, hello.substr(20));
  c.send(1, handshake(2, sh.b) + handshake(11, cm.b));
  c.send(0, record(20, std::string(1, '\1')));
  c.send(1, record(20, std::string(1, '\1')) + record(23, "encrypted"));
  const std::string ja3 = "771,4865-49195,0-10-11-13-16-43,29-23,0";  // (GREASE left out)
  const std::string ja4 = "t13d0206h2_" + hexdigest(EVP_sha256(), "1301,c02b").substr(0, 12) + "_" +
                          hexdigest(EVP_sha256(), "000a,000b,000d,002b_0403,0804").substr(0, 12);
  auto r = run_ids("tls", c.out,
                   "alert tls any any -> any any (tls.sni; content:\"example.com\"; endswith; sid:1;)\n"
                   "alert tls any any -> any any (ja3.hash; content:\"" +
                       hexdigest(EVP_md5(), ja3) +
                       "\"; sid:2;)\n"
                       "alert tls any any -> any any (tls.cert_subject; content:\"CN=shoal.example\"; sid:3;)\n"
                       "alert tls any any -> any any (tls.cert_serial; content:\"00:E0\"; bsize:5; sid:4;)\n"
                       "alert tls any any -> any any (ja4.hash; content:\"" +
                       ja4 +
                       "\"; sid:5;)\n"
                       "alert tls any any -> any any (ja3s.string; content:\"771,49195,65281\"; sid:6;)\n"
                       "alert tcp any any -> any any (app-layer-protocol:!tls; sid:7;)\n"
                       "alert tls any any -> any any (tls.sni; content:\"other\"; sid:8;)\n"
                       "alert tls any any -> any any (tls.version:1.2; sid:9;)\n"
                       "alert tls any any -> any any (ssl_state:client_hello; sid:10;)\n"
                       "alert tls any any -> any any (ssl_state:server_keyx|server_hello; sid:11;)\n"
                       "alert tls any any -> any any (ssl_version:!tls1.3,tls1.0; sid:12;)\n"
                       "alert tls any any -> any any (tls.version:1.3; sid:13;)\n"
                       "alert tls any any -> any any (flow:to_server; tls.random_time; content:\"|11 11 11 11|\"; "
                       "sid:14;)\n"
                       "alert tls any any -> any any (flow:to_client; tls.random; content:\"|22 22|\"; bsize:32; "
                       "sid:15;)\n"
                       "alert tls any any -> any any (tls.subject:\"O=Shoal\"; tls.cert_chain_len:1; sid:16;)\n"
                       "alert tls any any -> any any (tls.issuerdn:!\"Shoal\"; sid:17;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 0u) << r.r->h("ids.problems");
  auto sids = r.sids();
  std::sort(sids.begin(), sids.end());
  EXPECT_EQ(sids, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 12, 14, 15, 16}))
      << "no app-layer-protocol:!tls: the flow is TLS; not TLS 1.3; ssl_version once each way (Suricata)";
  std::vector<int> twelve;
  for (auto& j : r.eve) {
    EXPECT_EQ(j["app_proto"], "tls");
    uint32_t sid = j["alert"]["signature_id"];
    if (sid == 12) {
      twelve.push_back(j["pcap_cnt"]);
      continue;
    }
    // client-side rules alert on the ClientHello's last segment, the others on the server's flight
    EXPECT_EQ(j["pcap_cnt"], sid <= 2 || sid == 5 || sid == 10 || sid == 14 ? 5 : 6) << sid;
  }
  std::sort(twelve.begin(), twelve.end());
  EXPECT_EQ(twelve, (std::vector<int>{5, 6})) << "the client's hello, then the server's";
  auto& tls = r.other["tls"];
  ASSERT_EQ(tls.size(), 1u);
  const auto& t = tls[0]["tls"];
  EXPECT_EQ(t["sni"], "www.example.com");
  EXPECT_EQ(t["version"], "TLS 1.2");  // (1.0 is "TLSv1", as Suricata names it)
  EXPECT_EQ(t["subject"], "C=FR, O=Shoal, CN=shoal.example");
  EXPECT_EQ(t["issuerdn"], "C=FR, O=Shoal, CN=shoal.example");
  EXPECT_EQ(t["serial"], "00:E0");
  EXPECT_EQ(t["fingerprint"].get<std::string>().size(), 59u);  // 20 bytes, colon-separated
  EXPECT_EQ(t["ja3"]["string"], ja3);
  EXPECT_EQ(t["ja4"], ja4);
  EXPECT_EQ(t["ja3s"]["string"], "771,49195,65281");
  EXPECT_EQ(tls[0]["pcap_cnt"], 8) << "logged when both sides encrypt";
  EXPECT_EQ(r.r->n("ids.tls_connections"), 1u);
  EXPECT_EQ(r.r->n("ids.tls_anomalies"), 0u);
}

// An SSLv2-format ClientHello (RFC 5246 Appendix E.2) from a client that
// speaks TLS 1.0, over two segments: the flow is TLS, the client's version
// is the hello's (ssl_version per direction, as Suricata), its TLS suites
// are its ciphers, and there is no JA3 (defined on TLS's ClientHello).
TEST(IdsTls, Sslv2FormatClientHello) {
  TlsBuilder v2;
  v2.u8(1), v2.u16(0x0301), v2.u16(9), v2.u16(0), v2.u16(16);
  v2.u8(0), v2.u16(0x0039), v2.u8(0x07), v2.u16(0x00c0), v2.u8(0), v2.u16(0x002f);  // two TLS suites, one SSLv2 spec
  v2.b += std::string(16, '\x33');
  TlsBuilder hdr;
  hdr.u16(0x8000 | unsigned(v2.b.size()));
  std::string hello = hdr.b + v2.b;
  TlsBuilder sh;
  sh.u16(0x0301);
  sh.b += std::string(32, '\x22');
  sh.u8(0), sh.u16(0x0039), sh.u8(0), sh.u16(0);
  Conv c(40150, 443);
  c.send(0, hello.substr(0, 7));
  c.send(0, hello.substr(7));
  c.send(1, handshake(2, sh.b));
  c.send(0, record(20, std::string(1, '\1')));
  c.send(1, record(20, std::string(1, '\1')));
  auto r = run_ids("tlsv2", c.out,
                   "alert tls any any -> any any (ssl_version:tls1.0; sid:1;)\n"
                   "alert tls any any -> any any (ssl_version:sslv2; sid:2;)\n"
                   "alert tls any any -> any any (ssl_state:client_hello; sid:3;)\n"
                   "alert tls any any -> any any (ja3.hash; content:\"0\"; sid:4;)\n"
                   "alert tls any any -> any any (tls.random; content:\"|00 00 33 33|\"; sid:5;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.tls_anomalies"), 0u);
  std::vector<std::pair<uint32_t, int>> got;
  for (auto& j : r.eve) got.emplace_back(j["alert"]["signature_id"], j["pcap_cnt"]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, int>>{{1, 5}, {1, 6}, {3, 5}, {5, 5}}))
      << "tls1.0 each way on the hello and the ServerHello; the random is the challenge, zeros on the left";
  auto& tls = r.other["tls"];
  ASSERT_EQ(tls.size(), 1u);
  EXPECT_FALSE(tls[0]["tls"].contains("ja3"));
  EXPECT_EQ(tls[0]["tls"]["version"], "TLSv1");
}

// A session resumed (the server repeats the session id the client's hello
// named, and sends no certificate): Suricata's "session_resumed" in the tls
// record; a new session id, or a certificate, is a full handshake.
TEST(IdsTls, SessionResumed) {
  for (int variant = 0; variant < 3; ++variant) {
    std::string sid(32, '\x44');
    TlsBuilder ch;
    ch.u16(0x0303);
    ch.b += std::string(32, '\x11');
    ch.u8(32);
    ch.b += sid;
    ch.u16(2), ch.u16(0xc02b), ch.u8(1), ch.u8(0), ch.u16(0);
    TlsBuilder sh;
    sh.u16(0x0303);
    sh.b += std::string(32, '\x22');
    sh.u8(32);
    sh.b += variant == 1 ? std::string(32, '\x45') : sid;
    sh.u16(0xc02b), sh.u8(0), sh.u16(0);
    std::string flight = handshake(2, sh.b);
    if (variant == 2) {
      std::string cert = make_cert("shoal.example", 0xe1);
      TlsBuilder cm;
      cm.u24(unsigned(cert.size() + 3)), cm.u24(unsigned(cert.size()));
      cm.b += cert;
      flight += handshake(11, cm.b);
    }
    Conv c(40170, 443);
    c.send(0, handshake(1, ch.b));
    c.send(1, flight + record(20, std::string(1, '\1')));
    c.send(0, record(20, std::string(1, '\1')));
    auto r = run_ids("tlsresume", c.out, "alert tls any any -> any any (tls.sni; content:\"x\"; sid:1;)\n");
    ASSERT_TRUE(r.r->ok);
    auto& tls = r.other["tls"];
    ASSERT_EQ(tls.size(), 1u) << variant;
    EXPECT_EQ(tls[0]["tls"].contains("session_resumed"), variant == 0) << variant << ": " << tls[0].dump();
  }
}

TEST(IdsTls, HostileRecordsAreAnomaliesNotCrashes) {
  std::vector<std::string> bad = {
      std::string("\x16\x03\x01\xff\xff", 5) + std::string(200, 'A'),           // a record over the bound
      std::string("\x16\x03\x01\x00\x08\x01\xff\xff\xff\x03\x03\x00\x00", 13),  // a message of 16 MiB
      std::string("\x16\x03\x01\x00\x06\x01\x00\x00\x02\x03\x03", 11) +
          std::string("\x63\x03\x01\x00\x01\x00", 6),  // a truncated hello, then a record of type 99
  };
  for (const std::string& b : bad) {
    Conv c(40200, 443);
    c.send(0, b);
    c.send(1, std::string("\x16\x03\x03\x00\x04\x02\x00\x00\x00", 9));
    auto r = run_ids("tlsbad", c.out, "alert tls any any -> any any (tls.sni; content:\"x\"; sid:1;)\n");
    ASSERT_TRUE(r.r->ok);
    EXPECT_EQ(r.r->n("ids.tls_connections"), 1u);
    EXPECT_GE(r.r->n("ids.tls_anomalies"), 1u) << b.size();
    EXPECT_TRUE(r.eve.empty());
    // a record Suricata's parser fails is an app-layer error: the policy drops the flow from its packet on
    auto ips = run_ids("tlsbad-ips", c.out, "alert tls any any -> any any (tls.sni; content:\"x\"; sid:1;)\n", true,
                       false, ", APP_ERROR_POLICY drop-flow, EVE_DROP_FLOWS all");
    ASSERT_TRUE(ips.r->ok);
    EXPECT_EQ(ips.r->n("ids.app_error_dropped"), 1u) << b.size();
    EXPECT_EQ(ips.r->n("out1.count"), 2u) << "the bad record's packet, and the server's after it";
    ASSERT_FALSE(ips.drops.empty());
    EXPECT_EQ(ips.drops[0]["drop"]["reason"], "applayer error");
  }
}

// Suricata's TLS decoder events (its tls-events.rules): each broken
// connection raises the events named, once each, as alerts of the rules that
// ask for them and as anomaly records; a clean handshake raises none.
TEST(IdsTls, DecoderEventsAreSuricatasTlsEvents) {
  auto u16 = [](size_t v) { return std::string{char(v >> 8), char(v & 0xff)}; };
  auto u24 = [](size_t v) { return std::string{char(v >> 16), char(v >> 8 & 0xff), char(v & 0xff)}; };
  auto record = [&](uint8_t type, const std::string& body) {
    return std::string{char(type), 3, 3} + u16(body.size()) + body;
  };
  auto hs = [&](uint8_t type, const std::string& body) { return record(22, char(type) + u24(body.size()) + body); };
  // a ClientHello whose extensions are `ext`
  auto hello = [&](const std::string& ext) {
    return hs(1, std::string("\x03\x03", 2) + std::string(32, 'r') + '\0' + u16(2) + std::string("\x13\x01", 2) +
                     std::string("\x01\x00", 2) + u16(ext.size()) + ext);
  };
  auto sni_ext = [&](uint8_t type, const std::string& name) {
    std::string list = char(type) + u16(name.size()) + name;
    return std::string("\x00\x00", 2) + u16(list.size() + 2) + u16(list.size()) + list;
  };
  const std::string server_hello =
      hs(2, std::string("\x03\x03", 2) + std::string(32, 's') + '\0' + std::string("\x13\x01", 2) + '\0');
  auto certificate = [&](const std::string& der) { return hs(11, u24(der.size() + 3) + u24(der.size()) + der); };
  auto heartbeat = [&](uint8_t type, size_t claimed, size_t padding) {
    return record(24, char(type) + u16(claimed) + std::string(padding, 'p'));
  };
  const std::string ccs = record(20, "\x01");
  // an SSLv2 CLIENT-HELLO: version 2, one cipher spec, 16 bytes of challenge
  const std::string v2_hello =
      std::string("\x80\x1c\x01\x00\x02\x00\x03\x00\x00\x00\x10\x01\x00\x80", 14) + std::string(16, 'c');
  auto empty_records = [&](int k) {
    std::string out;
    for (int i = 0; i < k; ++i) out += record(21, "");
    return out;
  };
  struct Case {
    const char* what;
    std::vector<std::pair<int, std::string>> sends;
    std::vector<std::string> events;
  };
  const std::vector<Case> cases = {
      {"clean", {{0, hello(sni_ext(0, "example.com"))}, {1, server_hello}}, {}},
      {"two server_name extensions",
       {{0, hello(sni_ext(0, "a.example") + sni_ext(0, "b.example"))}, {1, server_hello}},
       {"multiple_sni_extensions", "invalid_handshake_message"}},
      {"a server_name that is no host name",
       {{0, hello(sni_ext(1, "a.example"))}, {1, server_hello}},
       {"invalid_sni_type", "invalid_handshake_message"}},
      {"an empty host name",
       {{0, hello(sni_ext(0, ""))}, {1, server_hello}},
       {"invalid_sni_length", "invalid_handshake_message"}},
      {"a record over the bound",
       {{0, std::string("\x16\x03\x01\xff\xff", 5) + std::string(200, 'A')}},
       {"invalid_record_length", "invalid_tls_header"}},
      {"a record of type 99",
       {{0, hello("")}, {1, server_hello}, {0, std::string("\x63\x03\x03\x00\x01\x00", 6)}},
       {"invalid_record_type", "invalid_tls_header"}},
      {"a record of version 7.1",
       {{0, hello("")}, {1, server_hello + std::string("\x16\x07\x01\x00\x01\x00", 6)}},
       {"invalid_record_version", "invalid_tls_header"}},
      {"a message of 16 MiB",
       {{0, std::string("\x16\x03\x01\x00\x08\x01\xff\xff\xff\x03\x03\x00\x00", 13)}},
       {"handshake_invalid_length"}},
      {"a truncated hello",
       {{0, std::string("\x16\x03\x01\x00\x06\x01\x00\x00\x02\x03\x03", 11)}},
       {"invalid_handshake_message"}},
      // (suricata-verify bug-1450's certificates: a DER header whose length octets
      // run past the certificate, and contents shorter than the header says)
      {"a certificate's header cut short",
       {{0, hello("")}, {1, server_hello + certificate(std::string("\x30\x05\x30\x84\xff\xff\xff\xfa\x04", 9))}},
       {"certificate_invalid_length", "invalid_handshake_message"}},
      {"a certificate's contents cut short",
       {{0, hello("")}, {1, server_hello + certificate(std::string("\x30\x06\x30\x84\xff\xff\xff\xfa\x04", 9))}},
       {"invalid_certificate", "invalid_handshake_message"}},
      {"Heartbleed's request",
       {{0, hello("")}, {1, server_hello}, {0, heartbeat(1, 0x4000, 16)}},
       {"heartbeat_message", "overflow_heartbeat_message"}},
      {"a heartbeat of type 7",
       {{0, hello("")}, {1, server_hello}, {0, heartbeat(7, 1, 17)}},
       {"heartbeat_message", "invalid_heartbeat_message"}},
      {"a heartbeat answered with its length",
       {{0, hello("")},
        {1, server_hello + ccs},
        {0, ccs},
        {0, record(24, std::string(40, 'e'))},
        {1, record(24, std::string(40, 'f'))}},
       {"heartbeat_message"}},
      {"a heartbeat answered with more than it asked",
       {{0, hello("")},
        {1, server_hello + ccs},
        {0, ccs},
        {0, record(24, std::string(40, 'e'))},
        {1, record(24, std::string(4000, 'f'))}},
       {"heartbeat_message", "dataleak_heartbeat_mismatch"}},
      {"an SSLv2 server's ERROR",
       {{0, v2_hello}, {1, std::string("\x80\x03\x00\x00\x01", 5)}},
       {"error_message_encountered"}},
      {"an SSLv2 CLIENT-HELLO shorter than its fixed fields",
       {{0, std::string("\x80\x04\x01\x00\x02\x00", 6)}},
       {"invalid_ssl_record"}},
      {"a message header cut by its record",
       {{0, hello("") + record(22, std::string("\x10\x00", 2)) + record(22, std::string("\x00\x00", 2))}},
       {"invalid_ssl_record"}},
      {"a handshake message of type 99",
       {{0, hello("")}, {1, server_hello}, {0, hs(99, "")}},
       {"invalid_handshake_message"}},
      // (Suricata's guard: in one segment, more records than records of 6
      // bytes would fill, past one more)
      {"six empty records in a segment", {{0, hello("")}, {1, server_hello}, {0, empty_records(6)}}, {}},
      {"seven empty records in a segment",
       {{0, hello("")}, {1, server_hello}, {0, empty_records(7)}},
       {"too_many_records_in_packet"}},
  };
  const std::vector<std::string> names = {
      "invalid_sslv2_header",       "invalid_tls_header",          "invalid_record_version",
      "invalid_record_type",        "invalid_record_length",       "invalid_handshake_message",
      "handshake_invalid_length",   "heartbeat_message",           "invalid_heartbeat_message",
      "overflow_heartbeat_message", "dataleak_heartbeat_mismatch", "multiple_sni_extensions",
      "invalid_sni_type",           "invalid_sni_length",          "invalid_certificate",
      "certificate_invalid_length", "too_many_records_in_packet",  "invalid_ssl_record",
      "error_message_encountered"};
  std::string rules;
  for (size_t i = 0; i < names.size(); ++i)
    rules += fmt::format("alert tls any any -> any any (app-layer-event:tls.{}; sid:{};)\n", names[i], 100 + i);
  for (const Case& k : cases) {
    Conv c(40300, 443);
    for (const auto& [dir, d] : k.sends) c.send(dir, d);
    c.fin(0);
    c.fin(1);
    auto r = run_ids("tlsevents", c.out, rules);
    ASSERT_TRUE(r.r->ok) << k.what;
    std::set<std::string> alerted, logged, want(k.events.begin(), k.events.end());
    for (const auto& a : r.eve) {
      uint32_t sid = a["alert"]["signature_id"];
      EXPECT_TRUE(alerted.insert(names.at(sid - 100)).second) << k.what << ": twice " << sid;
    }
    for (const auto& a : r.other["anomaly"]) {
      std::string e = a["anomaly"]["event"];
      for (char& ch : e) ch = char(std::tolower(uint8_t(ch)));
      EXPECT_EQ(a["anomaly"]["app_proto"], "tls");
      EXPECT_TRUE(logged.insert(e).second) << k.what << ": logged twice " << e;
    }
    EXPECT_EQ(alerted, want) << k.what;
    EXPECT_EQ(logged, want) << k.what;
  }
  // an event no parser raises is refused, with its name
  auto refused = run_ids("tlsevents-unknown", Conv(40301, 443).out,
                         "alert tls any any -> any any (app-layer-event:tls.certificate_missing_element; sid:1;)\n");
  ASSERT_TRUE(refused.r->ok);
  EXPECT_EQ(refused.r->n("ids.rules"), 0u);
  EXPECT_EQ(refused.r->n("ids.skipped"), 1u);
}

TEST(IdsHttp, ContentDispositionFilename) {
  EXPECT_EQ(flow::content_disposition_filename("attachment; filename=\"a b.txt\""), "a b.txt");
  EXPECT_EQ(flow::content_disposition_filename("attachment;filename=x.exe ; size=3"), "x.exe");
  EXPECT_EQ(flow::content_disposition_filename("inline"), "");
  EXPECT_EQ(flow::content_disposition_filename("attachment; name=\"f\"; filename=\"\""), "");
}

TEST(IdsHttp, ParserSurvivesHostileInput) {
  // absurd lengths, a missing request line, binary noise: no crash, the
  // counters move, memory stays within the body limits
  flow::HttpConfig cfg;
  cfg.request_body_limit = 64;
  flow::HttpCounters c;
  size_t events = 0, body = 0;
  {
    flow::HttpConn conn(cfg, c, [&](flow::HttpTx& tx, uint8_t) {
      ++events;
      body = std::max(body, tx.request_body.size());
    });
    std::string req = "POST /x HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n" + std::string(1000, 'A');
    conn.data(0, reinterpret_cast<const uint8_t*>(req.data()), uint32_t(req.size()), 0);
    std::string big = "POST /y HTTP/1.1\r\nContent-Length: 500\r\n\r\n" + std::string(500, 'B');
    conn.data(0, reinterpret_cast<const uint8_t*>(big.data()), uint32_t(big.size()), 0);
    std::string noise(4096, '\xff');
    conn.data(1, reinterpret_cast<const uint8_t*>(noise.data()), uint32_t(noise.size()), 0);
    conn.gap(0);
    conn.data(0, reinterpret_cast<const uint8_t*>(big.data()), uint32_t(big.size()), 0);
    conn.close(0);
  }
  EXPECT_GT(events, 0u);
  EXPECT_LE(body, 64u);
  EXPECT_EQ(c.gaps.get(), 1u);
  // requests that never get responses: live transactions stay bounded
  flow::HttpConfig few;
  few.max_tx = 8;
  flow::HttpCounters c2;
  {
    flow::HttpConn conn(few, c2, [](flow::HttpTx&, uint8_t) {});
    std::string reqs;
    for (int i = 0; i < 100; ++i) reqs += "GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n";
    conn.data(0, reinterpret_cast<const uint8_t*>(reqs.data()), uint32_t(reqs.size()), 0);
  }
  EXPECT_EQ(c2.transactions.get(), 8u);
  EXPECT_EQ(c2.tx_limit.get(), 1u);
  EXPECT_EQ(flow::http_detect(0, reinterpret_cast<const uint8_t*>("GE"), 2), -1);
  EXPECT_EQ(flow::http_detect(0, reinterpret_cast<const uint8_t*>("GET /"), 5), 1);
  EXPECT_EQ(flow::http_detect(0, reinterpret_cast<const uint8_t*>("SSH-2.0"), 7), 0);
  EXPECT_EQ(flow::http_detect(1, reinterpret_cast<const uint8_t*>("HTTP/1.0 200"), 12), 1);
}

TEST(IdsRules, SuricataSyntaxForms) {
  RuleSet set;
  std::string err;
  ASSERT_TRUE(
      set.load_text("alert TCP any any -> any any (dsize:>=5; sid:1;)\n"
                    "alert tcp any any -> any any (dsize:<=5; sid:2;)\n"
                    "alert tcp any any -> any any (dsize:!5; sid:3;)\n"
                    "alert tcp any any -> any any (pcre:/ab+c/i; sid:4;)\n"
                    "alert IP any any -> any any (content:\"x\"; sid:5;)\n",
                    "forms", Vars(), true, err))
      << err;
  ASSERT_EQ(set.rules().size(), 5u);
  PacketInfo p;
  p.proto = 6;
  p.has_ports = true;
  for (uint32_t n : {4u, 5u, 6u}) {
    std::string s(n, 'x');
    p.payload = reinterpret_cast<const uint8_t*>(s.data());
    p.plen = n;
    EXPECT_EQ(header_matches(set.rules()[0], p), n >= 5) << n;
    EXPECT_EQ(header_matches(set.rules()[1], p), n <= 5) << n;
    EXPECT_EQ(header_matches(set.rules()[2], p), n != 5) << n;
  }
  p.plen = 0;  // an empty payload: under 5, yet not "not 5" (Suricata's dsize:!N wants a payload)
  EXPECT_TRUE(header_matches(set.rules()[1], p));
  EXPECT_FALSE(header_matches(set.rules()[2], p));
  std::string s = "xxABBBCxx";
  EXPECT_TRUE(payload_matches(set.rules()[3], reinterpret_cast<const uint8_t*>(s.data()), uint32_t(s.size())));
}

TEST(FromDumpLinks, CookedLoopbackAndPppCapturesReachTheRules) {
  Bytes ip = ip4(kClient, kServer, 17, 1000, 2000, "needle");
  Bytes arp_sll = {0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x06, 1, 2, 3, 4};
  struct Case {
    int lt;
    Bytes head;
  } cases[] = {
      {DLT_LINUX_SLL, {0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00}},
      {DLT_LINUX_SLL2, {0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0}},
      {DLT_NULL, {2, 0, 0, 0}},
      {DLT_PPP, {0xff, 0x03, 0x00, 0x21}},
      {DLT_PPP, {0x21}},  // a compressed protocol field (RFC 1661 6.5)
      {DLT_C_HDLC, {0x0f, 0x00, 0x08, 0x00}},
  };
  std::string dir = test::tmpdir(), rules = dir + "/links.rules";
  std::ofstream(rules) << "alert udp any any -> any any (content:\"needle\"; sid:1;)\n";
  for (const Case& c : cases) {
    Bytes f = concat(c.head, ip);
    std::vector<Bytes> frames = {f, f};
    if (c.lt == DLT_LINUX_SLL) frames.push_back(arp_sll);
    std::string pcap = dir + fmt::format("/link-{}-{}.pcap", c.lt, c.head.size());
    write_pcap(pcap, frames, c.lt);
    auto r = test::run(fmt::format(
        "src :: FromDump({}, STOP true) -> ids :: IDSMatcher(RULES {}, QUIET true) -> Discard; ids[1] -> Discard;",
        pcap, rules));
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("ids.alerts"), 2u) << io::linktype_name(c.lt);
    uint64_t not_ip = 0;
    for (auto& d : r->rt->router(0).find("src")->drop_reasons())
      if (d.name == "not-ip") not_ip = d.count.get();
    EXPECT_EQ(not_ip, c.lt == DLT_LINUX_SLL ? 1u : 0u) << "the ARP frame is dropped with its reason";
    test::finish(*r);
  }
}

// Suricata's EVE packet field: the frame as read, with its link header, for
// a packet and for a datagram rebuilt from fragments (with the first
// fragment's link header), and the link type by number and name.
TEST(FromDumpLinks, EvePacketIsTheFrameAsReadWithItsLinkType) {
  std::string data = "12345678secret-payload!!";
  Bytes whole = ip4(kClient, kServer, 17, 1000, 2000, data);
  whole[5] = 9;  // the datagram's id; its rebuilt header carries a checksum
  uint16_t sum = k::ip_checksum(whole.data(), 20);
  whole[10] = uint8_t(sum >> 8), whole[11] = uint8_t(sum);
  Bytes l4(whole.begin() + 20, whole.end());
  auto frag = [&](uint32_t off, uint32_t len, bool more) {
    Bytes p(whole.begin(), whole.begin() + 20);
    p[10] = p[11] = 0;
    uint16_t f = uint16_t((more ? 0x2000 : 0) | off / 8);
    p[6] = uint8_t(f >> 8), p[7] = uint8_t(f);
    p.insert(p.end(), l4.begin() + off, l4.begin() + off + len);
    p[2] = uint8_t(p.size() >> 8), p[3] = uint8_t(p.size());
    return p;
  };
  auto b64 = [](const Bytes& b) {
    std::string out(4 * ((b.size() + 2) / 3) + 1, '\0');
    out.resize(size_t(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), b.data(), int(b.size()))));
    return out;
  };
  struct Case {
    int lt;
    Bytes head;
    const char* name;
  } cases[] = {
      {DLT_LINUX_SLL, {0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00}, "LINUX_SLL"},
      {DLT_PPP, {0x21}, "PPP"},
      {DLT_IPV4, {}, "IPv4"},
      {DLT_EN10MB, {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0}, "EN10MB"},
  };
  std::string dir = test::tmpdir(), rules = dir + "/pkt.rules";
  std::ofstream(rules) << "alert udp any any -> any any (content:\"secret\"; sid:1;)\n"
                          "alert udp any any -> any any (content:\"needle\"; sid:2;)\n";
  for (const Case& c : cases) {
    Bytes plain = concat(c.head, ip4(kClient, kServer, 17, 1000, 2000, "needle"));
    std::vector<Bytes> frames = {plain, concat(c.head, frag(0, 16, true)), concat(c.head, frag(16, 16, false))};
    std::string pcap = dir + fmt::format("/pkt-{}.pcap", c.lt), eve = dir + fmt::format("/pkt-{}.json", c.lt);
    write_pcap(pcap, frames, c.lt);
    auto r = test::run(fmt::format(
        "FromDump({}, STOP true) -> IPReassembler -> FlowIPManager -> ids :: IDSMatcher(RULES {}, EVE {}, EVE_PACKET "
        "true, QUIET true) -> Discard; ids[1] -> Discard;",
        pcap, rules, eve));
    ASSERT_TRUE(r->ok) << r->errors;
    test::finish(*r);
    std::map<int, nlohmann::json> by_sid;
    std::ifstream f(eve);
    for (std::string line; std::getline(f, line);)
      if (auto j = nlohmann::json::parse(line); j["event_type"] == "alert") by_sid[j["alert"]["signature_id"]] = j;
    ASSERT_EQ(by_sid.size(), 2u) << c.name;
    EXPECT_EQ(by_sid[2]["packet"], b64(plain)) << c.name;
    EXPECT_EQ(by_sid[1]["packet"], b64(concat(c.head, whole))) << c.name << ": the datagram, with its link header";
    EXPECT_EQ(by_sid[1]["packet_info"]["linktype"], c.lt);
    EXPECT_EQ(by_sid[1]["packet_info"]["linktype_name"], c.name);
  }
}

TEST(IdsRules, ByteChecksMoveTheCursorAsSnortDoes) {
  auto m = [](const std::string& opts, const std::string& payload) {
    RuleSet set;
    std::string err;
    EXPECT_TRUE(set.load_text("alert tcp any any -> any any (" + opts + " sid:1;)\n", "b", Vars(), true, err)) << err;
    if (set.rules().empty()) return false;
    return payload_matches(set.rules()[0], reinterpret_cast<const uint8_t*>(payload.data()), uint32_t(payload.size()));
  };
  std::string bin("\x00\x05hello\x00\x02xy", 11);
  // a 2-byte length, then a jump over it
  EXPECT_TRUE(m("byte_test:2,=,5,0;", bin));
  EXPECT_FALSE(m("byte_test:2,>,5,0;", bin));
  EXPECT_TRUE(m("byte_test:2,!=,4,0;", bin));
  EXPECT_TRUE(m("byte_test:2,&,4,0;", bin));
  EXPECT_TRUE(m("byte_test:2,=,1280,0,little;", bin));
  EXPECT_TRUE(m("byte_jump:2,0; content:\"|00 02|\"; within:2;", bin)) << "the jump lands after 'hello'";
  EXPECT_FALSE(m("byte_jump:2,0; content:\"hello\"; within:5;", bin));
  EXPECT_TRUE(m("byte_jump:2,0; byte_test:2,=,2,0,relative; isdataat:4,relative; isdataat:!5,relative;", bin));
  EXPECT_FALSE(m("byte_jump:2,7,multiplier 100;", bin)) << "a jump past the end fails";
  EXPECT_TRUE(m("content:\"len=\"; byte_test:3,>,99,0,relative,string,dec;", "GET len=120 x"));
  EXPECT_FALSE(m("content:\"len=\"; byte_test:3,>,99,0,relative,string,dec;", "GET len=12x x"));
  EXPECT_TRUE(m("content:\"len=\"; byte_test:2,=,255,0,relative,string,hex;", "len=ff"));
  EXPECT_TRUE(m("byte_test:1,=,3,0,bitmask 0x30;", std::string("\x3f", 1)));
  EXPECT_TRUE(m("content:\"GET \"; startswith;", "GET /x"));
  EXPECT_FALSE(m("content:\"GET \"; startswith;", " GET /x"));
  EXPECT_TRUE(m("content:\".exe\"; endswith;", "a.exe.exe"));
  EXPECT_FALSE(m("content:\".exe\"; endswith;", "a.exe "));
  EXPECT_TRUE(m("content:\"a\"; content:\"z\"; distance:0; endswith;", "abcz"));
  EXPECT_TRUE(m("isdataat:10;", bin));
  EXPECT_FALSE(m("isdataat:11;", bin));
}

TEST(IdsRules, ByteCountsFromVariablesAndJumpsBackAsSuricata) {
  auto m = [](const std::string& opts, const std::string& payload) {
    RuleSet set;
    std::string err;
    EXPECT_TRUE(set.load_text("alert tcp any any -> any any (" + opts + " sid:1;)\n", "b", Vars(), true, err)) << err;
    if (set.rules().empty()) return false;
    return payload_matches(set.rules()[0], reinterpret_cast<const uint8_t*>(payload.data()), uint32_t(payload.size()));
  };
  // the first byte says how many bytes the number after it has
  std::string two("\x02\x01\x00zz", 5), three("\x03\x01\x00\x00", 4), nine("\x09\x01", 2);
  EXPECT_TRUE(m("byte_extract:1,0,n; byte_test:n,=,256,1;", two));
  EXPECT_FALSE(m("byte_extract:1,0,n; byte_test:n,=,256,1;", three)) << "three bytes read: 65536";
  EXPECT_TRUE(m("byte_extract:1,0,n; byte_test:n,=,65536,1;", three));
  EXPECT_FALSE(m("byte_extract:1,0,n; byte_test:n,>,0,1;", nine)) << "a count past 8 fails, as written it is refused";
  EXPECT_TRUE(m("byte_extract:1,0,n; byte_math:bytes n, offset 1, oper +, rvalue 1, result r; byte_test:1,=,r,0;",
                std::string("\x02\x00\x01", 3)))
      << "2 bytes at 1 (1) + 1 = 2, the first byte";
  EXPECT_TRUE(m("byte_extract:1,0,n,relative; byte_jump:n,0,relative; content:\"zz\"; within:2;",
                std::string("\x02\x00\x01xzz", 6)))
      << "the jump moves past the n bytes read, then by their value";
  EXPECT_FALSE(m("byte_extract:1,0,n,relative; byte_jump:n,0,relative; content:\"zz\"; within:2;",
                 std::string("\x01\x00\x01xzz", 6)));
  // byte_jump reading no byte: a move by post_offset alone; before the start it stops at the start
  EXPECT_TRUE(m("content:\"cd\"; byte_jump:0,0,relative,post_offset -4; content:\"ab\"; within:2;", "abcdef"));
  EXPECT_TRUE(m("content:\"cd\"; byte_jump:0,0,relative,post_offset -40; content:\"ab\"; within:2;", "abcdef"));
  EXPECT_TRUE(m("content:\"ef\"; byte_jump:0,0,relative,post_offset -2; content:\"ef\"; within:2;", "abcdef"))
      << "from the buffer's end (nothing to read there)";
  EXPECT_FALSE(m("content:\"ab\"; byte_jump:0,0,relative,post_offset 4;", "abcdef")) << "a jump to the end fails";
  EXPECT_TRUE(m("content:\"ab\"; byte_jump:0,0,relative,post_offset 3;", "abcdef"));
  RuleSet bad;
  std::string err;
  EXPECT_TRUE(
      bad.load_text("alert tcp any any -> any any (byte_test:0,=,1,0; sid:1;)\n"
                    "alert tcp any any -> any any (byte_test:n,=,1,0; sid:2;)\n"
                    "alert tcp any any -> any any (byte_jump:0,0,string; sid:3;)\n",
                    "b", Vars(), false, err));
  EXPECT_TRUE(bad.rules().empty()) << "0 bytes to test, a variable not set before, a string of no digit";
  EXPECT_EQ(bad.problems().size(), 3u);
}

TEST(IdsRules, Base64DecodeAndBase64DataReadTheDecodedBytes) {
  auto m = [](const std::string& opts, const std::string& payload) {
    RuleSet set;
    std::string err;
    EXPECT_TRUE(set.load_text("alert tcp any any -> any any (" + opts + " sid:1;)\n", "b", Vars(), true, err)) << err;
    if (set.rules().empty()) return false;
    return payload_matches(set.rules()[0], reinterpret_cast<const uint8_t*>(payload.data()), uint32_t(payload.size()));
  };
  // "thisisatest" is dGhpc2lzYXRlc3Q=
  const std::string p = "GET /?arg=dGhpc2lzYXRlc3Q= HTTP/1.1";
  EXPECT_TRUE(m("content:\"arg=\"; base64_decode:relative; base64_data; content:\"thisisatest\";", p));
  EXPECT_TRUE(m("content:\"arg=\"; base64_decode:relative; base64_data; content:\"this\"; startswith;", p));
  EXPECT_FALSE(m("content:\"arg=\"; base64_decode:relative; base64_data; content:\"isatest\"; startswith;", p));
  EXPECT_TRUE(
      m("content:\"arg\"; base64_decode:bytes 17, offset 1, relative; base64_data; content:\"thisisatest\";", p));
  EXPECT_FALSE(m("content:\"arg\"; base64_decode:bytes 10, offset 1, relative; base64_data; content:\"test\";", p))
      << "10 bytes decode to 7: thisisa";
  EXPECT_TRUE(m("base64_decode:offset 10; base64_data; content:\"thisisatest\"; endswith;", p))
      << "the decoding stops at the space after the padding";
  EXPECT_FALSE(m("content:\"arg=\"; base64_decode:relative; base64_data; content:\"arg\";", p))
      << "base64_data's contents read the decoded bytes, not the buffer";
  EXPECT_TRUE(m("content:\"arg=\"; base64_decode:relative; base64_data; pcre:\"/^this.*test$/\";", p));
  EXPECT_TRUE(m("content:\"arg=\"; base64_decode:relative; content:\"HTTP\"; distance:0;", p))
      << "without base64_data the buffer goes on from the cursor";
  EXPECT_FALSE(m("base64_decode:offset 40;", p)) << "an offset past the end decodes nothing: no match";
  EXPECT_FALSE(m("content:\"GET \"; base64_decode:relative; base64_data; content:\"x\";", p))
      << "'/' decodes nothing on its own ('/?' stops at '?')";
  // the engines' prefilters look for the buffer's own bytes, never the decoded ones
  {
    RuleSet set;
    std::string err;
    ASSERT_TRUE(
        set.load_text("alert ip any any -> any any (content:\"arg=\"; base64_decode:relative; base64_data; "
                      "content:\"thisisatest\"; sid:1;)\n"
                      "alert ip any any -> any any (base64_decode:offset 10; base64_data; "
                      "pcre:\"/^thisis/\"; sid:2;)\n",
                      "e", Vars(), true, err))
        << err;
    std::vector<EngineKind> kinds = {EngineKind::Builtin};
    if (have_hyperscan()) kinds.push_back(EngineKind::Hyperscan);
    for (EngineKind kind : kinds) {
      Engine eng;
      ASSERT_TRUE(eng.build(set.rules(), kind, err)) << err;
      PacketInfo pi;
      pi.payload = reinterpret_cast<const uint8_t*>(p.data());
      pi.plen = uint32_t(p.size());
      std::vector<uint32_t> got;
      eng.match(pi, got);
      EXPECT_EQ(got, (std::vector<uint32_t>{0, 1})) << "engine " << int(kind);
    }
  }
  // the transforms of the buffer apply before the decoding (url_decode of %3D)
  RuleSet http;
  std::string err;
  EXPECT_TRUE(
      http.load_text("alert http any any -> any any (http.uri; content:\"arg=\"; base64_decode:relative; "
                     "base64_data; content:\"test\"; sid:1;)\n",
                     "h", Vars(), true, err))
      << err;
  ASSERT_EQ(http.rules().size(), 1u);
  EXPECT_TRUE(http.rules()[0].uses_tx());
  EXPECT_TRUE(http.rules()[0].items.back().b64);
  RuleSet bad;
  EXPECT_TRUE(
      bad.load_text("alert tcp any any -> any any (base64_data; content:\"x\"; sid:1;)\n"
                    "alert tcp any any -> any any (base64_decode:bytes x; sid:2;)\n"
                    "alert tcp any any -> any any (base64_decode; base64_data; content:\"x\"; http_uri; sid:3;)\n"
                    "alert tcp any any -> any any (base64_decode; base64_data; content:\"x\"; pkt_data; "
                    "content:\"y\"; sid:4;)\n"
                    "alert tcp any any -> any any (base64_decode; content:\"a\"; base64_data; sid:5;)\n",
                    "b", Vars(), false, err));
  EXPECT_TRUE(bad.rules().empty());
  EXPECT_EQ(bad.problems().size(), 5u);
}

TEST(Base64, DecodesAsSuricatasRfc4648Mode) {
  auto d = [](const std::string& in) {
    std::string out;
    base64_decode_rfc4648(reinterpret_cast<const uint8_t*>(in.data()), in.size(), out);
    return out;
  };
  EXPECT_EQ(d("Zm9vYmFy"), "foobar");
  EXPECT_EQ(d("Zm9vYmE="), "fooba");
  EXPECT_EQ(d("Zm9vYg=="), "foob");
  EXPECT_EQ(d("Zm9vYg"), "foob") << "a short group at the end is padded";
  EXPECT_EQ(d("Zm 9vYmFy"), "f") << "a byte outside the alphabet ends it";
  EXPECT_EQ(d("Zm$9vYm.Fy"), "f");
  EXPECT_EQ(d("Zg==Zm8="), "ffo") << "padding ends a group, not the decoding";
  EXPECT_EQ(d("Zm9vY"), "foo") << "a lone last character decodes nothing more";
  EXPECT_EQ(d("=Zm9"), "");
  EXPECT_EQ(d(""), "");
  // random text against a straightforward decoder of whole groups
  std::mt19937 rng(3);
  const std::string alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 2000; ++i) {
    std::string raw;
    for (size_t n = rng() % 40; n--;) raw.push_back(char(rng()));
    std::string enc;  // raw encoded, with padding
    for (size_t j = 0; j < raw.size(); j += 3) {
      uint32_t v = uint32_t(uint8_t(raw[j])) << 16 | (j + 1 < raw.size() ? uint8_t(raw[j + 1]) << 8 : 0) |
                   (j + 2 < raw.size() ? uint8_t(raw[j + 2]) : 0);
      enc += alpha[v >> 18 & 63];
      enc += alpha[v >> 12 & 63];
      enc += j + 1 < raw.size() ? alpha[v >> 6 & 63] : '=';
      enc += j + 2 < raw.size() ? alpha[v & 63] : '=';
    }
    ASSERT_EQ(d(enc), raw) << enc;
    ASSERT_EQ(d(enc + " tail"), raw) << enc;
  }
}

// tcp.mss, icmpv6.mtu and the checksum keywords, against checksums summed
// here the plain way (RFC 1071 over a pseudo header written out).
TEST(IdsRules, MssMtuAndChecksumsAsSuricata) {
  auto sum16 = [](const Bytes& d) {
    uint32_t s = 0;
    for (size_t i = 0; i < d.size(); i += 2) s += uint32_t(d[i] << 8 | (i + 1 < d.size() ? d[i + 1] : 0));
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
    return uint16_t(~s);
  };
  // the transport checksum of an IPv4 packet written in place (off: its field in the L4 header)
  auto fix4 = [&](Bytes& ip, size_t off) {
    size_t hl = size_t(ip[0] & 15) * 4, l4 = ip.size() - hl;
    ip[hl + off] = ip[hl + off + 1] = 0;
    Bytes ph(ip.begin() + 12, ip.begin() + 20);
    ph.insert(ph.end(), {0, ip[9], uint8_t(l4 >> 8), uint8_t(l4)});
    if (ip[9] == 1) ph.clear();  // (ICMPv4: no pseudo header)
    ph.insert(ph.end(), ip.begin() + std::ptrdiff_t(hl), ip.end());
    uint16_t c = sum16(ph);
    ip[hl + off] = uint8_t(c >> 8), ip[hl + off + 1] = uint8_t(c);
    ip[10] = ip[11] = 0;
    uint16_t h = sum16(Bytes(ip.begin(), ip.begin() + std::ptrdiff_t(hl)));
    ip[10] = uint8_t(h >> 8), ip[11] = uint8_t(h);
  };
  // a SYN with options NOP, MSS 1200, and 4 bytes of window scale and NOP
  Bytes syn = ip4(kClient, kServer, 6, 1000, 80, "", 1, 0, 0x02);
  syn[32] = 0x80;  // 32-byte header
  syn.insert(syn.end(), {1, 2, 4, 0x04, 0xb0, 3, 3, 7, 1, 1, 1, 0});
  syn[3] = uint8_t(syn.size());
  fix4(syn, 16);
  Bytes udp = ip4(kClient, kServer, 17, 1000, 53, "abc");
  Bytes udp_nosum = udp;  // (no checksum: valid)
  udp_nosum[10] = udp_nosum[11] = 0;
  uint16_t h = sum16(Bytes(udp_nosum.begin(), udp_nosum.begin() + 20));
  udp_nosum[10] = uint8_t(h >> 8), udp_nosum[11] = uint8_t(h);
  fix4(udp, 6);
  Bytes icmp = ip4(kClient, kServer, 1, 0, 0, "ping");  // (ports: type 0, code 0)
  fix4(icmp, 2);
  // ICMPv6 Packet Too Big, MTU 1000, with its checksum
  Bytes v6(40, 0);
  v6[0] = 0x60, v6[6] = 58, v6[7] = 64;
  v6[23] = 1, v6[39] = 2;  // ::1 -> ::2
  Bytes msg = {2, 0, 0, 0, 0, 0, 0x03, 0xe8, 0x60, 0, 0, 0};
  v6[4] = 0, v6[5] = uint8_t(msg.size());
  Bytes ph(v6.begin() + 8, v6.begin() + 40);
  ph.insert(ph.end(), {0, 0, 0, uint8_t(msg.size()), 0, 0, 0, 58});
  ph.insert(ph.end(), msg.begin(), msg.end());
  uint16_t c6 = sum16(ph);
  msg[2] = uint8_t(c6 >> 8), msg[3] = uint8_t(c6);
  v6.insert(v6.end(), msg.begin(), msg.end());
  auto broken = [](Bytes b) {
    b.back() ^= 0x40;
    return b;
  };
  RuleSet set;
  std::string err;
  ASSERT_TRUE(
      set.load_text("alert tcp any any -> any any (tcp.mss:<1300; sid:1;)\n"
                    "alert tcp any any -> any any (tcp.mss:1460; sid:2;)\n"
                    "alert ipv6 any any -> any any (icmpv6.mtu:<1280; sid:3;)\n"
                    "alert ip any any -> any any (ipv4-csum:valid; sid:4;)\n"
                    "alert tcp any any -> any any (tcpv4-csum:valid; sid:5;)\n"
                    "alert tcp any any -> any any (tcpv4-csum:invalid; sid:6;)\n"
                    "alert udp any any -> any any (udpv4-csum:valid; sid:7;)\n"
                    "alert icmp any any -> any any (icmpv4-csum:valid; sid:8;)\n"
                    "alert ip any any -> any any (icmpv6-csum:valid; sid:9;)\n"
                    "alert ip any any -> any any (icmpv6-csum:invalid; sid:10;)\n"
                    "alert ip any any -> any any (tcpv6-csum:valid; sid:11;)\n",
                    "c", Vars(), true, err))
      << err;
  auto hits = [&](const Bytes& ip) { return header_hits(set, ip); };
  EXPECT_EQ(hits(syn), (std::vector<uint32_t>{1, 4, 5}));
  Bytes syn_bad = syn;
  syn_bad[24] ^= 1;  // the sequence number: the TCP checksum breaks, not the IP header's
  EXPECT_EQ(hits(syn_bad), (std::vector<uint32_t>{1, 4, 6}));
  EXPECT_EQ(hits(udp), (std::vector<uint32_t>{4, 7}));
  EXPECT_EQ(hits(broken(udp)), (std::vector<uint32_t>{4}));
  EXPECT_EQ(hits(udp_nosum), (std::vector<uint32_t>{4, 7}));
  EXPECT_EQ(hits(icmp), (std::vector<uint32_t>{4, 8}));
  EXPECT_EQ(hits(v6), (std::vector<uint32_t>{3, 9}));
  EXPECT_EQ(hits(broken(v6)), (std::vector<uint32_t>{3, 10}));
  Bytes ip_bad = udp;
  ip_bad[8] = 3;  // the TTL: the IP header's checksum breaks
  EXPECT_EQ(hits(ip_bad), (std::vector<uint32_t>{7}));
  EXPECT_EQ(refused("alert tcp any any -> any any (tcpv4-csum:maybe; sid:1;)\n"), 1u);
}

TEST(IdsRules, HeaderFieldsAndTcpFlags) {
  RuleSet set;
  std::string err;
  ASSERT_TRUE(
      set.load_text("alert icmp any any -> any any (itype:8; icode:0; icmp_id:77; sid:1;)\n"
                    "alert icmp any any -> any any (itype:>10; sid:2;)\n"
                    "alert tcp any any -> any any (flags:S,CE; sid:3;)\n"
                    "alert tcp any any -> any any (flags:+A; sid:4;)\n"
                    "alert tcp any any -> any any (flags:!R; ttl:<10; sid:5;)\n"
                    "alert ip any any -> any any (ip_proto:!tcp; sid:6;)\n",
                    "h", Vars(), true, err))
      << err;
  auto hits = [&](const Bytes& ip) { return header_hits(set, ip); };
  Bytes echo = ip4(kClient, kServer, 1, 0, 0, "ping");
  echo[20] = 8, echo[21] = 0, echo[24] = 0, echo[25] = 77;  // type 8 code 0, id 77
  EXPECT_EQ(hits(echo), (std::vector<uint32_t>{1, 6}));
  echo[20] = 13;
  EXPECT_EQ(hits(echo), (std::vector<uint32_t>{2, 6}));
  Bytes syn = ip4(kClient, kServer, 6, 1, 2, "", 1, 0, 0x02 | 0xc0);  // SYN with ECN bits (masked)
  EXPECT_EQ(hits(syn), (std::vector<uint32_t>{3}));
  Bytes ack = ip4(kClient, kServer, 6, 1, 2, "", 1, 1, 0x18);
  ack[8] = 5;  // TTL 5
  EXPECT_EQ(hits(ack), (std::vector<uint32_t>{4, 5}));
}

TEST(IdsRules, ADuplicateSidIsReportedAndTheLaterRuleWins) {
  RuleSet set;
  std::string err;
  ASSERT_TRUE(
      set.load_text("alert tcp any any -> any any (content:\"old\"; sid:9; rev:1;)\n"
                    "alert tcp any any -> any any (content:\"other\"; sid:10;)\n"
                    "alert tcp any any -> any any (content:\"new\"; sid:9; rev:2;)\n",
                    "dup.rules", Vars(), false, err))
      << err;
  ASSERT_EQ(set.rules().size(), 2u);
  EXPECT_EQ(set.rules()[0].items[0].content.bytes, "new");
  ASSERT_EQ(set.problems().size(), 1u);
  EXPECT_EQ(set.problems()[0].str(), "dup.rules:1: sid 9: duplicate sid: replaced by the rule at dup.rules:3");
}

TEST(IdsRules, ThresholdAndDetectionFilterCountPerKeyAndWindow) {
  // one source sends 10 matching packets a second apart, another source 2
  std::vector<Bytes> frames;
  frames.reserve(12);
  for (int i = 0; i < 10; ++i) frames.push_back(ether(ip4(kClient, kServer, 17, 1000, 53, "hit")));
  for (int i = 0; i < 2; ++i) frames.push_back(ether(ip4(kClient + 7, kServer, 17, 1000, 53, "hit")));
  std::string dir = test::tmpdir(), pcap = dir + "/threshold.pcap", rules = dir + "/threshold.rules";
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(pcap, 1, 65535, true, err)) << err;
    for (size_t i = 0; i < frames.size(); ++i)  // 1 s apart
      w.write(frames[i].data(), uint32_t(frames[i].size()), uint32_t(frames[i].size()),
              1700000000000000000ull + i * 1000000000ull);
    ASSERT_TRUE(w.close());
  }
  std::ofstream(rules)
      << "alert udp any any -> any any (content:\"hit\"; threshold:type limit,track by_src,count 2,seconds 60; "
         "sid:1;)\n"
         "alert udp any any -> any any (content:\"hit\"; threshold:type threshold,track by_src,count 3,seconds 60; "
         "sid:2;)\n"
         "alert udp any any -> any any (content:\"hit\"; threshold:type both,track by_rule,count 4,seconds 60; "
         "sid:3;)\n"
         "alert udp any any -> any any (content:\"hit\"; detection_filter:track by_src,count 8,seconds 60; sid:4;)\n"
         "alert udp any any -> any any (content:\"hit\"; threshold:type limit,track by_src,count 1,seconds 4; "
         "sid:5;)\n"
         "alert udp any any -> any any (content:\"hit\"; threshold:type backoff,track by_src,count 1,multiplier 2; "
         "sid:6;)\n"
         "alert udp any any -> any any (content:\"hit\"; threshold:type backoff,track by_rule,count 3,multiplier 3; "
         "sid:7;)\n";
  std::string eve = dir + "/threshold-eve.json";
  std::remove(eve.c_str());
  auto r = test::run(fmt::format(
      "FromDump({}, STOP true) -> FlowIPManager -> ids :: IDSMatcher(RULES {}, EVE {}, QUIET true) -> Discard; ids[1] "
      "-> Discard;",
      pcap, rules, eve));
  ASSERT_TRUE(r->ok) << r->errors;
  test::finish(*r);
  std::map<uint32_t, int> per_sid;
  std::ifstream f(eve);
  for (std::string line; std::getline(f, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event_type"] == "alert") ++per_sid[j["alert"]["signature_id"]];
  }
  EXPECT_EQ(per_sid[1], 2 + 2) << "limit: the first 2 per source";
  EXPECT_EQ(per_sid[2], 3) << "threshold: every 3rd per source (3, 6, 9 of the first)";
  EXPECT_EQ(per_sid[3], 1) << "both: once, at the 4th of the rule";
  EXPECT_EQ(per_sid[4], 2) << "detection_filter: the 9th and 10th of the first source";
  EXPECT_EQ(per_sid[5], 3 + 1) << "limit 1 per 4 s window: seconds 0, 4, 8 of the first source";
  EXPECT_EQ(per_sid[6], 4 + 2) << "backoff: the 1st, 2nd, 4th and 8th of the first source, 1st and 2nd of the other";
  EXPECT_EQ(per_sid[7], 2) << "backoff: the rule's 3rd and 9th";
  EXPECT_EQ(refused("alert udp any any -> any any (threshold:type backoff,track by_flow,count 1,seconds 2; "
                    "sid:1;)\n"
                    "alert udp any any -> any any (threshold:type limit,track by_flow,count 1,multiplier 2,"
                    "seconds 2; sid:2;)\n"
                    "alert udp any any -> any any (threshold:type backoff,track by_flow,count 1,multiplier 1; "
                    "sid:3;)\n"),
            3u)
      << "backoff has no window, only backoff a multiplier, and one of 2 or more";
}

// by_both counts a pair of hosts whichever way the packet goes (Suricata's
// IP pair).
TEST(IdsRules, ByBothTracksAPairOfHostsEitherWay) {
  std::vector<Bytes> frames = {
      ether(ip4(kClient, kServer, 17, 1000, 53, "hit")), ether(ip4(kServer, kClient, 17, 53, 1000, "hit")),
      ether(ip4(kClient, kServer, 17, 1000, 53, "hit")), ether(ip4(kServer, kClient, 17, 53, 1000, "hit")),
      ether(ip4(kClient + 7, kServer, 17, 1000, 53, "hit"))};
  auto r = run_ids("by-both", frames,
                   "alert udp any any -> any any (content:\"hit\"; threshold:type limit,track by_both,count 2,"
                   "seconds 60; sid:1;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.sids().size(), 2u + 1u) << "the first two of the pair, either way, and the other pair's";
}

// vlan.layers and vlan.id (Suricata 8) over 802.1Q / QinQ tags, and the
// EVE vlan array of the packet's records and of its flow's.
TEST(IdsRules, VlanKeywordsAndEveVlan) {
  std::vector<Bytes> frames = {tagged({100}, ip4(kClient, kServer, 17, 1000, 53, "x")),
                               tagged({200, 300}, ip4(kClient, kServer, 17, 1001, 53, "x")),
                               tagged({}, ip4(kClient, kServer, 17, 1002, 53, "x"))};
  auto r = run_ids("vlan", frames,
                   "alert udp any any -> any any (vlan.layers:0; sid:1;)\n"
                   "alert udp any any -> any any (vlan.layers:>=1; sid:2;)\n"
                   "alert udp any any -> any any (vlan.id:100; sid:3;)\n"
                   "alert udp any any -> any any (vlan.id:300,-1; sid:4;)\n"
                   "alert udp any any -> any any (vlan.id:200,1; sid:5;)\n"
                   "alert udp any any -> any any (vlan.id:<250,all; sid:6;)\n"
                   "alert udp any any -> any any (vlan.id:!100; sid:7;)\n"
                   "alert udp any any -> any any (vlan.id:200,0; sid:8;)\n");
  ASSERT_TRUE(r.r->ok);
  std::map<uint32_t, std::vector<int>> frames_of;  // sid: the frames (pcap_cnt) it alerted on
  for (const auto& j : r.eve) frames_of[j["alert"]["signature_id"]].push_back(j["pcap_cnt"]);
  EXPECT_EQ(frames_of[1], (std::vector<int>{3})) << "no tag";
  EXPECT_EQ(frames_of[2], (std::vector<int>{1, 2}));
  EXPECT_EQ(frames_of[3], (std::vector<int>{1}));
  EXPECT_EQ(frames_of[4], (std::vector<int>{2})) << "-1: the innermost tag";
  EXPECT_TRUE(frames_of[5].empty()) << "layer 1 of the second frame is 300";
  EXPECT_EQ(frames_of[6], (std::vector<int>{1})) << "all: every tag under 250";
  EXPECT_EQ(frames_of[7], (std::vector<int>{2})) << "any tag not 100 (no tag: no match)";
  EXPECT_EQ(frames_of[8], (std::vector<int>{2})) << "layer 0: the outer (QinQ) tag";
  for (const auto& j : r.eve) {
    int n = j["pcap_cnt"];
    if (n == 3)
      EXPECT_FALSE(j.contains("vlan"));
    else
      EXPECT_EQ(j["vlan"], n == 1 ? nlohmann::json({100}) : nlohmann::json({200, 300})) << j.dump();
  }
  ASSERT_EQ(r.flows.size(), 3u);
  for (const auto& f : r.flows) {
    int sport = f["src_port"];
    if (sport == 1002)
      EXPECT_FALSE(f.contains("vlan"));
    else
      EXPECT_EQ(f["vlan"], sport == 1000 ? nlohmann::json({100}) : nlohmann::json({200, 300})) << f.dump();
  }
  EXPECT_EQ(refused("alert ip any any -> any any (vlan.id:5000; sid:1;)\n"
                    "alert ip any any -> any any (vlan.id:10,3; sid:2;)\n"
                    "alert ip any any -> any any (vlan.id:10,some; sid:3;)\n"
                    "alert ip any any -> any any (vlan.layers:x; sid:4;)\n"),
            4u);
}

// FlowIPManager(VLAN true), as Suricata's vlan.use-for-tracking: the same
// addresses and ports on other VLAN ids (any layer) are another flow; the
// default keys flows on addresses and ports alone.
TEST(FlowIPManager, VlanKeysFlowsOnTheTags) {
  std::vector<Bytes> frames = {tagged({100}, ip4(kClient, kServer, 17, 1000, 53, "a")),
                               tagged({200}, ip4(kClient, kServer, 17, 1000, 53, "b")),
                               tagged({100}, ip4(kServer, kClient, 17, 53, 1000, "c")),  // VLAN 100's reply
                               tagged({300, 5}, ip4(kClient, kServer, 17, 1000, 53, "d")),
                               tagged({300, 6}, ip4(kClient, kServer, 17, 1000, 53, "e")),  // another inner tag
                               tagged({}, ip4(kClient, kServer, 17, 1000, 53, "f"))};
  std::string dir = test::tmpdir(), pcap = dir + "/vlan-flows.pcap", rf = dir + "/vlan-flows.rules";
  write_pcap(pcap, frames);
  std::ofstream(rf) << "alert udp any any -> any any (content:\"zz\"; sid:1;)\n";
  auto flows = [&](const std::string& mgr_args) {
    std::string eve = dir + "/vlan-flows.json";
    std::remove(eve.c_str());
    auto r = test::run(
        fmt::format("FromDump({}, STOP true) -> FlowIPManager({}) -> IDSMatcher(RULES {}, EVE {}, EVE_TYPES flow, "
                    "QUIET true) -> Discard;",
                    pcap, mgr_args, rf, eve));
    EXPECT_TRUE(r->ok) << r->errors;
    test::finish(*r);
    std::map<std::string, std::pair<int, int>> out;  // the flow's vlan array: packets each way
    std::ifstream f(eve);
    for (std::string line; std::getline(f, line);) {
      auto j = nlohmann::json::parse(line);
      out[j.value("vlan", nlohmann::json::array()).dump()] = {j["flow"]["pkts_toserver"], j["flow"]["pkts_toclient"]};
    }
    return out;
  };
  using M = std::map<std::string, std::pair<int, int>>;
  EXPECT_EQ(flows("VLAN true"),
            (M{{"[100]", {1, 1}}, {"[200]", {1, 0}}, {"[300,5]", {1, 0}}, {"[300,6]", {1, 0}}, {"[]", {1, 0}}}));
  EXPECT_EQ(flows("MIDSTREAM true"), (M{{"[100]", {5, 1}}})) << "one flow; its vlan is its first packet's";
}

// A Network Service Header (RFC 8300) after the Ethernet header, as
// Suricata decodes it with the frame: its IPv4 payload, or an Ethernet frame
// inside it, is the packet's; flows and rules see through it, and
// decoder.nsh counts the frames. One whose length overruns the frame is not IP.
TEST(FlowIPManager, NetworkServiceHeadersAreDecodedWithTheFrame) {
  auto nsh = [](const Bytes& payload, uint8_t next, uint8_t words, uint8_t claimed = 0) {
    Bytes f = ether(ip4(kClient, kServer, 17, 1000, 53, ""));
    f.resize(12);
    f.push_back(0x89), f.push_back(0x4f);
    Bytes h(size_t(words) * 4, 0);
    h[1] = claimed ? claimed : words, h[2] = 1, h[3] = next, h[7] = 2;  // MD type 1, service path 0, index 2
    f.insert(f.end(), h.begin(), h.end());
    f.insert(f.end(), payload.begin(), payload.end());
    return f;
  };
  Bytes inner = ip4(kClient, kServer, 17, 1000, 53, "via-nsh");
  std::vector<Bytes> frames = {nsh(inner, 1, 6), nsh(ether(ip4(kClient, kServer, 17, 1000, 53, "via-nsh-eth")), 3, 2),
                               ether(ip4(kServer, kClient, 17, 53, 1000, "reply")), nsh(inner, 1, 6, 60)};
  uint32_t off = 0;
  uint16_t type = 0;
  ASSERT_TRUE(k::eth_l3(frames[0].data(), uint32_t(frames[0].size()), off, type));
  EXPECT_EQ(type, 0x0800);
  EXPECT_EQ(off, 14u + 24u);
  ASSERT_TRUE(k::eth_l3(frames[1].data(), uint32_t(frames[1].size()), off, type));
  EXPECT_EQ(off, 14u + 8u + 14u) << "the Ethernet frame inside";
  ASSERT_TRUE(k::eth_l3(frames[3].data(), uint32_t(frames[3].size()), off, type));
  EXPECT_EQ(type, k::kEthNsh) << "its length overruns the frame";
  auto r = run_ids("nsh", frames, "alert udp any any -> any any (content:\"via-nsh\"; sid:1;)\n", false, false,
                   ", EVE_TYPES \"alert flow stats\"");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.sids(), (std::vector<uint32_t>{1, 1}));
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_EQ(r.flows[0]["flow"]["pkts_toserver"], 2);
  EXPECT_EQ(r.flows[0]["flow"]["pkts_toclient"], 1) << "the plain reply is the same flow";
  ASSERT_FALSE(r.other["stats"].empty());
  EXPECT_EQ(r.other["stats"].back()["stats"]["decoder"]["nsh"], 3);
}

// The workers' copies of an IDSMatcher share one threshold table, as
// Suricata's threads do: a source's flows spread over four workers are
// counted together, and by_flow keys one flow whichever worker has it.
TEST(IdsRules, ThresholdsCountAcrossWorkers) {
  std::vector<Bytes> frames;
  for (uint16_t i = 0; i < 64; ++i) frames.push_back(ether(ip4(kClient, kServer, 17, uint16_t(1000 + i), 53, "hit")));
  test::Options opt = test::default_options();
  opt.threads = 4;
  auto r = run_ids("threshold-workers", frames,
                   "alert udp any any -> any any (content:\"hit\"; threshold:type limit,track by_src,count 1,"
                   "seconds 60; sid:1;)\n"
                   "alert udp any any -> any any (content:\"hit\"; detection_filter:track by_src,count 10,"
                   "seconds 60; sid:2;)\n"
                   "alert udp any any -> any any (content:\"hit\"; threshold:type both,track by_rule,count 5,"
                   "seconds 60; sid:3;)\n"
                   "alert udp any any -> any any (content:\"hit\"; threshold:type limit,track by_flow,count 1,"
                   "seconds 60; sid:4;)\n",
                   false, false, "", "", &opt);
  ASSERT_TRUE(r.r->ok);
  std::map<uint32_t, int> per_sid;
  for (uint32_t sid : r.sids()) ++per_sid[sid];
  EXPECT_EQ(per_sid[1], 1) << "limit 1 by_src: once for the source, not once a worker";
  EXPECT_EQ(per_sid[2], 64 - 10) << "detection_filter: every match past the source's 10th";
  EXPECT_EQ(per_sid[3], 1) << "both by_rule: once, at the rule's 5th match";
  EXPECT_EQ(per_sid[4], 64) << "by_flow: each flow its own key (flow ids are unique over the workers)";
}

// A worker's packet a little older than the window another worker's packet
// started counts in that window (not as a new one); concurrent matches are
// counted exactly (the table's lock; ThreadSanitizer runs this too).
TEST(IdsRules, ThresholdTableIsSharedSafely) {
  Rule rule;
  rule.threshold.type = Threshold::Limit, rule.threshold.track = Threshold::ByRule;
  rule.threshold.count = 1, rule.threshold.seconds = 10;
  ThresholdState t;
  PacketInfo p;
  const uint64_t s = 1000000000ull;
  EXPECT_TRUE(t.allow(rule, 0, p, 0, 100 * s));
  EXPECT_FALSE(t.allow(rule, 0, p, 0, 100 * s - 1000)) << "an older packet is in the window, not past it";
  EXPECT_FALSE(t.allow(rule, 0, p, 0, 109 * s));
  EXPECT_TRUE(t.allow(rule, 0, p, 0, 110 * s)) << "the next window";

  rule.threshold.count = 100, rule.threshold.seconds = 60;
  ThresholdState shared;
  std::atomic<int> allowed{0};
  std::vector<std::thread> th;
  for (int w = 0; w < 4; ++w)
    th.emplace_back([&, w] {
      for (int i = 0; i < 1000; ++i) allowed += shared.allow(rule, 1, p, 0, 100 * s + uint64_t(w * 1000 + i));
    });
  for (auto& x : th) x.join();
  EXPECT_EQ(allowed.load(), 100) << "limit 100 over 4,000 matches from 4 threads";
}

TEST(IdsRules, ThresholdConfigSuppressesOverridesAndRateFilters) {
  // the same traffic: 10 packets from one source, 2 from another, a second apart
  std::vector<Bytes> frames;
  frames.reserve(12);
  for (int i = 0; i < 10; ++i) frames.push_back(ether(ip4(kClient, kServer, 17, 1000, 53, "hit")));
  for (int i = 0; i < 2; ++i) frames.push_back(ether(ip4(kClient + 7, kServer, 17, 1000, 53, "hit")));
  std::string dir = test::tmpdir(), pcap = dir + "/tconf.pcap";
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(pcap, 1, 65535, true, err)) << err;
    for (size_t i = 0; i < frames.size(); ++i)
      w.write(frames[i].data(), uint32_t(frames[i].size()), uint32_t(frames[i].size()),
              1700000000000000000ull + i * 1000000000ull);
    ASSERT_TRUE(w.close());
  }
  auto run = [&](const std::string& name, const std::string& rules, const std::string& conf, bool ips,
                 std::map<uint32_t, int>& per_sid) {
    std::string rf = dir + "/" + name + ".rules", cf = dir + "/" + name + ".config", eve = dir + "/" + name + ".json";
    std::ofstream(rf) << rules;
    std::ofstream(cf) << conf;
    std::remove(eve.c_str());
    auto r = test::run(fmt::format(
        "FromDump({}, STOP true) -> FlowIPManager -> ids :: IDSMatcher(RULES {}, EVE {}, THRESHOLD {}, IPS {}, "
        "QUIET true) -> Discard; ids[1] -> Discard;",
        pcap, rf, eve, cf, ips));
    EXPECT_TRUE(r->ok) << r->errors;
    if (!r->ok) return r;
    test::finish(*r);
    std::ifstream f(eve);
    for (std::string line; std::getline(f, line);) {
      auto j = nlohmann::json::parse(line);
      if (j["event_type"] == "alert") ++per_sid[j["alert"]["signature_id"]];
    }
    return r;
  };
  std::map<uint32_t, int> ids;
  auto r = run("tconf-ids",
               "alert udp any any -> any any (content:\"hit\"; sid:1;)\n"
               "alert udp any any -> any any (content:\"hit\"; sid:2;)\n"
               "alert udp any any -> any any (content:\"hit\"; sid:4;)\n",
               "# Suricata's forms\n"
               "suppress gen_id 1, sig_id 1, track by_src, ip 10.0.0.1\n"
               "event_filter gen_id 1, sig_id 2, type limit, track by_src, count 1, seconds 60\n"
               "rate_filter gen_id 1, sig_id 4, track by_rule, count 3, seconds 60, new_action pass, timeout 100\n"
               "suppress gen_id 1, sig_id 99\n"
               "threshold gen_id 1, sig_id 2, type sometimes\n",
               false, ids);
  ASSERT_TRUE(r->ok);
  std::string problems = r->h("ids.problems");
  EXPECT_NE(problems.find(".config:5: suppress: no loaded rule 1:99"), std::string::npos) << problems;
  EXPECT_NE(problems.find(".config:6: threshold: bad or missing fields"), std::string::npos) << problems;
  EXPECT_EQ(ids[1], 2) << "suppressed for 10.0.0.1: only the other source's";
  EXPECT_EQ(ids[2], 1 + 1) << "event_filter limit 1 per source";
  EXPECT_EQ(ids[4], 3) << "rate_filter pass: past 3 matches, the packets pass";
  // passed: the first source's 4th to 10th packets, where nothing else alerts
  // (the other source's packets also alert for sid 1: they are not passed)
  EXPECT_EQ(r->n("ids.passed"), 7u);
  // IPS: an alert rule whose rate_filter turns it into drop past 2 matches
  std::map<uint32_t, int> ips;
  auto r2 = run("tconf-ips", "alert udp any any -> any any (content:\"hit\"; sid:3;)\n",
                "rate_filter gen_id 1, sig_id 3, track by_rule, count 2, seconds 60, new_action drop, timeout 5\n",
                true, ips);
  ASSERT_TRUE(r2->ok);
  // a UDP payload's match acts on its packet only (Suricata: a drop reaches
  // the flow from a stream or transaction match, or an IP-only rule)
  EXPECT_EQ(ips[3], 2 + 8 + 2) << "two alerts, then every later match a drop (logged as blocked)";
  EXPECT_EQ(r2->n("ids.dropped"), 10u) << "from the 3rd match on, each packet; the other source's too";
  EXPECT_EQ(r2->n("ids.flow_dropped"), 0u);
  std::map<std::string, int> reasons;  // the drops' reason: the rate_filter's (Suricata's name)
  std::ifstream drops(dir + "/tconf-ips.json");
  for (std::string line; std::getline(drops, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event_type"] == "drop") ++reasons[j["drop"]["reason"]];
  }
  EXPECT_EQ(reasons, (std::map<std::string, int>{{"threshold detection_filter", 10}}));
}

TEST(IdsRules, FragbitsAndFastPatternSlices) {
  Bytes df = ether(ip4(kClient, kServer, 17, 1000, 53, "hello world"));
  df[14 + 6] |= 0x40;  // don't fragment
  auto r = run_ids("fragbits", {df},
                   "alert ip any any -> any any (fragbits:D; sid:1;)\n"
                   "alert ip any any -> any any (fragbits:M; sid:2;)\n"
                   "alert ip any any -> any any (fragbits:!MR; sid:3;)\n"
                   "alert ip any any -> any any (fragbits:+D; content:\"hello\"; fast_pattern:0,3; sid:4;)\n"
                   "alert ip any any -> any any (fragbits:*MR; sid:5;)\n"
                   "alert udp any any -> any any (content:\"hello\"; fast_pattern:3,5; sid:6;)\n"
                   "alert ip any any -> any any (fragbits:X; sid:7;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 2u) << r.r->h("ids.problems");  // 6: past the content; 7: no such bit
  auto sids = r.sids();
  std::sort(sids.begin(), sids.end());
  EXPECT_EQ(sids, (std::vector<uint32_t>{1, 3, 4}));
}

TEST(TunnelDecap, InnerPacketsAreDetectedAndLoggedWithTheirTunnel) {
  // an IPv4 header around a payload (no transport header)
  const uint32_t o1 = 0xc0000201, o2 = 0xc0000202;  // 192.0.2.1 -> 192.0.2.2, the tunnel's ends
  Bytes inner = ip4(kClient, kServer, 17, 1000, 2000, "secret");
  Bytes inner_eth = ether(inner);
  Bytes gre = {0x00, 0x00, 0x65, 0x58};  // GRE, transparent Ethernet bridging
  gre.insert(gre.end(), inner_eth.begin(), inner_eth.end());
  std::string vx = std::string("\x08\0\0\0\0\0\x01\0", 8) + std::string(inner_eth.begin(), inner_eth.end());
  std::vector<Bytes> frames = {
      ether(ip4_raw(o1, o2, 4, inner)),              // IP-in-IP
      ether(ip4_raw(o1, o2, 47, gre)),               // GRE with Ethernet inside
      ether(ip4(o1, o2, 17, 50000, 4789, vx)),       // VXLAN
      ether(ip4(o1, o2, 17, 1000, 2000, "secret")),  // no tunnel: inspected once
  };
  uint64_t inner_packets = 0;
  auto records = run_tunneled("tun", frames,
                              "alert udp any any -> any any (content:\"secret\"; sid:1;)\n"
                              "alert ip any any -> 192.0.2.2 any (ip_proto:4; sid:2;)\n",
                              "", inner_packets);
  EXPECT_EQ(inner_packets, 3u);
  std::vector<nlohmann::json> alerts;
  for (auto& j : records)
    if (j["event_type"] == "alert") alerts.push_back(j);
  ASSERT_EQ(alerts.size(), 5u) << "three inner packets and the plain one for sid 1; the IP-in-IP packet for sid 2";
  std::multiset<std::string> srcs;
  for (auto& j : alerts) {
    srcs.insert(j["pkt_src"].get<std::string>());
    if (j["alert"]["signature_id"] == 2) {
      EXPECT_EQ(j["proto"], "IP-in-IP");
      EXPECT_EQ(j["pkt_src"], "wire/pcap");
    } else if (j["pkt_src"] != "wire/pcap") {
      EXPECT_EQ(j["src_ip"], "10.0.0.1") << "the inner addresses";
      EXPECT_EQ(j["tunnel"]["src_ip"], "192.0.2.1");
      EXPECT_EQ(j["tunnel"]["dest_ip"], "192.0.2.2");
    } else {
      EXPECT_FALSE(j.contains("tunnel"));
    }
  }
  EXPECT_EQ(srcs,
            (std::multiset<std::string>{"ipv4 tunnel", "gre tunnel", "vxlan encapsulation", "wire/pcap", "wire/pcap"}));
}

// GRE carrying PPP (version 0, and PPTP's enhanced GRE with its key, sequence
// and acknowledgement): the inner IP packet is decoded, its fragments are
// reassembled by a second IPReassembler after TunnelDecap (as `shoal ids`
// builds it), and EVE's packet is Suricata's tunnel packet: from the PPP
// header on.
TEST(TunnelDecap, PppInGreIsDecodedAndItsFragmentsReassembled) {
  const uint32_t o1 = 0xc0000201, o2 = 0xc0000202;
  Bytes whole = ip4(kClient, kServer, 17, 1000, 2000, "12345678secret-payload");
  whole[5] = 7;  // the datagram's id
  Bytes l4(whole.begin() + 20, whole.end());
  auto frag = [&](uint32_t off, uint32_t len, bool more) {  // (the split falls inside "secret")
    Bytes p(whole.begin(), whole.begin() + 20);
    uint16_t f = uint16_t((more ? 0x2000 : 0) | off / 8);
    p[6] = uint8_t(f >> 8), p[7] = uint8_t(f);
    p.insert(p.end(), l4.begin() + off, l4.begin() + off + len);
    p[2] = uint8_t(p.size() >> 8), p[3] = uint8_t(p.size());
    return p;
  };
  auto gre_ppp = [&](const Bytes& ip) {  // version 0, a compressed PPP protocol (0x21: IPv4)
    return ether(ip4_raw(o1, o2, 47, concat({0x00, 0x00, 0x88, 0x0b, 0x21}, ip)));
  };
  // PPTP: key (payload length, call id), sequence, acknowledgement; PPP with address and control
  Bytes pptp = concat({0x30, 0x81, 0x88, 0x0b, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 4, 0xff, 0x03, 0x00, 0x21},
                      ip4(kClient, kServer, 17, 1001, 2000, "secret-pptp"));
  std::vector<Bytes> frames = {gre_ppp(frag(0, 16, true)), gre_ppp(frag(16, uint32_t(l4.size()) - 16, false)),
                               ether(ip4_raw(o1, o2, 47, pptp))};
  std::string dir = test::tmpdir(), pcap = dir + "/gre-ppp.pcap", rf = dir + "/gre-ppp.rules",
              eve = dir + "/gre-ppp.json";
  write_pcap(pcap, frames);
  std::ofstream(rf) << "alert udp any any -> any any (content:\"secret\"; sid:1;)\n";
  auto r = test::run(
      fmt::format("FromDump({}, STOP true) -> IPReassembler(FRAGMENTS true) -> tun :: TunnelDecap -> inner :: "
                  "IPReassembler(FRAGMENTS true, INNER true) -> FlowIPManager -> ids :: IDSMatcher(RULES {}, EVE {}, "
                  "EVE_PACKET true, QUIET true) -> Discard; ids[1] -> Discard;",
                  pcap, rf, eve));
  ASSERT_TRUE(r->ok) << r->errors;
  test::finish(*r);
  EXPECT_EQ(r->n("tun.inner"), 3u);
  EXPECT_EQ(r->n("inner.reassembled"), 1u);
  std::vector<nlohmann::json> alerts;
  std::ifstream f(eve);
  for (std::string line; std::getline(f, line);)
    if (auto j = nlohmann::json::parse(line); j["event_type"] == "alert") alerts.push_back(j);
  ASSERT_EQ(alerts.size(), 2u) << "the rebuilt datagram (not its fragments) and the PPTP packet";
  auto unb64 = [](const std::string& t) {
    Bytes out(t.size(), 0);
    int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(t.data()), int(t.size()));
    out.resize(size_t(std::max(n, 0)));
    return out;
  };
  Bytes rebuilt = unb64(alerts[0]["packet"]), pptp_pkt = unb64(alerts[1]["packet"]);
  ASSERT_GE(rebuilt.size(), 1 + whole.size());
  EXPECT_EQ(rebuilt[0], 0x21) << "from the PPP header";
  EXPECT_EQ(Bytes(rebuilt.begin() + 21, rebuilt.begin() + 1 + long(whole.size())), l4) << "the datagram whole";
  ASSERT_GE(pptp_pkt.size(), 4u);
  EXPECT_EQ(Bytes(pptp_pkt.begin(), pptp_pkt.begin() + 4), (Bytes{0xff, 0x03, 0x00, 0x21}));
  EXPECT_EQ(alerts[0]["tunnel"]["src_ip"], "192.0.2.1");
  // a PPTP packet without its key, and GRE version 2, are not decoded
  Bytes nokey = pptp;
  nokey[0] = 0x10;
  Bytes v2 = pptp;
  v2[1] = 0x82;
  uint64_t inner = 0;
  run_tunneled("gre-bad", {ether(ip4_raw(o1, o2, 47, nokey)), ether(ip4_raw(o1, o2, 47, v2))}, "", "", inner);
  EXPECT_EQ(inner, 0u);
}

// Suricata's tunnel packets: an inner packet's VLANs are its outer frame's,
// then an ERSPAN II header's, then its inner frame's; its flow counts what
// the tunnel carried. An ICMP flow's record has its first packet's type and
// code, and once answered the answer's type.
TEST(TunnelDecap, ErspanAndInnerFramesAddVlansAndIcmpFlowsTheirTypes) {
  auto tagged = [](uint16_t vlan, const Bytes& ip) {  // a frame with one 802.1Q tag
    return concat({2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0, uint8_t(vlan >> 8), uint8_t(vlan), 8, 0}, ip);
  };
  const uint32_t o1 = 0xc0000201, o2 = 0xc0000202;
  auto erspan = [&](uint32_t a, uint32_t b, const Bytes& inner_frame) {
    // GRE with a sequence number, ERSPAN type II (version 1, VLAN 23), then the mirrored frame
    Bytes g = {0x10, 0x00, 0x88, 0xbe, 0, 0, 0, 1, 0x10, 23, 0, 0, 0, 0, 0, 0};
    g.insert(g.end(), inner_frame.begin(), inner_frame.end());
    return tagged(10, ip4_raw(a, b, 47, g));
  };
  Bytes request = tagged(7, ip4(kClient, kServer, 1, 0x0800, 0, "ping"));  // echo request (type 8, code 0)
  Bytes reply = tagged(7, ip4(kServer, kClient, 1, 0x0000, 0, "ping"));    // its echo reply
  std::vector<Bytes> frames = {erspan(o1, o2, request), erspan(o1, o2, reply),
                               ether(ip4(kClient + 1, kServer, 1, 0x0d00, 0, "ts"))};  // a timestamp request
  uint64_t inner_packets = 0;
  auto records = run_tunneled("erspan", frames, "alert icmp any any -> any any (content:\"ping\"; sid:1;)\n",
                              ", EVE_TYPES 'alert flow'", inner_packets);
  EXPECT_EQ(inner_packets, 2u);
  std::vector<nlohmann::json> alerts, icmp_flows;
  for (auto& j : records) {
    if (j["event_type"] == "alert") alerts.push_back(j);
    if (j["event_type"] == "flow" && j["proto"] == "ICMP") icmp_flows.push_back(j);
  }
  ASSERT_EQ(alerts.size(), 2u);
  for (auto& j : alerts) EXPECT_EQ(j["vlan"], nlohmann::json({10, 23, 7})) << "outer frame, ERSPAN, inner frame";
  ASSERT_EQ(icmp_flows.size(), 2u);
  for (auto& j : icmp_flows) {
    if (j["src_ip"] == "10.0.0.1") {  // the mirrored echo
      EXPECT_EQ(j["icmp_type"], 8);
      EXPECT_EQ(j["icmp_code"], 0);
      EXPECT_EQ(j["response_icmp_type"], 0) << "an echo request is answered by an echo reply";
      EXPECT_EQ(j["response_icmp_code"], 0);
      EXPECT_EQ(j["vlan"], nlohmann::json({10, 23, 7}));
      // what the tunnel carried: the ERSPAN header and the mirrored frame
      EXPECT_EQ(j["flow"]["bytes_toserver"], 8 + request.size());
      EXPECT_EQ(j["flow"]["bytes_toclient"], 8 + reply.size());
    } else {  // unanswered: no response type
      EXPECT_EQ(j["icmp_type"], 13);
      EXPECT_FALSE(j.contains("response_icmp_type")) << j.dump();
    }
  }
}

TEST(IdsRules, ByteExtractAndByteMathFeedLaterItems) {
  // a length-prefixed record: 2-byte length 5, "hello", then " world"
  std::vector<Bytes> frames = {ether(ip4(kClient, kServer, 17, 1000, 53, std::string("\x00\x05hello world", 13))),
                               ether(ip4(kClient, kServer, 17, 1000, 53, std::string("\x00\x03hello world", 13))),
                               ether(ip4(kClient, kServer, 17, 1000, 53, std::string("\x05\x07", 2)))};
  auto r =
      run_ids("byteextract", frames,
              // the record's length bounds the content (first packet only)
              "alert udp any any -> any any (byte_extract:2,0,len; content:\"hello\"; distance:0; within:len; sid:1;)\n"
              // the cursor moved past the extracted bytes: "hello" starts right there
              "alert udp any any -> any any (byte_extract:2,0,len,relative; content:\"he\"; within:2; "
              "isdataat:len,relative; sid:2;)\n"
              // byte_math: first byte + 2, compared to the second byte (the third packet)
              "alert udp any any -> any any (byte_math:bytes 1, offset 0, oper +, rvalue 2, result x; "
              "byte_test:1,=,x,1; sid:3;)\n"
              // a variable as an offset
              "alert udp any any -> any any (byte_extract:1,1,off; content:\"world\"; offset:off; sid:4;)\n"
              "alert udp any any -> any any (byte_test:1,=,nosuch,1; sid:5;)\n"
              "alert udp any any -> any any (byte_math:bytes 1, offset 0, oper /, rvalue 0, result y; sid:6;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 2u) << r.r->h("ids.problems");  // 5: no such variable; 6: division by zero
  std::multiset<std::pair<uint32_t, int>> got;
  for (auto& j : r.eve) got.insert({j["alert"]["signature_id"].get<uint32_t>(), j["pcap_cnt"].get<int>()});
  // sid 2: 5 bytes follow "he" in the first packet (3 in the second: isdataat:3 holds too);
  // sid 4: offset 5 ("world" at 8) in the first, offset 3 in the second
  EXPECT_EQ(got, (std::multiset<std::pair<uint32_t, int>>{{1, 1}, {2, 1}, {2, 2}, {3, 3}, {4, 1}, {4, 2}}));
}

TEST(IdsRules, HeaderBuffersReadThePacketsHeadersWithTheirOptions) {
  RuleSet set;
  std::string err;
  ASSERT_TRUE(set.load_text(
      // TTL 64 at ipv4.hdr[8]; the TCP data offset and flags at tcp.hdr[12..13]
      "alert ip any any -> any any (ipv4.hdr; content:\"|40|\"; offset:8; depth:1; sid:1;)\n"
      "alert tcp any any -> any any (content:\"GET\"; tcp.hdr; content:\"|50 18|\"; offset:12; depth:2; "
      "sid:2;)\n"
      "alert udp any any -> any any (udp.hdr; content:\"|00 35|\"; offset:2; depth:2; sid:3;)\n"
      "alert ip any any -> any any (ipv6.hdr; content:\"|60|\"; depth:1; sid:4;)\n"
      // relative at a sticky buffer's start; byte_math's result read in another buffer
      "alert tcp any any -> any any (ipv4.hdr; byte_math:bytes 1, offset 9, oper +, rvalue 74, "
      "result v; tcp.hdr; byte_test:1, =, v, 13, relative; sid:5;)\n"
      "alert icmpv4 any any -> any any (icmpv4.hdr; bsize:8; sid:6;)\n"
      "alert icmpv6 any any -> any any (sid:7;)\n",
      "h", Vars(), true, err))
      << err;
  for (EngineKind kind : {EngineKind::Builtin, EngineKind::Hyperscan}) {
    if (kind == EngineKind::Hyperscan && !have_hyperscan()) continue;
    Engine eng;
    ASSERT_TRUE(eng.build(set.rules(), kind, err)) << err;
    auto sids = [&](const Bytes& ip) {
      PacketInfo p;
      EXPECT_TRUE(parse_packet(ip.data(), uint32_t(ip.size()), p));
      std::vector<uint32_t> hits, out;
      eng.match(p, hits);
      for (uint32_t r : hits) out.push_back(eng.rules()[r].sid);
      std::sort(out.begin(), out.end());
      return out;
    };
    // TCP flags 0x18 (PSH ACK); proto 6 + 74 = 80 = 0x50
    EXPECT_EQ(sids(ip4(kClient, kServer, 6, 1000, 80, "GET /")), (std::vector<uint32_t>{1, 2}));
    Bytes syn = ip4(kClient, kServer, 6, 1000, 80, "GET /", 0, 0, 0x50);
    EXPECT_EQ(sids(syn), (std::vector<uint32_t>{1, 5}));
    syn[8] = 63;  // TTL
    EXPECT_EQ(sids(syn), (std::vector<uint32_t>{5}));
    EXPECT_EQ(sids(ip4(kClient, kServer, 17, 1000, 53, "q")), (std::vector<uint32_t>{1, 3}));
    Bytes echo = ip4(kClient, kServer, 1, 0, 0, "ping");
    echo[20] = 8;
    EXPECT_EQ(sids(echo), (std::vector<uint32_t>{1, 6}));
    echo[20] = 13;  // timestamp: a 20-byte header, and this one is truncated at 12
    EXPECT_EQ(sids(echo), (std::vector<uint32_t>{1}));
    // an IPv6 ICMPv6 packet: ipv6.hdr, not ipv4.hdr; icmpv6 rules only
    Bytes v6(48, 0);
    v6[0] = 0x60, v6[5] = 8, v6[6] = 58, v6[7] = 64, v6[40] = 128;
    EXPECT_EQ(sids(v6), (std::vector<uint32_t>{4, 7}));
  }
}

TEST(IdsDecodeEvents, EachEventFromTheBytesThatRaiseIt) {
  auto events = [](const Bytes& ip) { return decode_events(ip.data(), uint32_t(ip.size())); };
  auto has = [&](const Bytes& ip, DecodeEvent e) { return (events(ip) & event_bit(e)) != 0; };
  Bytes ok = ip4(kClient, kServer, 6, 1, 80, "data");
  EXPECT_EQ(events(ok), 0u);
  EXPECT_EQ(events(ip4(kClient, kServer, 17, 1, 53, "q")), 0u);
  // IPv4: lengths
  Bytes cut = ok;
  cut.resize(cut.size() - 2);
  EXPECT_TRUE(has(cut, kIpv4TruncPkt));
  Bytes hl = ok;
  hl[0] = 0x44;
  EXPECT_TRUE(has(hl, kIpv4HlenTooSmall));
  // IPv4 options: an option of length 1; a record route twice; one Suricata does not know
  auto with_opts = [&](Bytes opts) {
    Bytes p = ok;
    p.insert(p.begin() + 20, opts.begin(), opts.end());
    p[0] = uint8_t(0x40 | (20 + opts.size()) / 4);
    uint32_t tot = uint32_t(p.size());
    p[2] = uint8_t(tot >> 8), p[3] = uint8_t(tot);
    return p;
  };
  EXPECT_TRUE(has(with_opts({7, 1, 0, 0, 0, 0, 0, 0}), kIpv4OptInvalidLen));
  EXPECT_TRUE(has(with_opts({7, 7, 4, 0, 0, 0, 0, 7, 7, 4, 0, 0, 0, 0, 0, 0}), kIpv4OptDuplicate));
  EXPECT_TRUE(has(with_opts({99, 2, 1, 1, 1, 1, 1, 1}), kIpv4OptInvalid));
  EXPECT_TRUE(has(with_opts({1, 1, 1, 0}), kIpv4OptPadRequired));
  EXPECT_EQ(events(with_opts({7, 7, 4, 0, 0, 0, 0, 0})), 0u) << "a well-formed record route";
  // TCP: the data offset, then the options
  Bytes off = ok;
  off[32] = 0x40;  // 16 bytes: less than the fixed header
  EXPECT_TRUE(has(off, kTcpInvalidOptlen));
  off[32] = 0xf0;  // 60 bytes: more than the segment has
  EXPECT_TRUE(has(off, kTcpHlenTooSmall));
  auto tcp_opts = [&](Bytes opts) {
    Bytes p = ok;
    p.insert(p.begin() + 40, opts.begin(), opts.end());
    p[32] = uint8_t((20 + opts.size()) / 4 << 4);
    uint32_t tot = uint32_t(p.size());
    p[2] = uint8_t(tot >> 8), p[3] = uint8_t(tot);
    return p;
  };
  EXPECT_TRUE(has(tcp_opts({2, 3, 5, 0}), kTcpOptInvalidLen)) << "MSS is 4 bytes";
  EXPECT_TRUE(has(tcp_opts({3, 3, 7, 3, 3, 7, 0, 0}), kTcpOptDuplicate)) << "window scale twice";
  EXPECT_EQ(events(tcp_opts({2, 4, 5, 0xb4, 1, 3, 3, 7})), 0u) << "MSS, NOP, window scale";
  // UDP: its length field against the datagram
  Bytes u = ip4(kClient, kServer, 17, 1, 53, "abcd");
  u[25] = 4;
  EXPECT_TRUE(has(u, kUdpLenInvalid));
  u[25] = 40;
  EXPECT_TRUE(has(u, kUdpPktTooSmall));
  u[25] = 9;
  EXPECT_TRUE(has(u, kUdpHlenInvalid));
  // IPv6: fragment headers (atomic, twice, a length not a multiple of 8, past 65,535 bytes), destination options
  auto v6 = [](std::vector<std::pair<uint8_t, Bytes>> ext, uint8_t last, size_t data) {
    Bytes p(40, 0);
    p[0] = 0x60, p[7] = 64;
    p[6] = ext.empty() ? last : ext[0].first;
    for (size_t i = 0; i < ext.size(); ++i) {
      Bytes h = ext[i].second;
      h[0] = i + 1 < ext.size() ? ext[i + 1].first : last;
      p.insert(p.end(), h.begin(), h.end());
    }
    p.resize(p.size() + data, 'x');
    uint32_t plen = uint32_t(p.size() - 40);
    p[4] = uint8_t(plen >> 8), p[5] = uint8_t(plen);
    return p;
  };
  Bytes atomic = {0, 0, 0, 0, 0, 0, 0, 1};
  Bytes first = {0, 0, 0, 1, 0, 0, 0, 2};  // offset 0, more fragments
  EXPECT_TRUE(has(v6({{44, atomic}}, 59, 0), kIpv6ExthdrUselessFh));
  EXPECT_TRUE(has(v6({{44, atomic}, {44, atomic}}, 59, 0), kIpv6ExthdrDuplFh));
  EXPECT_FALSE(has(v6({{44, first}, {44, atomic}}, 59, 16), kIpv6ExthdrDuplFh)) << "a fragment's rest is read later";
  EXPECT_TRUE(has(v6({{44, first}}, 17, 13), kIpv6FragInvalidLength));
  EXPECT_FALSE(has(v6({{44, first}}, 17, 16), kIpv6FragInvalidLength));
  Bytes far = {0, 0, 0xff, 0xf9, 0, 0, 0, 3};  // offset 65528, more fragments
  EXPECT_TRUE(has(v6({{44, far}}, 17, 16), kIpv6FragPktTooLarge));
  Bytes dst = {0, 0, 0x3e, 1, 0xaa, 0, 0, 0};  // option 0x3e (unknown), then PadN
  EXPECT_TRUE(has(v6({{60, dst}}, 59, 0), kIpv6DstoptsUnknownOpt));
  Bytes dst_cut = {0, 1, 0, 0, 0, 0, 0, 0};  // says 16 bytes, has 8
  EXPECT_TRUE(has(v6({{60, dst_cut}}, 59, 0), kIpv6TruncExthdr));
  // names, as the keyword takes them
  DecodeEvent e;
  ASSERT_TRUE(find_decode_event("ipv6.frag_overlap", e));
  EXPECT_EQ(e, kIpv6FragOverlap);
  ASSERT_TRUE(find_decode_event("decoder.tcp.opt_duplicate", e));
  EXPECT_EQ(e, kTcpOptDuplicate);
  EXPECT_FALSE(find_decode_event("ipv4.no_such_event", e));
  Rule r;
  std::string err;
  EXPECT_FALSE(parse_rule("alert pkthdr any any -> any any (decode-event:ipv4.nope; sid:1;)", Vars(), r, err));
  EXPECT_NE(err.find("decode-event 'ipv4.nope'"), std::string::npos) << err;
}

// EVE_ANOMALY_DECODE (Suricata's anomaly types.decode): each decoder event
// of a packet as an anomaly record, "decode" for an IP packet, "packet" for
// one whose IP header is not whole; nothing without the option.
TEST(IdsDecodeEvents, DecoderEventsBecomeAnomalyRecords) {
  Bytes opts = ip4(kClient, kServer, 17, 1000, 53, "x");
  opts.insert(opts.begin() + 20, 12, 0x01);  // 12 bytes of NOPs: not a multiple of 8 (Suricata's pad_required)
  opts[0] = 0x48;
  opts[3] = uint8_t(opts.size());
  Bytes cut = ip4(kClient, kServer, 17, 1000, 53, "y");
  cut[0] = 0x44;  // a header length of 16 bytes
  std::vector<Bytes> frames = {ether(opts), ether(cut), ether(ip4(kClient, kServer, 17, 1000, 53, "z"))};
  std::string rules = "alert udp any any -> any any (content:\"zz\"; sid:1;)\n";
  auto on = run_ids("decode-anomaly", frames, rules, false, false, ", EVE_ANOMALY_DECODE true");
  ASSERT_TRUE(on.r->ok);
  std::vector<std::tuple<int, std::string, std::string>> got;  // pcap_cnt, type, event
  for (const auto& j : on.other["anomaly"]) {
    got.emplace_back(j["pcap_cnt"], j["anomaly"]["type"], j["anomaly"]["event"]);
    if (j["pcap_cnt"] == 1) {
      EXPECT_EQ(j["src_ip"], "10.0.0.1") << j;
      EXPECT_EQ(j["dest_port"], 53);
    } else {
      EXPECT_FALSE(j.contains("src_ip")) << "no whole IP header: no addresses";
    }
  }
  using T = std::tuple<int, std::string, std::string>;
  EXPECT_EQ(got, (std::vector<T>{{1, "decode", "decoder.ipv4.opt_pad_required"},
                                 {2, "packet", "decoder.ipv4.hlen_too_small"}}));
  auto off = run_ids("decode-anomaly-off", frames, rules);
  ASSERT_TRUE(off.r->ok);
  EXPECT_TRUE(off.other["anomaly"].empty());
}

// Suricata's IPv4 option walk: an option that fails its own check raises
// its event and the walk goes on (a second bad option raises it again); one
// that overruns the header ends it. Each occurrence is an anomaly record and
// a count; the packet counts as decoder.invalid. With pcap-file, every
// record names the capture; with ethernet, anomaly records carry the MACs.
TEST(IdsDecodeEvents, EachOccurrenceOfAnEventIsCounted) {
  Bytes p = ip4(kClient, kServer, 17, 1000, 53, "x");
  const uint8_t opts[12] = {0x82, 0x02, 0xf1, 0x35, 0, 0, 0xde, 0xad, 0xbe, 0xef, 0xaa, 0};  // security, length 2
  p.insert(p.begin() + 20, opts, opts + 12);
  p[0] = 0x48;
  p[3] = uint8_t(p.size());
  uint8_t counts[kDecodeEventCount] = {};
  uint64_t ev = decode_events(p.data(), uint32_t(p.size()), counts);
  EXPECT_EQ(ev, event_bit(kIpv4OptInvalidLen) | event_bit(kIpv4OptPadRequired));
  EXPECT_EQ(counts[kIpv4OptInvalidLen], 2) << "the security option's length, then the overrunning one";
  EXPECT_EQ(counts[kIpv4OptPadRequired], 1);
  // a valid security option, then one with a bad length: a duplicate, not validated
  Bytes q = ip4(kClient, kServer, 17, 1000, 53, "x");
  Bytes dup(16, 0);
  dup[0] = 0x82, dup[1] = 11, dup[11] = 0x82, dup[12] = 5;
  q.insert(q.begin() + 20, dup.begin(), dup.end());
  q[0] = 0x49, q[3] = uint8_t(q.size());
  EXPECT_EQ(decode_events(q.data(), uint32_t(q.size())), event_bit(kIpv4OptDuplicate));
  std::string dir = test::tmpdir(), capture = dir + "/opts.pcap";
  auto r = run_ids("decode-counts", {ether(p)}, "alert udp any any -> any any (content:\"zz\"; sid:1;)\n", false, false,
                   fmt::format(", EVE_ANOMALY_DECODE true, EVE_ETHERNET true, EVE_PCAP_FILENAME \"{}\"", capture));
  ASSERT_TRUE(r.r->ok);
  int invalid_len = 0;
  for (const auto& j : r.other["anomaly"]) {
    invalid_len += j["anomaly"]["event"] == "decoder.ipv4.opt_invalid_len";
    EXPECT_EQ(j["ether"]["src_mac"], "02:00:00:00:00:01") << j;
    EXPECT_EQ(j["pcap_filename"], capture);
  }
  EXPECT_EQ(invalid_len, 2);
  ASSERT_FALSE(r.other["stats"].empty());
  const auto& st = r.other["stats"].back();
  EXPECT_EQ(st["pcap_filename"], capture);
  EXPECT_EQ(st["stats"]["decoder"]["invalid"], 1);
  EXPECT_EQ(st["stats"]["decoder"]["event"]["ipv4"]["opt_invalid_len"], 2);
  for (const auto& f : r.flows) EXPECT_EQ(f["pcap_filename"], capture);
}

TEST(IdsDecodeEvents, FragmentsAreInspectedBeforeTheirDatagramAndOverlapsFlagged) {
  // a UDP datagram in two IPv4 fragments whose data overlap (bytes 8-15 twice)
  std::string data = "12345678secret-payload!!";  // the UDP payload: 8 + 24 bytes with its header
  Bytes whole = ip4(kClient, kServer, 17, 1000, 2000, data);
  Bytes l4(whole.begin() + 20, whole.end());
  auto frag = [&](uint32_t off, uint32_t len, bool more) {
    Bytes p(whole.begin(), whole.begin() + 20);
    p[4] = 0, p[5] = 7;  // id 7
    uint16_t f = uint16_t((more ? 0x2000 : 0) | off / 8);
    p[6] = uint8_t(f >> 8), p[7] = uint8_t(f);
    p.insert(p.end(), l4.begin() + off, l4.begin() + off + len);
    uint32_t tot = uint32_t(p.size());
    p[2] = uint8_t(tot >> 8), p[3] = uint8_t(tot);
    return ether(p);
  };
  std::vector<Bytes> frames = {frag(0, 16, true), frag(8, uint32_t(l4.size()) - 8, false)};
  std::string dir = test::tmpdir(), pcap = dir + "/frags.pcap", rf = dir + "/frags.rules", eve = dir + "/frags.json";
  write_pcap(pcap, frames);
  std::ofstream(rf) << "alert ip any any -> any any (decode-event:ipv4.frag_overlap; sid:1;)\n"
                       "alert udp any any -> any any (content:\"secret\"; sid:2;)\n"
                       "alert ip any any -> any any (fragbits:M; sid:3;)\n";
  auto r = test::run(fmt::format(
      "FromDump({}, STOP true) -> IPReassembler(FRAGMENTS true) -> FlowIPManager -> ids :: IDSMatcher(RULES {}, EVE "
      "{}, QUIET true) -> c :: Counter -> Discard;",
      pcap, rf, eve));
  ASSERT_TRUE(r->ok) << r->errors;
  test::finish(*r);
  EXPECT_EQ(r->n("c.count"), 3u) << "both fragments, then the datagram";
  std::vector<std::pair<int, uint64_t>> alerts;  // (sid, pcap_cnt)
  nlohmann::json stats;
  std::ifstream f(eve);
  for (std::string line; std::getline(f, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event_type"] == "alert") alerts.push_back({j["alert"]["signature_id"], j.value("pcap_cnt", uint64_t(0))});
    if (j["event_type"] == "stats") stats = j["stats"];
  }
  std::sort(alerts.begin(), alerts.end());
  // the overlap on the second fragment; the content in the datagram (a
  // packet of no capture's: no pcap_cnt); MF on the first
  EXPECT_EQ(alerts, (std::vector<std::pair<int, uint64_t>>{{1, 2}, {2, 0}, {3, 1}}));
  EXPECT_EQ(stats["decoder"]["event"]["ipv4"]["frag_overlap"], 1) << stats.dump();
  EXPECT_EQ(stats["decoder"]["pkts"], 3);
  EXPECT_EQ(stats["flow"]["udp"], 1) << "one flow: the datagram's, not the fragments'";
}

TEST(IdsSip, ParserReadsLinesHeadersAndBodies) {
  auto u8 = [](const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); };
  std::string reg =
      "REGISTER sip:example.com SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.0.1\r\nf: <sip:alice@example.com>\r\n"
      "To: <sip:alice@example.com>\r\nTo: <sip:bob@example.com>\r\nSubject: a long\r\n  folded line\r\n"
      "Content-Length: 4\r\n\r\nbodyEXTRA";
  flow::SipMessage m;
  ASSERT_EQ(flow::sip_parse(u8(reg), uint32_t(reg.size()), m, false), int64_t(reg.size() - 5));
  EXPECT_TRUE(m.request);
  EXPECT_EQ(m.method, "REGISTER");
  EXPECT_EQ(m.uri, "sip:example.com");
  EXPECT_EQ(m.first_line, "REGISTER sip:example.com SIP/2.0");
  EXPECT_EQ(m.values("from"), std::vector<std::string>{"<sip:alice@example.com>"}) << "f is From's compact form";
  EXPECT_EQ(m.values("to").size(), 2u) << "a repeated header keeps each value";
  EXPECT_EQ(m.values("subject"), std::vector<std::string>{"a long folded line"});
  EXPECT_EQ(m.body, "body");
  // over TCP, a message is whole once its body is: none before
  for (size_t cut : {size_t(10), reg.size() - 8}) {
    flow::SipMessage part;
    EXPECT_EQ(flow::sip_parse(u8(reg), uint32_t(cut), part, false), 0) << cut;
  }
  flow::SipMessage st;
  std::string ok = "SIP/2.0 401 Unauthorized\r\nContent-Length: 0\r\n\r\n";
  ASSERT_GT(flow::sip_parse(u8(ok), uint32_t(ok.size()), st, true), 0);
  EXPECT_FALSE(st.request);
  EXPECT_EQ(st.code, "401");
  EXPECT_EQ(st.reason, "Unauthorized");
  // the probe: SIP's request lines and status line, not HTTP's (OPTIONS is a method of both)
  auto probe = [&](const std::string& s) { return flow::sip_probe(u8(s), uint32_t(s.size())); };
  EXPECT_EQ(probe("OPTIONS sip:x SIP/2.0\r\n"), 1);
  EXPECT_EQ(probe("OPTIONS * HTTP/1.1\r\n"), 0);
  EXPECT_EQ(probe("SIP/2.0 200 OK"), 1);
  EXPECT_EQ(probe("INV"), -1);
  EXPECT_EQ(probe("GET / HTTP/1.1"), 0);
  // hostile: a Content-Length past the bound, a line that is not SIP
  std::string huge = "INVITE sip:x SIP/2.0\r\nContent-Length: 99999999999\r\n\r\n";
  EXPECT_EQ(flow::sip_parse(u8(huge), uint32_t(huge.size()), m, false), -1);
  std::string bad = "HELLO there\r\n\r\n";
  EXPECT_EQ(flow::sip_parse(u8(bad), uint32_t(bad.size()), m, true), -1);
}

TEST(IdsSip, RulesMatchMessagesOverUdpAndTcpAndAreLogged) {
  std::vector<Bytes> frames;
  auto udp = [&](bool to_server, const std::string& msg) {
    frames.push_back(to_server ? ether(ip4(kClient, kServer, 17, 5062, 5060, msg))
                               : ether(ip4(kServer, kClient, 17, 5060, 5062, msg)));
  };
  udp(true, "REGISTER sip:example.com SIP/2.0\r\nTo: <sip:alice@example.com>\r\nContent-Length: 0\r\n\r\n");
  udp(false, "SIP/2.0 401 Unauthorized\r\nTo: <sip:alice@example.com>\r\nContent-Length: 0\r\n\r\n");
  // over TCP, on a port that is not SIP's, the request split across segments
  Conv c(40000, 8080);
  c.send(0, "INVITE sip:bob@example.com SIP/2.0\r\nUser-Agent: softphone\r\nCont");
  c.send(0, "ent-Length: 3\r\n\r\nv=0");
  c.send(1, "SIP/2.0 180 Ringing\r\nContent-Length: 0\r\n\r\n");
  frames.insert(frames.end(), c.out.begin(), c.out.end());
  std::string rules =
      "alert sip any any -> any any (flow:to_server; sip.method; content:\"REGISTER\"; sid:1;)\n"
      "alert sip any any -> any any (flow:to_client; sip.to; content:\"alice\"; sid:2;)\n"
      "alert sip any any -> any any (sip.stat_code; content:\"180\"; sid:3;)\n"
      "alert sip any any -> any any (sip.user_agent; content:\"softphone\"; sip.uri; content:\"bob\"; sid:4;)\n"
      "alert sip any any -> any any (sip.method; content:\"401\"; sid:5;)\n"  // a response has no method
      "alert udp any any -> any any (app-layer-protocol:sip; content:\"401\"; sid:6;)\n";
  auto r = run_ids("sip", frames, rules);
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2, 3, 4, 6}));
  for (const auto& a : r.eve) {
    if (a["alert"]["signature_id"] != 6) {
      EXPECT_EQ(a["app_proto"], "sip") << a.dump();
    }
  }
  ASSERT_EQ(r.other["sip"].size(), 4u) << "a record per message";
  std::set<std::string> lines;
  for (const auto& s : r.other["sip"])
    lines.insert(s["sip"].contains("request_line") ? s["sip"]["request_line"] : s["sip"]["response_line"]);
  EXPECT_EQ(lines, (std::set<std::string>{"REGISTER sip:example.com SIP/2.0", "SIP/2.0 401 Unauthorized",
                                          "INVITE sip:bob@example.com SIP/2.0", "SIP/2.0 180 Ringing"}));
}

TEST(IdsHttp, EachHeaderIsAValueOfTheHeaderMultiBuffers) {
  Conv c;
  c.send(0, "GET /a HTTP/1.1\r\nHost: x\r\nUser-Agent: probe\r\nX-Key: 0123\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nServer: s\r\nContent-Length: 0\r\n\r\n");
  std::string rules =
      "alert http any any -> any any (http.request_header; content:\"X-Key|3a 20|\"; startswith; "
      "pcre:\"/^\\d{4}$/R\"; sid:1;)\n"
      "alert http any any -> any any (http.request_header; content:\"Server\"; sid:2;)\n"  // a response header
      "alert http any any -> any any (http.response_header; bsize:9; content:\"Server: s\"; sid:3;)\n"
      "alert http any any -> any any (http_response_line; content:\"200 OK\"; sid:4;)\n"
      "alert http any any -> any any (flow:to_server; http.header_names; content:\"|0d 0a|User-Agent|0d 0a|X-Key|0d "
      "0a 0d 0a|\"; sid:5;)\n";
  auto r = run_ids("headers", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 3, 4, 5}));
}

namespace {
// An SSH binary packet (RFC 4253 6) around payload, padded to 8 bytes.
std::string ssh_packet(const std::string& payload) {
  uint8_t pad = uint8_t(8 - (5 + payload.size()) % 8);
  if (pad < 4) pad = uint8_t(pad + 8);
  uint32_t len = uint32_t(1 + payload.size() + pad);
  std::string p = {char(len >> 24), char(len >> 16), char(len >> 8), char(len), char(pad)};
  return p + payload + std::string(pad, '\0');
}
std::string ssh_kexinit(const std::vector<std::string>& lists) {
  std::string p = "\x14" + std::string(16, 'c');  // KEXINIT, cookie
  for (const std::string& l : lists) {
    uint32_t n = uint32_t(l.size());
    p += std::string{char(n >> 24), char(n >> 16), char(n >> 8), char(n)} + l;
  }
  return ssh_packet(p + std::string(5, '\0'));  // first_kex_packet_follows, reserved
}
std::string md5_hex(const std::string& s) {  // the oracle: OpenSSL directly
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), out, &n, EVP_md5(), nullptr);
  return fmt::format("{:02x}", fmt::join(out, out + n, ""));
}
}  // namespace

TEST(IdsSsh, BannersAndHasshFingerprintsAreMatchedOncePerSideAndLogged) {
  std::vector<std::string> client = {"curve25519-sha256", "ssh-ed25519", "aes128-ctr", "aes256-ctr", "hmac-sha2-256",
                                     "hmac-sha1",         "none",        "zlib",       "",           ""};
  std::vector<std::string> server = {"curve25519-sha256,ext-info-s",
                                     "ssh-ed25519",
                                     "aes256-gcm",
                                     "chacha20",
                                     "umac-64",
                                     "umac-128",
                                     "none",
                                     "none,zlib@openssh.com",
                                     "",
                                     ""};
  std::string hassh = md5_hex("curve25519-sha256;aes128-ctr;hmac-sha2-256;none");
  std::string hassh_server = md5_hex("curve25519-sha256,ext-info-s;chacha20;umac-128;none,zlib@openssh.com");
  Conv c(40000, 2222);  // not SSH's port: detected from the identification line
  c.send(1, "SSH-2.0-OpenSSH_9.6 Debian\r\n");
  c.send(0, "SSH-2.0-OpenSSH_for_Windows_8.1\r\n");
  std::string ck = ssh_kexinit(client);
  c.send(0, ck.substr(0, 20));  // a KEXINIT across segments
  c.send(0, ck.substr(20) + ssh_packet("\x15"));
  c.send(1, ssh_kexinit(server) + ssh_packet("\x15"));
  c.send(0, std::string(48, '\x7f'));  // encrypted: not read
  std::string rules = fmt::format(
      "alert ssh any any -> any any (ssh.software; content:\"OpenSSH\"; sid:1;)\n"
      "alert ssh any any -> any any (flow:to_server; ssh.proto; content:\"2.0\"; sid:2;)\n"
      "alert ssh any any -> any any (ssh.hassh; content:\"{}\"; sid:3;)\n"
      "alert ssh any any -> any any (ssh.hassh.server; content:\"{}\"; sid:4;)\n"
      "alert ssh any any -> any any (ssh.hassh.server.string; content:\"umac-128\"; sid:5;)\n"
      "alert ssh any any -> any any (ssh.hassh.string; content:\"umac-128\"; sid:6;)\n",  // the server's MAC
      hassh, hassh_server);
  auto r = run_ids("ssh", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 1, 2, 3, 4, 5})) << "software: once for each side";
  ASSERT_EQ(r.other["ssh"].size(), 1u);
  const auto& s = r.other["ssh"][0]["ssh"];
  EXPECT_EQ(s["client"]["software_version"], "OpenSSH_for_Windows_8.1");
  EXPECT_EQ(s["server"]["software_version"], "OpenSSH_9.6");
  EXPECT_EQ(s["server"]["proto_version"], "2.0");
  EXPECT_EQ(s["client"]["hassh"]["hash"], hassh);
  EXPECT_EQ(s["server"]["hassh"]["hash"], hassh_server);
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_EQ(r.flows[0]["app_proto"], "ssh");
  EXPECT_EQ(r.flows[0]["flow"]["state"], "established");

  // encryption-handling bypass: once both sides sent NEWKEYS the flow is
  // bypassed, its encrypted packets neither inspected nor parsed
  std::string enc = rules + "alert tcp any any -> any any (content:\"|7f 7f 7f 7f|\"; sid:7;)\n";
  auto kept = run_ids("ssh-track", c.out, enc);
  ASSERT_TRUE(kept.r->ok);
  std::vector<uint32_t> k = kept.sids();
  EXPECT_EQ(std::count(k.begin(), k.end(), 7u), 1) << "track-only: packet rules go on";
  auto bypass = run_ids("ssh-bypass", c.out, enc, false, false, ", SSH_ENCRYPTION bypass");
  ASSERT_TRUE(bypass.r->ok);
  std::vector<uint32_t> b = bypass.sids();
  std::sort(b.begin(), b.end());
  EXPECT_EQ(b, (std::vector<uint32_t>{1, 1, 2, 3, 4, 5}));
  EXPECT_EQ(bypass.r->n("ids.flow_bypassed"), 1u) << "the encrypted segment";
  ASSERT_EQ(bypass.flows.size(), 1u);
  EXPECT_EQ(bypass.flows[0]["flow"]["state"], "bypassed");
  EXPECT_EQ(bypass.other["ssh"].size(), 1u);
}

// An alert held for the server's side's next packet (none comes: the flow's
// end logs it) shows the connection as it is then, the client's banner
// parsed since (Suricata's alert reads the transaction when it logs).
TEST(IdsSsh, AHeldAlertShowsBothBannersParsedSince) {
  Conv c(40000, 22);
  c.send(1, "SSH-1.99-Cisco_server-1.24\r\n");
  c.send(0, "SSH-2.0-Cisco_client-1.25\r\n");  // (acknowledges the server's banner)
  auto r = run_ids("ssh-held", c.out,
                   "alert ssh any any -> any any (flow:to_client; ssh.proto; content:\"1.99\"; sid:1;)\n"
                   "alert ssh any any -> any any (flow:to_server; ssh.software; content:\"Cisco_client\"; sid:2;)\n",
                   false, false, ", STREAM_INSPECT acked");
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got, (std::vector<uint32_t>{1, 2}));
  for (const auto& a : r.eve) {
    EXPECT_EQ(a["ssh"]["server"]["proto_version"], "1.99") << a.dump();
    EXPECT_EQ(a["ssh"]["client"]["software_version"], "Cisco_client-1.25") << a.dump();
  }
}

// Suricata's version 2 dns records (SURICATA_EVE_DNS_VERSION=2): a query
// record per question, an answer record per response, both written the
// flow's way; and DNS looked for on the ports DNS_PORTS names.
TEST(IdsDns, Version2RecordsAndDetectionPorts) {
  std::string q = dns_msg(0x61, false, "a.example", 1);
  q[3] = char(q[3] | 0x40);  // the Z bit
  std::vector<Bytes> f = {ether(ip4(kClient, kServer, 17, 40001, 5353, q)),
                          ether(ip4(kServer, kClient, 17, 5353, 40001, dns_msg(0x61, true, "a.example", 1)))};
  std::string rules = "alert dns any any -> any any (dns.query; content:\"a.example\"; sid:1;)\n";
  auto v3 = run_ids("dns53", f, rules);
  ASSERT_TRUE(v3.r->ok);
  EXPECT_TRUE(v3.eve.empty()) << "port 5353 is not DNS's by default";
  EXPECT_TRUE(v3.other["dns"].empty());
  auto v2 = run_ids("dns5353", f, rules, false, false, ", EVE_DNS_VERSION 2, DNS_PORTS \"53 5353\"");
  ASSERT_TRUE(v2.r->ok);
  EXPECT_EQ(v2.sids(), (std::vector<uint32_t>{1}));
  ASSERT_EQ(v2.other["dns"].size(), 2u);
  const auto& query = v2.other["dns"][0];
  EXPECT_EQ(query["dns"]["type"], "query");
  EXPECT_EQ(query["dns"]["rrname"], "a.example");
  EXPECT_EQ(query["dns"]["rrtype"], "A");
  EXPECT_EQ(query["dns"]["id"], 0x61);
  EXPECT_EQ(query["dns"]["z"], true);
  const auto& answer = v2.other["dns"][1];
  EXPECT_EQ(answer["dns"]["type"], "answer");
  EXPECT_EQ(answer["dns"]["version"], 2);
  EXPECT_EQ(answer["dns"]["rrname"], "a.example");
  EXPECT_EQ(answer["dns"]["qr"], true);
  EXPECT_EQ(answer["src_ip"], "10.0.0.1") << "the flow's way";
  EXPECT_FALSE(test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, EVE_DNS_VERSION 4) -> Discard;")->ok);
  EXPECT_FALSE(test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, DNS_PORTS \"53 x\") -> Discard;")->ok);
}

// Suricata's detect.guess-applayer-tx: a stream rule's alert is given the
// first DNS transaction of its packet's direction not inspected yet, when it
// is the only one live that way, at most STREAM_TX_LOG_LIMIT times each.
TEST(IdsDns, GuessedTransactionsForStreamAlerts) {
  auto tcp = [](const std::string& m) { return std::string{char(m.size() >> 8), char(m.size() & 0xff)} + m; };
  Conv c(40000, 53);
  c.send(0, tcp(dns_msg(1, false, "first.example", 1)));
  c.send(1, tcp(dns_msg(1, true, "first.example", 1)));    // (acknowledges the query: its transaction, 0)
  c.send(0, tcp(dns_msg(2, false, "second.example", 1)));  // (the response's: 1) the query's alerts come here
  c.send(1, tcp(dns_msg(2, true, "second.example", 1)));
  c.fin(0);
  c.fin(1);
  std::string rules =
      "alert tcp any any -> any 53 (content:\"|05|first\"; sid:1;)\n"
      "alert tcp any any -> any 53 (content:\"|07|example\"; sid:2;)\n";
  auto off = run_ids("dns-noguess", c.out, rules, false, false, ", STREAM_INSPECT acked");
  ASSERT_TRUE(off.r->ok);
  ASSERT_FALSE(off.eve.empty());
  for (const auto& a : off.eve) EXPECT_FALSE(a.contains("tx_id")) << "no guess by default";
  auto on = run_ids("dns-guess", c.out, rules, false, false,
                    ", STREAM_INSPECT acked, GUESS_APPLAYER_TX true, STREAM_TX_LOG_LIMIT 1");
  ASSERT_TRUE(on.r->ok);
  std::vector<const nlohmann::json*> first;  // the alerts on the first query's bytes
  for (const auto& a : on.eve)
    if (a["direction"] == "to_server" && a.contains("tx_id") && a["tx_id"] == 0) first.push_back(&a);
  ASSERT_EQ(first.size(), 1u) << "one of the two alerts: the limit is 1";
  EXPECT_EQ((*first[0])["tx_guessed"], true);
  EXPECT_EQ((*first[0])["dns"]["queries"][0]["rrname"], "first.example");
  ASSERT_EQ(on.flows.size(), 1u);
  EXPECT_EQ(on.flows[0]["flow"]["tx_cnt"], 4) << "each DNS message is a transaction";
  EXPECT_FALSE(
      test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, STREAM_TX_LOG_LIMIT 0) -> Discard;")->ok);
}

TEST(IdsDns, AppLayerEventsAlertAndBecomeAnomalyRecords) {
  std::string q = dns_msg(0x51, false, "odd.example", 1);
  q[2] = char(q[2] | 0x48);  // opcode 9
  q[3] = char(q[3] | 0x40);  // the Z bit
  std::string resp = dns_msg(0x51, true, "odd.example", 1);
  resp[2] = char(resp[2] & 0x7f);  // a "response" without QR: not a response
  std::vector<Bytes> f = {ether(ip4(kClient, kServer, 17, 40001, 53, q)),
                          ether(ip4(kServer, kClient, 17, 53, 40001, resp))};
  auto r = run_ids("dnsev", f,
                   "alert dns any any -> any any (app-layer-event:dns.z_flag_set; sid:1;)\n"
                   "alert dns any any -> any any (app-layer-event:dns.invalid_opcode; app-layer-event:dns.z_flag_set; "
                   "sid:2;)\n"
                   "alert dns any any -> any any (flow:to_client; app-layer-event:dns.not_a_response; sid:3;)\n"
                   "alert dns any any -> any any (app-layer-event:dns.not_a_request; sid:4;)\n"
                   "alert dns any any -> any any (app-layer-event:dns.nonsense; sid:5;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 1u) << "sid 5: not an event";
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2, 3}));
  std::multiset<std::string> anomalies;
  for (const auto& a : r.other["anomaly"]) {
    EXPECT_EQ(a["anomaly"]["app_proto"], "dns");
    EXPECT_EQ(a["anomaly"]["type"], "applayer");
    anomalies.insert(a["anomaly"]["event"].get<std::string>());
  }
  EXPECT_EQ(anomalies, (std::multiset<std::string>{"invalid_opcode", "z_flag_set", "not_a_response"}));
}

TEST(IdsFtp, CommandsAndRepliesAreTransactionsInspectedEachWay) {
  Conv c(40000, 21);
  c.send(1, "220 ready\r\n");
  c.send(0, "USER anonymous\r\n");
  c.send(1, "331 Please specify the password.\r\n");
  c.send(0, "PORT 10,0,0,1,234,10\r\n");
  c.send(1, "200 PORT command successful.\r\n");
  c.send(0, "EPSV\r\n");
  c.send(1, "229 Entering Extended Passive Mode (|||58612|)\r\n");
  c.send(0, "RETR a.txt\r\n");
  c.send(1, "150-Opening\r\n150 data connection\r\n");
  c.send(1, "226 Transfer complete.\r\n");
  c.send(0, "QUIT\r\n");  // a packet to the server after the last reply
  std::string rules =
      "alert ftp any any -> any any (ftp.command; content:\"USER\"; ftp.command_data; content:\"anon\"; sid:1;)\n"
      "alert ftp any any -> any any (flow:to_server; ftp.dynamic_port:58612; sid:2;)\n"  // known at the reply
      "alert ftp any any -> any any (ftp.mode:active; sid:3;)\n"                         // each way: twice
      "alert ftp any any -> any any (ftp.completion_code; content:\"226\"; sid:4;)\n"
      "alert ftp any any -> any any (ftp.reply_received:no; sid:5;)\n"  // (inspected to the client only)
      // PORT's port is 234 * 256 + 10 = 59914: outside the range, whose ends are excluded (Suricata's a-b)
      "alert ftp any any -> any any (ftp.dynamic_port:59914-59920; sid:6;)\n";
  auto r = run_ids("ftp", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2, 3, 3, 4}));
  ASSERT_EQ(r.other["ftp"].size(), 5u) << "each command with its replies; the greeting is none";
  const auto& retr = r.other["ftp"][3]["ftp"];
  EXPECT_EQ(retr["command"], "RETR");
  EXPECT_EQ(retr["completion_code"], (std::vector<std::string>{"150", "150", "226"}));
  EXPECT_EQ(r.other["ftp"][2]["ftp"]["mode"], "passive");
  ASSERT_FALSE(r.other["stats"].empty());
  const auto& tx = r.other["stats"].back()["stats"]["app_layer"]["tx"];
  EXPECT_EQ(tx["ftp"], 5) << "Suricata's app_layer.tx: one per command";
  EXPECT_EQ(tx["smtp"], 0);
  EXPECT_EQ(r.other["ftp"][0]["ftp"]["command_truncated"], false);
  EXPECT_EQ(r.other["ftp"][0]["ftp"]["reply_truncated"], false);
  EXPECT_FALSE(r.other["ftp"][2]["ftp"].contains("command_truncated")) << "EPSV has no data";
}

// Suricata's FTP events: a data command before a data connection was
// agreed (PORT or EPRT accepted, a passive reply), each agreement used once;
// RETR, STOR and APPE without a file name.
TEST(IdsFtp, DataCommandsWithoutADataConnectionOrAFileNameAreEvents) {
  Conv c(40000, 21);
  c.send(1, "220 ready\r\n");
  c.send(0, "RETR a.txt\r\n");  // before any port: file_before_port
  c.send(1, "425 Use PORT or PASV first.\r\n");
  c.send(0, "PASV\r\n");
  c.send(1, "227 Entering Passive Mode (10,0,0,2,200,10).\r\n");
  c.send(0, "LIST\r\n");  // takes the passive port
  c.send(1, "226 Done.\r\n");
  c.send(0, "NLST\r\n");  // used already: file_before_port
  c.send(1, "425 Use PORT or PASV first.\r\n");
  c.send(0, "PORT 10,0,0,1,234,10\r\n");
  c.send(1, "500 Illegal PORT command.\r\n");  // refused: no port agreed
  c.send(0, "STOR b.txt\r\n");                 // file_before_port
  c.send(1, "425 Use PORT or PASV first.\r\n");
  c.send(0, "STOR\r\n");  // file_without_name
  c.send(1, "501 Need a name.\r\n");
  c.send(0, "QUIT\r\n");
  std::string rules =
      "alert ftp any any -> any any (app-layer-event:ftp.file_before_port; sid:1;)\n"
      "alert ftp any any -> any any (app-layer-event:ftp.file_without_name; sid:2;)\n";
  auto r = run_ids("ftp-events", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  std::multiset<std::string> anomalies;
  for (const auto& j : r.other["anomaly"])
    if (j["anomaly"].value("app_proto", "") == "ftp") anomalies.insert(j["anomaly"]["event"]);
  EXPECT_EQ(anomalies, (std::multiset<std::string>{"file_before_port", "file_before_port", "file_before_port",
                                                   "file_without_name"}));
  std::vector<uint32_t> got = r.sids();  // (each transaction inspected each way: twice, as ftp.mode's)
  EXPECT_EQ(std::count(got.begin(), got.end(), 1u), 2 * 3);
  EXPECT_EQ(std::count(got.begin(), got.end(), 2u), 2 * 1);
}

// An alert on a preliminary reply shows the transaction as it is when the
// alert is logged: with the reply that ended it, parsed on the same packet.
TEST(IdsFtp, AlertsShowTheTransactionWhenLogged) {
  Conv c(40000, 21);
  c.send(1, "220 ready\r\n");
  c.send(0, "RETR a.txt\r\n");
  c.send(1, "150 Opening\r\n");
  c.send(1, "226 Transfer complete.\r\n");
  c.send(0, "QUIT\r\n");  // (acknowledges both replies)
  c.send(1, "221 Goodbye.\r\n");
  auto r = run_ids("ftp-late", c.out, "alert ftp any any -> any any (ftp.completion_code; content:\"150\"; sid:1;)\n",
                   false, false, ", STREAM_INSPECT acked");
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.sids(), std::vector<uint32_t>{1});
  EXPECT_EQ(r.eve[0]["ftp"]["command"], "RETR");
  EXPECT_EQ(r.eve[0]["ftp"]["completion_code"], (std::vector<std::string>{"150", "226"}));
}

// Lines longer than 4 KiB are cut: the record says which side's was.
TEST(IdsFtp, TruncatedCommandsAndRepliesAreMarked) {
  Conv c(40000, 21);
  c.send(1, "220 ready\r\n");
  c.send(0, "USER " + std::string(5000, 'u') + "\r\n");
  c.send(1, "331 Please specify the password.\r\n");
  c.send(0, "PASV\r\n");
  c.send(1, "227 " + std::string(3000, 'A'));
  c.send(1, std::string(3000, 'A') + "\r\n");
  c.send(0, "QUIT\r\n");
  auto r = run_ids("ftp-long", c.out, "");
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.other["ftp"].size(), 3u) << "USER, PASV, QUIT (no reply)";
  const auto& user = r.other["ftp"][0]["ftp"];
  EXPECT_EQ(user["command_truncated"], true);
  EXPECT_EQ(user["reply_truncated"], false);
  EXPECT_EQ(user["command_data"].get<std::string>().size(), 4096u - 5) << "the line's first 4 KiB";
  const auto& pasv = r.other["ftp"][1]["ftp"];
  EXPECT_EQ(pasv["reply_truncated"], true);
  EXPECT_EQ(pasv["completion_code"], std::vector<std::string>{"227"});
}

namespace {

// An SMTP session up to the server's go-ahead for DATA (a@ to b@).
Conv smtp_to_data() {
  Conv c(40000, 25);
  c.send(1, "220 mail.example ESMTP\r\n");
  c.send(0, "EHLO client.example\r\n");
  c.send(1, "250 mail.example\r\n");
  c.send(0, "MAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\n");
  c.send(1, "250 ok\r\n250 ok\r\n");
  c.send(0, "DATA\r\n");
  c.send(1, "354 go ahead\r\n");
  return c;
}

}  // namespace

TEST(IdsSmtp, CommandsMessageAndAttachmentsAreOneTransaction) {
  Conv c = smtp_to_data();
  c.send(0,
         "From: A <a@example.com>\r\nTo: b@example.com, \"c, d\" <c@example.com>\r\nSubject: invoice\r\n"
         "Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\n"
         "pay at http://pay.example/now today\r\n--b1\r\n");
  c.send(0,
         "Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"inv.exe\"\r\n"
         "Content-Transfer-Encoding: base64\r\n\r\nTVqQAAMAAABtYWx3YXJl\r\n--b1--\r\n.\r\n");
  c.send(1, "250 queued\r\n");
  c.send(0, "QUIT\r\n");
  std::string rules =
      "alert smtp any any -> any any (smtp.helo; content:\"client.example\"; bsize:14; sid:1;)\n"
      "alert smtp any any -> any any (smtp.rcpt_to; content:\"<b@\"; startswith; sid:2;)\n"
      "alert smtp any any -> any any (email.subject; content:\"invoice\"; sid:3;)\n"
      "alert smtp any any -> any any (email.url; content:\"pay.example/now\"; startswith; endswith; sid:4;)\n"
      "alert smtp any any -> any any (file.data; content:\"malware\"; sid:5;)\n"  // decoded
      "alert smtp any any -> any any (file.name; content:\".exe\"; endswith; sid:6;)\n"
      "alert tcp any any -> any any (app-layer-protocol:smtp; flow:to_server; content:\"QUIT\"; sid:7;)\n"
      "alert smtp any any -> any any (email.subject; content:\"receipt\"; sid:8;)\n";
  auto r = run_ids("smtp", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7})) << "each once: one transaction";
  ASSERT_EQ(r.other["smtp"].size(), 1u);
  const auto& rec = r.other["smtp"][0];
  EXPECT_EQ(rec["smtp"]["helo"], "client.example");
  EXPECT_EQ(rec["smtp"]["rcpt_to"], std::vector<std::string>{"<b@example.com>"});
  EXPECT_EQ(rec["email"]["status"], "PARSE_DONE");
  EXPECT_EQ(rec["email"]["to"], (std::vector<std::string>{"b@example.com", "\"c, d\" <c@example.com>"}));
  EXPECT_EQ(rec["email"]["attachment"], std::vector<std::string>{"inv.exe"});
  ASSERT_EQ(r.other["fileinfo"].size(), 1u);
  EXPECT_EQ(r.other["fileinfo"][0]["app_proto"], "smtp");
  EXPECT_EQ(r.other["fileinfo"][0]["fileinfo"]["size"], 15) << "the attachment decoded";
  for (const auto& a : r.eve) {
    if (a["alert"]["signature_id"] == 3) {
      EXPECT_EQ(a["email"]["from"], "A <a@example.com>") << a;
    }
    if (a["alert"]["signature_id"] != 5) continue;
    ASSERT_TRUE(a.contains("files")) << a;
    EXPECT_EQ(a["files"][0]["filename"], "inv.exe");
    EXPECT_EQ(a["files"][0]["state"], "CLOSED");
  }
  ASSERT_FALSE(r.other["stats"].empty());
  EXPECT_EQ(r.other["stats"].back()["stats"]["app_layer"]["tx"]["smtp"], 1) << "one transaction begun";
}

TEST(IdsActions, ActionOrderVerdictAndEthernetAsSuricataYamlSetsThem) {
  Conv c;
  c.send(0, "trusted attack");
  std::string rules =
      "alert tcp any any -> any any (content:\"attack\"; sid:1;)\n"
      "pass tcp any any -> any any (content:\"trusted\"; sid:2;)\n"
      "drop tcp any any -> any any (content:\"attack\"; sid:3;)\n";
  // Suricata's default order: the pass rule wins, nothing is logged
  auto def = run_ids("order-default", c.out, rules, true, false, ", EVE_VERDICT true");
  ASSERT_TRUE(def.r->ok);
  EXPECT_TRUE(def.eve.empty());
  // drop first: the drop rule logs (verdict drop), the pass rule below it
  // stops the alert rule under it
  auto drop = run_ids("order-drop", c.out, rules, true, false,
                      ", ACTION_ORDER \"drop pass reject alert\", EVE_VERDICT true, EVE_ETHERNET true");
  ASSERT_TRUE(drop.r->ok);
  ASSERT_EQ(drop.eve.size(), 1u);
  EXPECT_EQ(drop.eve[0]["alert"]["signature_id"], 3);
  EXPECT_EQ(drop.eve[0]["verdict"]["action"], "drop");
  EXPECT_EQ(drop.eve[0]["ether"]["src_mac"], "02:00:00:00:00:01");
  EXPECT_EQ(drop.eve[0]["ether"]["dest_mac"], "02:00:00:00:00:02");
  // a pass rule with `alert` under the drop: the packet is dropped, both
  // alert, the alert rule under the pass does not
  std::string loud =
      "alert tcp any any -> any any (content:\"attack\"; sid:1;)\n"
      "pass tcp any any -> any any (content:\"trusted\"; alert; sid:2;)\n"
      "drop tcp any any -> any any (content:\"attack\"; sid:3;)\n";
  auto both = run_ids("order-drop-pass-alert", c.out, loud, true, false, ", ACTION_ORDER \"drop pass reject alert\"");
  ASSERT_TRUE(both.r->ok);
  EXPECT_EQ(both.sids(), (std::vector<uint32_t>{3, 2}));
  EXPECT_EQ(both.r->n("ids.dropped"), 1u);
  // alert first: the alert logs, then the pass passes the packet (its
  // verdict) and the flow: the drop under it, and later matches, do nothing
  Conv later = c;
  later.send(0, "attack again");
  auto alert_first = run_ids("order-alert-pass", later.out, rules, true, false,
                             ", ACTION_ORDER \"alert pass drop reject\", EVE_VERDICT true");
  ASSERT_TRUE(alert_first.r->ok);
  ASSERT_EQ(alert_first.sids(), std::vector<uint32_t>{1});
  EXPECT_EQ(alert_first.eve[0]["verdict"]["action"], "pass");
  EXPECT_EQ(alert_first.r->n("ids.dropped"), 0u);
  ASSERT_EQ(alert_first.flows.size(), 1u);
  EXPECT_EQ(alert_first.flows[0]["flow"]["action"], "pass");
  EXPECT_FALSE(
      test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, ACTION_ORDER \"drop pass\") -> Discard;")->ok);
}

// Suricata's rule order (action, then priority, then sid) and its
// packet-alert-max: a packet logs its first matches, counts the others as
// alert_queue_overflow, and their actions still stand.
TEST(IdsActions, PacketAlertMaxKeepsTheFirstMatchesInSuricatasOrder) {
  Conv c;
  c.send(0, "attack");
  std::string rules =
      "alert tcp any any -> any any (content:\"attack\"; sid:5;)\n"
      "alert tcp any any -> any any (content:\"attack\"; priority:1; sid:9;)\n"
      "alert tcp any any -> any any (content:\"attack\"; sid:3;)\n"
      "alert tcp any any -> any any (content:\"attack\"; classtype:bad-unknown; sid:7;)\n"  // priority 2
      "alert tcp any any -> any any (content:\"attack\"; noalert; sid:4;)\n"
      "drop tcp any any -> any any (content:\"attack\"; sid:8;)\n";
  auto all = run_ids("alert-max-all", c.out, rules);
  ASSERT_TRUE(all.r->ok);
  EXPECT_EQ(all.sids(), (std::vector<uint32_t>{8, 9, 7, 3, 5})) << "action, priority, sid";
  auto three = run_ids("alert-max-3", c.out, rules, false, false, ", PACKET_ALERT_MAX 3");
  ASSERT_TRUE(three.r->ok);
  EXPECT_EQ(three.sids(), (std::vector<uint32_t>{8, 9, 7}));
  EXPECT_EQ(three.r->n("ids.alerts_discarded"), 2u);
  EXPECT_EQ(three.r->n("ids.alerts_suppressed"), 1u) << "the noalert rule";
  ASSERT_FALSE(three.other["stats"].empty());
  const auto& st = three.other["stats"].back()["stats"]["detect"];
  EXPECT_EQ(st["alert"], 3);
  EXPECT_EQ(st["alert_queue_overflow"], 2);
  EXPECT_EQ(st["engines"][0]["rules_loaded"], 6);
  EXPECT_EQ(st["engines"][0]["rules_failed"], 0);
  // the drop rule last and over the limit: not logged, the packet dropped
  auto ips = run_ids("alert-max-ips", c.out, rules, true, false,
                     ", PACKET_ALERT_MAX 1, ACTION_ORDER \"pass alert reject drop\"");
  ASSERT_TRUE(ips.r->ok);
  EXPECT_EQ(ips.sids(), (std::vector<uint32_t>{9}));
  EXPECT_EQ(ips.r->n("ids.dropped"), 1u);
  EXPECT_EQ(ips.r->n("ids.alerts_discarded"), 4u);
  EXPECT_FALSE(test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, PACKET_ALERT_MAX 0) -> Discard;")->ok);
}

// Only the server's side captured (stream.async-oneside), picked up at the
// SYN-ACK: the flow is the client's, the response one transaction.
TEST(IdsHttp, ServerSideOnlyCaptureIsTheClientsFlowWithOneResponse) {
  Conv c;
  c.send(0, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
  c.fin(1);
  std::vector<Bytes> server_only;
  for (const Bytes& f : c.out)
    if (f[14 + 15] == 2) server_only.push_back(f);  // from 10.0.0.2
  ASSERT_EQ(server_only.size(), 3u);
  auto r = run_ids("oneside", server_only, "alert http any any -> any any (http.stat_code; content:\"200\"; sid:1;)\n",
                   false, true);
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.other["http"].size(), 1u) << "no empty transaction at the close";
  const auto& h = r.other["http"][0];
  EXPECT_EQ(h["src_ip"], "10.0.0.1");
  EXPECT_EQ(h["dest_port"], 80);
  EXPECT_EQ(h["http"]["status"], 200);
  ASSERT_EQ(r.eve.size(), 1u);
  EXPECT_EQ(r.eve[0]["direction"], "to_client");
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_EQ(r.flows[0]["src_ip"], "10.0.0.1");
  EXPECT_EQ(r.flows[0]["flow"]["pkts_toclient"], 3);
}

// Suricata's xff: the request's X-Forwarded-For in the alert (extra-data)
// or as the client's address (overwrite), its last address (reverse) or
// first (forward); a value that is no address is left out.
TEST(IdsHttp, XForwardedForInAlerts) {
  Conv c;
  c.send(0, "GET /a HTTP/1.1\r\nHost: x\r\nx-forwarded-for: 192.0.2.7, 2001:db8::9\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nuid!");
  std::string rules =
      "alert http any any -> any any (http.uri; content:\"/a\"; sid:1;)\n"
      "alert http any any -> any any (http.response_body; content:\"uid\"; sid:2;)\n";
  auto fwd = run_ids("xff-fwd", c.out, rules, false, false, ", XFF_MODE extra-data, XFF_DEPLOYMENT forward");
  ASSERT_TRUE(fwd.r->ok);
  ASSERT_EQ(fwd.eve.size(), 2u);
  for (const auto& a : fwd.eve) EXPECT_EQ(a["alert"]["xff"], "192.0.2.7");
  auto rev = run_ids("xff-rev", c.out, rules, false, false, ", XFF_MODE overwrite");
  ASSERT_TRUE(rev.r->ok);
  ASSERT_EQ(rev.eve.size(), 2u);
  for (const auto& a : rev.eve) {
    EXPECT_FALSE(a["alert"].contains("xff"));
    bool to_server = a["direction"] == "to_server";
    EXPECT_EQ(a[to_server ? "src_ip" : "dest_ip"], "2001:db8::9") << "the client's address, whichever way";
    EXPECT_EQ(a[to_server ? "dest_ip" : "src_ip"], "10.0.0.2");
  }
  auto other = run_ids("xff-hdr", c.out, rules, false, false, ", XFF_MODE extra-data, XFF_HEADER X-Real-IP");
  ASSERT_TRUE(other.r->ok);
  for (const auto& a : other.eve) EXPECT_FALSE(a["alert"].contains("xff")) << "no such header";
  EXPECT_FALSE(test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, XFF_MODE sideways) -> Discard;")->ok);
}

// Suricata's traffic tagging: flowbits named traffic/id/NAME and
// traffic/label/NAME become the traffic object of alerts and flow records;
// a noalert rule tags the flow without an alert.
TEST(IdsActions, TrafficFlowbitsTagAlertsAndFlows) {
  Conv c;
  c.send(0, "hello mozilla");
  c.send(1, "welcome");
  std::string rules =
      "alert tcp any any -> any any (content:\"mozilla\"; flowbits:set,traffic/id/browser; sid:1;)\n"
      "alert tcp any any -> any any (content:\"welcome\"; flowbits:set,traffic/label/greeting; noalert; sid:2;)\n"
      "alert tcp any any -> any any (content:\"welcome\"; flowbits:set,plain; sid:3;)\n";
  auto r = run_ids("traffic", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.sids(), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(r.eve[0]["traffic"], nlohmann::json::parse(R"({"id":["browser"]})"));
  EXPECT_EQ(r.eve[1]["traffic"], nlohmann::json::parse(R"({"id":["browser"],"label":["greeting"]})"));
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_EQ(r.flows[0]["traffic"], nlohmann::json::parse(R"({"id":["browser"],"label":["greeting"]})"))
      << "other flowbits are not tags";
  // they are the metadata's flowbits (Suricata's EVE metadata), with the flowints set
  EXPECT_FALSE(r.eve[0].contains("metadata")) << "nothing but tags set yet";
  EXPECT_EQ(r.eve[1]["metadata"], nlohmann::json::parse(R"({"flowbits":["plain"]})"));
  EXPECT_EQ(r.flows[0]["metadata"], nlohmann::json::parse(R"({"flowbits":["plain"]})"));
  auto ints = run_ids("traffic-ints", c.out,
                      "alert tcp any any -> any any (content:\"mozilla\"; flowint:hits,=,7; noalert; sid:1;)\n"
                      "alert tcp any any -> any any (content:\"welcome\"; flowint:hits,+,1; sid:2;)\n");
  ASSERT_TRUE(ints.r->ok);
  ASSERT_EQ(ints.eve.size(), 1u);
  EXPECT_EQ(ints.eve[0]["metadata"], nlohmann::json::parse(R"({"flowints":{"hits":8}})"));
}

// The application layer's records of a flow carry its variables too
// (Suricata's common EVE options add the metadata to every record).
TEST(IdsActions, AppLayerRecordsCarryTheFlowsMetadata) {
  Conv c;
  c.send(0, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  auto r = run_ids("app-meta", c.out,
                   "alert http any any -> any any (http.uri; content:\"/a\"; flowbits:set,seen.a; noalert; sid:1;)\n");
  ASSERT_TRUE(r.r->ok);
  ASSERT_EQ(r.other["http"].size(), 1u);
  EXPECT_EQ(r.other["http"][0]["metadata"], nlohmann::json::parse(R"({"flowbits":["seen.a"]})"));
  auto none = run_ids("app-nometa", c.out, "alert http any any -> any any (http.uri; content:\"/b\"; sid:1;)\n");
  ASSERT_TRUE(none.r->ok);
  ASSERT_EQ(none.other["http"].size(), 1u);
  EXPECT_FALSE(none.other["http"][0].contains("metadata"));
  EXPECT_EQ(none.other["http"][0]["pkt_src"], "wire/pcap");
  ASSERT_EQ(none.flows.size(), 1u);
  EXPECT_EQ(none.flows[0]["flow"]["tx_cnt"], 1) << "Suricata 8's count of the flow's transactions";
  // a transaction the flow's end completes: logged on its pseudo packet
  Conv half;
  half.send(0, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  auto end = run_ids("app-end", half.out, "");
  ASSERT_TRUE(end.r->ok);
  ASSERT_EQ(end.other["http"].size(), 1u);
  EXPECT_EQ(end.other["http"][0]["pkt_src"], "stream (flow timeout)");
  EXPECT_FALSE(end.other["http"][0].contains("pcap_cnt"));
}

TEST(IdsHttp, TransactionalRulesReadBothSidesAndFileSizes) {
  Conv c;
  c.send(0, "GET /download HTTP/1.1\r\nHost: x\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nServer: Apache\r\nContent-Length: 5\r\n\r\nhello");
  std::string rules =
      "alert http any any => any any (http.uri; content:\"/download\"; http.stat_code; content:\"200\"; sid:1;)\n"
      "alert http any any => any any (http.uri; content:\"/download\"; http.stat_code; content:\"404\"; sid:2;)\n"
      "alert http any any => any any (http.uri; content:\"/down\"; file.data: to_client; content:\"hell\"; "
      "filesize:to_client,<100; sid:3;)\n"
      "alert http any any -> any any (filesize:>100; sid:4;)\n"
      "alert http 10.0.0.1 any => 10.0.0.2 any (http.server; content:\"Apache\"; sid:5;)\n"       // the flow's way
      "alert http any any -> any any (http.uri; content:\"x\"; file.data: to_client; sid:6;)\n";  // '->' takes none
  auto r = run_ids("bidir", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 1u) << "sid 6: a side is for transactional rules";
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 3, 5}));
}

TEST(IdsRules, IpoptsNamesTheOptionsPresent) {
  RuleSet set;
  std::string err;
  ASSERT_TRUE(
      set.load_text("alert ip any any -> any any (ipopts:rr; sid:1;)\n"
                    "alert ip any any -> any any (ipopts:eol; sid:2;)\n"
                    "alert ip any any -> any any (ipopts:any; sid:3;)\n"
                    "alert ip any any -> any any (ipopts:ts; sid:4;)\n"
                    "alert ip any any -> any any (ipopts:bogus; sid:5;)\n",
                    "o", Vars(), false, err))
      << err;
  ASSERT_EQ(set.rules().size(), 4u);
  auto hits = [&](const Bytes& ip) {
    PacketInfo p;
    EXPECT_TRUE(parse_packet(ip.data(), uint32_t(ip.size()), p));
    std::vector<uint32_t> out;
    for (const Rule& r : set.rules())
      if (header_matches(r, p)) out.push_back(r.sid);
    return out;
  };
  Bytes plain = ip4(kClient, kServer, 17, 1, 2, "x");
  EXPECT_TRUE(hits(plain).empty());
  Bytes rr = plain;  // record route (7 bytes), then end of list
  const uint8_t opts[] = {7, 7, 4, 0, 0, 0, 0, 0};
  rr.insert(rr.begin() + 20, std::begin(opts), std::end(opts));
  rr[0] = 0x47;
  rr[3] = uint8_t(rr.size());
  EXPECT_EQ(hits(rr), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(IdsRules, TransformsChangeWhatTheirBuffersContentsSee) {
  Transform t;
  bool is = false;
  std::string err;
  auto chain = [&](std::initializer_list<std::pair<const char*, const char*>> ks) {
    std::vector<Transform> c;
    for (auto [k, v] : ks) {
      EXPECT_TRUE(parse_transform(k, v, t, is, err) && is) << k << ": " << err;
      c.push_back(t);
    }
    return c;
  };
  EXPECT_EQ(apply_transforms(chain({{"to_lowercase", ""}}), "AbC"), "abc");
  EXPECT_EQ(apply_transforms(chain({{"strip_whitespace", ""}}), " a b\t\r\nc "), "abc");
  EXPECT_EQ(apply_transforms(chain({{"compress_whitespace", ""}}), "a  \t b"), "a b");
  EXPECT_EQ(apply_transforms(chain({{"url_decode", ""}}), "%2Fetc%2fpasswd+x%zz%4"), "/etc/passwd x%zz%4");
  EXPECT_EQ(apply_transforms(chain({{"dotprefix", ""}}), "example.com"), ".example.com");
  EXPECT_EQ(apply_transforms(chain({{"header_lowercase", ""}}), "Host: A\r\nUser-Agent: B\r\n"),
            "host: A\r\nuser-agent: B\r\n");
  EXPECT_EQ(apply_transforms(chain({{"xor", "\"0102\""}}), std::string("\x01\x02\x03", 3)), std::string("\0\0\x02", 3));
  std::string md5 = apply_transforms(chain({{"to_md5", ""}}), "abc");  // RFC 1321's test vector
  ASSERT_EQ(md5.size(), 16u) << "the digest's bytes";
  EXPECT_EQ(uint8_t(md5[0]), 0x90);
  EXPECT_EQ(uint8_t(md5[15]), 0x72);
  EXPECT_EQ(apply_transforms(chain({{"to_lowercase", ""}, {"dotprefix", ""}}), "A.COM"), ".a.com") << "in order";
  EXPECT_FALSE(parse_transform("xor", "\"0g\"", t, is, err));
  // in rules: a sticky buffer's contents see the transformed buffer
  Conv c;
  c.send(0, "GET /A%2Fb HTTP/1.1\r\nHost: WWW.Example.COM\r\n\r\n");
  std::string rules =
      "alert http any any -> any any (http.uri.raw; url_decode; to_lowercase; content:\"/a/b\"; sid:1;)\n"
      "alert http any any -> any any (http.host; dotprefix; content:\".example.com\"; endswith; nocase; sid:2;)\n"
      "alert http any any -> any any (http.uri.raw; content:\"/a/b\"; sid:3;)\n"         // untransformed: no
      "alert http any any -> any any (http.uri; content:\"A\"; to_lowercase; sid:4;)\n"  // after a content
      "alert tcp any any -> any any (to_lowercase; content:\"get\"; sid:5;)\n";          // no sticky buffer
  auto r = run_ids("xform", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 2u);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2}));
}

TEST(IdsHttp, AbsentAndEmptyBodies) {
  Conv c;
  c.send(0, "GET /a HTTP/1.1\r\nHost: x\r\nUser-Agent: \r\n\r\n");
  std::string rules =
      "alert http any any -> any any (http.request_body; absent; sid:1;)\n"
      "alert http any any -> any any (http.request_body; absent: or_else; content:!\"abc\"; sid:2;)\n"
      "alert http any any -> any any (http.request_body; content:!\"abc\"; sid:3;)\n"  // no body: no buffer
      "alert http any any -> any any (http.user_agent; bsize:0; sid:4;)\n"             // present and empty: a buffer
      "alert http any any -> any any (http.uri; absent; sid:5;)\n"
      "alert http any any -> any any (absent; sid:6;)\n";  // needs a buffer before it
  auto r = run_ids("absent", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 1u);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2, 4}));
}

TEST(IdsRules, StreamSizeReadsEachSidesSequenceSpace) {
  Conv c;  // the handshake: each side's SYN counts one
  c.send(1, std::string(100, 's'));
  c.send(0, "EICAR");
  std::string rules =
      "alert tcp any any -> any any (flow:to_server; stream_size:server,>,100; content:\"EICAR\"; sid:1;)\n"
      "alert tcp any any -> any any (flow:to_server; stream_size:server,<,100; content:\"EICAR\"; sid:2;)\n"
      "alert tcp any any -> any any (stream_size:client,=,6; content:\"EICAR\"; sid:3;)\n"
      "alert tcp any any -> any any (stream_size:both,>=,6; content:\"EICAR\"; sid:4;)\n"
      "alert tcp any any -> any any (stream_size:either,<,2; content:\"EICAR\"; sid:5;)\n"
      "alert tcp any any -> any any (stream_size:middle,<,2; sid:6;)\n";
  auto r = run_ids("streamsize", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 1u);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 3, 4})) << "server 101 (SYN + 100), client 6 (SYN + 5)";
}

// Stream rules across holes at a flow's end (Suricata's eve-payload-05/06):
// each part between holes is matched alone (a pattern spanning the hole is
// not found), and the alerts raised then carry the whole inspected stream,
// each hole written "[N bytes missing]".
TEST(IdsStream, AlertsAtTheEndShowTheStreamAcrossItsHoles) {
  const std::string rules =
      "alert tcp-stream any any -> any any (content:\"VERY\"; sid:1;)\n"
      "alert tcp-stream any any -> any any (content:\"GOOD\"; sid:2;)\n"
      "alert tcp-stream any any -> any any (content:\"DATA\"; sid:3;)\n"
      "alert tcp-stream any any -> any any (content:\"VERYGOODDATA\"; sid:7;)\n";
  for (bool leading : {false, true}) {
    Conv c;
    if (!leading) c.send(0, "VERY");
    c.cseq += 4;  // the hole: 4 bytes never captured
    if (leading) c.send(0, "GOOD");
    c.send(0, "DATA");
    // (IDS timing: nothing is acknowledged, so all of it is inspected at the end)
    auto r = run_ids("gap", c.out, rules, false, false, ", EVE_PAYLOAD_PRINTABLE true, STREAM_INSPECT acked");
    ASSERT_TRUE(r.r->ok);
    std::string want = leading ? "[4 bytes missing]GOODDATA" : "VERY[4 bytes missing]DATA";
    std::vector<uint32_t> sids = r.sids();
    std::sort(sids.begin(), sids.end());
    EXPECT_EQ(sids, (leading ? std::vector<uint32_t>{2, 3} : std::vector<uint32_t>{1, 3})) << want;
    for (const auto& j : r.eve) {
      EXPECT_EQ(j["payload_printable"], want) << j.dump();
      EXPECT_EQ(j["stream"], 1) << j.dump();
      EXPECT_EQ(j["pkt_src"], "stream (flow timeout)") << j.dump();
    }
  }
}

// GASPP's stream-aware matching (§5), offloaded: the device scans each TCP
// segment with the stream rules' automaton, the host adds what starts in the
// bytes before it (the seam) as it delivers the segment in order, and scans
// itself what is delivered otherwise (out of order, retransmitted in part)
// or what overflows a device list. The alerts are the CPU element's, in
// the same order, in both inspection modes, with device delays and faults.
TEST(IdsStream, TheDeviceScansSegmentsWithTheCpusAlerts) {
  std::mt19937 rng(21);
  std::vector<std::string> pats;
  std::string rules;
  for (int i = 0; i < 12; ++i) {
    pats.push_back(fmt::format("Pat{}{}-{}", char('A' + i), i * 7 % 10, std::string(size_t(i % 5), 'Z')));
    // plain rules, rules wanting more than their pattern, a direction
    std::string more = i % 3 == 1 ? fmt::format(" content:\"{}\"; distance:0;", pats[size_t(i) / 2]) : "";
    rules += fmt::format("alert tcp any any -> any any (msg:\"s{}\"; flow:only_stream{}; content:\"{}\";{} sid:{};)\n",
                         i, i % 4 == 3 ? ",to_client" : "", pats.back(), more, 100 + i);
  }
  rules += "alert tcp any any -> any any (msg:\"pkt\"; flow:no_stream; content:\"PatA\"; sid:300;)\n";
  std::vector<Bytes> frames;
  for (uint16_t conn = 0; conn < 30; ++conn) {
    uint32_t ca = kClient + conn, sa = kServer + conn, isn[2] = {uint32_t(rng()), uint32_t(rng())};
    uint16_t cp = uint16_t(30000 + conn);
    auto seg = [&](int d, uint32_t seq, uint32_t ack, uint8_t flags, const std::string& data = "") {
      return ether(d == 0 ? ip4(ca, sa, 6, cp, 80, data, seq, ack, flags)
                          : ip4(sa, ca, 6, 80, cp, data, seq, ack, flags));
    };
    frames.push_back(seg(0, isn[0], 0, 0x02));
    frames.push_back(seg(1, isn[1], isn[0] + 1, 0x12));
    frames.push_back(seg(0, isn[0] + 1, isn[1] + 1, 0x10));
    std::string st[2];
    std::vector<std::tuple<int, uint32_t, std::string>> segs;  // (direction, offset, bytes)
    for (int d = 0; d < 2; ++d) {
      for (size_t len = 300 + rng() % 1500; st[d].size() < len;)
        st[d] += rng() % 30 ? std::string(1, char('a' + rng() % 8)) : pats[rng() % pats.size()];
      if (conn % 3 == 0)  // a segment with more distinct patterns than a device list holds
        for (size_t i = 0; i < 10; ++i) st[d] += pats[i];
      for (uint32_t at = 0; at < st[d].size();) {
        auto n = uint32_t(std::min<size_t>(1 + rng() % (rng() % 4 ? 40 : 400), st[d].size() - at));
        if (conn % 3 == 0 && at + n > st[d].size() - 150) n = uint32_t(st[d].size() - at);
        segs.emplace_back(d, at, st[d].substr(at, n));
        at += n;
      }
    }
    std::stable_sort(segs.begin(), segs.end(), [&](const auto& a, const auto& b) {  // the two sides interleaved
      return std::get<1>(a) * 3 + uint32_t(std::get<0>(a)) < std::get<1>(b) * 3 + uint32_t(std::get<0>(b));
    });
    uint32_t delivered[2] = {0, 0};
    for (size_t i = 0; i < segs.size(); ++i) {
      if (i + 1 < segs.size() && rng() % 10 == 0) std::swap(segs[i], segs[i + 1]);  // out of order
      auto& [d, off, data] = segs[i];
      frames.push_back(seg(d, isn[d] + 1 + off, isn[1 - d] + 1 + delivered[1 - d], 0x18, data));
      if (rng() % 20 == 0 && data.size() > 2)  // a retransmission that brings a little more
        frames.push_back(seg(d, isn[d] + 1 + off + 1, isn[1 - d] + 1 + delivered[1 - d], 0x18, data.substr(1)));
      delivered[d] = std::max<uint32_t>(delivered[d], off + uint32_t(data.size()));
    }
    auto L0 = uint32_t(st[0].size()), L1 = uint32_t(st[1].size());
    frames.push_back(seg(0, isn[0] + 1 + L0, isn[1] + 1 + L1, 0x11));
    frames.push_back(seg(1, isn[1] + 1 + L1, isn[0] + 2 + L0, 0x11));
    frames.push_back(seg(0, isn[0] + 2 + L0, isn[1] + 2 + L1, 0x10));
  }
  auto key = [](const IdsRun& r) {
    std::vector<std::pair<uint32_t, uint64_t>> k;
    for (const auto& j : r.eve) k.emplace_back(j["alert"]["signature_id"], j.value("pcap_cnt", uint64_t(0)));
    return k;
  };
  for (const char* mode : {"arrival", "acked"}) {
    std::string extra = fmt::format(", ENGINE builtin, STREAM_INSPECT {}", mode);
    auto cpu = run_ids("dev-stream", frames, rules, false, false, extra);
    ASSERT_TRUE(cpu.r->ok);
    EXPECT_GT(cpu.eve.size(), 60u) << mode;
    EXPECT_EQ(cpu.r->n("ids.stream_device_scans"), 0u);
    for (double faults : {0.0, 0.1}) {
      test::Options o = test::default_options();
      o.offload.device.delay_us = 20;
      o.offload.device.fault_rate = faults;
      o.offload.inflight = 4;
      auto off = run_ids("dev-stream", frames, rules, false, false, extra, "OffloadBalancer(FRACTION 1) ->", &o);
      ASSERT_TRUE(off.r->ok);
      EXPECT_EQ(key(off), key(cpu)) << mode << ", faults " << faults;
      uint64_t dev = off.r->n("ids.stream_device_scans"), host = off.r->n("ids.stream_host_scans");
      EXPECT_GT(dev, 2 * host) << "most segments' patterns came from the device";
      EXPECT_GT(host, 30u) << "out of order, retransmitted in part or overflowing: the host scanned";
      EXPECT_EQ(dev + host, cpu.r->n("ids.stream_host_scans")) << "every piece scanned once, here or there";
    }
  }
}

// STREAM_MEMCAP: under Suricata's IDS timing a direction's data waits for
// its acknowledgement; data that no one acknowledges (a capture of one
// side) waits at most 64 KiB per direction, and all connections together at
// most the memcap: past it a connection's new data is inspected as it comes.
TEST(IdsStream, DataWaitingForAcknowledgementIsBoundedByTheMemcap) {
  const std::string rules = "alert tcp-stream any any -> any any (content:\"needle\"; sid:1;)\n";
  std::vector<Bytes> frames;
  // 8 one-sided connections, 20 KB each to the server, a needle in each
  for (uint16_t k = 0; k < 8; ++k) {
    Conv c(uint16_t(41000 + k));
    frames.insert(frames.end(), c.out.begin(), c.out.end());
    c.out.clear();
    for (int i = 0; i < 20; ++i) c.send(0, std::string(1000, 'a' + char(k)) + (i == 10 ? "needle" : ""));
    frames.insert(frames.end(), c.out.begin(), c.out.end());
  }
  for (uint64_t memcap : {uint64_t(1) << 30, uint64_t(30000)}) {
    auto r =
        run_ids("memcap", frames, rules, false, false, fmt::format(", STREAM_INSPECT acked, STREAM_MEMCAP {}", memcap));
    ASSERT_TRUE(r.r->ok);
    ASSERT_EQ(r.eve.size(), 8u) << "one alert per connection whatever the memcap";
    size_t at_end = 0;
    for (const auto& j : r.eve) at_end += j["pkt_src"] == "stream (flow timeout)";
    uint64_t early = r.r->n("ids.stream_memcap_inspections");
    if (memcap > (1u << 20)) {
      EXPECT_EQ(at_end, 8u) << "nothing acknowledged, under the caps: all of it waits for the flows' end";
      EXPECT_EQ(early, 0u);
    } else {
      // the first connection's 20 KB fit; from the second on the data waiting is over 30,000 bytes
      EXPECT_LE(at_end, 2u);
      EXPECT_GE(early, 6u);
    }
    EXPECT_EQ(r.r->n("ids.stream_memory"), 0u) << "every flow ended: nothing held";
  }
}

// A request line with a space in its URI (curl "host/uri afterspace"): the
// URI is everything between the method and the protocol, as Suricata reads
// it (suricata-verify http-uri-spaces).
TEST(IdsHttp, AUriWithASpaceIsTheWholeUri) {
  Conv c;
  c.send(0, "GET /uri afterspace HTTP/1.1\r\nHost: h\r\n\r\n");
  auto r = run_ids("space", c.out,
                   "alert http any any -> any any (flow:established,to_server; content:\" afterspace\"; http_uri; "
                   "sid:1;)\n");
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.sids(), (std::vector<uint32_t>{1}));
}

namespace {
std::string b64(const std::string& s) {  // the oracle: OpenSSL directly
  std::string out(4 * ((s.size() + 2) / 3) + 1, '\0');
  out.resize(size_t(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                    reinterpret_cast<const unsigned char*>(s.data()), int(s.size()))));
  return out;
}
}  // namespace

// Suricata's datasets: string values base64 in their files, digests in hex,
// addresses as text; set and unset hold when they changed the set; a set's
// capacity bounds it; save writes what load reads.
TEST(IdsDataset, ValuesFilesAndCommands) {
  using ids::Dataset;
  std::string dir = test::tmpdir();
  std::ofstream(dir + "/s.lst") << b64("evil.example") << "\n# a comment\n\n" << b64("x") << ",42\n";
  Dataset s("s", Dataset::Type::String, 3);
  std::string err;
  ASSERT_TRUE(s.load(dir + "/s.lst", err)) << err;
  auto u8 = [](const std::string& v) { return reinterpret_cast<const uint8_t*>(v.data()); };
  std::string evil = "evil.example", other = "other";
  EXPECT_TRUE(s.contains(u8(evil), uint32_t(evil.size())));
  EXPECT_TRUE(s.contains(u8(std::string("x")), 1));
  EXPECT_FALSE(s.contains(u8(other), uint32_t(other.size())));
  ids::DatasetUse set, unset;
  ASSERT_TRUE(ids::parse_dataset("set, s, type string, memcap 1mb, hashsize 1024", set, err)) << err;
  ASSERT_TRUE(ids::parse_dataset("unset,s", unset, err)) << err;
  EXPECT_EQ(set.memcap, 1u << 20);
  EXPECT_TRUE(ids::dataset_check(set, s, u8(other), uint32_t(other.size()))) << "new: added";
  EXPECT_FALSE(ids::dataset_check(set, s, u8(other), uint32_t(other.size()))) << "there already";
  std::string more = "more";
  EXPECT_FALSE(s.add(u8(more), uint32_t(more.size()))) << "the capacity, 3 values";
  EXPECT_EQ(s.full(), 1u);
  EXPECT_TRUE(ids::dataset_check(unset, s, u8(evil), uint32_t(evil.size())));
  EXPECT_FALSE(ids::dataset_check(unset, s, u8(evil), uint32_t(evil.size())));
  ASSERT_TRUE(s.save(dir + "/saved.lst", err)) << err;
  Dataset back("b", Dataset::Type::String, 10);
  ASSERT_TRUE(back.load(dir + "/saved.lst", err)) << err;
  EXPECT_EQ(back.size(), 2u);
  EXPECT_TRUE(back.contains(u8(other), uint32_t(other.size())));

  std::ofstream(dir + "/ip.lst") << "10.0.0.1\n2001:db8::1\n";
  Dataset ip("ip", Dataset::Type::Ip, 10);
  ASSERT_TRUE(ip.load(dir + "/ip.lst", err)) << err;
  const uint8_t v4[4] = {10, 0, 0, 1};
  EXPECT_TRUE(ip.contains(v4, 4)) << "an IPv4 buffer, mapped";
  EXPECT_FALSE(ip.contains(v4, 3)) << "not an address";
  std::ofstream(dir + "/bad.lst") << "0123456789abcdef0123456789abcdef\nnot-hex\n";
  Dataset md5("m", Dataset::Type::Md5, 10);
  EXPECT_FALSE(md5.load(dir + "/bad.lst", err));
  EXPECT_NE(err.find("bad.lst:2: not a md5 value"), std::string::npos) << err;
  EXPECT_FALSE(md5.load("/dev/zero", err)) << "a device is not a set's file (it would never end)";
  for (const char* bad : {"isset", "maybe,x", "isset,x,type blob", "isset,x,colour red", "isset,x,memcap lots"})
    EXPECT_FALSE(ids::parse_dataset(bad, set, err)) << bad;
}

// Rules test DNS names against sets, add them to one kept in a state file
// that the next run starts from, and refuse what cannot work.
TEST(IdsDataset, RulesTestAndKeepSetsAcrossRuns) {
  std::vector<Bytes> f;
  uint16_t id = 1;
  for (const char* q : {"a.example", "b.example", "a.example", "c.example"})
    f.push_back(ether(ip4(kClient, kServer, 17, 40001, 53, dns_msg(id++, false, q, 1))));
  std::string dir = test::tmpdir();
  std::ofstream(dir + "/bad.lst") << b64("b.example") << "\n";
  std::ofstream(dir + "/md5.lst") << md5_hex("c.example") << "\n";
  std::string rules = fmt::format(
      "alert dns any any -> any any (dns.query; dataset:set,seen,type string,state seen.lst; sid:1;)\n"
      "alert dns any any -> any any (dns.query; dataset:isset,bad,type string,load {0}/bad.lst; sid:2;)\n"
      "alert dns any any -> any any (dns.query; dataset:isnotset,bad; sid:3;)\n"
      "alert dns any any -> any any (dns.query; to_md5; dataset:isset,md5s,type md5,load {0}/md5.lst; sid:4;)\n"
      "alert dns any any -> any any (dataset:isset,bad; sid:5;)\n"
      "alert dns any any -> any any (dns.query; dataset:isset,nameless; sid:6;)\n"
      "alert dns any any -> any any (dns.query; dataset:isset,bad,type md5; sid:7;)\n"
      "alert dns any any -> any any (dns.query; dataset:isset,gone,type string,load {0}/none.lst; sid:8;)\n",
      dir);
  std::string extra = fmt::format(", DATA_DIR {}", dir);
  auto r = run_ids("datasets", f, rules, false, false, extra);
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::multiset<uint32_t> sids(got.begin(), got.end());
  EXPECT_EQ(sids, (std::multiset<uint32_t>{1, 1, 1, 2, 3, 3, 3, 4}));
  std::string problems = r.r->h("ids.problems");
  for (const char* why : {"sid 5: dataset needs a sticky buffer", "sid 6: dataset 'nameless': the first rule",
                          "sid 7: dataset 'bad': type md5, but it is a string set", "none.lst"})
    EXPECT_NE(problems.find(why), std::string::npos) << why << " in " << problems;
  // the state file: the three names, and the next run starts from it
  std::ifstream st(dir + "/seen.lst");
  std::vector<std::string> lines;
  for (std::string l; std::getline(st, l);) lines.push_back(l);
  EXPECT_EQ(lines, (std::vector<std::string>{b64("a.example"), b64("b.example"), b64("c.example")}));
  auto again = run_ids("datasets-again", f, rules, false, false, extra);
  ASSERT_TRUE(again.r->ok);
  std::vector<uint32_t> s2 = again.sids();
  EXPECT_EQ(std::count(s2.begin(), s2.end(), 1u), 0) << "every name was in the state";
}

namespace {

// A digest list as Suricata reads one: a line's leading hex, the rest ignored.
void write_list(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST(IdsFiles, DigestListsNamesAndExtensionsOfHttpFiles) {
  Conv c;
  // 0: a whole download named by Content-Disposition, "hello world"
  c.send(0, "GET /dl HTTP/1.1\r\nHost: files.example\r\n\r\n");
  c.send(1,
         "HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename=\"Report.PDF\"\r\nContent-Length: 11\r\n\r\n"
         "hello world");
  // 1: a download the capture cuts short: no digest
  c.send(0, "GET /partial.bin HTTP/1.1\r\nHost: files.example\r\n\r\n");
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello world");
  std::string dir = test::tmpdir();
  write_list(dir + "/files.md5", "# known bad\n\n5EB63BBBE01EEED093CB22BB8F5ACDC3  hello world\n");
  write_list(dir + "/files.sha1", "da39a3ee5e6b4b0d3255bfef95601890afd80709\n");  // the empty file's
  write_list(dir + "/other.sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n");
  write_list(dir + "/short.md5", "5eb63bbbe01eeed093cb22bb8f5acdc\n");
  std::string rules =
      "alert http any any -> any any (filemd5:files.md5; sid:1;)\n"
      "alert http any any -> any any (filesha1:files.sha1; sid:2;)\n"
      "alert http any any -> any any (filesha256:!other.sha256; sid:3;)\n"  // whole files not in the list
      "alert tcp any any -> any any (filename:\"report.pdf\"; sid:4;)\n"    // any case
      "alert http any any -> any any (fileext:\"pdf\"; sid:5;)\n"
      "alert http any any -> any any (fileext:exe; sid:6;)\n"
      "alert http any any -> any any (filename:!\"report\"; sid:7;)\n"  // names without it: /partial.bin
      "alert http any any -> any any (file.name; content:\"partial\"; sid:8;)\n"
      "alert http any any -> any any (filemd5:missing.md5; sid:9;)\n"
      "alert http any any -> any any (filemd5:short.md5; sid:10;)\n"
      "alert dns any any -> any any (filemd5:files.md5; sid:11;)\n";
  auto r = run_ids("filehash", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  EXPECT_EQ(r.r->n("ids.skipped"), 3u) << "sids 9 (no list), 10 (a digest too short), 11 (dns has no files)";
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 3, 4, 5, 7, 8})) << "each once: the truncated file has no digest";
  std::map<std::string, nlohmann::json> by_name;
  for (auto& f : r.other["fileinfo"]) by_name[f["fileinfo"]["filename"]] = f["fileinfo"];
  ASSERT_EQ(by_name.count("Report.PDF"), 1u);
  EXPECT_EQ(by_name["Report.PDF"]["md5"], "5eb63bbbe01eeed093cb22bb8f5acdc3") << "the digests the rules read";
  EXPECT_EQ(by_name["Report.PDF"]["sha1"], "2aae6c35c94fcfb415dbe95f408b9ce91ee846ed");
  EXPECT_EQ(by_name["Report.PDF"]["sha256"], "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9");
  ASSERT_EQ(by_name.count("/partial.bin"), 1u);
  EXPECT_FALSE(by_name["/partial.bin"].contains("md5")) << by_name["/partial.bin"];
  // no rule reads digests: FILE_HASHES (Suricata's force-hash) says which the records show
  auto forced = run_ids("filehash-force", c.out, "", false, false, ", FILE_HASHES md5");
  ASSERT_TRUE(forced.r->ok);
  ASSERT_FALSE(forced.other["fileinfo"].empty());
  for (auto& f : forced.other["fileinfo"]) {
    if (f["fileinfo"]["state"] != "CLOSED") continue;
    EXPECT_EQ(f["fileinfo"]["md5"], "5eb63bbbe01eeed093cb22bb8f5acdc3");
    EXPECT_FALSE(f["fileinfo"].contains("sha256"));
  }
  auto bad = test::run("Idle -> FlowIPManager -> IDSMatcher(RULES /dev/null, FILE_HASHES crc32) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("FILE_HASHES: 'crc32' is not md5, sha1 or sha256"), std::string::npos) << bad->errors;
}

TEST(IdsFiles, SmtpAttachmentsAreDigestedDecoded) {
  Conv c = smtp_to_data();
  c.send(0,
         "Subject: x\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n"
         "Content-Disposition: attachment; filename=\"a.txt\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"
         "aGVsbG8gd29ybGQ=\r\n--b1--\r\n.\r\n");
  c.send(1, "250 queued\r\n");
  write_list(test::tmpdir() + "/smtp.md5", "5eb63bbbe01eeed093cb22bb8f5acdc3\n");
  auto r = run_ids("smtphash", c.out,
                   "alert smtp any any -> any any (filemd5:smtp.md5; sid:1;)\n"
                   "alert smtp any any -> any any (fileext:\"TXT\"; sid:2;)\n");
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2}));
  ASSERT_EQ(r.other["fileinfo"].size(), 1u);
  EXPECT_EQ(r.other["fileinfo"][0]["fileinfo"]["md5"], "5eb63bbbe01eeed093cb22bb8f5acdc3");
  for (const auto& a : r.eve) EXPECT_EQ(a["files"][0]["md5"], "5eb63bbbe01eeed093cb22bb8f5acdc3") << a;
}

TEST(IdsFiles, AFormsUploadsAreFilesMatchedOneByOne) {
  Conv c;
  const std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nnot a file\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"a\"; filename=\"titi.txt\"\r\nContent-Type: text/plain\r\n\r\n"
      "Titi a vu un gros minet.\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"b\"; filename=\"toto.txt\"\r\n\r\n"
      "toto est dans un bateau\r\n--XyZ--\r\n";
  c.send(0, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 100));
  c.send(0, body.substr(100));  // (a part across segments)
  c.send(1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  // a second upload the capture cuts inside its file
  c.send(0,
         "POST /up2 HTTP/1.1\r\nHost: x\r\nContent-Type: Multipart/Form-Data; boundary=b\r\nContent-Length: 500\r\n\r\n"
         "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"cut.bin\"\r\n\r\nhello");
  write_list(test::tmpdir() + "/toto.md5", fmt::format("{}\n", md5_hex("toto est dans un bateau")));
  std::string rules =
      "alert http any any -> any any (file.data; content:\"minet\"; sid:1;)\n"
      "alert http any any -> any any (file.data; content:\"bateau\"; file.data; content:\"minet\"; sid:2;)\n"
      "alert http any any -> any any (file.data; content:\"bateau\"; content:\"minet\"; sid:3;)\n"  // one file: none
      "alert http any any -> any any (flow:to_client; file.data; content:\"minet\"; sid:4;)\n"      // the response's
      "alert http any any -> any any (file.name; content:\"toto.txt\"; sid:5;)\n"
      "alert http any any -> any any (filemd5:toto.md5; sid:6;)\n"
      "alert http any any -> any any (file.data; content:\"not a file\"; sid:7;)\n"  // a field, not a file
      "alert http any any -> any any (file.name; content:\"cut.bin\"; sid:8;)\n"
      // the client's side: its files, one by one (not the form's body), and the body itself
      "alert http any any -> any any (flow:to_server; file.data; content:\"toto\"; startswith; sid:9;)\n"
      "alert http any any -> any any (flow:to_server; file.data; content:\"--XyZ\"; sid:10;)\n"
      "alert http any any -> any any (flow:to_server; http.request_body; content:\"--XyZ\"; startswith; sid:11;)\n";
  auto r = run_ids("form", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2, 5, 6, 8, 9, 11}));
  std::map<std::string, nlohmann::json> by_name;
  for (auto& f : r.other["fileinfo"]) by_name[f["fileinfo"]["filename"]] = f;
  ASSERT_EQ(by_name.count("titi.txt"), 1u);
  EXPECT_EQ(by_name["titi.txt"]["fileinfo"]["size"], 24) << "the part's content, without the CRLF before the boundary";
  EXPECT_EQ(by_name["titi.txt"]["fileinfo"]["state"], "CLOSED");
  EXPECT_EQ(by_name["titi.txt"]["src_ip"], "10.0.0.1") << "an upload comes from the client";
  EXPECT_EQ(by_name["titi.txt"]["http"]["http_method"], "POST");
  ASSERT_EQ(by_name.count("toto.txt"), 1u);
  EXPECT_EQ(by_name["toto.txt"]["fileinfo"]["md5"], md5_hex("toto est dans un bateau"));
  EXPECT_EQ(by_name.count("note"), 0u);
  ASSERT_EQ(by_name.count("cut.bin"), 1u);
  EXPECT_EQ(by_name["cut.bin"]["fileinfo"]["state"], "TRUNCATED");
  EXPECT_EQ(by_name["cut.bin"]["fileinfo"]["size"], 5);
  EXPECT_FALSE(by_name["cut.bin"]["fileinfo"].contains("md5"));
}

// A POST's body that is no form is a file (Suricata's
// HtpRequestBodyHandlePOSTorPUT), named by the path; file.data on the
// client's side reads it.
TEST(IdsFiles, APostsBodyIsAFileUnlessAForm) {
  Conv c;
  c.send(0,
         "POST /api/submit.json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
         "{\"k\": \"evil\"}");
  c.send(1, "HTTP/1.1 204 No Content\r\n\r\n");
  auto r = run_ids("postfile", c.out,
                   "alert http any any -> any any (flow:to_server; file.data; content:\"evil\"; sid:1;)\n"
                   "alert http any any -> any any (file.name; content:\"submit.json\"; sid:2;)\n");
  ASSERT_TRUE(r.r->ok);
  std::vector<uint32_t> got = r.sids();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2}));
  ASSERT_EQ(r.other["fileinfo"].size(), 1u);
  EXPECT_EQ(r.other["fileinfo"][0]["fileinfo"]["filename"], "/api/submit.json");
  EXPECT_EQ(r.other["fileinfo"][0]["fileinfo"]["size"], 13);
  EXPECT_EQ(r.other["fileinfo"][0]["src_ip"], "10.0.0.1");
}

TEST(IdsStream, TcpPayloadRulesReadTheStreamWherePacketsJoinedIt) {
  Conv c;
  c.send(0, "GET /sec");  // "/secret" split across two segments
  c.send(0, "ret HTTP/1.0\r\n\r\n");
  c.send(1, "HTTP/1.0 200 OK\r\n\r\n");
  // a RST's data joins no stream: its packet is inspected
  c.out.push_back(ether(ip4(kClient, kServer, 6, c.port, c.server, "bye now", c.cseq, c.sseq, 0x14)));
  c.out.push_back(ether(ip4(kClient, kServer, 17, 5353, 53, "udp /secret")));
  std::string rules =
      "alert tcp any any -> any any (content:\"/secret\"; sid:1;)\n"                 // across the segments
      "alert tcp-pkt any any -> any any (content:\"/secret\"; sid:2;)\n"             // packets only: never whole
      "alert tcp any any -> any any (content:\"ret\"; depth:3; sid:3;)\n"            // from the inspection's start
      "alert tcp any any -> any any (content:\"ret\"; dsize:<20; sid:4;)\n"          // a packet's size: on packets
      "alert tcp any any -> any any (content:\"bye\"; sid:5;)\n"                     // the RST's data
      "alert ip any any -> any any (content:\"/secret\"; flow:to_server; sid:6;)\n"  // TCP's stream, UDP's packet
      "alert tcp any any -> any any (content:\"GET /sec\"; content:\"ret\"; distance:0; sid:7;)\n";  // the seam
  auto r = run_ids("streampayload", c.out, rules);
  ASSERT_TRUE(r.r->ok);
  std::map<uint32_t, int> n;
  for (auto& a : r.eve) ++n[a["alert"]["signature_id"]];
  EXPECT_EQ(n, (std::map<uint32_t, int>{{1, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 2}, {7, 1}}));
  for (auto& a : r.eve)
    if (a["alert"]["signature_id"] == 6 && a["proto"] == "UDP") {
      EXPECT_FALSE(a.contains("stream")) << a;
    }
  // STREAM_PAYLOAD false: every payload rule reads packets, as Snort 2
  auto pk = run_ids("streampayload-off", c.out, rules, false, false, ", STREAM_PAYLOAD false");
  ASSERT_TRUE(pk.r->ok);
  std::map<uint32_t, int> m;
  for (auto& a : pk.eve) ++m[a["alert"]["signature_id"]];
  EXPECT_EQ(m, (std::map<uint32_t, int>{{3, 1}, {4, 1}, {5, 1}, {6, 1}}));
}

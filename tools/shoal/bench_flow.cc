// shoal bench-flow: the flow layer on one core.
//   table      FlowTable at 1K, 1M and 10M flows: inserts and lookups per
//              second (a packet each: key in, flow handle, counters and the
//              TCP/expiry lists updated; one at a time, and 32 at a time as
//              FlowIPManager does it), beside a bare open-addressing table
//              of the same keys (linear probing, key and value inline: the
//              rte_hash class of reference) in the same run
//   reassembly TCPReassembler's library on 1000 connections, in order and
//              with 10% of the segments swapped with a neighbour, Gbit/s of
//              stream delivered; then with each segment through the IDS's TCP
//              session checks first (flow::TcpSession), the ratio to alone
//   batch-reasm (with a device) GASPP's batch reassembly on the device
//              against the one-by-one reassembler, trains of 16 segments,
//              batches of 4096, in order and 10% swapped: Gbit/s, the share
//              the device placed, and the out-of-order bytes held
//   device     (with a device) the device flow table at 1M flows, aggregates
//              of 64K frames, against the CPU table on one core; and with
//              TCP window tracking on the window case's connections
//   dev-flood  (with a device) the synflood case on the device table (or a
//              table of a quarter of a smaller flood): SYNs a second, copies
//              included, the connections kept, the evictions ahead of the
//              aggregates; no packet may find the table full
//   window     TCP window tracking's cost in the flow table: connections
//              whose numbers follow (handshake, then data and ACKs by turns:
//              no trains) in runs of 8 packets of a connection, 32 at a
//              time, with and without it: ns a packet
//   router     shoal bench's IPv4 router path (170,000 random prefixes)
//              with and without FlowIPManager in front
//              of the route lookup, packets per second: 1K flows (the table
//              in cache: the layer's own work), 1M flows in runs of 8 packets,
//              and 1M flows round robin (every packet a cache miss); the
//              whole run, and the steady state (the slope between runs of
//              N and 3N packets: no start where every flow is new)
//   synflood   a table of 100K flows flooded with 10M random-tuple SYNs while
//              1000 established connections keep sending: the table's memory,
//              the process's resident memory, how many established
//              connections survive, and their packets' cost during the flood
//              against without it
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "common.hh"
#include "shoal/flow/batch_reassembly.hh"
#include "shoal/flow/devtable.hh"
#include "shoal/flow/flowtable.hh"
#include "shoal/flow/reassembly.hh"
#include "shoal/flow/tcp_session.hh"
#include "shoal/io/traffic.hh"
#include "shoal/kernels/steps/flow_track.hh"

namespace shoal::tool {

namespace {

using clk = std::chrono::steady_clock;

// The i-th flow's key, as the parser makes it (UDP, IPv4).
k::ParsedKey key_of(uint64_t i, uint32_t salt = 0) {
  k::ParsedKey p;
  p.kind = k::KeyKind::Conn;
  p.key.family = 4;
  p.key.proto = 17;
  uint32_t h = k::mix32(uint32_t(i) ^ salt), g = k::mix32(uint32_t(i >> 32) ^ h ^ 0x5bd1e995u ^ salt);
  p.key.a[0] = 0x0a000000u | (h & 0xffffff);
  p.key.b[0] = 0xc0000000u | (g & 0xffffff);
  p.key.pa = uint16_t(i);
  p.key.pb = 53;
  p.l4_off = 20;
  return p;
}

// The reference: linear probing, the key and a value inline, no expiry.
class BareTable {
 public:
  explicit BareTable(size_t n) {
    size_t s = 16;
    while (s < n * 2) s <<= 1;
    slots_.assign(s, Slot{});
    mask_ = s - 1;
  }
  uint32_t find_or_insert(const k::ConnKey& key, uint32_t v) {
    uint32_t h = k::conn_hash(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) {
        s.used = 1;
        s.key = key;
        s.val = v;
        return v;
      }
      if (s.key == key) return s.val;
    }
  }

  // n lookups the way a vector processor makes them: every hash and slot
  // prefetch first, then the probes (the floor for a batch of new flows).
  void find_batch(const k::ConnKey* keys, uint32_t n, uint32_t* vals) {
    uint32_t h[32];
    for (uint32_t i = 0; i < n; ++i) {
      h[i] = k::conn_hash(keys[i]);
      __builtin_prefetch(&slots_[h[i] & mask_]);
    }
    for (uint32_t i = 0; i < n; ++i) {
      vals[i] = 0;
      for (size_t j = h[i] & mask_; slots_[j].used; j = (j + 1) & mask_)
        if (slots_[j].key == keys[i]) {
          vals[i] = slots_[j].val;
          break;
        }
    }
  }

 private:
  struct Slot {
    k::ConnKey key;
    uint32_t val = 0, used = 0;
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

uint64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, res = 0;
  f >> size >> res;
  return res * uint64_t(sysconf(_SC_PAGESIZE));
}

struct NullSink : flow::StreamSink {
  uint64_t bytes = 0;
  void stream_data(uint32_t, uint8_t, uint64_t, const uint8_t*, uint32_t n) override { bytes += n; }
  void stream_gap(uint32_t, uint8_t, uint64_t, uint64_t) override {}
};

// Real TCP connections for the window cases: a handshake, then data and
// ACKs whose numbers follow, by turns, in runs of 8 packets of a
// connection; `total` IPv4 packets (their 40 bytes of headers) into buf.
void window_traffic(uint64_t flows, uint64_t total, std::vector<uint8_t>& buf) {
  buf.assign(total * 40, 0);
  struct Conn {
    uint32_t cs, ss;
    uint8_t stage;
  };
  std::vector<Conn> conns(flows);
  std::mt19937 rng(99);
  for (auto& c : conns) c = {uint32_t(rng()), uint32_t(rng()), 0};
  for (uint64_t n = 0; n < total;) {
    const uint64_t f = rng() % flows;
    Conn& c = conns[f];
    for (int r = 0; r < 8 && n < total; ++r, ++n) {
      uint8_t* ip = &buf[n * 40];
      // stages: SYN, SYN-ACK, ACK, then data from the client and the server's ACK, by turns
      const bool reply = c.stage == 1 || (c.stage >= 3 && c.stage % 2 == 0);
      const uint32_t payload = c.stage >= 3 && !reply ? 1000 : 0;
      const uint8_t flags = c.stage == 0 ? k::kTcpSyn : c.stage == 1 ? k::kTcpSyn | k::kTcpAck : k::kTcpAck;
      ip[0] = 0x45, ip[8] = 64, ip[9] = 6;
      k::store_be16(ip + 2, uint16_t(40 + payload));
      k::store_be32(ip + 12, reply ? 0x0a800000u : 0x0a000000u | uint32_t(f));
      k::store_be32(ip + 16, reply ? 0x0a000000u | uint32_t(f) : 0x0a800000u);
      uint8_t* t = ip + 20;
      k::store_be16(t, reply ? 80 : uint16_t(1024 + f % 60000));
      k::store_be16(t + 2, reply ? uint16_t(1024 + f % 60000) : 80);
      k::store_be32(t + 4, reply ? c.ss : c.cs);
      k::store_be32(t + 8, c.stage == 0 ? 0 : reply ? c.cs : c.ss);
      t[12] = 0x50, t[13] = flags;
      k::store_be16(t + 14, 65535);
      if (c.stage == 0) ++c.cs;
      if (c.stage == 1) ++c.ss;
      c.cs += payload;
      c.stage = c.stage < 4 ? uint8_t(c.stage + 1) : 3;
    }
  }
}

}  // namespace

int cmd_bench_flow(int argc, char** argv) {
  CLI::App app{"shoal bench-flow: the flow table, TCP reassembly, the flow layer's cost and a SYN flood, one core"};
  std::string out = "bench/results/flow-latest.json";
  std::vector<uint64_t> sizes{1000, 1000000, 10000000};
  uint64_t flood = 10000000;
  bool router = true;
  uint64_t router_packets = 20000000;
  std::string device = "auto";
  app.add_option("--out", out, "JSON output file");
  app.add_option("--device", device, "the device table's backend: auto, host, cuda, none");
  app.add_option("--flows", sizes, "table sizes");
  app.add_option("--flood", flood, "SYNs in the flood");
  app.add_option("--router", router, "also time the router path with and without the flow layer (default true)");
  app.add_option("--router-packets", router_packets, "packets per router run (default 20,000,000)");
  int reps = 3;
  app.add_option("--reps", reps, "runs of each window and router configuration, the best kept (default 3)")
      ->check(CLI::PositiveNumber);
  std::vector<uint64_t> window_flows{1000, 100000};
  uint64_t window_packets = 4000000;
  app.add_option("--window-flows", window_flows, "connections in the window tracking case (default 1000 100000)");
  app.add_option("--window-packets", window_packets, "packets in the window tracking case (default 4,000,000)");
  CLI11_PARSE(app, argc, argv);

  nlohmann::json j = bench_record("flow");
  j["device"] = cuda_device_record();
  fmt::print("shoal bench-flow on {}, one core\n", cpu_model());
  fmt::print("{:<12} {:>10} {:>14} {:>14} {:>10}\n", "case", "flows", "Mops/s", "bare Mops/s", "ratio");
  uint64_t sink = 0;
  double bare_batch_ns_1m = 0;  // a bare batched lookup at 1M flows: the floor of the router rows' cost
  for (uint64_t n : sizes) {
    flow::FlowTable t;
    flow::Config c;
    c.capacity = uint32_t(n);
    t.init(c);
    BareTable bare(n);
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(1));
    uint64_t now = 1'000'000'000;
    uint8_t dir;
    auto t0 = clk::now();
    for (uint64_t i = 0; i < n; ++i) sink += t.track(key_of(i), 64, now, dir);
    double ins = double(n) / since(t0);
    t0 = clk::now();
    for (uint64_t i = 0; i < n; ++i) sink += bare.find_or_insert(key_of(i).key, uint32_t(i));
    double bins = double(n) / since(t0);
    if (t.size() != n) {
      fmt::print(stderr, "bench-flow: the table holds {} flows, not {}\n", t.size(), n);
      return 1;
    }
    // lookups: every flow once per round, in random order, rounds until 0.5 s
    uint64_t done = 0, bdone = 0;
    t0 = clk::now();
    do {
      for (uint32_t i : order) sink += t.track(key_of(i), 64, now, dir);
      done += n;
    } while (since(t0) < 0.5);
    double look = double(done) / since(t0);
    t0 = clk::now();
    do {
      for (uint32_t i : order) sink += bare.find_or_insert(key_of(i).key, 0);
      bdone += n;
    } while (since(t0) < 0.5);
    double blook = double(bdone) / since(t0);
    // the same lookups 32 at a time, as FlowIPManager makes them (prefetched)
    std::vector<k::ParsedKey> keys(32);
    std::vector<uint32_t> lens(32, 64), ids(32);
    std::vector<uint64_t> nows(32, now);
    std::vector<uint8_t> dirs(32);
    uint64_t vdone = 0;
    t0 = clk::now();
    do {
      for (size_t i = 0; i + 32 <= n; i += 32) {
        for (int q = 0; q < 32; ++q) keys[size_t(q)] = key_of(order[i + size_t(q)]);
        t.track_batch(keys.data(), lens.data(), nows.data(), 32, ids.data(), dirs.data());
        sink += ids[0];
      }
      vdone += n / 32 * 32;
    } while (since(t0) < 0.5);
    double vlook = double(vdone) / since(t0);
    std::vector<k::ConnKey> bkeys(32);
    uint64_t bvdone = 0;
    t0 = clk::now();
    do {
      for (size_t i = 0; i + 32 <= n; i += 32) {
        for (int q = 0; q < 32; ++q) bkeys[size_t(q)] = key_of(order[i + size_t(q)]).key;
        bare.find_batch(bkeys.data(), 32, ids.data());
        sink += ids[0];
      }
      bvdone += n / 32 * 32;
    } while (since(t0) < 0.5);
    double bvlook = double(bvdone) / since(t0);
    if (n == 1000000) bare_batch_ns_1m = 1e9 / bvlook;
    fmt::print("{:<12} {:>10} {:>14.2f} {:>14.2f} {:>9.2f}x\n", "insert", n, ins / 1e6, bins / 1e6, ins / bins);
    fmt::print("{:<12} {:>10} {:>14.2f} {:>14.2f} {:>9.2f}x\n", "lookup", n, look / 1e6, blook / 1e6, look / blook);
    fmt::print("{:<12} {:>10} {:>14.2f} {:>14.2f} {:>9.2f}x\n", "lookup x32", n, vlook / 1e6, bvlook / 1e6,
               vlook / bvlook);
    j["results"].push_back({{"case", "table"},
                            {"flows", n},
                            {"insert_per_sec", ins},
                            {"bare_insert_per_sec", bins},
                            {"lookup_per_sec", look},
                            {"bare_lookup_per_sec", blook},
                            {"batch32_lookup_per_sec", vlook},
                            {"bare_batch32_lookup_per_sec", bvlook},
                            {"table_bytes", t.memory_bytes()}});
  }

  // Reassembly: 1000 connections of 1 MB, 1460-byte segments, round robin.
  for (double swap : {0.0, 0.1}) {
    const uint32_t conns = 1000, per = 1u << 20, mss = 1460;
    std::vector<uint8_t> payload(mss);
    for (auto& b : payload) b = uint8_t(rand());
    std::vector<std::vector<uint32_t>> segs(conns);  // each connection's segment offsets, in sending order
    std::mt19937 rng(3);
    for (auto& s : segs) {
      for (uint32_t off = 0; off < per; off += mss) s.push_back(off);
      for (size_t i = 0; i + 1 < s.size(); ++i)
        if (std::uniform_real_distribution<>(0, 1)(rng) < swap) std::swap(s[i], s[i + 1]), ++i;
    }
    // alone, then each segment first through the connection's TCP session
    // checks (flow::TcpSession, as the IDS runs them: handshake, then the
    // client's data and the server's ACK of it, with timestamps; the checks'
    // time counts both)
    double alone = 0;
    for (bool checked : {false, true}) {
      flow::Reassembler r;
      NullSink ns;
      r.set_sink(&ns);
      std::vector<flow::Stream> st(conns);
      std::vector<flow::TcpSession> ss(checked ? conns : 0);
      struct Contig {
        uint32_t next = 0, held_off = 0, held_end = 0;
      };
      std::vector<Contig> contig(checked ? conns : 0);
      const flow::TcpSession::Config sc;
      auto tcp = [](uint8_t flags, uint32_t seq, uint32_t ack, uint32_t len, uint32_t ts) {
        flow::TcpSeg s;
        s.flags = flags, s.seq = seq, s.ack = ack, s.len = len, s.win = 65535, s.has_ws = true, s.ws = 7;
        s.has_ts = true, s.tsval = ts, s.tsecr = ts, s.secs = 1000;
        return s;
      };
      bool valid = true;
      for (uint32_t cn = 0; cn < conns; ++cn) {
        r.segment(st[cn], cn + 1, 0, 0, k::kTcpSyn, nullptr, 0);
        if (checked) {
          ss[cn].check(tcp(k::kTcpSyn, 0, 0, 0, 1), 0, flow::Overlap::Default, sc, valid);
          ss[cn].check(tcp(k::kTcpSyn | k::kTcpAck, 9, 1, 0, 1), 1, flow::Overlap::Default, sc, valid);
          ss[cn].check(tcp(k::kTcpAck, 1, 10, 0, 1), 0, flow::Overlap::Default, sc, valid);
        }
      }
      uint64_t rejected = 0;
      auto t0 = clk::now();
      size_t nseg = segs[0].size();
      for (size_t i = 0; i < nseg; ++i)
        for (uint32_t cn = 0; cn < conns; ++cn) {
          uint32_t off = segs[cn][i];
          uint32_t len = std::min(mss, per - off);
          if (checked) {
            ss[cn].check(tcp(k::kTcpAck, 1 + off, 10, len, 2 + uint32_t(i)), 0, flow::Overlap::Default, sc, valid);
            if (!ss[cn].taken()) {
              ++rejected;
              continue;
            }
            // the server's ACK of what it has in order (a window of 65535 << 7)
            Contig& g = contig[cn];
            if (off == g.next) {
              g.next = off + len;
              if (g.held_end && g.held_off == g.next) g.next = g.held_end, g.held_end = 0;
            } else {
              g.held_off = off, g.held_end = off + len;  // (the segments swapped are neighbours)
            }
            ss[cn].check(tcp(k::kTcpAck, 10, 1 + g.next, 0, 2 + uint32_t(i)), 1, flow::Overlap::Default, sc, valid);
          }
          r.segment(st[cn], cn + 1, 0, 1 + off, k::kTcpAck, payload.data(), len);
        }
      double el = since(t0);
      for (uint32_t cn = 0; cn < conns; ++cn) r.finish(st[cn], cn + 1);
      if (ns.bytes != uint64_t(conns) * per || rejected) {
        fmt::print(stderr, "bench-flow: reassembly delivered {} bytes, not {} ({} segments rejected)\n", ns.bytes,
                   uint64_t(conns) * per, rejected);
        return 1;
      }
      double gbps = double(ns.bytes) * 8 / el / 1e9;
      if (!checked) alone = gbps;
      fmt::print("{:<12} {:>10} {:>14.2f} {:>14} {:>10}   Gbit/s, {:.0f}% swapped, peak buffered {} KiB{}\n",
                 checked ? "+session" : "reassembly", conns, gbps, "-",
                 checked ? fmt::format("{:.2f}x", gbps / alone) : "-", swap * 100,
                 r.counters().buffered_peak.get() / 1024,
                 checked ? ", each segment through the TCP session checks first (/ alone)" : "");
      j["results"].push_back({{"case", checked ? "reassembly_session" : "reassembly"},
                              {"connections", conns},
                              {"swapped", swap},
                              {"gbit_per_sec", gbps},
                              {"out_of_order", r.counters().out_of_order.get()},
                              {"buffered_peak", r.counters().buffered_peak.get()}});
    }
  }

  // TCP window tracking's cost in the flow table: real TCP connections (a
  // handshake, then data and ACKs whose numbers follow, by turns, in runs of
  // 8 packets of a connection) tracked 32 at a time, with and without the
  // window state.
  for (uint64_t flows : window_flows) {
    const uint64_t total = std::max<uint64_t>(window_packets, flows * 8);
    std::vector<uint8_t> buf;
    window_traffic(flows, total, buf);
    std::vector<k::ParsedKey> keys(total);
    std::vector<uint32_t> lens(total, 40);
    std::vector<uint64_t> nows(total);
    std::vector<const uint8_t*> ips(total);
    for (uint64_t n = 0; n < total; ++n) {
      ips[n] = &buf[n * 40];
      k::parse_conn_key(ips[n], 40, keys[n]);
      nows[n] = 1'000'000'000ull + n;
    }
    double ns[2] = {1e30, 1e30};
    uint64_t invalid = 0;
    std::vector<uint32_t> ids(32);
    std::vector<uint8_t> dirs(32), facts(32);
    for (int rep = 0; rep < reps; ++rep)
      for (int w = 0; w < 2; ++w) {
        flow::FlowTable t;
        flow::Config c;
        c.capacity = uint32_t(flows * 2);
        c.tcp_window = w == 1;
        t.init(c);
        auto t0 = std::chrono::steady_clock::now();
        for (uint64_t i = 0; i < total; i += 32) {
          const uint32_t n = uint32_t(std::min<uint64_t>(32, total - i));
          t.track_batch(&keys[i], &lens[i], &nows[i], n, ids.data(), dirs.data(), facts.data(), w ? &ips[i] : nullptr);
          sink += ids[0] + facts[0];
        }
        ns[w] = std::min(ns[w], since(t0) / double(total) * 1e9);
        if (w) {
          const flow::Counters& cnt = t.counters();
          invalid = cnt.tcp_seq_over.get() + cnt.tcp_ack_over.get() + cnt.tcp_bad_rst.get() + cnt.tcp_bad_state.get();
        }
      }
    if (invalid) {
      fmt::print(stderr, "bench-flow: window: {} of {} valid segments found invalid\n", invalid, total);
      return 1;
    }
    fmt::print(
        "{:<12} {:>10} {:>14.2f} {:>14.2f} {:>9.2f}x   Mpkt/s with / without TCP window tracking: "
        "{:.1f} ns a packet more ({:.1f} and {:.1f} ns), runs of 8\n",
        "window", flows, 1e3 / ns[1], 1e3 / ns[0], ns[0] / ns[1], ns[1] - ns[0], ns[1], ns[0]);
    j["results"].push_back({{"case", "window"},
                            {"flows", flows},
                            {"packets", total},
                            {"ns_per_packet_without", ns[0]},
                            {"ns_per_packet_with", ns[1]},
                            {"extra_ns", ns[1] - ns[0]}});
  }

  // The flow layer's cost on the router path.
  if (router) {
    std::string dir = std::filesystem::temp_directory_path() / ("shoal-bench-flow-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::string routes = dir + "/routes.txt";
    {
      // the router case's kind of table (shoal bench router): 170,000 random
      // prefixes of /16 to /24 over three ports, and a default route
      std::ofstream f(routes);
      std::mt19937 rng(2024);
      f << "0.0.0.0/0 0\n";
      for (int i = 0; i < 170000; ++i) {
        uint32_t len = 16 + rng() % 9, a = uint32_t(rng()) & (~0u << (32 - len));
        f << fmt::format("{}.{}.{}.{}/{} {}\n", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, len, i % 3);
      }
    }
    // shoal bench's router path (CheckIPHeader, DirectIPLookup, DecIPTTL,
    // EtherRewrite), with FlowIPManager before the lookup
    auto cfg = [&](bool flows, uint64_t nflows, int burst, uint64_t limit) {
      std::string outs;
      for (int o = 0; o < 3; ++o)
        outs += fmt::format(
            " rt[{0}] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:0{0}) -> "
            "c{1} :: Counter -> Discard;",
            o, o ? std::to_string(o) : "");
      return fmt::format(
          "FastUDPFlows(LENGTH 64, FLOWS {}, FLOWSIZE {}, BURST 32, DSTRANDOM true, LIMIT {}, STOP true) -> "
          "Strip(14) -> CheckIPHeader -> {} rt :: DirectIPLookup(FILE {});{}",
          nflows, burst, limit, flows ? "FlowIPManager(CAPACITY 2000000) ->" : "", routes, outs);
    };
    struct Point {
      uint64_t flows;
      int burst;
    };
    for (Point pt : {Point{1000, 8}, Point{1000000, 8}, Point{1000000, 1}}) {
      // Each configuration over router_packets and over three times as many:
      // the whole run's rate, and the steady state's cost per packet (the
      // slope between the two runs' times: without the start, where every
      // flow is new, nor the end's flush).
      double pps[2] = {0, 0}, secs[2][2] = {{1e30, 1e30}, {1e30, 1e30}};
      for (int rep = 0; rep < reps; ++rep)
        for (int len = 0; len < 2; ++len)
          for (int f = 0; f < 2; ++f) {
            uint64_t packets = 0, limit = router_packets * (len ? 3 : 1);
            std::string err;
            std::map<std::string, std::string> got;
            double p =
                graph_run(cfg(f == 1, pt.flows, pt.burst, limit), "", {"c1.count", "c2.count"}, &got, packets, err);
            if (p < 0) {
              fmt::print(stderr, "bench-flow: router: {}\n", err);
              return 1;
            }
            // graph_run counts c's packets; the path has three outputs
            uint64_t all = packets;
            for (const char* h : {"c1.count", "c2.count"}) all += got.count(h) ? std::stoull(got[h]) : 0;
            if (all != limit) {
              fmt::print(stderr, "bench-flow: router: {} of {} packets counted\n", all, limit);
              return 1;
            }
            if (packets) p *= double(all) / double(packets);
            secs[f][len] = std::min(secs[f][len], double(all) / p);
            if (!len) pps[f] = std::max(pps[f], p);
          }
      double steady_ns[2];
      for (int f = 0; f < 2; ++f) steady_ns[f] = (secs[f][1] - secs[f][0]) / double(2 * router_packets) * 1e9;
      double steady_cost = steady_ns[0] > 0 && steady_ns[1] > 0 ? 1 - steady_ns[0] / steady_ns[1] : 0;
      double cost = 1 - pps[1] / pps[0];
      double ns = 1e9 / pps[1] - 1e9 / pps[0];
      // What a bare table's batched lookup alone (no parse, no update) would
      // cost this path, as a share of the path with it: a floor for any
      // per-packet 5-tuple flow table (a run of packets pays it once).
      double floor_ns = pt.flows >= 1000000 ? bare_batch_ns_1m / pt.burst : 0;
      double floor_cost = floor_ns > 0 ? floor_ns / (1e9 / pps[0] + floor_ns) : 0;
      fmt::print(
          "{:<12} {:>10} {:>14.2f} {:>14.2f} {:>9.2f}x   Mpps with / without the flow layer, runs of {}: "
          "{:.1f}% cost, {:.1f} ns a packet; steady state {:.1f}%, {:.1f} ns{}\n",
          "router", pt.flows, pps[1] / 1e6, pps[0] / 1e6, pps[1] / pps[0], pt.burst, cost * 100, ns, steady_cost * 100,
          steady_ns[1] - steady_ns[0],
          floor_ns > 0 ? fmt::format(" (a bare batched lookup alone: {:.1f} ns, {:.1f}%)", floor_ns, floor_cost * 100)
                       : std::string());
      j["results"].push_back({{"case", "router"},
                              {"flows", pt.flows},
                              {"packets_per_flow_run", pt.burst},
                              {"pps_with_flows", pps[1]},
                              {"pps_without", pps[0]},
                              {"cost", cost},
                              {"ns_per_packet", ns},
                              {"steady_ns_without", steady_ns[0]},
                              {"steady_ns_with", steady_ns[1]},
                              {"steady_cost", steady_cost},
                              {"bare_lookup_floor_ns", floor_ns},
                              {"bare_lookup_floor_cost", floor_cost}});
    }
    std::filesystem::remove_all(dir);
  }

  // The device table: 1M flows, aggregates of 64K frames (copies included),
  // against the CPU table on one core on the same frames.
  if (device != "none") {
    dev::DeviceOptions o;
    o.kind = device;
    std::string detail, err;
    auto d = dev::open_device(o, detail, err);
    if (!d) {
      fmt::print(stderr, "bench-flow: device: {}\n", err);
      return 1;
    }
    const uint32_t flows = 1000000, batch = 65536;
    io::TrafficSpec spec;
    spec.flows = flows;
    io::TrafficGen g(spec);
    uint32_t flen = g.length_of(0);
    std::vector<uint8_t> frames(size_t(batch) * flen);
    std::vector<uint32_t> offs(batch), lens(batch, flen);
    std::vector<uint64_t> nows(batch, 1);  // (the CPU table's time below)
    flow::DeviceFlowTable dt;
    if (!dt.init(d, 2 * flows, err)) {
      fmt::print(stderr, "bench-flow: device: {}\n", err);
      return 1;
    }
    flow::FlowTable ct;
    flow::Config cc;
    cc.capacity = 2 * flows;
    ct.init(cc);
    std::vector<uint32_t> ids;
    std::vector<uint8_t> dirs;
    double dev_s = 0, cpu_s = 0;
    uint64_t done = 0;
    uint8_t dir;
    for (uint64_t base = 0; done < 4ull * flows; base += batch, done += batch) {
      for (uint32_t i = 0; i < batch; ++i) {
        offs[i] = i * flen;
        g.build((base + i) % flows, frames.data() + offs[i]);
      }
      auto t0 = clk::now();
      if (!dt.track(frames.data(), frames.size(), offs.data(), lens.data(), batch, ids, dirs, err, nows.data())) {
        fmt::print(stderr, "bench-flow: device: {}\n", err);
        return 1;
      }
      dev_s += since(t0);
      t0 = clk::now();
      for (uint32_t i = 0; i < batch; ++i) {
        uint32_t ipl = 0;
        const uint8_t* ip = k::frame_ip(frames.data() + offs[i], flen, ipl);
        k::ParsedKey pk;
        k::parse_conn_key(ip, ipl, pk);
        sink += ct.track(pk, ipl, 1, dir);
      }
      cpu_s += since(t0);
    }
    if (dt.counters().live != ct.size() || dt.full_packets()) {
      fmt::print(stderr,
                 "bench-flow: device: the device table holds {} flows ({} packets found no room), the CPU's {}\n",
                 dt.counters().live, dt.full_packets(), ct.size());
      return 1;
    }
    double dps = double(done) / dev_s, cps = double(done) / cpu_s;
    fmt::print(
        "{:<12} {:>10} {:>14.2f} {:>14.2f} {:>9.2f}x   M packets/s on the {} device table (copies included) / "
        "the CPU table, one core\n",
        "device", flows, dps / 1e6, cps / 1e6, dps / cps, d->kind());
    j["results"].push_back({{"case", "device_table"},
                            {"device", d->kind()},
                            {"flows", flows},
                            {"aggregate", batch},
                            {"device_pps", dps},
                            {"cpu_pps", cps}});

    // The device table with TCP window tracking against the CPU table's, on
    // the window case's connections (its largest count, its packets), the
    // same aggregates.
    if (!window_flows.empty()) {
      const uint64_t conns = *std::max_element(window_flows.begin(), window_flows.end());
      const uint64_t total = std::max<uint64_t>(window_packets, conns * 8);
      std::vector<uint8_t> ipb;
      window_traffic(conns, total, ipb);
      flow::Config wc;
      wc.capacity = uint32_t(2 * conns);
      wc.tcp_window = true;
      flow::DeviceFlowTable dw;
      if (!dw.init(d, wc, err)) {
        fmt::print(stderr, "bench-flow: device: {}\n", err);
        return 1;
      }
      flow::FlowTable cw;
      cw.init(wc);
      const uint32_t wlen = 14 + 40;
      std::vector<uint8_t> wf(size_t(batch) * wlen, 0);
      std::vector<uint32_t> woffs(batch), wlens(batch, wlen), cids(32);
      std::vector<uint64_t> wnows(batch);
      std::vector<uint8_t> facts, cdirs(32), cfacts(32);
      std::vector<k::ParsedKey> keys(32);
      std::vector<uint32_t> iplens(32, 40);
      const uint8_t* ips[32];
      double wdev_s = 0, wcpu_s = 0;
      uint64_t dev_invalid = 0;
      for (uint64_t base = 0; base < total; base += batch) {
        const uint32_t n = uint32_t(std::min<uint64_t>(batch, total - base));
        for (uint32_t i = 0; i < n; ++i) {
          woffs[i] = i * wlen;
          wf[woffs[i] + 12] = 0x08;  // IPv4
          std::memcpy(&wf[woffs[i] + 14], &ipb[(base + i) * 40], 40);
          wnows[i] = 1'000'000'000ull + base + i;
        }
        auto t0 = clk::now();
        if (!dw.track(wf.data(), size_t(n) * wlen, woffs.data(), wlens.data(), n, ids, dirs, err, wnows.data(),
                      &facts)) {
          fmt::print(stderr, "bench-flow: device: {}\n", err);
          return 1;
        }
        wdev_s += since(t0);
        for (uint32_t i = 0; i < n; ++i) dev_invalid += facts[i] & flow::kFactInvalid;
        t0 = clk::now();
        for (uint32_t i = 0; i < n; i += 32) {
          const uint32_t m = std::min<uint32_t>(32, n - i);
          for (uint32_t q = 0; q < m; ++q) {
            ips[q] = &wf[woffs[i + q] + 14];
            k::parse_conn_key(ips[q], 40, keys[q]);
          }
          cw.track_batch(keys.data(), iplens.data(), &wnows[i], m, cids.data(), cdirs.data(), cfacts.data(), ips);
          sink += cids[0] + cfacts[0];
        }
        wcpu_s += since(t0);
      }
      const flow::Counters& cnt = cw.counters();
      const uint64_t cpu_invalid =
          cnt.tcp_seq_over.get() + cnt.tcp_ack_over.get() + cnt.tcp_bad_rst.get() + cnt.tcp_bad_state.get();
      if (dev_invalid || cpu_invalid || dw.counters().live != cw.size() || dw.full_packets()) {
        fmt::print(stderr,
                   "bench-flow: device window: {} (device) and {} (CPU) valid segments found invalid; {} flows on "
                   "the device, {} on the CPU\n",
                   dev_invalid / flow::kFactInvalid, cpu_invalid, dw.counters().live, cw.size());
        return 1;
      }
      const double wdps = double(total) / wdev_s, wcps = double(total) / wcpu_s;
      fmt::print(
          "{:<12} {:>10} {:>14.2f} {:>14.2f} {:>9.2f}x   M packets/s with TCP window tracking on the {} device table "
          "(copies included) / the CPU table, one core\n",
          "device-win", conns, wdps / 1e6, wcps / 1e6, wdps / wcps, d->kind());
      j["results"].push_back({{"case", "device_window"},
                              {"device", d->kind()},
                              {"flows", conns},
                              {"aggregate", batch},
                              {"device_pps", wdps},
                              {"cpu_pps", wcps}});
    }

    // The SYN flood on the device table: established connections, then
    // random-tuple SYNs with one of theirs every 10, in aggregates; the table
    // evicts ahead of each aggregate that would not fit (the flows nearest
    // their expiry first), so no packet finds it full and the connections
    // stay. Capacity: the CPU case's 100,000, or a quarter of a smaller flood.
    if (flood > 0) {
      const uint32_t cap = flood >= 1000000 ? 100000 : uint32_t(std::max<uint64_t>(2000, flood / 4)), est = 1000;
      const uint32_t flen = 54;
      auto tcp_frame = [](uint8_t* f, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp, uint8_t flags) {
        std::memset(f, 0, 54);
        f[12] = 0x08;  // IPv4
        uint8_t* ip = f + 14;
        ip[0] = 0x45, ip[3] = 40, ip[8] = 64, ip[9] = 6;
        for (int b = 0; b < 4; ++b)
          ip[12 + b] = uint8_t(src >> (24 - 8 * b)), ip[16 + b] = uint8_t(dst >> (24 - 8 * b));
        uint8_t* t = ip + 20;
        t[0] = uint8_t(sp >> 8), t[1] = uint8_t(sp), t[2] = uint8_t(dp >> 8), t[3] = uint8_t(dp);
        t[12] = 0x50, t[13] = flags, t[14] = 0xff;
      };
      const uint32_t server = 0xc0a80001u;
      auto client = [](uint32_t i) { return 0x0a000000u + i; };
      flow::DeviceFlowTable df;
      if (!df.init(d, cap, err)) {
        fmt::print(stderr, "bench-flow: device flood: {}\n", err);
        return 1;
      }
      const uint32_t agg = std::min(batch, cap / 4);  // (aggregates a table can take)
      const uint32_t room = std::max(agg, est);       // (the handshakes: one aggregate)
      std::vector<uint8_t> ff(size_t(room) * flen);
      std::vector<uint32_t> foffs(room), flens(room, flen);
      for (uint32_t i = 0; i < room; ++i) foffs[i] = i * flen;
      std::vector<uint64_t> fnows(room);
      uint64_t now = 1'000'000'000;
      auto run = [&](uint32_t n) {
        std::fill(fnows.begin(), fnows.begin() + n, now);
        return df.track(ff.data(), size_t(n) * flen, foffs.data(), flens.data(), n, ids, dirs, err, fnows.data());
      };
      bool ok = true;
      for (uint8_t fl : {k::kTcpSyn, uint8_t(k::kTcpSyn | k::kTcpAck), k::kTcpAck}) {
        for (uint32_t i = 0; i < est; ++i)
          if (fl == (k::kTcpSyn | k::kTcpAck))
            tcp_frame(&ff[foffs[i]], server, client(i), 443, uint16_t(1024 + i), fl);
          else
            tcp_frame(&ff[foffs[i]], client(i), server, uint16_t(1024 + i), 443, fl);
        ok = ok && run(est);
        now += 1000;
      }
      std::mt19937_64 rng(0xf100d);
      uint64_t sent = 0, est_next = 0;
      double flood_s = 0;
      while (ok && sent < flood) {
        uint32_t n = 0;
        for (; n < agg && sent < flood; ++n) {
          if (n % 11 == 10) {
            const uint32_t c = uint32_t(est_next++ % est);
            tcp_frame(&ff[foffs[n]], client(c), server, uint16_t(1024 + c), 443, k::kTcpAck);
          } else {
            const uint64_t r = rng();
            tcp_frame(&ff[foffs[n]], uint32_t(r) | 0x80000000u, server, uint16_t(r >> 32), 80, k::kTcpSyn);
            ++sent;
          }
        }
        now += 100ull * n;  // 10 M packets/s
        auto t0 = clk::now();
        ok = run(n);
        flood_s += since(t0);
      }
      std::vector<flow::DeviceFlowTable::Entry> flows;
      if (!ok || !df.contents(flows, err)) {
        fmt::print(stderr, "bench-flow: device flood: {}\n", err);
        return 1;
      }
      uint32_t alive = 0;
      for (auto& e : flows) alive += (e.key.pa == 443 || e.key.pb == 443) && e.tcp.state == k::kTcpEstablished;
      fmt::print(
          "{:<12} {:>10} {:>14.2f} {:>14} {:>10}   M SYN/s on the {} device table (copies included); {} of {} "
          "established kept, evicted {} in {} passes, {} packets without room\n",
          "dev-flood", cap, double(sent) / flood_s / 1e6, "-", "-", d->kind(), alive, est, df.counters().evicted,
          df.evictions(), df.full_packets());
      j["results"].push_back({{"case", "device_synflood"},
                              {"device", d->kind()},
                              {"capacity", cap},
                              {"syns", sent},
                              {"aggregate", agg},
                              {"syn_per_sec", double(sent) / flood_s},
                              {"established", est},
                              {"established_kept", alive},
                              {"evicted", df.counters().evicted},
                              {"eviction_passes", df.evictions()},
                              {"full_packets", df.full_packets()}});
      if (alive != est || df.full_packets() || flows.size() > cap) {
        fmt::print(stderr, "bench-flow: device flood: {} of {} established kept, {} packets found no room\n", alive,
                   est, df.full_packets());
        return 1;
      }
    }

    // GASPP's batch reassembly on the device against the one-by-one
    // reassembler on one core, on the same segments: 1000 connections of
    // 1 MB sending trains of 16 segments (a window), 4096 segments a batch,
    // in order and with 10% of the segments swapped with a neighbour.
    for (double swap : {0.0, 0.1}) {
      const uint32_t conns = 1000, per = 1u << 20, mss = 1460, train = 16, bsize = 4096;
      std::vector<uint8_t> payload(mss);
      for (auto& b : payload) b = uint8_t(rand());
      std::vector<std::pair<uint32_t, uint32_t>> order;  // (connection, offset), in arrival order
      std::mt19937 rng(5);
      for (uint32_t base = 0; base < per; base += train * mss)
        for (uint32_t cn = 0; cn < conns; ++cn) {
          size_t first = order.size();
          for (uint32_t off = base; off < std::min(per, base + train * mss); off += mss) order.push_back({cn, off});
          for (size_t i = first; i + 1 < order.size(); ++i)
            if (std::uniform_real_distribution<>(0, 1)(rng) < swap) std::swap(order[i], order[i + 1]), ++i;
        }
      double secs[2] = {0, 0};
      uint64_t peak[2] = {0, 0}, placed = 0, one = 0;
      for (int batched = 0; batched < 2; ++batched) {
        flow::Reassembler r;
        NullSink ns;
        r.set_sink(&ns);
        std::vector<flow::Stream> st(conns);
        for (uint32_t cn = 0; cn < conns; ++cn) r.segment(st[cn], cn + 1, 0, 0, k::kTcpSyn, nullptr, 0);
        flow::BatchReassembler br;
        br.init(d);
        std::vector<flow::Segment> segs;
        auto t0 = clk::now();
        for (size_t at = 0; at < order.size(); at += bsize) {
          segs.clear();
          for (size_t i = at; i < std::min(order.size(), at + bsize); ++i) {
            auto [cn, off] = order[i];
            uint32_t len = std::min(mss, per - off);
            if (batched)
              segs.push_back({&st[cn], cn + 1, 0, k::kTcpAck, 1 + off, payload.data(), len});
            else
              r.segment(st[cn], cn + 1, 0, 1 + off, k::kTcpAck, payload.data(), len);
          }
          if (batched) br.run(r, segs, err);
        }
        secs[batched] = since(t0);
        for (uint32_t cn = 0; cn < conns; ++cn) r.finish(st[cn], cn + 1);
        if (ns.bytes != uint64_t(conns) * per || br.counters().device_failures.get()) {
          fmt::print(stderr, "bench-flow: {} reassembly delivered {} bytes, not {} ({})\n",
                     batched ? "batch" : "one-by-one", ns.bytes, uint64_t(conns) * per, err);
          return 1;
        }
        peak[batched] = r.counters().buffered_peak.get();
        if (batched) placed = br.counters().placed.get(), one = br.counters().one_by_one.get();
      }
      double bytes = double(conns) * per * 8 / 1e9;
      fmt::print(
          "{:<12} {:>10} {:>14.2f} {:>14.2f} {:>9.2f}x   Gbit/s batch reassembly on the {} device / one by one, "
          "{:.0f}% swapped, {:.1f}% placed by the device, peak buffered {} / {} KiB\n",
          "batch-reasm", conns, bytes / secs[1], bytes / secs[0], secs[0] / secs[1], d->kind(), swap * 100,
          100.0 * double(placed) / double(std::max<uint64_t>(1, placed + one)), peak[1] / 1024, peak[0] / 1024);
      j["results"].push_back({{"case", "batch_reassembly"},
                              {"device", d->kind()},
                              {"connections", conns},
                              {"batch", bsize},
                              {"swapped", swap},
                              {"device_gbit_per_sec", bytes / secs[1]},
                              {"one_by_one_gbit_per_sec", bytes / secs[0]},
                              {"placed", placed},
                              {"one_by_one", one},
                              {"buffered_peak", peak[1]},
                              {"one_by_one_buffered_peak", peak[0]}});
    }
  }

  // SYN flood against a capped table.
  {
    const uint32_t cap = 100000, est = 1000;
    flow::FlowTable t;
    flow::Config c;
    c.capacity = cap;
    t.init(c);
    uint64_t rss0 = rss_bytes();
    uint64_t now = 1'000'000'000;
    uint8_t dir;
    auto tcp_key = [](uint64_t i, uint32_t salt, bool reply) {
      k::ParsedKey p = key_of(i, salt);
      p.key.proto = 6;
      p.dir = reply ? 1 : 0;
      return p;
    };
    std::vector<uint32_t> ids(est);
    for (uint32_t i = 0; i < est; ++i) {
      k::ParsedKey p = tcp_key(i, 77, false);
      p.tcp_flags = k::kTcpSyn;
      t.track(p, 60, now, dir);
      p.dir = 1;
      p.tcp_flags = k::kTcpSyn | k::kTcpAck;
      t.track(p, 60, now, dir);
      p.dir = 0;
      p.tcp_flags = k::kTcpAck;
      ids[i] = t.track(p, 60, now, dir);
    }
    // the established connections' packets alone, then one every 10 flood SYNs
    auto est_round = [&](uint32_t n) {
      for (uint32_t i = 0; i < n; ++i) {
        k::ParsedKey p = tcp_key(i % est, 77, i & 1);
        p.tcp_flags = k::kTcpAck;
        sink += t.track(p, 1500, now, dir);
      }
    };
    // timed one packet at a time, as during the flood
    double quiet = 0;
    for (uint32_t i = 0; i < 200000; ++i) {
      auto e0 = clk::now();
      est_round(1);
      quiet += since(e0);
    }
    quiet /= 200000;
    uint64_t est_pkts = 0;
    double est_time = 0;
    auto t0 = clk::now();
    for (uint64_t i = 0; i < flood; ++i) {
      now += 100;  // 10 M SYN/s
      k::ParsedKey p = key_of(i, 0xf100d);
      p.key.proto = 6;
      p.tcp_flags = k::kTcpSyn;
      sink += t.track(p, 40, now, dir);
      if (i % 10 == 0) {
        auto e0 = clk::now();
        est_round(1);
        est_time += since(e0);
        ++est_pkts;
      }
      if (t.size() > cap) {
        fmt::print(stderr, "bench-flow: the table grew past its capacity\n");
        return 1;
      }
    }
    double flood_s = since(t0);
    uint32_t alive = 0;
    for (uint32_t i = 0; i < est; ++i) {
      k::ParsedKey p = tcp_key(i, 77, false);
      uint32_t id = t.find(p.key);
      alive += id == ids[i] && t.flow(id).tcp.state == k::kTcpEstablished;
    }
    uint64_t rss1 = rss_bytes();
    double during = est_pkts ? est_time / double(est_pkts) : 0;  // (--flood 0: no flood)
    fmt::print(
        "{:<12} {:>10} {:>14.2f} {:>14} {:>10}   M SYN/s; {} of {} established kept, evicted {}, table {} MiB, "
        "RSS +{} MiB; an established packet {:.0f} ns quiet, {:.0f} ns in the flood\n",
        "synflood", cap, double(flood) / flood_s / 1e6, "-", "-", alive, est, t.counters().evicted.get(),
        t.memory_bytes() >> 20, (rss1 - std::min(rss0, rss1)) >> 20, quiet * 1e9, during * 1e9);
    j["results"].push_back({{"case", "synflood"},
                            {"capacity", cap},
                            {"syns", flood},
                            {"syn_per_sec", double(flood) / flood_s},
                            {"established", est},
                            {"established_kept", alive},
                            {"evicted", t.counters().evicted.get()},
                            {"table_bytes", t.memory_bytes()},
                            {"rss_growth_bytes", rss1 - std::min(rss0, rss1)},
                            {"established_ns_quiet", quiet * 1e9},
                            {"established_ns_flood", during * 1e9}});
    if (alive != est) {
      fmt::print(stderr, "bench-flow: the flood evicted established connections\n");
      return 1;
    }
  }
  if (sink == 42) fmt::print(" ");
  if (!write_bench_json(out, j)) return 1;
  return 0;
}

}  // namespace shoal::tool

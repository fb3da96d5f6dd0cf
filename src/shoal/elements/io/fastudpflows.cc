// FastUDPFlows: in-memory generator of many UDP (or TCP/ICMP, IPv4/IPv6) flows.
#include <fmt/format.h>

#include <memory>

#include "shoal/elements/common.hh"
#include "shoal/io/traffic.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

class FastUDPFlows : public SourceElement {
 public:
  FastUDPFlows() = default;
  // FastTCPFlows: TCP, each flow's packets a SYN, data and a FIN.
  explicit FastUDPFlows(bool tcp_flows) : tcp_flows_(tcp_flows) {}
  void configure(Args& a) override {
    io::TrafficSpec s;
    EtherAddr se, de;
    IPv4Addr si, di;
    IPv6Addr si6, di6;
    std::memcpy(se.b.data(), s.src_mac.data(), 6);
    std::memcpy(de.b.data(), s.dst_mac.data(), 6);
    std::memcpy(si.b.data(), s.src_ip.data(), 4);
    std::memcpy(di.b.data(), s.dst_ip.data(), 4);
    std::memcpy(si6.b.data(), s.src_ip6.data(), 16);
    std::memcpy(di6.b.data(), s.dst_ip6.data(), 16);
    std::string proto = tcp_flows_ ? "tcp" : "udp";
    int64_t length = -1;
    a.read_p("RATE", rate_)
        .read_p("LIMIT", limit_)
        .read_p("LENGTH", length)
        .read_p("SRCETH", se)
        .read_p("SRCIP", si)
        .read_p("DSTETH", de)
        .read_p("DSTIP", di)
        .read_p("FLOWS", s.flows)
        .read_p("FLOWSIZE", s.flowsize)
        .read("IPV6", s.ipv6)
        .read("DSTRANDOM", s.random_dst)
        .read("SRCIP6", si6)
        .read("DSTIP6", di6)
        .read("PROTO", proto)
        .read("IMIX", s.imix)
        .read("TTL", s.ttl);
    read_source_args(a, 32);
    a.complete();
    if (!io::parse_proto(proto, s.proto)) a.fail(fmt::format("PROTO must be udp, tcp, icmp or mix, not '{}'", proto));
    if (tcp_flows_ && (s.proto != io::Proto::TCP || s.imix)) a.fail("FastTCPFlows makes TCP flows (no PROTO, no IMIX)");
    if (tcp_flows_ && s.flowsize < 3) a.fail("FLOWSIZE must be at least 3 (a SYN, data, a FIN)");
    if (s.flows == 0) a.fail("FLOWS must be at least 1");
    if (rate_ < 0) a.fail("RATE must not be negative");
    std::memcpy(s.src_mac.data(), se.b.data(), 6);
    std::memcpy(s.dst_mac.data(), de.b.data(), 6);
    std::memcpy(s.src_ip.data(), si.b.data(), 4);
    std::memcpy(s.dst_ip.data(), di.b.data(), 4);
    std::memcpy(s.src_ip6.data(), si6.b.data(), 16);
    std::memcpy(s.dst_ip6.data(), di6.b.data(), 16);
    if (length > 65535) a.fail("LENGTH must be at most 65535");
    s.length = length < 0 ? std::max<uint32_t>(64, io::TrafficGen::min_length(s)) : uint32_t(length);
    if (!s.imix && s.length < io::TrafficGen::min_length(s))
      a.fail(fmt::format("LENGTH {} is below the {} bytes of headers and sequence number", s.length,
                         io::TrafficGen::min_length(s)));
    gen_ = std::make_unique<io::TrafficGen>(s);
    global_limit_ = limit_;
    limit_ = -1;  // LIMIT counts the global sequence, see produce()
  }
  void initialize() override {
    int nw = worker().nworkers();
    mine_.assign(gen_->spec().flows, nw == 1);
    if (nw > 1)
      for (uint32_t f = 0; f < gen_->spec().flows; ++f)
        mine_[f] = int(gen_->flow_hash(f) % uint32_t(nw)) == worker().id();
    SourceElement::initialize();
  }
  bool rate_limited() const override { return rate_ > 0; }
  uint32_t produce(PacketBatch* b, uint32_t max, bool& done) override {
    uint32_t allowed = max;
    if (rate_ > 0) {
      uint64_t now = worker().now_ns();
      if (!start_) start_ = now;
      // This worker's share of the global rate.
      double share = rate_ / worker().nworkers();
      uint64_t due = uint64_t(double(now - start_) * share / 1e9) + 1;
      if (due <= emitted_.get()) return 0;
      allowed = uint32_t(std::min<uint64_t>(max, due - emitted_.get()));
    }
    uint64_t ts = realtime_ns();
    uint32_t n = 0;
    while (n < allowed) {
      if (global_limit_ >= 0 && next_ >= uint64_t(global_limit_)) {
        done = true;
        break;
      }
      uint64_t i = next_;
      uint32_t f = gen_->flow_of(i);
      if (!mine_[f]) {
        ++next_;
        continue;
      }
      Packet* p = worker().pool().alloc(gen_->length_of(i));
      if (!p) break;
      gen_->build(i, f, p->data());
      if (tcp_flows_) set_flags(p->data(), i);
      p->set_timestamp_ns(ts);
      b->append(p);
      ++next_;
      ++n;
    }
    return n;
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    add_read_handler("flows", [this] { return std::to_string(gen_->spec().flows); });
  }

 private:
  // A flow's first packet is a SYN, its last a FIN|ACK, the others PSH|ACK
  // (the generator's), the TCP checksum updated (RFC 1624).
  void set_flags(uint8_t* frame, uint64_t i) const {
    uint64_t at = i % gen_->spec().flowsize;
    uint8_t flags = at == 0 ? 0x02 : at + 1 == gen_->spec().flowsize ? 0x11 : 0x18;
    uint8_t* l4 = frame + 14 + (gen_->spec().ipv6 ? 40 : 20);
    uint16_t from = k::load_be16(l4 + 12);
    l4[13] = flags;
    k::store_be16(l4 + 16, k::csum_update16(k::load_be16(l4 + 16), from, k::load_be16(l4 + 12)));
  }

  bool tcp_flows_ = false;
  std::unique_ptr<io::TrafficGen> gen_;
  std::vector<bool> mine_;
  double rate_ = 0;
  int64_t global_limit_ = -1;
  uint64_t next_ = 0, start_ = 0;
};
SHOAL_ELEMENT(
    FastUDPFlows, .name = "FastUDPFlows", .ports = "0/1", .processing = "a/a",
    .summary = "generates many UDP flows from memory, fast",
    .description =
        "Generates FLOWS flows of LENGTH-byte frames (Ethernet, IPv4 or with IPV6 true IPv6, UDP "
        "by default). Flow f uses source port 10000 + f mod 16384 and source address SRCIP + "
        "f / 16384; packet i belongs to flow (i / FLOWSIZE) mod FLOWS and carries i in its "
        "first 8 payload bytes. RATE 0 means as fast as possible. LIMIT counts packets of all "
        "workers together: each worker emits the packets of the flows that hash to it, in the "
        "order a single worker would.",
    .args = {{"RATE", "real", "packets per second, 0 = unlimited (default 0)"},
             {"LIMIT", "integer", "total packets, -1 = unlimited (default)"},
             {"LENGTH", "unsigned", "frame length in bytes (default 64, or the smallest frame the headers allow)"},
             {"SRCETH", "Ethernet address", "source MAC"},
             {"SRCIP", "IPv4 address", "first source address"},
             {"DSTETH", "Ethernet address", "destination MAC"},
             {"DSTIP", "IPv4 address", "destination"},
             {"FLOWS", "unsigned", "number of flows (default 1)"},
             {"FLOWSIZE", "unsigned", "consecutive packets per flow (default 1)"},
             {"IPV6", "boolean", "IPv6 instead of IPv4"},
             {"SRCIP6", "IPv6 address", "first source address"},
             {"DSTIP6", "IPv6 address", "destination"},
             {"DSTRANDOM", "boolean", "each flow gets its own pseudo-random unicast destination (route benchmarks)"},
             {"PROTO", "udp|tcp|icmp|mix", "transport (default udp)"},
             {"IMIX", "boolean", "7:4:1 mix of 64, 570 and 1518 bytes"},
             {"TTL", "byte", "TTL or hop limit (default 64)"},
             {"BURST", "unsigned", "packets per batch (default 32)"},
             {"STOP", "boolean", "stop at LIMIT"},
             {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') when done"},
             {"ACTIVE", "boolean", "emit when true"}},
    .handlers = {{"count", "r", "packets emitted"},
                 {"flows", "r", "number of flows"},
                 {"active", "rw", "emitting or paused"}},
    .example = "FastUDPFlows(LENGTH 64, FLOWS 1024, LIMIT 1000000, STOP true) -> Counter -> Discard;");

class FastTCPFlows : public FastUDPFlows {
 public:
  FastTCPFlows() : FastUDPFlows(true) {}
};
SHOAL_ELEMENT(FastTCPFlows, .name = "FastTCPFlows", .ports = "0/1", .processing = "a/a",
              .summary = "generates many TCP flows from memory, fast: a SYN, data, a FIN each",
              .description =
                  "FastUDPFlows making TCP: each run of FLOWSIZE (at least 3) consecutive packets of a flow is a SYN, "
                  "FLOWSIZE - 2 PSH|ACK data segments and a FIN|ACK, with valid checksums (FastClick's leaves them as "
                  "built). The arguments, handlers and worker split are FastUDPFlows' (PROTO is TCP, no IMIX).",
              .args = {{"RATE", "real", "packets per second, 0 = unlimited (default 0)"},
                       {"LIMIT", "integer", "total packets, -1 = unlimited (default)"},
                       {"LENGTH", "unsigned",
                        "frame length in bytes (default 64, or the smallest frame the headers allow)"},
                       {"SRCETH", "Ethernet address", "source MAC"},
                       {"SRCIP", "IPv4 address", "first source address"},
                       {"DSTETH", "Ethernet address", "destination MAC"},
                       {"DSTIP", "IPv4 address", "destination"},
                       {"FLOWS", "unsigned", "number of flows (default 1)"},
                       {"FLOWSIZE", "unsigned", "packets per flow run: a SYN, data, a FIN (at least 3)"},
                       {"IPV6", "boolean", "IPv6 instead of IPv4"},
                       {"SRCIP6", "IPv6 address", "first source address"},
                       {"DSTIP6", "IPv6 address", "destination"},
                       {"DSTRANDOM", "boolean", "each flow gets its own pseudo-random unicast destination"},
                       {"PROTO", "tcp", "accepted as tcp only"},
                       {"IMIX", "boolean", "accepted as false only"},
                       {"TTL", "byte", "TTL or hop limit (default 64)"},
                       {"BURST", "unsigned", "packets per batch (default 32)"},
                       {"STOP", "boolean", "stop at LIMIT"},
                       {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') when done"},
                       {"ACTIVE", "boolean", "emit when true"}},
              .handlers = {{"count", "r", "packets emitted"},
                           {"flows", "r", "number of flows"},
                           {"active", "rw", "emitting or paused"}},
              .example =
                  "FastTCPFlows(0, 1000000, 64, 0:1:2:3:4:5, 10.0.0.1, 6:7:8:9:a:b, 10.1.0.1, 100, 10, STOP true) -> "
                  "Counter -> Discard;");

}  // namespace shoal

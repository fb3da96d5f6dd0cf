// IPRewriter: Click's TCP and UDP address and port rewriter.
#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class IPRewriter : public RewriterBase {
 protected:
  static constexpr uint8_t kTcpMap = 0, kUdpMap = 1;
  void configure_more(Args& a) override {
    Duration utimeout{300 * kSec}, uguarantee{5 * kSec}, nodata{300 * kSec}, guarantee{5 * kSec}, data{86400 * kSec},
        done{240 * kSec};
    std::optional<Duration> streaming;
    a.read("UDP_TIMEOUT", utimeout)
        .read("UDP_STREAMING_TIMEOUT", streaming)
        .read("UDP_GUARANTEE", uguarantee)
        .read("TCP_NODATA_TIMEOUT", nodata)
        .read("TCP_GUARANTEE", guarantee)
        .read("TIMEOUT", data)
        .read("TCP_TIMEOUT", data)
        .read("TCP_DONE_TIMEOUT", done)
        .read("DST_ANNO", dst_anno_);
    udp_ = {utimeout.ns, uguarantee.ns};
    streaming_ = streaming ? streaming->ns : utimeout.ns;
    timeouts_ = {nodata.ns, guarantee.ns};
    data_ = data.ns, done_ = done.ns;
  }
  int process(int port, Packet* p, uint64_t now) override {
    RewriteView v;
    if (!v.parse(p) || (v.proto != 6 && v.proto != 17) || !v.first_frag || v.l4len < 8) return not_rewritable(port);
    if (v.proto == 6) {
      Found f = lookup(port, kTcpMap, 6, v.flow_id(true), p, now, timeouts_);
      return f.id ? apply_tcp(f, v, p, now, timeouts_, data_, done_) : f.code;
    }
    Found f = lookup(port, kUdpMap, 17, v.flow_id(true), p, now, udp_);
    return f.id ? apply_udp(f, v, p, now, udp_, streaming_) : f.code;
  }
  bool find_mapping(uint8_t ip_p, const flow::FlowId& f, flow::FlowId& to, uint32_t& id, int& dir) override {
    if (ip_p != 6 && ip_p != 17) return false;
    std::tie(id, dir) = table_->find(owner_, ip_p == 6 ? kTcpMap : kUdpMap, f);
    if (id) to = table_->mapping(id).rewritten(dir);
    return id != 0;
  }
  uint8_t map_of(uint8_t ip_p) const override { return ip_p == 17 ? kUdpMap : kTcpMap; }
  const Timeouts& timeouts_of(uint8_t ip_p) const override { return ip_p == 17 ? udp_ : timeouts_; }
  void add_table_handlers() override {
    for (const char* h : {"tcp_table", "tcp_mappings"})
      add_read_handler(h, [this] { return table_text(kTcpMap, worker().now_ns()); });
    for (const char* h : {"udp_table", "udp_mappings"})
      add_read_handler(h, [this] { return table_text(kUdpMap, worker().now_ns()); });
    add_read_param_handler("tcp_lookup", [this](const std::string& a) { return lookup_text(kTcpMap, a); });
    add_read_param_handler("udp_lookup", [this](const std::string& a) { return lookup_text(kUdpMap, a); });
  }

 private:
  static constexpr uint64_t kSec = 1000000000ull;
  Timeouts udp_;
  uint64_t streaming_ = 0, data_ = 0, done_ = 0;
};
SHOAL_ELEMENT(
    IPRewriter, .name = "IPRewriter", .ports = "1-/1-", .processing = "h/h",
    .summary = "rewrites TCP and UDP connections' addresses and ports (NAT, NAPT)",
    .description =
        "Click's IPRewriter: TCPRewriter for TCP connections and UDPRewriter for UDP flows, each in its own map "
        "(a TCP and a UDP flow with the same addresses and ports are two mappings), sharing the input "
        "specifications, the table's capacity and the handlers. Packets of other protocols take a 'pass' "
        "input's output or are dropped.",
    .args = {{"SPEC...", "input spec", "one per input: drop, pass, keep, pattern, or a mapper element"},
             {"TIMEOUT", "seconds", "TCP idle timeout once both sides sent data (default 86400; also TCP_TIMEOUT)"},
             {"TCP_NODATA_TIMEOUT", "seconds", "TCP idle timeout otherwise (default 300)"},
             {"TCP_DONE_TIMEOUT", "seconds", "TCP idle timeout once closed (default 240)"},
             {"TCP_GUARANTEE", "seconds",
              "TCP: no eviction for this long after a packet (default 5; also "
              "GUARANTEE)"},
             {"UDP_TIMEOUT", "seconds", "UDP idle timeout (default 300)"},
             {"UDP_STREAMING_TIMEOUT", "seconds", "UDP idle timeout of a two-way flow (default UDP_TIMEOUT)"},
             {"UDP_GUARANTEE", "seconds", "UDP: no eviction for this long after a packet (default 5)"},
             {"MAPPING_CAPACITY", "integer|element",
              "mappings at most (default 1048576), or share another "
              "rewriter's table and capacity; also CAPACITY"},
             {"REAP_INTERVAL", "seconds", "how often expired mappings are removed (default 900; also REAP_TIME)"},
             {"SET_AGGREGATE", "boolean", "set the aggregate annotation to the mapping's number (default false)"},
             {"USE_CACHE", "boolean", "accepted for FastClick configurations; a lookup is already one hash probe"},
             {"DST_ANNO", "boolean", "set the destination address annotation (default true)"},
             {"REPLY_ANNO", "PAINT", "store the first packet's paint and set it on replies"}},
    .handlers = {{"tcp_table", "r", "the TCP mappings, one line per direction (also tcp_mappings)"},
                 {"udp_table", "r", "the UDP mappings (also udp_mappings)"},
                 {"tcp_lookup", "r (SADDR SPORT DADDR DPORT)", "the rewritten flow of a TCP flow, or nothing"},
                 {"udp_lookup", "r (SADDR SPORT DADDR DPORT)", "the same for UDP"},
                 {"nmappings", "r", "live mappings (also table_size)"},
                 {"mapping_failures", "r", "flows refused for want of a free port or room"},
                 {"patterns", "r", "each input's specification and its live mappings"},
                 {"patternN", "rw", "input N's specification; writing it removes its mappings"},
                 {"size", "r", "mappings in the (shared) table"},
                 {"capacity", "rw", "the table's capacity"},
                 {"clear", "w", "removes every mapping"}},
    .example =
        "rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);\n"
        "FromDevice(eth1) -> Strip(14) -> CheckIPHeader -> [0]rw;\n"
        "FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> [1]rw;");

}  // namespace shoal

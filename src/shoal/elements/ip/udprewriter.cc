// UDPRewriter: Click's UDP (and TCP, DCCP) address and port rewriter.
#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class UDPRewriter : public RewriterBase {
 protected:
  void configure_more(Args& a) override {
    Duration timeout{300 * kSec}, guarantee{5 * kSec};
    std::optional<Duration> streaming;
    a.read("DST_ANNO", dst_anno_)
        .read("UDP_TIMEOUT", timeout)
        .read("TIMEOUT", timeout)
        .read("UDP_STREAMING_TIMEOUT", streaming)
        .read("STREAMING_TIMEOUT", streaming)
        .read("UDP_GUARANTEE", guarantee);
    timeouts_ = {timeout.ns, guarantee.ns};
    streaming_ = streaming ? streaming->ns : timeout.ns;
  }
  int process(int port, Packet* p, uint64_t now) override {
    RewriteView v;
    if (!v.parse(p) || (v.proto != 6 && v.proto != 17 && v.proto != 33) || !v.first_frag || v.l4len < 8)
      return not_rewritable(port);
    Found f = lookup(port, 0, v.proto, v.flow_id(true), p, now, timeouts_);
    return f.id ? apply_udp(f, v, p, now, timeouts_, streaming_) : f.code;
  }
  void add_table_handlers() override {
    add_read_handler("table", [this] { return table_text(0, worker().now_ns()); });
    add_read_handler("mappings", [this] { return table_text(0, worker().now_ns()); });
  }

 private:
  static constexpr uint64_t kSec = 1000000000ull;
  uint64_t streaming_ = 0;
};
SHOAL_ELEMENT(
    UDPRewriter, .name = "UDPRewriter", .ports = "1-/1-", .processing = "h/h",
    .summary = "rewrites UDP (and TCP, DCCP) flows' addresses and ports (NAT, NAPT)",
    .description =
        "Click's UDPRewriter: TCPRewriter's input specifications, patterns, table and handlers, for UDP, TCP and "
        "DCCP flows tracked as datagrams (no TCP state). A mapping expires TIMEOUT after its last packet, or "
        "STREAMING_TIMEOUT once it carried packets both ways and at least three in all; it cannot be evicted "
        "for GUARANTEE after a packet. A UDP checksum of 0 (none) stays 0.",
    .args = {{"SPEC...", "input spec", "one per input: drop, pass, keep, pattern, or a mapper element"},
             {"TIMEOUT", "seconds", "idle timeout (default 300; also UDP_TIMEOUT)"},
             {"STREAMING_TIMEOUT", "seconds",
              "idle timeout of a two-way flow (default TIMEOUT; also "
              "UDP_STREAMING_TIMEOUT)"},
             {"GUARANTEE", "seconds", "no eviction for this long after a packet (default 5; also UDP_GUARANTEE)"},
             {"MAPPING_CAPACITY", "integer|element",
              "mappings at most (default 1048576), or share another "
              "rewriter's table and capacity; also CAPACITY"},
             {"REAP_INTERVAL", "seconds", "how often expired mappings are removed (default 900; also REAP_TIME)"},
             {"SET_AGGREGATE", "boolean", "set the aggregate annotation to the mapping's number (default false)"},
             {"USE_CACHE", "boolean", "accepted for FastClick configurations; a lookup is already one hash probe"},
             {"DST_ANNO", "boolean", "set the destination address annotation (default true)"},
             {"REPLY_ANNO", "PAINT", "store the first packet's paint and set it on replies"}},
    .handlers = {{"table", "r", "the mappings, one line per direction"},
                 {"nmappings", "r", "live mappings (also table_size)"},
                 {"mapping_failures", "r", "flows refused for want of a free port or room"},
                 {"patterns", "r", "each input's specification and its live mappings"},
                 {"patternN", "rw", "input N's specification; writing it removes its mappings"},
                 {"size", "r", "mappings in the (shared) table"},
                 {"capacity", "rw", "the table's capacity"},
                 {"clear", "w", "removes every mapping"}},
    .example = "rw :: UDPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);");

}  // namespace shoal

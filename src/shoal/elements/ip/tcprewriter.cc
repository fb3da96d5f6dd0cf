// TCPRewriter: Click's TCP address and port rewriter.
#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class TCPRewriter : public RewriterBase {
 protected:
  void configure_more(Args& a) override {
    Duration nodata{300 * kSec}, guarantee{5 * kSec}, data{86400 * kSec}, done{240 * kSec};
    a.read("TCP_NODATA_TIMEOUT", nodata)
        .read("TCP_GUARANTEE", guarantee)
        .read("TIMEOUT", data)
        .read("TCP_TIMEOUT", data)
        .read("TCP_DONE_TIMEOUT", done)
        .read("DST_ANNO", dst_anno_);
    timeouts_ = {nodata.ns, guarantee.ns};
    data_ = data.ns, done_ = done.ns;
  }
  int process(int port, Packet* p, uint64_t now) override {
    RewriteView v;
    if (!v.parse(p) || v.proto != 6 || !v.first_frag || v.l4len < 8) return not_rewritable(port);
    Found f = lookup(port, 0, 6, v.flow_id(true), p, now, timeouts_);
    return f.id ? apply_tcp(f, v, p, now, timeouts_, data_, done_) : f.code;
  }
  void add_table_handlers() override {
    add_read_handler("table", [this] { return table_text(0, worker().now_ns()); });
    add_read_handler("mappings", [this] { return table_text(0, worker().now_ns()); });
    add_read_param_handler("lookup", [this](const std::string& a) { return lookup_text(0, a); });
  }

 private:
  static constexpr uint64_t kSec = 1000000000ull;
  uint64_t data_ = 0, done_ = 0;
};
SHOAL_ELEMENT(
    TCPRewriter, .name = "TCPRewriter", .ports = "1-/1-", .processing = "h/h",
    .summary = "rewrites TCP connections' addresses and ports (NAT, NAPT)",
    .description =
        "Click's TCPRewriter. Each input has a specification, given in order as the positional arguments: 'drop' "
        "(or 'discard'), 'pass OUTPUT' (packets go there unchanged), 'keep FOUTPUT ROUTPUT' (map the connection "
        "to itself), 'pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT', 'pattern NAME FOUTPUT ROUTPUT' (an "
        "IPRewriterPatterns name) or the name of a mapper element (RoundRobinIPMapper). A pattern's '-' keeps a "
        "field; a source address range (A-B, ADDR/LEN) or port range (1024-65535) picks a free value, at random "
        "or in turn with a '#' suffix. The first packet of a connection makes a mapping: its packets are "
        "rewritten and leave on FOUTPUT, the replies to the rewritten packets are rewritten back and leave on "
        "ROUTPUT; checksums are updated incrementally. Mappings live in the flow layer's RewriteTable, shared by "
        "every worker's copy; they expire after TCP_NODATA_TIMEOUT, TIMEOUT once both sides sent data, "
        "TCP_DONE_TIMEOUT once both closed (or one reset), and cannot be evicted for GUARANTEE after a packet. A "
        "full table evicts the best-effort mapping nearest expiry or, when all are guaranteed, drops the new "
        "connection ('rewriter-table-full'). Packets that are not TCP, later fragments and short packets take "
        "a 'pass' input's output or are dropped ('rewriter-not-rewritable'); a pattern with no free port drops "
        "('rewriter-no-free-port', counted in mapping_failures).",
    .args = {{"SPEC...", "input spec", "one per input: drop, pass, keep, pattern, or a mapper element"},
             {"TIMEOUT", "seconds", "idle timeout once both sides sent data (default 86400; also TCP_TIMEOUT)"},
             {"TCP_NODATA_TIMEOUT", "seconds", "idle timeout otherwise (default 300)"},
             {"TCP_DONE_TIMEOUT", "seconds", "idle timeout once closed (default 240)"},
             {"GUARANTEE", "seconds", "no eviction for this long after a packet (default 5; also TCP_GUARANTEE)"},
             {"MAPPING_CAPACITY", "integer|element",
              "mappings at most (default 1048576), or share another "
              "rewriter's table and capacity; also CAPACITY"},
             {"REAP_INTERVAL", "seconds", "how often expired mappings are removed (default 900; also REAP_TIME)"},
             {"SET_AGGREGATE", "boolean", "set the aggregate annotation to the mapping's number (default false)"},
             {"USE_CACHE", "boolean", "accepted for FastClick configurations; a lookup is already one hash probe"},
             {"DST_ANNO", "boolean", "set the destination address annotation (default true)"},
             {"REPLY_ANNO", "PAINT", "store the first packet's paint and set it on replies"}},
    .handlers = {{"table", "r", "the mappings, one line per direction, as Click prints them"},
                 {"lookup", "r (SADDR SPORT DADDR DPORT)", "the rewritten flow of a flow, or nothing"},
                 {"nmappings", "r", "live mappings (also table_size)"},
                 {"mapping_failures", "r", "connections refused for want of a free port or room"},
                 {"patterns", "r", "each input's specification and its live mappings"},
                 {"patternN", "rw", "input N's specification; writing it removes its mappings"},
                 {"size", "r", "mappings in the (shared) table"},
                 {"capacity", "rw", "the table's capacity"},
                 {"clear", "w", "removes every mapping"}},
    .example = "rw :: TCPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);");

}  // namespace shoal

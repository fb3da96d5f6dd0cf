// IPAddrPairRewriter: Click's address-pair rewriter.
#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class IPAddrPairRewriter : public RewriterBase {
 protected:
  void configure_more(Args& a) override {
    Duration timeout{7200 * kSec};
    a.read("TIMEOUT", timeout);
    timeouts_ = {timeout.ns, 5 * kSec};
  }
  static bool no_ports(flow::FlowId& f) { return !f.sport && !f.dport; }
  int process(int port, Packet* p, uint64_t now) override {
    RewriteView v;
    if (!v.parse(p)) return not_rewritable(port);
    Found f = lookup(port, 0, 0, v.flow_id(false), p, now, timeouts_, no_ports);
    if (!f.id) return f.code;
    int out = apply(f, v, p, false);
    refresh(f.id, now, timeouts_, timeouts_.timeout);
    return out;
  }
  bool find_mapping(uint8_t, const flow::FlowId& f, flow::FlowId& to, uint32_t& id, int& dir) override {
    std::tie(id, dir) = table_->find(owner_, 0, flow::FlowId{f.saddr, f.daddr, 0, 0});
    if (!id) return false;
    flow::FlowId r = table_->mapping(id).rewritten(dir);
    to = {r.saddr, r.daddr, f.sport, f.dport};
    return true;
  }
  std::string unparse(const flow::RewriteTable::Mapping& m, int dir, uint64_t now) const override {
    const flow::FlowId &a = m.key[dir], &r = m.key[!dir];
    return "(" + flow::format_ipv4_host(a.saddr) + ", " + flow::format_ipv4_host(a.daddr) + ") => (" +
           flow::format_ipv4_host(r.daddr) + ", " + flow::format_ipv4_host(r.saddr) + ")" +
           unparse_ports(m, dir, now, m.guaranteed ? m.best_effort_ns : m.expiry_ns);
  }
  void add_table_handlers() override {
    add_read_handler("table", [this] { return table_text(0, worker().now_ns()); });
    add_read_handler("mappings", [this] { return table_text(0, worker().now_ns()); });
  }

 private:
  static constexpr uint64_t kSec = 1000000000ull;
};
SHOAL_ELEMENT(
    IPAddrPairRewriter, .name = "IPAddrPairRewriter", .ports = "1-/1-", .processing = "h/h",
    .summary = "rewrites IP packets' source and destination addresses per address pair",
    .description =
        "Click's IPAddrPairRewriter: a mapping is made per (source, destination) address pair, with patterns "
        "'SADDR DADDR' ('-' keeps an address; SADDR may be a range). Packets of the pair are rewritten and leave "
        "on FOUTPUT; packets of the reverse rewritten pair get the original addresses back and leave on "
        "ROUTPUT. Any IP protocol; IP and TCP/UDP checksums are updated. Mappings expire TIMEOUT after their "
        "last packet and cannot be evicted for GUARANTEE.",
    .args = {{"SPEC...", "input spec", "one per input: drop, pass, keep, pattern, or a mapper element"},
             {"TIMEOUT", "seconds", "idle timeout (default 7200)"},
             {"GUARANTEE", "seconds", "no eviction for this long after a packet (default 5)"},
             {"MAPPING_CAPACITY", "integer|element",
              "mappings at most (default 1048576), or share another "
              "rewriter's table and capacity; also CAPACITY"},
             {"REAP_INTERVAL", "seconds", "how often expired mappings are removed (default 900; also REAP_TIME)"},
             {"SET_AGGREGATE", "boolean", "set the aggregate annotation to the mapping's number (default false)"},
             {"USE_CACHE", "boolean", "accepted for FastClick configurations; a lookup is already one hash probe"},
             {"REPLY_ANNO", "PAINT", "store the first packet's paint and set it on replies"}},
    .handlers = {{"table", "r", "the mappings, '(SRC, DST) => (NEWSRC, NEWDST)' per direction"},
                 {"nmappings", "r", "live mappings"},
                 {"mapping_failures", "r", "pairs refused for want of a free address or room"},
                 {"patterns", "r", "each input's specification and its live mappings"},
                 {"patternN", "rw", "input N's specification; writing it removes its mappings"},
                 {"size", "r", "mappings in the (shared) table"},
                 {"capacity", "rw", "the table's capacity"},
                 {"clear", "w", "removes every mapping"}},
    .example = "rw :: IPAddrPairRewriter(pattern 10.0.0.1 - 0 1, drop);");

}  // namespace shoal

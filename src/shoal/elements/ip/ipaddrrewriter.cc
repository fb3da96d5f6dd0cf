// IPAddrRewriter: Click's source address rewriter (NAT without ports).
#include <fmt/format.h>

#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class IPAddrRewriter : public RewriterBase {
 protected:
  void configure_more(Args& a) override {
    Duration timeout{7200 * kSec};
    a.read("TIMEOUT", timeout);
    timeouts_ = {timeout.ns, 5 * kSec};
  }
  // A mapping rewrites the source address only; patterns that would change
  // anything else are refused.
  static bool source_only(flow::FlowId& f) { return !f.sport && !f.dport && !f.daddr; }
  int process(int port, Packet* p, uint64_t now) override {
    RewriteView v;
    if (!v.parse(p)) return not_rewritable(port);
    flow::FlowId pkt = v.flow_id(false);
    // A packet from a mapped source, or to a rewritten one (a reply).
    auto [id, dir] = table_->find(owner_, 0, flow::FlowId{pkt.saddr, 0, 0, 0});
    if (!id) std::tie(id, dir) = table_->find(owner_, 0, flow::FlowId{0, pkt.daddr, 0, 0});
    Found f{id, dir, 0};
    if (!f.id) {
      f = lookup(port, 0, 0, flow::FlowId{pkt.saddr, 0, 0, 0}, p, now, timeouts_, source_only);
      if (!f.id) return f.code;
    }
    const flow::RewriteTable::Mapping& m = table_->mapping(f.id);
    flow::FlowId to = pkt;
    if (f.dir == 0) {
      to.saddr = m.rewritten(0).saddr;
    } else {
      to.daddr = m.key[0].saddr;
      for (int i = 0; i < 4; ++i) p->anno().dst_ip[i] = uint8_t(to.daddr >> (24 - 8 * i));
      if (reply_anno_) p->anno().paint = m.reply_anno;
    }
    v.rewrite(to, false);
    if (set_aggregate_) p->anno().aggregate = m.agg;
    refresh(f.id, now, timeouts_, timeouts_.timeout);
    return m.out[f.dir];
  }
  bool find_mapping(uint8_t, const flow::FlowId& f, flow::FlowId& to, uint32_t& id, int& dir) override {
    std::tie(id, dir) = table_->find(owner_, 0, flow::FlowId{f.saddr, 0, 0, 0});
    if (!id) std::tie(id, dir) = table_->find(owner_, 0, flow::FlowId{0, f.daddr, 0, 0});
    if (!id) return false;
    const flow::RewriteTable::Mapping& m = table_->mapping(id);
    to = f;
    if (dir == 0)
      to.saddr = m.rewritten(0).saddr;
    else
      to.daddr = m.key[0].saddr;
    return true;
  }
  std::string unparse(const flow::RewriteTable::Mapping& m, int dir, uint64_t now) const override {
    return flow::format_ipv4_host(m.key[dir].saddr) + " => " + flow::format_ipv4_host(m.key[!dir].daddr) +
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
    IPAddrRewriter, .name = "IPAddrRewriter", .ports = "1-/1-", .processing = "h/h",
    .summary = "rewrites IP packets' source addresses, and replies' destinations (NAT without ports)",
    .description =
        "Click's IPAddrRewriter: a mapping is made per source address. Input specifications as TCPRewriter's, "
        "with patterns 'SADDR DADDR' whose DADDR is '-' (SADDR: an address, a range A-B or ADDR/LEN, '#' to "
        "choose in turn). A packet from a mapped source gets the new source and leaves on FOUTPUT; a packet to "
        "a new source address (a reply) gets the original address as destination (and the destination "
        "annotation) and leaves on ROUTPUT. Any IP protocol; IP and TCP/UDP checksums are updated. Mappings "
        "expire TIMEOUT after their last packet and cannot be evicted for GUARANTEE.",
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
    .handlers = {{"table", "r", "the mappings, 'OLD => NEW' per direction"},
                 {"nmappings", "r", "live mappings"},
                 {"mapping_failures", "r", "sources refused for want of a free address or room"},
                 {"patterns", "r", "each input's specification and its live mappings"},
                 {"patternN", "rw", "input N's specification; writing it removes its mappings"},
                 {"size", "r", "mappings in the (shared) table"},
                 {"capacity", "rw", "the table's capacity"},
                 {"clear", "w", "removes every mapping"}},
    .example = "rw :: IPAddrRewriter(pattern 3.0.0.1-3.0.0.255# - 0 1, drop);");

}  // namespace shoal

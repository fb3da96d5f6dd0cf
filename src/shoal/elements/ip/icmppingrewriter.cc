// ICMPPingRewriter: Click's rewriter for ICMP echo requests and replies.
#include <fmt/format.h>

#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

// A mapping's key is (SRC, DST, ID + 1, ID) for requests, and the reply
// key (DST, SRC, ID' + 1, ID') for replies to the rewritten requests (ID':
// the new identifier), so requests and replies never share a key (Click's
// trick; here with the identifier in host order).
class ICMPPingRewriter : public RewriterBase {
 protected:
  void configure_more(Args& a) override {
    Duration timeout{300 * kSec};
    a.read("DST_ANNO", dst_anno_).read("TIMEOUT", timeout);
    timeouts_ = {timeout.ns, 5 * kSec};
  }
  // The rewritten request's key: its destination "port" is its identifier + 1.
  static bool fix(flow::FlowId& f) {
    f.dport = uint16_t(f.sport + 1);
    return true;
  }
  bool reply_taken(uint8_t map, const flow::FlowId& k) const override {
    return table_->taken(owner_, map, flow::FlowId{k.saddr, k.daddr, uint16_t(k.dport + 1), k.dport});
  }
  int process(int port, Packet* p, uint64_t now) override {
    RewriteView v;
    if (!v.parse(p) || v.proto != 1 || !v.first_frag || v.l4len < 6 || (v.l4[0] != 8 && v.l4[0] != 0))
      return not_rewritable(port);
    bool echo = v.l4[0] == 8;
    uint16_t ident = k::load_be16(v.l4 + 4);
    flow::FlowId pkt = v.flow_id(false);
    flow::FlowId f{pkt.saddr, pkt.daddr, uint16_t(ident + !echo), uint16_t(ident + echo)};
    Found m;
    if (echo) {
      m = lookup(port, 0, 1, f, p, now, timeouts_, fix);
      if (!m.id) return m.code;
    } else {
      std::tie(m.id, m.dir) = table_->find(owner_, 0, f);
      if (!m.id) return not_rewritable(port);  // a reply to no request of ours
    }
    int out = apply(m, v, p, false);
    const flow::FlowId& rev = table_->mapping(m.id).key[!m.dir];
    uint16_t to = m.dir ? rev.sport : rev.dport;
    if (to != ident) {
      k::store_be16(v.l4 + 4, to);
      k::store_be16(v.l4 + 2, k::csum_update16(k::load_be16(v.l4 + 2), ident, to));
    }
    refresh(m.id, now, timeouts_, timeouts_.timeout);
    return out;
  }
  bool find_mapping(uint8_t ip_p, const flow::FlowId& f, flow::FlowId& to, uint32_t& id, int& dir) override {
    if (ip_p != 1) return false;
    std::tie(id, dir) = table_->find(owner_, 0, flow::FlowId{f.saddr, f.daddr, uint16_t(f.sport + 1), f.sport});
    if (id) to = table_->mapping(id).rewritten(dir);
    return id != 0;
  }
  std::string unparse(const flow::RewriteTable::Mapping& m, int dir, uint64_t now) const override {
    const flow::FlowId &f = m.key[dir], r = m.rewritten(dir);
    return fmt::format("({}, {}, {}) => ({}, {}, {})", flow::format_ipv4_host(f.saddr), flow::format_ipv4_host(f.daddr),
                       f.sport, flow::format_ipv4_host(r.saddr), flow::format_ipv4_host(r.daddr), r.sport) +
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
    ICMPPingRewriter, .name = "ICMPPingRewriter", .ports = "1-/1-", .processing = "h/h",
    .summary = "rewrites ICMP echo requests and replies (ping through NAT)",
    .description =
        "Click's ICMPPingRewriter: an echo request makes a mapping through its input's specification, whose "
        "pattern's port field rewrites the echo identifier ('SADDR DADDR IDENT', or 'SADDR - DADDR -' forms; "
        "a range such as 0-65535 picks a free identifier, the request's own first). Requests are rewritten "
        "(addresses, identifier, IP and ICMP checksums) and leave on FOUTPUT; echo replies to the rewritten "
        "requests get the original addresses and identifier back and leave on ROUTPUT. Other packets, and "
        "replies to no request, take a 'pass' input's output or are dropped. Mappings expire TIMEOUT after "
        "their last packet.",
    .args = {{"SPEC...", "input spec", "one per input: drop, pass, keep, pattern, or a mapper element"},
             {"TIMEOUT", "seconds", "idle timeout (default 300)"},
             {"GUARANTEE", "seconds", "no eviction for this long after a packet (default 5)"},
             {"MAPPING_CAPACITY", "integer|element",
              "mappings at most (default 1048576), or share another "
              "rewriter's table and capacity; also CAPACITY"},
             {"REAP_INTERVAL", "seconds", "how often expired mappings are removed (default 900; also REAP_TIME)"},
             {"SET_AGGREGATE", "boolean", "set the aggregate annotation to the mapping's number (default false)"},
             {"USE_CACHE", "boolean", "accepted for FastClick configurations; a lookup is already one hash probe"},
             {"DST_ANNO", "boolean", "set the destination address annotation (default true)"},
             {"REPLY_ANNO", "PAINT", "store the first packet's paint and set it on replies"}},
    .handlers = {{"table", "r", "the mappings, '(SRC, DST, ID) => (SRC', DST', ID')' per direction"},
                 {"nmappings", "r", "live mappings"},
                 {"mapping_failures", "r", "requests refused for want of a free identifier or room"},
                 {"patterns", "r", "each input's specification and its live mappings"},
                 {"patternN", "rw", "input N's specification; writing it removes its mappings"},
                 {"size", "r", "mappings in the (shared) table"},
                 {"capacity", "rw", "the table's capacity"},
                 {"clear", "w", "removes every mapping"}},
    .example = "icmp :: ICMPPingRewriter(pattern 2.0.0.2 - 0-65535 0 1, drop);");

}  // namespace shoal

// IPReassembler: puts IPv4 and IPv6 fragments back together (flow::
// Defragmenter), bounded in memory and time, overlaps resolved by a
// target-based policy. Datagrams leave in place of their last fragment.

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/flow/defrag.hh"

namespace shoal {

class IPReassembler : public Element {
 public:
  void configure(Args& a) override {
    flow::DefragConfig cfg;
    uint64_t himem = cfg.memcap, max_frags = cfg.max_frags;
    Duration timeout{cfg.timeout_ns};
    std::string policy = "bsd";
    a.read_p("HIMEM", himem).read("TIMEOUT", timeout).read("POLICY", policy).read("MAX_FRAGMENTS", max_frags);
    a.read("FRAGMENTS", pass_frags_).read("INNER", inner_only_);
    a.complete();
    if (!flow::parse_defrag_policy(policy, cfg.policy))
      a.fail(fmt::format("POLICY '{}': first, last, bsd or linux", policy));
    if (himem < 65536) a.fail("HIMEM: at least 65536 bytes (one datagram)");
    if (timeout.ns == 0) a.fail("TIMEOUT must be positive");
    if (max_frags < 2 || max_frags > 65535) a.fail("MAX_FRAGMENTS: 2 to 65535");
    cfg.memcap = himem, cfg.timeout_ns = timeout.ns, cfg.max_frags = uint32_t(max_frags);
    defrag_.configure(cfg);
  }
  void initialize() override {
    r_held_ = add_drop_reason("fragment");  // taken into a datagram (held, or rebuilt)
    r_invalid_ = add_drop_reason("bad-fragment");
    r_pool_ = add_drop_reason("pool-exhausted");
  }
  void push(int, PacketBatch* b) override {
    std::optional<OrderedOutput> out;  // made at the batch's first fragment
    b->for_each([&](uint32_t i, Packet* p) {
      now_ = std::max({now_, p->timestamp_ns(), p->trace_ns()});  // (the trace's clock, whatever the worker)
      uint32_t len = 0;
      if (inner_only_ && !(p->anno().flags & Anno::kTunnelInner)) return;
      const uint8_t* ip = flow_ip_header(p, len);
      if (!ip) return;
      uint64_t overlaps = defrag_.counters().overlaps.get();
      flow::Defragmenter::Result r = defrag_.add(ip, len, now_, buf_);
      if (r == flow::Defragmenter::NotFragment) return;
      if (!out) out.emplace(*this, b);
      if (pass_frags_)  // the fragment goes on, marked (and whether its data overlapped)
        p->anno().flags |=
            uint8_t(Anno::kFragment | (defrag_.counters().overlaps.get() != overlaps ? Anno::kFragOverlap : 0));
      // whole: a new packet with the last fragment's link header and annotations
      Packet* q = nullptr;
      bool lost = false;
      if (r == flow::Defragmenter::Done) {
        uint32_t link = uint32_t(ip - p->data());
        q = worker().pool().alloc(link + uint32_t(buf_.size()));
        lost = !q;
        if (q) {
          created();
          std::memcpy(q->data(), p->data(), link);
          std::memcpy(q->data() + link, buf_.data(), buf_.size());
          q->anno() = p->anno();
          q->anno().flags = uint8_t((q->anno().flags & ~(Anno::kFragment | Anno::kFragOverlap)) | Anno::kDefragmented);
          if (p->has_mac_header()) q->set_mac_header(0);
          q->set_network_header(link);
          // a link header kept in the headroom (Anno::link_hdr) comes too
          uint32_t lh = p->anno().link_hdr;
          if (lh && link + p->headroom() >= lh && q->headroom() >= lh)
            std::memcpy(q->data() - lh, ip - lh, lh);
          else
            q->anno().link_hdr = 0;
        }
      }
      if (pass_frags_) {
        out->take_before(i + 1);  // the fragment, then the datagram it completed
        if (lost) count_lost(r_pool_);
      } else {
        out->take_before(i);
        out->skip(i);
        b->kill(i);
        drop(p, r == flow::Defragmenter::Invalid ? r_invalid_ : lost ? r_pool_ : r_held_);
      }
      if (q) out->add(q);
    });
    defrag_.expire(now_);
    if (!out) return output_push(0, b);  // no fragment: the batch as it came
    out->finish();
  }
  void add_handlers() override {
    const flow::DefragCounters& c = defrag_.counters();
    add_stat_handler("fragments", c.fragments);
    add_stat_handler("reassembled", c.reassembled);
    add_stat_handler("overlaps", c.overlaps);
    add_stat_handler("timeouts", c.timeouts);
    add_stat_handler("evicted", c.evicted);
    add_stat_handler("too_many", c.too_many);
    add_stat_handler("invalid", c.invalid);
    add_stat_handler("held_bytes", c.held_bytes);
    add_read_handler(
        "pending", [this] { return std::to_string(defrag_.pending()); }, Agg::Sum, true);
  }

 private:
  flow::Defragmenter defrag_;
  std::vector<uint8_t> buf_;
  uint64_t now_ = 0;
  bool pass_frags_ = false;
  bool inner_only_ = false;  // tunnels' inner packets only
  uint16_t r_held_ = 0, r_invalid_ = 0, r_pool_ = 0;
};
SHOAL_ELEMENT(
    IPReassembler, .name = "IPReassembler", .ports = "1/1", .processing = "h/h",
    .summary = "reassembles IPv4 and IPv6 fragments",
    .description =
        "Packets that are not fragments pass unchanged. Fragments (IPv4, and IPv6 with a Fragment header; the IP "
        "header is at the network header annotation, else after an Ethernet header and its VLAN tags, else at the "
        "start) are taken in: their data are held until the datagram is whole, then the datagram leaves in place of "
        "the fragment that completed it, with that fragment's link header and annotations (IPv4: total length and "
        "checksum set, the fragment fields cleared; IPv6: the Fragment header removed). Each fragment taken in is "
        "counted as dropped ('fragment'); the datagram is a new packet. Overlapping data are resolved byte by byte "
        "by POLICY, Suricata's names: first (the earlier byte stays), last (the later wins), bsd (a later fragment "
        "wins where it starts before the earlier one; the default, as Suricata), linux (a later fragment wins where "
        "it starts at or before). Bounds: HIMEM bytes of fragment data held (past it the oldest datagram is given "
        "up), MAX_FRAGMENTS per datagram, 65,535 bytes per datagram, and TIMEOUT after a datagram's first fragment "
        "(packet time); fragments that cannot be (past 65,535 bytes, a non-last one not a multiple of 8 bytes, cut "
        "short) are dropped ('bad-fragment'). An atomic IPv6 fragment passes as it is (RFC 6946). With FRAGMENTS "
        "true, fragments are not dropped but go on too, each before the datagram it completes, with Anno::flags "
        "kFragment (and kFragOverlap when its data overlapped data held): an IDS inspects them as Suricata does, "
        "and the flow layer leaves them out of flows. With INNER true, only tunnels' inner packets (TunnelDecap's, "
        "Anno::flags kTunnelInner) are looked at: a second IPReassembler after TunnelDecap reassembles fragments "
        "carried in tunnels, the first one before it those of the outer packets.",
    .args = {{"HIMEM", "unsigned", "fragment data held at most, bytes (default 16 MiB)"},
             {"TIMEOUT", "time", "a datagram is given up this long after its first fragment (default 60s)"},
             {"POLICY", "first|last|bsd|linux", "overlap policy (default bsd)"},
             {"MAX_FRAGMENTS", "unsigned", "fragments per datagram (default 1024)"},
             {"FRAGMENTS", "boolean", "fragments go on as well as their datagrams (default false: taken in)"},
             {"INNER", "boolean", "only tunnels' inner packets are reassembled (default false: all)"}},
    .handlers = {{"fragments", "r", "fragments taken in"},
                 {"reassembled", "r", "datagrams made whole"},
                 {"overlaps", "r", "fragments that overlapped data already held"},
                 {"timeouts", "r", "datagrams given up at the timeout"},
                 {"evicted", "r", "datagrams given up for memory (HIMEM)"},
                 {"too_many", "r", "datagrams given up at MAX_FRAGMENTS"},
                 {"invalid", "r", "fragments that cannot be"},
                 {"held_bytes", "r", "fragment data held now"},
                 {"pending", "r", "datagrams waiting for fragments"}},
    .example =
        "FromDump(in.pcap) -> IPReassembler(POLICY bsd) -> FlowIPManager -> IDSMatcher(RULES local.rules, "
        "EVE eve.json) -> Discard;");

}  // namespace shoal

// AggregateIPFlows: numbers TCP and UDP flows (both directions one flow) in
// the aggregate annotation and marks each packet's direction in its paint.
#include <fmt/format.h>

#include <atomic>
#include <deque>
#include <unordered_map>

#include "shoal/elements/common.hh"

namespace shoal {

class AggregateIPFlows : public Element {
 public:
  void configure(Args& a) override {
    Duration tcp{uint64_t(86400) * 1000000000}, udp{uint64_t(60) * 1000000000}, frag{uint64_t(30) * 1000000000};
    a.read("TCP_TIMEOUT", tcp).read("UDP_TIMEOUT", udp).read("FRAGMENT_TIMEOUT", frag);
    a.read("FRAGMENTS", fragments_).read("MAX_HELD", max_held_);
    a.complete();
    tcp_timeout_ = tcp.ns, udp_timeout_ = udp.ns, frag_timeout_ = frag.ns;
    if (max_held_ == 0) a.fail("MAX_HELD must be at least 1");
  }
  void initialize() override {
    next_ = shared_state<std::atomic<uint32_t>>(this);  // one numbering for every worker's copy
    r_other_ = add_drop_reason("not-tcp-udp");
    r_orphan_ = add_drop_reason("fragment-without-first");
  }
  void push(int, PacketBatch* b) override {
    b->for_each([&](uint32_t, Packet* p) {
      Held h{p, classify(p)};
      held_.push_back(h);
    });
    b->clear();
    recycle(b);
    release(false);
  }
  // At a stop, fragments still waiting for their first go on unresolved.
  bool drain() override {
    release(true);
    return false;
  }
  size_t packets_held() const override { return held_.size(); }
  void cleanup() override {
    for (auto& h : held_) worker().pool().free(h.p);
    held_.clear();
  }
  void add_handlers() override {
    add_read_handler(
        "count", [this] { return std::to_string(flows_.size()); }, Agg::Sum, true);
    add_write_handler("clear", [this](const std::string&) {
      flows_.clear();
      frags_.clear();
    });
  }

 private:
  enum State : uint8_t { kDone, kWaiting, kOther };  // a fragment waiting for its first
  struct Held {
    Packet* p;
    State s;
  };
  struct Flow {
    uint32_t agg;
    uint32_t src;  // the first packet's source address and port: direction 0
    uint16_t sport;
    uint64_t last;  // packet time
  };
  struct Frag {
    uint32_t agg;
    uint8_t paint;
    uint64_t when;
  };

  // Packet time from `then` to `now`; none when timestamps go backwards.
  static uint64_t idle(uint64_t now, uint64_t then) { return now > then ? now - then : 0; }
  static uint16_t be16(const uint8_t* x) { return uint16_t(x[0] << 8 | x[1]); }
  static uint32_t be32(const uint8_t* x) { return uint32_t(x[0]) << 24 | uint32_t(x[1]) << 16 | x[2] << 8 | x[3]; }
  static uint64_t frag_key(const uint8_t* ip) {
    // source, destination, protocol and IP ID, folded (collisions only
    // mislabel a fragment whose first fragment shares all but this hash)
    uint64_t k = uint64_t(be32(ip + 12)) * 0x9e3779b97f4a7c15ull ^ uint64_t(be32(ip + 16)) * 0xc2b2ae3d27d4eb4full;
    return k ^ (uint64_t(ip[9]) << 16 | be16(ip + 4));
  }

  // Numbers p's flow now, or says it waits (a later fragment before its
  // first) or is not for this element.
  State classify(Packet* p) {
    if (!p->has_network_header()) return kOther;
    const uint8_t* ip = p->network_header();
    int64_t avail = int64_t(p->length()) - p->network_header_offset();
    if (avail < 20 || (ip[0] >> 4) != 4) return kOther;
    uint32_t hl = uint32_t(ip[0] & 15) * 4;
    uint8_t proto = ip[9];
    if (proto != 6 && proto != 17) return kOther;
    uint16_t off = be16(ip + 6);
    bool later_fragment = (off & 0x1fff) != 0, first_fragment = !later_fragment && (off & 0x2000);
    uint64_t now = p->timestamp_ns();
    if (later_fragment) {
      if (!fragments_) return kOther;
      return resolve_fragment(p) ? kDone : kWaiting;
    }
    if (hl < 20 || avail < int64_t(hl) + 4) return kOther;
    uint32_t src = be32(ip + 12), dst = be32(ip + 16);
    uint16_t sport = be16(ip + hl), dport = be16(ip + hl + 2);
    bool fwd = src < dst || (src == dst && sport <= dport);
    uint64_t key = fwd ? (uint64_t(src) << 32 | dst) : (uint64_t(dst) << 32 | src);
    uint64_t ports = fwd ? (uint64_t(sport) << 16 | dport) : (uint64_t(dport) << 16 | sport);
    Key k{key, uint32_t(ports) | uint32_t(proto == 6) << 31};
    auto it = flows_.find(k);
    uint64_t timeout = proto == 6 ? tcp_timeout_ : udp_timeout_;
    if (it == flows_.end() || idle(now, it->second.last) > timeout) {
      Flow f{next_->fetch_add(1, std::memory_order_relaxed) + 1, src, sport, now};
      it = flows_.insert_or_assign(k, f).first;
      if (++since_purge_ >= kPurgeEvery) purge(now);
    }
    Flow& f = it->second;
    f.last = std::max(f.last, now);
    p->anno().aggregate = f.agg;
    p->anno().paint = (src == f.src && sport == f.sport) ? 0 : 1;
    if (first_fragment && fragments_) frags_[frag_key(ip)] = Frag{f.agg, p->anno().paint, now};
    return kDone;
  }
  bool resolve_fragment(Packet* p) {
    auto it = frags_.find(frag_key(p->network_header()));
    if (it == frags_.end()) return false;
    p->anno().aggregate = it->second.agg;
    p->anno().paint = it->second.paint;
    return true;
  }
  // Sends on the packets at the head that are ready, in arrival order (a
  // waiting fragment holds back those behind it). A fragment waits at most
  // MAX_HELD packets or FRAGMENT_TIMEOUT of packet time; then, or at a stop,
  // it goes on unresolved (output 1, or dropped).
  void release(bool all) {
    PacketBatch* out = nullptr;
    while (!held_.empty()) {
      Held& h = held_.front();
      if (h.s == kWaiting && resolve_fragment(h.p)) h.s = kDone;
      if (h.s == kWaiting && !all && held_.size() <= max_held_ &&
          idle(held_.back().p->timestamp_ns(), h.p->timestamp_ns()) <= frag_timeout_)
        break;
      if (h.s == kDone) {
        if (!out) out = new_batch();
        out->append(h.p);
        if (out->full()) output_push(0, out), out = nullptr;
      } else {
        h.p->anno().aggregate = 0;
        if (noutputs() > 1) {
          PacketBatch* o1 = new_batch();
          o1->append(h.p);
          if (out) output_push(0, out), out = nullptr;  // keep order across the outputs
          output_push(1, o1);
        } else {
          drop(h.p, h.s == kWaiting ? r_orphan_ : r_other_);
        }
      }
      held_.pop_front();
    }
    if (out) output_push(0, out);
  }
  void purge(uint64_t now) {
    since_purge_ = 0;
    std::erase_if(flows_, [&](const auto& kv) {
      uint64_t t = kv.first.ports >> 31 ? tcp_timeout_ : udp_timeout_;
      return idle(now, kv.second.last) > t;
    });
    std::erase_if(frags_, [&](const auto& kv) { return idle(now, kv.second.when) > frag_timeout_; });
  }

  struct Key {
    uint64_t addrs;
    uint32_t ports;  // and TCP in the top bit
    bool operator==(const Key& o) const { return addrs == o.addrs && ports == o.ports; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.addrs * 31 + k.ports); }
  };
  static constexpr uint32_t kPurgeEvery = 65536;
  std::unordered_map<Key, Flow, KeyHash> flows_;
  std::unordered_map<uint64_t, Frag> frags_;
  std::deque<Held> held_;
  std::shared_ptr<std::atomic<uint32_t>> next_;
  uint64_t tcp_timeout_ = 0, udp_timeout_ = 0, frag_timeout_ = 0;
  uint32_t since_purge_ = 0;
  uint32_t max_held_ = 1024;
  bool fragments_ = true;
  uint16_t r_other_ = 0, r_orphan_ = 0;
};
SHOAL_ELEMENT(AggregateIPFlows, .name = "AggregateIPFlows", .ports = "1/1-2", .processing = "h/h",
              .summary = "numbers TCP and UDP flows in the aggregate annotation; paint says the direction",
              .description =
                  "Click's AggregateIPFlows: every TCP or UDP packet gets its flow's number (1 for the "
                  "first flow seen, then 2...) in the aggregate annotation; both directions of a "
                  "connection are one flow, and the paint annotation is 0 for the direction of the "
                  "flow's first packet and 1 for the other. A flow idle for TCP_TIMEOUT or UDP_TIMEOUT "
                  "of packet time (timestamps) starts again with a new number; the copies on several "
                  "workers share one numbering. With FRAGMENTS (the default) a later fragment takes its "
                  "first fragment's flow; one that comes before its first waits for it, holding back "
                  "the packets behind it so order is kept, for at most MAX_HELD packets or "
                  "FRAGMENT_TIMEOUT of packet time. Other packets, and fragments whose first never came, "
                  "leave on output 1 with aggregate 0, or are dropped ('not-tcp-udp', "
                  "'fragment-without-first') without it. A fragment's first must reach the same worker: "
                  "with --threads, fragments without ports may not.",
              .args = {{"TCP_TIMEOUT", "duration", "idle time that ends a TCP flow (default 1 day)"},
                       {"UDP_TIMEOUT", "duration", "idle time that ends a UDP flow (default 1 minute)"},
                       {"FRAGMENT_TIMEOUT", "duration", "how long a fragment waits for its first (default 30 s)"},
                       {"FRAGMENTS", "boolean", "follow fragments to their flows (default true)"},
                       {"MAX_HELD", "unsigned", "packets held behind a waiting fragment at most (default 1024)"}},
              .handlers = {{"count", "r", "flows in the table"}, {"clear", "w", "forget every flow"}},
              .example =
                  "FromDump(in.pcap) -> Strip(14) -> CheckIPHeader -> AggregateIPFlows\n"
                  "  -> ToIPSummaryDump(out.txt, FIELDS aggregate link src sport dst dport);");

}  // namespace shoal

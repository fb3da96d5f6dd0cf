// RewriteTable: the flow layer's address and port translation state, for
// Click's IPRewriter family (NAT, NAPT, load balancing) and any element that
// rewrites connections.
//
// A mapping rewrites one connection. It has two entries: the forward entry
// matches the connection's packets as they arrive; the reply entry matches
// the replies to the rewritten packets, that is the rewritten 5-tuple
// reversed. The two keys differ (that is the point of a rewrite), so this is
// not FlowTable, whose one canonical key serves both directions of an
// unrewritten connection.
//
// As Click's IPRewriterBase: mappings are best-effort or guaranteed (for
// GUARANTEE seconds after their last packet they cannot be evicted); a table
// at capacity evicts the best-effort mapping nearest its expiry, and refuses
// the new one when every mapping is guaranteed (admission control). Expired
// mappings still match until a reap (REAP_INTERVAL) or an eviction removes
// them, as in Click. Several rewriters may share one table (Click's
// MAPPING_CAPACITY ELEMENT) and so one capacity; each keeps its own keys.
//
// One table serves every worker's copy of a rewriter (the reply to a
// rewritten packet may arrive on another worker): elements lock `mu` around
// a batch.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shoal::flow {

// A connection's addresses and ports, host order (Click's IPFlowID).
struct FlowId {
  uint32_t saddr = 0, daddr = 0;
  uint16_t sport = 0, dport = 0;
  FlowId reverse() const { return {daddr, saddr, dport, sport}; }
  bool operator==(const FlowId&) const = default;
};
// Click's form: "(1.0.0.1, 1024, 2.0.0.2, 80)".
std::string unparse(const FlowId& f);
std::string format_ipv4_host(uint32_t a);

// Click's IPRewriterPattern: 'SADDR SPORT DADDR DPORT' (address and port
// translation) or 'SADDR DADDR' (addresses only); '-' keeps a field. The
// source may vary over a range ('1.0.0.1-1.0.0.9', '1.0.0.0/24', ports
// '1024-65535'), chosen at random, or in turn with a '#' suffix ('?': never
// try the connection's own source port first).
struct RewritePattern {
  uint32_t saddr = 0, daddr = 0;
  uint16_t sport = 0, dport = 0;
  uint32_t variation_top = 0;
  bool napt = false, sequential = false, same_first = true;
  uint32_t next_variation = 0;

  // `addr` parses one address (names included); false with `err` set to
  // Click's message ("bad source port") on a malformed pattern.
  static bool parse(const std::vector<std::string>& words, RewritePattern& out, std::string& err,
                    const std::function<bool(std::string_view, uint32_t&)>& addr);
  // The rewritten flow of `in`; false when every variation is taken
  // (`taken(k)`: a reply key k is already mapped). `rnd(top)` is uniform in [0, top].
  bool rewrite(const FlowId& in, FlowId& out, const std::function<bool(const FlowId&)>& taken,
               const std::function<uint32_t(uint32_t)>& rnd);
  std::string unparse() const;
};

// TCP sequence-number shifts of one rewritten connection (Click's
// TCPRewriter deltas, made by FTPPortMapper when it changes a payload's
// length). Per direction: transitions newest first, each shifting the
// sequence numbers at or after its trigger, and the shift before them all.
struct TcpSeqShift {
  struct Step {
    uint32_t trigger;
    int32_t delta;
  };
  std::vector<Step> steps[2];
  int32_t base[2] = {0, 0};

  bool active(int d) const { return !steps[d].empty() || base[d] != 0; }
  int32_t newest(int d) const { return steps[d].empty() ? base[d] : steps[d].front().delta; }
  // The sequence number a packet of direction d carries after the rewrite.
  uint32_t new_seq(int d, uint32_t seq) const;
  // The acknowledgement (of direction !d's data) a packet of direction d carries.
  uint32_t new_ack(int d, uint32_t ack) const;
  // From `trigger` on, direction d's data is `delta` bytes longer; false
  // when the trigger is older than the newest (out of order).
  bool add(int d, uint32_t trigger, int32_t delta);
  // A packet of direction d with sequence number seq: transitions 2^30
  // behind it can no longer matter.
  void forget_old(int d, uint32_t seq);
};

class RewriteTable {
 public:
  struct Mapping {
    FlowId key[2];  // [0] the connection as it arrives, [1] the replies as they arrive
    int32_t out[2] = {0, 0};
    uint64_t expiry_ns = 0;
    uint64_t best_effort_ns = 0;            // the expiry once a guarantee ends
    uint64_t order = 0;                     // of the last expiry change (ties)
    uint64_t heap_exp = 0, heap_order = 0;  // its heap item's key (at most expiry_ns, order)
    uint32_t owner = 0;                     // the rewriter (owner id) and input that made it
    uint32_t agg = 0;
    uint16_t input = 0;
    uint8_t map = 0;  // which of the owner's maps (IPRewriter: 0 TCP, 1 UDP)
    uint8_t ip_p = 0;
    uint8_t tflags = 0;  // the owner's connection state
    uint8_t reply_anno = 0;
    bool guaranteed = false;
    bool live = false;
    std::unique_ptr<TcpSeqShift> seq;  // made by the first shift
    // The rewritten flow as seen in direction d's packets after the rewrite.
    FlowId rewritten(int d) const { return key[!d].reverse(); }
  };
  struct Owner {
    std::string name;
    std::vector<uint64_t> count, failures;  // per input: live mappings, refusals
  };

  std::mutex mu;
  int64_t capacity = 1 << 20;

  // The owner id of a rewriter (the same for every worker's copy).
  uint32_t add_owner(const std::string& name, int ninputs);
  Owner& owner(uint32_t id) { return owners_[id]; }

  // The mapping id and direction of an arriving flow, or {0, 0}.
  std::pair<uint32_t, int> find(uint32_t owner, uint8_t map, const FlowId& f) const;
  bool taken(uint32_t owner, uint8_t map, const FlowId& f) const { return find(owner, map, f).first != 0; }
  // Adds a mapping of `flow` to `rewritten` (Click's store_flow); its
  // expiry is set. Returns its id, or 0 when the table is full of
  // guaranteed mappings (counted as the input's failure).
  uint32_t add(uint32_t owner, uint8_t map, uint16_t input, uint8_t ip_p, const FlowId& flow, const FlowId& rewritten,
               int fout, int rout, bool guaranteed, uint64_t expiry_ns, uint64_t best_effort_ns, uint64_t now);
  // A packet refreshed the mapping.
  void set_expiry(uint32_t id, bool guaranteed, uint64_t expiry_ns, uint64_t best_effort_ns);
  // Removes expired mappings, then mappings over capacity (clear: all).
  void reap(uint64_t now, bool clear = false);
  // Removes the mappings `owner` made through `input` (its pattern changed).
  void remove_input(uint32_t owner, uint16_t input);
  Mapping& mapping(uint32_t id) { return maps_[id - 1]; }
  size_t size() const { return heap_[0].size() + heap_[1].size(); }
  // Every entry of the owner's map (id, direction), in no set order.
  template <class F>
  void for_each_entry(uint32_t owner, uint8_t map, F&& f) const {
    index_.for_each([&](const Key& k, uint32_t v) {
      if (k.owner == owner && k.map == map) f(v >> 1, int(v & 1));
    });
  }

 private:
  struct Key {
    FlowId f;
    uint32_t owner;
    uint8_t map;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  // Key -> id << 1 | direction (never 0): open addressing with linear
  // probing and backward-shift deletion, at most half full (a lookup is one
  // or two adjacent slots, where a node-based map chased pointers).
  class Index {
   public:
    uint32_t* find(const Key& k);
    // The value slot of k, inserted with v when absent (fresh true).
    std::pair<uint32_t*, bool> emplace(const Key& k, uint32_t v);
    void erase(uint32_t* value);  // a slot find() or emplace() returned
    template <class F>
    void for_each(F&& f) const {
      for (const Slot& x : s_)
        if (x.v) f(x.k, x.v);
    }

   private:
    struct Slot {
      Key k;
      uint32_t v = 0;  // 0: empty
      uint32_t h = 0;
    };
    void grow();
    std::vector<Slot> s_;
    size_t mask_ = 0, n_ = 0;
  };
  using HeapItem = std::tuple<uint64_t, uint64_t, uint32_t>;  // expiry, order, id
  void destroy(uint32_t id);
  void shift_guaranteed(uint64_t now);
  void heap_insert(uint32_t id);
  void heap_erase(uint32_t id);
  uint32_t top(int c);  // the mapping nearest expiry in heap_[c] (not empty)

  std::vector<Mapping> maps_;
  std::vector<uint32_t> free_;
  Index index_;
  std::set<HeapItem> heap_[2];  // [0] best effort, [1] guaranteed
  std::vector<Owner> owners_;
  uint64_t order_ = 0;
  uint32_t agg_ = 0;
};

}  // namespace shoal::flow

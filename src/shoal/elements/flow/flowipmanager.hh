// FlowIPManager: the flow layer's element. Stateful elements downstream find
// it with FlowIPManager::upstream(), reserve per-flow state at configure time
// and read a packet's flow from its annotations (Anno::flow, Anno::flow_dir).
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "shoal/core/element.hh"
#include "shoal/flow/flowtable.hh"
#include "shoal/offload/chain.hh"

namespace shoal {

class TraceClock;

// The IP header the flow layer reads: the network header annotation, else
// an Ethernet frame's (VLAN tags skipped), else the data itself when it
// starts like IP. nullptr when there is none; len is what remains.
const uint8_t* flow_ip_header(Packet* p, uint32_t& len);

// The VLAN ids a packet carries, outermost first, three at most (as
// Suricata keeps): its Ethernet frame's 802.1Q / 802.1ad tags; a tunnel's
// inner packet (TunnelDecap) adds an ERSPAN II header's id (when not 0) and
// its inner frame's tags, as Suricata's tunnel packets. Returns how many.
int vlan_stack(const Packet* p, uint16_t ids[3]);

class FlowIPManager : public Element, public offload::FlowStateStore {
 public:
  // Where device chains of flow steps (Firewall, FlowIPLoadBalancer...) find
  // and put back their flows' state.
  uint8_t* flow_state(uint32_t id) override { return table_.state(id); }
  uint32_t flow_generation(uint32_t id) const override { return table_.flow(id).gen; }
  uint32_t flow_hash(uint32_t id) const override { return table_.flow(id).hash; }
  void retain_released() override { retain_ = true; }
  uint8_t* released_state(uint32_t id, uint32_t gen, uint32_t& hash) override;
  uint32_t flow_ids() const override { return table_.entries(); }
  void configure(Args& a) override;
  void initialize() override;
  void push(int port, PacketBatch* b) override;
  PacketBatch* pull(int port, uint32_t max) override;
  void run_timer(Timer& t) override;
  bool end_at_stop() override;
  void add_handlers() override;

  flow::FlowTable& table() { return table_; }
  // For a stateful element's configure(): track TCP windows (conntrack's
  // check of sequence and acknowledgement numbers), whatever TCP_WINDOW says.
  void want_tcp_window() { window_wanted_ = true; }
  // Hot swap: takes the old manager's flows when its table can be carried
  // (flow::FlowTable::take: the same capacity, and the same elements keep
  // the same state in it).
  void hot_swapped(Element* old) override;
  // What a state reservation is named by (FlowTable::reserve's owner): the
  // element, its class and configuration. An element whose state points
  // to objects it owns (streams, parsers) names its reservation with
  // `carried` false: a table with it is never carried, and its flows end
  // with the old configuration.
  static std::string state_owner(const Element& e, bool carried = true);
  // The nearest FlowIPManager upstream of e's input `port` (following every
  // input of the elements in between), or nullptr.
  static FlowIPManager* upstream(Element* e, int port = 0);
  // Same, for a stateful element's configure(): fails the arguments when
  // there is none.
  static FlowIPManager& require(Element* e, Args& a);

 private:
  void track(PacketBatch* b);
  std::string list_flows() const;
  std::string on_worker(const std::function<std::string()>& f);
  std::atomic<std::thread::id> owner_{};  // the thread that tracks packets
  void tick(uint64_t now);
  // Elements after this one that hold batches (Element::holds_batches):
  // ended flows wait for the batches they hold (flow::FlowTable::hold).
  std::vector<Element*> holders_;
  uint64_t done_epoch() const;
  flow::Config cfg_;
  flow::FlowTable table_;
  // The last kRetain flows that ended, with their state (retain_released):
  // a ring of entries, found by id and generation.
  void keep_released(uint32_t id, const flow::Flow& f);
  static constexpr uint32_t kRetain = 65536;
  struct Released {
    uint64_t key;  // id << 32 | generation
    uint32_t hash;
  };
  bool retain_ = false;
  bool vlan_ = false;                                // VLAN: flows keyed on the packets' VLAN ids too
  bool window_arg_ = false, window_wanted_ = false;  // TCP_WINDOW; an element downstream asked
  std::vector<Released> released_;
  std::vector<uint8_t> released_state_;
  uint32_t released_next_ = 0;
  std::unordered_map<uint64_t, uint32_t> released_at_;
  uint64_t clock_ = 0;                 // flow time: packet timestamps (ns), never going back
  std::shared_ptr<TraceClock> trace_;  // a capture's time, every worker's packets (the end's expiry)
  uint64_t last_mono_ = 0;             // when the last batch came (monotonic)
  bool live_clock_ = false;            // packet timestamps follow the wall clock (live capture)
  bool flushed_ = false;
  Timer timer_;
  // per-batch scratch for FlowTable::track_batch
  std::vector<k::ParsedKey> keys_;
  std::vector<uint32_t> lens_, ids_, slots_;
  std::vector<uint64_t> nows_;
  std::vector<uint8_t> dirs_, facts_;
  std::vector<const uint8_t*> ips_;
};

}  // namespace shoal

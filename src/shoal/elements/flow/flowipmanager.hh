// FlowIPManager: the flow layer's element. Stateful elements downstream find
// it with FlowIPManager::upstream(), reserve per-flow state at configure time
// and read a packet's flow from its annotations (Anno::flow, Anno::flow_dir).
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "shoal/core/element.hh"
#include "shoal/flow/flowtable.hh"

namespace shoal {

// The IP header the flow layer reads: the network header annotation, else
// an Ethernet frame's (VLAN tags skipped), else the data itself when it
// starts like IP. nullptr when there is none; len is what remains.
const uint8_t* flow_ip_header(Packet* p, uint32_t& len);

class FlowIPManager : public Element {
 public:
  void configure(Args& a) override;
  void initialize() override;
  void push(int port, PacketBatch* b) override;
  PacketBatch* pull(int port, uint32_t max) override;
  void run_timer(Timer& t) override;
  bool drain() override;
  void add_handlers() override;

  flow::FlowTable& table() { return table_; }
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
  flow::Config cfg_;
  flow::FlowTable table_;
  uint64_t clock_ = 0;       // flow time: packet timestamps (ns), never going back
  uint64_t last_mono_ = 0;   // when the last batch came (monotonic)
  bool live_clock_ = false;  // packet timestamps follow the wall clock (live capture)
  bool flushed_ = false;
  Timer timer_;
  // per-batch scratch for FlowTable::track_batch
  std::vector<k::ParsedKey> keys_;
  std::vector<uint32_t> lens_, ids_, slots_;
  std::vector<uint64_t> nows_;
  std::vector<uint8_t> dirs_, facts_;
};

}  // namespace shoal

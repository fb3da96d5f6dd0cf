// LinkUnqueue: pulls packets and sends them on as a link of a given latency
// and bandwidth would deliver them.
#include <deque>

#include "shoal/elements/common.hh"

namespace shoal {

class LinkUnqueue : public Element {
 public:
  void configure(Args& a) override {
    Duration latency;
    Bandwidth bw;
    a.read_mp("LATENCY", latency).read_mp("BANDWIDTH", bw);
    a.complete();
    if (!(bw.bytes_per_sec >= 1)) a.fail("BANDWIDTH must be at least 1 byte a second");
    latency_ns_ = latency.ns;
    bytes_per_sec_ = bw.bytes_per_sec;
  }
  void initialize() override {
    add_task();
    pt_.init(this, 1);
    timer_.owner = this;
    // Timestamps are wall-clock time; the link runs on the worker's clock.
    clock_offset_ = int64_t(realtime_ns()) - int64_t(worker().now_ns());
  }
  // Packets enter the link while it holds less than LATENCY of them, one
  // after the other when they come back to back; each leaves once its last
  // bit has crossed (its timestamp is set to that time).
  bool run_task() override {
    const uint64_t now = worker().now_ns(), now_delayed = now + latency_ns_;
    bool worked = false;
    while (link_.empty() || link_.back().second <= now_delayed) {
      PacketBatch* b = pt_.pull();
      if (!b) {
        back_to_back_ = false;
        break;
      }
      b->for_each([&](uint32_t, Packet* p) {
        uint64_t start = !link_.empty() && back_to_back_ ? link_.back().second : now_delayed;
        uint64_t depart = start + uint64_t(double(p->wire_length()) * 1e9 / bytes_per_sec_);
        link_.push_back({p, depart});
      });
      b->clear();
      recycle(b);
      worked = back_to_back_ = true;
    }
    PacketBatch* out = nullptr;
    while (!link_.empty() && link_.front().second <= now) {
      Packet* p = link_.front().first;
      p->set_timestamp_ns(uint64_t(int64_t(link_.front().second) + clock_offset_));
      link_.pop_front();
      if (!out) out = new_batch();
      out->append(p);
      if (out->full()) output_push(0, out), out = nullptr;
    }
    if (out) output_push(0, out), worked = true;
    // Sleep until the next packet leaves or, when the input has more, until
    // there is room for it on the link (an empty input wakes the task
    // through its notifier).
    if (!link_.empty()) {
      uint64_t wake = link_.front().second;
      if (back_to_back_ && link_.back().second > latency_ns_) wake = std::min(wake, link_.back().second - latency_ns_);
      if (wake > now) {
        set_task_active(false);
        worker().schedule(timer_, wake);
      }
    }
    return worked;
  }
  void run_timer(Timer&) override { set_task_active(true); }
  void wake_task() override {
    if (!timer_.scheduled) set_task_active(true);
  }
  size_t packets_held() const override { return link_.size(); }
  void cleanup() override {
    for (auto& [p, t] : link_) worker().pool().free(p);
    link_.clear();
  }
  void add_handlers() override {
    add_read_handler("size", [this] { return std::to_string(link_.size()); });
  }

 private:
  uint64_t latency_ns_ = 0;
  int64_t clock_offset_ = 0;
  double bytes_per_sec_ = 0;
  bool back_to_back_ = false;
  std::deque<std::pair<Packet*, uint64_t>> link_;  // packets on the link, with when they leave
  PullTask pt_;
  Timer timer_;
};
SHOAL_ELEMENT(LinkUnqueue, .name = "LinkUnqueue", .ports = "1/1", .processing = "l/h",
              .summary = "sends pulled packets on as a link of given latency and bandwidth would",
              .description =
                  "Click's LinkUnqueue: packets pulled from the input cross an emulated link. A packet enters "
                  "when the link holds less than LATENCY worth of packets; its last bit arrives LATENCY plus its "
                  "length over BANDWIDTH later (after the previous packet's, when they come back to back), and "
                  "it is pushed out then (an IPv4 packet cut short counts as long as its header says), with that time "
                  "as its timestamp.",
              .args = {{"LATENCY", "time", "the link's latency"},
                       {"BANDWIDTH", "bandwidth", "the link's rate (at least 1 byte a second)"}},
              .handlers = {{"size", "r", "packets on the link"}},
              .example = "Queue -> LinkUnqueue(5ms, 100Mbps) -> ToDump(out.pcap);");

}  // namespace shoal

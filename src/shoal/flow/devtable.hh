// DeviceFlowTable: the flow table kept in a device's memory and updated by
// kernels (kernels/flowtable_dev.hh, kernels/steps/flow_track.hh), on the
// CUDA backend or the host backend alike: each packet's connection found or
// inserted, the originator, directions, conntrack's TCP states, counters and
// times per direction as the CPU table keeps them (FlowTable), with window
// tracking when configured (each segment's verdict, conntrack's shorter
// timeouts, a reset before any reply ending its flow), and expiry by the
// same per-class timeouts. The CPU table is the reference its tests compare
// it with. A table too full for a batch evicts before it, in the CPU
// table's order (the flows nearest their expiry first: a flood of half-open
// connections evicts itself before established ones go), until the batch
// and a sixteenth of the table would fit: kernels in parallel passes cannot
// evict packet by packet as the CPU table does, so the device evicts ahead,
// in bulk, at most half the table at once, and a batch never finds the table
// full unless it brings more new flows than that (full_packets() counts
// those packets).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shoal/device/device.hh"
#include "shoal/flow/flowtable.hh"
#include "shoal/kernels/steps/flow_track.hh"

namespace shoal::flow {

class DeviceFlowTable {
 public:
  ~DeviceFlowTable();
  // false with err when device memory runs out. Capacity, timeouts,
  // midstream, async_oneside and tcp_window from `c` (granularity: expiry
  // is exact).
  bool init(std::shared_ptr<dev::Device> d, const Config& c, std::string& err);
  bool init(std::shared_ptr<dev::Device> d, uint32_t capacity, std::string& err);
  // One batch of Ethernet frames (offsets into `frames`), each at its time
  // (ns; nullptr: 0): each packet's flow id (0: none) and direction, and
  // (optional) its facts (kFactInvalid: a segment outside its window),
  // after the device did the work.
  bool track(const uint8_t* frames, size_t frames_bytes, const uint32_t* offsets, const uint32_t* lens, uint32_t n,
             std::vector<uint32_t>& ids, std::vector<uint8_t>& dirs, std::string& err, const uint64_t* nows = nullptr,
             std::vector<uint8_t>* facts = nullptr);
  // Ends the flows whose timeout has passed at `now` (FlowTable::expire).
  bool expire(uint64_t now, std::string& err);
  struct Entry {
    k::ConnKey key;
    uint8_t orig_dir;
    uint64_t pkts[2], bytes[2];
    uint64_t first_ns, last_ns;
    k::TcpTrack tcp;
    uint8_t cls, flags;  // flags: flow::Flow's kMidstream, kEstablished, kJustEstablished
    uint8_t tcp_flags[2];
    k::TcpWindow win;  // with window tracking (else zero)
  };
  // The table's flows, read back from the device.
  bool contents(std::vector<Entry>& out, std::string& err);
  // The kernels' counters as of the last call.
  const k::DevFlowCounters& counters() const { return c_; }
  uint32_t full_packets() const { return c_.full; }
  uint64_t launches() const { return launches_; }
  uint64_t rebuilds() const { return rebuilds_; }    // index rebuilds that cleared tombstones
  uint64_t evictions() const { return evictions_; }  // passes that evicted (counters().evicted: the flows)

 private:
  void* grow(void*& p, size_t& have, size_t want);
  k::FlowBatchParams params() const;
  // Room for n new flows, evicting when the last counters say there is none.
  bool make_room(uint32_t n, std::string& err);
  // Rebuilds the index when tombstones fill a quarter of it.
  bool rebuild_if_tombstoned(std::string& err);
  std::shared_ptr<dev::Device> d_;
  dev::Stream* s_ = nullptr;
  k::DevFlowView v_;
  k::DevFlowConfig cfg_{};
  k::DevFlowCounters c_{};
  uint64_t launches_ = 0, rebuilds_ = 0, evictions_ = 0;
  // batch buffers on the device, grown as needed
  void *frames_ = nullptr, *offs_ = nullptr, *lens_ = nullptr, *nows_ = nullptr, *ids_ = nullptr, *pkt_ = nullptr,
       *tflags_ = nullptr, *dirs_ = nullptr, *facts_ = nullptr, *l4_ = nullptr, *iplen_ = nullptr, *skey_ = nullptr,
       *sval_ = nullptr, *skey_out_ = nullptr, *sval_out_ = nullptr;
  size_t frames_cap_ = 0, offs_cap_ = 0, lens_cap_ = 0, nows_cap_ = 0, ids_cap_ = 0, pkt_cap_ = 0, tflags_cap_ = 0,
         dirs_cap_ = 0, facts_cap_ = 0, l4_cap_ = 0, iplen_cap_ = 0, skey_cap_ = 0, sval_cap_ = 0, skey_out_cap_ = 0,
         sval_out_cap_ = 0;
};

}  // namespace shoal::flow

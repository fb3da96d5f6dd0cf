// DeviceFlowTable: the flow table kept in a device's memory and updated by
// kernels (kernels/flowtable_dev.hh, kernels/steps/flow_track.hh), on the
// CUDA backend or the host backend alike. Today it finds or inserts each
// packet's connection, decides the originator as the CPU table does (the
// earliest packet) and counts packets and bytes per direction; expiry,
// eviction and the TCP states stay with the CPU table (FlowTable), which is
// the reference its tests compare it with.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shoal/device/device.hh"
#include "shoal/kernels/flowtable_dev.hh"

namespace shoal::flow {

class DeviceFlowTable {
 public:
  ~DeviceFlowTable();
  // false with err when device memory runs out.
  bool init(std::shared_ptr<dev::Device> d, uint32_t capacity, std::string& err);
  // One batch of Ethernet frames (offsets into `frames`): each packet's flow
  // id (0: none) and direction, after the device did the work.
  bool track(const uint8_t* frames, size_t frames_bytes, const uint32_t* offsets, const uint32_t* lens, uint32_t n,
             std::vector<uint32_t>& ids, std::vector<uint8_t>& dirs, std::string& err);
  struct Entry {
    k::ConnKey key;
    uint8_t orig_dir;
    uint64_t pkts[2], bytes[2];
  };
  // The table's flows, read back from the device.
  bool contents(std::vector<Entry>& out, std::string& err);
  uint32_t full_packets() const { return full_; }
  uint64_t launches() const { return launches_; }

 private:
  void* grow(void*& p, size_t& have, size_t want);
  std::shared_ptr<dev::Device> d_;
  dev::Stream* s_ = nullptr;
  k::DevFlowView v_;
  void* counters_ = nullptr;  // used, full
  uint64_t seq_ = 0, launches_ = 0;
  uint32_t full_ = 0;
  // batch buffers on the device, grown as needed
  void *frames_ = nullptr, *offs_ = nullptr, *lens_ = nullptr, *ids_ = nullptr, *cdir_ = nullptr, *dirs_ = nullptr,
       *iplen_ = nullptr;
  size_t frames_cap_ = 0, offs_cap_ = 0, lens_cap_ = 0, ids_cap_ = 0, cdir_cap_ = 0, dirs_cap_ = 0, iplen_cap_ = 0;
};

}  // namespace shoal::flow

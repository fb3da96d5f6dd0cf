// BatchReassembler: TCP reassembly of a whole batch of segments at once, the
// placement decided on a device (GASPP §4.2, kernels/steps/tcp_place.hh), with
// the effect of Reassembler::segment() applied to each segment in arrival
// order: the same bytes delivered at the same offsets, the same gaps, ends and
// counters. (Only `buffered` and `buffered_peak` differ: a segment the batch
// brings ahead of one that precedes it is placed, not held.)
//
// The device sorts the batch's data segments by direction and offset and
// finds, with max-scans, which continue the stream from its next expected
// byte; those are delivered from the packets as they are, without a copy.
// What the batch cannot place is handed to the Reassembler, one segment at a
// time and in arrival order, where the result depends on more than offsets:
//   - a direction's segments from its FIN (or a SYN with data) on, since the
//     FIN bounds the stream (a SYN or ACK before its first data, which only
//     sets where the stream starts, goes first);
//   - a connection with a RST in the batch (it ends both directions);
//   - a direction not yet picked up, ended, or holding out-of-order data from
//     earlier batches;
//   - a direction under a target-based overlap policy (its segments' bounds
//     decide overlaps; first and last are placed);
//   - segments overlapping one another past the next expected byte (the
//     overlap policy decides by arrival);
//   - segments past a hole the batch does not fill (they are held);
//   - a direction whose held data could reach its cap during the batch, and
//     the whole batch when the held data of all streams could reach theirs;
//   - segments more than 2^30 from the next expected byte (where the
//     sequence number's unwrapping could depend on the order).
// Directions are independent (a RST, which ends both, sends its connection
// one by one), so the order in which they are given their data is free.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/stat.hh"
#include "shoal/device/device.hh"
#include "shoal/flow/reassembly.hh"

namespace shoal::flow {

struct Segment {
  Stream* s;
  uint32_t flow;
  uint8_t dir, flags;
  uint32_t seq;
  const uint8_t* data;
  uint32_t len;
};

struct BatchCounters {
  Stat batches;          // batches that went to the device
  Stat placed;           // segments the device placed (in order, or old)
  Stat one_by_one;       // data segments given to the Reassembler one at a time
  Stat device_failures;  // batches the device failed (reassembled one by one instead)
};

class BatchReassembler {
 public:
  ~BatchReassembler();
  BatchReassembler() = default;
  BatchReassembler(const BatchReassembler&) = delete;
  BatchReassembler& operator=(const BatchReassembler&) = delete;
  void init(std::shared_ptr<dev::Device> d);
  // Reassembles the batch's segments (in arrival order) into r's streams.
  // When the device fails, the whole batch goes one by one (nothing was
  // applied before); err says why.
  void run(Reassembler& r, const std::vector<Segment>& segs, std::string& err);
  const BatchCounters& counters() const { return c_; }
  const dev::Device* device() const { return d_.get(); }

 private:
  bool place(uint32_t n, uint32_t groups, std::string& err);
  bool reserve(uint32_t n);
  std::shared_ptr<dev::Device> d_;
  dev::Stream* s_ = nullptr;
  BatchCounters c_;
  // The device's arrays for up to cap_ segments, in one allocation; the
  // inputs (keys, arrival indices, offsets, lengths) and the outputs (the
  // sorted order, the places) each contiguous, staged in one host buffer.
  uint32_t cap_ = 0;
  uint8_t *dmem_ = nullptr, *hmem_ = nullptr;
  // per data segment of the batch's candidates, in arrival order
  std::vector<uint32_t> idx_, group_of_;
  std::vector<uint64_t> key_;
  std::vector<int32_t> rel_;
  std::vector<uint32_t> len_;
  std::vector<uint8_t> role_;  // per segment of the batch
  struct Dir {
    bool started = false, open = true, bad = false, holds = false;
    uint64_t bytes = 0;  // the candidates' data
    uint64_t next = 0;   // the stream's next expected byte when its candidates began
  };
  std::vector<Dir> dirs_;  // per direction of the batch (DirStream::group)
  uint64_t batch_ = 0;     // batches run (DirStream::batch, Stream::rst_batch)
};

}  // namespace shoal::flow

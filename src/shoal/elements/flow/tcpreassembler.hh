// TCPReassembler: TCP stream reassembly on the flow layer. Stream elements
// downstream (TCPStreamDump, ...) find it with TCPReassembler::require() and
// receive each connection's bytes, in order, as flow::StreamSink.
#pragma once
#include <unordered_set>
#include <vector>

#include "shoal/core/element.hh"
#include "shoal/flow/batch_reassembly.hh"
#include "shoal/flow/reassembly.hh"

namespace shoal {

class FlowIPManager;

class TCPReassembler : public Element, private flow::StreamSink {
 public:
  ~TCPReassembler() override;
  void configure(Args& a) override;
  void initialize() override;
  void push(int port, PacketBatch* b) override;
  PacketBatch* pull(int port, uint32_t max) override;
  void add_handlers() override;

  void add_sink(flow::StreamSink* s) { sinks_.push_back(s); }
  static TCPReassembler& require(Element* e, Args& a);

 private:
  void segments(PacketBatch* b);
  void stream_data(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) override;
  void stream_gap(uint32_t flow, uint8_t dir, uint64_t offset, uint64_t len) override;
  void stream_end(uint32_t flow, uint8_t dir) override;
  flow::Stream*& slot(uint32_t id);

  FlowIPManager* mgr_ = nullptr;
  uint32_t off_ = 0;
  flow::Reassembler r_;
  bool device_ = false;
  flow::BatchReassembler batch_;  // DEVICE true
  std::vector<flow::Segment> segs_;
  std::vector<flow::StreamSink*> sinks_;
  std::unordered_set<flow::Stream*> live_;  // freed at release; the rest at destruction
  Stat streams_, bad_header_, fragmented_;
};

}  // namespace shoal

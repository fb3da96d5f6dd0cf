// Step kernels FlowGatherStep and FlowScatterStep (see kernels/step.hh): a
// chain's per-flow state kept resident on the device between aggregates
// (offload::Chain, "resident flow state"), fused with the chain's per-flow
// steps (the first and the last of their launch). One thread per flow run:
// before the chain's per-flow steps, a run whose flow an earlier aggregate
// still in flight holds takes the state that aggregate leaves in the
// resident table (indexed by flow id) instead of the record the host
// packed; after them, every run's record goes back into the table for the
// aggregates behind it. The records still come back to the host with the
// results, so the host's copy is current once the aggregate completes.
#pragma once
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// Per flow run: its mode bits.
constexpr uint8_t kFlowFromResident = 1;  // the record comes from the resident table
constexpr uint8_t kFlowToResident = 2;    // the record goes back into it

struct FlowResidentParams {
  uint8_t* table;       // resident state: (id - 1) * stride
  uint8_t* records;     // the aggregate's records (AggView::fstate)
  const uint32_t* id;   // per flow run: its flow id
  const uint8_t* mode;  // per flow run: kFlowFromResident | kFlowToResident
  uint32_t stride;      // bytes a record, a multiple of 8
  uint32_t nflows;      // runs that are flows (the last run may hold packets without one)
};

SHOAL_HD void flow_copy_record(uint8_t* dst, const uint8_t* src, uint32_t stride) {
  auto* d = reinterpret_cast<uint64_t*>(dst);
  const auto* s = reinterpret_cast<const uint64_t*>(src);
  for (uint32_t w = 0; w < stride / 8; ++w) d[w] = s[w];
}

struct FlowGatherStep {
  using Params = FlowResidentParams;
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    if (r < p.nflows && (p.mode[r] & kFlowFromResident))
      flow_copy_record(p.records + size_t(r) * p.stride, p.table + size_t(p.id[r] - 1) * p.stride, p.stride);
  }
};
SHOAL_STEP(FlowGatherStep)

struct FlowScatterStep {
  using Params = FlowResidentParams;
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    if (r < p.nflows && (p.mode[r] & kFlowToResident))
      flow_copy_record(p.table + size_t(p.id[r] - 1) * p.stride, p.records + size_t(r) * p.stride, p.stride);
  }
};
SHOAL_STEP(FlowScatterStep)

}  // namespace shoal::k

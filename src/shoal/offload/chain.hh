// The offload engine shared by Snap's element chain (HostToDevice -> device
// elements -> DeviceToHost -> CompletionQueue) and NBA's declarative form
// (an offloadable element after a balancer).
//
// A Chain is a sequence of offloadable steps. At set-up each step declares
// the packet byte ranges (ROIs, with symbolic anchors) and annotations it
// reads or writes; the chain keeps their union. Per aggregate of packets:
//   pack   each packet's ranges are resolved, overlapping and adjacent ones
//          merged, and the bytes packed back to back into pinned staging:
//          written ranges in one area, read-only ones in another;
//   copy   metadata, annotations and both areas go to the device; the
//          verdict and predicate words are cleared there;
//   steps  each step's kernel runs over the aggregate (skipping packets that
//          left the chain or whose predicate is clear);
//   back   verdicts, predicates, written annotations and the written area
//          come back; nothing else does;
//   done   polled without blocking; the written bytes are put back into the
//          packets, the steps' host hooks run, and the owner delivers.
// A failed aggregate (device error, injected fault, no device) is packed
// again and run by the same step functions on the host: nothing is lost,
// and the owner's in-order queue keeps the order.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/batch.hh"
#include "shoal/core/stat.hh"
#include "shoal/device/device.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/steps/flow_resident.hh"

namespace shoal {
class Element;
class Worker;
}  // namespace shoal

namespace shoal::offload {

struct LatencySamples;
struct LatencyHistogram;
class DeviceOccupancy;

// Where a range is measured from, resolved per packet.
enum class Anchor : uint8_t {
  Data,     // the first byte of the packet
  Mac,      // the MAC header annotation
  IP,       // the network header annotation (IP)
  L4,       // the transport header (IP_END)
  Payload,  // after the TCP (data offset), UDP (8) or ICMP (8) header
};
constexpr int32_t kToEnd = INT32_MAX;

struct Range {
  Anchor anchor = Anchor::Data;
  int32_t begin = 0;  // bytes from the anchor
  int32_t end = 0;    // bytes from the anchor (kToEnd: the packet's end); cut at the packet's end
  int32_t need = 0;   // the packet has the range only when it has anchor+need bytes (0: begin+1)
  bool write = false;
  int32_t ip_at = -1;  // >= 0: the IP header is taken to be at this offset (an earlier step checked it there)
  // NBA's "whole packet with size delta" (Plan::add_resizable): the whole
  // packet, present even when empty, with room reserved to grow it.
  bool resizable = false;
  uint32_t head_room = 0, tail_room = 0;
  bool same_place(const Range& o) const {
    return anchor == o.anchor && begin == o.begin && end == o.end && need == o.need && ip_at == o.ip_at && !resizable &&
           !o.resizable;
  }
  std::string unparse() const;
};

// Annotations that travel with the packets.
struct AnnoUse {
  bool dst_ip = false, dst_ip6 = false;  // read and possibly written (copied both ways)
  bool length = false;                   // packet lengths (to the device only)
  bool pred = false;                     // predicate bits (cleared on the device, copied back)
};

// Where per-flow state lives on the host: the flow layer's table, seen by
// the chain through this (the flow layer implements it). Ids are the
// packets' Anno::flow; a generation changes when an id is reused.
//
// A flow can end (expire, be evicted, close and reopen) while packets of it
// wait in an aggregate, its id then naming another flow. So a packet's flow
// is its id and the generation the id had when the packet reached the
// chain's first element (NbaOffload records it), and the store keeps, for a
// while, the state of flows that ended (retain_released): packets of an
// ended flow then run against the state it had, as they would have on the
// CPU, and their updates go back there.
class FlowStateStore {
 public:
  virtual ~FlowStateStore() = default;
  virtual uint8_t* flow_state(uint32_t id) = 0;
  virtual uint32_t flow_generation(uint32_t id) const = 0;
  virtual uint32_t flow_hash(uint32_t id) const = 0;
  // From now on, keep the last state of flows that end (a bounded number;
  // an ended flow's state stays in its entry until a new flow takes it,
  // with a new generation, and is kept from then).
  virtual void retain_released() = 0;
  // The state block flow `id` had when its generation `gen` ended (and its
  // hash), or nullptr when it is no longer kept.
  virtual uint8_t* released_state(uint32_t id, uint32_t gen, uint32_t& hash) = 0;
  // Flow ids are 1..flow_ids().
  virtual uint32_t flow_ids() const = 0;
};

// The union of what a chain's steps declare.
class Plan {
 public:
  // The index of `r` in the union (an identical place is shared; write wins).
  uint32_t add(const Range& r);
  // NBA's "whole packet with size delta": the whole packet, written, with up
  // to head_room bytes to push in front and tail_room to put behind (each
  // packet gets what its buffer has, at most that). Kernels reach it with
  // k::whole_data/whole_push/whole_put..., the host applies the new start
  // and length when the aggregate completes. Steps after a resizing one may
  // not declare packet ranges: their offsets would be stale (error()).
  uint32_t add_resizable(uint32_t head_room, uint32_t tail_room);
  int32_t resizable() const { return resize_; }
  // NBA's "user pre/post function" datablock: in_size bytes per packet that
  // the step's offload_pre() fills on the host before the copy, and
  // out_size bytes per packet that its kernel writes (zeroed first) and its
  // offload_post() reads at completion. Returns the block's index.
  uint32_t add_block(uint32_t in_size, uint32_t out_size);
  struct Block {
    uint32_t in_size, out_size;
  };
  const std::vector<Block>& blocks() const { return blocks_; }
  // GPUNFV's per-flow state: `bytes` at offset `off` of each flow's state
  // block in `store`. The chain groups each aggregate's packets by flow,
  // copies each flow's declared bytes into a record the step's run_flows()
  // kernel reads and writes (k::flow_state with the offset returned here),
  // and writes them back when the aggregate completes (unless the flow's
  // id was reused meanwhile). Every flow step of a chain uses one store.
  uint32_t add_flow_state(FlowStateStore* store, uint32_t off, uint32_t bytes);
  struct FlowSeg {
    uint32_t off, bytes, rec;  // in the flow's block; in the record
  };
  FlowStateStore* flow_store() const { return flow_store_; }
  const std::vector<FlowSeg>& flow_segs() const { return flow_segs_; }
  uint32_t flow_stride() const { return flow_stride_; }
  const std::vector<Range>& ranges() const { return ranges_; }
  // The chain numbers the steps as they declare (Chain's constructor).
  void begin_step(uint32_t step) { step_ = step; }
  // Whether read-only range r is read only by steps before every step that
  // writes packet bytes: it may then travel as a copy of its own, apart
  // from the written bytes it overlaps, so that only what is written comes
  // back (an IDS reading the whole packet before DecIPTTL writes its TTL).
  bool read_early(uint32_t r) const;
  // Set when the declarations cannot work together.
  std::string error;
  AnnoUse annos;
  // Set by a step that validates the IP header at a fixed offset: later
  // steps' IP/L4/payload anchors resolve from there.
  int32_t ip_at = -1;

 private:
  std::vector<Range> ranges_;
  std::vector<uint32_t> last_read_;    // per range: the last step that declared it
  uint32_t first_write_ = UINT32_MAX;  // the first step that declared a written range
  uint32_t step_ = 0;
  std::vector<Block> blocks_;
  int32_t resize_ = -1;
  FlowStateStore* flow_store_ = nullptr;
  std::vector<FlowSeg> flow_segs_;
  uint32_t flow_stride_ = 0;
};

// Resolves range r of packet p to [s, e) in data() offsets; false when absent.
bool resolve(const Range& r, const Packet* p, uint32_t& s, uint32_t& e);
// Where `anchor` lies in packet p (the IP header taken at ip_at when that
// is >= 0), in data() offsets; false when the packet has no such place.
bool anchor_of(const Packet* p, Anchor anchor, int32_t ip_at, int64_t& a);

struct Aggregate;

// What a step's offload_launch() gets: the aggregate's view (device memory,
// or host staging for the CPU fallback) and where to run.
struct Launch {
  k::AggView view;
  k::StepCtl ctl;
  bool host = false;  // run here, now (CPU fallback)
  std::shared_ptr<dev::Device> device;
  dev::Stream* stream = nullptr;
  Aggregate* agg = nullptr;
  uint8_t* base = nullptr;  // of the buffer the view points into
  // Where block j (Plan::add_block) lies for the kernel.
  const uint8_t* block_in(uint32_t j) const;
  uint8_t* block_out(uint32_t j) const;
  // Runs kernel K over every packet of the aggregate. On a device the
  // launch waits for the chain's next ones: consecutive steps' kernels go
  // as one (Device::launch_fused), so a kernel must read only its own
  // packet's results of earlier ones (use run_split otherwise).
  template <class K>
  void run(const typename K::Params& p) {
    if (host) {
      for (uint32_t t = 0; t < view.n; ++t) K::run(p, view.order ? view.order[t] : t);
    } else {
      defer(dev::step_kernel<K>(), &p, sizeof p);
    }
  }
  // Runs kernel K over per_packet threads for each packet, for a step that
  // splits a packet's work among several (the chunked payload scan): its
  // run(p, t) works on the packet at position t / per_packet, found through
  // view.order when that is set. On a device it is fused with the steps
  // around it (Device::launch_fused's split step): each packet's earlier
  // steps have finished before its threads start, and its later steps start
  // after they all finished.
  // Runs kernel K once per flow run (AggView::fruns): its run(p, r) takes
  // the run's packets in order against the flow's state record, so a flow's
  // packets see the state its earlier packets left, as on the CPU. On a
  // device it is a launch of its own over the runs, after the steps before
  // it finished with every packet.
  template <class K>
  void run_flows(const typename K::Params& p) {
    if (host) {
      for (uint32_t r = 0; r < view.nruns; ++r) K::run(p, r);
    } else {
      defer(dev::step_kernel<K>(), &p, sizeof p, kPerFlow);
    }
  }
  static constexpr uint32_t kPerFlow = UINT32_MAX;
  template <class K>
  void run_split(const typename K::Params& p, uint32_t per_packet) {
    if (host) {
      for (uint32_t t = 0, e = view.n * per_packet; t < e; ++t) K::run(p, t);
    } else {
      defer(dev::step_kernel<K>(), &p, sizeof p, per_packet);
    }
  }
  // Keeps `x` (a table snapshot, a device copy) alive until the aggregate is released.
  void keep(std::shared_ptr<const void> x);

 private:
  void defer(const dev::StepKernel& k, const void* params, size_t size, uint32_t per_packet = 0);
};

// An element that can run on a device. Its per-packet function lives in a
// step kernel (kernels/steps/) that its CPU process() shares.
class Offloadable {
 public:
  virtual ~Offloadable() = default;
  virtual Element& offload_element() = 0;
  // At set-up: ranges and annotations, through the plan. Remember indices.
  virtual void offload_declare(Plan& plan) = 0;
  // Queues (or runs, with L.host) the step's kernel; may upload tables
  // first. False with err when the device part failed (the aggregate then
  // runs on the host).
  virtual bool offload_launch(Launch& L, std::string& err) = 0;
  // At completion, on the host: packets that passed this step, and packets
  // that left the chain here (dropped or to another port).
  virtual bool offload_has_passed_hook() const { return false; }
  virtual void offload_passed(Packet*) {}
  virtual void offload_left(Packet*, uint32_t /*verdict*/) {}
  // False for elements in Snap's form: they do not join NBA chains, they
  // sit between HostToDevice and DeviceToHost, which numbers them.
  virtual bool offload_joins_chains() const { return true; }
  virtual void offload_set_step(int) {}
  // True for a step that resizes packets (Plan::add_resizable): an NBA
  // chain ends with it.
  virtual bool offload_resizes() const { return false; }
  // True for a step whose host part decides where packets go (offload_post
  // sets verdicts): an NBA chain ends with it, since later steps' kernels
  // would already have run on packets that then leave here.
  virtual bool offload_ends_chain() const { return offload_resizes(); }
  // User pre/post functions (Plan::add_block): pre() fills the step's input
  // blocks for every packet of the aggregate, once, before it is copied
  // (also when it then runs on the CPU); post() reads the output blocks at
  // completion, after the written bytes are back in the packets
  // (Aggregate::reached says which packets the step saw).
  virtual void offload_pre(Aggregate&) {}
  virtual void offload_post(Aggregate&, size_t /*step*/) {}
  // Predicates (Snap form): the bits a packet needs (any of), the bits that
  // make the step pass it by, whether output p sets bit p.
  virtual uint32_t offload_pred_check() const { return 0; }
  virtual uint32_t offload_pred_skip() const { return 0; }
  virtual bool offload_sets_predicates() const { return false; }
  // The step for one packet on the host, as its kernel does it: the output
  // port, or Element::drop_code. For packets the step skipped on the device
  // (a SKIP bit) whose bit an earlier step's offload_post() then cleared.
  // kNoHostStep: the step cannot run that way (SKIP is refused for it).
  static constexpr int kNoHostStep = INT32_MIN;
  virtual int offload_host_packet(Packet*) { return kNoHostStep; }
  virtual bool offload_has_host_packet() const { return false; }
  // The step's CPU function over an aggregate the balancer kept on the
  // host (a batch for the CPU behind aggregates in flight, a trickle the
  // sizer keeps), in place on the packets: no packing, no kernel, no pre or
  // post. A batch for the device that finds every slot in flight still
  // runs the kernels, on the host, as the device would.
  //
  // A chain whose every step can, and that keeps no per-flow state, runs
  // its host aggregates so; where the CPU function is a library's
  // (intel-ipsec-mb, Hyperscan) and the kernel a portable one, a balancer's
  // CPU share would otherwise run at the portable kernel's speed.
  // offload_host_run sets the result (Aggregate::set_result) of each packet
  // that reached the step and counts what the element's CPU path counts
  // (default: offload_host_packet for each packet).
  //
  // When: AtArrival for a step whose order-bound state a device aggregate
  // takes when it is packed (IPsecOutbound's sequence numbers), AtTurn for
  // one whose host part changes state at completion (an IDS's flows, the
  // replay window), so that either way the state sees packets in arrival
  // order. A chain with an AtTurn step runs all its steps at their turn.
  enum class HostDirect : uint8_t { No, AtArrival, AtTurn };
  virtual HostDirect offload_host_direct() { return HostDirect::No; }
  virtual void offload_host_run(Aggregate& a, size_t step);
};

// A device copy of `bytes` at src (a table), freed when the last holder
// lets go; nullptr with err on failure.
std::shared_ptr<void> upload_shared(const std::shared_ptr<dev::Device>& d, const void* src, size_t bytes,
                                    std::string& err);

// One device copy of a table snapshot for every worker's element: the live
// copy made for (device, key) if there is one, else make()'s (nullptr on
// failure, not remembered). `made` says which. A copy lives while an
// element or an aggregate in flight holds it; the key (the snapshot) must
// stay alive as long as the copy does (the copy holds it).
std::shared_ptr<void> shared_device_copy(const dev::Device* d, const void* key,
                                         const std::function<std::shared_ptr<void>()>& make, bool& made);
template <class T>
std::shared_ptr<T> shared_device_copy(const dev::Device* d, const void* key,
                                      const std::function<std::shared_ptr<T>()>& make, bool& made) {
  return std::static_pointer_cast<T>(shared_device_copy(
      d, key, [&]() -> std::shared_ptr<void> { return make(); }, made));
}

struct ChainStats {
  Stat aggregates, packets;       // completed
  Stat device_aggregates;         // that ran on the device
  Stat device_packets;            // packets in them
  Stat cpu_busy;                  // on the CPU: every device slot was in flight
  Stat cpu_fault, fault_packets;  // on the CPU after a device failure
  Stat h2d_bytes, d2h_bytes;      // moved across the bus (device aggregates)
  Stat roi_bytes;                 // packet bytes packed (ROI union)
  Stat inflight_max;
  Stat host_steps;  // steps run on the host for packets whose SKIP bit was cleared
  Stat reordered;   // aggregates packet scheduling put in another order
  // Host time (ns) the owning worker spent on each stage: packing and
  // queueing the copies, queueing (or, on the CPU, running) the steps, and
  // completion (bytes back into packets, the steps' host parts such as the
  // IDS's verification). What a worker spends elsewhere is the rest of its
  // graph (reading, dispatch, delivery) or idle time.
  Stat pack_ns, launch_ns, complete_ns;
  Stat zero_copy;    // device aggregates their kernels read and wrote in host memory (Chain::set_zero_copy)
  Stat flow_runs;    // flows in the aggregates of chains with per-flow state (Plan::add_flow_state)
  Stat flow_stale;   // flows that had ended longer ago than the store keeps their state (run from zero)
  Stat host_direct;  // host aggregates run through the steps' CPU functions (Offloadable::offload_host_direct)
  // Resident flow state (Chain::set_flow_resident): aggregates begun while
  // others of the chain were on the device, flow runs whose state came from
  // the device's copy, and aggregates redone on the host because one before
  // them failed (they read state it never wrote).
  Stat flow_overlapped, flow_resident, flow_redone;
};

class Chain;

struct Aggregate {
  Chain* chain = nullptr;
  PacketBatch* batch = nullptr;   // the packets, in order, dense
  dev::Stream* stream = nullptr;  // nullptr: a CPU-only aggregate
  uint8_t* host = nullptr;        // staging (pinned for CUDA)
  size_t host_cap = 0;
  uint8_t* dbuf = nullptr;  // device memory, same layout
  size_t dev_cap = 0;
  uint8_t* kbuf = nullptr;  // what kernels use: dbuf, or the host buffer in place (zero-copy)
  bool on_device = false, failed = false, zero = false;
  bool direct = false;     // on the host through the steps' CPU functions (offload_host_run): nothing packed
  bool at_turn = false;    // direct: run at completion (Offloadable::HostDirect::AtTurn), not when begun
  bool done = false;       // ready() said so (it is asked again: counted once)
  bool occupying = false;  // counted in the device's occupancy until ready() sees it end
  std::string error;
  uint64_t start_ns = 0;
  uint64_t formed_ns = 0;  // when its first packet reached the offloading element (NbaOffload)
  // Layout (offsets in both buffers).
  uint32_t n = 0, nr = 0;
  bool has_len = false, has_pred = false, has_dst = false, has_dst6 = false;
  size_t o_roff = 0, o_rlen = 0, o_plen = 0, o_verdict = 0, o_pred = 0, o_dst = 0, o_dst6 = 0, o_rw = 0, o_ro = 0,
         o_end = 0;
  size_t o_hroom = 0, o_troom = 0, o_rshead = 0, o_rslen = 0;  // the resizable range's words
  size_t o_order = 0;
  bool has_order = false;
  // Per-flow state (Plan::add_flow_state): runs, grouped order, hashes,
  // directions (to the device), state records (both ways).
  uint32_t nruns = 0, nflows = 0;
  size_t o_fruns = 0, o_forder = 0, o_fhash = 0, o_fdir = 0, o_fstate = 0;
  std::vector<uint32_t> run_flow, run_gen;  // per flow run: its id and generation
  std::vector<uint32_t> pkt_gen;            // per packet: its flow's generation (Chain::begin's gens)
  // Resident flow state (Chain::set_flow_resident): an aggregate that
  // overlaps others of its chain on the device (its flows' state passing
  // between them there), the failure epoch it began in, the stream it
  // follows, its runs' ids and modes (k::kFlowFromResident...), and the
  // flow ids it counts as in flight.
  bool piped = false;
  uint64_t epoch = 0;
  dev::Stream* after = nullptr;
  size_t o_fid = 0, o_fmode = 0;
  std::vector<uint32_t> held_ids;
  std::vector<size_t> o_bin, o_bout;  // user blocks
  size_t rw_bytes = 0, ro_bytes = 0;
  struct Seg {
    uint32_t pkt, s, e, pos;  // packet index, [s, e) in the packet, position in the written area
    bool resizable;           // the resizable whole packet (its new start and length apply)
  };
  std::vector<Seg> rw_segs;
  std::vector<std::shared_ptr<const void>> keep;
  // Kernels queued by Launch::run and not yet launched (Chain::flush):
  // each with its parameters at an offset of pending_params.
  struct Pending {
    const dev::StepKernel* kernel;
    size_t off, size;
    uint32_t per_packet;  // a split step (Launch::run_split), or 0
  };
  std::vector<Pending> pending;
  std::vector<uint8_t> pending_params;
  k::AggView view(uint8_t* base) const;
  uint32_t verdict(uint32_t i) const { return reinterpret_cast<const uint32_t*>(host + o_verdict)[i]; }
  // For offload_post() of a step that ends its chain (offload_ends_chain):
  // packet i leaves step s on `port` (0 is where it goes anyway).
  void set_port(uint32_t i, size_t s, uint32_t port) {
    reinterpret_cast<uint32_t*>(host + o_verdict)[i] = port ? uint32_t(s + 1) << 16 | (port & 0xff) : 0;
  }
  // Packet i leaves the chain at step s as `r` says (a port, or a drop code).
  void set_result(uint32_t i, size_t s, int r) {
    uint32_t tag = uint32_t(s + 1) << 16;
    reinterpret_cast<uint32_t*>(host + o_verdict)[i] = r < 0 ? tag | 0x8000u | (uint32_t(-1 - r) & 0x7fff)
                                                       : r   ? tag | (uint32_t(r) & 0xff)
                                                             : 0;
  }
  // Whether packet i got to step s (it had not left the chain before it).
  bool reached(uint32_t i, size_t s) const {
    uint32_t v = verdict(i);
    return v == 0 || k::verdict_step(v) >= s;
  }
  // Host copies of block j: n packets times its in/out size.
  uint8_t* block_in(uint32_t j) { return host + o_bin[j]; }
  const uint8_t* block_out(uint32_t j) const { return host + o_bout[j]; }
};

// The aggregate a batch between HostToDevice and CompletionQueue belongs to.
inline Aggregate* aggregate_of(PacketBatch* b) { return static_cast<Aggregate*>(b->anno.offload); }

class Chain {
 public:
  // `inflight`: aggregates on the device at once (each with its own stream).
  // Statistics go to `stats` (owned by the element, so its handlers exist
  // before the chain does); device may be null (every aggregate on the CPU).
  // whole_packets: copy every packet whole, both ways (no ROI slicing; the
  // baseline slicing is measured against).
  Chain(Element& owner, std::shared_ptr<dev::Device> device, std::vector<Offloadable*> steps, uint32_t inflight,
        ChainStats& stats, bool whole_packets = false);
  ~Chain();
  Chain(const Chain&) = delete;
  Chain& operator=(const Chain&) = delete;

  const Plan& plan() const { return plan_; }
  const std::vector<Offloadable*>& steps() const { return steps_; }
  dev::Device* device() const { return device_.get(); }
  ChainStats& stats() { return stats_; }
  const std::string& last_error() const { return last_error_; }
  // Whether device aggregates are possible (a device, not given up on).
  bool device_usable() const { return device_ && !given_up_; }
  // Why the steps' declarations do not fit together (empty: they do).
  const std::string& error() const { return error_; }
  // GASPP's packet scheduling (off by default): each aggregate's packets
  // are put in order of protocol and length (a stable counting sort on the
  // host, 4 bytes a packet more to the device) and kernels' threads take
  // them in that order; results come back in the aggregate's own order.
  void set_schedule(bool on) { schedule_ = on; }
  // Zero-copy: an aggregate that needs at most `bytes` per packet both ways
  // is not copied; its kernels read and write it in pinned host memory over
  // the bus (two driver calls fewer per aggregate; worth it for small
  // slices). 0: never.
  void set_zero_copy(uint32_t bytes) { zero_copy_ = bytes; }
  bool schedule() const { return schedule_; }
  // "A -> B -> C" and the ROI union, for handlers.
  std::string describe() const;

  // Takes b (dense); packs it and starts the copy to the device, or, with
  // no device slot free (or want_device false, or the device given up),
  // marks it for the CPU. Never fails.
  Aggregate* begin(PacketBatch* b, bool want_device);
  // For a chain with per-flow state: the generation of each live packet's
  // flow (in order; FlowStateStore::flow_generation when the packet came),
  // taken by the next begin().
  void set_flow_generations(std::vector<uint32_t>&& gens) { next_gens_ = std::move(gens); }
  // Resident flow state (on by default where the device orders streams):
  // a chain with per-flow state keeps a copy of each flow's state on the
  // device (a table indexed by flow id), so device aggregates need not wait
  // for the one before to come back. Off, a chain with per-flow state runs
  // one aggregate at a time (NbaOffload waits), each starting from the
  // state the host holds.
  void set_flow_resident(bool on) { resident_on_ = on; }
  // Whether b (with its packets' flow generations) may begin now as a
  // device aggregate while others of the chain are in flight: every
  // aggregate in flight is one (of the current failure epoch), a device
  // slot is free, and none of b's flows is in flight under another
  // generation or appears in b under two.
  bool can_overlap(PacketBatch* b, const std::vector<uint32_t>& gens);
  void step(Aggregate& a, size_t i);  // queue step i (or run it, on the CPU)
  // Launches the kernels the steps queued so far (fused when several);
  // with `signal`, the last one marks the aggregate's end itself
  // (Device::launch_fused).
  void flush(Aggregate& a, bool signal = false);
  void end(Aggregate& a);  // queue the copy back and the completion mark
  void run(Aggregate& a) {
    if (a.direct) {
      if (!a.at_turn) run_direct(a);
      return;
    }
    for (size_t i = 0; i < steps_.size(); ++i) step(a, i);
    end(a);
  }
  // Non-blocking; true when the aggregate's results are in host memory (a
  // failed device aggregate has been redone on the CPU by then).
  bool ready(Aggregate& a);
  // Blocks until ready (draining at exit, tests).
  void wait(Aggregate& a);
  // Written bytes and annotations back into the packets, hooks run. The
  // verdicts stay readable until release().
  void complete(Aggregate& a);
  void run_skipped(Aggregate& a, size_t step);
  // Back to the pool; returns the batch (the caller owns it again).
  PacketBatch* release(Aggregate& a);
  uint32_t in_flight() const { return busy_; }
  // Bytes per packet that `a` moves to and from the device.
  size_t h2d_bytes(const Aggregate& a) const;
  size_t d2h_bytes(const Aggregate& a) const;

 private:
  bool pack(Aggregate& a, bool pre);  // false: out of memory
  bool ensure(Aggregate& a, size_t bytes);
  void reserve(const Aggregate& first);
  // Whole packets are taken to be at most this long when buffers are
  // reserved; no aggregate's reservation exceeds kReserveCap.
  static constexpr size_t kMaxPacket = 2048, kReserveCap = size_t(64) << 20;
  bool reserved_ = false;
  size_t reserve_hint_ = 0;
  LatencySamples* latency_ = nullptr;      // this worker's (Services::latencies)
  LatencyHistogram* histogram_ = nullptr;  // the runtime's (Services::latency_histogram)
  DeviceOccupancy* occupancy_ = nullptr;   // the runtime's (Services::occupancy)
  void stop_occupying(Aggregate& a);
  void redo_on_host(Aggregate& a);
  void note_failure(Aggregate& a, const std::string& err);

  Element& owner_;
  std::shared_ptr<dev::Device> device_;
  std::vector<Offloadable*> steps_;
  Plan plan_;
  std::vector<std::unique_ptr<Aggregate>> dev_free_, cpu_free_;
  uint32_t busy_ = 0, inflight_;
  uint32_t consecutive_failures_ = 0;
  bool given_up_ = false, reported_ = false;
  std::string last_error_, error_;
  ChainStats& stats_;
  bool schedule_ = false;
  bool direct_ok_ = false;  // host aggregates may run through the steps' CPU functions (offload_host_direct)
  void run_direct(Aggregate& a);
  void passed_and_left(Aggregate& a, size_t step);
  uint32_t zero_copy_ = 0;
  void schedule(Aggregate& a);
  // Groups a's packets by flow (the order and runs of AggView::f*) into
  // scratch; returns the number of runs.
  uint32_t group_flows(Aggregate& a);
  void pack_flows(Aggregate& a, bool pre);
  void write_back_flows(Aggregate& a);
  // Resident flow state: whether it is usable (allocating the table the
  // first time), whether b's flows fit (can_overlap), the failure epoch
  // moving on, and the parameters of the gather and scatter fused around
  // a's per-flow steps (kernels/steps/flow_resident.hh).
  bool resident_ready();
  bool flows_fit(PacketBatch* b, const std::vector<uint32_t>& gens);
  void new_epoch();
  k::FlowResidentParams resident_params(const Aggregate& a) const;
  bool resident_on_ = true, resident_tried_ = false, resident_ = false;
  uint8_t* res_ = nullptr;  // device memory: flow_ids() records of flow_stride() bytes
  struct FlowLive {
    uint32_t live, gen;    // runs in overlapping aggregates in flight, and their generation
    uint32_t stamp, sgen;  // flows_fit's: seen in the batch it looks at, under this generation
  };
  std::vector<FlowLive> fl_live_;  // per flow id
  uint32_t fit_stamp_ = 0;
  PacketBatch* fit_batch_ = nullptr;  // can_overlap's answer for begin()
  bool fit_ = false;
  uint64_t epoch_ = 0;
  uint32_t piped_live_ = 0, other_live_ = 0;  // aggregates begun and not released: overlapping (this epoch), others
  Aggregate* last_piped_ = nullptr;
  // pack() scratch
  std::vector<uint32_t> sched_key_, sched_count_;
  std::vector<uint32_t> fl_next_, fl_head_, fl_tail_, fl_slot_, fl_runs_, fl_order_;
  std::vector<uint8_t> fl_dir_;
  std::vector<uint64_t> fl_key_;  // per flow run: id and generation
  std::vector<uint32_t> next_gens_;
  struct Piece {
    uint32_t s, e, range;
    bool write;
  };
  struct Group {
    uint32_t pkt, s, e, pos;
    bool write;
  };
  std::vector<Piece> pieces_;  // a packet's ranges: those read late, then those read early (Plan::read_early)
  std::vector<Group> groups_;
  std::vector<uint8_t> read_early_;  // per range: Plan::read_early
  // The distinct places ranges are measured from (anchor and ip_at), each
  // found once per packet, and the one each range uses.
  struct AnchorKey {
    Anchor anchor;
    int32_t ip_at;
  };
  std::vector<AnchorKey> anchors_;
  std::vector<uint32_t> range_anchor_;
  std::vector<int64_t> anchor_at_;
  std::vector<uint8_t> anchor_has_;
};

// Registers the statistics handlers of a chain (PREFIX aggregates, ...).
void add_chain_handlers(Element& e, ChainStats& s, const std::string& prefix, const std::function<Chain*()>& chain);

}  // namespace shoal::offload

#include "shoal/offload/chain.hh"

#include "shoal/offload/services.hh"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>

#include "shoal/core/element.hh"
#include "shoal/core/worker.hh"
#include "shoal/kernels/flowstate.hh"
#include "shoal/kernels/steps/flow_resident.hh"

namespace shoal::offload {

namespace {
constexpr size_t align64(size_t x) { return (x + 63) & ~size_t(63); }
constexpr size_t align16(size_t x) { return (x + 15) & ~size_t(15); }
constexpr uint32_t kRoFlag = 0x80000000u;  // pack(): an offset in the read-only area, fixed up later

const char* anchor_name(Anchor a) {
  switch (a) {
    case Anchor::Data: return "DATA";
    case Anchor::Mac: return "ETH";
    case Anchor::IP: return "IP";
    case Anchor::L4: return "L4";
    case Anchor::Payload: return "PAYLOAD";
  }
  return "?";
}

// The transport header's offset for an IP header at `ip` (data offset).
bool l4_of(const Packet* p, uint32_t ip, uint32_t& l4) {
  const uint8_t* d = p->data();
  uint32_t len = p->length();
  if (ip >= len) return false;
  uint8_t v = d[ip] >> 4;
  if (v == 4) {
    l4 = ip + uint32_t(d[ip] & 0xf) * 4;
  } else if (v == 6) {
    l4 = ip + 40;
  } else {
    return false;
  }
  return l4 <= len;
}
}  // namespace

std::string Range::unparse() const {
  std::string e = end == kToEnd ? "END" : fmt::format("{}+{}", anchor_name(anchor), end);
  std::string s = fmt::format("{} [{}+{}, {})", write ? "rw" : "r", anchor_name(anchor), begin, e);
  if (ip_at >= 0) s += fmt::format(" (IP at {})", ip_at);
  if (resizable) s += fmt::format(" (resizable: {} bytes in front, {} behind)", head_room, tail_room);
  return s;
}

uint32_t Plan::add(const Range& r) {
  if (resize_ >= 0 && error.empty())
    error = "declares packet bytes after a step that resizes packets (their offsets would be stale)";
  if (r.write) first_write_ = std::min(first_write_, step_);
  for (size_t i = 0; i < ranges_.size(); ++i)
    if (ranges_[i].same_place(r)) {
      ranges_[i].write |= r.write;
      last_read_[i] = std::max(last_read_[i], step_);
      return uint32_t(i);
    }
  ranges_.push_back(r);
  last_read_.push_back(step_);
  return uint32_t(ranges_.size() - 1);
}

uint32_t Plan::add_flow_state(FlowStateStore* store, uint32_t off, uint32_t bytes) {
  if (flow_store_ && store != flow_store_ && error.empty())
    error = "the flow steps of one chain must use one flow layer (one FlowIPManager)";
  flow_store_ = store;
  uint32_t rec = (flow_stride_ + 7) & ~7u;
  flow_segs_.push_back({off, bytes, rec});
  flow_stride_ = (rec + bytes + 7) & ~7u;
  return rec;
}

bool Plan::read_early(uint32_t r) const { return !ranges_[r].write && last_read_[r] < first_write_; }

uint32_t Plan::add_resizable(uint32_t head_room, uint32_t tail_room) {
  first_write_ = std::min(first_write_, step_);
  if (resize_ >= 0) {
    if (error.empty()) error = "a second step resizes packets in one chain";
    return uint32_t(resize_);
  }
  Range r;
  r.end = kToEnd;
  r.write = true;
  r.resizable = true;
  r.head_room = head_room, r.tail_room = tail_room;
  ranges_.push_back(r);
  resize_ = int32_t(ranges_.size() - 1);
  return uint32_t(resize_);
}

uint32_t Plan::add_block(uint32_t in_size, uint32_t out_size) {
  blocks_.push_back({in_size, out_size});
  return uint32_t(blocks_.size() - 1);
}

bool anchor_of(const Packet* p, Anchor anchor, int32_t ip_at, int64_t& a) {
  uint32_t len = p->length();
  uint32_t ip = 0;
  bool have_ip = false;
  if (ip_at >= 0) {
    ip = uint32_t(ip_at), have_ip = true;
  } else if (p->has_network_header() && p->network_header_offset() >= 0) {
    ip = uint32_t(p->network_header_offset()), have_ip = true;
  }
  switch (anchor) {
    case Anchor::Data: a = 0; return true;
    case Anchor::Mac:
      if (!p->has_mac_header() || p->mac_header_offset() < 0) return false;
      a = p->mac_header_offset();
      return true;
    case Anchor::IP: a = ip; return have_ip;
    case Anchor::L4:
    case Anchor::Payload: {
      uint32_t l4;
      if (ip_at < 0 && p->has_transport_header() && p->transport_header_offset() >= 0) {
        l4 = uint32_t(p->transport_header_offset());
      } else if (!have_ip || !l4_of(p, ip, l4)) {
        return false;
      }
      a = l4;
      if (anchor == Anchor::Payload) {
        if (!have_ip || ip + 10 > len) return false;
        const uint8_t* d = p->data();
        uint8_t proto = (d[ip] >> 4) == 6 ? d[ip + 6] : d[ip + 9];
        if (proto == 6) {
          if (l4 + 13 > len) return false;
          a += (d[l4 + 12] >> 4) * 4;
        } else if (proto == 17 || proto == 1 || proto == 58) {
          a += 8;
        }
      }
      return true;
    }
  }
  return false;
}

namespace {
// Range r at anchor a of a packet of len bytes: [s, e), or false.
inline bool place(const Range& r, int64_t a, uint32_t len, uint32_t& s, uint32_t& e) {
  int64_t need = r.resizable ? 0 : a + (r.need ? r.need : r.begin + 1);
  if (need > int64_t(len) || a + r.begin < 0) return false;
  s = uint32_t(a + r.begin);
  int64_t end = r.end == kToEnd ? int64_t(len) : std::min<int64_t>(a + r.end, len);
  if (end < int64_t(s)) return false;
  e = uint32_t(end);
  return true;
}
}  // namespace

bool resolve(const Range& r, const Packet* p, uint32_t& s, uint32_t& e) {
  int64_t a;
  return anchor_of(p, r.anchor, r.ip_at, a) && place(r, a, p->length(), s, e);
}

std::shared_ptr<void> upload_shared(const std::shared_ptr<dev::Device>& d, const void* src, size_t bytes,
                                    std::string& err) {
  void* p = d->dev_alloc(bytes);
  if (!p) {
    err = fmt::format("out of device memory ({} bytes)", bytes);
    return nullptr;
  }
  std::shared_ptr<void> sp(p, [d](void* x) { d->dev_free(x); });
  std::vector<uint8_t> zeros;
  if (!src && bytes) {  // an empty table (a vector's data() may be null): a zeroed buffer, so pointers stay valid
    zeros.assign(bytes, 0);
    src = zeros.data();
  }
  if (bytes && !d->upload(p, src, bytes, err)) return nullptr;
  return sp;
}

std::shared_ptr<void> shared_device_copy(const dev::Device* d, const void* key,
                                         const std::function<std::shared_ptr<void>()>& make, bool& made) {
  static std::mutex mu;
  static std::map<std::pair<const void*, const void*>, std::weak_ptr<void>> copies;
  made = false;
  std::lock_guard<std::mutex> g(mu);  // also keeps two workers from uploading the same table at once
  auto k = std::make_pair(static_cast<const void*>(d), key);
  if (auto it = copies.find(k); it != copies.end())
    if (auto sp = it->second.lock()) return sp;
  std::shared_ptr<void> sp = make();
  if (!sp) return nullptr;
  made = true;
  std::erase_if(copies, [](const auto& kv) { return kv.second.expired(); });
  copies[k] = sp;
  return sp;
}

void Launch::keep(std::shared_ptr<const void> x) { agg->keep.push_back(std::move(x)); }
void Launch::defer(const dev::StepKernel& k, const void* params, size_t size, uint32_t per_packet) {
  size_t off = (agg->pending_params.size() + 15) & ~size_t(15);
  agg->pending_params.resize(off + size);
  std::memcpy(agg->pending_params.data() + off, params, size);
  agg->pending.push_back({&k, off, size, per_packet});
}
const uint8_t* Launch::block_in(uint32_t j) const { return base + agg->o_bin[j]; }
uint8_t* Launch::block_out(uint32_t j) const { return base + agg->o_bout[j]; }

k::AggView Aggregate::view(uint8_t* base) const {
  k::AggView v;
  v.n = n;
  v.nranges = nr;
  v.verdict = reinterpret_cast<uint32_t*>(base + o_verdict);
  v.pred = has_pred ? reinterpret_cast<uint32_t*>(base + o_pred) : nullptr;
  v.data = base + o_rw;
  v.roff = reinterpret_cast<const uint32_t*>(base + o_roff);
  v.rlen = reinterpret_cast<const uint32_t*>(base + o_rlen);
  v.plen = has_len ? reinterpret_cast<const uint32_t*>(base + o_plen) : nullptr;
  v.dst_ip = has_dst ? base + o_dst : nullptr;
  v.dst_ip6 = has_dst6 ? base + o_dst6 : nullptr;
  v.order = has_order ? reinterpret_cast<const uint32_t*>(base + o_order) : nullptr;
  if (chain->plan().flow_store()) {
    v.nruns = nruns;
    v.nflows = nflows;
    v.fstride = chain->plan().flow_stride();
    v.fruns = reinterpret_cast<const uint32_t*>(base + o_fruns);
    v.forder = reinterpret_cast<const uint32_t*>(base + o_forder);
    v.fhash = reinterpret_cast<const uint32_t*>(base + o_fhash);
    v.fdir = base + o_fdir;
    v.fstate = base + o_fstate;
  }
  if (chain->plan().resizable() >= 0) {
    v.rs_range = uint32_t(chain->plan().resizable());
    v.rs_head = reinterpret_cast<int32_t*>(base + o_rshead);
    v.rs_len = reinterpret_cast<uint32_t*>(base + o_rslen);
    v.rs_hroom = reinterpret_cast<const uint32_t*>(base + o_hroom);
    v.rs_troom = reinterpret_cast<const uint32_t*>(base + o_troom);
  }
  return v;
}

Chain::Chain(Element& owner, std::shared_ptr<dev::Device> device, std::vector<Offloadable*> steps, uint32_t inflight,
             ChainStats& stats, bool whole_packets)
    : owner_(owner),
      device_(std::move(device)),
      steps_(std::move(steps)),
      inflight_(std::max(1u, inflight)),
      stats_(stats) {
  if (whole_packets) {
    Range all;
    all.end = kToEnd;
    all.write = true;
    plan_.add(all);
  }
  for (size_t j = 0; j < steps_.size(); ++j) {
    Offloadable* s = steps_[j];
    plan_.begin_step(uint32_t(j));
    s->offload_declare(plan_);
    if (!plan_.error.empty() && error_.empty()) error_ = s->offload_element().name() + ": " + plan_.error;
  }
  for (uint32_t r = 0; r < plan_.ranges().size(); ++r) {
    const Range& x = plan_.ranges()[r];
    read_early_.push_back(plan_.read_early(r));
    size_t k = 0;
    while (k < anchors_.size() && !(anchors_[k].anchor == x.anchor && anchors_[k].ip_at == x.ip_at)) ++k;
    if (k == anchors_.size()) anchors_.push_back({x.anchor, x.ip_at});
    range_anchor_.push_back(uint32_t(k));
  }
  if (plan_.flow_store()) plan_.flow_store()->retain_released();
  static const bool direct_on = [] {  // SHOAL_HOST_DIRECT=0: host aggregates run the kernels (for A/B runs)
    const char* e = std::getenv("SHOAL_HOST_DIRECT");
    return !e || std::string_view(e) != "0";
  }();
  direct_ok_ = direct_on && !whole_packets && !plan_.flow_store() && !steps_.empty();
  pieces_.resize(plan_.ranges().size());
  anchor_at_.resize(anchors_.size());
  anchor_has_.resize(anchors_.size());
  latency_ = &services(owner_.worker().runtime()).latencies(owner_.worker().id());
  histogram_ = &services(owner_.worker().runtime()).latency_histogram;
  occupancy_ = &services(owner_.worker().runtime()).occupancy;
  if (device_)
    for (uint32_t i = 0; i < inflight_; ++i) {
      auto a = std::make_unique<Aggregate>();
      a->stream = device_->stream_create();
      dev_free_.push_back(std::move(a));
    }
}

Chain::~Chain() {
  auto drop = [&](std::unique_ptr<Aggregate>& a) {
    if (a->stream) device_->stream_destroy(a->stream);
    if (device_) {
      device_->host_free(a->host);
      device_->dev_free(a->dbuf);
    } else {
      std::free(a->host);
    }
  };
  for (auto& a : dev_free_) drop(a);
  for (auto& a : cpu_free_) drop(a);
  if (res_) device_->dev_free(res_);
}

bool Chain::ensure(Aggregate& a, size_t bytes) {
  // (a buffer's first size is the chain's hint: pinned and device
  // allocations are slow, serialise the workers in the driver, and a device
  // free waits for the whole device, so they are not repeated while it grows)
  bytes = std::max(bytes, reserve_hint_);
  if (a.host_cap < bytes) {
    size_t cap = std::max(bytes, a.host_cap * 2);
    uint8_t* h = static_cast<uint8_t*>(device_ ? device_->host_alloc(cap) : std::aligned_alloc(64, align64(cap)));
    if (!h) return false;
    if (a.host) {
      std::memcpy(h, a.host, a.host_cap);
      device_ ? device_->host_free(a.host) : std::free(a.host);
    }
    a.host = h, a.host_cap = cap;
  }
  if (a.on_device && a.dev_cap < bytes) {
    size_t cap = std::max(bytes, a.dev_cap * 2);
    uint8_t* d = static_cast<uint8_t*>(device_->dev_alloc(cap));
    if (!d) return false;
    device_->dev_free(a.dbuf);
    a.dbuf = d, a.dev_cap = cap;
  }
  return true;
}

// Before the first device aggregate is packed: every device aggregate's
// buffers get room for a full aggregate of packets that fill their ranges,
// allocated now rather than one by one while traffic flows (best effort: an
// aggregate that needs more grows as before).
void Chain::reserve(const Aggregate& first) {
  reserved_ = true;
  const uint32_t n = first.batch->capacity();
  size_t per = 64;  // offsets, lengths, verdicts, predicates, annotations, scheduling
  for (const Range& r : plan_.ranges()) {
    size_t len = r.end == kToEnd || r.resizable ? kMaxPacket : size_t(std::max(0, r.end - r.begin));
    per += 8 + std::min(len + r.head_room + r.tail_room, kMaxPacket + r.head_room + r.tail_room);
  }
  for (const Plan::Block& b : plan_.blocks()) per += b.in_size + b.out_size;
  size_t want = std::min(size_t(n) * per + 4096, kReserveCap);
  bool ok = true;
  for (auto& a : dev_free_) {
    a->on_device = true;
    if (!(ok = ensure(*a, want))) break;
  }
  if (ok) {
    reserve_hint_ = want;
    return;
  }
  // Too little device memory for that: what was taken goes back, and
  // aggregates take what they need as they come.
  for (auto& a : dev_free_) {
    device_->dev_free(a->dbuf);
    a->dbuf = nullptr, a->dev_cap = 0;
  }
}

// Layout of an aggregate (offsets in both buffers):
//   roff rlen plen hroom troom order | in blocks to the device only
//   verdict pred | out blocks                     zeroed there, copied back
//   dst dst6 rshead rslen                         both ways
//   written area                                  both ways
//   read-only area                                to the device only
// GASPP's packet scheduling: a stable counting sort of the aggregate's
// packets by transport protocol (TCP, UDP, ICMP, other) and then length in
// 128-byte steps, so neighbouring threads (a warp) take packets that run the
// same code over similar lengths.
void Chain::schedule(Aggregate& a) {
  PacketBatch* b = a.batch;
  const uint32_t n = a.n;
  constexpr uint32_t kBuckets = 4 * 16;
  sched_key_.resize(n);
  sched_count_.assign(kBuckets + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (!b->is_live(i)) {
      sched_key_[i] = kBuckets - 1;
      ++sched_count_[kBuckets];
      continue;
    }
    Packet* p = b->at(i);
    const uint8_t* ip = nullptr;
    if (p->has_network_header() && p->network_header_offset() >= 0)
      ip = p->data() + p->network_header_offset();
    else if (p->length() >= 14 && (p->data()[12] == 0x08 && p->data()[13] == 0x00))
      ip = p->data() + 14;
    else if (p->length() >= 14 && (p->data()[12] == 0x86 && p->data()[13] == 0xdd))
      ip = p->data() + 14;
    uint32_t proto = 3;
    const uint8_t* end = p->data() + p->length();
    if (ip && ip < end) {
      uint8_t v = ip[0] >> 4, pr = 0;
      if (v == 4 && ip + 10 <= end)
        pr = ip[9];
      else if (v == 6 && ip + 7 <= end)
        pr = ip[6];
      proto = pr == 6 ? 0 : pr == 17 ? 1 : (pr == 1 || pr == 58) ? 2 : 3;
    }
    uint32_t key = proto * 16 + std::min<uint32_t>(p->length() / 128, 15);
    sched_key_[i] = key;
    ++sched_count_[key + 1];
  }
  for (uint32_t k = 1; k <= kBuckets; ++k) sched_count_[k] += sched_count_[k - 1];
  auto* order = reinterpret_cast<uint32_t*>(a.host + a.o_order);
  bool moved = false;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t at = sched_count_[sched_key_[i]]++;
    order[at] = i;
    moved |= at != i;
  }
  if (moved) stats_.reordered.add();
}

// GPUNFV's flow actors, per aggregate: packets grouped by flow (runs in
// order of each flow's first packet, a flow's packets in arrival order),
// packets without a flow in one last run.
uint32_t Chain::group_flows(Aggregate& a) {
  PacketBatch* b = a.batch;
  const uint32_t n = a.n;
  size_t cap = 16;
  while (cap < size_t(2) * n) cap <<= 1;
  fl_slot_.assign(cap, 0);
  fl_next_.resize(n);
  fl_head_.clear();  // per run: its packets
  fl_key_.clear();
  a.run_flow.clear();
  a.run_gen.clear();
  FlowStateStore* st = plan_.flow_store();
  const bool gens = a.pkt_gen.size() == n;
  uint32_t noflow = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t id = b->at(i)->anno().flow;
    if (!id) {
      fl_next_[i] = UINT32_MAX;
      ++noflow;
      continue;
    }
    // a flow is its id and generation (an id may name two flows here)
    const uint32_t gen = gens ? a.pkt_gen[i] : st->flow_generation(id);
    const uint64_t key = uint64_t(id) << 32 | gen;
    size_t h = ((id ^ gen * 0x85EBCA6Bu) * 0x9E3779B1u) & (cap - 1);
    while (fl_slot_[h] && fl_key_[fl_slot_[h] - 1] != key) h = (h + 1) & (cap - 1);
    if (!fl_slot_[h]) {
      a.run_flow.push_back(id);
      a.run_gen.push_back(gen);
      fl_key_.push_back(key);
      fl_head_.push_back(0);
      fl_slot_[h] = uint32_t(a.run_flow.size());
    }
    uint32_t r = fl_slot_[h] - 1;
    fl_next_[i] = r;
    ++fl_head_[r];
  }
  a.nflows = uint32_t(a.run_flow.size());
  a.nruns = a.nflows + (noflow ? 1 : 0);
  fl_runs_.resize(size_t(a.nruns) + 1);
  fl_runs_[0] = 0;
  for (uint32_t r = 0; r < a.nflows; ++r) fl_runs_[r + 1] = fl_runs_[r] + fl_head_[r];
  if (noflow) fl_runs_[a.nruns] = n;
  fl_tail_.assign(fl_runs_.begin(), fl_runs_.end() - 1);  // next free position per run
  fl_order_.resize(n);
  fl_dir_.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t r = fl_next_[i] == UINT32_MAX ? a.nflows : fl_next_[i];
    fl_order_[fl_tail_[r]++] = i;
    const Anno& an = b->at(i)->anno();
    fl_dir_[i] = uint8_t(an.flow_dir | (an.flow_facts & k::kFlowFactInvalid ? k::kFlowDirInvalid : 0));
  }
  return a.nruns;
}

void Chain::pack_flows(Aggregate& a, bool pre) {
  FlowStateStore* st = plan_.flow_store();
  const uint32_t stride = plan_.flow_stride();
  std::memcpy(a.host + a.o_fruns, fl_runs_.data(), size_t(4) * (a.nruns + 1));
  std::memcpy(a.host + a.o_forder, fl_order_.data(), size_t(4) * a.n);
  std::memcpy(a.host + a.o_fdir, fl_dir_.data(), a.n);
  auto* hash = reinterpret_cast<uint32_t*>(a.host + a.o_fhash);
  for (uint32_t r = 0; r < a.nflows; ++r) {
    uint32_t id = a.run_flow[r];
    uint8_t* rec = a.host + a.o_fstate + size_t(r) * stride;
    const uint8_t* src;
    if (st->flow_generation(id) == a.run_gen[r]) {
      src = st->flow_state(id);
      hash[r] = st->flow_hash(id);
    } else {
      src = st->released_state(id, a.run_gen[r], hash[r]);  // (the flow as it ended)
    }
    if (!src) {
      if (pre) stats_.flow_stale.add();  // ended too long ago: its state is gone
      hash[r] = 0;
      std::memset(rec, 0, stride);
      continue;
    }
    for (const Plan::FlowSeg& g : plan_.flow_segs()) std::memcpy(rec + g.rec, src + g.off, g.bytes);
  }
  if (!a.piped) return;
  // Resident flow state: a flow that an aggregate still in flight holds
  // takes its state from the device's copy (what that aggregate leaves
  // there: the record packed above is stale), every flow's state goes back
  // into it; the flows count as in flight until the aggregate is released.
  auto* fid = reinterpret_cast<uint32_t*>(a.host + a.o_fid);
  uint8_t* mode = a.host + a.o_fmode;
  const bool hold = pre && a.on_device;
  for (uint32_t r = 0; r < a.nflows; ++r) {
    const uint32_t id = a.run_flow[r];
    FlowLive& f = fl_live_[id];
    fid[r] = id;
    mode[r] = uint8_t(k::kFlowToResident | (f.live ? k::kFlowFromResident : 0));
    if (!hold) continue;
    if (f.live) stats_.flow_resident.add();
    ++f.live;
    f.gen = a.run_gen[r];
    a.held_ids.push_back(id);
  }
}

bool Chain::resident_ready() {
  if (!resident_tried_) {
    resident_tried_ = true;
    FlowStateStore* st = plan_.flow_store();
    if (resident_on_ && device_ && device_->orders_streams() && st && plan_.flow_stride()) {
      const size_t bytes = size_t(st->flow_ids()) * plan_.flow_stride();
      res_ = static_cast<uint8_t*>(device_->dev_alloc(std::max<size_t>(bytes, 8)));
      if (res_) {
        fl_live_.assign(size_t(st->flow_ids()) + 1, FlowLive{0, 0, 0, 0});
        resident_ = true;
      }
    }
  }
  return resident_;
}

bool Chain::flows_fit(PacketBatch* b, const std::vector<uint32_t>& gens) {
  if (++fit_stamp_ == 0) {
    for (FlowLive& f : fl_live_) f.stamp = 0;
    fit_stamp_ = 1;
  }
  const uint32_t nids = uint32_t(fl_live_.size() - 1);
  size_t j = 0;
  bool ok = true;
  b->for_each([&](uint32_t, Packet* p) {
    const uint32_t g = j < gens.size() ? gens[j] : 0;
    ++j;
    const uint32_t id = p->anno().flow;
    if (!ok || !id) return;
    if (id > nids) {
      ok = false;
      return;
    }
    FlowLive& f = fl_live_[id];
    if (f.live && f.gen != g)
      ok = false;  // in flight as another flow (the id reused): its state is not that one's
    else if (f.stamp != fit_stamp_)
      f.stamp = fit_stamp_, f.sgen = g;
    else if (f.sgen != g)
      ok = false;  // two flows of one id here: one place on the device for both
  });
  return ok && j == gens.size();
}

bool Chain::can_overlap(PacketBatch* b, const std::vector<uint32_t>& gens) {
  fit_batch_ = nullptr;
  if (piped_live_ == 0 || other_live_ != 0 || !device_usable() || dev_free_.empty() || !resident_ready()) return false;
  fit_ = flows_fit(b, gens);
  if (fit_) fit_batch_ = b;
  return fit_;
}

// A failure: the overlapping aggregates in flight read state the failed one
// never wrote; each is redone on the host at its turn (Chain::ready), and
// until the last is released nothing overlaps.
void Chain::new_epoch() {
  ++epoch_;
  other_live_ += piped_live_;
  piped_live_ = 0;
  last_piped_ = nullptr;
}

k::FlowResidentParams Chain::resident_params(const Aggregate& a) const {
  return k::FlowResidentParams{res_,
                               a.kbuf + a.o_fstate,
                               reinterpret_cast<const uint32_t*>(a.kbuf + a.o_fid),
                               a.kbuf + a.o_fmode,
                               plan_.flow_stride(),
                               a.nflows};
}

// The flows' records back into the flow layer: the state each flow's last
// packet in the aggregate left; for a flow that has ended meanwhile, into
// the state kept of it (later aggregates may hold more of its packets).
void Chain::write_back_flows(Aggregate& a) {
  FlowStateStore* st = plan_.flow_store();
  const uint32_t stride = plan_.flow_stride();
  for (uint32_t r = 0; r < a.nflows; ++r) {
    uint32_t id = a.run_flow[r];
    uint32_t h;
    uint8_t* dst =
        st->flow_generation(id) == a.run_gen[r] ? st->flow_state(id) : st->released_state(id, a.run_gen[r], h);
    if (!dst) continue;
    const uint8_t* rec = a.host + a.o_fstate + size_t(r) * stride;
    for (const Plan::FlowSeg& g : plan_.flow_segs()) std::memcpy(dst + g.off, rec + g.rec, g.bytes);
  }
}

bool Chain::pack(Aggregate& a, bool pre) {
  PacketBatch* b = a.batch;
  const auto& R = plan_.ranges();
  const uint32_t n = b->slots(), nr = uint32_t(R.size());
  const AnnoUse& an = plan_.annos;
  const int32_t rs = plan_.resizable();
  const auto& blocks = plan_.blocks();
  a.n = n, a.nr = nr;
  a.has_len = an.length, a.has_pred = an.pred, a.has_dst = an.dst_ip, a.has_dst6 = an.dst_ip6;
  const size_t rsw = rs >= 0 ? size_t(4) * n : 0;
  a.o_roff = 0;
  a.o_rlen = a.o_roff + size_t(4) * nr * n;
  a.o_plen = a.o_rlen + size_t(4) * nr * n;
  a.o_hroom = a.o_plen + (an.length ? size_t(4) * n : 0);
  a.o_troom = a.o_hroom + rsw;
  a.has_order = schedule_;
  a.o_order = a.o_troom + rsw;
  size_t o = a.o_order + (schedule_ ? size_t(4) * n : 0);
  const bool flows = plan_.flow_store() != nullptr;
  if (flows) {
    group_flows(a);
    a.o_fruns = o = align16(o), o += size_t(4) * (a.nruns + 1);
    a.o_forder = o = align16(o), o += size_t(4) * n;
    a.o_fhash = o = align16(o), o += size_t(4) * a.nflows;
    a.o_fdir = o = align16(o), o += n;
    if (a.piped) {
      a.o_fid = o = align16(o), o += size_t(4) * a.nflows;
      a.o_fmode = o = align16(o), o += a.nflows;
    }
  } else {
    a.nruns = a.nflows = 0;
  }
  a.o_bin.resize(blocks.size());
  a.o_bout.resize(blocks.size());
  for (size_t j = 0; j < blocks.size(); ++j) a.o_bin[j] = o = align16(o), o += size_t(blocks[j].in_size) * n;
  a.o_verdict = align16(o);
  a.o_pred = a.o_verdict + size_t(4) * n;
  o = a.o_pred + (an.pred ? size_t(4) * n : 0);
  for (size_t j = 0; j < blocks.size(); ++j) a.o_bout[j] = o = align16(o), o += size_t(blocks[j].out_size) * n;
  a.o_dst = align16(o);
  a.o_dst6 = a.o_dst + (an.dst_ip ? size_t(4) * n : 0);
  a.o_rshead = a.o_dst6 + (an.dst_ip6 ? size_t(16) * n : 0);
  a.o_rslen = a.o_rshead + rsw;
  // (the flows' state records come back with the verdicts, but are not zeroed)
  a.o_fstate = align16(a.o_rslen + rsw);
  a.o_rw = align64(a.o_fstate + (flows ? size_t(plan_.flow_stride()) * a.nflows : 0));
  if (!ensure(a, a.o_rw)) return false;
  if (schedule_) schedule(a);
  if (flows) {
    pack_flows(a, pre);
    if (pre) stats_.flow_runs.add(a.nflows);
  }
  auto* roff = reinterpret_cast<uint32_t*>(a.host + a.o_roff);
  auto* rlen = reinterpret_cast<uint32_t*>(a.host + a.o_rlen);
  auto* hroom = reinterpret_cast<uint32_t*>(a.host + a.o_hroom);
  auto* troom = reinterpret_cast<uint32_t*>(a.host + a.o_troom);
  // Pass 1: each packet's ranges, merged where they overlap or touch, get
  // their places in the written or the read-only area. (Per packet: each
  // anchor found once, the ranges kept sorted by start as they are placed;
  // ranges read only before anything is written are grouped apart: they
  // may overlap written bytes, which then travel twice, and only the
  // written copy comes back.)
  groups_.clear();
  a.rw_segs.clear();
  size_t rw = 0, ro = 0, ro_groups = 0;
  const size_t na = anchors_.size();
  int64_t* at = anchor_at_.data();
  uint8_t* has_at = anchor_has_.data();
  Piece* pcs = pieces_.data();
  for (uint32_t i = 0; i < n; ++i) {
    // the packets' descriptors and first bytes are usually not in cache yet
    if (i + 8 < n) __builtin_prefetch(b->at(i + 8));
    if (i + 4 < n) __builtin_prefetch(b->at(i + 4)->data());
    const Packet* p = b->at(i);
    const uint32_t len = p->length();
    for (size_t k = 0; k < na; ++k) has_at[k] = anchor_of(p, anchors_[k].anchor, anchors_[k].ip_at, at[k]);
    // late pieces from the front, early ones from the back, each sorted by start
    uint32_t nlate = 0, nearly = 0;
    for (uint32_t r = 0; r < nr; ++r) {
      uint32_t s, e;
      const uint32_t k = range_anchor_[r];
      if (!has_at[k] || !place(R[r], at[k], len, s, e)) {
        roff[size_t(r) * n + i] = k::kAbsent;
        rlen[size_t(r) * n + i] = 0;
        continue;
      }
      const Piece pc{s, e, r, R[r].write};
      if (read_early_[r]) {
        Piece* lo = pcs + nr - nearly;  // [lo, pcs + nr) sorted
        Piece* q = lo - 1;
        while (q + 1 < pcs + nr && q[1].s < s) q[0] = q[1], ++q;
        *q = pc;
        ++nearly;
      } else {
        uint32_t q = nlate++;
        while (q > 0 && pcs[q - 1].s > s) pcs[q] = pcs[q - 1], --q;
        pcs[q] = pc;
      }
    }
    if (rs >= 0) {
      hroom[i] = std::min(R[size_t(rs)].head_room, p->headroom());
      troom[i] = std::min(R[size_t(rs)].tail_room, p->tailroom());
    }
    for (int part = 0; part < 2; ++part) {
      const Piece* j = part ? pcs + nr - nearly : pcs;
      const Piece* stop = part ? pcs + nr : pcs + nlate;
      while (j < stop) {
        uint32_t gs = j->s, ge = j->e;
        bool w = j->write, grow = int32_t(j->range) == rs;
        const Piece* k = j + 1;
        for (; k < stop && k->s <= ge; ++k) ge = std::max(ge, k->e), w |= k->write, grow |= int32_t(k->range) == rs;
        // the resizable packet's group (the whole packet) gets its room on both sides
        size_t& area = w ? rw : ro;
        if (grow) area += hroom[i];
        const uint32_t pos = uint32_t(area);
        area += ge - gs + (grow ? troom[i] : 0);
        groups_.push_back({i, gs, ge, pos, w});
        if (w)
          a.rw_segs.push_back({i, gs, ge, pos, grow});
        else
          ++ro_groups;
        for (; j < k; ++j) {
          roff[size_t(j->range) * n + i] = (pos + j->s - gs) | (w ? 0 : kRoFlag);
          rlen[size_t(j->range) * n + i] = j->e - j->s;
        }
      }
    }
  }
  a.rw_bytes = rw, a.ro_bytes = ro;
  a.o_ro = align64(a.o_rw + rw);
  a.o_end = a.o_ro + ro;
  if (!ensure(a, a.o_end)) return false;
  roff = reinterpret_cast<uint32_t*>(a.host + a.o_roff);
  // Pass 2: read-only offsets move past the written area; bytes copied.
  const uint32_t ro_base = uint32_t(a.o_ro - a.o_rw);
  if (ro_groups)
    for (size_t x = 0, nx = size_t(nr) * n; x < nx; ++x)
      if (roff[x] != k::kAbsent && (roff[x] & kRoFlag)) roff[x] = (roff[x] & ~kRoFlag) + ro_base;
  for (const Group& g : groups_)
    copy_frame(a.host + (g.write ? a.o_rw : a.o_ro) + g.pos, b->at(g.pkt)->data() + g.s, g.e - g.s);
  stats_.roi_bytes.add(rw + ro);
  if (an.length) {
    auto* pl = reinterpret_cast<uint32_t*>(a.host + a.o_plen);
    for (uint32_t i = 0; i < n; ++i) pl[i] = b->at(i)->length();
  }
  if (an.dst_ip)
    for (uint32_t i = 0; i < n; ++i) std::memcpy(a.host + a.o_dst + 4 * i, b->at(i)->anno().dst_ip, 4);
  if (an.dst_ip6)
    for (uint32_t i = 0; i < n; ++i) std::memcpy(a.host + a.o_dst6 + 16 * i, b->at(i)->anno().dst_ip6, 16);
  if (rs >= 0) {
    auto* head = reinterpret_cast<int32_t*>(a.host + a.o_rshead);
    auto* len = reinterpret_cast<uint32_t*>(a.host + a.o_rslen);
    for (uint32_t i = 0; i < n; ++i) head[i] = 0, len[i] = b->at(i)->length();
  }
  if (pre)
    for (Offloadable* s : steps_) s->offload_pre(a);
  return true;
}

size_t Chain::h2d_bytes(const Aggregate& a) const { return a.o_end; }
size_t Chain::d2h_bytes(const Aggregate& a) const { return a.o_rw + a.rw_bytes - a.o_verdict; }

namespace {
uint64_t host_ns() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
}  // namespace

Aggregate* Chain::begin(PacketBatch* b, bool want_device) {
  uint64_t t0 = host_ns();
  b->compact();
  Aggregate* a;
  bool dev = want_device && device_usable() && !dev_free_.empty();
  if (want_device && !device_usable()) {
    stats_.cpu_fault.add();
    stats_.fault_packets.add(b->live());
  } else if (want_device && !dev) {
    stats_.cpu_busy.add();
  }
  auto& from = dev ? dev_free_ : cpu_free_;
  if (from.empty()) from.push_back(std::make_unique<Aggregate>());
  a = from.back().release();
  from.pop_back();
  a->chain = this;
  a->batch = b;
  a->pkt_gen.clear();
  if (plan_.flow_store()) std::swap(a->pkt_gen, next_gens_);
  next_gens_.clear();
  a->on_device = dev;
  a->piped = false;
  a->after = nullptr;
  a->epoch = epoch_;
  a->held_ids.clear();
  if (dev && plan_.flow_store() && resident_ready())
    a->piped = other_live_ == 0 && (fit_batch_ == b ? fit_ : flows_fit(b, a->pkt_gen));
  fit_batch_ = nullptr;
  a->failed = false;
  a->done = false;
  a->error.clear();
  a->keep.clear();
  a->start_ns = owner_.worker().now_ns();
  a->direct = a->at_turn = false;
  // The balancer's CPU batches (not those for the device that found every
  // slot busy: they run the kernels, as the device would have).
  if (!want_device && direct_ok_) {  // (asked per aggregate: a step's answer may follow its tables)
    a->direct = true;
    for (Offloadable* s : steps_) {
      const Offloadable::HostDirect h = s->offload_host_direct();
      a->direct &= h != Offloadable::HostDirect::No;
      a->at_turn |= h == Offloadable::HostDirect::AtTurn;
    }
  }
  if (a->direct) {  // nothing packed: the verdicts alone
    const uint32_t n = b->slots();
    a->n = n, a->nr = 0, a->nruns = a->nflows = 0;
    a->has_len = a->has_pred = a->has_dst = a->has_dst6 = a->has_order = false;
    a->o_verdict = 0;
    a->rw_segs.clear();
    a->rw_bytes = a->ro_bytes = 0;
    a->zero = false;
    if (!ensure(*a, size_t(4) * std::max(1u, n))) throw std::bad_alloc();
    std::memset(a->host, 0, size_t(4) * n);
    stats_.host_direct.add();
    stats_.pack_ns.add(host_ns() - t0);
    ++other_live_;
    return a;
  }
  if (dev) {
    ++busy_;
    stats_.inflight_max.set(std::max<uint64_t>(stats_.inflight_max.get(), busy_));
  }
  if (a->on_device && !reserved_) reserve(*a);
  if (!pack(*a, true)) {
    // No device memory (or pinned memory) for this aggregate: it runs on
    // the CPU, counted as a device failure. Without host memory either,
    // nothing more can be done.
    if (!a->on_device) throw std::bad_alloc();
    a->on_device = a->piped = false;
    note_failure(*a, "out of device or pinned host memory for an aggregate");
    stats_.cpu_fault.add();
    stats_.fault_packets.add(b->live());
    if (!pack(*a, true)) throw std::bad_alloc();
  }
  // The words the kernels find zeroed (verdicts, predicates, output
  // blocks) are zeroed here, and the aggregate goes over in one copy: with
  // many workers on one device, the driver's calls cost more than the few
  // bytes that a device memset and two more copies would save.
  std::memset(a->host + a->o_verdict, 0, a->o_dst - a->o_verdict);
  a->zero = false;
  a->kbuf = a->dbuf;
  if (a->on_device && zero_copy_ && a->o_end <= size_t(zero_copy_) * a->n)
    if (auto* k = static_cast<uint8_t*>(device_->host_device_pointer(a->host))) a->zero = true, a->kbuf = k;
  if (a->piped) {
    if (last_piped_) {
      a->after = last_piped_->stream;
      stats_.flow_overlapped.add();
    }
    last_piped_ = a;
    ++piped_live_;
  } else {
    ++other_live_;
  }
  if (a->on_device) {
    if (a->zero)
      stats_.zero_copy.add();
    else
      device_->h2d(a->stream, a->dbuf, a->host, a->o_end);
    stats_.h2d_bytes.add(h2d_bytes(*a));  // (zero-copy: what its kernels can reach)
    a->occupying = true;
    occupancy_->begin(DeviceOccupancy::clock_ns());
  }
  stats_.pack_ns.add(host_ns() - t0);
  return a;
}

void Offloadable::offload_host_run(Aggregate& a, size_t step) {
  for (uint32_t i = 0; i < a.n; ++i)
    if (a.reached(i, step)) a.set_result(i, step, offload_host_packet(a.batch->at(i)));
}

void Chain::run_direct(Aggregate& a) {
  uint64_t t0 = host_ns();
  for (size_t j = 0; j < steps_.size(); ++j) steps_[j]->offload_host_run(a, j);
  stats_.launch_ns.add(host_ns() - t0);
}

void Chain::step(Aggregate& a, size_t i) {
  if (a.on_device && a.failed) return;  // redone on the host when it completes
  Launch L;
  L.view = a.view(a.on_device ? a.kbuf : a.host);
  L.ctl.step = uint32_t(i);
  L.host = !a.on_device;
  L.device = device_;
  L.stream = a.stream;
  L.agg = &a;
  L.base = a.on_device ? a.kbuf : a.host;
  std::string err;
  uint64_t t0 = host_ns();
  if (!steps_[i]->offload_launch(L, err)) {
    a.failed = true;
    a.error = err;
  }
  stats_.launch_ns.add(host_ns() - t0);
}

void Chain::flush(Aggregate& a, bool signal) {
  if (a.pending.empty()) return;
  if (a.on_device && !a.failed) {
    uint64_t t0 = host_ns();
    dev::FusedStep fs[16];
    const uint32_t* order = a.has_order ? reinterpret_cast<const uint32_t*>(a.kbuf + a.o_order) : nullptr;
    // (16 at a time: a chain is rarely longer). Consecutive per-flow steps
    // go as one launch over the flow runs (a run's packets are its own), the
    // per-packet ones between them as another.
    // Resident flow state: the first per-flow launch starts with the
    // gather (after the aggregate before this one, on the device), the last
    // one ends with the scatter.
    size_t last_flow = SIZE_MAX;
    for (size_t j = 0; j < a.pending.size(); ++j)
      if (a.piped && a.pending[j].per_packet == Launch::kPerFlow) last_flow = j;
    k::FlowResidentParams rp{};
    if (a.piped) rp = resident_params(a);
    bool gathered = false;
    for (size_t j = 0; j < a.pending.size();) {
      const bool per_flow = a.pending[j].per_packet == Launch::kPerFlow;
      uint32_t c = 0;
      if (per_flow && a.piped && !gathered) {
        if (a.after) device_->follow(a.stream, a.after);
        fs[c++] = {&dev::step_kernel<k::FlowGatherStep>(), &rp, sizeof rp, 0};
        gathered = true;
      }
      const size_t j0 = j;
      for (; j < a.pending.size() && c < 15 && (a.pending[j].per_packet == Launch::kPerFlow) == per_flow; ++j, ++c)
        fs[c] = {a.pending[j].kernel, a.pending_params.data() + a.pending[j].off, a.pending[j].size,
                 per_flow ? 0 : a.pending[j].per_packet};
      if (per_flow && a.piped && j0 <= last_flow && last_flow < j)
        fs[c++] = {&dev::step_kernel<k::FlowScatterStep>(), &rp, sizeof rp, 0};
      const bool last = signal && j == a.pending.size();
      const uint32_t threads = per_flow ? a.nruns : a.n;
      const uint32_t* ord = per_flow ? nullptr : order;
      if (c == 1 && !fs[0].per_packet && !last)
        device_->launch(a.stream, *fs[0].kernel, fs[0].params, fs[0].size, threads, ord);
      else
        device_->launch_fused(a.stream, fs, c, threads, ord, last);
    }
    stats_.launch_ns.add(host_ns() - t0);
  }
  a.pending.clear();
  a.pending_params.clear();
}

void Chain::end(Aggregate& a) {
  // A zero-copy aggregate's kernels write their results in host memory:
  // the last one can mark the aggregate done itself (no event to record,
  // no driver call to poll it).
  flush(a, a.on_device && a.zero && device_->signals() && !a.piped);
  if (!a.on_device) return;
  if (!a.zero) device_->d2h(a.stream, a.host + a.o_verdict, a.dbuf + a.o_verdict, a.o_rw + a.rw_bytes - a.o_verdict);
  device_->record(a.stream);
  stats_.d2h_bytes.add(d2h_bytes(a));
}

void Chain::note_failure(Aggregate& a, const std::string& err) {
  last_error_ = err;
  if (++consecutive_failures_ >= 16 && !given_up_) {
    given_up_ = true;
    fmt::print(stderr, "shoal: {}: {} device failures in a row; offloading stops, batches run on the CPU\n",
               owner_.name(), consecutive_failures_);
  }
  if (!reported_) {
    reported_ = true;
    fmt::print(stderr, "shoal: {}: device failure ({}); the affected batches run on the CPU (counted in 'cpu_fault')\n",
               owner_.name(), err);
  }
  (void)a;
}

void Chain::redo_on_host(Aggregate& a) {
  stats_.cpu_fault.add();
  stats_.fault_packets.add(a.n);
  a.on_device = false;
  a.keep.clear();
  if (!pack(a, false)) throw std::bad_alloc();  // the input blocks pre() filled are still in place
  std::memset(a.host + a.o_verdict, 0, a.o_dst - a.o_verdict);
  for (size_t i = 0; i < steps_.size(); ++i) step(a, i);
}

bool Chain::ready(Aggregate& a) {
  if (!a.on_device || a.done) return true;
  std::string err;
  dev::Status st = device_->poll(a.stream, err);
  if (st == dev::Status::Pending) return false;
  stop_occupying(a);
  if (st == dev::Status::Failed || a.failed) {
    note_failure(a, a.failed && !a.error.empty() ? a.error : err);
    if (a.piped && a.epoch == epoch_) new_epoch();
    redo_on_host(a);
    return true;
  }
  if (a.piped && a.epoch != epoch_) {  // one before it failed: it read state that one never wrote
    stats_.flow_redone.add();
    redo_on_host(a);
    return true;
  }
  consecutive_failures_ = 0;
  a.done = true;
  stats_.device_aggregates.add();
  stats_.device_packets.add(a.n);
  return true;
}

void Chain::wait(Aggregate& a) {
  if (!a.on_device) return;
  std::string err;
  device_->wait(a.stream, err);
  ready(a);
}

void Chain::complete(Aggregate& a) {
  uint64_t t0 = host_ns();
  PacketBatch* b = a.batch;
  if (a.direct) {  // the steps' CPU functions, in place (now, at its turn, or when begun): their hooks
    if (a.at_turn) run_direct(a);
    for (size_t j = 0; j < steps_.size(); ++j) passed_and_left(a, j);
    stats_.aggregates.add();
    stats_.packets.add(a.n);
    stats_.complete_ns.add(host_ns() - t0);
    return;
  }
  const auto* rs_head = reinterpret_cast<const int32_t*>(a.host + a.o_rshead);
  const auto* rs_len = reinterpret_cast<const uint32_t*>(a.host + a.o_rslen);
  for (const Aggregate::Seg& s : a.rw_segs) {
    Packet* p = b->at(s.pkt);
    const uint8_t* src = a.host + a.o_rw + s.pos;
    if (!s.resizable) {
      copy_frame(p->data() + s.s, src, s.e - s.s);
      continue;
    }
    // pack() gave the kernel no more room than the buffer has, so these hold
    int32_t h = rs_head[s.pkt];
    if (h > 0)
      p->push(uint32_t(h));
    else if (h < 0)
      p->pull(uint32_t(-h));
    p->set_length(rs_len[s.pkt]);
    std::memcpy(p->data(), src - h, p->length());
  }
  if (plan_.flow_store()) write_back_flows(a);
  const AnnoUse& an = plan_.annos;
  if (an.dst_ip)
    for (uint32_t i = 0; i < a.n; ++i) std::memcpy(b->at(i)->anno().dst_ip, a.host + a.o_dst + 4 * i, 4);
  if (an.dst_ip6)
    for (uint32_t i = 0; i < a.n; ++i) std::memcpy(b->at(i)->anno().dst_ip6, a.host + a.o_dst6 + 16 * i, 16);
  if (an.pred) {
    const auto* pr = reinterpret_cast<const uint32_t*>(a.host + a.o_pred);
    for (uint32_t i = 0; i < a.n; ++i) b->at(i)->anno().predicates |= pr[i];
  }
  for (size_t j = 0; j < steps_.size(); ++j) {
    Offloadable* st = steps_[j];
    if (an.pred && st->offload_pred_skip()) run_skipped(a, j);
    st->offload_post(a, j);
    passed_and_left(a, j);
  }
  stats_.aggregates.add();
  stats_.packets.add(a.n);
  if (a.on_device && b->anno.arrival_ns) {
    uint64_t ns = owner_.worker().now_ns() - b->anno.arrival_ns;
    latency_->add(ns);
    histogram_->add(ns);
  }
  stats_.complete_ns.add(host_ns() - t0);
}

// Step j's hooks for the packets that passed it and those that left the
// chain there.
void Chain::passed_and_left(Aggregate& a, size_t j) {
  Offloadable* st = steps_[j];
  const bool hook = st->offload_has_passed_hook();
  for (uint32_t i = 0; i < a.n; ++i) {
    uint32_t v = a.verdict(i);
    if (v == 0 || k::verdict_step(v) > j) {
      if (hook) st->offload_passed(a.batch->at(i));
    } else if (k::verdict_step(v) == j) {
      st->offload_left(a.batch->at(i), v);
    }
  }
}

// Packets step j passed by on the device for a SKIP bit that an earlier
// step's host part has since cleared (an IDS that found a suspect packet
// clean): step j runs for them here, in chain order, as its kernel would.
void Chain::run_skipped(Aggregate& a, size_t j) {
  Offloadable* st = steps_[j];
  const uint32_t skip = st->offload_pred_skip(), need = st->offload_pred_check();
  const auto* pr = reinterpret_cast<const uint32_t*>(a.host + a.o_pred);
  for (uint32_t i = 0; i < a.n; ++i) {
    Packet* p = a.batch->at(i);
    uint32_t now = p->anno().predicates;
    if (a.verdict(i) != 0 || !(pr[i] & skip) || (now & skip) || (need && !(now & need))) continue;
    int r = st->offload_host_packet(p);
    if (r == Offloadable::kNoHostStep) continue;
    stats_.host_steps.add();
    if (r >= 0 && st->offload_sets_predicates())
      p->anno().predicates |= 1u << (uint32_t(r) & 31);
    else
      a.set_result(i, j, r);
  }
}

void Chain::stop_occupying(Aggregate& a) {
  if (!a.occupying) return;
  a.occupying = false;
  occupancy_->end(DeviceOccupancy::clock_ns());
}

PacketBatch* Chain::release(Aggregate& a) {
  stop_occupying(a);  // (one given up before its device work was seen to end)
  PacketBatch* b = a.batch;
  a.batch = nullptr;
  a.keep.clear();
  for (uint32_t id : a.held_ids) --fl_live_[id].live;
  a.held_ids.clear();
  if (a.piped && a.epoch == epoch_)
    --piped_live_;
  else
    --other_live_;
  if (last_piped_ == &a) last_piped_ = nullptr;
  a.piped = false;
  a.pending.clear();
  a.pending_params.clear();
  std::unique_ptr<Aggregate> u(&a);
  if (a.stream) {
    device_->reset(a.stream);
    --busy_;
    dev_free_.push_back(std::move(u));
  } else {
    cpu_free_.push_back(std::move(u));
  }
  return b;
}

std::string Chain::describe() const {
  std::string s;
  for (Offloadable* st : steps_) s += (s.empty() ? "" : " -> ") + st->offload_element().name();
  s += "\n";
  for (size_t i = 0; i < plan_.ranges().size(); ++i) s += fmt::format("range {}: {}\n", i, plan_.ranges()[i].unparse());
  const AnnoUse& a = plan_.annos;
  s += fmt::format("annotations:{}{}{}{}\n", a.dst_ip ? " DST_IP" : "", a.dst_ip6 ? " DST_IP6" : "",
                   a.length ? " LENGTH" : "", a.pred ? " PREDICATES" : "");
  for (size_t j = 0; j < plan_.blocks().size(); ++j)
    s += fmt::format("block {}: {} bytes in, {} bytes out per packet\n", j, plan_.blocks()[j].in_size,
                     plan_.blocks()[j].out_size);
  if (plan_.flow_store()) {
    s += fmt::format("flow state: {} bytes a flow, both ways; packets grouped by flow, one thread a flow",
                     plan_.flow_stride());
    const bool resident = resident_tried_ ? resident_ : resident_on_ && device_ && device_->orders_streams();
    s += resident ? "; resident on the device between aggregates (they overlap)\n" : "; one aggregate at a time\n";
  }
  return s;
}

void add_chain_handlers(Element& e, ChainStats& s, const std::string& prefix, const std::function<Chain*()>& chain) {
  e.add_stat_handler(prefix + "aggregates", s.aggregates);
  e.add_stat_handler(prefix + "packets", s.packets);
  e.add_stat_handler(prefix + "device_aggregates", s.device_aggregates);
  e.add_stat_handler(prefix + "device_packets", s.device_packets);
  e.add_stat_handler(prefix + "cpu_busy", s.cpu_busy);
  e.add_stat_handler(prefix + "cpu_fault", s.cpu_fault);
  e.add_stat_handler(prefix + "fault_packets", s.fault_packets);
  e.add_stat_handler(prefix + "h2d_bytes", s.h2d_bytes);
  e.add_stat_handler(prefix + "d2h_bytes", s.d2h_bytes);
  e.add_stat_handler(prefix + "roi_bytes", s.roi_bytes);
  e.add_stat_handler(prefix + "host_steps", s.host_steps);
  e.add_stat_handler(prefix + "reordered", s.reordered);
  e.add_stat_handler(prefix + "pack_ns", s.pack_ns);
  e.add_stat_handler(prefix + "launch_ns", s.launch_ns);
  e.add_stat_handler(prefix + "complete_ns", s.complete_ns);
  e.add_stat_handler(prefix + "zero_copy", s.zero_copy);
  e.add_stat_handler(prefix + "flow_runs", s.flow_runs);
  e.add_stat_handler(prefix + "flow_stale", s.flow_stale);
  e.add_stat_handler(prefix + "flow_overlapped", s.flow_overlapped);
  e.add_stat_handler(prefix + "flow_resident", s.flow_resident);
  e.add_stat_handler(prefix + "flow_redone", s.flow_redone);
  e.add_stat_handler(prefix + "host_direct", s.host_direct);
  e.add_read_handler(
      prefix + "inflight_max", [&s] { return std::to_string(s.inflight_max.get()); }, Agg::Max, true);
  // (the device's count, all chains and workers together)
  e.add_read_handler(
      prefix + "ring_launches",
      [chain] {
        Chain* c = chain();
        return std::to_string(c && c->device() ? c->device()->ring_launches() : 0);
      },
      Agg::Max, true);
  e.add_read_handler(prefix + "chain", [chain] {
    Chain* c = chain();
    return c ? c->describe() : std::string("(no chain yet)\n");
  });
  e.add_read_handler(prefix + "last_error", [chain] {
    Chain* c = chain();
    return c ? c->last_error() : std::string();
  });
}

}  // namespace shoal::offload

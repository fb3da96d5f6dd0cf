#include "shoal/flow/devtable.hh"

#include <algorithm>

namespace shoal::flow {

DeviceFlowTable::~DeviceFlowTable() {
  if (!d_) return;
  if (s_) {
    std::string err;
    d_->wait(s_, err);
    d_->stream_destroy(s_);
  }
  for (void* p : {static_cast<void*>(v_.slots),
                  static_cast<void*>(v_.flows),
                  static_cast<void*>(v_.free_ids),
                  static_cast<void*>(v_.c),
                  static_cast<void*>(v_.win),
                  frames_,
                  offs_,
                  lens_,
                  nows_,
                  ids_,
                  pkt_,
                  tflags_,
                  dirs_,
                  facts_,
                  l4_,
                  iplen_,
                  skey_,
                  sval_,
                  skey_out_,
                  sval_out_})
    if (p) d_->dev_free(p);
}

bool DeviceFlowTable::init(std::shared_ptr<dev::Device> d, uint32_t capacity, std::string& err) {
  Config c;
  c.capacity = capacity;
  return init(std::move(d), c, err);
}

bool DeviceFlowTable::init(std::shared_ptr<dev::Device> d, const Config& c, std::string& err) {
  d_ = std::move(d);
  const uint32_t capacity = std::max<uint32_t>(c.capacity, 1);
  size_t n = 16;
  while (n < size_t(capacity) * 2) n <<= 1;  // at most half full, a quarter more of tombstones
  v_.mask = uint32_t(n - 1);
  v_.capacity = capacity;
  v_.slots = static_cast<unsigned long long*>(d_->dev_alloc(n * sizeof(unsigned long long)));
  v_.flows = static_cast<k::DevFlow*>(d_->dev_alloc(size_t(capacity) * sizeof(k::DevFlow)));
  v_.free_ids = static_cast<uint32_t*>(d_->dev_alloc(size_t(capacity) * sizeof(uint32_t)));
  v_.c = static_cast<k::DevFlowCounters*>(d_->dev_alloc(sizeof(k::DevFlowCounters)));
  if (c.tcp_window && !c.async_oneside)  // (as the CPU table: one-sided tracking checks no windows)
    v_.win = static_cast<k::TcpWindow*>(d_->dev_alloc(size_t(capacity) * sizeof(k::TcpWindow)));
  if (!v_.slots || !v_.flows || !v_.free_ids || !v_.c || (c.tcp_window && !c.async_oneside && !v_.win)) {
    err = "device memory for the flow table ran out";
    return false;
  }
  for (int i = 0; i < k::kFlowClasses; ++i) cfg_.timeout_ns[i] = c.timeouts.ns[i];
  cfg_.midstream = c.midstream;
  cfg_.async_oneside = c.async_oneside;
  s_ = d_->stream_create();
  d_->memset(s_, v_.slots, 0, n * sizeof(unsigned long long));
  d_->memset(s_, v_.flows, 0, size_t(capacity) * sizeof(k::DevFlow));  // (every entry kDevFree)
  d_->memset(s_, v_.c, 0, sizeof(k::DevFlowCounters));
  d_->record(s_);
  return d_->wait(s_, err) == dev::Status::Done;
}

void* DeviceFlowTable::grow(void*& p, size_t& have, size_t want) {
  if (want <= have && p) return p;
  if (p) d_->dev_free(p);
  have = std::max<size_t>(want, 2 * have);
  p = d_->dev_alloc(have);
  if (!p) have = 0;
  return p;
}

k::FlowBatchParams DeviceFlowTable::params() const {
  k::FlowBatchParams p{};
  p.frames = static_cast<const uint8_t*>(frames_);
  p.offsets = static_cast<const uint32_t*>(offs_);
  p.lens = static_cast<const uint32_t*>(lens_);
  p.t = v_;
  p.cfg = cfg_;
  p.ids = static_cast<uint32_t*>(ids_);
  p.pkt = static_cast<uint8_t*>(pkt_);
  p.tcp_flags = static_cast<uint8_t*>(tflags_);
  p.dirs = static_cast<uint8_t*>(dirs_);
  p.facts = static_cast<uint8_t*>(facts_);
  p.l4_off = static_cast<uint16_t*>(l4_);
  p.ip_len = static_cast<uint32_t*>(iplen_);
  p.sort_key = static_cast<unsigned long long*>(skey_);
  p.sort_val = static_cast<uint32_t*>(sval_);
  p.sorted_key = static_cast<const unsigned long long*>(skey_out_);
  p.sorted_val = static_cast<const uint32_t*>(sval_out_);
  return p;
}

bool DeviceFlowTable::track(const uint8_t* frames, size_t frames_bytes, const uint32_t* offsets, const uint32_t* lens,
                            uint32_t n, std::vector<uint32_t>& ids, std::vector<uint8_t>& dirs, std::string& err,
                            const uint64_t* nows, std::vector<uint8_t>* facts) {
  ids.assign(n, 0);
  dirs.assign(n, 0);
  if (facts) facts->assign(n, 0);
  if (n == 0) return true;
  if (!grow(frames_, frames_cap_, frames_bytes) || !grow(offs_, offs_cap_, n * 4u) || !grow(lens_, lens_cap_, n * 4u) ||
      !grow(nows_, nows_cap_, n * 8u) || !grow(ids_, ids_cap_, n * 4u) || !grow(pkt_, pkt_cap_, n) ||
      !grow(tflags_, tflags_cap_, n) || !grow(dirs_, dirs_cap_, n) || !grow(facts_, facts_cap_, n) ||
      !grow(l4_, l4_cap_, n * 2u) || !grow(iplen_, iplen_cap_, n * 4u) || !grow(skey_, skey_cap_, n * 8u) ||
      !grow(sval_, sval_cap_, n * 4u) || !grow(skey_out_, skey_out_cap_, n * 8u) ||
      !grow(sval_out_, sval_out_cap_, n * 4u)) {
    err = "device memory for a batch ran out";
    return false;
  }
  if (!make_room(n, err)) return false;
  k::FlowBatchParams p = params();
  p.nows = nows ? static_cast<const unsigned long long*>(nows_) : nullptr;
  p.n = n;
  d_->h2d(s_, frames_, frames, frames_bytes);
  d_->h2d(s_, offs_, offsets, n * 4u);
  d_->h2d(s_, lens_, lens, n * 4u);
  if (nows) d_->h2d(s_, nows_, nows, n * 8u);
  d_->launch(s_, dev::step_kernel<k::FlowFindStep>(), &p, sizeof p, n);
  d_->launch(s_, dev::step_kernel<k::FlowFixStep>(), &p, sizeof p, 1);
  // each flow's packets together, in arrival order (the sort is stable;
  // ids fit in 32 bits)
  d_->sort_pairs(s_, static_cast<const uint64_t*>(skey_), static_cast<uint64_t*>(skey_out_), p.sort_val,
                 static_cast<uint32_t*>(sval_out_), n, 32);
  d_->launch(s_, dev::step_kernel<k::FlowWalkStep>(), &p, sizeof p, n);
  d_->d2h(s_, ids.data(), ids_, n * 4u);
  d_->d2h(s_, dirs.data(), dirs_, n);
  if (facts) d_->d2h(s_, facts->data(), facts_, n);
  d_->d2h(s_, &c_, v_.c, sizeof c_);
  d_->record(s_);
  launches_ += 3;
  if (d_->wait(s_, err) != dev::Status::Done) return false;
  return true;
}

bool DeviceFlowTable::make_room(uint32_t n, std::string& err) {
  // entries free as of the last call's counters (orphans are neither free
  // nor flows: the eviction frees them first)
  const uint32_t used = std::min(c_.used, v_.capacity);
  const uint32_t room = std::min(v_.capacity, c_.free_n + (v_.capacity - used));
  if (room >= n || used == 0) return true;
  // room for the batch, at least a sixteenth of the table (so that a flood
  // of new flows sorts the table once per many batches, not at each), at
  // most half of it (a batch of more new flows than that finds the rest
  // without room, and the half nearest expiry is all it evicts: the CPU
  // table, packet by packet, would evict the batch's own new flows before
  // the connections that expire last)
  const uint32_t want =
      uint32_t(std::min<uint64_t>(std::max<uint32_t>(v_.capacity / 2, 1), std::max<uint64_t>(n, v_.capacity / 16)));
  if (want <= room) return true;
  const uint32_t k = std::min(want - room, used);
  if (!grow(skey_, skey_cap_, used * 8u) || !grow(sval_, sval_cap_, used * 4u) ||
      !grow(skey_out_, skey_out_cap_, used * 8u) || !grow(sval_out_, sval_out_cap_, used * 4u)) {
    err = "device memory for an eviction ran out";
    return false;
  }
  k::FlowBatchParams p = params();
  d_->launch(s_, dev::step_kernel<k::FlowEvictKeyStep>(), &p, sizeof p, used);
  d_->sort_pairs(s_, static_cast<const uint64_t*>(skey_), static_cast<uint64_t*>(skey_out_), p.sort_val,
                 static_cast<uint32_t*>(sval_out_), used, 64);
  d_->launch(s_, dev::step_kernel<k::FlowEvictStep>(), &p, sizeof p, k);
  d_->d2h(s_, &c_, v_.c, sizeof c_);
  d_->record(s_);
  launches_ += 2;
  ++evictions_;
  if (d_->wait(s_, err) != dev::Status::Done) return false;
  return rebuild_if_tombstoned(err);
}

bool DeviceFlowTable::expire(uint64_t now, std::string& err) {
  k::FlowBatchParams p = params();
  p.now = now;
  const uint32_t entries = std::min(c_.used, v_.capacity);
  if (entries) {
    d_->launch(s_, dev::step_kernel<k::FlowExpireStep>(), &p, sizeof p, entries);
    ++launches_;
  }
  d_->d2h(s_, &c_, v_.c, sizeof c_);
  d_->record(s_);
  if (d_->wait(s_, err) != dev::Status::Done) return false;
  return rebuild_if_tombstoned(err);
}

bool DeviceFlowTable::rebuild_if_tombstoned(std::string& err) {
  if (uint64_t(c_.tombs) * 4 <= uint64_t(v_.mask) + 1) return true;
  // tombstones fill a quarter of the index: rebuild it from the live flows
  k::FlowBatchParams p = params();
  const uint32_t entries = std::min(c_.used, v_.capacity);
  d_->memset(s_, v_.slots, 0, (size_t(v_.mask) + 1) * sizeof(unsigned long long));
  d_->memset(s_, &v_.c->tombs, 0, sizeof(uint32_t));
  d_->launch(s_, dev::step_kernel<k::FlowReinsertStep>(), &p, sizeof p, entries);
  d_->d2h(s_, &c_, v_.c, sizeof c_);
  d_->record(s_);
  ++launches_;
  ++rebuilds_;
  return d_->wait(s_, err) == dev::Status::Done;
}

bool DeviceFlowTable::contents(std::vector<Entry>& out, std::string& err) {
  std::vector<unsigned long long> slots(size_t(v_.mask) + 1);
  std::vector<k::DevFlow> flows(v_.capacity);
  d_->d2h(s_, slots.data(), v_.slots, slots.size() * sizeof(unsigned long long));
  d_->d2h(s_, flows.data(), v_.flows, flows.size() * sizeof(k::DevFlow));
  std::vector<k::TcpWindow> wins(v_.win ? v_.capacity : 0);
  if (v_.win) d_->d2h(s_, wins.data(), v_.win, wins.size() * sizeof(k::TcpWindow));
  d_->record(s_);
  if (d_->wait(s_, err) != dev::Status::Done) return false;
  out.clear();
  for (unsigned long long s : slots) {
    if (!s || s == k::kDevTomb) continue;
    const k::DevFlow& f = flows[uint32_t(s) - 1];
    out.push_back({f.key,
                   f.orig_dir,
                   {f.pkts[0], f.pkts[1]},
                   {f.bytes[0], f.bytes[1]},
                   f.first_ns,
                   f.last_ns,
                   f.tcp,
                   f.cls,
                   f.flags,
                   {f.tcp_flags[0], f.tcp_flags[1]},
                   v_.win ? wins[uint32_t(s) - 1] : k::TcpWindow{}});
  }
  return true;
}

}  // namespace shoal::flow

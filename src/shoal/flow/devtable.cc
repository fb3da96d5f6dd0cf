#include "shoal/flow/devtable.hh"

#include "shoal/kernels/steps/flow_track.hh"

namespace shoal::flow {

DeviceFlowTable::~DeviceFlowTable() {
  if (!d_) return;
  if (s_) {
    std::string err;
    d_->wait(s_, err);
    d_->stream_destroy(s_);
  }
  for (void* p : {static_cast<void*>(v_.slots), static_cast<void*>(v_.flows), counters_, frames_, offs_, lens_, ids_,
                  cdir_, dirs_, iplen_})
    if (p) d_->dev_free(p);
}

bool DeviceFlowTable::init(std::shared_ptr<dev::Device> d, uint32_t capacity, std::string& err) {
  d_ = std::move(d);
  size_t n = 16;
  while (n < size_t(capacity) * 2) n <<= 1;
  v_.mask = uint32_t(n - 1);
  v_.capacity = capacity;
  v_.slots = static_cast<unsigned long long*>(d_->dev_alloc(n * sizeof(unsigned long long)));
  v_.flows = static_cast<k::DevFlow*>(d_->dev_alloc(size_t(capacity) * sizeof(k::DevFlow)));
  counters_ = d_->dev_alloc(2 * sizeof(uint32_t));
  if (!v_.slots || !v_.flows || !counters_) {
    err = "device memory for the flow table ran out";
    return false;
  }
  v_.used = static_cast<uint32_t*>(counters_);
  v_.full = v_.used + 1;
  s_ = d_->stream_create();
  d_->memset(s_, v_.slots, 0, n * sizeof(unsigned long long));
  d_->memset(s_, counters_, 0, 2 * sizeof(uint32_t));
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

bool DeviceFlowTable::track(const uint8_t* frames, size_t frames_bytes, const uint32_t* offsets, const uint32_t* lens,
                            uint32_t n, std::vector<uint32_t>& ids, std::vector<uint8_t>& dirs, std::string& err) {
  ids.assign(n, 0);
  dirs.assign(n, 0);
  if (n == 0) return true;
  if (!grow(frames_, frames_cap_, frames_bytes) || !grow(offs_, offs_cap_, n * 4u) || !grow(lens_, lens_cap_, n * 4u) ||
      !grow(ids_, ids_cap_, n * 4u) || !grow(cdir_, cdir_cap_, n) || !grow(dirs_, dirs_cap_, n) ||
      !grow(iplen_, iplen_cap_, n * 4u)) {
    err = "device memory for a batch ran out";
    return false;
  }
  k::FlowBatchParams p{static_cast<const uint8_t*>(frames_),
                       static_cast<const uint32_t*>(offs_),
                       static_cast<const uint32_t*>(lens_),
                       v_,
                       seq_,
                       static_cast<uint32_t*>(ids_),
                       static_cast<uint8_t*>(cdir_),
                       static_cast<uint8_t*>(dirs_),
                       static_cast<uint32_t*>(iplen_)};
  d_->h2d(s_, frames_, frames, frames_bytes);
  d_->h2d(s_, offs_, offsets, n * 4u);
  d_->h2d(s_, lens_, lens, n * 4u);
  d_->launch(s_, dev::step_kernel<k::FlowFindStep>(), &p, sizeof p, n);
  d_->launch(s_, dev::step_kernel<k::FlowOrigStep>(), &p, sizeof p, n);
  d_->launch(s_, dev::step_kernel<k::FlowCountStep>(), &p, sizeof p, n);
  d_->d2h(s_, ids.data(), ids_, n * 4u);
  d_->d2h(s_, dirs.data(), dirs_, n);
  uint32_t counters[2] = {0, 0};
  d_->d2h(s_, counters, counters_, sizeof counters);
  d_->record(s_);
  launches_ += 3;
  seq_ += n;
  if (d_->wait(s_, err) != dev::Status::Done) return false;
  full_ = counters[1];
  return true;
}

bool DeviceFlowTable::contents(std::vector<Entry>& out, std::string& err) {
  std::vector<unsigned long long> slots(size_t(v_.mask) + 1);
  std::vector<k::DevFlow> flows(v_.capacity);
  d_->d2h(s_, slots.data(), v_.slots, slots.size() * sizeof(unsigned long long));
  d_->d2h(s_, flows.data(), v_.flows, flows.size() * sizeof(k::DevFlow));
  d_->record(s_);
  if (d_->wait(s_, err) != dev::Status::Done) return false;
  out.clear();
  for (unsigned long long s : slots) {
    if (!s) continue;
    const k::DevFlow& f = flows[uint32_t(s) - 1];
    out.push_back({f.key, uint8_t(f.orig_dir), {f.pkts[0], f.pkts[1]}, {f.bytes[0], f.bytes[1]}});
  }
  return true;
}

}  // namespace shoal::flow

#include "shoal/flow/batch_reassembly.hh"

#include <algorithm>
#include <bit>

#include "shoal/kernels/flowstate.hh"
#include "shoal/kernels/steps/tcp_place.hh"

namespace shoal::flow {

namespace {

// Where each array of a batch of n segments lies, in the device's block and
// (the inputs and outputs) in the host's.
struct Layout {
  size_t keys, vals, rel, len, in_end, perm, place, out_end, keys_out, group, a, cover, c, end;
  explicit Layout(size_t n) {
    auto at = [](size_t& p, size_t bytes) {
      size_t here = (p + 7) & ~size_t(7);
      p = here + bytes;
      return here;
    };
    size_t p = 0;
    keys = at(p, 8 * n), vals = at(p, 4 * n), rel = at(p, 4 * n), len = at(p, 4 * n), in_end = p;
    perm = at(p, 4 * n), place = at(p, n), out_end = p;
    keys_out = at(p, 8 * n), group = at(p, 4 * n), a = at(p, 8 * n), cover = at(p, 8 * n), c = at(p, 8 * n), end = p;
  }
};

template <class T>
T* at(uint8_t* base, size_t off) {
  return reinterpret_cast<T*>(base + off);
}

}  // namespace

BatchReassembler::~BatchReassembler() {
  if (!d_) return;
  if (s_) {
    std::string err;
    d_->wait(s_, err);
    d_->stream_destroy(s_);
  }
  d_->dev_free(dmem_);
  d_->host_free(hmem_);
}

void BatchReassembler::init(std::shared_ptr<dev::Device> d) {
  d_ = std::move(d);
  if (d_) s_ = d_->stream_create();
}

bool BatchReassembler::reserve(uint32_t n) {
  if (n <= cap_ && dmem_) return true;
  d_->dev_free(dmem_);
  d_->host_free(hmem_);
  cap_ = std::max({n, 2 * cap_, 256u});
  Layout l(cap_);
  dmem_ = static_cast<uint8_t*>(d_->dev_alloc(l.end));
  hmem_ = static_cast<uint8_t*>(d_->host_alloc(l.out_end));
  if (dmem_ && hmem_) return true;
  d_->dev_free(dmem_);
  d_->host_free(hmem_);
  dmem_ = hmem_ = nullptr;
  cap_ = 0;
  return false;
}

// The device's part: each candidate's place, and the sorted order.
bool BatchReassembler::place(uint32_t n, uint32_t groups, std::string& err) {
  if (!reserve(n)) {
    err = "memory for a batch of segments ran out";
    return false;
  }
  Layout l(n);
  auto* keys = at<uint64_t>(hmem_, l.keys);
  auto* vals = at<uint32_t>(hmem_, l.vals);
  for (uint32_t i = 0; i < n; ++i) vals[i] = i;
  std::copy(key_.begin(), key_.end(), keys);
  std::copy(rel_.begin(), rel_.end(), at<int32_t>(hmem_, l.rel));
  std::copy(len_.begin(), len_.end(), at<uint32_t>(hmem_, l.len));
  k::TcpPlaceParams p{
      at<const uint64_t>(dmem_, l.keys_out), at<const uint32_t>(dmem_, l.perm), at<const int32_t>(dmem_, l.rel),
      at<const uint32_t>(dmem_, l.len),      at<uint32_t>(dmem_, l.group),      at<int64_t>(dmem_, l.a),
      at<int64_t>(dmem_, l.cover),           at<int64_t>(dmem_, l.c),           at<uint8_t>(dmem_, l.place)};
  int end_bit = 32 + (groups > 1 ? std::bit_width(groups - 1) : 0);
  d_->h2d(s_, dmem_, hmem_, l.in_end);
  d_->sort_pairs(s_, at<const uint64_t>(dmem_, l.keys), at<uint64_t>(dmem_, l.keys_out),
                 at<const uint32_t>(dmem_, l.vals), at<uint32_t>(dmem_, l.perm), n, end_bit);
  d_->launch(s_, dev::step_kernel<k::TcpSpanStep>(), &p, sizeof p, n);
  d_->max_scan_by_key(s_, p.group, p.a, p.cover, n, false, 0);
  d_->launch(s_, dev::step_kernel<k::TcpHoleStep>(), &p, sizeof p, n);
  d_->max_scan_by_key(s_, p.group, p.a, p.c, n, true, 0);
  d_->launch(s_, dev::step_kernel<k::TcpPlaceStep>(), &p, sizeof p, n);
  d_->max_scan_by_key(s_, p.group, p.a, p.c, n, false, -1);
  d_->launch(s_, dev::step_kernel<k::TcpAheadStep>(), &p, sizeof p, n);
  d_->d2h(s_, hmem_ + l.perm, dmem_ + l.perm, l.out_end - l.perm);
  d_->record(s_);
  if (d_->wait(s_, err) == dev::Status::Done) return true;
  d_->reset(s_);
  return false;
}

void BatchReassembler::run(Reassembler& r, const std::vector<Segment>& segs, std::string& err) {
  const StreamConfig& cfg = r.config();
  enum Role : uint8_t { kNow, kDevice, kNoop, kAfter };
  role_.assign(segs.size(), kAfter);
  // a RST ends both directions: its connection goes one by one (marked in
  // the stream with the batch's number, as directions are below: no lookup)
  const uint64_t batch = ++batch_;
  uint64_t data_bytes = 0;
  for (const Segment& g : segs) {
    data_bytes += g.len;
    if (g.flags & k::kTcpRst) g.s->rst_batch = batch;
  }
  // held data that could reach the cap over all streams: the order decides
  bool all_one = !d_ || r.c_.buffered.get() + data_bytes > cfg.total_cap;
  idx_.clear(), group_of_.clear(), key_.clear(), rel_.clear(), len_.clear();
  // per direction of the batch (its group, DirStream::group): whether its
  // segments are still candidates (a direction stops being one at a FIN, a
  // SYN with data, or a segment the device cannot place; what follows comes
  // after)
  dirs_.clear();
  uint32_t groups = 0;
  for (uint32_t i = 0; i < segs.size() && !all_one; ++i) {
    const Segment& g = segs[i];
    if (g.s->rst_batch == batch) continue;
    DirStream& ds = g.s->d[g.dir];
    if (ds.batch != batch) {
      ds.batch = batch;
      ds.group = groups++;
      dirs_.emplace_back();
    }
    Dir& x = dirs_[ds.group];
    bool fin = g.flags & k::kTcpFin, syn = g.flags & k::kTcpSyn;
    if (!x.open) continue;
    if (!x.started && !fin && !(syn && g.len)) {
      // Until the direction can take placed data (picked up, and nothing
      // held from earlier batches), its segments go one by one, now: a SYN
      // or ACK before its first data, the data that picks it up or fills
      // what an earlier batch left.
      const DirStream& d = g.s->d[g.dir];
      if (!g.len || !d.init || !d.ooo.empty()) {
        role_[i] = kNow;
        if (g.len) c_.one_by_one.add();
        r.segment(*g.s, g.flow, g.dir, g.seq, g.flags, g.data, g.len);
        continue;
      }
    }
    if (!g.len && !fin) {  // an ACK, or a SYN again: nothing to do once the stream started
      role_[i] = kNoop;
      continue;
    }
    const DirStream& d = g.s->d[g.dir];
    if (!x.started) x.next = d.next;
    x.started = true;
    int32_t rel = int32_t(g.seq - (d.base + uint32_t(d.next)));
    if (fin || syn || d.fin || d.rst || d.ended || !d.ooo.empty() || r.target_based(d) || rel >= (1 << 30) ||
        rel <= -(1 << 30) || (x.bytes += g.len) >= (1u << 30)) {
      x.open = false;
      continue;
    }
    role_[i] = kDevice;
    idx_.push_back(i);
    group_of_.push_back(ds.group);
    key_.push_back(uint64_t(ds.group) << 32 | (uint32_t(rel) ^ 0x80000000u));
    rel_.push_back(rel);
    len_.push_back(g.len);
  }
  uint32_t m = uint32_t(idx_.size());
  if (m) {
    c_.batches.add();
    if (!place(m, groups, err)) {
      c_.device_failures.add();
      m = 0;  // the candidates go one by one below, in order
      for (uint8_t& x : role_)
        if (x == kDevice || x == kNoop) x = kAfter;
    }
  }
  auto dir_of = [&](const Segment& g) -> Dir& { return dirs_[g.s->d[g.dir].group]; };
  if (m) {
    Layout l(m);
    const auto* perm = at<const uint32_t>(hmem_, l.perm);
    const uint8_t* place = hmem_ + l.place;
    // A direction with segments overlapping in the batch goes one by one;
    // so does one that would hold data one by one (a segment arrives ahead
    // of one preceding it, or past a hole) and whose held data could then
    // reach its cap: while a direction holds data, every segment that comes,
    // in order or not, passes through the cap's test.
    for (uint32_t a = 0; a < m; ++a) {
      Dir& x = dir_of(segs[idx_[a]]);
      if (place[a] == k::kPlaceOverlap) x.bad = true;
      if ((place[a] & k::kPlaceAhead) || place[a] == k::kPlacePastHole) x.holds = true;
    }
    for (uint32_t a = 0; a < m; ++a) {
      const Segment& g = segs[idx_[a]];
      Dir& x = dir_of(g);
      if (x.holds && g.s->d[g.dir].held + x.bytes > cfg.dir_cap) x.bad = true;
    }
    // what continues each stream, in stream order
    for (uint32_t i = 0; i < m; ++i) {
      uint32_t a = perm[i];
      const Segment& g = segs[idx_[a]];
      uint8_t pl = place[a];
      if (dir_of(g).bad || pl == k::kPlacePastHole) continue;
      c_.placed.add();
      r.c_.segments.add();
      if (pl == k::kPlaceOld || rel_[a] < 0) {
        r.c_.retransmitted.add();
        // the old part: the last policy's (as Reassembler::segment() tells the sink)
        int64_t lo = std::max<int64_t>(int64_t(dir_of(g).next) + rel_[a], 0);
        int64_t hi = std::min<int64_t>(int64_t(dir_of(g).next) + rel_[a] + int64_t(g.len), int64_t(dir_of(g).next));
        if (lo < hi && r.policy(g.s->d[g.dir]) == Overlap::Last)
          r.redelivered(g.s->d[g.dir], g.flow, g.dir, uint64_t(lo), g.data + (lo - (int64_t(dir_of(g).next) + rel_[a])),
                        uint32_t(hi - lo), {{uint64_t(lo), uint64_t(hi)}});
      }
      if (pl == k::kPlaceOld) continue;
      if (pl & k::kPlaceAhead) r.c_.out_of_order.add();
      uint32_t skip = rel_[a] < 0 ? uint32_t(-int64_t(rel_[a])) : 0;
      r.deliver(g.s->d[g.dir], g.flow, g.dir, g.data + skip, g.len - skip);
    }
    // what lies past a hole is held, one by one in arrival order
    for (uint32_t a = 0; a < m; ++a) {
      const Segment& g = segs[idx_[a]];
      if (place[a] != k::kPlacePastHole || dir_of(g).bad) continue;
      c_.one_by_one.add();
      r.segment(*g.s, g.flow, g.dir, g.seq, g.flags, g.data, g.len);
    }
  }
  // then the rest, in arrival order: directions the device left, and what
  // came after a direction's last candidate
  for (uint32_t i = 0; i < segs.size(); ++i) {
    const Segment& g = segs[i];
    uint8_t x = role_[i];
    if (x == kNow || ((x == kDevice || x == kNoop) && !dir_of(g).bad)) continue;
    if (g.len) c_.one_by_one.add();
    r.segment(*g.s, g.flow, g.dir, g.seq, g.flags, g.data, g.len);
  }
}

}  // namespace shoal::flow

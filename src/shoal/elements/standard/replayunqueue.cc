// ReplayUnqueue and Replay: FastClick's elements that preload a trace into
// memory and replay it a number of times (ReplayUnqueue pull to push,
// Replay pulled), so a benchmark measures the graph and not the reading of
// a file.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "shoal/elements/common.hh"

namespace shoal {

template <bool Pull>
class Replayer : public Element {
 public:
  void configure(Args& a) override {
    bool quick_clone = false, verbose = false, use_signal = true;
    a.read("STOP", stop_).read("STOP_TIME", stop_time_).read("QUICK_CLONE", quick_clone).read("BURST", burst_);
    a.read("VERBOSE", verbose).read("FREEONTERMINATE", free_on_terminate_).read("LIMIT", limit_);
    a.read("ACTIVE", active_).read("USE_SIGNAL", use_signal).read("TIMING", timing_);
    a.complete();
    if (burst_ == 0) a.fail("BURST must be at least 1");
    if (stop_ < -1) a.fail("STOP is a number of loops, or -1 for no end");
  }
  void initialize() override {
    if (!Pull) {
      add_task();
      set_task_active(active_);
    } else if (!active_) {
      notifier_.sleep();  // (until the active handler says otherwise)
    }
    r_done_ = add_drop_reason("replay-ended");
    r_limit_ = add_drop_reason("over-limit");
  }
  size_t packets_held() const override { return held_; }
  bool run_task() override {
    if (!loaded_) return load();
    PacketBatch* b = take(burst_);
    if (b) output_push(0, b);
    return !finished_;
  }
  // Replay: the preload on the first pulls (it returns nothing until the
  // input is exhausted), then up to `max` packets a pull.
  PacketBatch* pull(int, uint32_t max) override {
    if (!active_ || finished_) {
      notifier_.sleep();
      return nullptr;
    }
    while (!loaded_ && load()) {}
    return loaded_ && !finished_ ? take(std::min(max, burst_)) : nullptr;
  }
  // Replay's empty-notifier: active until the last loop is done (or while
  // paused: asleep), so its puller ends with it.
  Notifier* notifier() override { return Pull ? &notifier_ : nullptr; }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_stat_handler("loops", loops_);
    add_read_handler(
        "loaded", [this] { return std::to_string(nrecs_); }, Agg::Sum, true);
    // Seconds of replay (preloading excluded): a benchmark's packets over
    // this are its rate from memory. The longest worker's.
    add_read_handler(
        "time",
        [this] {
          if (!loaded_) return std::string("0");
          uint64_t end = finished_ ? end_ns_ : worker().now_ns();
          return fmt::format("{:.6f}", double(end - start_ns_) / 1e9);
        },
        Agg::Max, true);
    add_read_handler("active", [this] { return active_ ? "true" : "false"; });
    add_write_handler("active", [this](const std::string& v) {
      bool on;
      if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
      active_ = on;
      if (Pull) {
        if (on && !finished_) notifier_.wake();
      } else {
        set_task_active(on);
      }
    });
  }
  void wake_task() override {
    if (!Pull && active_ && !finished_) set_task_active(true);
  }

 private:
  // A record in a chunk: this header, then the bytes before data (stripped
  // headers a later element may put back), then the data, padded to 8.
  // Records lie one after another, so a replay reads memory in order.
  struct RecHdr {
    uint64_t ts;
    uint32_t pre, len;        // bytes before data that a header lies in; data bytes
    int32_t mac, net, trans;  // header offsets from data (INT32_MIN: none)
    uint32_t anno;            // index in annos_, or kPlain
  };
  static_assert(sizeof(RecHdr) == 32);
  // The annotations of most packets from a capture: all zero but the
  // timestamp, kept in the record; others in annos_.
  static constexpr uint32_t kPlain = UINT32_MAX;
  static size_t record_size(uint32_t bytes) { return (sizeof(RecHdr) + bytes + 7) & ~size_t(7); }
  static bool plain(const Anno& a) {
    const auto* b = reinterpret_cast<const uint8_t*>(&a);
    for (size_t i = offsetof(Anno, dst_ip); i <= offsetof(Anno, packet_type); ++i)
      if (b[i]) return false;
    return true;
  }
  // The next packets of the replay, at most `max`: nullptr when none is due
  // (TIMING), the pool is empty, or the replay ended (finish()).
  PacketBatch* take(uint32_t max) {
    if (stop_ == 0 || nrecs_ == 0) return finish(), nullptr;
    if (stop_time_ > 0 && worker().now_ns() - start_ns_ >= uint64_t(stop_time_) * 1000000000ull)
      return finish(), nullptr;
    bool last = stop_ == 1;  // this loop's packets are the originals (FREEONTERMINATE)
    PacketBatch* b = nullptr;
    uint64_t now = timing_ > 0 ? worker().now_ns() : 0;
    while (next_ < nrecs_ && (!b || (b->live() < max && !b->full()))) {
      if (cur_off_ >= chunks_[cur_chunk_].used) ++cur_chunk_, cur_off_ = 0;
      const uint8_t* at = chunks_[cur_chunk_].mem.get() + cur_off_;
      RecHdr r;
      std::memcpy(&r, at, sizeof r);
      if (timing_ > 0 && (r.ts - first_ts_) * 100 / uint64_t(timing_) > now - loop_start_ns_)
        break;  // not yet: the trace's own pace, scaled by TIMING percent
      Packet* p = worker().pool().alloc(r.pre + r.len);
      if (!p) break;  // pool empty: on the next run
      __builtin_prefetch(at + 512);
      copy_frame(p->data(), at + sizeof r, r.pre + r.len);
      if (r.mac != INT32_MIN) p->set_mac_header(uint32_t(int64_t(r.pre) + r.mac));
      if (r.net != INT32_MIN) p->set_network_header(uint32_t(int64_t(r.pre) + r.net));
      if (r.trans != INT32_MIN) p->set_transport_header(uint32_t(int64_t(r.pre) + r.trans));
      p->pull(r.pre);
      if (r.anno == kPlain)
        p->set_timestamp_ns(r.ts);  // the rest as a new packet has it: zero
      else
        p->anno() = annos_[r.anno];
      cur_off_ += record_size(r.pre + r.len);
      if (last && free_on_terminate_)
        --held_;  // an original leaves
      else
        created();
      if (!b) b = new_batch();
      b->append(p);
      ++next_;
    }
    if (b) count_.add(b->live());
    if (next_ == nrecs_) {  // a loop done
      next_ = 0;
      cur_chunk_ = 0, cur_off_ = 0;
      loop_start_ns_ = worker().now_ns();
      loops_.add();
      if (stop_ > 0) --stop_;
      if (stop_ == 0) finish();
    }
    return b;
  }
  // Preloading: every packet the input gives until it is exhausted (or
  // LIMIT), stored compactly; the buffers go back to the pool at once.
  bool load() {
    PacketBatch* b = input_pull(0, burst_);
    if (!b) {
      Notifier* n = upstream_notifier(this);
      if (n && n->active) return false;  // more may come
      loaded_ = true;
      start_ns_ = loop_start_ns_ = worker().now_ns();
      if (nrecs_ == 0) return finish();
      return true;
    }
    b->for_each([&](uint32_t, Packet* p) {
      if (limit_ >= 0 && int64_t(nrecs_) >= limit_) return drop(p, r_limit_);
      RecHdr r;
      int64_t first = 0;
      auto off = [&](bool has, int64_t o) -> int32_t {
        if (!has) return INT32_MIN;
        first = std::min(first, o);
        return int32_t(o);
      };
      r.mac = off(p->has_mac_header(), p->mac_header_offset());
      r.net = off(p->has_network_header(), p->network_header_offset());
      r.trans = off(p->has_transport_header(), p->transport_header_offset());
      r.pre = uint32_t(std::min<int64_t>(-first, p->headroom()));
      r.len = p->length();
      r.ts = p->timestamp_ns();
      r.anno = kPlain;
      if (!plain(p->anno())) {
        r.anno = uint32_t(annos_.size());
        annos_.push_back(p->anno());
      }
      if (nrecs_ == 0) first_ts_ = r.ts;
      store(r, p->data() - r.pre);
      ++nrecs_;
      ++held_;
      worker().pool().free(p);
    });
    recycle(b);
    if (limit_ >= 0 && int64_t(nrecs_) >= limit_) {
      loaded_ = true;
      start_ns_ = loop_start_ns_ = worker().now_ns();
    }
    return true;
  }
  // Appends a record to the chunks (4 MiB each; growing never moves what is
  // stored). Not MADV_HUGEPAGE: fewer faults, but where the kernel compacts
  // memory on demand (defrag=madvise) a load took from 0.05 to 1.1 s of
  // system time from one run to the next.
  void store(const RecHdr& r, const uint8_t* src) {
    size_t need = record_size(r.pre + r.len);
    if (chunks_.empty() || chunks_.back().used + need > chunks_.back().size) {
      size_t size = std::max(kChunk, (need + kChunk - 1) / kChunk * kChunk);
      void* m = std::malloc(size);
      if (!m) throw std::bad_alloc();
      chunks_.push_back({std::unique_ptr<uint8_t, void (*)(void*)>(static_cast<uint8_t*>(m), std::free), size, 0});
    }
    Chunk& c = chunks_.back();
    uint8_t* dst = c.mem.get() + c.used;
    std::memcpy(dst, &r, sizeof r);
    copy_frame(dst + sizeof r, src, r.pre + r.len);
    c.used += need;
  }
  // The last loop is done (or STOP/STOP_TIME says so): the originals still
  // stored are dropped ('replay-ended'), and the router is asked to stop.
  bool finish() {
    if (!finished_) {
      finished_ = true;
      end_ns_ = worker().now_ns();
      if (held_) count_dropped(r_done_, held_);
      held_ = 0;
      nrecs_ = 0;
      annos_ = {};
      chunks_.clear();
      request_stop();
      notifier_.sleep();
    }
    if (!Pull) set_task_active(false);
    return false;
  }

  int64_t stop_ = -1, stop_time_ = 0, limit_ = -1, timing_ = 0;
  uint32_t burst_ = 64;
  bool active_ = true, free_on_terminate_ = true, loaded_ = false, finished_ = false;
  static constexpr size_t kChunk = size_t(4) << 20;
  struct Chunk {
    std::unique_ptr<uint8_t, void (*)(void*)> mem;
    size_t size, used;
  };
  std::vector<Chunk> chunks_;
  std::vector<Anno> annos_;
  size_t nrecs_ = 0, next_ = 0, held_ = 0;
  size_t cur_chunk_ = 0, cur_off_ = 0;  // the next record to replay
  uint64_t first_ts_ = 0;
  uint64_t start_ns_ = 0, loop_start_ns_ = 0, end_ns_ = 0;
  uint16_t r_done_ = 0, r_limit_ = 0;
  Stat count_, loops_;
  Notifier notifier_;  // (Replay's)
};

using ReplayUnqueue = Replayer<false>;
SHOAL_ELEMENT(ReplayUnqueue, .name = "ReplayUnqueue", .ports = "1/1", .processing = "l/h",
              .summary = "preloads packets, then replays them a number of times",
              .description =
                  "FastClick's ReplayUnqueue: pulls every packet its input gives until the input is exhausted "
                  "(or LIMIT packets), keeps their bytes, header offsets and annotations in memory (the "
                  "buffers go back to the pool), then pushes them out BURST at a time, from first to last, "
                  "STOP times (-1: until the router stops), and asks the router to stop. Each replayed packet "
                  "is a new packet (counted as created); with FREEONTERMINATE (default) the last loop's "
                  "packets stand for the originals, otherwise the originals are dropped at the end "
                  "('replay-ended'); packets past LIMIT are dropped ('over-limit'). TIMING p replays at p percent of "
                  "the trace's own pace (0: as fast as "
                  "possible). Put it after a source that ends (FromDump with STOP false): a source that stops "
                  "the router would end the run before the replay.",
              .args = {{"STOP", "integer", "loops to replay (default -1: no end)"},
                       {"STOP_TIME", "seconds", "also end after this many seconds (0: no limit)"},
                       {"BURST", "unsigned", "packets per push (default 64)"},
                       {"LIMIT", "integer", "packets to preload at most (-1: all)"},
                       {"TIMING", "percent", "replay at this share of the trace's pace (0: no pacing)"},
                       {"FREEONTERMINATE", "boolean", "the last loop sends the originals (default true)"},
                       {"ACTIVE", "boolean", "replay when true (default true)"},
                       {"QUICK_CLONE", "boolean", "accepted for FastClick configurations (Shoal copies)"},
                       {"USE_SIGNAL", "boolean", "accepted for FastClick configurations"},
                       {"VERBOSE", "boolean", "accepted for FastClick configurations"}},
              .handlers = {{"count", "r", "packets replayed"},
                           {"loops", "r", "loops completed"},
                           {"loaded", "r", "packets preloaded"},
                           {"time", "r", "seconds replaying so far (preloading excluded; the longest worker's)"},
                           {"active", "rw", "replaying or paused"}},
              .example =
                  "FromDump(trace.pcap, STOP false) -> ReplayUnqueue(STOP 10) -> Strip(14) -> CheckIPHeader "
                  "-> c :: Counter -> Discard;");

using Replay = Replayer<true>;
SHOAL_ELEMENT(Replay, .name = "Replay", .ports = "1/1", .processing = "l/l",
              .summary = "preloads packets, then gives them a number of times when pulled",
              .description =
                  "FastClick's Replay: ReplayUnqueue with a pull output. The first pulls preload every packet its "
                  "input gives until the input is exhausted (or LIMIT packets) and give nothing; later pulls give "
                  "up to BURST of the stored packets each, from first to last, STOP times (-1: until the router "
                  "stops), after which it asks the router to stop and its empty-notifier sleeps. Arguments, "
                  "handlers and drops as ReplayUnqueue's.",
              .args = {{"STOP", "integer", "loops to replay (default -1: no end)"},
                       {"STOP_TIME", "seconds", "also end after this many seconds (0: no limit)"},
                       {"BURST", "unsigned", "packets per pull at most (default 64)"},
                       {"LIMIT", "integer", "packets to preload at most (-1: all)"},
                       {"TIMING", "percent", "replay at this share of the trace's pace (0: no pacing)"},
                       {"FREEONTERMINATE", "boolean", "the last loop gives the originals (default true)"},
                       {"ACTIVE", "boolean", "replay when true (default true)"},
                       {"QUICK_CLONE", "boolean", "accepted for FastClick configurations (Shoal copies)"},
                       {"USE_SIGNAL", "boolean", "accepted for FastClick configurations"},
                       {"VERBOSE", "boolean", "accepted for FastClick configurations"}},
              .handlers = {{"count", "r", "packets replayed"},
                           {"loops", "r", "loops completed"},
                           {"loaded", "r", "packets preloaded"},
                           {"time", "r", "seconds replaying so far (preloading excluded; the longest worker's)"},
                           {"active", "rw", "replaying or paused"}},
              .example = "FromDump(trace.pcap, STOP false) -> Replay(STOP 10) -> Unqueue -> c :: Counter -> Discard;");

}  // namespace shoal

// The base of Click's periodic sources (EtherPauseSource, ARPFaker,
// RIPSend): a packet every INTERVAL on a timer when the output is push, one
// per packet asked for when it is pull; LIMIT in all, ACTIVE, STOP. One
// stream whatever the number of workers: the home worker's copy emits.
#pragma once
#include <fmt/format.h>

#include <algorithm>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class TimerSource : public Element {
 public:
  void initialize() override {
    r_pool_ = add_drop_reason("pool-empty");
    timer_.owner = this;
    if (!on_home_thread()) {
      if (stop_ && limit_ >= 0) request_stop();
      return;
    }
    if (limit_ != 0 && active_ && output_proc(0) == Proc::Push)
      worker().schedule(timer_, worker().now_ns() + first_.ns);
  }
  void run_timer(Timer&) override {
    if (!active_) return;
    if (limit_ >= 0 && count_.get() >= uint64_t(limit_)) {
      if (stop_) request_stop();
      return;
    }
    if (Packet* p = emit()) {
      PacketBatch* b = new_batch();
      b->append(p);
      output_push(0, b);
    }
    // After the last, one more expiry stops the run (STOP).
    if (limit_ < 0 || count_.get() < uint64_t(limit_) || stop_) schedule_next();
  }
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* b = nullptr;
    max = std::min(max, worker().batches().batch_capacity());  // (Click's one a pull: --batch 1)
    for (uint32_t i = 0; i < max && active_; ++i) {
      if (limit_ >= 0 && count_.get() >= uint64_t(limit_)) {
        if (stop_) request_stop(), stop_ = false;
        break;
      }
      Packet* p = emit();
      if (!p) break;
      if (!b) b = new_batch();
      b->append(p);
    }
    return b;
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_read_handler("active", [this] { return std::string(active_ ? "true" : "false"); });
    add_write_handler("active", [this](const std::string& v) {
      bool on;
      if (!parse_bool(trim(v), on)) throw std::runtime_error("type mismatch");
      active_ = on;
      wake();
    });
    add_read_handler("limit", [this] { return std::to_string(limit_); });
    add_write_handler("limit", [this](const std::string& v) {
      int64_t n;
      if (!parse_int(trim(v), n)) throw std::runtime_error("type mismatch");
      limit_ = n;
      wake();
    });
    add_read_handler("interval", [this] { return fmt::format("{:.3f}s", interval_.seconds()); });
    add_write_handler("interval", [this](const std::string& v) {
      Duration d;
      if (!parse_duration(trim(v), d)) throw std::runtime_error("type mismatch");
      interval_ = d;
    });
    add_write_handler("reset_counts", [this](const std::string&) {
      count_.set(0);
      wake();
    });
  }

 protected:
  // Reads LIMIT, ACTIVE, STOP and INTERVAL (default `interval`); the first
  // packet comes `first` after start (default, or when INTERVAL is shorter:
  // one INTERVAL).
  void read_timer_args(Args& a, Duration interval, Duration first = {}) {
    interval_ = interval;
    a.read("LIMIT", limit_).read("ACTIVE", active_).read("STOP", stop_).read("INTERVAL", interval_);
    first_ = first.ns && first.ns < interval_.ns ? first : interval_;
  }
  // The next packet (a new one, counted here as entering the graph).
  virtual Packet* make() = 0;
  Duration interval_{1'000'000'000}, first_{};
  int64_t limit_ = -1;
  bool active_ = true, stop_ = false;

 private:
  Packet* emit() {
    Packet* p = make();
    if (!p) {
      count_lost(r_pool_);
      return nullptr;
    }
    received(1);
    count_.add();
    return p;
  }
  void schedule_next() { worker().schedule(timer_, worker().now_ns() + interval_.ns); }
  void wake() {
    if (active_ && on_home_thread() && !timer_.scheduled && output_proc(0) == Proc::Push) schedule_next();
  }
  Timer timer_;
  Stat count_;
  uint16_t r_pool_ = 0;
};

}  // namespace shoal

// What the offload layer keeps per Runtime: its settings (the device to
// use, aggregation sizes) and the device itself, opened at first use and
// shared by every worker. Set the options after making the Runtime and
// before configuring it; without them the defaults apply.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shoal/core/runtime.hh"
#include "shoal/device/device.hh"

namespace shoal::offload {

struct BalanceParams;
class SharedClimber;

struct Options {
  dev::DeviceOptions device;  // the device offloading elements use (opened on first use)
  // NBA-style offload (an offloadable element reached by a batch a balancer
  // sent to the device): batches per aggregate, the wait for a partial
  // aggregate, and aggregates in flight per element.
  uint32_t batches = 32;
  uint32_t timeout_us = 200;
  uint32_t inflight = 8;
  // GASPP's packet scheduling of every aggregate (Chain::set_schedule).
  bool schedule = false;
  // GPUNFV's dynamic batch sizing (BatchSizer): the aggregate size adapts
  // between 1 and `batches`, shrinking when an aggregate takes longer than
  // latency_us (0: no bound); aggregates the timeout sends with fewer than
  // cpu_below packets run on the CPU.
  bool adaptive = false;
  uint32_t latency_us = 0;
  uint32_t cpu_below = 0;
  // Chains with per-flow state keep it resident on the device, so that
  // their aggregates overlap (Chain::set_flow_resident); false: one
  // aggregate at a time, the state copied from the host each time.
  bool flow_resident = true;
};

// How long a worker's device batches took, from the batch's forming to its
// aggregate's completion, since its balancer last looked (Chain::complete
// adds, OffloadBalancer takes). Only its worker touches it.
struct LatencySamples {
  static constexpr size_t kMax = 4096;  // per look; later ones are counted, not kept
  std::vector<uint32_t> us;
  uint64_t seen = 0;
  void add(uint64_t ns) {
    ++seen;
    if (us.size() < kMax) us.push_back(uint32_t(std::min<uint64_t>(ns / 1000, UINT32_MAX)));
  }
};

// Every device batch's latency (the same span as LatencySamples), counted in
// fixed buckets for monitoring (`shoal run --metrics`): shared by the
// workers, updated with relaxed atomics once per batch.
struct LatencyHistogram {
  static constexpr std::array<uint32_t, 14> kBoundsUs = {10,   25,   50,    100,   250,   500,    1000,
                                                         2500, 5000, 10000, 25000, 50000, 100000, 1000000};
  std::array<std::atomic<uint64_t>, kBoundsUs.size() + 1> counts{};  // the last: above every bound
  std::atomic<uint64_t> sum_ns{0};
  void add(uint64_t ns) {
    size_t i = 0;
    while (i < kBoundsUs.size() && ns > uint64_t(kBoundsUs[i]) * 1000) ++i;
    counts[i].fetch_add(1, std::memory_order_relaxed);
    sum_ns.fetch_add(ns, std::memory_order_relaxed);
  }
};

// How long the device had work (its utilisation, as monitoring reads it):
// the union, over every chain and worker, of the spans from an aggregate's
// submission (its copy or first launch queued) to the moment its worker saw
// it complete. A device shared by many workers is busy while any of them
// has an aggregate on it; the host's view, so a span ends when the
// completion is noticed, up to one poll late. Times are steady-clock ns
// (real time, also under --simtime).
class DeviceOccupancy {
 public:
  void begin(uint64_t now);
  void end(uint64_t now);
  // Busy time up to `now`, the span in progress included.
  uint64_t busy_ns(uint64_t now) const;
  uint32_t in_flight() const;
  static uint64_t clock_ns();

 private:
  mutable std::mutex mu_;
  uint32_t n_ = 0;
  uint64_t since_ = 0, busy_ = 0;
};

class Services {
 public:
  Options options;
  LatencyHistogram latency_histogram;
  DeviceOccupancy occupancy;
  // Worker w's latency samples (made at the first call; the reference stays valid).
  LatencySamples& latencies(int worker);
  // The device, opened at the first call; nullptr with err when the
  // requested one cannot be used.
  std::shared_ptr<dev::Device> device(std::string& err);
  // Which backend was taken and why (empty before the device is opened).
  std::string device_detail() const;
  // The opened device's backend (host, cuda), or "none" before an element
  // opened it.
  std::string device_kind() const;
  // The adaptive split that every worker's copy of the balancer `key` (its
  // element name) shares: made by the first copy to ask, with its settings.
  std::shared_ptr<SharedClimber> shared_climber(const std::string& key, const BalanceParams& p, double start,
                                                uint32_t workers, uint64_t interval_ns);
  // True once: for the one element that reports a missing device.
  bool claim_device_report() { return !reported_.exchange(true); }

 private:
  mutable std::mutex mu_;
  std::deque<LatencySamples> latencies_;
  std::map<std::string, std::shared_ptr<SharedClimber>> climbers_;
  std::shared_ptr<dev::Device> device_;
  std::string detail_, err_;
  bool tried_ = false;
  std::atomic<bool> reported_{false};
};

inline Services& services(Runtime& rt) { return rt.extension<Services>(); }
inline void set_options(Runtime& rt, const Options& o) { services(rt).options = o; }

}  // namespace shoal::offload

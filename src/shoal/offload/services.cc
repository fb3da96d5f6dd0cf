#include "shoal/offload/services.hh"

#include <chrono>

#include "shoal/offload/shared_climber.hh"

namespace shoal::offload {

uint64_t DeviceOccupancy::clock_ns() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void DeviceOccupancy::begin(uint64_t now) {
  std::lock_guard<std::mutex> g(mu_);
  if (n_++ == 0) since_ = now;
}

void DeviceOccupancy::end(uint64_t now) {
  std::lock_guard<std::mutex> g(mu_);
  if (n_ == 0) return;  // (an end without its begin: nothing to close)
  if (--n_ == 0 && now > since_) busy_ += now - since_;
}

uint64_t DeviceOccupancy::busy_ns(uint64_t now) const {
  std::lock_guard<std::mutex> g(mu_);
  return busy_ + (n_ && now > since_ ? now - since_ : 0);
}

uint32_t DeviceOccupancy::in_flight() const {
  std::lock_guard<std::mutex> g(mu_);
  return n_;
}

std::shared_ptr<dev::Device> Services::device(std::string& err) {
  std::lock_guard<std::mutex> g(mu_);
  if (!tried_) {
    tried_ = true;
    device_ = dev::open_device(options.device, detail_, err_);
  }
  if (!device_) err = err_;
  return device_;
}

LatencySamples& Services::latencies(int worker) {
  std::lock_guard<std::mutex> g(mu_);
  while (latencies_.size() <= size_t(worker)) latencies_.emplace_back();
  return latencies_[size_t(worker)];
}

std::shared_ptr<SharedClimber> Services::shared_climber(const std::string& key, const BalanceParams& p, double start,
                                                        uint32_t workers, uint64_t interval_ns) {
  std::lock_guard<std::mutex> g(mu_);
  auto& c = climbers_[key];
  if (!c) c = std::make_shared<SharedClimber>(p, start, workers, interval_ns);
  return c;
}

std::string Services::device_kind() const {
  std::lock_guard<std::mutex> g(mu_);
  return device_ ? std::string(device_->kind()) : std::string("none");
}

std::string Services::device_detail() const {
  std::lock_guard<std::mutex> g(mu_);
  return device_ ? detail_ : std::string();
}

}  // namespace shoal::offload

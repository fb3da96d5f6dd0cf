#include "shoal/offload/services.hh"

namespace shoal::offload {

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

std::string Services::device_detail() const {
  std::lock_guard<std::mutex> g(mu_);
  return device_ ? detail_ : std::string();
}

}  // namespace shoal::offload

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

std::string Services::device_detail() const {
  std::lock_guard<std::mutex> g(mu_);
  return device_ ? detail_ : std::string();
}

}  // namespace shoal::offload

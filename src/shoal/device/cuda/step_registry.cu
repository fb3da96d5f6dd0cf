// The registry of CUDA step launchers (see step_launch.cuh).
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "shoal/device/cuda/step_launch.cuh"

namespace shoal::cuda {

namespace {
struct Entry {
  const char* name;
  StepLauncher launch;
  StepFnGetter get_fn;
  std::atomic<StepDeviceFn> fn{nullptr};
};
// (a deque: entries never move, so their atomics stay put)
std::deque<Entry>& entries() {
  static std::deque<Entry> e;
  return e;
}
Entry* find(const char* name) {
  for (Entry& e : entries())
    if (std::strcmp(e.name, name) == 0) return &e;
  return nullptr;
}
}  // namespace

bool register_step(const char* name, StepLauncher l, StepFnGetter g) {
  Entry& e = entries().emplace_back();
  e.name = name, e.launch = l, e.get_fn = g;
  return true;
}

StepLauncher find_step(const char* name) {
  Entry* e = find(name);
  return e ? e->launch : nullptr;
}

cudaError_t step_device_fn(const char* name, StepDeviceFn* out) {
  Entry* e = find(name);
  if (!e) return cudaErrorInvalidDeviceFunction;
  if ((*out = e->fn.load(std::memory_order_acquire))) return cudaSuccess;
  cudaError_t err = e->get_fn(out);  // two workers may both fetch it: the same address
  if (err == cudaSuccess) e->fn.store(*out, std::memory_order_release);
  return err;
}

cudaError_t resolve_step_fns() {
  for (Entry& e : entries()) {
    StepDeviceFn f = nullptr;
    cudaError_t err = step_device_fn(e.name, &f);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace shoal::cuda

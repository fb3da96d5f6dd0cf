// The registry of CUDA step launchers (see step_launch.cuh).
#include <cstring>
#include <mutex>
#include <vector>

#include "shoal/device/cuda/step_launch.cuh"

namespace shoal::cuda {

namespace {
struct Entry {
  const char* name;
  StepLauncher launch;
};
std::vector<Entry>& entries() {
  static std::vector<Entry> e;
  return e;
}
}  // namespace

bool register_step(const char* name, StepLauncher l) {
  entries().push_back({name, l});
  return true;
}

StepLauncher find_step(const char* name) {
  for (const Entry& e : entries())
    if (std::strcmp(e.name, name) == 0) return e.launch;
  return nullptr;
}

}  // namespace shoal::cuda

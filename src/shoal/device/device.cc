#include "shoal/device/device.hh"

#include <fmt/format.h>

#include <thread>

#ifdef SHOAL_HAVE_CUDA
#include "shoal/device/cuda/cuda_api.hh"
#endif

namespace shoal {

bool cuda_compiled() {
#ifdef SHOAL_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool select_device(const std::string& want, DeviceChoice& out, std::string& err) {
  std::string host_detail = fmt::format("host backend on {} CPU threads", std::max(1u, std::thread::hardware_concurrency()));
  if (want == "host") {
    out = {"host", host_detail};
    return true;
  }
  if (want != "auto" && want != "cuda") {
    err = fmt::format("unknown device '{}' (auto, host or cuda)", want);
    return false;
  }
  std::string why;
#ifdef SHOAL_HAVE_CUDA
  int n = cuda::device_count(why);
  if (n > 0) {
    out = {"cuda", cuda::device_description(0)};
    return true;
  }
#else
  why = "this build has no CUDA backend (nvcc was not found at build time)";
#endif
  if (want == "cuda") {
    err = "no usable CUDA device: " + why;
    return false;
  }
  out = {"host", host_detail + " (no CUDA: " + why + ")"};
  return true;
}

}  // namespace shoal

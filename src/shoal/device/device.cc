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
  std::string host_detail =
      fmt::format("host backend on {} CPU threads", std::max(1u, std::thread::hardware_concurrency()));
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

namespace dev {

bool Device::inject_fault() {
  uint64_t n = ops_.fetch_add(1, std::memory_order_relaxed);
  if (opt_.fault_rate <= 0) return false;
  // A hash of (seed, operation number): reproducible for a given seed.
  uint64_t x = (n + 1) * 0x9e3779b97f4a7c15ull ^ opt_.seed * 0xbf58476d1ce4e5b9ull;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 29;
  bool hit = double(x >> 11) * 0x1.0p-53 < opt_.fault_rate;
  if (hit) injected_.fetch_add(1, std::memory_order_relaxed);
  return hit;
}

void Device::launch_fused(Stream* s, const FusedStep* steps, uint32_t count, uint32_t n, const uint32_t* order,
                          bool /*signal: record() marks the end here*/) {
  for (uint32_t j = 0; j < count; ++j) {
    const FusedStep& f = steps[j];
    if (f.per_packet)
      launch(s, *f.kernel, f.params, f.size, n * f.per_packet, nullptr);
    else
      launch(s, *f.kernel, f.params, f.size, n, order);
  }
}

void Device::follow(Stream*, Stream*) {
  // (only called where orders_streams(): a backend that says so overrides this)
  std::abort();
}

bool Device::upload(void* dst, const void* src, size_t bytes, std::string& err) {
  Stream* s = stream_create();
  if (!s) {
    err = "cannot create a stream";
    return false;
  }
  h2d(s, dst, src, bytes);
  record(s);
  Status st = wait(s, err);
  stream_destroy(s);
  return st == Status::Done;
}

std::shared_ptr<Device> open_device(const DeviceOptions& o, std::string& detail, std::string& err) {
  DeviceChoice c;
  if (!select_device(o.kind, c, err)) return nullptr;
#ifdef SHOAL_HAVE_CUDA
  if (c.kind == "cuda") {
    std::unique_ptr<Device> d = cuda::make_device(0, o, err);
    if (d) {
      detail = d->describe();
      return std::shared_ptr<Device>(std::move(d));
    }
    if (o.kind == "cuda") return nullptr;
    detail = "(CUDA failed: " + err + ") ";
    err.clear();
  }
#endif
  auto h = std::shared_ptr<Device>(make_host_device(o));
  detail += h->describe();
  // "auto" that fell back says why: select_device put it in parentheses.
  size_t why = c.detail.find(" (");
  if (c.kind == "host" && why != std::string::npos) detail += c.detail.substr(why);
  return h;
}

}  // namespace dev
}  // namespace shoal

// CUDA backend check: the flow-hash kernel on the GPU gives exactly the CPU
// function's results. Exits 77 (skipped) where no GPU is usable.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "shoal/device/cuda/cuda_api.hh"
#include "shoal/io/traffic.hh"
#include "shoal/kernels/flowhash.hh"

int main() {
  std::string err;
  if (shoal::cuda::device_count(err) == 0) {
    std::printf("skipped: no usable CUDA device (%s)\n", err.c_str());
    return 77;
  }
  std::printf("device: %s\n", shoal::cuda::device_description(0).c_str());
  std::vector<uint8_t> frames;
  std::vector<uint32_t> off, len;
  std::mt19937 rng(42);
  for (int v6 = 0; v6 < 2; ++v6) {
    shoal::io::TrafficSpec s;
    s.flows = 5000;
    s.ipv6 = v6;
    s.proto = shoal::io::Proto::MIX;
    s.imix = true;
    shoal::io::TrafficGen g(s);
    for (uint64_t i = 0; i < 20000; ++i) {
      off.push_back(uint32_t(frames.size()));
      uint32_t l = g.length_of(i);
      frames.resize(frames.size() + l);
      g.build(i, frames.data() + off.back());
      // Every 97th frame is cut short: the kernel must bound its reads too.
      if (i % 97 == 0) l = rng() % 40;
      len.push_back(l);
    }
  }
  std::vector<uint32_t> gpu(off.size());
  if (!shoal::cuda::flow_hash_batch(0, frames.data(), frames.size(), off.data(), len.data(), uint32_t(off.size()),
                                    gpu.data(), err)) {
    std::printf("FAILED: %s\n", err.c_str());
    return 1;
  }
  size_t bad = 0;
  for (size_t i = 0; i < off.size(); ++i)
    if (gpu[i] != shoal::k::flow_hash(frames.data() + off[i], len[i])) ++bad;
  std::printf("%zu frames, %zu mismatches\n", off.size(), bad);
  return bad ? 1 : 0;
}

// The CUDA backend's C++ face (compiled by nvcc when present): discovery,
// the Device implementation (cuda_device.cu), and a batched flow-hash
// kernel built from the same SHOAL_HD function the CPU uses.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "shoal/device/device.hh"

namespace shoal::cuda {

// Number of usable CUDA devices; 0 with `err` set when none (no driver, no GPU).
int device_count(std::string& err);
std::string device_description(int dev);
// Flow hashes of n frames packed in `frames` (frame i at offsets[i], lens[i]
// bytes), computed on device `dev`. False with err on any CUDA failure.
// The CUDA Device for GPU `dev`; nullptr with err when it cannot be used.
std::unique_ptr<dev::Device> make_device(int dev, const dev::DeviceOptions& o, std::string& err);
bool flow_hash_batch(int dev, const uint8_t* frames, uint64_t frames_bytes, const uint32_t* offsets,
                     const uint32_t* lens, uint32_t n, uint32_t* out, std::string& err);

}  // namespace shoal::cuda

// Device selection for --device auto|host|cuda.
#pragma once
#include <string>

namespace shoal {

struct DeviceChoice {
  std::string kind;    // "host" or "cuda"
  std::string detail;  // what was found, or why the host backend was taken
};

// "auto": CUDA when a usable GPU is present, else host. "cuda" fails with err
// when none is usable. "host" always succeeds.
bool select_device(const std::string& want, DeviceChoice& out, std::string& err);
bool cuda_compiled();

}  // namespace shoal

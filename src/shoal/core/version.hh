#pragma once
namespace shoal {
inline constexpr const char* kVersion = "0.1.0";
}

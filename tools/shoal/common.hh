// Shared by the shoal subcommands.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shoal/config/config.hh"
#include "shoal/core/runtime.hh"

namespace shoal::tool {

// Splits NAME=value words off the positional arguments.
bool parse_defines(const std::vector<std::string>& words, config::Defines& defs, std::string& err);
// All read handlers (except structural ones) of every element, drops by
// reason, and the accounting identity.
nlohmann::json stats_json(Runtime& rt);
std::string accounting_line(const Accounting& a, Runtime& rt);
int cmd_bench(int argc, char** argv);
int cmd_bench_ids(int argc, char** argv);
// For benchmark records: a shell command's output, the CPU's name, and the
// pinned host-to-device bandwidth of a CUDA device (0 without one).
std::string sh(const char* cmd);
std::string cpu_model();
double pcie_h2d_bandwidth();

}  // namespace shoal::tool

#include <fmt/format.h>

#include "common.hh"

namespace shoal::tool {
int cmd_bench(int, char**) {
  fmt::print(stderr, "shoal bench: not built yet\n");
  return 2;
}
}  // namespace shoal::tool

// ChangeUID: Click's ChangeUID, which gives up set-user-ID root privileges
// once the router is set up.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class ChangeUID : public Element {
 public:
  void initialize() override {
    if (worker().id() != 0) return;
    if (setegid(getgid()) < 0 || seteuid(getuid()) < 0)
      throw std::runtime_error(fmt::format("giving up privileges: {}", std::strerror(errno)));
  }
};
SHOAL_ELEMENT(ChangeUID, .name = "ChangeUID", .ports = "0/0", .processing = "a/a",
              .summary = "gives up set-user-ID privileges",
              .description =
                  "When the router starts, sets the process's effective group and user IDs to its real ones, "
                  "giving up a set-user-ID root's privileges (elements that need them, such as FromDevice, are "
                  "set up first when they come earlier in the configuration).",
              .example = "FromDevice(eth0) -> ...; ChangeUID();");

}  // namespace shoal

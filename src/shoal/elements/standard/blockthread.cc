// BlockThread: Click's test element that blocks the thread that writes its
// 'block' handler for a while (to test what happens around a stalled worker).
#include <chrono>
#include <thread>

#include "shoal/elements/common.hh"

namespace shoal {

class BlockThread : public Element {
 public:
  void add_handlers() override {
    add_write_handler("block", [](const std::string& v) {
      Duration d;
      if (!parse_duration(trim(v), d)) throw std::runtime_error("expected a time, such as 10ms");
      if (d.ns > 60'000'000'000ull) throw std::runtime_error("at most 60 s");
      std::this_thread::sleep_for(std::chrono::nanoseconds(d.ns));
    });
  }
};
SHOAL_ELEMENT(BlockThread, .name = "BlockThread", .ports = "0/0", .processing = "a/a",
              .summary = "blocks the writing thread for a while (Click's test element)",
              .description =
                  "Writing a time to 'block' stops the thread that writes it (a Script's worker, a control "
                  "connection's) for that long, in real time, at most 60 s: a stalled worker, for tests of what "
                  "goes on around one.",
              .args = {}, .handlers = {{"block", "w", "TIME: block the writing thread for TIME"}},
              .example = "bt :: BlockThread; Script(wait 1s, write bt.block 10ms, loop);");

}  // namespace shoal

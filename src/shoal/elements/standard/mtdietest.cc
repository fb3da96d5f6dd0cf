// MTDieTest: Click's test of stopping a multithreaded router. One task per
// thread (NTHREADS of them, by default one per worker) each asks the driver
// to stop once: a DriverManager that waits for that many stop events then
// stops the run, which must end cleanly however the workers interleave.
#include <fmt/format.h>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class MTDieTest : public Element {
 public:
  void configure(Args& a) override {
    a.read("NTHREADS", nthreads_);
    a.complete();
  }
  void initialize() override {
    add_task();
    set_task_active(true);
  }
  bool run_task() override {
    set_task_active(false);
    // this worker runs the tasks of the threads it stands for: w, w + n, ...
    const int n = worker().nworkers(), w = worker().id();
    const int total = nthreads_ > 0 ? nthreads_ : n;
    for (int t = w; t < total; t += n) worker().runtime().stop_event();
    return true;
  }

 private:
  int nthreads_ = 0;  // 0: one per worker
};
SHOAL_ELEMENT(MTDieTest, .name = "MTDieTest", .ports = "0/0", .processing = "a/a",
              .summary = "asks the driver to stop once from each thread (Click's test element)",
              .description =
                  "Click's test of stopping a multithreaded router: one task per thread (NTHREADS, default one "
                  "per worker) asks the driver to stop once, so a DriverManager waiting for that many stop "
                  "events then stops the run. With more threads than workers, each worker asks for the threads "
                  "it stands for.",
              .args = {{"NTHREADS", "integer", "tasks (default: the number of workers)"}}, .handlers = {},
              .example = "MTDieTest; DriverManager(wait, wait, stop);  // shoal run --threads 2");

}  // namespace shoal

// libFuzzer harness: any byte string as a configuration must give a program
// or diagnostics, never a crash, hang or sanitizer report. It parses,
// expands compounds, validates and configures (configure() opens no files).
#include <cstdint>
#include <string>

#include "shoal/config/config.hh"
#include "shoal/core/runtime.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  shoal::SourceManager::instance().clear();
  shoal::Program prog;
  shoal::Diagnostics diag;
  if (shoal::config::load_string("fuzz.click", text, {{"X", "1"}}, prog, diag)) {
    if (prog.elements.size() > 200) return 0;  // bound the work per input
    shoal::RunOptions opt;
    opt.pool.count = 64;
    shoal::Runtime rt(prog, opt);
    shoal::Diagnostics d2;
    rt.configure(d2);
  }
  return 0;
}

// TimeFilter: passes packets whose timestamps fall in an interval, as Click's.
#include <fmt/format.h>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class TimeFilter : public PacketElement<TimeFilter> {
 public:
  void configure(Args& a) override {
    std::string start, end, start_after, end_after, interval, start_delay, end_delay;
    a.read_p("START", start)
        .read_p("END", end)
        .read("START_AFTER", start_after)
        .read("END_AFTER", end_after)
        .read("START_DELAY", start_delay)
        .read("END_DELAY", end_delay)
        .read("INTERVAL", interval)
        .read("STOP", stop_)
        .read("END_CALL", end_call_);
    a.complete();
    auto ts = [&](const std::string& v, const char* what) {
      uint64_t ns = 0;
      if (!v.empty() && !parse_timestamp(trim(v), ns)) a.fail(fmt::format("{} expects a time, got '{}'", what, v));
      return ns;
    };
    if (!start_delay.empty() || !end_delay.empty()) a.fail("START_DELAY and END_DELAY are not supported");
    if (!start.empty() + !start_after.empty() > 1) a.fail("START and START_AFTER are mutually exclusive");
    if (!end.empty() + !end_after.empty() + !interval.empty() > 1)
      a.fail("END, END_AFTER and INTERVAL are mutually exclusive");
    if (stop_ && !end_call_.empty()) a.fail("END_CALL and STOP are mutually exclusive");
    first_ = ts(start.empty() ? start_after : start, "START");
    first_rel_ = !start_after.empty();
    last_rel_ = !end_after.empty();
    last_interval_ = !interval.empty();
    last_ = end.empty() && end_after.empty() && interval.empty() ? UINT64_MAX
                                                                 : ts(!end.empty()         ? end
                                                                      : !end_after.empty() ? end_after
                                                                                           : interval,
                                                                      "END");
  }
  void initialize() override {
    r_before_ = add_drop_reason("before-start");
    r_after_ = add_drop_reason("after-end");
  }
  void add_handlers() override {
    add_read_handler("start", [this] { return show(first_); });
    add_read_handler("end", [this] { return show(last_); });
    add_read_handler("interval", [this] { return show(last_ - first_); });
    // Extends the end by an interval; from END_CALL, the filter looks again.
    add_write_handler("extend_interval", [this](const std::string& v) {
      uint64_t ns;
      if (!parse_timestamp(trim(v), ns)) throw std::runtime_error("expected a time");
      if (last_ != UINT64_MAX) last_ += ns;
      extended_ = true;
    });
  }
  int process(Packet* p) {
    uint64_t t = p->timestamp_ns();
    if (!ready_) {
      if (first_rel_) first_ += t;
      if (last_rel_ && last_ != UINT64_MAX) last_ += t;
      if (last_interval_ && last_ != UINT64_MAX) last_ += first_;
      ready_ = true;
    }
    if (t < first_) return out1(r_before_);
    if (t >= last_ && (stop_ || !end_call_.empty())) {
      if (stop_) {
        request_stop();
      } else {
        // END_CALL HANDLER ARGS, '$t' being the packet's timestamp; called
        // again while the handler extends the interval past a packet still
        // outside it.
        uint64_t before;
        do {
          before = last_;
          extended_ = false;
          call_end(show(t));
        } while (t >= last_ && extended_ && last_ > before);
      }
    }
    if (t >= last_) return out1(r_after_);
    return 0;
  }

 private:
  int out1(uint16_t r) { return noutputs() > 1 ? 1 : drop_code(r); }
  static std::string show(uint64_t ns) {
    if (ns == UINT64_MAX) return "never";
    return ns % 1000 ? fmt::format("{}.{:09d}", ns / 1000000000, ns % 1000000000)
                     : fmt::format("{}.{:06d}", ns / 1000000000, (ns % 1000000000) / 1000);
  }
  void call_end(const std::string& t) {
    std::string call = end_call_, err;
    for (size_t at; (at = call.find("$t")) != std::string::npos;) call.replace(at, 2, t);
    std::string_view c = trim(call);
    size_t sp = c.find_first_of(" \t");
    std::string path(c.substr(0, sp)), val(sp == std::string_view::npos ? "" : trim(c.substr(sp)));
    if (!worker().runtime().write_handler(path, val, err, worker().id()))
      run_error(fmt::format("END_CALL {}: {}", path, err));
  }

  uint64_t first_ = 0, last_ = UINT64_MAX;
  bool first_rel_ = false, last_rel_ = false, last_interval_ = false, ready_ = false, stop_ = false, extended_ = false;
  std::string end_call_;
  uint16_t r_before_ = 0, r_after_ = 0;
};
SHOAL_ELEMENT(TimeFilter, .name = "TimeFilter", .ports = "1/1-2", .processing = "a/ah",
              .summary = "passes packets whose timestamps fall in an interval",
              .description =
                  "Passes packets with timestamps in [START, END); START_AFTER and END_AFTER are relative to the "
                  "first packet's timestamp, INTERVAL to START. Others go to output 1 if there is one, else are "
                  "dropped ('before-start', 'after-end'). At the first packet past END, STOP true asks the router "
                  "to stop, and END_CALL HANDLER VALUE calls a write handler ('$t' in VALUE is the packet's "
                  "timestamp), again while it extends the interval (extend_interval) past the packet.",
              .args = {{"START", "time", "start of the interval (default 0)"},
                       {"END", "time", "end of the interval (default never)"},
                       {"START_AFTER", "time", "start, after the first packet"},
                       {"END_AFTER", "time", "end, after the first packet"},
                       {"INTERVAL", "time", "end, after START"},
                       {"START_DELAY", "time", "Click's (after initialization): refused"},
                       {"END_DELAY", "time", "Click's (after initialization): refused"},
                       {"STOP", "boolean", "stop the router at the first packet past the end"},
                       {"END_CALL", "handler call", "call a write handler at the first packet past the end"}},
              .handlers = {{"start", "r", "the start"},
                           {"end", "r", "the end"},
                           {"interval", "r", "end minus start"},
                           {"extend_interval", "w", "move the end later by a time"}},
              .example = "FromDump(in.pcap, STOP true) -> TimeFilter(START_AFTER 10, INTERVAL 60) -> ...",
              .own_variables = true);

}  // namespace shoal

// AggregateFilter: sends packets by their aggregate annotation, as Click's.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "shoal/elements/common.hh"

namespace shoal {

class AggregateFilter : public PacketElement<AggregateFilter> {
 public:
  void configure(Args& a) override {
    // Each argument: ACTION AGGREGATES (an output, allow = 0, drop or deny);
    // the first filter that holds an aggregate decides it.
    struct Filter {
      uint32_t lo, hi;
      int action;
    };
    std::vector<Filter> filters;
    for (ArgItem* it : a.rest_positional()) {
      auto words = split_words(it->text);
      if (words.empty()) a.fail(*it, "expected 'ACTION AGGREGATES'");
      int action;
      uint64_t port;
      if (words[0] == "allow")
        action = 0;
      else if (words[0] == "drop" || words[0] == "deny")
        action = -1;
      else if (parse_uint(words[0], port) && port < 1024)
        action = int(port);
      else
        a.fail(*it, fmt::format("bad action '{}' (an output, allow, drop or deny)", words[0]));
      if (action >= noutputs()) a.fail(*it, fmt::format("output {} does not exist", action));
      if (words.size() == 1) a.fail(*it, "expected aggregates after the action");
      for (size_t w = 1; w < words.size(); ++w) {
        std::string_view x = words[w];
        uint64_t lo = 0, hi = UINT32_MAX;
        const size_t dash = x.find('-');
        if (x == "all" || x == "-") {
        } else if (dash == std::string_view::npos
                       ? parse_uint(x, lo) && (hi = lo, true)
                       : parse_uint(x.substr(0, dash), lo) && parse_uint(x.substr(dash + 1), hi)) {
          if (hi > UINT32_MAX || lo > hi) a.fail(*it, fmt::format("bad aggregates '{}'", x));
        } else {
          a.fail(*it, fmt::format("bad aggregates '{}'", x));
        }
        filters.push_back({uint32_t(lo), uint32_t(hi), action});
      }
    }
    a.complete();
    // Disjoint intervals, each with the action of the first filter holding it.
    std::set<uint64_t> cuts{0, uint64_t(UINT32_MAX) + 1};
    for (const Filter& f : filters) cuts.insert(f.lo), cuts.insert(uint64_t(f.hi) + 1);
    for (auto c = cuts.begin(); std::next(c) != cuts.end(); ++c) {
      const uint64_t lo = *c, hi = *std::next(c) - 1;
      int action = -1;  // (no filter: dropped)
      for (const Filter& f : filters)
        if (f.lo <= lo && hi <= f.hi) {
          action = f.action;
          break;
        }
      if (!starts_.empty() && actions_.back() == action) continue;
      starts_.push_back(uint32_t(lo));
      actions_.push_back(action);
    }
  }
  void initialize() override { r_ = add_drop_reason("filtered"); }
  int process(Packet* p) {
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), p->anno().aggregate);
    const int action = actions_[size_t(it - starts_.begin()) - 1];
    return action >= 0 ? action : drop_code(r_);
  }

 private:
  std::vector<uint32_t> starts_;  // sorted; starts_[0] == 0
  std::vector<int> actions_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(AggregateFilter, .name = "AggregateFilter", .ports = "1/-", .processing = "a/a",
              .summary = "sends packets by their aggregate annotation",
              .description =
                  "Click's AggregateFilter: each argument is a filter, 'ACTION AGGREGATES'. A packet goes as the "
                  "first filter listing its aggregate annotation says: ACTION an output number, 'allow' (output 0), "
                  "or 'drop'/'deny'. AGGREGATES are space-separated numbers and ranges ('0-98'); 'all' and '-' are "
                  "every aggregate. A packet no filter lists is dropped ('filtered').",
              .args = {{"ACTION AGGREGATES...", "filters", "the filters, in order"}},
              .example =
                  "FromDump(trace.pcap, STOP true, FORCE_IP true) -> AggregateIPFlows -> "
                  "AggregateFilter(allow 1093 3500 972, 1 10-20, drop all) -> ...;");

}  // namespace shoal

// RoundRobinIPMapper: hands a rewriter's new flows to patterns in turn.
#include <fmt/format.h>

#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class RoundRobinIPMapper : public Element, public RewriteMapper {
 public:
  void configure(Args& a) override {
    auto items = a.rest_positional();
    a.complete();
    if (items.empty()) a.fail("no patterns given");
    std::string errs;
    for (ArgItem* it : items) {
      RewriteInput in;
      in.kind = RewriteInput::Pattern;
      std::string err;
      if (parse_pattern_with_ports(this, it->value.empty() ? it->text : it->value, in, err))
        pats_.push_back(std::move(in));
      else
        errs += (errs.empty() ? "" : "\n") + err;
    }
    if (!errs.empty()) a.fail(errs);
  }
  bool map_flow(RewriterBase& rw, const flow::FlowId& in, flow::FlowId& out, int& fout, int& rout,
                const std::function<bool(const flow::FlowId&)>& taken) override {
    for (size_t i = 0; i < pats_.size(); ++i) {
      RewriteInput& p = pats_[next_];
      next_ = (next_ + 1) % pats_.size();
      if (p.pattern->rewrite(in, out, taken, [&rw](uint32_t top) { return rw.random(top); })) {
        fout = p.fout, rout = p.rout;
        return true;
      }
    }
    return false;
  }
  void check_ports(const RewriterBase& rw) const override {
    for (size_t i = 0; i < pats_.size(); ++i)
      if (pats_[i].fout < 0 || pats_[i].fout >= rw.noutputs() || pats_[i].rout < 0 || pats_[i].rout >= rw.noutputs())
        throw std::runtime_error(fmt::format("output port out of range in {} pattern {}", name(), i));
  }

 private:
  std::vector<RewriteInput> pats_;
  size_t next_ = 0;
};
SHOAL_ELEMENT(RoundRobinIPMapper, .name = "RoundRobinIPMapper", .ports = "0/0", .processing = "a/a",
              .summary = "gives a rewriter's new flows to its patterns in turn (load balancing)",
              .description =
                  "Click's RoundRobinIPMapper: each argument is a pattern with its ports, 'SADDR SPORT DADDR "
                  "DPORT FOUTPUT ROUTPUT'. A rewriter that names this element as an input specification asks it "
                  "for each new flow; the patterns are tried in turn, starting after the one used last, and the "
                  "first that can rewrite the flow makes the mapping, with its output ports. Used for simple load "
                  "balancing over servers (a pattern per server).",
              .args = {{"PATTERN...", "pattern FOUTPUT ROUTPUT", "one per argument"}}, .handlers = {},
              .example =
                  "r :: RoundRobinIPMapper(- - 10.0.0.1 80 0 1, - - 10.0.0.2 80 0 1);\n"
                  "rw :: IPRewriter(r, drop);");

}  // namespace shoal

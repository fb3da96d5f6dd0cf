// IPRewriterPatterns: named rewriting patterns for the IPRewriter family.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class IPRewriterPatterns : public Element {
 public:
  void configure(Args& a) override {
    auto items = a.rest_positional();
    a.complete();
    std::string errs;
    // Every worker's copy reads the same arguments: the first defines.
    bool first = false;
    mark_ = shared_state<int>(this, &first);
    for (ArgItem* it : items) {
      auto w = split_words(it->value.empty() ? it->text : it->value);
      if (w.empty()) continue;
      std::string name(w[0]), err;
      std::vector<std::string> words(w.begin() + 1, w.end());
      auto p = std::make_shared<flow::RewritePattern>();
      if (!flow::RewritePattern::parse(words, *p, err, [](std::string_view s, uint32_t& out) {
            IPv4Addr a;
            return parse_ipv4(s, a) ? (out = a.host(), true) : false;
          })) {
        errs += (errs.empty() ? "" : "\n") + err;
        continue;
      }
      if (first) names_ = define_pattern(this, name, std::move(p), err);
      if (!err.empty()) errs += (errs.empty() ? "" : "\n") + err;
    }
    if (!errs.empty()) a.fail(errs);
  }

 private:
  std::shared_ptr<int> mark_;    // held: the first copy's mark
  std::shared_ptr<void> names_;  // held: the names defined
};
SHOAL_ELEMENT(IPRewriterPatterns, .name = "IPRewriterPatterns", .ports = "0/0", .processing = "a/a",
              .summary = "names rewriting patterns for the IPRewriter family",
              .description =
                  "Click's IPRewriterPatterns: each argument is 'NAME SADDR SPORT DADDR DPORT' (or 'NAME SADDR "
                  "DADDR'), a pattern as the rewriters write it; a rewriter's 'pattern NAME FOUTPUT ROUTPUT' then "
                  "uses it. Rewriters that name the same pattern share it, and with it the turn of a '#' range. "
                  "Configured before the other elements, wherever it appears.",
              .args = {{"PATTERN...", "NAME pattern", "one per argument"}}, .handlers = {},
              .example =
                  "IPRewriterPatterns(nat 1.0.0.1 1024-65535# - -);\n"
                  "rw :: TCPRewriter(pattern nat 0 1, drop);",
              .configure_first = true);

}  // namespace shoal

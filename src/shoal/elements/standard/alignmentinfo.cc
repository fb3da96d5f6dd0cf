// AlignmentInfo: Click's record of the packet data alignment each element's
// inputs can expect (written by click-align). Shoal's packets are aligned
// by its pools, so the information is checked and kept, not needed.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class AlignmentInfo : public Element {
 public:
  void configure(Args& a) override {
    for (auto& it : a.items()) {
      it.used = true;
      auto w = split_words(it.text);
      if (w.empty()) continue;
      if (w.size() % 2 != 1) a.fail(it, "expected 'ELEMENT MODULUS OFFSET [MODULUS OFFSET...]'");
      std::string line(w[0]);
      for (size_t i = 1; i < w.size(); ++i) {
        int64_t v;
        if (!parse_int(w[i], v) || v < 0 || (i % 2 == 1 && v == 0))
          a.fail(it, fmt::format("expected a {}, got '{}'", i % 2 ? "positive modulus" : "offset", w[i]));
        line += ' ' + std::string(w[i]);
      }
      entries_ += line + '\n';
    }
  }
  void add_handlers() override {
    add_read_handler("config", [this] { return entries_; });
  }

 private:
  std::string entries_;
};
SHOAL_ELEMENT(AlignmentInfo, .name = "AlignmentInfo", .ports = "0/0", .processing = "a/a",
              .summary = "records packet data alignment (Click's, for click-align)",
              .description =
                  "Each argument is 'ELEMENT MODULUS OFFSET...': the alignment of the data the element's "
                  "inputs receive, as click-align writes it. Shoal checks the syntax and keeps the "
                  "information (handler config); its packet pools already align packet data.",
              .args = {{"ENTRY...", "ELEMENT MODULUS OFFSET...", "one per element"}},
              .handlers = {{"config", "r", "the entries"}}, .example = "AlignmentInfo(src 4 2, dst 4 2);");

}  // namespace shoal

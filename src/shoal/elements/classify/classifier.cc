// Classifier: Click's offset/value%mask patterns, first match wins.
#include <fmt/format.h>

#include <cctype>

#include "shoal/elements/common.hh"

namespace shoal {

namespace {
int hexv(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

class Classifier : public PacketElement<Classifier> {
 public:
  // One term: bytes [offset, offset+len) masked equal to value (or not).
  struct Term {
    uint32_t offset;
    std::vector<uint8_t> value, mask;
    bool negate;
  };
  struct Pattern {
    std::vector<Term> terms;  // all must hold; empty = matches everything
  };

  void configure(Args& a) override {
    for (auto& it : a.items()) {
      it.used = true;
      pats_.push_back(parse_pattern(a, it));
    }
    if (pats_.empty()) a.fail("at least one pattern is required");
  }
  void initialize() override {
    r_ = add_drop_reason("no-match");
    if (noutputs() != int(pats_.size()))
      throw std::runtime_error(fmt::format("{} patterns but {} outputs", pats_.size(), noutputs()));
    for (auto& p : pats_)
      for (auto& t : p.terms) max_end_ = std::max<uint32_t>(max_end_, t.offset + uint32_t(t.value.size()));
  }
  int process(Packet* p) {
    const uint8_t* d = p->data();
    uint32_t len = p->length();
    for (size_t i = 0; i < pats_.size(); ++i) {
      bool ok = true;
      for (const Term& t : pats_[i].terms) {
        bool eq = t.offset + t.value.size() <= len;
        for (size_t j = 0; eq && j < t.value.size(); ++j) eq = (d[t.offset + j] & t.mask[j]) == t.value[j];
        if (eq == t.negate) {
          ok = false;
          break;
        }
      }
      if (ok) return int(i);
    }
    return drop_code(r_);
  }
  void add_handlers() override {
    add_read_handler("patterns", [this] {
      std::string s;
      for (size_t i = 0; i < pats_.size(); ++i) s += fmt::format("{}\t{}\n", i, texts_[i]);
      return s;
    });
  }

 private:
  Pattern parse_pattern(Args& a, const ArgItem& it) {
    Pattern p;
    std::string_view s = it.text;
    texts_.emplace_back(s);
    if (s == "-") return p;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      if (i >= s.size()) break;
      size_t e = i;
      while (e < s.size() && !std::isspace(static_cast<unsigned char>(s[e]))) ++e;
      std::string_view word = s.substr(i, e - i);
      Term t;
      t.negate = false;
      if (word[0] == '!') t.negate = true, word.remove_prefix(1);
      size_t slash = word.find('/');
      uint64_t off;
      if (slash == std::string_view::npos || !parse_uint(word.substr(0, slash), off) || off > 65535)
        a.fail(it, fmt::format("bad pattern term '{}' (expected OFFSET/VALUE[%MASK])", s.substr(i, e - i)));
      std::string_view val = word.substr(slash + 1), mask;
      size_t pct = val.find('%');
      if (pct != std::string_view::npos) mask = val.substr(pct + 1), val = val.substr(0, pct);
      if (val.empty() || val.size() % 2 || (!mask.empty() && mask.size() != val.size()))
        a.fail(it, fmt::format("bad pattern term '{}': VALUE needs an even number of hex digits and MASK the same",
                               s.substr(i, e - i)));
      t.offset = uint32_t(off);
      for (size_t k = 0; k < val.size(); k += 2) {
        uint8_t v = 0, m = 0;
        for (size_t h = 0; h < 2; ++h) {
          char c = val[k + h];
          int x = hexv(c);
          if (c == '?') x = -2;
          if (x == -1) a.fail(it, fmt::format("bad hex digit '{}' in pattern '{}'", c, s));
          int mk = 0xf;
          if (!mask.empty()) {
            mk = hexv(mask[k + h]);
            if (mk < 0) a.fail(it, fmt::format("bad hex digit '{}' in mask of '{}'", mask[k + h], s));
          }
          if (x == -2) mk = 0, x = 0;
          v = uint8_t(v << 4 | (x & mk));
          m = uint8_t(m << 4 | mk);
        }
        t.value.push_back(v);
        t.mask.push_back(m);
      }
      p.terms.push_back(std::move(t));
      i = e;
    }
    return p;
  }

  std::vector<Pattern> pats_;
  std::vector<std::string> texts_;
  uint32_t max_end_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Classifier, .name = "Classifier", .ports = "1/-", .processing = "h/h",
              .summary = "classifies packets by byte patterns",
              .description = "Each argument is a pattern for the output of the same number: space-separated terms "
                             "OFFSET/VALUE[%MASK] (hex VALUE and MASK of equal length, '?' a wildcard nibble, '!' "
                             "in front negates) that must all hold, or '-' which matches everything. A packet goes "
                             "to the first matching pattern; one matching none is dropped (reason 'no-match'). "
                             "Bytes beyond the packet's end never match.",
              .args = {{"PATTERN...", "pattern", "one per output"}},
              .handlers = {{"patterns", "r", "the patterns by output"}},
              .example = "c :: Classifier(12/0806 20/0001, 12/0800, -);");

}  // namespace shoal

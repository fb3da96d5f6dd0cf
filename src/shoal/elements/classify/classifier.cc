// Classifier: Click's offset/value%mask patterns, first match wins.
#include <fmt/format.h>

#include <cctype>
#include <cstring>

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
    compile();
  }
  int process(Packet* p) {
    const uint8_t* d = p->data();
    const uint32_t len = p->length();
    const Insn* prog = prog_.data();
    int32_t pc = entry_;
    while (pc >= 0) {
      const Insn& in = prog[pc];
      bool m;
      if (len < in.need)
        m = false;  // the term reaches past the packet's end
      else if (in.off + 4 <= len)
        m = (load32(d + in.off) & in.mask) == in.value;
      else
        m = bytes_match(in, d);
      pc = m ? in.yes : in.no;
    }
    int out = -pc - 1;
    return out < int(npat_) ? out : drop_code(r_);
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

  // The compiled form (as Click does): one program of 32-bit masked
  // compares, each with a target for match and for mismatch. A target >= 0
  // is the next instruction; -(k+1) ends with output k (k == number of
  // patterns: drop). Every instruction carries its term's end offset: a
  // shorter packet fails the term. Near the packet's end, where a 4-byte
  // load would pass it, only the instruction's real bytes compare.
  struct Insn {
    uint32_t off, value, mask;  // value and mask in load order
    uint32_t need;              // bytes the packet must have: the term's end
    uint32_t bytes;             // real bytes in this word (1-4)
    int32_t yes, no;
  };
  static uint32_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static bool bytes_match(const Insn& in, const uint8_t* d) {
    for (uint32_t b = 0; b < in.bytes; ++b)
      if ((d[in.off + b] & uint8_t(in.mask >> (8 * b))) != uint8_t(in.value >> (8 * b))) return false;
    return true;
  }
  void compile() {
    npat_ = uint32_t(pats_.size());
    auto words = [](const Term& t) { return uint32_t((t.value.size() + 3) / 4); };
    std::vector<int32_t> start(pats_.size() + 1);
    int32_t n = 0;
    for (size_t p = 0; p < pats_.size(); ++p) {
      start[p] = n;
      for (auto& t : pats_[p].terms) n += int32_t(words(t));
    }
    // Where control goes to try pattern q: its first instruction, or its
    // output directly when it has no terms ("-"), or the drop after the last.
    auto pattern_target = [&](size_t q) -> int32_t {
      if (q == pats_.size()) return -int32_t(npat_) - 1;
      return pats_[q].terms.empty() ? -int32_t(q) - 1 : start[q];
    };
    for (size_t p = 0; p < pats_.size(); ++p) {
      const auto& terms = pats_[p].terms;
      int32_t pc = start[p];
      for (size_t ti = 0; ti < terms.size(); ++ti) {
        const Term& t = terms[ti];
        uint32_t nw = words(t);
        int32_t after_term = pc + int32_t(nw);
        int32_t next_term = ti + 1 < terms.size() ? after_term : -int32_t(p) - 1;
        int32_t next_pat = pattern_target(p + 1);
        for (uint32_t w = 0; w < nw; ++w, ++pc) {
          Insn in{};
          in.off = t.offset + 4 * w;
          in.bytes = std::min<uint32_t>(4, uint32_t(t.value.size()) - 4 * w);
          uint8_t v[4] = {}, m[4] = {};
          for (uint32_t b = 0; b < in.bytes; ++b) v[b] = t.value[4 * w + b], m[b] = t.mask[4 * w + b];
          std::memcpy(&in.value, v, 4);
          std::memcpy(&in.mask, m, 4);
          in.need = t.offset + uint32_t(t.value.size());
          bool last = w + 1 == nw;
          if (!t.negate) {
            in.yes = last ? next_term : pc + 1;
            in.no = next_pat;
          } else {  // the term holds when some word differs
            in.yes = last ? next_pat : pc + 1;
            in.no = next_term;
          }
          prog_.push_back(in);
        }
      }
    }
    entry_ = pattern_target(0);
  }

  std::vector<Pattern> pats_;
  std::vector<std::string> texts_;
  std::vector<Insn> prog_;
  int32_t entry_ = 0;
  uint32_t npat_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Classifier, .name = "Classifier", .ports = "1/-", .processing = "h/h",
              .summary = "classifies packets by byte patterns",
              .description =
                  "Each argument is a pattern for the output of the same number: space-separated terms "
                  "OFFSET/VALUE[%MASK] (hex VALUE and MASK of equal length, '?' a wildcard nibble, '!' "
                  "in front negates) that must all hold, or '-' which matches everything. A packet goes "
                  "to the first matching pattern; one matching none is dropped (reason 'no-match'). "
                  "Bytes beyond the packet's end never match.",
              .args = {{"PATTERN...", "pattern", "one per output"}},
              .handlers = {{"patterns", "r", "the patterns by output"}},
              .example = "c :: Classifier(12/0806 20/0001, 12/0800, -);");

}  // namespace shoal

// Search: FastClick's Search, which strips a packet's head up to (or past) a
// pattern; UnstripAnno puts the stripped bytes back (unstripanno.cc).
#include <algorithm>
#include <string_view>

#include "shoal/elements/common.hh"

namespace shoal {

class Search : public PacketElement<Search> {
 public:
  void configure(Args& a) override {
    DataString pattern;
    std::string anno = "USER16";
    a.read_mp("PATTERN", pattern).read("STRIP_AFTER", strip_after_).read("ANNO", anno).read("SET_ANNO", set_anno_);
    a.complete();
    pattern_.assign(pattern.bytes.begin(), pattern.bytes.end());
    if (pattern_.empty()) a.fail("PATTERN is empty: there is nothing to search for");
    if (anno != "USER16" && anno != "PAINT2")
      a.fail("ANNO: the stripped length goes in USER16 (PAINT2 is its name in FastClick)");
  }
  void initialize() override { r_ = add_drop_reason("not-found"); }
  int process(Packet* p) {
    std::string_view d(reinterpret_cast<const char*>(p->data()), p->length());
    size_t at = d.find(pattern_);
    if (at == std::string_view::npos) return noutputs() > 1 ? 1 : drop_code(r_);
    uint32_t n = uint32_t(at + (strip_after_ ? pattern_.size() : 0));
    p->pull(n);
    if (set_anno_) p->anno().user16 = uint16_t(std::min<uint32_t>(p->anno().user16 + n, 0xffff));
    return 0;
  }

 private:
  std::string pattern_;
  bool strip_after_ = true, set_anno_ = true;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Search, .name = "Search", .ports = "1/1-2", .processing = "a/ah",
              .summary = "strips each packet's head up to a pattern found in it",
              .description =
                  "Finds the first PATTERN in the packet's data and strips everything before it (and the pattern "
                  "too, when STRIP_AFTER, the default); the packet leaves on output 0, with the bytes stripped "
                  "added to its USER16 annotation (unless SET_ANNO is false) so UnstripAnno can put them back. A "
                  "packet without the pattern leaves unchanged on output 1, or is dropped ('not-found').",
              .args = {{"PATTERN", "data string", "what to search for (not empty)"},
                       {"STRIP_AFTER", "boolean", "strip the pattern too (default true)"},
                       {"ANNO", "annotation", "where the stripped length goes: USER16 (FastClick's PAINT2)"},
                       {"SET_ANNO", "boolean", "add the stripped length to the annotation (default true)"}},
              .example =
                  "s :: Search(\"\\r\\n\\r\\n\") -> Print(BODY, CONTENTS ASCII) -> UnstripAnno -> ...;\n"
                  "s[1] -> Print(\"no header end\") -> Discard;");

}  // namespace shoal

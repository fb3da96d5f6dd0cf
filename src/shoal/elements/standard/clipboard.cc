// Clipboard: copies byte ranges from packets on input 0 and pastes them
// into packets on input 1.
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"

namespace shoal {

class Clipboard : public Element {
 public:
  void configure(Args& a) override {
    std::vector<ArgItem*> v = a.rest_positional();
    a.complete();
    for (size_t i = 0; i < v.size(); ++i) {
      std::string_view s = trim(v[i]->text);
      size_t sl = s.find('/');
      uint64_t off, len;
      if (sl == std::string_view::npos || !parse_uint(s.substr(0, sl), off) || !parse_uint(s.substr(sl + 1), len) ||
          off > 65535 || len > 65535)
        a.fail(*v[i], fmt::format("range {}: expected OFFSET/LENGTH", i));
      ranges_.push_back({uint32_t(off), uint32_t(len)});
      min_length_ = std::max(min_length_, uint32_t(off + len));
      size_ += uint32_t(len);
    }
    clip_.assign(size_, 0);
  }
  void push(int port, PacketBatch* b) override {
    apply(port, b);
    output_push(port, b);
  }
  PacketBatch* pull(int port, uint32_t max) override {
    PacketBatch* b = input_pull(port, max);
    if (b) apply(port, b);
    return b;
  }
  void add_handlers() override {
    add_stat_handler("copied", copied_);
    add_stat_handler("pasted", pasted_);
    add_stat_handler("too_short", short_);
  }

 private:
  // Input 0 copies into the clipboard, input 1 pastes it; a packet shorter
  // than the ranges goes on unchanged (counted).
  void apply(int port, PacketBatch* b) {
    b->for_each([&](uint32_t, Packet* p) {
      if (p->length() < min_length_) return short_.add();
      uint8_t* clip = clip_.data();
      for (auto& r : ranges_) {
        if (port == 0)
          std::memcpy(clip, p->data() + r.off, r.len);
        else
          std::memcpy(p->data() + r.off, clip, r.len);
        clip += r.len;
      }
      (port == 0 ? copied_ : pasted_).add();
    });
  }
  struct Range {
    uint32_t off, len;
  };
  std::vector<Range> ranges_;
  std::vector<uint8_t> clip_;
  uint32_t min_length_ = 0, size_ = 0;
  Stat copied_, pasted_, short_;
};
SHOAL_ELEMENT(Clipboard, .name = "Clipboard", .ports = "2/2", .processing = "a/a",
              .summary = "copies bytes from packets on input 0 into packets on input 1",
              .description =
                  "Click's Clipboard: each argument is a range OFFSET/LENGTH. A packet on input 0 has its "
                  "ranges copied into the clipboard and leaves on output 0; a packet on input 1 has the "
                  "clipboard pasted over its ranges and leaves on output 1. A packet shorter than the ranges "
                  "is left as it is (counted in too_short). The clipboard starts zeroed.",
              .args = {{"RANGE...", "OFFSET/LENGTH", "byte ranges"}},
              .handlers = {{"copied", "r", "packets copied from"},
                           {"pasted", "r", "packets pasted into"},
                           {"too_short", "r", "packets too short for the ranges"}},
              .example = "src0 -> [0]c :: Clipboard(0/4, 10/2)[0] -> Discard; src1 -> [1]c[1] -> out;");

}  // namespace shoal

// Dispatcher: sends packets to outputs by predicate bits.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class Dispatcher : public PacketElement<Dispatcher> {
 public:
  void configure(Args& a) override {
    for (ArgItem* it : a.rest_positional()) {
      std::string v(trim(it->text));
      uint64_t bit;
      if (v == "-") {
        masks_.push_back(~0u);
      } else if (parse_uint(v, bit) && bit < 32) {
        masks_.push_back(1u << bit);
      } else {
        a.fail(*it, "a predicate bit 0-31, or '-' for any packet");
      }
    }
    a.complete();
  }
  void initialize() override {
    if (masks_.empty())
      for (int i = 0; i < noutputs() && i < 32; ++i) masks_.push_back(1u << i);
    if (int(masks_.size()) != noutputs())
      throw std::runtime_error(fmt::format("{} arguments but {} outputs", masks_.size(), noutputs()));
    r_ = add_drop_reason("no-predicate");
  }
  int process(Packet* p) {
    uint32_t pr = p->anno().predicates;
    for (size_t i = 0; i < masks_.size(); ++i)
      if (pr & masks_[i]) {
        p->anno().predicates = 0;
        return int(i);
      }
    return drop_code(r_);
  }

 private:
  std::vector<uint32_t> masks_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Dispatcher, .name = "Dispatcher", .ports = "1/-", .processing = "a/a",
              .summary = "sends packets to outputs by predicate bits",
              .description =
                  "Snap's Dispatcher: output i takes the packets whose predicate bit BIT_i is set (the "
                  "first matching argument wins; '-' matches every packet). Without arguments, output i "
                  "takes predicate bit i. The predicate bits are cleared on the way out. Packets with "
                  "no matching bit are dropped ('no-predicate').",
              .args = {{"BIT...", "0-31 or -", "the predicate bit of each output"}},
              .example = "... -> Debatcher -> d :: Dispatcher(0, 1); d[0] -> q0; d[1] -> q1;");

}  // namespace shoal

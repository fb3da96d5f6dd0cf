// Truncate: limits packets to a length.

#include "shoal/elements/common.hh"

namespace shoal {

class Truncate : public PacketElement<Truncate> {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", n_);
    a.complete();
  }
  void process(Packet* p) {
    if (p->length() > n_) {
      p->take(p->length() - n_);
      truncated_.add();
    }
  }
  void add_handlers() override { add_stat_handler("truncated", truncated_); }

 private:
  uint32_t n_ = 0;
  Stat truncated_;
};
SHOAL_ELEMENT(Truncate, .name = "Truncate", .ports = "1/1", .processing = "a/a",
              .summary = "limits packets to a length",
              .description =
                  "Shortens every packet longer than LENGTH bytes to LENGTH bytes (the tail is removed, "
                  "the buffer keeps it as tailroom).",
              .args = {{"LENGTH", "unsigned", "maximum length, mandatory"}},
              .handlers = {{"truncated", "r", "packets shortened"}},
              .example = "FromDump(in.pcap) -> Truncate(96) -> ToDump(headers.pcap);");

}  // namespace shoal

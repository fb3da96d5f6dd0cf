// CheckARPHeader: checks ARP headers (RFC 826), as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class CheckARPHeader : public PacketElement<CheckARPHeader> {
 public:
  void configure(Args& a) override {
    bool details = false;
    a.read_p("OFFSET", off_).read("VERBOSE", verbose_).read("DETAILS", details);
    a.complete();
  }
  void initialize() override {
    r_[0] = add_drop_reason("tiny-packet");
    r_[1] = add_drop_reason("bad-arp-length");
    r_[2] = add_drop_reason("bad-hardware-length");
    r_[3] = add_drop_reason("bad-protocol-length");
  }
  int process(Packet* p) {
    const int bad = check(p);
    if (bad < 0) {
      good_.add();
      return 0;
    }
    if (verbose_ || !warned_) {
      fmt::print(stderr, "{}: ARP header check failed: {}\n", name(), drop_reasons()[r_[bad]].name);
      warned_ = true;
    }
    if (noutputs() > 1) {
      to_output1_[bad].add();
      return 1;
    }
    return drop_code(r_[bad]);
  }
  void add_handlers() override {
    add_stat_handler("count", good_);
    add_read_handler("drop_details", [this] {
      std::string s;
      for (int i = 0; i < 4; ++i)
        s += fmt::format("{}\t{}\n", drop_reasons()[r_[i]].count.get() + to_output1_[i].get(),
                         drop_reasons()[r_[i]].name);
      return s;
    });
  }

 private:
  // -1: good (the network header annotation set on it); else the reason.
  int check(Packet* p) {
    if (uint64_t(off_) + 8 > p->length()) return 0;
    const uint8_t* h = p->data() + off_;
    const uint32_t hln = h[4], pln = h[5], len = 8 + 2 * (hln + pln);
    if (k::load_be16(h) == 1 && hln != 6) return 2;           // Ethernet addresses are 6 bytes
    if (k::load_be16(h + 2) == 0x0800 && pln != 4) return 3;  // IPv4 addresses 4
    if (uint64_t(off_) + len > p->length()) return 1;
    p->set_network_header(off_);
    p->set_transport_header(off_ + len);
    return -1;
  }

  uint32_t off_ = 0;
  bool verbose_ = false, warned_ = false;
  uint16_t r_[4] = {};
  Stat good_, to_output1_[4];
};
SHOAL_ELEMENT(CheckARPHeader, .name = "CheckARPHeader", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks ARP headers",
              .description =
                  "Click's CheckARPHeader: the ARP header at OFFSET must be there (8 bytes), with its addresses "
                  "(2 x (hardware + protocol length)); Ethernet addresses must be 6 bytes long and IPv4 ones 4. A good "
                  "packet gets its network header annotation set on the header and leaves on output 0; a bad one on "
                  "output 1 if there is one, else is dropped (tiny-packet, bad-arp-length, bad-hardware-length, "
                  "bad-protocol-length). The first bad packet is reported on standard error (every one with "
                  "VERBOSE).",
              .args = {{"OFFSET", "unsigned", "where the ARP header starts (default 0)"},
                       {"VERBOSE", "boolean", "report every bad packet (default false)"},
                       {"DETAILS", "boolean", "Click's; drop_details is always kept"}},
              .handlers = {{"count", "r", "good packets"}, {"drop_details", "r", "bad packets by reason"}},
              .example = "c :: Classifier(12/0806, -); c[0] -> CheckARPHeader(14) -> ARPPrint -> ...;");

}  // namespace shoal

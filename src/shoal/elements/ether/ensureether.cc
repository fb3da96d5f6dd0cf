// EnsureEther: gives IP packets an Ethernet header when they lack one, as
// Click's.
#include "shoal/elements/common.hh"
#include "shoal/elements/ether/etherheader.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class EnsureEther : public PacketElement<EnsureEther> {
 public:
  void configure(Args& a) override {
    uint32_t type = 0x0800;
    a.read_p("ETHERTYPE", type).read_p("SRC", src_).read_p("DST", dst_);
    a.complete();
    if (type > 0xffff) a.fail("ETHERTYPE must fit 16 bits");
    type_ = uint16_t(type);
  }
  void initialize() override { r_ = add_drop_reason("no-headroom"); }
  int process(Packet* p) {
    if (!p->has_network_header()) return 0;  // not IP: unchanged
    const int64_t nh = p->network_header_offset();
    if (nh >= 14) return 0;  // it has one
    if (nh != 0) return 0;   // (a header of another length before the IP header: left alone)
    // A header stripped off (the bytes before the data still Ethernet's,
    // the MAC annotation at them): put back.
    if (p->has_mac_header() && p->mac_header_offset() == -14 && p->headroom() >= 14 &&
        k::load_be16(p->data() - 2) == 0x0800) {
      p->push(14);
      return 0;
    }
    return push_ether_header(p, dst_, src_, type_) ? 0 : drop_code(r_);
  }

 private:
  uint16_t type_ = 0x0800, r_ = 0;
  EtherAddr src_, dst_;
};
SHOAL_ELEMENT(EnsureEther, .name = "EnsureEther", .ports = "1/1", .processing = "a/a",
              .summary = "gives IP packets an Ethernet header when they lack one",
              .description =
                  "Click's EnsureEther: packets that are not IP (no network header annotation) and IP packets with "
                  "a header before their IP header pass unchanged. An IP packet whose Ethernet header was stripped "
                  "(still before its data, the MAC annotation on it) gets it back; others get ETHERTYPE, SRC and "
                  "DST prepended. A packet without room for the header is dropped ('no-headroom').",
              .args = {{"ETHERTYPE", "unsigned", "the type of a new header (default 0x0800)"},
                       {"SRC", "Ethernet address", "its source (default 00:00:00:00:00:00)"},
                       {"DST", "Ethernet address", "its destination (default 00:00:00:00:00:00)"}},
              .example = "... -> EnsureEther(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> ToDump(out.pcap);");

}  // namespace shoal

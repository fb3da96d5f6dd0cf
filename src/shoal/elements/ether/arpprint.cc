// ARPPrint: one tcpdump-like line per ARP packet, as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class ARPPrint : public PacketElement<ARPPrint> {
 public:
  void configure(Args& a) override {
    a.read_p("LABEL", label_)
        .read("TIMESTAMP", timestamp_)
        .read("ETHER", ether_)
        .read("ACTIVE", active_)
        .read("OUTFILE", outfile_);
    a.complete();
  }
  void initialize() override { out_.open(outfile_); }
  void cleanup() override { out_.close(); }
  void add_handlers() override {
    add_read_handler("active", [this] { return std::string(active_ ? "true" : "false"); });
    add_write_handler("active", [this](const std::string& v) {
      if (!parse_bool(trim(v), active_)) throw std::runtime_error("active expects a boolean");
    });
  }
  void process(Packet* p) {
    if (active_) out_.write(*this, line(p));
  }

 private:
  std::string line(Packet* p) const {
    std::string s;
    if (!label_.empty()) s += label_ + ": ";
    if (timestamp_) s += click_timestamp(p->timestamp_ns()) + ": ";
    // The ARP header: at the network header annotation, else after an
    // Ethernet header whose type is ARP, else at the start.
    int64_t mac = p->has_mac_header() ? p->mac_header_offset() : 0;
    int64_t off = p->has_network_header()                                         ? p->network_header_offset()
                  : (p->length() >= 14 && k::load_be16(p->data() + 12) == 0x0806) ? 14
                                                                                  : 0;
    const uint8_t* d = p->data();
    if (ether_ && mac >= 0 && mac + 14 <= off && mac + 14 <= int64_t(p->length()))
      s += format_ether_click(d + mac + 6) + " > " + format_ether_click(d + mac) + ": ";
    int64_t nl = off >= 0 ? int64_t(p->length()) - off : -1;
    if (nl < 8) return s + fmt::format("truncated-arp ({})", nl < 0 ? 0 : nl);
    const uint8_t* a = d + off;
    uint16_t hrd = k::load_be16(a), pro = k::load_be16(a + 2), op = k::load_be16(a + 6);
    uint8_t hln = a[4], pln = a[5];
    if ((pro != 0x0800 && pro != 0x1000) || pln != 4 || hln == 0)
      return s + fmt::format("arp-#{} for proto #{} ({}) hardware #{} ({})", op, pro, pln, hrd, hln);
    if (nl < 8 + 2 * int64_t(hln) + 8) return s + fmt::format("truncated-arp ({})", nl);
    const uint8_t *sha = a + 8, *spa = sha + hln, *tha = spa + 4, *tpa = tha + hln;
    // Click prints 6 bytes of a hardware address, so other lengths print as hex.
    auto hw = [&](const uint8_t* h) {
      if (hln == 6) return format_ether_click(h);
      std::string x;
      for (int i = 0; i < hln; ++i) x += fmt::format("{}{:02X}", i ? "-" : "", h[i]);
      return x;
    };
    if (pro == 0x1000) s += "trailer-";
    switch (op) {
      case 1: {
        s += "arp who-has " + format_ipv4(tpa);
        bool zero = true;
        for (int i = 0; i < hln; ++i) zero &= tha[i] == 0;
        if (!zero) s += " (" + hw(tha) + ")";
        s += " tell " + format_ipv4(spa);
        break;
      }
      case 2: s += "arp reply " + format_ipv4(spa) + " is-at " + hw(sha); break;
      case 3: s += "rarp who-is " + hw(tha) + " tell " + hw(sha); break;
      case 4: s += "rarp reply " + hw(tha) + " at " + format_ipv4(tpa); break;
      case 8: s += "invarp who-is " + hw(tha) + " tell " + hw(sha); break;
      case 9: s += "invarp reply " + hw(tha) + " at " + format_ipv4(tpa); break;
      default: s += fmt::format("arp-#{}", op);
    }
    if (hrd != 1) s += fmt::format("hardware #{}", hrd);
    return s;
  }

  std::string label_, outfile_;
  bool timestamp_ = true, ether_ = false, active_ = true;
  LineOutput out_;
};
SHOAL_ELEMENT(ARPPrint, .name = "ARPPrint", .ports = "1/1", .processing = "a/a",
              .summary = "prints one tcpdump-like line per ARP packet",
              .description =
                  "Click's ARPPrint: for each packet a line to standard error (or OUTFILE): LABEL, the "
                  "timestamp, with ETHER the Ethernet source and destination, then 'arp who-has TPA tell SPA', "
                  "'arp reply SPA is-at SHA', the RARP and InARP forms, 'arp-#OP' for other operations, and "
                  "'truncated-arp (LEN)' for a packet too short. The ARP header is at the network header "
                  "annotation, else after an Ethernet header of type ARP.",
              .args = {{"LABEL", "string", "line prefix"},
                       {"TIMESTAMP", "boolean", "print timestamps (default true)"},
                       {"ETHER", "boolean", "print the Ethernet addresses (default false)"},
                       {"ACTIVE", "boolean", "print when true (default true)"},
                       {"OUTFILE", "string", "write lines to this file instead"}},
              .handlers = {{"active", "rw", "whether lines are printed"}},
              .example = "FromDump(in.pcap, STOP true) -> Classifier(12/0806) -> ARPPrint(arp) -> Discard;",
              .forwards_all = true);

}  // namespace shoal

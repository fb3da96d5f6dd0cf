// TruncateIPPayload: cuts IP packets' payload to a length, as Click's.
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class TruncateIPPayload : public PacketElement<TruncateIPPayload> {
 public:
  void configure(Args& a) override {
    a.read_p("LENGTH", n_).read_p("TRANSPORT", transport_).read("EXTRA_LENGTH", extra_length_);
    a.complete();
  }
  void process(Packet* p) {
    uint64_t keep = n_;  // a packet that is not IP: LENGTH bytes at most
    uint32_t hl;
    if (const uint8_t* ip = ip_header(p, &hl)) {
      uint64_t off = uint64_t(p->network_header_offset()) + hl;
      const bool first = (k::load_be16(ip + 6) & 0x1fff) == 0;
      if (transport_ && first && off < p->length()) {
        const uint8_t* t = p->data() + off;
        const uint64_t avail = p->length() - off;
        if (ip[9] == 6)
          off += avail >= 13 && (t[12] >> 4) >= 5 ? uint64_t(t[12] >> 4) * 4 : 20;
        else if (ip[9] == 17)
          off += 8;
        else if (ip[9] == 1 && avail >= 8)  // ICMP's header: timestamps and masks carry theirs in it
          off += t[0] == 13 || t[0] == 14 ? 20 : t[0] == 17 || t[0] == 18 ? 12 : 8;
      }
      keep = off + n_;
    }
    if (p->length() > keep) {
      p->take(uint32_t(p->length() - keep));
      truncated_.add();
    }
  }
  void add_handlers() override { add_stat_handler("truncated", truncated_); }

 private:
  uint32_t n_ = 0;
  bool transport_ = true, extra_length_ = true;
  Stat truncated_;
};
SHOAL_ELEMENT(TruncateIPPayload, .name = "TruncateIPPayload", .ports = "1/1", .processing = "a/a",
              .summary = "limits IP packets' payload to a length",
              .description =
                  "Click's TruncateIPPayload: shortens IP packets (network header annotation) so that their "
                  "payload is at most LENGTH bytes. The payload starts after the TCP, UDP or ICMP header of a "
                  "first fragment, or after the IP header when TRANSPORT is false or for other packets. Packets "
                  "that are not IP are cut to LENGTH bytes. The IP header is left as it was, so its total length "
                  "still says how long the packet was (Shoal keeps no extra-length annotation; EXTRA_LENGTH is "
                  "accepted for Click's configurations).",
              .args = {{"LENGTH", "unsigned", "the payload bytes kept (default 0)"},
                       {"TRANSPORT", "boolean", "the payload starts after the transport header (default true)"},
                       {"EXTRA_LENGTH", "boolean", "Click's extra-length annotation (not kept by Shoal)"}},
              .handlers = {{"truncated", "r", "packets shortened"}},
              .example =
                  "FromDump(in.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> TruncateIPPayload -> "
                  "ToDump(headers.pcap, ENCAP IP);");

}  // namespace shoal

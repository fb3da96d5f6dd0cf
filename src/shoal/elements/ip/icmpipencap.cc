// ICMPIPEncap: puts packets behind ICMP and IPv4 headers, as Click's.
#include <fmt/format.h>

#include "shoal/elements/io/ipsummarydump.hh"
#include "shoal/elements/ip/icmpencap.hh"

namespace shoal {

class ICMPIPEncap : public IcmpEncap<ICMPIPEncap> {
 public:
  void configure(Args& a) override {
    std::string type, code = "0";
    a.read_mp("SRC", src_).read_mp("DST", dst_).read_mp("TYPE", type).read_p("CODE", code).read("IDENTIFIER", id_);
    a.complete();
    int t = -1;
    uint64_t u;
    if (parse_uint(type, u) && u < 256)
      t = int(u);
    else if (!ipsum::icmp_type_number(type, t))
      a.fail(fmt::format("TYPE: '{}' is not an ICMP type", type));
    int c = -1;
    if (parse_uint(code, u) && u < 256) c = int(u);
    for (int i = 0; c < 0 && i < 16; ++i)
      if (const char* n = ipsum::icmp_code_name(t, i); n && code == n) c = i;
    if (c < 0) a.fail(fmt::format("CODE: '{}' is not a code of ICMP type {}", code, t));
    type_ = uint8_t(t), code_ = uint8_t(c);
    hl_ = (t == 13 || t == 14) ? 20 : 8;  // timestamps carry 12 more bytes
  }
};
SHOAL_ELEMENT(ICMPIPEncap, .name = "ICMPIPEncap", .ports = "1/1", .processing = "a/a",
              .summary = "puts packets behind ICMP and IPv4 headers",
              .description =
                  "Pushes an ICMP header of TYPE and CODE (numbers or Click's names: echo, unreachable, port...; "
                  "echo, timestamp and information messages carry IDENTIFIER and a sequence number that counts "
                  "packets) and an IPv4 header from SRC to DST (TTL 255, the IP ID counting too), with both "
                  "checksums; sets the IP header and destination annotations. Packets without the headroom are "
                  "dropped ('no-headroom').",
              .args = {{"SRC", "IPv4 address", "source, mandatory"},
                       {"DST", "IPv4 address", "destination, mandatory"},
                       {"TYPE", "ICMP type", "number or name, mandatory"},
                       {"CODE", "ICMP code", "number or name (default 0)"},
                       {"IDENTIFIER", "unsigned", "echo identifier (default 0)"}},
              .handlers = {}, .example = "InfiniteSource(LIMIT 5) -> ICMPIPEncap(10.0.0.1, 10.0.0.2, echo) -> ...");

}  // namespace shoal

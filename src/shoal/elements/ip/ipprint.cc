// IPPrint: prints one tcpdump-like line per IPv4 packet, as Click's.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/io/ipsummarydump.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class IPPrint : public PacketElement<IPPrint> {
 public:
  void configure(Args& a) override {
    std::string contents = "false", payload = "false";
    int64_t bytes = 1500;
    a.read_p("LABEL", label_)
        .read("CONTENTS", contents)
        .read("PAYLOAD", payload)
        .read("MAXLENGTH", bytes)
        .read("NBYTES", bytes)
        .read("ETHER", ether_)
        .read("ID", id_)
        .read("TIMESTAMP", timestamp_)
        .read("PAINT", paint_)
        .read("TOS", tos_)
        .read("TTL", ttl_)
        .read("SWAP", swap_)
        .read("LENGTH", length_)
        .read("AGGREGATE", aggregate_)
        .read("VLAN", vlan_)
        .read("ACTIVE", active_)
        .read("OUTFILE", outfile_)
        .read("CHANNEL", channel_);
    a.complete();
    bytes_ = bytes < 0 ? UINT32_MAX : uint32_t(std::min<int64_t>(bytes, UINT32_MAX));
    auto mode = [&](const std::string& w, const char* what) {
      bool b;
      if (parse_bool(w, b)) return b ? 1 : 0;
      std::string u;
      for (char c : w) u += char(std::toupper(static_cast<unsigned char>(c)));
      if (u == "NONE" || u == "NO") return 0;
      if (u == "HEX" || u == "YES") return 1;
      if (u == "ASCII") return 2;
      a.fail(fmt::format("{} must be NONE, HEX or ASCII, not '{}'", what, w));
    };
    contents_ = mode(contents, "CONTENTS");
    int pl = mode(payload, "PAYLOAD");
    if (pl && contents_) a.fail("give at most one of PAYLOAD and CONTENTS");
    if (pl) contents_ = pl, payload_ = true;
  }
  void initialize() override { out_.open(outfile_); }
  void cleanup() override { out_.close(); }
  void process(Packet* p) {
    if (active_ && p->has_network_header()) out_.write(*this, line(p));
  }

 private:
  std::string line(Packet* p) {
    std::string s;
    if (!label_.empty()) s += label_ + ": ";
    if (timestamp_) s += click_timestamp(p->timestamp_ns()) + ": ";
    if (aggregate_) s += fmt::format("#{}", p->anno().aggregate);
    if (vlan_) s += fmt::format(" VLAN:{}", p->anno().vlan_tci);
    if (paint_) s += fmt::format("{}{}", aggregate_ ? "." : "paint ", int(p->anno().paint));
    if (aggregate_ || paint_) s += ": ";
    if (ether_ && p->has_mac_header() && p->mac_header_offset() >= 0 &&
        p->mac_header_offset() + 14 <= std::min<int64_t>(p->network_header_offset(), p->length())) {
      const uint8_t* m = p->mac_header();
      s += format_ether_click(m + 6) + " > " + format_ether_click(m) + ": ";
    }
    int64_t off = p->network_header_offset();
    int64_t nl = int64_t(p->length()) - off;
    if (off < 0 || nl < 20) return s + "truncated-ip";
    const uint8_t* ip = p->network_header();
    uint32_t iplen = k::load_be16(ip + 2), ihl = (ip[0] & 0xf) * 4u;
    int64_t payload_len = int64_t(iplen) - ihl;
    int64_t tl = nl - ihl;
    if (tl > payload_len) tl = payload_len;
    uint16_t frag = k::load_be16(ip + 6);
    bool first = (frag & 0x1fff) == 0;
    if (id_) s += fmt::format("id {} ", k::load_be16(ip + 4));
    if (ttl_) s += fmt::format("ttl {} ", ip[8]);
    if (tos_) s += fmt::format("tos {} ", ip[1]);
    if (length_) s += fmt::format("length {} ", iplen);
    std::string src = format_ipv4(ip + 12), dst = format_ipv4(ip + 16);
    const uint8_t* t = ip + ihl;
    switch (ip[9]) {
      case 6: tcp(s, p, ip, t, tl, first, src, dst); break;
      case 17:
        if (tl < 4 || !first) {
          s += src + " > " + dst + (first ? ": truncated-udp" : ": udp");
        } else {
          s += fmt::format("{}.{} > {}.{}: ", src, k::load_be16(t), dst, k::load_be16(t + 2));
          s += tl < 8 ? "truncated-udp" : fmt::format("udp {}", k::load_be16(t + 4));
        }
        break;
      case 1: icmp(s, t, tl, first, src, dst); break;
      default: s += fmt::format("{} > {}: ip-proto-{}", src, dst, ip[9]); break;
    }
    if (frag & 0x3fff)
      s += fmt::format(" (frag {}:{}@{}{})", k::load_be16(ip + 4), payload_len, (frag & 0x1fff) << 3,
                       (frag & 0x2000) ? "+" : "");
    if (contents_) contents(s, p, ip, t, first);
    return s;
  }

  void tcp(std::string& s, Packet* p, const uint8_t* ip, const uint8_t* t, int64_t tl, bool first,
           const std::string& src, const std::string& dst) {
    if (tl < 4 || !first) {
      s += src + " > " + dst + (first ? ": truncated-tcp" : ": tcp");
      return;
    }
    s += fmt::format("{}.{} > {}.{}: ", src, k::load_be16(t), dst, k::load_be16(t + 2));
    if (tl < 14) {
      s += "truncated-tcp";
      return;
    }
    uint32_t iplen = k::load_be16(ip + 2), ihl = (ip[0] & 0xf) * 4u;
    int64_t seqlen = int64_t(iplen) - ihl - (t[12] >> 4) * 4;
    uint8_t f = t[13];
    if (f & 0x02) s += 'S', ++seqlen;
    if (f & 0x01) s += 'F', ++seqlen;
    if (f & 0x04) s += 'R';
    if (f & 0x08) s += 'P';
    if (!(f & 0x0f)) s += '.';
    uint32_t seq = k::load_be32(t + 4);
    s += fmt::format(" {}:{}({},{},{})", seq, uint32_t(seq + uint32_t(seqlen)), seqlen, p->length(), iplen);
    if (f & 0x10) s += fmt::format(" ack {}", k::load_be32(t + 8));
    if (tl < 16) {
      s += "truncated-tcp";
      return;
    }
    s += fmt::format(" win {}", k::load_be16(t + 14));
  }

  void icmp(std::string& s, const uint8_t* t, int64_t tl, bool first, const std::string& src, const std::string& dst) {
    s += src + " > " + dst + ": ";
    if (!first) {
      s += "icmp";
      return;
    }
    if (tl < 2) {
      s += "truncated-icmp";
      return;
    }
    int type = t[0], code = t[1];
    auto sw = [this](uint16_t x) { return swap_ ? x : uint16_t((x >> 8) | (x << 8)); };
    if (type == 0 || type == 8) {
      s += type == 0 ? "icmp echo-reply " : "icmp echo ";
      if (tl < 8)
        s += "truncated-icmp";
      else
        s += fmt::format("({}, {})", sw(k::load_be16(t + 4)), sw(k::load_be16(t + 6)));
      return;
    }
    if (type == 3) {
      const char* cn = ipsum::icmp_code_name(3, code);
      std::string c = cn ? cn : fmt::format("code {}", code);
      if (tl < 8 + 20) {
        s += "icmp unreachable " + c + " truncated-icmp";
        return;
      }
      const uint8_t* e = t + 8;
      uint32_t ehl = (e[0] & 0xf) * 4u;
      s += "icmp " + format_ipv4(e + 16) + " unreachable " + c;
      const char* pn = ipsum::ip_proto_name(e[9]);
      if (code == 2) {
        s += ' ' + (pn ? std::string(pn) : std::to_string(e[9]));
      } else if (code == 3) {
        s += ' ' + (pn ? std::string(pn) : fmt::format("protocol {}", e[9]));
        if (tl - 8 - int64_t(ehl) < 4)
          s += "truncated-icmp";
        else
          s += fmt::format("/{}", k::load_be16(e + ehl + 2));
      } else if (code == 4 && k::load_be16(t + 6)) {
        s += fmt::format(" (mtu {})", k::load_be16(t + 6));
      }
      return;
    }
    s += "icmp ";
    const char* tn = ipsum::icmp_type_name(type);
    s += tn ? std::string(tn) : fmt::format("type {}", type);
    if (const char* cn = ipsum::icmp_code_name(type, code))
      s += std::string(" ") + cn;
    else if (code)
      s += fmt::format(" code {}", code);
  }

  void contents(std::string& s, Packet* p, const uint8_t* ip, const uint8_t* t, bool first) {
    const uint8_t* d = p->data();
    if (payload_) {
      if (first && ip[9] == 6)
        d = t + (t[12] >> 4) * 4;
      else if (first && ip[9] == 17)
        d = t + 8;
      else
        d = t;
    }
    const uint8_t* end = p->data() + p->length();
    uint64_t n = d >= end ? 0 : std::min<uint64_t>(bytes_, uint64_t(end - d));
    for (uint64_t i = 0; i < n; ++i) {
      if (contents_ == 1) {
        s += i % 24 == 0 ? "\n  " : i % 4 == 0 ? " " : "";
        s += fmt::format("{:02x}", d[i]);
      } else {
        s += i % 48 == 0 ? "\n  " : i % 8 == 0 ? " " : "";
        s += (d[i] < 32 || d[i] > 126) ? '.' : char(d[i]);
      }
    }
  }

  std::string label_, outfile_, channel_;
  uint32_t bytes_ = 1500;
  int contents_ = 0;
  bool payload_ = false, ether_ = false, id_ = false, timestamp_ = true, paint_ = false, tos_ = false, ttl_ = false,
       swap_ = true, length_ = false, aggregate_ = false, vlan_ = false, active_ = true;
  LineOutput out_;
};
SHOAL_ELEMENT(IPPrint, .name = "IPPrint", .ports = "1/1", .processing = "a/a",
              .summary = "prints one tcpdump-like line per IPv4 packet",
              .description =
                  "Click's IPPrint: for each packet with an IP header annotation, a line to standard error (or "
                  "OUTFILE): LABEL, the timestamp, then as tcpdump would: 'SRC.SPORT > DST.DPORT: FLAGS "
                  "SEQ:END(LEN,PACKETLEN,IPLEN) ack ACK win WIN' for TCP, 'udp LEN' for UDP, the ICMP type (echo "
                  "identifiers and sequence numbers, unreachable codes), 'ip-proto-N' otherwise, fragment "
                  "information, and truncated-tcp/-udp/-icmp/-ip where the packet is cut short. ID, TTL, TOS, "
                  "LENGTH, PAINT, AGGREGATE, VLAN and ETHER add those fields; CONTENTS HEX or ASCII adds the packet "
                  "bytes (PAYLOAD: the payload's), at most MAXLENGTH.",
              .args = {{"LABEL", "string", "line prefix"},
                       {"CONTENTS", "NONE|HEX|ASCII", "print the packet's bytes (default NONE)"},
                       {"PAYLOAD", "NONE|HEX|ASCII", "print the payload's bytes (default NONE)"},
                       {"MAXLENGTH", "integer", "bytes printed at most (default 1500; also NBYTES)"},
                       {"TIMESTAMP", "boolean", "print timestamps (default true)"},
                       {"ID", "boolean", "print the IP ID"},
                       {"TTL", "boolean", "print the TTL"},
                       {"TOS", "boolean", "print the TOS byte"},
                       {"LENGTH", "boolean", "print the IP length"},
                       {"PAINT", "boolean", "print the paint annotation"},
                       {"AGGREGATE", "boolean", "print the aggregate annotation"},
                       {"VLAN", "boolean", "print the VLAN annotation"},
                       {"ETHER", "boolean", "print the Ethernet addresses"},
                       {"SWAP", "boolean", "echo identifiers in network order (default true)"},
                       {"ACTIVE", "boolean", "print when true"},
                       {"OUTFILE", "string", "write lines to this file instead"},
                       {"CHANNEL", "string", "accepted (Click's)"}},
              .handlers = {}, .example = "FromDump(in.pcap, FORCE_IP true, STOP true) -> IPPrint(in) -> Discard;",
              .forwards_all = true);

}  // namespace shoal

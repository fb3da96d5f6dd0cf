// Small IPv4 elements of Click's router: GetIPAddress, SetIPAddress,
// MarkIPHeader, SetIPChecksum, FixIPSrc, DropBroadcasts, IPEncap, PaintTee,
// ICMPPingResponder.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

namespace {
// The IP header through the network header annotation, when it is there and
// whole; nullptr otherwise.
uint8_t* ip_header(Packet* p, uint32_t* hl_out = nullptr) {
  if (!p->has_network_header()) return nullptr;
  int64_t off = p->network_header_offset();
  if (off < 0 || uint64_t(off) + 20 > p->length()) return nullptr;
  uint8_t* ip = p->network_header();
  uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
  if (hl < 20 || uint64_t(off) + hl > p->length()) return nullptr;
  if (hl_out) *hl_out = hl;
  return ip;
}
void set_ip_checksum(uint8_t* ip, uint32_t hl) {
  ip[10] = ip[11] = 0;
  k::store_be16(ip + 10, k::ip_checksum(ip, hl));
}
}  // namespace

// ---------------------------------------------------------------- GetIPAddress
class GetIPAddress : public PacketElement<GetIPAddress> {
 public:
  void configure(Args& a) override {
    std::string what;
    a.read_mp("OFFSET", what);
    a.complete();
    if (what == "src" || what == "dst") {
      net_ = true;
      off_ = what == "src" ? 12 : 16;
    } else {
      uint64_t v;
      if (!parse_uint(what, v) || v > 65535) a.fail("OFFSET must be a byte offset, 'src' or 'dst'");
      off_ = uint32_t(v);
    }
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    const uint8_t* base = p->data();
    uint64_t end = off_ + 4;
    if (net_) {
      if (!p->has_network_header() || p->network_header_offset() < 0) return drop_code(r_);
      base = p->network_header();
      end += uint64_t(p->network_header_offset());
    }
    if (end > p->length()) return drop_code(r_);
    std::memcpy(p->anno().dst_ip, base + off_, 4);
    return 0;
  }

 private:
  uint32_t off_ = 16;
  bool net_ = false;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(GetIPAddress, .name = "GetIPAddress", .ports = "1/1", .processing = "a/a",
              .summary = "sets the destination IP annotation from packet data",
              .description =
                  "Copies 4 bytes at OFFSET of the packet into the DST_IP annotation. OFFSET 'src' or "
                  "'dst' reads the source or destination of the IP header (network header annotation). "
                  "Packets too short: dropped ('too-short').",
              .args = {{"OFFSET", "unsigned | src | dst", "where the address is (16: an IP header's destination)"}},
              .example = "Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt :: DirectIPLookup(...);");

// ---------------------------------------------------------------- SetIPAddress
class SetIPAddress : public PacketElement<SetIPAddress> {
 public:
  void configure(Args& a) override {
    IPv4Addr x;
    a.read_mp("IPADDR", x);
    a.complete();
    std::memcpy(addr_, x.b.data(), 4);
  }
  void process(Packet* p) { std::memcpy(p->anno().dst_ip, addr_, 4); }

 private:
  uint8_t addr_[4] = {};
};
SHOAL_ELEMENT(SetIPAddress, .name = "SetIPAddress", .ports = "1/1", .processing = "a/a",
              .summary = "sets the destination IP annotation",
              .description = "Sets every packet's DST_IP annotation to IPADDR (the next hop ARPQuerier resolves).",
              .args = {{"IPADDR", "IPv4 address", "the address"}},
              .example = "... -> SetIPAddress(10.0.0.1) -> arpq :: ARPQuerier(10.0.0.2, eth0);");

// ---------------------------------------------------------------- MarkIPHeader
class MarkIPHeader : public PacketElement<MarkIPHeader> {
 public:
  void configure(Args& a) override {
    a.read_p("OFFSET", off_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (uint64_t(off_) + 20 > p->length()) return drop_code(r_);
    uint32_t hl = uint32_t(p->data()[off_] & 0xf) * 4;
    p->set_network_header(off_);
    p->set_transport_header(off_ + hl);
    return 0;
  }

 private:
  uint32_t off_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(MarkIPHeader, .name = "MarkIPHeader", .ports = "1/1", .processing = "a/a",
              .summary = "sets the IP header annotation without checks",
              .description =
                  "Marks the IP header at OFFSET (network header annotation) and the transport header "
                  "after it, without checking the header (use CheckIPHeader for that). Packets shorter "
                  "than OFFSET + 20: dropped ('too-short').",
              .args = {{"OFFSET", "unsigned", "where the IP header starts (default 0)"}},
              .example = "FromDump(in.pcap) -> MarkIPHeader(14) -> IPClassifier(tcp, -);");

// ---------------------------------------------------------------- SetIPChecksum
class SetIPChecksum : public PacketElement<SetIPChecksum> {
 public:
  void initialize() override { r_ = add_drop_reason("no-ip-header"); }
  int process(Packet* p) {
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    if (!ip) return drop_code(r_);
    set_ip_checksum(ip, hl);
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(SetIPChecksum, .name = "SetIPChecksum", .ports = "1/1", .processing = "a/a",
              .summary = "recomputes the IPv4 header checksum",
              .description =
                  "Recomputes the checksum of the IP header (network header annotation). Packets "
                  "without a whole IP header: dropped ('no-ip-header').",
              .example = "... -> MarkIPHeader -> SetIPChecksum -> ...;");

// ---------------------------------------------------------------- FixIPSrc
class FixIPSrc : public PacketElement<FixIPSrc> {
 public:
  void configure(Args& a) override {
    IPv4Addr x;
    a.read_mp("IPADDR", x);
    a.complete();
    std::memcpy(addr_, x.b.data(), 4);
  }
  void process(Packet* p) {
    if (!(p->anno().flags & Anno::kFixIPSrc)) return;
    p->anno().flags &= uint8_t(~Anno::kFixIPSrc);
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    if (!ip) return;
    std::memcpy(ip + 12, addr_, 4);
    set_ip_checksum(ip, hl);
    fixed_.add();
  }
  void add_handlers() override { add_stat_handler("fixed", fixed_); }

 private:
  uint8_t addr_[4] = {};
  Stat fixed_;
};
SHOAL_ELEMENT(FixIPSrc, .name = "FixIPSrc", .ports = "1/1", .processing = "a/a",
              .summary = "sets the source of locally made IP packets",
              .description =
                  "For packets carrying the fix-source annotation (set by ICMPError), sets the IP "
                  "source to IPADDR (the outgoing interface's address), recomputes the checksum and "
                  "clears the annotation; other packets pass unchanged.",
              .args = {{"IPADDR", "IPv4 address", "the outgoing interface's address"}},
              .handlers = {{"fixed", "r", "packets rewritten"}},
              .example = "... -> FixIPSrc(10.0.1.1) -> DecIPTTL -> ...;");

// ---------------------------------------------------------------- DropBroadcasts
class DropBroadcasts : public PacketElement<DropBroadcasts> {
 public:
  void initialize() override { r_ = add_drop_reason("link-broadcast"); }
  int process(Packet* p) {
    uint8_t t = p->anno().packet_type;
    bool bcast = t == Anno::kBroadcast || t == Anno::kMulticast;
    if (!bcast && p->has_mac_header()) bcast = (p->mac_header()[0] & 1) != 0;
    return bcast ? drop_code(r_) : 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(DropBroadcasts, .name = "DropBroadcasts", .ports = "1/1", .processing = "a/a",
              .summary = "drops packets that arrived as link-level broadcasts",
              .description =
                  "Drops ('link-broadcast') packets that arrived as link-level broadcast or multicast: "
                  "the packet type annotation (set by FromDevice) says so, or the Ethernet header the "
                  "MAC annotation points at has a group destination. A router must not forward them "
                  "(RFC 1812 5.3.4).",
              .example = "rt[1] -> DropBroadcasts -> DecIPTTL -> ...;");

// ---------------------------------------------------------------- IPEncap
class IPEncap : public PacketElement<IPEncap> {
 public:
  void configure(Args& a) override {
    std::string proto;
    IPv4Addr src, dst;
    bool df = false;
    a.read_mp("PROTO", proto).read_mp("SRC", src).read_mp("DST", dst);
    a.read("TOS", tos_).read("TTL", ttl_).read("DF", df);
    a.complete();
    uint64_t pr;
    if (proto == "tcp")
      pr = 6;
    else if (proto == "udp")
      pr = 17;
    else if (proto == "icmp")
      pr = 1;
    else if (proto == "ipip" || proto == "ipv4")
      pr = 4;
    else if (proto == "gre")
      pr = 47;
    else if (proto == "esp")
      pr = 50;
    else if (proto == "ah")
      pr = 51;
    else if (!parse_uint(proto, pr) || pr > 255)
      a.fail(fmt::format("PROTO '{}' is not a protocol", proto));
    proto_ = uint8_t(pr);
    std::memcpy(src_, src.b.data(), 4);
    std::memcpy(dst_, dst.b.data(), 4);
    df_ = df;
  }
  void initialize() override {
    r_room_ = add_drop_reason("no-headroom");
    r_big_ = add_drop_reason("too-long");
  }
  int process(Packet* p) {
    if (p->length() + 20 > 65535) return drop_code(r_big_);
    uint8_t* ip = p->push(20);
    if (!ip) return drop_code(r_room_);
    ip[0] = 0x45;
    ip[1] = tos_;
    k::store_be16(ip + 2, uint16_t(p->length()));
    k::store_be16(ip + 4, id_++);
    k::store_be16(ip + 6, df_ ? 0x4000 : 0);
    ip[8] = ttl_;
    ip[9] = proto_;
    std::memcpy(ip + 12, src_, 4);
    std::memcpy(ip + 16, dst_, 4);
    set_ip_checksum(ip, 20);
    p->set_network_header(0);
    p->set_transport_header(20);
    std::memcpy(p->anno().dst_ip, dst_, 4);
    return 0;
  }

 private:
  uint8_t proto_ = 0, tos_ = 0, ttl_ = 250, src_[4] = {}, dst_[4] = {};
  bool df_ = false;
  uint16_t id_ = 0;
  uint16_t r_room_ = 0, r_big_ = 0;
};
SHOAL_ELEMENT(IPEncap, .name = "IPEncap", .ports = "1/1", .processing = "a/a", .summary = "prepends an IPv4 header",
              .description =
                  "Pushes a 20-byte IP header (no options) with protocol PROTO, source SRC and "
                  "destination DST, a fresh IP ID per packet, and sets the network header and DST_IP "
                  "annotations. Packets without room: dropped ('no-headroom').",
              .args = {{"PROTO", "protocol", "number or name (tcp, udp, icmp, ipip, gre, esp, ah)"},
                       {"SRC", "IPv4 address", "source"},
                       {"DST", "IPv4 address", "destination"},
                       {"TOS", "unsigned", "type of service (default 0)"},
                       {"TTL", "unsigned", "time to live (default 250)"},
                       {"DF", "boolean", "set don't-fragment (default false)"}},
              .example = "InfiniteSource(LENGTH 64) -> IPEncap(udp, 10.0.0.1, 10.0.0.2) -> ...;");

// ---------------------------------------------------------------- PaintTee
class PaintTee : public Element {
 public:
  void configure(Args& a) override {
    uint32_t c = 0;
    a.read_mp("COLOR", c);
    a.complete();
    if (c > 255) a.fail("COLOR must be 0 to 255");
    color_ = uint8_t(c);
  }
  void initialize() override { r_ = add_drop_reason("pool-exhausted"); }
  void push(int, PacketBatch* b) override {
    PacketBatch* c = nullptr;
    b->for_each([&](uint32_t, Packet* p) {
      if (p->anno().paint != color_) return;
      Packet* q = worker().pool().clone(p);
      if (!q) return count_lost(r_);
      created();
      if (!c) c = new_batch();
      c->append(q);
    });
    output_push(0, b);
    if (c) output_push(1, c);
  }

 private:
  uint8_t color_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(PaintTee, .name = "PaintTee", .ports = "1/2", .processing = "h/h",
              .summary = "copies packets of one paint color to output 1",
              .description =
                  "Every packet leaves on output 0; those whose PAINT annotation is COLOR are also "
                  "copied to output 1. Routers use it to send ICMP redirects for packets that leave "
                  "by the interface they came in on.",
              .args = {{"COLOR", "unsigned", "the paint color"}},
              .example = "rt[1] -> pt :: PaintTee(1) -> ...; pt[1] -> ICMPError(10.0.0.1, redirect, host) -> rt;");

// ---------------------------------------------------------------- ICMPPingResponder
class ICMPPingResponder : public PacketElement<ICMPPingResponder> {
 public:
  void initialize() override { r_ = add_drop_reason("not-echo-request"); }
  int process(Packet* p) {
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    int other = noutputs() > 1 ? 1 : drop_code(r_);
    if (!ip || ip[9] != 1 || (k::load_be16(ip + 6) & 0x3fff) != 0) return other;
    uint32_t tot = k::load_be16(ip + 2);
    int64_t off = p->network_header_offset();
    if (tot < hl + 8 || uint64_t(off) + tot > p->length()) return other;
    uint8_t* icmp = ip + hl;
    if (icmp[0] != 8 || icmp[1] != 0) return other;
    uint8_t tmp[4];
    std::memcpy(tmp, ip + 12, 4);
    std::memcpy(ip + 12, ip + 16, 4);
    std::memcpy(ip + 16, tmp, 4);
    ip[8] = 255;
    set_ip_checksum(ip, hl);
    icmp[0] = 0;  // echo reply: only the type changes
    k::store_be16(icmp + 2, k::csum_update16(k::load_be16(icmp + 2), 0x0800, 0x0000));
    std::memcpy(p->anno().dst_ip, ip + 16, 4);
    replies_.add();
    return 0;
  }
  void add_handlers() override { add_stat_handler("replies", replies_); }

 private:
  uint16_t r_ = 0;
  Stat replies_;
};
SHOAL_ELEMENT(ICMPPingResponder, .name = "ICMPPingResponder", .ports = "1/1-2", .processing = "a/ah",
              .summary = "answers ICMP echo requests",
              .description =
                  "Turns ICMP echo requests (network header annotation) into echo replies in place: "
                  "addresses swapped, TTL 255, type 0, checksums updated; DST_IP becomes the new "
                  "destination. Other packets leave on output 1 if it exists, else are dropped "
                  "('not-echo-request').",
              .handlers = {{"replies", "r", "replies made"}},
              .example = "rt[0] -> ping :: ICMPPingResponder -> rt; ping[1] -> Discard;");

}  // namespace shoal

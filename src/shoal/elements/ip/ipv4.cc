// CheckIPHeader and DecIPTTL.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

// ---------------------------------------------------------------- CheckIPHeader
class CheckIPHeader : public PacketElement<CheckIPHeader> {
 public:
  void configure(Args& a) override {
    std::string badsrc, ifaces;
    a.read_p("OFFSET", off_).read_p("BADSRC", badsrc).read("CHECKSUM", checksum_).read("VERBOSE", verbose_);
    a.read("INTERFACES", ifaces);
    a.complete();
    // INTERFACES ADDR/LEN...: their networks' broadcast and zero addresses are bad sources.
    for (size_t i = 0; i < ifaces.size();) {
      size_t e = ifaces.find(' ', i);
      if (e == std::string::npos) e = ifaces.size();
      std::string one = ifaces.substr(i, e - i);
      i = e + 1;
      if (one.empty()) continue;
      size_t sl = one.find('/');
      IPv4Addr x;
      uint64_t len = 32;
      if (sl == std::string::npos || !parse_ipv4(one.substr(0, sl), x) || !parse_uint(one.substr(sl + 1), len) ||
          len > 32)
        a.fail(fmt::format("INTERFACES: '{}' is not ADDR/LEN", one));
      uint32_t mask = len ? ~uint32_t(0) << (32 - len) : 0;
      if (len < 31) {
        badsrc_.push_back((x.host() & mask) | ~mask);
        badsrc_.push_back(x.host() & mask);
      }
    }
    for (auto& w : split_args(badsrc, {}, false)) {
      for (size_t i = 0; i < w.text.size();) {  // space-separated addresses
        size_t e = w.text.find(' ', i);
        if (e == std::string::npos) e = w.text.size();
        std::string one = w.text.substr(i, e - i);
        i = e + 1;
        if (one.empty()) continue;
        IPv4Addr x;
        if (!parse_ipv4(one, x)) a.fail(fmt::format("BADSRC: bad address '{}'", one));
        badsrc_.push_back(x.host());
      }
    }
  }
  void initialize() override {
    // Click's reasons, in its order.
    r_[0] = add_drop_reason("tiny-packet");
    r_[1] = add_drop_reason("bad-ip-version");
    r_[2] = add_drop_reason("bad-ip-header-length");
    r_[3] = add_drop_reason("bad-ip-length");
    r_[4] = add_drop_reason("bad-ip-checksum");
    r_[5] = add_drop_reason("bad-source-address");
    r_[6] = add_drop_reason("bad-ip-options");
  }
  int process(Packet* p) {
    int bad = check(p);
    if (bad < 0) return 0;
    if (noutputs() > 1) {
      to_output1_[bad].add();
      return 1;
    }
    return drop_code(r_[bad]);
  }
  void add_handlers() override {
    add_read_handler("drop_details", [this] {
      std::string s;
      for (int i = 0; i < 7; ++i)
        s += fmt::format("{}\t{}\n", drop_reasons()[r_[i]].count.get() + to_output1_[i].get(), drop_reasons()[r_[i]].name);
      return s;
    });
  }

 private:
  // -1: good; else the reason index. Sets the network header and DST_IP, and
  // trims link-level padding beyond the IP total length, as Click does.
  int check(Packet* p) {
    if (p->length() < off_ + 20) return 0;
    const uint8_t* ip = p->data() + off_;
    if ((ip[0] >> 4) != 4) return 1;
    uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
    if (hl < 20 || off_ + hl > p->length()) return 2;
    uint32_t len = k::load_be16(ip + 2);
    if (len < hl || off_ + len > p->length()) return 3;
    if (checksum_ && k::ip_checksum(ip, hl) != 0) return 4;
    uint32_t src = k::load_be32(ip + 12);
    // Broadcast and multicast sources are never valid (RFC 1812 5.3.7).
    if (src == 0xffffffffu || (src >> 28) == 0xe) return 5;
    for (uint32_t b : badsrc_)
      if (src == b) return 5;
    // Options: each must fit the header (types 0 and 1 are one byte).
    for (uint32_t o = 20; o < hl;) {
      uint8_t t = ip[o];
      if (t == 0) break;
      if (t == 1) {
        ++o;
        continue;
      }
      if (o + 1 >= hl || ip[o + 1] < 2 || o + ip[o + 1] > hl) return 6;
      o += ip[o + 1];
    }
    if (off_ + len < p->length()) p->take(p->length() - off_ - len);
    p->set_network_header(off_);
    p->set_transport_header(off_ + hl);
    std::memcpy(p->anno().dst_ip, ip + 16, 4);
    return -1;
  }

  uint32_t off_ = 0;
  bool checksum_ = true, verbose_ = false;
  std::vector<uint32_t> badsrc_;
  uint16_t r_[7] = {};
  Stat to_output1_[7];  // bad packets sent to output 1, by reason
};
SHOAL_ELEMENT(CheckIPHeader, .name = "CheckIPHeader", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks IPv4 headers",
              .description =
                  "Checks the IPv4 header at OFFSET: length at least 20, version 4, header length within the "
                  "packet, total length within the packet and not below the header, checksum (unless CHECKSUM "
                  "false), source not broadcast, multicast or in BADSRC, options within the header. Good packets "
                  "get the network header annotation and DST_IP set, lose link padding beyond the IP length, and "
                  "leave on output 0. Bad ones leave on output 1 if it exists, else are dropped with the reason "
                  "(tiny-packet, bad-ip-version, bad-ip-header-length, bad-ip-length, bad-ip-checksum, "
                  "bad-source-address, bad-ip-options).",
              .args = {{"OFFSET", "unsigned", "where the IP header starts (default 0; 14 after Ethernet)"},
                       {"BADSRC", "addresses", "more source addresses to reject"},
                       {"INTERFACES", "ADDR/LEN...", "the router's networks: their broadcast and zero "
                                                     "addresses are bad sources"},
                       {"CHECKSUM", "boolean", "verify the checksum (default true)"},
                       {"VERBOSE", "boolean", "accepted for Click compatibility"}},
              .handlers = {{"drop_details", "r", "bad packets by reason"}},
              .example = "FromDump(in.pcap) -> CheckIPHeader(14) -> ...;");

// ---------------------------------------------------------------- DecIPTTL
class DecIPTTL : public PacketElement<DecIPTTL> {
 public:
  void configure(Args& a) override {
    a.read("MULTICAST", multicast_);
    a.complete();
  }
  void initialize() override {
    r_expired_ = add_drop_reason("ttl-expired");
    r_nohdr_ = add_drop_reason("no-ip-header");
  }
  int process(Packet* p) {
    if (!p->has_network_header() || p->network_header_offset() < 0 ||
        uint64_t(p->network_header_offset()) + 20 > p->length())
      return drop_code(r_nohdr_);
    uint8_t* ip = p->network_header();
    if (!multicast_ && (ip[16] >> 4) == 0xe) return 0;
    if (ip[8] <= 1) {
      expired_.add();
      return noutputs() > 1 ? 1 : drop_code(r_expired_);
    }
    uint16_t old = k::load_be16(ip + 8);
    --ip[8];
    k::store_be16(ip + 10, k::csum_update16(k::load_be16(ip + 10), old, k::load_be16(ip + 8)));
    return 0;
  }
  void add_handlers() override { add_stat_handler("expired", expired_); }

 private:
  bool multicast_ = true;
  uint16_t r_expired_ = 0, r_nohdr_ = 0;
  Stat expired_;
};
SHOAL_ELEMENT(DecIPTTL, .name = "DecIPTTL", .ports = "1/1-2", .processing = "a/ah",
              .summary = "decrements the IPv4 TTL",
              .description = "Decrements the TTL of the packet's IP header (found through the network header "
                             "annotation) and updates the checksum incrementally (RFC 1624). Packets whose TTL is "
                             "1 or 0 leave on output 1 if it exists (for ICMPError), else are dropped (reason "
                             "'ttl-expired'). With MULTICAST false, multicast packets pass unchanged.",
              .args = {{"MULTICAST", "boolean", "decrement multicast packets too (default true)"}},
              .handlers = {{"expired", "r", "packets whose TTL expired"}},
              .example = "CheckIPHeader(14) -> rt :: DirectIPLookup(...); rt[0] -> dt :: DecIPTTL -> out; dt[1] -> ICMPError(...);");

}  // namespace shoal

// IPv6 neighbour discovery (RFC 4861) for live use: IP6NDSolicitor resolves
// next hops and adds Ethernet headers (the ARPQuerier of IPv6);
// IP6NDAdvertiser answers solicitations for the router's addresses.
#include <fmt/format.h>

#include <map>

#include "shoal/elements/common.hh"
#include "shoal/elements/ether/resolver.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

namespace {
constexpr uint32_t kNdLen = 14 + 40 + 32;  // Ethernet, IPv6, NS/NA with one link-layer option

using Addr6 = std::array<uint8_t, 16>;

// An ICMPv6 ND message of `type` in an Ethernet frame, validated as RFC 4861
// 7.1 asks (hop limit 255, code 0, length); the ICMPv6 header or nullptr.
const uint8_t* nd_message(const uint8_t* d, uint32_t len, uint8_t type) {
  if (len < 14 + 40 + 24 || k::load_be16(d + 12) != 0x86dd) return nullptr;
  const uint8_t* ip = d + 14;
  if ((ip[0] >> 4) != 6 || ip[6] != 58 || ip[7] != 255) return nullptr;
  uint32_t plen = k::load_be16(ip + 4);
  if (plen < 24 || 54 + plen > len) return nullptr;
  const uint8_t* ic = ip + 40;
  if (ic[0] != type || ic[1] != 0) return nullptr;
  uint32_t sum = k::ipv6_pseudo_sum(ip + 8, ip + 24, 58, plen);
  if (k::csum_fold(k::csum_partial(ic, plen, sum)) != 0) return nullptr;
  return ic;
}
// The link-layer address option of `opt_type` in an ND message, or nullptr.
const uint8_t* nd_option(const uint8_t* ic, uint32_t plen, uint8_t opt_type) {
  for (uint32_t o = 24; o + 8 <= plen;) {
    uint32_t l = uint32_t(ic[o + 1]) * 8;
    if (l == 0 || o + l > plen) return nullptr;
    if (ic[o] == opt_type && l >= 8) return ic + o + 2;
    o += l;
  }
  return nullptr;
}
// Fills an ND message: Ethernet, IPv6 (hop limit 255), ICMPv6 type with
// `flags`, target, and one link-layer option of opt_type carrying `mac`.
void build_nd(uint8_t* d, const uint8_t* eth_dst, const uint8_t* eth_src, const uint8_t* ip_src, const uint8_t* ip_dst,
              uint8_t type, uint8_t flags, const uint8_t* target, uint8_t opt_type) {
  std::memcpy(d, eth_dst, 6);
  std::memcpy(d + 6, eth_src, 6);
  k::store_be16(d + 12, 0x86dd);
  uint8_t* ip = d + 14;
  std::memset(ip, 0, 40);
  ip[0] = 0x60;
  k::store_be16(ip + 4, 32);
  ip[6] = 58;
  ip[7] = 255;
  std::memcpy(ip + 8, ip_src, 16);
  std::memcpy(ip + 24, ip_dst, 16);
  uint8_t* ic = ip + 40;
  std::memset(ic, 0, 32);
  ic[0] = type;
  ic[4] = flags;
  std::memcpy(ic + 8, target, 16);
  ic[24] = opt_type;
  ic[25] = 1;
  std::memcpy(ic + 26, eth_src, 6);
  uint32_t sum = k::ipv6_pseudo_sum(ip + 8, ip + 24, 58, 32);
  k::store_be16(ic + 2, k::csum_fold(k::csum_partial(ic, 32, sum)));
}
}  // namespace

// ---------------------------------------------------------------- IP6NDAdvertiser
class IP6NDAdvertiser : public PacketElement<IP6NDAdvertiser> {
 public:
  void configure(Args& a) override {
    for (ArgItem* it : a.rest_positional()) {
      std::vector<std::string_view> w = split_words(it->text);
      EtherAddr eth;
      if (w.size() < 2 || !parse_ether(w.back(), eth)) a.fail(*it, "expected 'ADDR6[/LEN]... ETH'");
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        IPv6Addr x;
        std::string_view one = w[i].substr(0, w[i].find('/'));
        if (!parse_ipv6(one, x)) a.fail(*it, fmt::format("bad IPv6 address '{}'", one));
        entries_.push_back({x.b, eth.b});
      }
    }
    a.complete();
    if (entries_.empty()) a.fail("at least one 'ADDR6 ETH' entry is required");
  }
  void initialize() override { r_ = add_drop_reason("not-for-us"); }
  int process(Packet* p) {
    int other = noutputs() > 1 ? 1 : drop_code(r_);
    const uint8_t* d = p->data();
    const uint8_t* ic = nd_message(d, p->length(), 135);
    if (!ic) return other;
    const Entry* e = nullptr;
    for (auto& x : entries_)
      if (std::memcmp(x.ip.data(), ic + 8, 16) == 0) e = &x;
    if (!e) return other;
    const uint8_t* ip = d + 14;
    uint32_t plen = k::load_be16(ip + 4);
    uint8_t asker_mac[6], asker_ip[16];
    const uint8_t* sll = nd_option(ic, plen, 1);
    std::memcpy(asker_mac, sll ? sll : d + 6, 6);
    std::memcpy(asker_ip, ip + 8, 16);
    bool dad = true;
    for (int i = 0; i < 16; ++i) dad &= asker_ip[i] == 0;
    static const uint8_t all_nodes[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
    // The solicitation becomes the advertisement in place.
    if (!p->set_length(kNdLen)) return other;
    uint8_t* w = p->data();
    build_nd(w, dad ? all_nodes_mac : asker_mac, e->eth.data(), e->ip.data(), dad ? all_nodes : asker_ip, 136,
             uint8_t(0x80 | (dad ? 0 : 0x40) | 0x20), e->ip.data(), 2);
    p->set_mac_header(0);
    p->set_network_header(14);
    replies_.add();
    return 0;
  }
  void add_handlers() override { add_stat_handler("replies", replies_); }

 private:
  struct Entry {
    Addr6 ip;
    std::array<uint8_t, 6> eth;
  };
  std::vector<Entry> entries_;
  uint16_t r_ = 0;
  Stat replies_;
};
SHOAL_ELEMENT(IP6NDAdvertiser, .name = "IP6NDAdvertiser", .ports = "1/1-2", .processing = "a/ah",
              .summary = "answers IPv6 neighbour solicitations",
              .description =
                  "Each argument is 'ADDR6[/LEN] [ADDR6...] ETH'. A valid neighbour solicitation (hop "
                  "limit 255, checksum) for one of the addresses becomes, in place, a solicited "
                  "advertisement with the router and override flags and ETH as target link-layer "
                  "address; a duplicate address detection probe (unspecified source) gets an "
                  "unsolicited one to all nodes. Other packets leave on output 1 if it exists, else are "
                  "dropped ('not-for-us').",
              .args = {{"ENTRY...", "ADDR6... ETH", "addresses answered with ETH"}},
              .handlers = {{"replies", "r", "advertisements sent"}},
              .example = "c[1] -> IP6NDAdvertiser(fd00:1::1/64 02:00:00:00:00:01) -> out;");

// ---------------------------------------------------------------- IP6NDSolicitor
class IP6NDSolicitor : public NeighborResolver<IP6NDSolicitor, Addr6> {
 public:
  static constexpr uint16_t kEtherType = 0x86dd;
  void configure(Args& a) override {
    IPv6Addr ip;
    EtherAddr eth;
    a.read_mp("IP6", ip).read_mp("ETH", eth);
    read_resolver_args(a, 30'000'000'000ull);
    a.complete();
    ip_ = ip.b;
    eth_ = eth.b;
  }
  void initialize() override { init_resolver("nd"); }

  bool key_of(Packet* p, Addr6& dst) const {
    std::memcpy(dst.data(), p->anno().dst_ip6, 16);
    for (uint8_t x : dst)
      if (x) return true;
    return false;
  }
  // Multicast: 33:33 and the low 32 bits (RFC 2464 7), no solicitation.
  bool fixed_mac(const Addr6& dst, uint8_t* mac) const {
    if (dst[0] != 0xff) return false;
    const uint8_t m[6] = {0x33, 0x33, dst[12], dst[13], dst[14], dst[15]};
    std::memcpy(mac, m, 6);
    return true;
  }
  // A neighbour solicitation to the target's solicited-node group.
  Packet* make_query(const Addr6& t) {
    Packet* q = worker().pool().alloc(kNdLen);
    if (!q) return nullptr;
    uint8_t group[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, t[13], t[14], t[15]};
    uint8_t mac[6] = {0x33, 0x33, 0xff, t[13], t[14], t[15]};
    build_nd(q->data(), mac, eth_.data(), ip_.data(), group, 135, 0, t.data(), 1);
    return q;
  }
  void parse_answers(PacketBatch* b, std::vector<std::pair<Addr6, Mac>>& got) {
    b->for_each([&](uint32_t, Packet* p) {
      const uint8_t* d = p->data();
      const uint8_t* ic = nd_message(d, p->length(), 136);
      if (!ic) return drop(p, r_bad_);
      const uint8_t* tll = nd_option(ic, k::load_be16(d + 18), 2);
      Addr6 t;
      std::memcpy(t.data(), ic + 8, 16);
      Mac m;
      std::memcpy(m.data(), tll ? tll : d + 6, 6);
      if (!(m[0] & 1)) got.push_back({t, m});
      drop(p, r_consumed_);
    });
  }
  static std::string format_key(const Addr6& a) { return format_ipv6(a.data()); }
  static bool parse_entry(std::string_view s, std::vector<Addr6>& keys, Mac& eth, std::string& err) {
    size_t sp = s.rfind(' ');
    IPv6Addr a;
    EtherAddr e;
    if (sp == std::string_view::npos || !parse_ipv6(trim(s.substr(0, sp)), a) || !parse_ether(s.substr(sp + 1), e))
      return err = fmt::format("'{}' is not 'ADDR6 ETH'", s), false;
    keys.push_back(a.b);
    eth = e.b;
    return true;
  }

 private:
  Addr6 ip_{};
};
SHOAL_ELEMENT(IP6NDSolicitor, .name = "IP6NDSolicitor", .ports = "2/1-2", .processing = "h/h",
              .summary = "resolves IPv6 next hops with neighbour discovery and adds Ethernet headers",
              .description =
                  "The ARPQuerier of IPv6. Input 0 takes IPv6 packets whose DST_IP6 annotation is the next hop; "
                  "input 1 takes neighbour advertisements (Ethernet frames). A known neighbour (answer younger "
                  "than TIMEOUT) gets the Ethernet header; multicast destinations map to 33:33:xx:xx:xx:xx. "
                  "Otherwise the packet waits (ENTRY_PACKET_CAPACITY per neighbour, CAPACITY in all, the oldest "
                  "makes room: 'nd-queue-full') while a solicitation goes to the target's solicited-node group, "
                  "again every RETRY_INTERVAL, RETRIES times; then the waiting packets are dropped "
                  "('nd-no-reply'). Solicitations leave on output 1 if it exists, else output 0. The cache is "
                  "shared by all workers and learns only answers it asked for or refreshes.",
              .args = {{"IP6", "IPv6 address", "this interface's address"},
                       {"ETH", "Ethernet address", "this interface's Ethernet address"},
                       {"TIMEOUT", "time", "how long an answer is good (default 30 s)"},
                       {"RETRY_INTERVAL", "time", "time between solicitations (default 1 s)"},
                       {"RETRIES", "unsigned", "solicitations before giving up (default 3)"},
                       {"CAPACITY", "unsigned", "waiting packets in all (default 2048)"},
                       {"ENTRY_PACKET_CAPACITY", "unsigned", "waiting packets per neighbour (default 64)"}},
              .handlers = {{"table", "r", "cache: address, valid, Ethernet address"},
                           {"insert", "w", "ADDR6 ETH: add a static answer"},
                           {"clear", "w", "empty the cache"},
                           {"queries", "r", "solicitations sent"},
                           {"responses", "r", "answers learnt"},
                           {"count", "r", "packets waiting"}},
              .example = "dh -> [0]nds :: IP6NDSolicitor(fd00:1::1, 02:00:00:00:00:01) -> out; c[2] -> [1]nds;");

}  // namespace shoal

// IP6Fragmenter: IPv6 packets larger than an MTU are fragmented as a source
// fragments them (RFC 8200 §4.5), or go to output 1 (Click's: towards an
// ICMPv6 Packet Too Big, as a router does).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/fragmentoutput.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class IP6Fragmenter : public Element {
 public:
  void configure(Args& a) override {
    bool frag = true;
    bool have_frag = false;
    a.read_mp("MTU", mtu_);
    if (a.has("FRAGMENT")) have_frag = true;
    a.read("FRAGMENT", frag);
    a.complete();
    if (mtu_ < 56 || mtu_ > 65535) a.fail("MTU must be 56 to 65535 (a header, a fragment header and 8 bytes)");
    if (have_frag) fragment_ = frag;
  }
  void initialize() override {
    if (!fragment_) fragment_ = noutputs() < 2;  // Click's: too big to output 1, when there is one
    r_big_ = add_drop_reason("too-big");
    r_bad_ = add_drop_reason("no-ip6-header");
    r_pool_ = add_drop_reason("pool-exhausted");
    r_small_ = add_drop_reason("mtu-below-header");
    r_frag_ = add_drop_reason("already-fragment");
    r_done_ = add_drop_reason("fragmented");
    id_ = uint32_t(std::random_device{}()) ^ (uint32_t(worker().id()) << 24);
  }
  void push(int, PacketBatch* b) override {
    bool all_fit = true;
    b->for_each([&](uint32_t, Packet* p) {
      const uint8_t* ip6 = ip6_header(p);
      if (!ip6 || 40u + k::load_be16(ip6 + 4) > mtu_) all_fit = false;
    });
    if (all_fit) return output_push(0, b);  // the common case: nothing to do
    FragmentOutput out(*this, *b);
    b->for_each([&](uint32_t i, Packet* p) {
      b->kill(i);
      const uint8_t* ip6 = ip6_header(p);
      if (!ip6) return drop(p, r_bad_);
      if (40u + k::load_be16(ip6 + 4) <= mtu_) return out.emit(p);
      if (!*fragment_) return out.turn_away(p, r_big_);
      fragment(p, out);
    });
    recycle(b);
    out.finish();
  }
  void add_handlers() override {
    add_stat_handler("fragments", fragments_);
    add_stat_handler("fragmented", fragmented_);
  }

 private:
  void fragment(Packet* p, FragmentOutput& out) {
    uint8_t* ip6 = p->network_header();
    const uint32_t off0 = uint32_t(p->network_header_offset());
    const uint32_t tot = std::min<uint32_t>(40u + k::load_be16(ip6 + 4), p->length() - off0);
    // The unfragmentable part: the IPv6 header, hop-by-hop options, and
    // through the last routing header (destination options before it
    // included); `nh_at` is the byte that names the header after it (the
    // IPv6 header's, or the first byte of the last extension header in it).
    uint32_t unfrag = 40, nh_at = 6, at = 40;
    uint8_t nh = ip6[6];
    while ((nh == 0 || nh == 43 || nh == 60) && at + 8 <= tot) {
      const uint32_t len = (uint32_t(ip6[at + 1]) + 1) * 8;
      if (at + len > tot) break;
      if (nh == 0 || nh == 43) unfrag = at + len, nh_at = at;
      nh = ip6[at];
      at += len;
    }
    if (nh == 44) return out.turn_away(p, r_frag_);  // a fragment already: only its source fragments it
    if (unfrag + 8 + 8 > mtu_) return out.turn_away(p, r_small_);
    const uint32_t room = (mtu_ - unfrag - 8) / 8 * 8;
    const uint8_t next = ip6[nh_at];  // what follows the unfragmentable part
    const uint32_t id = id_++;
    const uint32_t data_len = tot - unfrag;
    for (uint32_t pos = 0; pos < data_len;) {
      const uint32_t n = std::min(room, data_len - pos);
      const bool last = pos + n == data_len;
      Packet* q = worker().pool().alloc(off0 + unfrag + 8 + n);
      if (!q) {
        count_lost(r_pool_);
        pos += n;
        continue;
      }
      created();
      uint8_t* d = q->data();
      std::memcpy(d, p->data(), off0 + unfrag);  // link header, if any, and the unfragmentable part
      uint8_t* qi = d + off0;
      qi[nh_at] = 44;
      uint8_t* fh = qi + unfrag;
      fh[0] = next, fh[1] = 0;
      k::store_be16(fh + 2, uint16_t(pos | (last ? 0 : 1)));  // offset in 8-byte units, shifted 3; M
      k::store_be32(fh + 4, id);
      std::memcpy(fh + 8, ip6 + unfrag + pos, n);
      k::store_be16(qi + 4, uint16_t(unfrag + 8 + n - 40));
      q->anno() = p->anno();
      if (p->has_mac_header()) q->set_mac_header(0);
      q->set_network_header(off0);
      q->set_transport_header(off0 + unfrag + 8);
      fragments_.add();
      out.emit(q);
      pos += n;
    }
    fragmented_.add();
    drop(p, r_done_);  // replaced by its fragments
  }

  uint32_t mtu_ = 1280;
  std::optional<bool> fragment_;
  uint32_t id_ = 0;
  uint16_t r_big_ = 0, r_bad_ = 0, r_pool_ = 0, r_small_ = 0, r_frag_ = 0, r_done_ = 0;
  Stat fragments_, fragmented_;
};
SHOAL_ELEMENT(
    IP6Fragmenter, .name = "IP6Fragmenter", .ports = "1/1-2", .processing = "h/h",
    .summary = "fragments IPv6 packets larger than the MTU, or sends them to output 1",
    .description =
        "Packets whose IPv6 length (network header annotation: 40 + payload length) is at most MTU pass "
        "unchanged. A larger one goes to output 1 when there is one (Click's IP6Fragmenter: a router does not "
        "fragment IPv6, and ICMP6Error(..., 2, 0) answers Packet Too Big), else is fragmented as a source "
        "fragments (RFC 8200 §4.5); FRAGMENT says which, whatever the outputs. Fragments: the unfragmentable "
        "part (the IPv6 header, hop-by-hop options, and up to the last routing header), a fragment header with "
        "one identification per packet, and at most MTU bytes in all, on 8-byte boundaries, first fragment "
        "first. Bytes before the IPv6 header (a link header) are copied to each. A packet that is a fragment "
        "already ('already-fragment') or whose unfragmentable part leaves no room for 8 bytes of data "
        "('mtu-below-header') goes to output 1 if there is one, else is dropped, as is one too big when not "
        "fragmenting ('too-big'). The original of a fragmented packet is counted under 'fragmented'.",
    .args = {{"MTU", "unsigned", "largest IPv6 packet, header included"},
             {"FRAGMENT", "boolean", "fragment packets (default: true when output 1 is not connected)"}},
    .handlers = {{"fragments", "r", "fragments made"}, {"fragmented", "r", "packets fragmented"}},
    .example = "... -> fr :: IP6Fragmenter(1280) -> ...; fr[1] -> ICMP6Error(2001:db8::1, 2, 0) -> ...;");

}  // namespace shoal

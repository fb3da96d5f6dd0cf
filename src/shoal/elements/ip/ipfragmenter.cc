// IPFragmenter: fragments IPv4 packets larger than an MTU (RFC 791, RFC 1812
// 5.2.6), or sends DF packets to the "fragmentation needed" output.

#include <algorithm>
#include <cstring>
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/fragmentoutput.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class IPFragmenter : public Element {
 public:
  void configure(Args& a) override {
    a.read_mp("MTU", mtu_).read("HONOR_DF", honor_df_).read("VERBOSE", verbose_);
    a.complete();
    if (mtu_ < 28 || mtu_ > 65535) a.fail("MTU must be 28 to 65535 (a header and 8 bytes of data)");
  }
  void initialize() override {
    r_df_ = add_drop_reason("dont-fragment");
    r_bad_ = add_drop_reason("no-ip-header");
    r_pool_ = add_drop_reason("pool-exhausted");
    r_small_ = add_drop_reason("mtu-below-header");
    r_done_ = add_drop_reason("fragmented");
  }
  void push(int, PacketBatch* b) override {
    bool all_fit = true;
    b->for_each([&](uint32_t, Packet* p) {
      if (!p->has_network_header() || p->network_header_offset() < 0 ||
          uint64_t(p->network_header_offset()) + 20 > p->length() || k::load_be16(p->network_header() + 2) > mtu_)
        all_fit = false;
    });
    if (all_fit) return output_push(0, b);  // the common case: nothing to do
    FragmentOutput out(*this, *b);
    b->for_each([&](uint32_t i, Packet* p) {
      b->kill(i);
      uint32_t hl;
      if (!ip_header(p, &hl)) return drop(p, r_bad_);
      uint8_t* ip = p->network_header();
      uint32_t tot = k::load_be16(ip + 2);
      if (tot <= mtu_) return out.emit(p);
      if ((k::load_be16(ip + 6) & 0x4000) && honor_df_) return out.turn_away(p, r_df_);
      fragment(p, hl, out);
    });
    recycle(b);
    out.finish();
  }
  void add_handlers() override {
    add_stat_handler("fragments", fragments_);
    add_stat_handler("fragmented", fragmented_);
  }

 private:
  void fragment(Packet* p, uint32_t hl, FragmentOutput& out) {
    uint8_t* ip = p->network_header();
    const uint32_t off0 = uint32_t(p->network_header_offset());
    uint32_t tot = std::min<uint32_t>(k::load_be16(ip + 2), p->length() - off0);
    // Options copied into later fragments: those with the copy bit (RFC 791).
    uint8_t opts[40];
    uint32_t olen = 0;
    for (uint32_t o = 20; o < hl;) {
      uint8_t t = ip[o];
      if (t == 0) break;
      if (t == 1) {
        ++o;
        continue;
      }
      if (o + 1 >= hl || ip[o + 1] < 2 || o + ip[o + 1] > hl) break;
      if (t & 0x80) std::memcpy(opts + olen, ip + o, ip[o + 1]), olen += ip[o + 1];
      o += ip[o + 1];
    }
    uint32_t hl_rest = (20 + olen + 3) & ~3u;
    if (hl + 8 > mtu_ || hl_rest + 8 > mtu_) return drop(p, r_small_);
    uint16_t frag = k::load_be16(ip + 6);
    const uint32_t base_off = uint32_t(frag & 0x1fff) * 8;
    const bool more_after = frag & 0x2000;  // fragmenting a fragment keeps MF on its last piece
    const uint32_t data_len = tot - hl;
    for (uint32_t pos = 0; pos < data_len;) {
      uint32_t h = pos == 0 ? hl : hl_rest;
      uint32_t room = ((mtu_ - h) / 8) * 8;
      uint32_t n = std::min(room, data_len - pos);
      bool last = pos + n == data_len;
      Packet* q = worker().pool().alloc(off0 + h + n);
      if (!q) {
        count_lost(r_pool_);
        pos += n;
        continue;
      }
      created();
      uint8_t* d = q->data();
      std::memcpy(d, p->data(), off0);  // link header, if any
      uint8_t* qi = d + off0;
      std::memcpy(qi, ip, 20);
      if (pos == 0) {
        std::memcpy(qi + 20, ip + 20, hl - 20);
      } else {
        std::memcpy(qi + 20, opts, olen);
        std::memset(qi + 20 + olen, 0, h - 20 - olen);  // end-of-options padding
        qi[0] = uint8_t(0x40 | (h / 4));
      }
      std::memcpy(qi + h, ip + hl + pos, n);
      k::store_be16(qi + 2, uint16_t(h + n));
      uint16_t f = uint16_t((frag & 0x4000) | ((base_off + pos) / 8));
      if (!last || more_after) f |= 0x2000;
      k::store_be16(qi + 6, f);
      qi[10] = qi[11] = 0;
      k::store_be16(qi + 10, k::ip_checksum(qi, h));
      q->anno() = p->anno();
      q->set_mac_header(0);
      q->set_network_header(off0);
      q->set_transport_header(off0 + h);
      fragments_.add();
      out.emit(q);
      pos += n;
    }
    fragmented_.add();
    drop(p, r_done_);  // replaced by its fragments
  }

  uint32_t mtu_ = 1500;
  bool honor_df_ = true, verbose_ = false;
  uint16_t r_df_ = 0, r_bad_ = 0, r_pool_ = 0, r_small_ = 0, r_done_ = 0;
  Stat fragments_, fragmented_;
};
SHOAL_ELEMENT(IPFragmenter, .name = "IPFragmenter", .ports = "1/1-2", .processing = "h/h",
              .summary = "fragments IPv4 packets larger than the MTU",
              .description =
                  "Packets whose IP total length (network header annotation) is at most MTU pass unchanged. "
                  "Larger ones are split into fragments of at most MTU bytes on 8-byte boundaries; the first "
                  "keeps every option, later ones only those with the copy bit (RFC 791); fragmenting a fragment "
                  "keeps its offset and its more-fragments flag. Bytes before the IP header (a link header) are "
                  "copied to each fragment. With DF set (and HONOR_DF true) the packet goes to output 1 if it "
                  "exists (ICMPError unreachable needfrag), else is dropped ('dont-fragment'). An MTU that cannot "
                  "carry the header plus 8 bytes drops the packet ('mtu-below-header'). The original of a "
                  "fragmented packet is counted under 'fragmented'.",
              .args = {{"MTU", "unsigned", "largest IP packet, header included"},
                       {"HONOR_DF", "boolean", "respect don't-fragment (default true)"},
                       {"VERBOSE", "boolean", "accepted for Click compatibility"}},
              .handlers = {{"fragments", "r", "fragments made"}, {"fragmented", "r", "packets fragmented"}},
              .example =
                  "... -> fr :: IPFragmenter(1500) -> arpq; fr[1] -> ICMPError(10.0.0.1, unreachable, needfrag, MTU "
                  "1500) -> rt;");

}  // namespace shoal

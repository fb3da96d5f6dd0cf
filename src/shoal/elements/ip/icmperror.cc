// ICMPError: answers an IPv4 packet with an ICMP error (RFC 792, RFC 1812
// 4.3.2), and IPFragmenter: fragments IPv4 packets larger than an MTU
// (RFC 791, RFC 1812 5.2.6) or sends DF packets to the "fragmentation needed"
// output.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

namespace {

struct IcmpName {
  const char* name;
  int value;
};
constexpr IcmpName kTypes[] = {{"unreachable", 3},        {"sourcequench", 4},      {"redirect", 5},
                               {"timeexceeded", 11},      {"parameterproblem", 12}, {"time-exceeded", 11},
                               {"parameter-problem", 12}, {"source-quench", 4},     {"dest-unreachable", 3}};
constexpr IcmpName kUnreach[] = {{"net", 0},
                                 {"host", 1},
                                 {"protocol", 2},
                                 {"port", 3},
                                 {"needfrag", 4},
                                 {"srcroutefail", 5},
                                 {"net-unknown", 6},
                                 {"host-unknown", 7},
                                 {"isolated", 8},
                                 {"net-prohibited", 9},
                                 {"host-prohibited", 10},
                                 {"tos-net", 11},
                                 {"tos-host", 12},
                                 {"filter-prohibited", 13},
                                 {"admin-prohibited", 13},
                                 {"host-precedence", 14},
                                 {"precedence-cutoff", 15}};
constexpr IcmpName kTimeEx[] = {{"transit", 0}, {"reassembly", 1}};
constexpr IcmpName kParam[] = {{"erroratptr", 0}, {"missingopt", 1}, {"length", 2}};
constexpr IcmpName kRedirect[] = {{"net", 0}, {"host", 1}, {"tos-net", 2}, {"tos-host", 3}};

template <size_t N>
bool lookup_name(const IcmpName (&t)[N], std::string_view s, int& v) {
  for (auto& e : t)
    if (s == e.name) return v = e.value, true;
  uint64_t x;
  if (parse_uint(s, x) && x < 256) return v = int(x), true;
  return false;
}

bool ip_header_ok(Packet* p, uint32_t& hl) {
  if (!p->has_network_header()) return false;
  int64_t off = p->network_header_offset();
  if (off < 0 || uint64_t(off) + 20 > p->length()) return false;
  hl = uint32_t(p->network_header()[0] & 0xf) * 4;
  return hl >= 20 && uint64_t(off) + hl <= p->length();
}

bool unicast_source(uint32_t a) { return a != 0 && a != 0xffffffffu && (a >> 24) != 127 && (a >> 28) < 0xe; }

}  // namespace

// ---------------------------------------------------------------- ICMPError
class ICMPError : public Element {
 public:
  void configure(Args& a) override {
    IPv4Addr src;
    std::string type, code = "0", badaddrs;
    a.read_mp("SRC", src).read_mp("TYPE", type).read_p("CODE", code);
    a.read("BADADDRS", badaddrs).read("MTU", mtu_).read("SET_FIX_ANNO", fix_anno_);
    a.complete();
    std::memcpy(src_, src.b.data(), 4);
    int t;
    if (!lookup_name(kTypes, type, t)) a.fail(fmt::format("unknown ICMP error type '{}'", type));
    type_ = uint8_t(t);
    int c = -1;
    bool ok = false;
    if (t == 3)
      ok = lookup_name(kUnreach, code, c);
    else if (t == 11)
      ok = lookup_name(kTimeEx, code, c);
    else if (t == 12)
      ok = lookup_name(kParam, code, c);
    else if (t == 5)
      ok = lookup_name(kRedirect, code, c);
    else
      ok = lookup_name(kTimeEx, code, c) && c == 0;
    if (!ok) a.fail(fmt::format("'{}' is not a code of ICMP type '{}'", code, type));
    if (t != 3 && t != 11 && t != 12 && t != 5 && t != 4) a.fail(fmt::format("ICMP type {} is not an error", t));
    code_ = uint8_t(c);
    for (auto& w : split_args(badaddrs, {}, false)) {
      std::string_view s = w.text;
      size_t i = 0;
      while (i < s.size()) {
        size_t e = s.find(' ', i);
        if (e == std::string_view::npos) e = s.size();
        std::string_view one = s.substr(i, e - i);
        i = e + 1;
        if (one.empty()) continue;
        IPv4Addr x;
        if (!parse_ipv4(one, x)) a.fail(fmt::format("BADADDRS: bad address '{}'", one));
        bad_.push_back(x.host());
      }
    }
    if (mtu_ < 68 || mtu_ > 65535) a.fail("MTU must be 68 to 65535");
  }
  void initialize() override {
    r_sent_ = add_drop_reason("answered-with-icmp");
    r_skip_ = add_drop_reason("no-icmp-allowed");
    r_bad_ = add_drop_reason("no-ip-header");
    r_pool_ = add_drop_reason("pool-exhausted");
  }
  void push(int, PacketBatch* b) override {
    PacketBatch* out = nullptr;
    PacketBatch* rej = nullptr;
    b->for_each([&](uint32_t i, Packet* p) {
      b->kill(i);
      int why = -1;
      Packet* q = make_error(p, why);
      if (!q) {
        if (why == r_skip_ && noutputs() > 1) {
          if (!rej) rej = new_batch();
          rej->append(p);
          if (rej->full()) output_push(1, rej), rej = nullptr;
          return;
        }
        drop(p, uint16_t(why));
        return;
      }
      drop(p, r_sent_);  // the original is answered, not forwarded
      if (!out) out = new_batch(), out->anno = b->anno;
      out->append(q);
      if (out->full()) output_push(0, out), out = nullptr;
    });
    recycle(b);
    if (out) output_push(0, out);
    if (rej) output_push(1, rej);
  }
  void add_handlers() override { add_stat_handler("errors", errors_); }

 private:
  bool bad_addr(uint32_t a) const { return std::find(bad_.begin(), bad_.end(), a) != bad_.end(); }
  // RFC 1812 4.3.2.7: never answer ICMP errors, broadcasts, multicasts,
  // non-first fragments, or packets from non-unicast sources.
  Packet* make_error(Packet* p, int& why) {
    uint32_t hl;
    if (!ip_header_ok(p, hl)) return why = r_bad_, nullptr;
    const uint8_t* ip = p->network_header();
    uint32_t src = k::load_be32(ip + 12), dst = k::load_be32(ip + 16);
    why = r_skip_;
    if (!unicast_source(src) || bad_addr(src)) return nullptr;
    if (dst == 0xffffffffu || (dst >> 28) == 0xe || bad_addr(dst)) return nullptr;
    if (p->anno().packet_type == Anno::kBroadcast || p->anno().packet_type == Anno::kMulticast) return nullptr;
    if ((k::load_be16(ip + 6) & 0x1fff) != 0) return nullptr;
    uint64_t avail = p->length() - uint64_t(p->network_header_offset());
    if (ip[9] == 1) {
      if (avail < hl + 1) return nullptr;
      uint8_t t = ip[hl];
      // Errors (and unknown types) never get errors; queries do.
      if (t != 0 && t != 8 && t != 13 && t != 14 && t != 15 && t != 16 && t != 17 && t != 18) return nullptr;
    }
    // As much of the original as fits a 576-byte datagram (RFC 1812 4.3.2.3).
    uint32_t tot = std::min<uint32_t>(k::load_be16(ip + 2), uint32_t(avail));
    uint32_t quote = std::min<uint32_t>(tot, 576 - 28);
    uint32_t len = 28 + quote;
    Packet* q = worker().pool().alloc(len);
    if (!q) {
      why = r_pool_;
      return nullptr;
    }
    created();
    uint8_t* n = q->data();
    std::memset(n, 0, 28);
    n[0] = 0x45;
    k::store_be16(n + 2, uint16_t(len));
    n[8] = 255;
    n[9] = 1;
    std::memcpy(n + 12, src_, 4);
    std::memcpy(n + 16, ip + 12, 4);
    k::store_be16(n + 10, k::ip_checksum(n, 20));
    uint8_t* ic = n + 20;
    ic[0] = type_;
    ic[1] = code_;
    if (type_ == 12 && code_ == 0)
      ic[4] = p->anno().param_off;
    else if (type_ == 5)
      std::memcpy(ic + 4, p->anno().dst_ip, 4);  // the better gateway
    else if (type_ == 3 && code_ == 4)
      k::store_be16(ic + 6, uint16_t(mtu_));
    std::memcpy(ic + 8, ip, quote);
    k::store_be16(ic + 2, k::ip_checksum(ic, 8 + quote));
    q->set_network_header(0);
    q->set_transport_header(20);
    q->anno().timestamp_ns = p->anno().timestamp_ns;
    std::memcpy(q->anno().dst_ip, ip + 12, 4);
    if (fix_anno_) q->anno().flags |= Anno::kFixIPSrc;
    errors_.add();
    return q;
  }

  uint8_t src_[4] = {}, type_ = 0, code_ = 0;
  uint32_t mtu_ = 576;
  bool fix_anno_ = true;
  std::vector<uint32_t> bad_;
  uint16_t r_sent_ = 0, r_skip_ = 0, r_bad_ = 0, r_pool_ = 0;
  Stat errors_;
};
SHOAL_ELEMENT(ICMPError, .name = "ICMPError", .ports = "1/1-2", .processing = "h/h",
              .summary = "answers IPv4 packets with ICMP errors",
              .description =
                  "Replaces each IP packet (network header annotation) by an ICMP error from SRC to its source, "
                  "quoting as much of it as fits 576 bytes (RFC 1812 4.3.2.3). TYPE: unreachable (codes net, "
                  "host, protocol, port, needfrag, srcroutefail, net-unknown, host-unknown, isolated, "
                  "net-prohibited, host-prohibited, tos-net, tos-host, admin-prohibited, host-precedence, "
                  "precedence-cutoff), timeexceeded (transit, reassembly), parameterproblem (erroratptr with "
                  "the pointer from the annotation IPGWOptions sets, missingopt, length), redirect (net, host, "
                  "tos-net, tos-host; the gateway is the DST_IP annotation), sourcequench; codes may be numbers. "
                  "Fragmentation needed carries MTU as the next-hop MTU (RFC 1191). No error answers an ICMP error, "
                  "a broadcast or multicast (by address, BADADDRS or link type), a non-first fragment or a "
                  "non-unicast source (RFC 1812 4.3.2.7): those leave on output 1 if it exists, else are dropped "
                  "('no-icmp-allowed'). The original is counted as dropped ('answered-with-icmp'); the error "
                  "gets DST_IP and the fix-source annotation, so FixIPSrc gives it the outgoing interface's "
                  "address.",
              .args = {{"SRC", "IPv4 address", "the router's address"},
                       {"TYPE", "name | number", "ICMP type"},
                       {"CODE", "name | number", "ICMP code (default 0)"},
                       {"BADADDRS", "addresses", "broadcast addresses of the router's networks"},
                       {"MTU", "unsigned", "next-hop MTU for unreachable needfrag (default 576)"},
                       {"SET_FIX_ANNO", "boolean", "set the fix-source annotation (default true)"}},
              .handlers = {{"errors", "r", "errors made"}},
              .example = "dt :: DecIPTTL; dt[1] -> ICMPError(10.0.0.1, timeexceeded) -> rt;");

// ---------------------------------------------------------------- IPFragmenter
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
    PacketBatch* out = new_batch();
    out->anno = b->anno;
    PacketBatch* df = nullptr;
    auto emit = [&](Packet* q) {
      out->append(q);
      if (out->full()) {
        output_push(0, out);
        out = new_batch();
        out->anno = b->anno;
      }
    };
    b->for_each([&](uint32_t i, Packet* p) {
      b->kill(i);
      uint32_t hl;
      if (!ip_header_ok(p, hl)) return drop(p, r_bad_);
      uint8_t* ip = p->network_header();
      uint32_t tot = k::load_be16(ip + 2);
      if (tot <= mtu_) return emit(p);
      if ((k::load_be16(ip + 6) & 0x4000) && honor_df_) {
        if (noutputs() < 2) return drop(p, r_df_);
        if (!df) df = new_batch();
        df->append(p);
        if (df->full()) output_push(1, df), df = nullptr;
        return;
      }
      fragment(p, hl, emit);
    });
    recycle(b);
    if (out->empty())
      recycle(out);
    else
      output_push(0, out);
    if (df) output_push(1, df);
  }
  void add_handlers() override {
    add_stat_handler("fragments", fragments_);
    add_stat_handler("fragmented", fragmented_);
  }

 private:
  template <class Emit>
  void fragment(Packet* p, uint32_t hl, Emit& emit) {
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
      emit(q);
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

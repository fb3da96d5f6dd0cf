// ICMPRewriter: rewrites ICMP errors about rewritten packets, through the
// mappings of the rewriters it names.
#include <fmt/format.h>

#include "shoal/core/graph.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class ICMPRewriter : public Element {
 public:
  void configure(Args& a) override {
    std::string maps, anno;
    a.read_mp("MAPS", maps).read("DST_ANNO", dst_anno_).read("REPLY_ANNO", anno);
    a.complete();
    if (!anno.empty() && anno != "PAINT") a.fail("REPLY_ANNO: only the PAINT annotation is supported");
    reply_anno_ = !anno.empty();
    for (auto w : split_words(maps)) {
      Map m;
      size_t colon = w.find(':');
      m.name = std::string(w.substr(0, colon));
      if (colon != std::string_view::npos) {
        int64_t off = -1;
        if (!parse_int(w.substr(colon + 1), off) || off < 0) a.fail(fmt::format("{} not an IP rewriter", w));
        m.offset = int(off);
      }
      maps_.push_back(m);
    }
    if (maps_.empty()) a.fail("no IP rewriters supplied");
  }
  void initialize() override {
    for (Map& m : maps_) {
      Element* e = router().find(m.name);
      m.rw = e ? dynamic_cast<RewriterBase*>(e) : nullptr;
      if (!m.rw) throw std::runtime_error(fmt::format("{} not an IP rewriter", m.name));
      if (m.offset >= 0 && m.offset + m.rw->noutputs() > noutputs())
        throw std::runtime_error(fmt::format("{}:{} port offset requires more than {} {}", m.name, m.offset, noutputs(),
                                             noutputs() == 1 ? "output" : "outputs"));
    }
    r_unmapped_ = add_drop_reason("icmp-not-mapped");
    r_not_icmp_ = add_drop_reason("not-icmp");
  }
  void push(int, PacketBatch* b) override {
    int first = INT32_MIN;
    bool uniform = true;
    b->for_each([&](uint32_t i, Packet* p) {
      int r = process(p);
      b->result(i) = int16_t(r);
      if (first == INT32_MIN) first = r;
      uniform &= r == first;
    });
    if (first == INT32_MIN) return recycle(b);
    if (uniform && first >= 0 && first < noutputs()) return output_push(first, b);
    dispatch(b);
  }

 private:
  struct Map {
    std::string name;
    int offset = -1;
    RewriterBase* rw = nullptr;
  };
  int unmapped() const { return noutputs() > 1 ? 1 : drop_code(r_unmapped_); }

  int process(Packet* p) {
    RewriteView v;
    if (!v.parse(p) || v.proto != 1) return drop_code(r_not_icmp_);
    uint8_t* icmp = v.l4;
    uint8_t type = icmp[0];
    if ((type != 3 && type != 11 && type != 12 && type != 4 && type != 5) || v.l4len < 8 + 20) return unmapped();
    uint8_t* enc = icmp + 8;
    uint32_t enc_hl = uint32_t(enc[0] & 15) * 4;
    if ((enc[0] >> 4) != 4 || enc_hl < 20) return unmapped();
    const uint8_t* end = p->end_data();
    uint8_t* et = enc + enc_hl;
    uint8_t enc_p = enc[9];
    bool first = (k::load_be16(enc + 6) & 0x1fff) == 0;
    // The flow of a reply to the quoted packet: what the rewriter mapped.
    flow::FlowId search{k::load_be32(enc + 16), k::load_be32(enc + 12), 0, 0};
    bool ports = false, echo = false;
    if ((enc_p == 6 || enc_p == 17 || enc_p == 33) && et + 8 <= end && first) {
      search.sport = k::load_be16(et + 2);
      search.dport = k::load_be16(et);
      ports = true;
    } else if (enc_p == 1 && et + 6 <= end && first && et[0] == 8) {
      search.sport = k::load_be16(et + 4);
      echo = true;
    }
    for (const Map& m : maps_) {
      std::lock_guard<std::mutex> g(m.rw->table().mu);
      flow::FlowId to;
      uint32_t id;
      int dir;
      if (!m.rw->find_mapping(enc_p, search, to, id, dir)) continue;
      rewrite(v, p, enc, et, end, enc_p, search, to, ports, echo);
      if (dir == 1 && reply_anno_) p->anno().paint = m.rw->reply_anno_of(id);
      return m.offset >= 0 ? m.offset + m.rw->output_of(id, dir) : 0;
    }
    return unmapped();
  }

  // Replaces a 16-bit field inside the ICMP message: the checksums in
  // `inner` that cover it change, and so does the ICMP checksum, for the
  // field and for each inner checksum.
  static void put16(uint8_t* field, uint16_t v, std::initializer_list<uint8_t*> inner, uint8_t* icmp_sum) {
    uint16_t old = k::load_be16(field);
    if (old == v) return;
    k::store_be16(field, v);
    k::store_be16(icmp_sum, k::csum_update16(k::load_be16(icmp_sum), old, v));
    for (uint8_t* s : inner) {
      if (!s) continue;
      uint16_t os = k::load_be16(s), ns = k::csum_update16(os, old, v);
      k::store_be16(s, ns);
      k::store_be16(icmp_sum, k::csum_update16(k::load_be16(icmp_sum), os, ns));
    }
  }

  void rewrite(RewriteView& v, Packet* p, uint8_t* enc, uint8_t* et, const uint8_t* end, uint8_t enc_p,
               const flow::FlowId& search, const flow::FlowId& to, bool ports, bool echo) {
    uint8_t* isum = v.l4 + 2;
    // The error's own destination, when it is the quoted packet's source.
    if (k::load_be32(v.ip + 16) == search.daddr) {
      for (int i = 0; i < 2; ++i) {
        uint16_t old = k::load_be16(v.ip + 16 + 2 * i), nv = uint16_t(to.daddr >> (16 - 16 * i));
        k::store_be16(v.ip + 16 + 2 * i, nv);
        k::store_be16(v.ip + 10, k::csum_update16(k::load_be16(v.ip + 10), old, nv));
      }
      if (dst_anno_)
        for (int i = 0; i < 4; ++i) p->anno().dst_ip[i] = uint8_t(to.daddr >> (24 - 8 * i));
    }
    // The quoted packet: addresses (its IP checksum, and its transport
    // checksum's pseudo-header when quoted), ports or echo identifier.
    uint8_t* l4sum = nullptr;
    if (ports && enc_p == 6 && et + 18 <= end)
      l4sum = et + 16;
    else if (ports && enc_p == 17 && k::load_be16(et + 6) != 0)
      l4sum = et + 6;
    put16(enc + 12, uint16_t(to.daddr >> 16), {enc + 10, l4sum}, isum);
    put16(enc + 14, uint16_t(to.daddr), {enc + 10, l4sum}, isum);
    put16(enc + 16, uint16_t(to.saddr >> 16), {enc + 10, l4sum}, isum);
    put16(enc + 18, uint16_t(to.saddr), {enc + 10, l4sum}, isum);
    if (ports) {
      put16(et, to.dport, {l4sum}, isum);
      put16(et + 2, to.sport, {l4sum}, isum);
    } else if (echo) {
      put16(et + 4, to.dport, {et + 2}, isum);
    }
  }

  std::vector<Map> maps_;
  bool dst_anno_ = true, reply_anno_ = false;
  uint16_t r_unmapped_ = 0, r_not_icmp_ = 0;
};
SHOAL_ELEMENT(
    ICMPRewriter, .name = "ICMPRewriter", .ports = "1/1-", .processing = "h/h",
    .summary = "rewrites ICMP errors about rewritten packets (so they cross a NAT)",
    .description =
        "Click's ICMPRewriter: an ICMP error (unreachable, time exceeded, parameter problem, source quench, "
        "redirect) quotes a packet that a rewriter in MAPS (a space-separated list of IPRewriter, TCPRewriter, "
        "UDPRewriter, IPAddrRewriter, IPAddrPairRewriter or ICMPPingRewriter names, each optionally NAME:OFFSET) "
        "rewrote. The error is rewritten to be about the original packet: its destination (when it was the "
        "quoted packet's source), the quoted addresses and ports (or echo identifier), and every checksum "
        "that covers them (the error's, the quoted IP header's, the quoted transport header's when present), "
        "incrementally. It leaves on output 0, or on OFFSET plus the mapping's output. Errors no mapping "
        "explains, and ICMP packets that are not errors, leave on output 1 when there is one, else are dropped "
        "('icmp-not-mapped'); packets that are not ICMP are dropped ('not-icmp').",
    .args = {{"MAPS", "rewriter names", "space-separated rewriters, each NAME or NAME:OFFSET"},
             {"DST_ANNO", "boolean",
              "set the destination address annotation when the destination changes "
              "(default true)"},
             {"REPLY_ANNO", "PAINT",
              "set the paint the mapping's rewriter stored (its REPLY_ANNO) on errors "
              "that travel as replies"}},
    .handlers = {},
    .example =
        "nat :: IPRewriter(pattern 21.0.0.1 1024-65535# - - 0 1, drop);\n"
        "errors -> ICMPRewriter(nat) -> ToDevice(eth0);");

}  // namespace shoal

// TCPIPSend: TCP/IP packets made when its `send` handler is written, as
// Click's.
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class TCPIPSend : public Element {
 public:
  void initialize() override { r_pool_ = add_drop_reason("pool-empty"); }
  void add_handlers() override {
    add_write_handler("send", [this](const std::string& v) { send(v); });
  }

 private:
  // "SRC SPORT DST DPORT SEQNO ACKNO FLAGS [COUNT [STOP]]": COUNT copies
  // (default 1) of one segment; STOP true stops the router after them. The
  // home worker's copy sends (the handler is written on every worker).
  void send(const std::string& v) {
    auto w = split_words(v);
    if (w.size() < 7 || w.size() > 9)
      throw std::runtime_error("expected 'SRC SPORT DST DPORT SEQNO ACKNO FLAGS [COUNT [STOP]]'");
    IPv4Addr src, dst;
    uint16_t sport, dport;
    uint64_t seq, ack, flags, count = 1;
    bool stop = false;
    if (!parse_ipv4(w[0], src) || !parse_ipv4(w[2], dst)) throw std::runtime_error("SRC and DST are IP addresses");
    if (!parse_port(w[1], 6, sport) || !parse_port(w[3], 6, dport)) throw std::runtime_error("bad port");
    if (!parse_uint(w[4], seq) || seq > 0xffffffffu || !parse_uint(w[5], ack) || ack > 0xffffffffu)
      throw std::runtime_error("SEQNO and ACKNO are 32-bit numbers");
    if (!parse_uint(w[6], flags) || flags > 0xff) throw std::runtime_error("FLAGS is a number 0-255");
    if (w.size() > 7 && !parse_uint(w[7], count)) throw std::runtime_error("COUNT is a number");
    if (w.size() > 8 && !parse_bool(w[8], stop)) throw std::runtime_error("STOP is true or false");
    if (!on_home_thread()) {
      if (stop) request_stop();
      return;
    }
    PacketBatch* b = nullptr;
    for (uint64_t i = 0; i < count; ++i) {
      Packet* p = make(src, sport, dst, dport, uint32_t(seq), uint32_t(ack), uint8_t(flags));
      if (!p) {
        count_lost(r_pool_);
        continue;
      }
      received(1);
      if (!b) b = new_batch();
      b->append(p);
      if (b->full()) output_push(0, b), b = nullptr;
    }
    if (b) output_push(0, b);
    if (stop) request_stop();
  }
  // Click's segment: IP ID 0, DF, TTL 255; a 20-byte TCP header, window
  // 32120, no data; both checksums.
  Packet* make(const IPv4Addr& src, uint16_t sport, const IPv4Addr& dst, uint16_t dport, uint32_t seq, uint32_t ack,
               uint8_t flags) {
    Packet* p = worker().pool().alloc(40);
    if (!p) return nullptr;
    p->set_length(40);
    uint8_t* ip = p->data();
    std::memset(ip, 0, 40);
    ip[0] = 0x45;
    k::store_be16(ip + 2, 40);
    k::store_be16(ip + 6, 0x4000);
    ip[8] = 255;
    ip[9] = 6;
    std::memcpy(ip + 12, src.b.data(), 4);
    std::memcpy(ip + 16, dst.b.data(), 4);
    set_ip_checksum(ip, 20);
    uint8_t* tcp = ip + 20;
    k::store_be16(tcp, sport);
    k::store_be16(tcp + 2, dport);
    k::store_be32(tcp + 4, seq);
    k::store_be32(tcp + 8, ack);
    tcp[12] = 5 << 4;
    tcp[13] = flags;
    k::store_be16(tcp + 14, 32120);
    k::store_be16(tcp + 16, k::csum_fold(k::csum_partial(tcp, 20, k::ipv4_pseudo_sum(ip + 12, ip + 16, 6, 20))));
    p->set_network_header(0);
    p->set_transport_header(20);
    std::memcpy(p->anno().dst_ip, dst.b.data(), 4);
    return p;
  }
  uint16_t r_pool_ = 0;
};
SHOAL_ELEMENT(TCPIPSend, .name = "TCPIPSend", .ports = "0/1", .processing = "h/h",
              .summary = "sends TCP/IP packets when asked to",
              .description =
                  "Click's TCPIPSend: writing 'SRC SPORT DST DPORT SEQNO ACKNO FLAGS [COUNT [STOP]]' to the `send` "
                  "handler pushes COUNT (default 1) copies of a 40-byte TCP/IP segment: those addresses, ports and "
                  "numbers, FLAGS the TCP flag bits (2: SYN, 16: ACK...), IP ID 0, DF, TTL 255, window 32120, "
                  "checksums right; network header, transport header and DST_IP annotations set. With STOP true "
                  "the router stops after them.",
              .handlers = {{"send", "w", "'SRC SPORT DST DPORT SEQNO ACKNO FLAGS [COUNT [STOP]]'"}},
              .example =
                  "t :: TCPIPSend -> ToDump(syn.pcap, ENCAP IP); Script(write t.send 10.0.0.1 1234 10.0.0.2 80 1 "
                  "0 2 1 true);");

}  // namespace shoal

// NumberPacket: FastClick's element that writes an increasing number into
// each packet, for RecordTimestamp and TimestampDiff to time it by.
#include "shoal/elements/analysis/latency.hh"
#include "shoal/elements/common.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

class NumberPacket : public PacketElement<NumberPacket> {
 public:
  void configure(Args& a) override {
    int64_t offset = 40;
    a.read_p("OFFSET", offset).read("NET_ORDER", net_order_);
    a.complete();
    if (offset < 0 || offset > 65535) a.fail("OFFSET must be between 0 and 65535");
    offset_ = uint32_t(offset);
  }
  void initialize() override {
    count_ = shared_state<Count>(this);
    r_room_ = add_drop_reason("no-room");
  }
  void add_handlers() override {
    add_read_handler(
        "count", [this] { return std::to_string(count_->next.load(std::memory_order_relaxed)); }, Agg::First, true);
    add_read_handler("net_order", [this] { return net_order_ ? std::string("true") : std::string("false"); });
  }
  // The batch's numbers are taken at once (one atomic add per batch: the
  // counter is shared by every worker), in packet order.
  void begin_batch(PacketBatch* b) {
    const uint32_t n = b->live();
    next_ = count_->next.fetch_add(n, std::memory_order_relaxed);
    end_ = next_ + n;
  }
  int process(Packet* p) {
    const uint32_t need = offset_ + 8;
    if (p->length() < need) {  // grown with zeros; an IPv4 header then says the new length
      const uint32_t more = need - p->length();
      uint8_t* tail = p->put(more);
      if (!tail) return drop_code(r_room_);
      std::memset(tail, 0, more);
      grow_ip(p);
    }
    // (process() alone, outside a batch: one number at a time)
    const uint64_t n = next_ < end_ ? next_++ : count_->next.fetch_add(1, std::memory_order_relaxed);
    latency::write_number(p->data() + offset_, n, net_order_);
    return 0;
  }

 private:
  struct Count {
    std::atomic<uint64_t> next{0};
  };
  static void grow_ip(Packet* p) {
    if (!p->has_network_header()) return;
    const int64_t off = p->network_header_offset();
    if (off < 0 || uint64_t(off) + 20 > p->length()) return;
    uint8_t* ip = p->network_header();
    const uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
    if ((ip[0] >> 4) != 4 || hl < 20 || uint64_t(off) + hl > p->length()) return;
    const uint64_t len = p->length() - uint64_t(off);
    if (len > 65535) return;
    k::store_be16(ip + 2, uint16_t(len));
    k::set_ipv4_header_checksum(ip, hl);
  }
  uint32_t offset_ = 40;
  bool net_order_ = false;
  std::shared_ptr<Count> count_;
  uint64_t next_ = 0, end_ = 0;
  uint16_t r_room_ = 0;
};
SHOAL_ELEMENT(NumberPacket, .name = "NumberPacket", .ports = "1/1", .processing = "a/a",
              .summary = "writes an increasing number into each packet",
              .description =
                  "FastClick's NumberPacket: writes a 64-bit number, 0 for the first packet and one more for each "
                  "after it, into the packet's bytes at OFFSET, in the CPU's byte order (or network order with "
                  "NET_ORDER). The numbers are shared by every worker's copy, so no two packets get the same one. A "
                  "packet too short to hold the number is lengthened with zero bytes (an IPv4 header at the network "
                  "header annotation then gets the new total length and checksum); one without room is dropped "
                  "('no-room'). RecordTimestamp and TimestampDiff time packets by this number.",
              .args = {{"OFFSET", "unsigned",
                        "where the number goes, from the start of the packet's data (default 40)"},
                       {"NET_ORDER", "boolean", "write it in network byte order (default false)"}},
              .handlers = {{"count", "r", "numbers given out"},
                           {"net_order", "r",
                            "whether numbers are written in network order (RecordTimestamp's COUNTER reads it)"}},
              .example =
                  "src -> NumberPacket(OFFSET 42) -> rt :: RecordTimestamp(OFFSET 42) -> graph -> "
                  "TimestampDiff(rt, OFFSET 42) -> Discard;");

}  // namespace shoal

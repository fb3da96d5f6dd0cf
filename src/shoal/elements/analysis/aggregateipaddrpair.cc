// AggregateIPAddrPair: numbers the pairs of IP addresses that talk, in both
// directions, as Click's.
#include <unordered_map>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class AggregateIPAddrPair : public PacketElement<AggregateIPAddrPair> {
 public:
  void configure(Args& a) override {
    Duration timeout, reap{20 * 60 * 1000000000ull};
    a.read("TIMEOUT", timeout).read("REAP", reap);
    a.complete();
    timeout_s_ = timeout.ns / 1000000000;  // (whole seconds, as Click's)
    reap_s_ = reap.ns / 1000000000;
  }
  void initialize() override { r_ = add_drop_reason("no-ip-header"); }
  int process(Packet* p) {
    if (!p->has_network_header() || p->network_header_offset() < 0 ||
        uint64_t(p->network_header_offset()) + 20 > p->length())
      return noutputs() > 1 ? 1 : drop_code(r_);
    const uint8_t* ip = p->network_header();
    const uint32_t src = k::load_be32(ip + 12), dst = k::load_be32(ip + 16);
    const uint32_t lo = std::min(src, dst), hi = std::max(src, dst);
    Pair& f = pairs_[uint64_t(lo) << 32 | hi];
    const uint64_t sec = p->timestamp_ns() / 1000000000;
    if (timeout_s_ && f.aggregate && f.last_sec + timeout_s_ < sec) f.aggregate = 0;  // forgotten: a new number
    if (!f.aggregate) {
      f.aggregate = next_;
      f.first_from_hi = src != lo;
      if (++next_ == 0) ++next_;
    }
    if (timeout_s_) {
      f.last_sec = sec;
      if (sec > reap_at_) reap(sec);
    }
    p->anno().aggregate = f.aggregate;
    p->anno().paint = uint8_t(f.first_from_hi != (src != lo));  // 0: the direction of the pair's first packet
    return 0;
  }
  void add_handlers() override {
    add_write_handler("clear", [this](const std::string&) { pairs_.clear(); });
    add_read_handler("pairs", [this] { return std::to_string(pairs_.size()); });
  }

 private:
  struct Pair {
    uint32_t aggregate = 0;
    bool first_from_hi = false;
    uint64_t last_sec = 0;
  };
  // Pairs quiet for TIMEOUT go, every REAP of packet time.
  void reap(uint64_t sec) {
    if (reap_at_) std::erase_if(pairs_, [&](const auto& e) { return e.second.last_sec + timeout_s_ < sec; });
    reap_at_ = sec + reap_s_;
  }

  uint64_t timeout_s_ = 0, reap_s_ = 1200, reap_at_ = 0;
  uint32_t next_ = 1;
  std::unordered_map<uint64_t, Pair> pairs_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(
    AggregateIPAddrPair, .name = "AggregateIPAddrPair", .ports = "1/1-2", .processing = "a/ah",
    .summary = "sets the aggregate annotation to a number per pair of IP addresses",
    .description =
        "Click's AggregateIPAddrPair: packets between the same two addresses, either way, get the same "
        "aggregate annotation, numbered from 1 in order of first appearance; the paint annotation is 0 for "
        "packets in the direction of the pair's first packet and 1 for replies. With TIMEOUT, a pair silent for "
        "longer (in packet time, whole seconds as Click counts) is forgotten and gets a new number when it "
        "appears again; forgotten pairs are reaped every REAP of packet time. A packet without an IP header "
        "leaves on output 1 if there is one, else is dropped ('no-ip-header'). (Each worker's copy numbers the "
        "pairs it sees.)",
    .args = {{"TIMEOUT", "duration", "forget a pair silent this long (default never)"},
             {"REAP", "duration", "how often forgotten pairs are removed (default 20 minutes of packet time)"}},
    .handlers = {{"clear", "w", "forgets every pair (numbering goes on)"}, {"pairs", "r", "pairs remembered"}},
    .example =
        "FromDump(trace.pcap, STOP true, FORCE_IP true) -> AggregateIPAddrPair -> AggregateCounter -> "
        "Discard;");

}  // namespace shoal

// EtherPauseSource: Ethernet PAUSE frames (802.3x flow control), as Click's.
#include <cstring>

#include "shoal/elements/ether/etherheader.hh"
#include "shoal/elements/timersource.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class EtherPauseSource : public TimerSource {
 public:
  void configure(Args& a) override {
    uint32_t quanta = 0;
    dst_.b = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};  // the MAC control multicast address
    a.read_mp("SRC", src_).read_mp("PAUSETIME", quanta).read("DST", dst_);
    read_timer_args(a, Duration{1'000'000'000});
    a.complete();
    if (quanta > 0xffff) a.fail("PAUSETIME must be at most 65535 quanta");
    quanta_ = uint16_t(quanta);
  }
  void add_handlers() override {
    TimerSource::add_handlers();
    add_read_handler("src", [this] { return format_ether_click(src_.b.data()); });
    add_read_handler("dst", [this] { return format_ether_click(dst_.b.data()); });
    add_read_handler("pausetime", [this] { return std::to_string(quanta_); });
    add_write_handler("src", [this](const std::string& v) { set_ether(v, src_); });
    add_write_handler("dst", [this](const std::string& v) { set_ether(v, dst_); });
    add_write_handler("pausetime", [this](const std::string& v) {
      int64_t n;
      if (!parse_int(trim(v), n) || n < 0 || n > 0xffff) throw std::runtime_error("type mismatch");
      quanta_ = uint16_t(n);
    });
  }

 private:
  static void set_ether(const std::string& v, EtherAddr& e) {
    EtherAddr x;
    if (!parse_ether(trim(v), x)) throw std::runtime_error("type mismatch");
    e = x;
  }
  // 64 bytes, as Click makes them: the header, opcode 1 (PAUSE), the time
  // in quanta, zeros.
  Packet* make() override {
    Packet* p = worker().pool().alloc(64);
    if (!p) return nullptr;
    p->set_length(64);
    uint8_t* d = p->data();
    std::memset(d, 0, 64);
    std::memcpy(d, dst_.b.data(), 6);
    std::memcpy(d + 6, src_.b.data(), 6);
    k::store_be16(d + 12, 0x8808);
    k::store_be16(d + 14, 0x0001);
    k::store_be16(d + 16, quanta_);
    p->set_mac_header(0);
    p->set_network_header(14);
    return p;
  }
  EtherAddr src_, dst_;
  uint16_t quanta_ = 0;
};
SHOAL_ELEMENT(EtherPauseSource, .name = "EtherPauseSource", .ports = "0/1", .processing = "a/a",
              .summary = "emits Ethernet PAUSE frames (802.3x)",
              .description =
                  "Click's EtherPauseSource: 64-byte MAC control frames (type 0x8808, opcode 1) from SRC to DST "
                  "(default 01-80-C2-00-00-01) asking for a pause of PAUSETIME quanta (a quantum is 512 bit "
                  "times: 195 is about 100 us at 1 Gb/s). Pushed: one every INTERVAL (the first an INTERVAL after "
                  "start); pulled: one per packet asked for. LIMIT in all (-1: no limit). One stream whatever the "
                  "number of workers.",
              .args = {{"SRC", "Ethernet address", "the sending device's address, mandatory"},
                       {"PAUSETIME", "0-65535", "pause time in quanta, mandatory"},
                       {"DST", "Ethernet address", "destination (default 01-80-C2-00-00-01)"},
                       {"LIMIT", "integer", "frames to emit (default -1: no limit)"},
                       {"INTERVAL", "time", "time between frames when pushed (default 1 s)"},
                       {"ACTIVE", "boolean", "emit when true (default true)"},
                       {"STOP", "boolean", "stop the router after LIMIT (default false)"}},
              .handlers = {{"count", "r", "frames emitted"},
                           {"src", "rw", "SRC"},
                           {"dst", "rw", "DST"},
                           {"pausetime", "rw", "PAUSETIME"},
                           {"limit", "rw", "LIMIT"},
                           {"interval", "rw", "INTERVAL"},
                           {"active", "rw", "ACTIVE"},
                           {"reset_counts", "w", "count from 0 again (and so LIMIT)"}},
              .example = "EtherPauseSource(00:1e:13:22:48:91, 390) -> ToDevice(eth0);");

}  // namespace shoal

// SetRandIPAddress: Click's SetRandIPAddress, a random destination address
// annotation within a prefix (Click's draws: RandomSeed repeats them).
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "shoal/core/worker.hh"
#include "shoal/elements/clickrandom.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class SetRandIPAddress : public PacketElement<SetRandIPAddress> {
 public:
  void configure(Args& a) override {
    std::string prefix;
    a.read_mp("PREFIX", prefix).read_p("LIMIT", limit_);
    a.complete();
    if (!parse_ipv4_prefix(trim(prefix), addr_, mask_, true))
      a.fail(fmt::format("PREFIX '{}' is not an IPv4 address and prefix", prefix));
  }
  void initialize() override {
    rng_ = &click_random_of(worker().runtime(), worker().id());
    for (int64_t i = 0; i < limit_; ++i) addrs_.push_back(pick());  // Click draws its LIMIT addresses first
  }
  void process(Packet* p) {
    uint32_t raw = limit_ > 0 ? addrs_[rng_->range(0, uint32_t(limit_ - 1))] : pick();
    std::memcpy(p->anno().dst_ip, &raw, 4);
  }

 private:
  // Click's pick(): random() under the mask's complement, in the address's
  // in-memory (network) order.
  uint32_t pick() {
    uint8_t a[4] = {uint8_t(addr_ >> 24), uint8_t(addr_ >> 16), uint8_t(addr_ >> 8), uint8_t(addr_)};
    uint8_t m[4] = {uint8_t(mask_ >> 24), uint8_t(mask_ >> 16), uint8_t(mask_ >> 8), uint8_t(mask_)};
    uint32_t ra, rm;
    std::memcpy(&ra, a, 4);
    std::memcpy(&rm, m, 4);
    return (rng_->random() & ~rm) | (ra & rm);
  }

  uint32_t addr_ = 0, mask_ = 0;
  int64_t limit_ = -1;
  std::vector<uint32_t> addrs_;
  ClickRandom* rng_ = nullptr;
};
SHOAL_ELEMENT(SetRandIPAddress, .name = "SetRandIPAddress", .ports = "1/1", .processing = "a/a",
              .summary = "sets the destination address annotation to a random address in a prefix",
              .description =
                  "Sets each packet's DST_IP annotation to a random address within PREFIX (Click's random "
                  "numbers: RandomSeed makes them repeatable). With LIMIT, that many addresses are drawn when "
                  "the router starts and each packet gets one of them at random.",
              .args = {{"PREFIX", "IPv4 prefix", "ADDR/LEN or ADDR/MASK (an address alone: itself)"},
                       {"LIMIT", "integer", "draw only this many distinct addresses (default: no limit)"}},
              .example = "InfiniteSource(LIMIT 100) -> SetRandIPAddress(10.0.0.0/8) -> StoreIPAddress(16) -> ...");

}  // namespace shoal

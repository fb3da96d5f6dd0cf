// FlowRateLimiter: a token bucket per flow, in the flow layer's state.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/kernels/steps/rate_limit.hh"
#include "shoal/kernels/tokenbucket.hh"
#include "shoal/offload/element.hh"

namespace shoal {

class FlowRateLimiter : public offload::OffloadableElement<Element> {
 public:
  void configure(Args& a) override {
    std::optional<uint64_t> rate, burst;
    std::optional<Bandwidth> bw;
    a.read("RATE", rate).read("BANDWIDTH", bw).read("BURST", burst);
    a.complete();
    if (rate.has_value() == bw.has_value()) a.fail("give RATE (packets a second) or BANDWIDTH, one of them");
    bytes_ = bw.has_value();
    double r = bytes_ ? bw->bytes_per_sec : double(*rate);
    if (!(r >= 1) || r > 1e13) a.fail("the rate must be between 1 and 10^13 a second");
    tr_.rate = uint64_t(std::llround(r));
    // default: a tenth of a second's worth, at least one (full-size) packet
    uint64_t b = burst.value_or(std::max<uint64_t>(tr_.rate / 10, bytes_ ? 1514 : 1));
    if (b == 0 || b > 18'000'000'000ull) a.fail("BURST must be between 1 and 1.8e10");
    tr_.burst = b;
    mgr_ = &FlowIPManager::require(this, a);
    off_ = mgr_->table().reserve(sizeof(k::TokenBucket), 8, FlowIPManager::state_owner(*this));
  }
  void initialize() override {
    r_limited_ = add_drop_reason("rate-limited");
    r_no_flow_ = add_drop_reason("no-flow");
  }
  void cpu_push(int, PacketBatch* b) override {
    flow::FlowTable& t = mgr_->table();
    uint64_t wall = 0;
    bool uniform = true;
    b->for_each([&](uint32_t i, Packet* p) {
      int out = 0;
      uint32_t id = p->anno().flow;
      if (!id) {
        out = drop_code(r_no_flow_);
      } else {
        uint64_t now = p->timestamp_ns();
        if (!now) now = wall ? wall : (wall = realtime_ns());
        auto* tb = reinterpret_cast<k::TokenBucket*>(t.state(id) + off_);
        if (!k::tb_take(*tb, tr_, now, bytes_ ? p->length() : 1)) {
          limited_.add();
          out = noutputs() > 1 ? 1 : drop_code(r_limited_);
        }
      }
      b->result(i) = int16_t(out);
      uniform &= out == 0;
    });
    if (uniform) return output_push(0, b);
    dispatch(b);
  }
  // On a device (NBA's form): one thread per flow, kernels/steps/rate_limit.hh;
  // each packet's time goes with it (8 bytes), as the CPU path takes it.
  void offload_declare(offload::Plan& plan) override {
    state_rec_ = plan.add_flow_state(mgr_, off_, sizeof(k::TokenBucket));
    block_ = plan.add_block(8, 0);
    plan.annos.length = true;
  }
  void offload_pre(offload::Aggregate& a) override {
    auto* ts = reinterpret_cast<uint64_t*>(a.block_in(block_));
    uint64_t wall = 0;
    for (uint32_t i = 0; i < a.n; ++i) {
      uint64_t now = a.batch->at(i)->timestamp_ns();
      ts[i] = now ? now : wall ? wall : (wall = realtime_ns());
    }
  }
  bool offload_launch(offload::Launch& L, std::string&) override {
    offload_ctl(L);
    k::RateLimitStep::Params p{L.view,
                               L.ctl,
                               tr_,
                               state_rec_,
                               bytes_ ? 1u : 0u,
                               reinterpret_cast<const uint64_t*>(L.block_in(block_)),
                               noutputs() > 1 ? 1 : drop_code(r_limited_),
                               drop_code(r_no_flow_)};
    L.run_flows<k::RateLimitStep>(p);
    return true;
  }
  void offload_left(Packet*, uint32_t v) override {
    if (k::verdict_dropped(v) ? k::verdict_reason(v) == r_limited_ : k::verdict_port(v) == 1) limited_.add();
  }

  void add_handlers() override {
    add_stat_handler("limited", limited_);
    add_read_handler("rate", [this] { return fmt::format("{}{}", tr_.rate, bytes_ ? "Bps" : ""); });
    add_read_handler("burst", [this] { return std::to_string(tr_.burst); });
  }

 private:
  k::TokenRate tr_;
  bool bytes_ = false;
  FlowIPManager* mgr_ = nullptr;
  uint32_t off_ = 0, state_rec_ = 0, block_ = 0;
  uint16_t r_limited_ = 0, r_no_flow_ = 0;
  Stat limited_;
};
SHOAL_ELEMENT(
    FlowRateLimiter, .name = "FlowRateLimiter", .ports = "1/1-2", .processing = "h/h",
    .summary = "limits each flow to a rate with a token bucket (packets or bytes a second)",
    .description =
        "Needs a FlowIPManager upstream. Each flow (both directions together) has its own token bucket in the "
        "flow layer (16 bytes): RATE tokens a second of one packet each, or BANDWIDTH (Click's bandwidth "
        "syntax: '10Mbps', '1MBps') of one byte each, up to BURST tokens; a new flow starts with a full bucket. "
        "Time is the packets' timestamps (so a capture replays as it was recorded), the wall clock for packets "
        "without one. Packets over the rate are dropped ('rate-limited'), or leave on output 1 when it is "
        "connected; packets without a flow are dropped ('no-flow'). A packet larger than BURST bytes never "
        "conforms. The bucket is the host+device function of kernels/tokenbucket.hh. (FastClick's name; Click's "
        "BandwidthShaper and RatedUnqueue shape one queue, not each flow.) Offloadable (NBA's form): a device thread "
        "takes each flow's packets in order against its bucket (see Firewall).",
    .args = {{"RATE", "integer", "packets a second per flow"},
             {"BANDWIDTH", "bandwidth", "bytes a second per flow (instead of RATE)"},
             {"BURST", "integer",
              "bucket size in packets (RATE) or bytes (BANDWIDTH); default a tenth of a "
              "second's worth, at least one packet (1514 bytes)"}},
    .handlers = {{"limited", "r", "packets over their flow's rate"},
                 {"rate", "r", "the rate (Bps: bytes a second)"},
                 {"burst", "r", "the bucket size"}},
    .example = "FromDevice(eth0) -> FlowIPManager -> FlowRateLimiter(BANDWIDTH 10Mbps) -> Queue -> ToDevice(eth1);");

}  // namespace shoal

// RED: Random Early Detection (Floyd and Jacobson; Gentle RED by default)
// in front of, or behind, the queues it watches, as Click's.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <set>

#include "shoal/elements/clickrandom.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/standard/queue.hh"

namespace shoal {

class RED : public PacketElement<RED> {
 public:
  void configure(Args& a) override {
    double& max_p = max_p_given_;
    std::string queues;
    a.read_mp("MIN_THRESH", min_).read_mp("MAX_THRESH", max_).read_mp("MAX_P", max_p);
    a.read("QUEUES", queues).read("STABILITY", stability_).read("GENTLE", gentle_);
    a.complete();
    if (max_ < min_) a.fail("MAX_THRESH must be at least MIN_THRESH");
    if (max_ > (1u << 20)) a.fail("MAX_THRESH too large");
    if (!(max_p >= 0 && max_p <= 1)) a.fail("MAX_P must be between 0 and 1");
    if (stability_ > 16) a.fail("STABILITY must be at most 16");
    max_p_ = int64_t(std::llround(max_p * 65536));
    for (std::string_view w : split_words(queues)) queue_names_.emplace_back(w);
    set_constants();
  }
  void initialize() override {
    r_ = add_drop_reason("red");
    if (!queue_names_.empty()) {
      for (const std::string& n : queue_names_) {
        Element* e = router().find(n);
        if (!e) throw std::runtime_error(fmt::format("QUEUES: no element '{}'", n));
        auto* q = dynamic_cast<Queue*>(e);
        if (!q) throw std::runtime_error(fmt::format("QUEUES: '{}' is not a queue", n));
        queues_.push_back(q);
      }
    } else {
      find_queues();
      if (queues_.empty()) throw std::runtime_error("no nearby queues (name them with QUEUES)");
    }
    rng_ = &click_random_of(worker().runtime(), worker().id());  // (RandomSeed seeds it, as Click's random())
    random_ = draw();
  }
  int process(Packet*) {
    if (!should_drop()) return 0;
    return noutputs() > 1 ? 1 : drop_code(r_);
  }
  void add_handlers() override {
    add_read_handler("min_thresh", [this] { return std::to_string(min_); });
    add_read_handler("max_thresh", [this] { return std::to_string(max_); });
    add_read_handler("max_p", [this] {
      return adaptive_ ? fmt::format("{:g}", double(max_p_) / 65536) : fmt::format("{:g}", max_p_given_);
    });
    add_read_handler("avg_queue_size", [this] {
      return fmt::format("{:.6g}", double(pub_avg_.load(std::memory_order_relaxed)) / double(1 << kScale));
    });
    add_read_handler("queues", [this] {
      std::string s;
      for (Queue* q : queues_) s += q->name() + "\n";
      return s;
    });
  }

 protected:
  // Click's constants: the drop probability, scaled by 2^16, is C1 * avg
  // - C2 up to MAX_THRESH, then G1 * avg - G2 (Gentle RED) up to the
  // kill threshold, past which every packet is dropped.
  void set_constants() {
    kill_ = gentle_ && max_p_ != 0x10000 ? 2 * max_ : max_;
    if (min_ >= max_)
      c1_ = 0, c2_ = 1;
    else
      c1_ = max_p_ / int64_t(max_ - min_), c2_ = max_p_ * int64_t(min_) / int64_t(max_ - min_);
    g1_ = max_ ? (0x10000 - max_p_) / int64_t(max_) : 0;
    g2_ = 0x10000 - 2 * max_p_;
  }
  // The average length now, as should_drop() last folded it (the instant
  // length without averaging).
  uint64_t average() const {
    if (stability_ != 0) return unscaled();
    int64_t s = 0;
    for (Queue* q : queues_) s += q->size();
    return uint64_t(s);
  }

  uint32_t min_ = 0, max_ = 0, stability_ = 4;
  bool gentle_ = true, adaptive_ = false;
  int64_t max_p_ = 0;  // 16-bit fixed point
  std::vector<std::string> queue_names_;

 private:
  static constexpr unsigned kScale = 10;  // the average's fractional bits (Click's QUEUE_SCALE)
  // The nearest queues downstream (a push RED) or upstream (a pull one),
  // on every path: each path stops at its first queue.
  void find_queues() {
    const bool push = noutputs() > 0 && output_proc(0) == Proc::Push;
    std::deque<Element*> todo;
    std::set<Element*> seen{this};
    auto next = [&](Element* e) {
      int n = push ? e->noutputs() : e->ninputs();
      for (int i = 0; i < n; ++i) {
        Element* x = push ? e->output(i).e : e->input(i).e;
        if (x && seen.insert(x).second) todo.push_back(x);
      }
    };
    if (push) {
      if (Element* x = output(0).e; x && seen.insert(x).second) todo.push_back(x);
    } else {
      next(this);
    }
    while (!todo.empty() && seen.size() < 1024) {
      Element* e = todo.front();
      todo.pop_front();
      if (auto* q = dynamic_cast<Queue*>(e))
        queues_.push_back(q);
      else
        next(e);
    }
  }
  // Click's RED::should_drop, step for step (its approximations included:
  // while the queues are empty, the average decays once per 20 ms).
  bool should_drop() {
    int64_t s = 0;
    for (Queue* q : queues_) s += q->size();
    uint64_t avg;
    if (stability_ == 0) {
      avg = uint64_t(s);
      scaled_ = s << kScale;
    } else if (s) {
      fold(s);
      last_ = 0;
      avg = unscaled();
    } else {
      uint64_t j = worker().now_ns() / 20000000;
      uint64_t n = last_ ? j - last_ : 1;
      if (n >= 100)
        scaled_ = 0;
      else
        for (; n > 0; --n) fold(0);
      last_ = j;
      avg = unscaled();
    }
    pub_avg_.store(scaled_, std::memory_order_relaxed);
    if (avg <= min_) {
      count_ = -1;
      return false;
    }
    if (avg > kill_) {
      count_ = -1;
      return true;
    }
    int64_t p_b = avg <= max_ ? ((c1_ * scaled_) >> kScale) - c2_ : ((g1_ * scaled_) >> kScale) - g2_;
    ++count_;
    if (count_ > 0 && p_b > 0 && count_ > random_ / p_b) {
      count_ = 0;
      random_ = draw();
      return true;
    }
    if (count_ == 0) random_ = draw();
    return false;
  }
  void fold(int64_t x) {
    int64_t xs = (x << kScale) + (int64_t(1) << (stability_ - 1));
    scaled_ += (xs - scaled_) >> stability_;
  }
  uint64_t unscaled() const { return uint64_t((scaled_ + (int64_t(1) << (kScale - 1))) >> kScale); }
  int64_t draw() { return int64_t((rng_->random() >> 5) & 0xffff); }  // as Click's

  uint64_t kill_ = 0;
  double max_p_given_ = 0;  // (the drops use it in 16-bit fixed point, as Click)
  int64_t c1_ = 0, c2_ = 0, g1_ = 0, g2_ = 0;
  std::vector<Queue*> queues_;
  int64_t scaled_ = 0, count_ = -1, random_ = 0;
  uint64_t last_ = 0;
  std::atomic<int64_t> pub_avg_{0};
  ClickRandom* rng_ = nullptr;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(RED, .name = "RED", .ports = "1/1-2", .processing = "a/ah",
              .summary = "drops packets early as the queues behind it fill (Random Early Detection)",
              .description =
                  "Click's RED: keeps a moving average of the total length of the queues it watches (alpha "
                  "2^-STABILITY; while they are empty it decays once per 20 ms, as Click's) and drops each "
                  "packet with a probability that grows from 0 at MIN_THRESH to MAX_P at MAX_THRESH, spread "
                  "evenly between drops (Floyd and Jacobson's count); with GENTLE (the default) it grows on to 1 "
                  "at twice MAX_THRESH, without it every packet is dropped above MAX_THRESH. The queues are the "
                  "nearest downstream ones on every path when RED pushes, upstream ones when it is pulled, or "
                  "those QUEUES names. Dropped packets leave on output 1 when there is one, else are dropped "
                  "('red'). Each worker's copy watches its own queues.",
              .args = {{"MIN_THRESH", "unsigned", "average length below which nothing is dropped, mandatory"},
                       {"MAX_THRESH", "unsigned", "average length at which the probability is MAX_P, mandatory"},
                       {"MAX_P", "real", "the drop probability at MAX_THRESH (0 to 1), mandatory"},
                       {"QUEUES", "names", "the queues to watch, space-separated (default: the nearest)"},
                       {"STABILITY", "unsigned", "-log2 of the average's weight (default 4; 0: the instant length)"},
                       {"GENTLE", "boolean", "Gentle RED above MAX_THRESH (default true)"}},
              .handlers = {{"min_thresh", "r", "MIN_THRESH"},
                           {"max_thresh", "r", "MAX_THRESH"},
                           {"max_p", "r", "MAX_P"},
                           {"avg_queue_size", "r", "the average length"},
                           {"queues", "r", "the queues watched"}},
              .example = "src -> RED(5, 50, 0.02) -> Queue(200) -> LinkUnqueue(1ms, 10Mbps) -> ToDevice(eth0);");

// AdaptiveRED (Floyd, Gummadi and Shenker, 2001): RED around a target
// length, whose MAX_P follows the load: every 500 ms, down by a tenth while
// the average sits in the lower half of the band, up by a hundredth (at
// most a quarter of itself) while it sits in the upper half; as Click's.
class AdaptiveRED : public RED {
 public:
  void configure(Args& a) override {
    uint32_t target = 0;
    double max_p = 0;
    std::string queues;
    a.read_mp("TARGET", target).read_mp("MAX_P", max_p).read("QUEUES", queues).read("STABILITY", stability_);
    a.complete();
    if (!(max_p >= 0 && max_p <= 1)) a.fail("MAX_P must be between 0 and 1");
    if (stability_ > 16) a.fail("STABILITY must be at most 16");
    target = std::clamp<uint32_t>(target, 10, 1u << 19);  // (Click's floor of 10)
    min_ = target / 2;
    max_ = target + min_;
    gentle_ = adaptive_ = true;
    max_p_ = int64_t(std::llround(max_p * 65536));
    for (std::string_view w : split_words(queues)) queue_names_.emplace_back(w);
    set_constants();
  }
  void initialize() override {
    RED::initialize();
    timer_.owner = this;
    timer_.background = true;  // (it adapts while packets come; it keeps no run going)
    worker().schedule(timer_, worker().now_ns() + kInterval);
  }
  void run_timer(Timer&) override {
    constexpr int64_t kHundredth = 655, kNineTenths = 58982;  // 0.01 and 0.9 in 16-bit fixed point
    const uint64_t avg = average(), part = (max_ - min_) / 2;
    if (avg < min_ + part && max_p_ > kHundredth)
      max_p_ = (max_p_ * kNineTenths) >> 16;
    else if (avg > max_ - part && max_p_ < 0x8000)
      max_p_ += std::min(kHundredth, max_p_ / 4);
    set_constants();
    worker().schedule(timer_, timer_.expiry_ns + kInterval);
  }

 private:
  static constexpr uint64_t kInterval = 500000000;  // Click's ADAPTIVE_INTERVAL
  Timer timer_;
};
SHOAL_ELEMENT(AdaptiveRED, .name = "AdaptiveRED", .ports = "1/1-2", .processing = "a/ah",
              .summary = "RED whose drop probability adapts to hold a target queue length",
              .description =
                  "Click's AdaptiveRED (Floyd, Gummadi and Shenker's Adaptive RED): RED with MIN_THRESH TARGET/2 "
                  "and MAX_THRESH 3*TARGET/2 (TARGET at least 10), Gentle, whose MAX_P changes every 500 ms: "
                  "multiplied by 0.9 while the average length is in the lower half of that band (down to 0.01), "
                  "raised by 0.01 (at most a quarter of itself) while it is in the upper half (up to 0.5). QUEUES "
                  "and STABILITY are RED's; so are the outputs and the drop reason ('red').",
              .args = {{"TARGET", "unsigned", "the queue length to hold, mandatory"},
                       {"MAX_P", "real", "the starting drop probability at MAX_THRESH, mandatory"},
                       {"QUEUES", "names", "the queues to watch (default: the nearest)"},
                       {"STABILITY", "unsigned", "-log2 of the average's weight (default 4)"}},
              .handlers = {{"min_thresh", "r", "TARGET/2"},
                           {"max_thresh", "r", "3*TARGET/2"},
                           {"max_p", "r", "MAX_P now"},
                           {"avg_queue_size", "r", "the average length"},
                           {"queues", "r", "the queues watched"}},
              .example = "src -> AdaptiveRED(100, 0.02) -> Queue(400) -> LinkUnqueue(1ms, 10Mbps) -> ...;");

}  // namespace shoal

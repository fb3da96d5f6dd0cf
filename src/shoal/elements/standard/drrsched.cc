// DRRSched: pulls from its inputs by deficit round robin (Shreedhar and
// Varghese, SIGCOMM 1995), as Click's.
#include "shoal/core/worker.hh"
#include "shoal/elements/standard/pullscheduler.hh"

namespace shoal {

class DRRSched : public PullScheduler<DRRSched> {
 public:
  void configure(Args& a) override {
    int64_t q = 500;
    a.read_p("QUANTUM", q);
    a.complete();
    if (q <= 0) a.fail("QUANTUM must be positive");
    quantum_ = uint64_t(q);
  }
  void initialize() override { ports_.assign(size_t(ninputs()), Port{}); }
  // Click's loop: each input once, starting where the last pull stopped;
  // an input's packet goes if its deficit covers it, else waits at its head
  // while the next input gets a quantum.
  PacketBatch* next() {
    const int n = ninputs();
    for (int j = 0; j < n; ++j) {
      Port& pi = ports_[size_t(next_)];
      PacketBatch* b = pi.head;
      pi.head = nullptr;
      if (!b) b = pull_one(next_);
      if (!b) {
        pi.deficit = 0;
      } else if (b->at(0)->length() <= pi.deficit) {
        pi.deficit -= b->at(0)->length();
        return b;
      } else {
        pi.head = b;
      }
      next_ = next_ + 1 >= n ? 0 : next_ + 1;
      ports_[size_t(next_)].deficit += quantum_;
    }
    return nullptr;
  }
  bool holds() const { return packets_held() != 0; }
  size_t packets_held() const override {
    size_t n = 0;
    for (const Port& p : ports_) n += p.head ? 1 : 0;
    return n;
  }
  void cleanup() override {
    // (reported as held, then released)
    for (Port& p : ports_)
      if (p.head) {
        p.head->for_each([&](uint32_t, Packet* q) { worker().pool().free(q); });
        p.head->clear();
        recycle(p.head);
        p.head = nullptr;
      }
  }
  void add_handlers() override {
    add_read_handler("quantum", [this] { return std::to_string(quantum_); });
  }

 private:
  struct Port {
    PacketBatch* head = nullptr;  // a packet its deficit did not cover yet
    uint64_t deficit = 0;
  };
  std::vector<Port> ports_;
  uint64_t quantum_ = 500;
  int next_ = 0;
};
SHOAL_ELEMENT(DRRSched, .name = "DRRSched", .ports = "-/1", .processing = "l/l",
              .summary = "pulls from inputs by deficit round robin",
              .description =
                  "Click's DRRSched: deficit round robin (Shreedhar and Varghese, SIGCOMM 1995). Each input in turn "
                  "gets QUANTUM bytes of credit; its packets go while the credit covers them, and a packet too long "
                  "for it waits (held) for the next round. An empty input loses its credit. So inputs share the "
                  "output by bytes, whatever their packets' sizes.",
              .args = {{"QUANTUM", "unsigned", "bytes of credit per round (default 500)"}},
              .handlers = {{"quantum", "r", "QUANTUM"}},
              .example =
                  "q0 :: Queue -> [0]d :: DRRSched(1500); q1 :: Queue -> [1]d; d -> LinkUnqueue(1ms, 10Mbps) -> "
                  "...;");

}  // namespace shoal

// Queue: stores packets between a push and a pull path.

#include <algorithm>
#include "shoal/elements/common.hh"

namespace shoal {

class Queue : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("CAPACITY", cap_);
    a.complete();
    if (cap_ == 0) a.fail("CAPACITY must be at least 1");
  }
  void initialize() override {
    ring_.resize(cap_);
    r_full_ = add_drop_reason("queue-full");
    notifier_.sleep();
  }
  void push(int, PacketBatch* b) override {
    bool was_empty = size_ == 0;
    b->for_each([&](uint32_t, Packet* p) {
      if (size_ == cap_) {
        drop(p, r_full_);
        return;
      }
      ring_[(head_ + size_) % cap_] = p;
      ++size_;
    });
    recycle(b);
    if (size_ > high_) high_ = size_;
    length_.set(size_);
    if (was_empty && size_) notifier_.wake();
  }
  PacketBatch* pull(int, uint32_t max) override {
    if (size_ == 0) {
      notifier_.sleep();
      return nullptr;
    }
    PacketBatch* b = new_batch();
    uint32_t n = std::min<uint32_t>({max, size_, b->capacity()});
    for (uint32_t i = 0; i < n; ++i) {
      b->append(ring_[head_]);
      head_ = head_ + 1 == cap_ ? 0 : head_ + 1;
    }
    size_ -= n;
    length_.set(size_);
    if (size_ == 0) notifier_.sleep();
    return b;
  }
  Notifier* notifier() override { return &notifier_; }
  size_t packets_held() const override { return size_; }
  void cleanup() override {
    // Packets still queued at exit are reported as held, then released.
    while (size_) {
      worker().pool().free(ring_[head_]);
      head_ = (head_ + 1) % cap_;
      --size_;
    }
  }
  void add_handlers() override {
    add_read_handler(
        "length", [this] { return std::to_string(length_.get()); }, Agg::Sum, true);
    add_read_handler(
        "highwater_length", [this] { return std::to_string(high_); }, Agg::Max, true);
    add_read_handler("capacity", [this] { return std::to_string(cap_); });
    add_read_handler(
        "drops", [this] { return std::to_string(drop_reasons()[r_full_].count.get()); }, Agg::Sum, true);
    add_write_handler("reset_counts", [this](const std::string&) { high_ = size_; });
  }

 private:
  uint32_t cap_ = 1000;
  std::vector<Packet*> ring_;
  uint32_t head_ = 0, size_ = 0, high_ = 0;
  Stat length_;
  uint16_t r_full_ = 0;
  Notifier notifier_;
};
SHOAL_ELEMENT(Queue, .name = "Queue", .ports = "1/1", .processing = "h/l",
              .summary = "stores packets between a push and a pull path",
              .description =
                  "A FIFO of at most CAPACITY packets. Pushed packets that find it full are dropped "
                  "(reason 'queue-full'). Pulling tasks downstream sleep while it is empty.",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"},
                           {"highwater_length", "r", "largest length seen"},
                           {"capacity", "r", "the capacity"},
                           {"drops", "r", "packets dropped because full"},
                           {"reset_counts", "w", "reset the high-water mark"}},
              .example = "src -> Queue(1024) -> Unqueue -> sink;");

}  // namespace shoal

// Queue: stores packets between a push and a pull path (Queue, SimpleQueue,
// NotifierQueue; MixedQueue and FrontDropQueue derive from it).
#pragma once
#include <algorithm>
#include <vector>

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
    if (full_signal()) register_signal(full_, "full");
    register_signal(notifier_, "empty");
    notifier_.sleep();
    note_room();
  }
  void push(int port, PacketBatch* b) override {
    bool was_empty = size_ == 0;
    b->for_each([&](uint32_t, Packet* p) {
      if (lifo_port(port)) {  // MixedQueue's input 1: to the front; a full queue drops its last packet
        if (size_ == cap_) {
          uint32_t last = (head_ + size_ - 1) % cap_;
          drop(ring_[last], r_full_);
          --size_;
        }
        head_ = head_ == 0 ? cap_ - 1 : head_ - 1;
        ring_[head_] = p;
        ++size_;
        return;
      }
      if (size_ == cap_) {
        if (!front_drop()) {
          drop(p, r_full_);
          return;
        }
        drop(ring_[head_], r_full_);  // FrontDropQueue: the oldest makes room
        head_ = head_ + 1 == cap_ ? 0 : head_ + 1;
        --size_;
      }
      ring_[(head_ + size_) % cap_] = p;
      ++size_;
    });
    recycle(b);
    if (size_ > high_) high_ = size_;
    length_.set(size_);
    if (was_empty && size_) notifier_.wake();
    note_room();
  }
  PacketBatch* pull(int, uint32_t max) override {
    if (size_ == 0) {
      // Click's sleepiness: the pulling tasks sleep once kSleepiness pulls
      // in a row found the queue empty, not when a pull emptied it, so a
      // queue that empties between two bursts does not put them to sleep
      // and wake them again for each (and the signal reads active while
      // packets flow, as Click's does). QuickNoteQueue: at once.
      if (notifier_.active && (quick_empty_note() || ++sleepiness_ >= kSleepiness)) notifier_.sleep();
      return nullptr;
    }
    sleepiness_ = 0;
    PacketBatch* b = new_batch();
    uint32_t n = std::min<uint32_t>({max, size_, b->capacity()});
    for (uint32_t i = 0; i < n; ++i) {
      b->append(ring_[head_]);
      head_ = head_ + 1 == cap_ ? 0 : head_ + 1;
    }
    size_ -= n;
    length_.set(size_);
    if (size_ == 0 && quick_empty_note()) notifier_.sleep();
    note_room();
    return b;
  }
  // Click's SimpleQueue interface for elements that manage a queue
  // directly: enq (false, the packet untouched, when full), deq (nullptr
  // when empty), and yank: yank1 removes and returns the first packet from
  // the head that `f` matches; yank removes every match, appending them to
  // `out` last first (out.back() is the match nearest the head).
  uint32_t size() const { return size_; }
  bool enq(Packet* p) {
    if (size_ == cap_) return false;
    ring_[(head_ + size_) % cap_] = p;
    if (++size_ == 1) notifier_.wake();
    changed();
    return true;
  }
  Packet* deq() {
    if (!size_) return nullptr;
    Packet* p = ring_[head_];
    head_ = head_ + 1 == cap_ ? 0 : head_ + 1;
    --size_;
    changed();
    return p;
  }
  template <class F>
  Packet* yank1(F f) {
    for (uint32_t i = 0; i < size_; ++i)
      if (f(static_cast<const Packet*>(ring_[(head_ + i) % cap_]))) return remove_at(i);
    return nullptr;
  }
  template <class F>
  void yank(F f, std::vector<Packet*>& out) {
    for (uint32_t i = size_; i-- > 0;)
      if (f(static_cast<const Packet*>(ring_[(head_ + i) % cap_]))) out.push_back(remove_at(i));
  }
  Notifier* notifier() override { return &notifier_; }
  Notifier* full_notifier() override { return full_signal() ? &full_ : nullptr; }
  size_t packets_held() const override { return size_; }
  // Hot swap (Click's Queue::take_state): the new queue takes the old one's
  // packets, oldest first, as many as it has room for (copied into this
  // worker's buffers, the old ones freed); those it cannot take stay with
  // the old configuration, which counts them as dropped.
  void hot_swapped(Element* old) override {
    auto* o = dynamic_cast<Queue*>(old);
    if (!o) return;
    bool was_empty = size_ == 0;
    while (o->size_ && size_ < cap_) {
      Packet* q = worker().pool().clone(o->ring_[o->head_]);
      if (!q) break;
      o->worker().pool().free(o->ring_[o->head_]);
      o->head_ = o->head_ + 1 == o->cap_ ? 0 : o->head_ + 1;
      --o->size_;
      ring_[(head_ + size_) % cap_] = q;
      ++size_;
    }
    o->length_.set(o->size_);
    if (size_ > high_) high_ = size_;
    length_.set(size_);
    if (was_empty && size_) notifier_.wake();
    note_room();
  }
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
    add_write_handler("capacity", [this](const std::string& v) {
      uint64_t c;
      if (!parse_uint(trim(v), c) || c == 0 || c > (1u << 30))
        throw std::runtime_error("expected a capacity of at least 1");
      set_capacity(uint32_t(c));
    });
    // Click's reset: every queued packet is dropped (reason 'queue-reset').
    add_write_handler("reset", [this](const std::string&) {
      if (r_reset_ == UINT16_MAX) r_reset_ = add_drop_reason("queue-reset");
      while (size_) {
        drop(ring_[head_], r_reset_);
        head_ = (head_ + 1) % cap_;
        --size_;
      }
      length_.set(0);
      notifier_.sleep();
      note_room();
    });
  }

 protected:
  virtual bool lifo_port(int) const { return false; }
  // Click's FrontDropQueue: a full queue drops its oldest packet, not the
  // one arriving.
  virtual bool front_drop() const { return false; }
  // Click's Queue tells pushing sources when it is full (they sleep instead
  // of having packets dropped); SimpleQueue, NotifierQueue and MixedQueue
  // do not.
  virtual bool full_signal() const { return true; }
  // Click's QuickNoteQueue: the empty notification as soon as a pull
  // empties the queue (the others: after kSleepiness empty pulls).
  virtual bool quick_empty_note() const { return false; }

 private:
  // A new capacity: the oldest packets are kept; those past it are dropped
  // ('queue-full').
  void set_capacity(uint32_t c) {
    std::vector<Packet*> ring(c);
    uint32_t n = 0;
    for (; n < size_; ++n) {
      Packet* p = ring_[(head_ + n) % cap_];
      if (n < c)
        ring[n] = p;
      else
        drop(p, r_full_);
    }
    size_ = std::min(size_, c);
    ring_ = std::move(ring);
    cap_ = c;
    head_ = 0;
    high_ = std::min(high_, c);
    length_.set(size_);
    if (!size_) notifier_.sleep();
    note_room();
  }
  // Removes the packet i places from the head (the later ones move up).
  Packet* remove_at(uint32_t i) {
    Packet* p = ring_[(head_ + i) % cap_];
    for (uint32_t j = i; j + 1 < size_; ++j) ring_[(head_ + j) % cap_] = ring_[(head_ + j + 1) % cap_];
    --size_;
    changed();
    return p;
  }
  void changed() {
    if (size_ > high_) high_ = size_;
    length_.set(size_);
    if (!size_) notifier_.sleep();
    note_room();
  }
  // The full-notifier follows the free space: asleep when none is left,
  // woken (its sources resume) when a pull makes some.
  void note_room() {
    full_.room = cap_ - size_;
    if (size_ < cap_ && !full_.active)
      full_.wake();
    else if (size_ >= cap_)
      full_.sleep();
  }

  uint32_t cap_ = 1000;
  std::vector<Packet*> ring_;
  uint32_t head_ = 0, size_ = 0, high_ = 0;
  static constexpr uint32_t kSleepiness = 9;  // Click's SLEEPINESS_TRIGGER
  uint32_t sleepiness_ = 0;
  Stat length_;
  uint16_t r_full_ = 0, r_reset_ = UINT16_MAX;
  Notifier notifier_, full_;
};

}  // namespace shoal

// The base of Click's pull schedulers (PrioSched, RoundRobinSched,
// StrideSched): every packet of a pulled batch comes from the input the
// scheduler picks for it, as Click's schedulers decide packet by packet, so
// a batch of N interleaves its inputs exactly as N single pulls would.
// When every input has an empty-notifier upstream (a queue, a pull source),
// the scheduler has one too, active while any of theirs is, so the task
// pulling from it sleeps once all its inputs are empty (Click's combined
// upstream_empty_signal).
#pragma once
#include "shoal/elements/common.hh"

namespace shoal {

template <class D>
class PullScheduler : public Element {
 public:
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* out = nullptr;
    while (!out || (out->slots() < max && !out->full())) {
      PacketBatch* one = static_cast<D*>(this)->next();  // one packet's pull, or nullptr when none has any
      if (!one) break;
      if (!out) out = new_batch();
      one->for_each([&](uint32_t, Packet* p) { out->append(p); });
      one->clear();
      recycle(one);
    }
    if (!out && resolve() && !static_cast<D*>(this)->holds()) {
      bool any = false;
      for (size_t i = 0; i < ups_.size(); ++i) any |= ups_[i]->active && static_cast<D*>(this)->may_pull(int(i));
      if (!any) notifier_.sleep();
    }
    return out;
  }
  // Whether input i is ever pulled (StrideSched: it has tickets).
  bool may_pull(int) const { return true; }
  // Whether the scheduler holds packets of its own (DRRSched: a head
  // waiting for credit), so that it may not sleep with its inputs.
  bool holds() const { return false; }
  Notifier* notifier() override { return resolve() ? &notifier_ : nullptr; }
  // An input's notifier woke: packets may come again.
  void wake_task() override { notifier_.wake(); }

 protected:
  // One packet from input `port`, or nullptr.
  PacketBatch* pull_one(int port) {
    PacketBatch* b = input_pull(port, 1);
    if (b && b->empty()) {
      recycle(b);
      return nullptr;
    }
    return b;
  }

 private:
  // Finds the inputs' notifiers once (the graph is fixed by then); false
  // when some input has none, so nothing downstream may sleep on ours.
  bool resolve() {
    if (resolved_) return combined_;
    resolved_ = true;
    return combined_ = listen_to_inputs(this, ups_, notifier_);
  }
  bool resolved_ = false, combined_ = false;
  std::vector<Notifier*> ups_;
  Notifier notifier_;
};

}  // namespace shoal

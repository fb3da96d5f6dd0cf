// What IPFragmenter and IP6Fragmenter push: the packets that fit and the
// fragments that replace the others, in order, on output 0; the packets
// they turn away on output 1 (or dropped when it is not connected). Each in
// batches pushed as they fill, the rest by finish().
#pragma once
#include "shoal/elements/common.hh"

namespace shoal {

class FragmentOutput {
 public:
  FragmentOutput(Element& e, const PacketBatch& in) : e_(e), anno_(in.anno) {}
  void emit(Packet* p) { add(out_, 0, p); }
  void turn_away(Packet* p, uint16_t reason) {
    if (e_.noutputs() < 2) return e_.drop(p, reason);
    add(away_, 1, p);
  }
  void finish() {
    if (out_) e_.output_push(0, out_);
    if (away_) e_.output_push(1, away_);
    out_ = away_ = nullptr;
  }

 private:
  void add(PacketBatch*& b, int port, Packet* p) {
    if (!b) {
      b = e_.new_batch();
      b->anno = anno_;
    }
    b->append(p);
    if (b->full()) {
      e_.output_push(port, b);
      b = nullptr;
    }
  }
  Element& e_;
  BatchAnno anno_;
  PacketBatch *out_ = nullptr, *away_ = nullptr;
};

}  // namespace shoal

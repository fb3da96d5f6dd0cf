// TableMirror: the device copy of a shared read-only table (a route table,
// a rule set's automaton, classifier trees) for an offloadable element.
// One copy per device and table version serves every worker's copy of the
// element; a new version (a route change, a reload) is uploaded at the next
// aggregate that uses it, while aggregates in flight keep the copy they
// were launched with.
//
//   if (!L.host) {
//     if (!mirror_.sync(L, snap_, {{v.tbl24, size_t(2) << 24}, {v.tbl8, groups * 512}}, err)) return false;
//     p.t = {mirror_.at<uint16_t>(0), mirror_.at<uint16_t>(1)};
//   }
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/element.hh"
#include "shoal/core/stat.hh"
#include "shoal/offload/chain.hh"

namespace shoal::offload {

class TableMirror {
 public:
  struct Piece {
    const void* src;
    size_t bytes;  // 0: an empty array (a small zeroed buffer, so the kernel's pointer stays valid)
  };
  // Makes the device hold `version`'s pieces (uploaded once per device and
  // version, shared by the workers) and keeps them alive for L's aggregate.
  // `version` identifies the table and must own the pieces' memory. False
  // with err when the device is out of memory or the copy failed.
  bool sync(Launch& L, std::shared_ptr<const void> version, const std::vector<Piece>& pieces, std::string& err);
  // Piece i's device address in the current copy.
  template <class T>
  const T* at(size_t i) const {
    return static_cast<const T*>(copy_->bufs[i].get());
  }
  // The "offload_uploads" handler: copies this element's workers made.
  void add_handler(Element& e) { e.add_stat_handler("offload_uploads", uploads_); }

 private:
  struct Copy {
    std::shared_ptr<const void> version;
    std::vector<std::shared_ptr<void>> bufs;
  };
  std::shared_ptr<Copy> copy_;
  Stat uploads_;
};

}  // namespace shoal::offload

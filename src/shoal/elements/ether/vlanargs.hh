// The tag arguments VLANEncap and EtherVLANEncap share, as Click reads them:
// VLAN_TCI (a number, or ANNO for each packet's annotation) and VLAN_PCP
// by position, VLAN_ID and NATIVE_VLAN by keyword.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "shoal/core/args.hh"

namespace shoal {

struct VlanArgs {
  uint16_t tci = 0;  // VLAN_TCI, or VLAN_ID with VLAN_PCP in its top three bits
  int native = 0;    // NATIVE_VLAN: this VLAN ID goes untagged (-1: none)
  bool use_anno = false;

  void read(Args& a) {
    a.read_p("VLAN_TCI", word_).read_p("VLAN_PCP", pcp_).read("VLAN_ID", id_).read("NATIVE_VLAN", native_);
  }
  // After a.complete(): checks the ranges and sets the fields.
  void finish(Args& a) {
    if (pcp_ < 0 || pcp_ > 7) a.fail("VLAN_PCP must be 0-7");
    if (id_ < 0 || id_ > 0xfff) a.fail("VLAN_ID must be 0-4095");
    if (native_ < -1 || native_ > 0xfff) a.fail("NATIVE_VLAN must be -1-4095");
    use_anno = word_ == "ANNO";
    int64_t t = -1;
    if (!word_.empty() && !use_anno && (!parse_int(word_, t) || t < 0 || t > 0xffff))
      a.fail(fmt::format("VLAN_TCI must be ANNO or 0-65535, not '{}'", word_));
    tci = uint16_t((t >= 0 ? t : id_) | (pcp_ << 13));
    native = int(native_);
  }

 private:
  std::string word_;
  int64_t pcp_ = 0, id_ = 0, native_ = 0;
};

}  // namespace shoal

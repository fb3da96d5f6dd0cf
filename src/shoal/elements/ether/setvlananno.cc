// SetVLANAnno: sets the VLAN annotation, as Click's.
#include "shoal/elements/common.hh"

namespace shoal {

class SetVLANAnno : public PacketElement<SetVLANAnno> {
 public:
  void configure(Args& a) override {
    int64_t tci = -1, pcp = 0, id = 0;
    a.read_p("VLAN_TCI", tci).read_p("VLAN_PCP", pcp).read("VLAN_ID", id);
    a.complete();
    if (tci < -1 || tci > 0xffff) a.fail("VLAN_TCI must be 0-65535");
    if (pcp < 0 || pcp > 7) a.fail("VLAN_PCP must be 0-7");
    if (id < 0 || id > 0xfff) a.fail("VLAN_ID must be 0-4095");
    tci_ = uint16_t((tci >= 0 ? tci : id) | (pcp << 13));
  }
  void process(Packet* p) { p->anno().vlan_tci = tci_; }

 private:
  uint16_t tci_ = 0;
};
SHOAL_ELEMENT(SetVLANAnno, .name = "SetVLANAnno", .ports = "1/1", .processing = "a/a",
              .summary = "sets the VLAN annotation",
              .description =
                  "Sets each packet's VLAN annotation to VLAN_TCI, or to VLAN_ID with VLAN_PCP in its top three "
                  "bits; VLANEncap(ANNO) tags frames with it.",
              .args = {{"VLAN_TCI", "0-65535", "the tag control information"},
                       {"VLAN_PCP", "0-7", "priority code point (default 0)"},
                       {"VLAN_ID", "0-4095", "VLAN ID, when VLAN_TCI is not given"}},
              .handlers = {}, .example = "... -> SetVLANAnno(VLAN_ID 10) -> VLANEncap(ANNO) -> ...",
              .forwards_all = true);

}  // namespace shoal

// UnstripAnno: FastClick's UnstripAnno, putting back the bytes Search
// stripped (their count is in the USER16 annotation).
#include "shoal/elements/common.hh"

namespace shoal {

class UnstripAnno : public PacketElement<UnstripAnno> {
 public:
  void configure(Args& a) override {
    std::string anno = "USER16";
    a.read_p("ANNO", anno);
    a.complete();
    if (anno != "USER16" && anno != "PAINT2") a.fail("ANNO: the stripped length is in USER16 (FastClick's PAINT2)");
  }
  void initialize() override { r_ = add_drop_reason("no-headroom"); }
  int process(Packet* p) {
    uint16_t n = p->anno().user16;
    if (n > p->headroom()) return drop_code(r_);
    p->push(n);
    p->anno().user16 = 0;
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(UnstripAnno, .name = "UnstripAnno", .ports = "1/1", .processing = "a/a",
              .summary = "puts back the bytes Search stripped",
              .description =
                  "Pushes back onto each packet the number of bytes in its USER16 annotation (what Search "
                  "stripped) and clears the annotation. A packet with fewer bytes of headroom than that (its data "
                  "replaced meanwhile) is dropped ('no-headroom').",
              .args = {{"ANNO", "annotation", "where the length is: USER16 (FastClick's PAINT2)"}},
              .example = "Search(\"GET \") -> ... -> UnstripAnno -> ...");

}  // namespace shoal

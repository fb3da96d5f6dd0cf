// PullNull and PushNull: pass packets unchanged, in one processing mode, as Click's.
#include "shoal/elements/common.hh"

namespace shoal {

class PullNull : public PacketElement<PullNull> {
 public:
  void process(Packet*) {}
};
SHOAL_ELEMENT(PullNull, .name = "PullNull", .ports = "1/1", .processing = "l/l",
              .summary = "passes packets unchanged, pulling",
              .description = "Null with pull ports: a placeholder that makes a path pull (Click's PullNull).",
              .args = {}, .handlers = {}, .example = "q :: Queue -> PullNull -> Unqueue -> Discard;",
              .forwards_all = true);

class PushNull : public PacketElement<PushNull> {
 public:
  void process(Packet*) {}
};
SHOAL_ELEMENT(PushNull, .name = "PushNull", .ports = "1/1", .processing = "h/h",
              .summary = "passes packets unchanged, pushing",
              .description = "Null with push ports: a placeholder that makes a path push (Click's PushNull).",
              .args = {}, .handlers = {}, .example = "src -> PushNull -> Discard;", .forwards_all = true);

}  // namespace shoal

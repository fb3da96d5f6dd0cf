// PullNull and PushNull (Click's PullNullElement and PushNullElement too):
// pass packets unchanged, in one processing mode, as Click's.
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

class PullNullElement : public PullNull {};
SHOAL_ELEMENT(PullNullElement, .name = "PullNullElement", .ports = "1/1", .processing = "l/l",
              .summary = "passes packets unchanged, pulling (PullNull)",
              .description = "Click's PullNullElement: PullNull.", .args = {}, .handlers = {},
              .example = "q :: Queue -> PullNullElement -> Unqueue -> Discard;", .forwards_all = true);
class PushNullElement : public PushNull {};
SHOAL_ELEMENT(PushNullElement, .name = "PushNullElement", .ports = "1/1", .processing = "h/h",
              .summary = "passes packets unchanged, pushing (PushNull)",
              .description = "Click's PushNullElement: PushNull.", .args = {}, .handlers = {},
              .example = "src -> PushNullElement -> Discard;", .forwards_all = true);

}  // namespace shoal

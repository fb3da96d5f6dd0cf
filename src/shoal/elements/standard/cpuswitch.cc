// CPUSwitch: Click's CPUSwitch, a packet's output chosen by the worker
// (Click's thread) that handles it.
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class CPUSwitch : public PacketElement<CPUSwitch> {
 public:
  void initialize() override { out_ = worker().id() % noutputs(); }
  int process(Packet*) { return out_; }

 private:
  int out_ = 0;
};
SHOAL_ELEMENT(CPUSwitch, .name = "CPUSwitch", .ports = "1/1-", .processing = "h/h",
              .summary = "sends each packet to the output of the worker that handles it",
              .description = "Packets handled by worker N leave on output N modulo the number of outputs.",
              .example = "src -> cs :: CPUSwitch; cs[0] -> q0 :: Queue; cs[1] -> q1 :: Queue;");

}  // namespace shoal

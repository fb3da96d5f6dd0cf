// Hub: sends each packet out of every output but the one numbered as its input.
#include "shoal/elements/common.hh"
#include "shoal/elements/standard/tee.hh"

namespace shoal {

class Hub : public Element {
 public:
  void initialize() override {
    r_ = add_drop_reason("pool-exhausted");
    r_alone_ = add_drop_reason("no-other-output");  // (in on the only output's number)
  }
  void push(int port, PacketBatch* b) override {
    // copies to every other output but the last of them, which gets the originals
    int last = noutputs() - 1;
    if (last == port) --last;
    if (last < 0) return drop_all(b, r_alone_);
    for (int o = 0; o < last; ++o)
      if (o != port)
        if (PacketBatch* c = copy_batch(*this, b, failures_, r_)) output_push(o, c);
    output_push(last, b);
  }
  void add_handlers() override { add_stat_handler("copy_failures", failures_); }

 private:
  uint16_t r_ = 0, r_alone_ = 0;
  Stat failures_;
};
SHOAL_ELEMENT(Hub, .name = "Hub", .ports = "-/-", .processing = "h/h",
              .summary = "copies each packet to every output except its input's number",
              .description =
                  "Click's Hub: a packet that came in on input N leaves on every output except output N, as "
                  "on an Ethernet hub's ports (copies, the original on the highest of those outputs). A packet "
                  "with no other output to go to is dropped ('no-other-output'); a copy the pool cannot make "
                  "is counted in copy_failures.",
              .args = {}, .handlers = {{"copy_failures", "r", "copies lost to pool exhaustion"}},
              .example = "h :: Hub; a -> [0]h[0] -> a_out; b -> [1]h[1] -> b_out; c -> [2]h[2] -> c_out;");

}  // namespace shoal

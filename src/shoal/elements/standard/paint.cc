// Paint (CheckPaint, PaintSwitch): sets the paint annotation.

#include "shoal/elements/common.hh"

namespace shoal {

// ---------------------------------------------------------------- Paint
class Paint : public PacketElement<Paint> {
 public:
  void configure(Args& a) override {
    std::string anno = "PAINT";
    a.read_mp("COLOR", color_).read_p("ANNO", anno);
    a.complete();
    if (anno != "PAINT" && anno != "0") a.fail("ANNO: only the PAINT annotation is supported");
  }
  void process(Packet* p) { p->anno().paint = color_; }
  void add_handlers() override {
    add_read_handler("color", [this] { return std::to_string(color_); });
    add_write_handler("color", [this](const std::string& v) {
      uint64_t c;
      if (!parse_uint(trim(v), c) || c > 255) throw std::runtime_error("expected a color 0-255");
      color_ = uint8_t(c);
    });
  }

 private:
  uint8_t color_ = 0;
};
SHOAL_ELEMENT(Paint, .name = "Paint", .ports = "1/1", .processing = "a/a", .summary = "sets the paint annotation",
              .description = "Sets each packet's PAINT annotation to COLOR.",
              .args = {{"COLOR", "byte", "the color (0-255), mandatory"},
                       {"ANNO", "annotation", "PAINT (the only one)"}},
              .handlers = {{"color", "rw", "the color"}}, .example = "src -> Paint(2) -> PaintSwitch -> ...",
              .forwards_all = true);

// ---------------------------------------------------------------- CheckPaint
class CheckPaint : public PacketElement<CheckPaint> {
 public:
  void configure(Args& a) override {
    a.read_mp("COLOR", color_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("wrong-paint"); }
  int process(Packet* p) {
    if (p->anno().paint == color_) return 0;
    return noutputs() > 1 ? 1 : drop_code(r_);
  }

 private:
  uint8_t color_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(CheckPaint, .name = "CheckPaint", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks the paint annotation",
              .description =
                  "Packets whose PAINT annotation equals COLOR leave on output 0; the others leave on "
                  "output 1 if it exists, else are dropped (reason 'wrong-paint').",
              .args = {{"COLOR", "byte", "the expected color, mandatory"}}, .handlers = {},
              .example = "in -> cp :: CheckPaint(1) -> out; cp[1] -> Discard;");

// ---------------------------------------------------------------- PaintSwitch
class PaintSwitch : public PacketElement<PaintSwitch> {
 public:
  void configure(Args& a) override {
    std::string anno = "PAINT";
    a.read_p("ANNO", anno);
    a.complete();
    if (anno != "PAINT" && anno != "0") a.fail("ANNO: only the PAINT annotation is supported");
  }
  int process(Packet* p) { return p->anno().paint; }
};
SHOAL_ELEMENT(PaintSwitch, .name = "PaintSwitch", .ports = "1/-", .processing = "h/h",
              .summary = "sends packets to the output named by their paint",
              .description =
                  "Each packet leaves on the output equal to its PAINT annotation; packets whose paint "
                  "has no output are dropped (reason 'no-such-output').",
              .args = {{"ANNO", "annotation", "PAINT (the only one)"}}, .handlers = {},
              .example = "ps :: PaintSwitch; ps[0] -> a; ps[1] -> b;");

}  // namespace shoal

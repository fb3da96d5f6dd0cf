// Tee, HashSwitch, Print.
#include <fmt/format.h>

#include <cstdio>

#include "shoal/elements/common.hh"
#include "shoal/kernels/flowhash.hh"

namespace shoal {

class Tee : public Element {
 public:
  void configure(Args& a) override {
    uint32_t n = 0;
    a.read_p("N", n);
    a.complete();
    want_ = n;
  }
  void initialize() override {
    if (want_ && int(want_) != noutputs())
      throw std::runtime_error(fmt::format("N is {} but {} outputs are connected", want_, noutputs()));
    r_ = add_drop_reason("pool-exhausted");
  }
  void push(int, PacketBatch* b) override {
    // Outputs 0..n-2 get copies, the last output gets the originals.
    for (int o = 0; o + 1 < noutputs(); ++o) {
      PacketBatch* c = new_batch();
      c->anno = b->anno;
      b->for_each([&](uint32_t, Packet* p) {
        Packet* q = worker().pool().clone(p);
        if (!q) {
          drops_.add();
          count_lost(r_);
          return;
        }
        created();
        c->append(q);
      });
      if (c->empty())
        recycle(c);
      else
        output_push(o, c);
    }
    output_push(noutputs() - 1, b);
  }
  void add_handlers() override { add_stat_handler("copy_failures", drops_); }

 private:
  uint32_t want_ = 0;
  uint16_t r_ = 0;
  Stat drops_;
};
SHOAL_ELEMENT(Tee, .name = "Tee", .ports = "1/1-", .processing = "h/h", .summary = "copies packets to every output",
              .description =
                  "Each packet is copied to outputs 0 to n-2 and the original goes to output n-1. A copy "
                  "that cannot be made (packet pool exhausted) is counted in copy_failures.",
              .args = {{"N", "unsigned", "expected number of outputs (checked)"}},
              .handlers = {{"copy_failures", "r", "copies lost to pool exhaustion"}},
              .example = "src -> t :: Tee; t[0] -> ToDump(a.pcap); t[1] -> Discard;");

class HashSwitch : public PacketElement<HashSwitch> {
 public:
  void configure(Args& a) override {
    a.read_mp("OFFSET", off_).read_mp("LENGTH", len_);
    a.complete();
    if (len_ == 0) a.fail("LENGTH must be at least 1");
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (p->length() < off_ + len_) return drop_code(r_);
    const uint8_t* d = p->data() + off_;
    uint32_t h = 0x811c9dc5u;
    for (uint32_t i = 0; i < len_; ++i) h = (h ^ d[i]) * 0x01000193u;
    return int(k::mix32(h) % uint32_t(noutputs()));
  }

 private:
  uint32_t off_ = 0, len_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(HashSwitch, .name = "HashSwitch", .ports = "1/1-", .processing = "h/h",
              .summary = "chooses an output by hashing packet bytes",
              .description =
                  "Hashes LENGTH bytes at OFFSET and sends the packet to hash mod the number of outputs, "
                  "so equal bytes always take the same output. Packets shorter than OFFSET+LENGTH are "
                  "dropped (reason 'too-short').",
              .args = {{"OFFSET", "unsigned", "first byte hashed, mandatory"},
                       {"LENGTH", "unsigned", "bytes hashed, mandatory"}},
              .handlers = {}, .example = "hs :: HashSwitch(26, 8); hs[0] -> a; hs[1] -> b;  // IPv4 addresses");

class Print : public PacketElement<Print> {
 public:
  void configure(Args& a) override {
    a.read_p("LABEL", label_)
        .read_p("MAXLENGTH", max_)
        .read("LENGTH", max_)
        .read("TIMESTAMP", ts_)
        .read("CONTENTS", contents_)
        .read("ACTIVE", active_)
        .read("PAINT", paint_);
    a.complete();
    if (contents_ != "HEX" && contents_ != "NONE" && contents_ != "ASCII" && contents_ != "true" &&
        contents_ != "false")
      a.fail("CONTENTS must be HEX, ASCII or NONE");
  }
  void process(Packet* p) {
    if (!active_) return;
    std::string s = label_.empty() ? "" : label_ + ": ";
    if (ts_) s += fmt::format("{}.{:09d}: ", p->timestamp_ns() / 1000000000ull, p->timestamp_ns() % 1000000000ull);
    if (paint_) s += fmt::format("paint {}: ", p->anno().paint);
    s += fmt::format("{:4d}", p->length());
    if (contents_ != "NONE" && contents_ != "false") {
      s += " |";
      uint32_t n = std::min(p->length(), max_);
      for (uint32_t i = 0; i < n; ++i) {
        if (i % 4 == 0) s += ' ';
        uint8_t c = p->data()[i];
        if (contents_ == "ASCII")
          s += (c >= 32 && c < 127) ? char(c) : '.';
        else
          s += fmt::format("{:02x}", c);
      }
    }
    s += '\n';
    std::fputs(s.c_str(), stderr);
  }

 private:
  std::string label_, contents_ = "HEX";
  uint32_t max_ = 24;
  bool ts_ = false, active_ = true, paint_ = false;
};
SHOAL_ELEMENT(Print, .name = "Print", .ports = "1/1", .processing = "a/a",
              .summary = "prints packets to standard error",
              .description =
                  "Prints one line per packet: LABEL, optionally the timestamp and paint, the length, "
                  "and the first MAXLENGTH bytes in hex (groups of four, as Click does) or ASCII.",
              .args = {{"LABEL", "string", "line prefix"},
                       {"MAXLENGTH", "unsigned", "bytes shown (default 24); also LENGTH"},
                       {"TIMESTAMP", "boolean", "show timestamps"},
                       {"CONTENTS", "HEX|ASCII|NONE", "how bytes show"},
                       {"PAINT", "boolean", "show the paint annotation"},
                       {"ACTIVE", "boolean", "print when true"}},
              .handlers = {}, .example = "src -> Print(in, 64) -> Discard;");

}  // namespace shoal

// NotifierDebug: passes packets and shows the notifier signal around it.
#include <fmt/format.h>

#include <map>

#include "shoal/elements/common.hh"

namespace shoal {

class NotifierDebug : public Element {
 public:
  void push(int, PacketBatch* b) override { output_push(0, b); }
  PacketBatch* pull(int, uint32_t max) override { return input_pull(0, max); }
  void add_handlers() override {
    add_read_handler("signal", [this] { return unparse(signal()); });
  }

 private:
  // Pulling: the empty signal upstream; pushing: the full signal downstream.
  const Notifier* signal() {
    if (input_proc(0) == Proc::Pull) return upstream_notifier(this, 0);
    return downstream_full_notifier(this, 0);
  }
  // Click's NotifierSignal::unparse: "KIND.WORD/MASK:VALUE", a '*' when any
  // of it is active, '+' between words; "busy*" for a signal that is not
  // one of the router's (always possibly active) and "idle" for none.
  static std::string unparse(const Notifier* n) {
    if (!n) return "busy*";
    std::map<std::pair<int, std::string>, std::pair<uint32_t, uint32_t>> words;  // (word, kind) -> mask, value
    bool unregistered = false;
    std::vector<const Notifier*> todo{n};
    for (size_t i = 0; i < todo.size() && i < 4096; ++i) {
      const Notifier* x = todo[i];
      if (!x->parts.empty()) {
        todo.insert(todo.end(), x->parts.begin(), x->parts.end());
        continue;
      }
      if (x->signal < 0) {
        unregistered = true;
        continue;
      }
      auto& [mask, value] = words[{x->signal / 32, x->kind ? x->kind : "signal"}];
      uint32_t bit = 1u << (x->signal % 32);
      mask |= bit;
      if (x->active) value |= bit;
    }
    if (unregistered) return "busy*";
    std::string out;
    for (auto& [key, mv] : words)
      out += fmt::format("{}{}.{}/{:x}:{:x}{}", out.empty() ? "" : "+", key.second, key.first, mv.first, mv.second,
                         mv.second ? "*" : "");
    return out.empty() ? "idle" : out;
  }
};
SHOAL_ELEMENT(NotifierDebug, .name = "NotifierDebug", .ports = "1/1", .processing = "a/a",
              .summary = "passes packets; its handler shows the notifier signal around it",
              .description =
                  "Click's NotifierDebug, for debugging sleeping and waking: packets pass unchanged. In "
                  "a pull path, 'signal' shows the empty-notifier signal upstream (a Queue's, or a "
                  "scheduler's combination of its inputs'); in a push path, the full-notifier signal "
                  "downstream. Click's form: each of the router's signals has a number in "
                  "initialization order, 32 to a word, shown as KIND.WORD/MASK:VALUE (hexadecimal), "
                  "with '*' when any is active and '+' between words; 'busy*' when the path has no "
                  "signal, so whatever pulls or pushes never sleeps.",
              .args = {}, .handlers = {{"signal", "r", "the signal, in Click's form"}},
              .example = "q :: Queue -> n :: NotifierDebug -> Unqueue -> Discard;  // read n.signal",
              .forwards_all = true);

}  // namespace shoal

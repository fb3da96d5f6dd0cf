// PortInfo: names for TCP and UDP ports, as Click's.
#include <fmt/format.h>

#include "shoal/core/graph.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class PortInfo : public Element {
 public:
  void configure(Args& a) override {
    std::string scope = name_scope(name());
    for (auto& it : a.items()) {
      it.used = true;
      // 'NAME PORT[/PROTO] [MORE NAMES...] [# comment]'
      std::string_view text = it.text;
      text = text.substr(0, text.find('#'));
      auto w = split_words(text);
      if (w.empty()) continue;
      if (w.size() < 2) a.fail(it, fmt::format("'{}' has no port", w[0]));
      std::string_view p = w[1];
      int proto = 0;
      if (size_t sl = p.find('/'); sl != std::string_view::npos) {
        std::string_view pr = p.substr(sl + 1);
        proto = pr == "tcp" ? 6 : pr == "udp" ? 17 : -1;
        if (proto < 0) a.fail(it, fmt::format("protocol '{}' is not tcp or udp", pr));
        p = p.substr(0, sl);
      }
      uint64_t port;
      if (!parse_uint(p, port) || port > 65535) a.fail(it, fmt::format("'{}' is not a port", w[1]));
      for (size_t i = 0; i < w.size(); ++i) {
        if (i == 1) continue;
        router().names().add_port(scope, std::string(w[i]), uint16_t(port), proto);
      }
      names_ += std::string(trim(text)) + "\n";
    }
  }
  void add_handlers() override {
    add_read_handler("config", [this] { return names_; });
  }

 private:
  std::string names_;
};
SHOAL_ELEMENT(PortInfo, .name = "PortInfo", .ports = "0/0", .processing = "a/a",
              .summary = "names TCP and UDP ports for other elements' arguments",
              .description =
                  "Each argument is 'NAME PORT[/tcp|/udp] [NAME...]', a '#' starting a comment: the names then stand "
                  "for the port where Click takes a port (UDPIPEncap's, route and filter ports). Names defined inside "
                  "a compound are seen by the elements in it first; well-known service names (ssh, www...) are known "
                  "without it. PortInfo is configured before the other elements.",
              .args = {{"NAME PORT...", "names and a port", "one per argument"}},
              .handlers = {{"config", "r", "the names"}}, .example = "PortInfo(dns 53/udp);", .configure_first = true);

}  // namespace shoal

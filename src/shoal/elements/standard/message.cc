// Message: prints a message when the configuration is loaded.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class Message : public Element {
 public:
  void configure(Args& a) override {
    std::string msg, type = "MESSAGE";
    a.read_mp("MESSAGE", msg).read_p("TYPE", type);
    a.complete();
    if (type == "ERROR") a.fail(msg);
    if (type != "MESSAGE" && type != "WARNING") a.fail("TYPE must be MESSAGE, WARNING or ERROR");
    // Every worker configures a copy; the first prints.
    bool first = false;
    mark_ = shared_state<int>(this, &first);
    if (first) fmt::print(stderr, "{}{}\n", type == "WARNING" ? "warning: " : "", msg);
  }

 private:
  std::shared_ptr<int> mark_;
};
SHOAL_ELEMENT(Message, .name = "Message", .ports = "0/0", .processing = "a/a",
              .summary = "prints a message when the configuration is loaded",
              .description =
                  "Click's Message: MESSAGE goes to standard error when the element is configured "
                  "(prefixed 'warning: ' with TYPE WARNING); with TYPE ERROR it is a configuration "
                  "error, and the configuration does not load.",
              .args = {{"MESSAGE", "string", "the text"}, {"TYPE", "MESSAGE|WARNING|ERROR", "default MESSAGE"}},
              .handlers = {}, .example = "Message(\"this configuration needs eth1\", WARNING);");

}  // namespace shoal

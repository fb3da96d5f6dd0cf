// Program: a flattened, validated configuration (elements and connections),
// produced by the config layer. Router: one worker's instance of it.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/diag.hh"
#include "shoal/core/element.hh"
#include "shoal/core/names.hh"

namespace shoal {

struct ProgramElement {
  std::string name;
  const ElementInfo* info = nullptr;
  std::string config;
  Loc loc;         // the declaration (name, or class for anonymous elements)
  Loc config_loc;  // first character of the configuration string
  uint32_t ninputs = 0, noutputs = 0;
  std::vector<Proc> in_proc, out_proc;  // resolved by validate()
};

struct ProgramConn {
  int from = -1, from_port = 0, to = -1, to_port = 0;
  Loc loc;
};

struct Program {
  std::vector<ProgramElement> elements;
  std::vector<ProgramConn> conns;
  std::vector<std::string> requirements;
  int find(const std::string& name) const;
  // Port counts, push/pull resolution and connection rules. Errors go to diag.
  bool validate(Diagnostics& diag);
};

class Router {
 public:
  Router(const Program& prog, Worker& w);
  ~Router();
  // Instantiates and configures every element; errors (with locations) go to
  // diag. initialize() is separate so `shoal check` can stop before it.
  bool configure(Diagnostics& diag);
  bool initialize(Diagnostics& diag);
  void cleanup();

  Worker& worker() const { return worker_; }
  const Program& program() const { return prog_; }
  size_t size() const { return elements_.size(); }
  Element* element(size_t i) const { return elements_[i].get(); }
  Element* find(std::string_view name) const;
  size_t packets_held() const;
  // Names for addresses and ports (AddressInfo, PortInfo).
  NameDB& names() { return names_; }
  // The next of Click's notifier signal numbers (in initialization order).
  int new_signal() { return signals_++; }

 private:
  int signals_ = 0;
  void check_push_cycles(Diagnostics& diag);
  const Program& prog_;
  Worker& worker_;
  std::vector<std::unique_ptr<Element>> elements_;
  std::map<std::string, Element*, std::less<>> by_name_;
  NameDB names_;
};

}  // namespace shoal

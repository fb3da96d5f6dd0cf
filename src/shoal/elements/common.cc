#include "shoal/elements/common.hh"

#include "shoal/core/graph.hh"
#include "shoal/core/names.hh"
#include "shoal/core/runtime.hh"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace shoal {

Notifier* upstream_notifier(Element* e, int port) {
  for (int hops = 0; hops < 64; ++hops) {
    if (port >= e->ninputs() || e->input_proc(port) != Proc::Pull) return nullptr;
    Element* up = e->input(port).e;
    if (auto* per_port = dynamic_cast<OutputNotifiers*>(up)) return per_port->output_notifier(e->input(port).port);
    if (Notifier* n = up->notifier()) return n;
    if (up->ninputs() != 1) return nullptr;
    e = up;
    port = 0;
  }
  return nullptr;
}

bool listen_to_inputs(Element* e, std::vector<Notifier*>& ups, Notifier& combined) {
  ups.clear();
  for (int i = 0; i < e->ninputs(); ++i) {
    Notifier* n = upstream_notifier(e, i);
    if (!n) {
      ups.clear();
      return false;
    }
    ups.push_back(n);
  }
  for (Notifier* n : ups) n->listeners.push_back(e), combined.parts.push_back(n);
  return true;
}

std::string click_timestamp(uint64_t ns) {
  return ns % 1000 ? fmt::format("{}.{:09d}", ns / 1000000000, ns % 1000000000)
                   : fmt::format("{}.{:06d}", ns / 1000000000, ns % 1000000000 / 1000);
}

void LineOutput::open(const std::string& path) {
  close();
  path_ = path;
  if (path.empty()) return;
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw std::runtime_error(fmt::format("OUTFILE {}: {}", path, std::strerror(errno)));
}

void LineOutput::write(Element& e, const std::string& line) {
  std::string s = line + '\n';
  if (!f_) {
    std::fputs(s.c_str(), stderr);
  } else if (std::fputs(s.c_str(), f_) < 0) {
    e.run_error(fmt::format("OUTFILE {}: {}", path_, std::strerror(errno)));
  }
}

void LineOutput::close() {
  if (f_) std::fclose(f_);
  f_ = nullptr;
}

Notifier* downstream_full_notifier(Element* e, int port) {
  for (int hops = 0; hops < 64; ++hops) {
    if (port >= e->noutputs() || e->output_proc(port) != Proc::Push) return nullptr;
    Element* down = e->output(port).e;
    if (!down) return nullptr;
    if (Notifier* n = down->full_notifier()) return n;
    if (down->noutputs() != 1) return nullptr;
    e = down;
    port = 0;
  }
  return nullptr;
}

void PullTask::init(Element* e, uint32_t burst) {
  e_ = e;
  burst_ = burst;
  n_ = upstream_notifier(e, 0);
  if (n_) n_->listeners.push_back(e);
}

PacketBatch* PullTask::pull(uint32_t max) {
  PacketBatch* b = e_->input_pull(0, max ? max : burst_);
  if (!b && n_ && !n_->active) e_->set_task_active(false);
  return b;
}

void SourceElement::read_source_args(Args& args, uint32_t default_burst) {
  burst_ = default_burst;
  args.read("LIMIT", limit_).read("BURST", burst_).read("ACTIVE", active_).read("STOP", stop_);
  args.read("END_CALL", end_call_);
  if (burst_ == 0) args.fail("BURST must be at least 1");
}

void SourceElement::initialize() {
  if (output_proc(0) == Proc::Push) {
    add_task();
    set_task_active(active_);
    if ((full_ = downstream_full_notifier(this))) full_->listeners.push_back(this);
  }
  if (limit_ == 0) finish();
}

void SourceElement::finish() {
  if (done_) return;
  done_ = true;
  set_task_active(false);
  notifier_.sleep();
  if (stop_) request_stop();
  if (!end_call_.empty() && end_call_owner_) {
    std::string_view c = trim(end_call_);
    size_t sp = c.find_first_of(" \t");
    std::string path(c.substr(0, sp)), val(sp == std::string_view::npos ? "" : trim(c.substr(sp))), err;
    if (!worker().runtime().write_handler(path, val, err, worker().id())) run_error("END_CALL " + path + ": " + err);
  }
}

PacketBatch* SourceElement::fill(uint32_t max) {
  if (done_ || !active_) return nullptr;
  uint64_t left = remaining();
  if (left == 0) {
    finish();
    return nullptr;
  }
  max = uint32_t(std::min<uint64_t>({max, left, worker().batches().batch_capacity()}));
  PacketBatch* b = new_batch();
  bool done = false;
  uint32_t n = produce(b, max, done);
  emitted_.add(n);
  received(n);
  if (done || remaining() == 0) finish();
  if (n == 0) {
    recycle(b);
    return nullptr;
  }
  return b;
}

void SourceElement::sleep_until(uint64_t when_ns) {
  if (output_proc(0) != Proc::Push) return;  // pulled: asked again later
  set_task_active(false);
  due_.owner = this;
  worker().schedule(due_, when_ns);
}

void SourceElement::run_timer(Timer& t) {
  if (&t == &due_ && active_ && !done_) set_task_active(true);
}

bool SourceElement::run_task() {
  uint32_t todo = burst_;
  bool any = false;
  while (todo) {
    // A full queue downstream: sleep until it has room (its notifier wakes
    // us), and never push more than it takes.
    if (full_ && (!full_->active || full_->room == 0)) {
      set_task_active(false);
      break;
    }
    if (full_) todo = std::min(todo, full_->room);
    PacketBatch* b = fill(todo);
    if (!b) break;
    todo -= b->live();
    any = true;
    output_push(0, b);
  }
  return any;
}

PacketBatch* SourceElement::pull(int, uint32_t max) { return fill(std::min(max, burst_)); }

void SourceElement::add_handlers() {
  add_stat_handler("count", emitted_);
  add_read_handler("active", [this] { return active_ ? "true" : "false"; });
  add_write_handler("active", [this](const std::string& v) {
    bool on;
    if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
    active_ = on;
    if (!done_ && output_proc(0) == Proc::Push) set_task_active(on);
  });
  add_write_handler("reset", [this](const std::string&) {
    emitted_.set(0);
    done_ = false;
    notifier_.wake();
    if (output_proc(0) == Proc::Push) set_task_active(active_);
  });
  add_read_handler("limit", [this] { return std::to_string(limit_); });
}

Element* find_element_from(Element& self, const std::string& name) {
  for (std::string scope = name_scope(self.name());; scope = name_scope(scope.substr(0, scope.size() - 1))) {
    if (Element* e = self.router().find(scope + name)) return e;
    if (scope.empty()) return nullptr;
  }
}

std::vector<std::pair<size_t, std::string>> read_config_lines(Args& a, const char* what, const std::string& file) {
  std::ifstream in(file);
  if (!in) a.fail(fmt::format("{} {}: {}", what, file, std::strerror(errno)));
  std::vector<std::pair<size_t, std::string>> out;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    std::string_view t = trim(line);
    if (!t.empty() && t[0] != '#') out.push_back({n, std::string(t)});
  }
  return out;
}

}  // namespace shoal

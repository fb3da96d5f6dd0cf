// QueueYankTest: Click's test element for a Queue's yank functions. At
// start-up it fills the queue it names with five one-byte packets ('a' to
// 'e') time after time and checks what enq, deq, yank1 and yank give back,
// then prints "All tests pass!" (or the first check that failed) as Click's
// does. The queue is left empty.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "shoal/core/graph.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/standard/queue.hh"

namespace shoal {

class QueueYankTest : public Element {
 public:
  void configure(Args& a) override {
    a.read_mp("QUEUE", name_);
    a.complete();
  }
  void initialize() override {
    q_ = dynamic_cast<Queue*>(router().find(name_));
    if (!q_) throw std::runtime_error(fmt::format("QUEUE argument must be a Queue element ('{}' is not)", name_));
    timer_.owner = this;
    worker().schedule(timer_, worker().now_ns());
  }
  void run_timer(Timer&) override {
    std::string failed = run();
    fmt::print(stderr, "{} :: {}: {}\n", name(), class_name(), failed.empty() ? "All tests pass!" : failed);
    if (!failed.empty()) run_error(failed);
  }

 private:
  // The tests; the first failure, or empty.
  std::string run() {
    std::vector<Packet*> made;  // every packet made, freed at the end
    auto make = [&](char c) {
      Packet* p = worker().pool().make(reinterpret_cast<const uint8_t*>(&c), 1);
      if (p) made.push_back(p);
      return p;
    };
    auto matches = [](const char* set) {
      return [set](const Packet* p) { return std::string(set).find(char(p->data()[0])) != std::string::npos; };
    };
    std::string err;
    auto check = [&](bool ok, const char* what) {
      if (!ok && err.empty()) err = fmt::format("test '{}' failed", what);
      return ok;
    };
    // packets the queue hands back must be the ones expected, in order
    auto got = [&](Packet* p, char c, const char* what) { return check(p && p->data()[0] == uint8_t(c), what); };
    auto prepare = [&]() {
      for (char c : std::string("abcde"))
        if (Packet* p = make(c); !p || !q_->enq(p)) return check(false, "PREPARE_Q: enq");
      return check(q_->size() == 5, "_q->size() == 5");
    };
    auto deq_all = [&](const char* s) {
      for (const char* c = s; *c; ++c)
        if (!got(q_->deq(), *c, s)) return false;
      return true;
    };
    std::vector<Packet*> v;
    bool ok = check(q_->size() == 0, "_q->size() == 0") && prepare() && deq_all("abcde") && prepare() &&
              got(q_->yank1(matches("c")), 'c', "_q->yank1(Foo(\"c\"))") && check(q_->size() == 4, "size 4") &&
              deq_all("abde") && prepare() && check(!q_->yank1(matches("f")), "_q->yank1(Foo(\"f\")) is null") &&
              deq_all("abcde") && prepare() && deq_all("abcd") &&
              got(q_->yank1(matches("hgkje")), 'e', "_q->yank1(Foo(\"hgkje\"))") && check(q_->size() == 0, "size 0");
    if (ok) {
      prepare();
      q_->yank(matches("ade"), v);
      ok = check(v.size() == 3 && q_->size() == 2, "yank(ade)") && got(v[0], 'e', "v[0]") && got(v[1], 'd', "v[1]") &&
           got(v[2], 'a', "v[2]") && deq_all("bc");
    }
    if (ok) {
      v.clear();
      prepare();
      q_->yank(matches("fhq"), v);
      ok = check(v.empty(), "yank(fhq)") && deq_all("abcde");
    }
    if (ok) {
      v.clear();
      prepare();
      q_->yank(matches("edcba"), v);
      ok = check(v.size() == 5 && q_->size() == 0, "yank(edcba)") && got(v[0], 'e', "v[0]") && got(v[1], 'd', "v[1]") &&
           got(v[2], 'c', "v[2]") && got(v[3], 'b', "v[3]") && got(v[4], 'a', "v[4]");
    }
    // Leave the queue as found: empty (the packets were all made here).
    while (q_->deq()) {}
    for (Packet* p : made) worker().pool().free(p);
    return err;
  }

  std::string name_;
  Queue* q_ = nullptr;
  Timer timer_;
};
SHOAL_ELEMENT(QueueYankTest, .name = "QueueYankTest", .ports = "0/0", .processing = "a/a",
              .summary = "checks a Queue's enq, deq and yank functions (Click's test element)",
              .description =
                  "At start-up, fills the named Queue with one-byte packets time after time and checks what "
                  "its enq, deq, yank1 (the first match from the head) and yank (every match, last first) give "
                  "back; prints 'All tests pass!' to standard error, or the check that failed (then the run "
                  "fails). The packets are made and freed here, never sent: the queue should hold nothing else "
                  "while it runs.",
              .args = {{"QUEUE", "element", "a Queue (or SimpleQueue, NotifierQueue...)"}}, .handlers = {},
              .example = "Idle -> q :: Queue(6) -> Idle;\nQueueYankTest(q);");

}  // namespace shoal

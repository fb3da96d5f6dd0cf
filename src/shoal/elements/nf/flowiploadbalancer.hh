// FlowIPLoadBalancer: spreads connections to a virtual address over
// backends (Maglev's consistent hashing by default), on the flow layer:
// the backend chosen for a connection stays in its flow's state.
// FlowIPLoadBalancerReverse finds that state again for the backends'
// replies.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shoal/core/element.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/kernels/flowlb.hh"
#include "shoal/nf/maglev.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"

namespace shoal {

// A connection's state in the flow layer.
using LbState = k::LbState;

class FlowIPLoadBalancer : public offload::OffloadableElement<Element> {
 public:
  void configure(Args& a) override;
  void initialize() override;
  void push(int port, PacketBatch* b) override;
  void cpu_push(int port, PacketBatch* b) override;
  void add_handlers() override;
  // On a device (NBA's form), one thread per flow: kernels/steps/flow_lb.hh.
  void offload_declare(offload::Plan& plan) override;
  bool offload_launch(offload::Launch& L, std::string& err) override;
  void offload_post(offload::Aggregate& a, size_t step) override;

  FlowIPManager& manager() { return *mgr_; }
  uint32_t state_offset() const { return off_; }
  uint32_t vip() const { return vip_; }
  bool has_vip() const { return has_vip_; }

 private:
  enum class Mode { Maglev, Hash, RoundRobin };
  // One backend set (replaced whole when backends come or go).
  struct Set {
    std::vector<uint32_t> addrs;   // in the order given
    std::vector<uint32_t> sorted;  // for membership tests
    nf::MaglevTable maglev;
    std::unique_ptr<std::atomic<uint64_t>[]> flows;  // connections assigned, per backend
    uint32_t version = 1;
    k::LbSet view;  // over the vectors above (host memory)
  };
  struct Shared {
    std::mutex mu;
    std::shared_ptr<const Set> set;
    std::atomic<uint32_t> version{0};
  };
  int balance(flow::FlowTable& t, Packet* p);
  void count(const Set& s, uint32_t note);
  void refresh();
  std::shared_ptr<Set> make(std::vector<uint32_t> addrs, std::string& err) const;
  void install(std::shared_ptr<Set> s);
  void change(const std::string& what, const std::string& v);

  Mode mode_ = Mode::Maglev;
  uint32_t table_size_ = 65537;
  uint32_t vip_ = 0;
  bool has_vip_ = false;
  std::vector<uint32_t> initial_;
  FlowIPManager* mgr_ = nullptr;
  uint32_t off_ = 0;
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<const Set> set_;
  std::shared_ptr<const Set> launched_;  // the set the aggregate being processed was launched with
  offload::TableMirror mirror_;
  uint32_t range_ = 0, state_rec_ = 0, block_ = 0;
  uint64_t rr_ = 0;
  uint16_t r_no_flow_ = 0, r_no_backend_ = 0, r_not_ipv4_ = 0;
  Stat balanced_, reassigned_, passed_;
};

}  // namespace shoal

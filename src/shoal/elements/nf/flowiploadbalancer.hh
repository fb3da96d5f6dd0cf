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
#include "shoal/nf/maglev.hh"

namespace shoal {

// A connection's state in the flow layer.
struct LbState {
  uint32_t addr;     // the backend (host order); 0: none chosen yet
  uint32_t version;  // the backend set it was last checked against
};

class FlowIPLoadBalancer : public Element {
 public:
  void configure(Args& a) override;
  void initialize() override;
  void push(int port, PacketBatch* b) override;
  void add_handlers() override;

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
  };
  struct Shared {
    std::mutex mu;
    std::shared_ptr<const Set> set;
    std::atomic<uint32_t> version{0};
  };
  int balance(flow::FlowTable& t, Packet* p);
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
  uint64_t rr_ = 0;
  uint16_t r_no_flow_ = 0, r_no_backend_ = 0, r_not_ipv4_ = 0;
  Stat balanced_, reassigned_, passed_;
};

}  // namespace shoal

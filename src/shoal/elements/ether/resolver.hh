// The machinery ARPQuerier and IP6NDSolicitor share: a next-hop cache
// shared by every worker's copy, packets waiting (per worker, bounded) for an
// answer, queries sent and retried at most every RETRY_INTERVAL, RETRIES
// times, then the waiting packets dropped. The protocol parts (the key of a
// packet, addresses known without asking, the query packet, learning from
// answers) come from the derived class D:
//   bool   key_of(Packet*, Key&)            false: no next hop (dropped)
//   bool   fixed_mac(const Key&, uint8_t*)  broadcast/multicast: no query
//   Packet* make_query(const Key&)          nullptr: pool exhausted
//   void   parse_answers(PacketBatch*, std::vector<std::pair<Key, Mac>>&)
//   static constexpr uint16_t kEtherType
#pragma once
#include <array>
#include <map>
#include <mutex>
#include <vector>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

using Mac = std::array<uint8_t, 6>;

template <class Key>
struct NeighborCache {
  struct Entry {
    Mac eth{};
    bool known = false;
    uint64_t updated_ns = 0;     // when the answer came
    uint64_t last_query_ns = 0;  // when a query last went out (any worker)
    uint32_t queries = 0;        // queries since the entry was last known
  };
  std::mutex mu;
  std::map<Key, Entry> map;
};

template <class D, class Key>
class NeighborResolver : public Element {
 public:
  // Reads TIMEOUT, RETRY_INTERVAL, RETRIES, CAPACITY, ENTRY_PACKET_CAPACITY.
  void read_resolver_args(Args& a, uint64_t default_timeout_ns) {
    Duration timeout{default_timeout_ns}, retry{1'000'000'000ull};
    a.read("TIMEOUT", timeout).read("RETRY_INTERVAL", retry).read("RETRIES", retries_);
    a.read("CAPACITY", capacity_).read("ENTRY_PACKET_CAPACITY", entry_capacity_);
    timeout_ns_ = timeout.ns;
    retry_ns_ = retry.ns;
    if (retries_ == 0) a.fail("RETRIES must be at least 1");
    if (entry_capacity_ == 0) entry_capacity_ = capacity_;
  }
  // `proto` names the drop reasons ("arp" or "nd").
  void init_resolver(const char* proto) {
    cache_ = shared_state<NeighborCache<Key>>(this);
    timer_.owner = this;
    r_full_ = add_drop_reason(fmt::format("{}-queue-full", proto));
    r_noreply_ = add_drop_reason(fmt::format("{}-no-reply", proto));
    r_room_ = add_drop_reason("no-headroom");
    r_consumed_ = add_drop_reason(fmt::format("{}-consumed", proto));
    r_bad_ = add_drop_reason(fmt::format("bad-{}", proto));
    r_pool_ = add_drop_reason("pool-exhausted");
    r_nodst_ = add_drop_reason("no-destination");
  }

  // Time since t; 0 when t is later than now (a worker's clock is read once
  // per task, so an answer learned by another task can look newer).
  static uint64_t age(uint64_t now, uint64_t t) { return now > t ? now - t : 0; }

  void push(int port, PacketBatch* b) override {
    if (port == 1) return learn(b);
    D* d = static_cast<D*>(this);
    const uint64_t now = worker().now_ns();
    std::vector<Key> ask;
    {
      std::lock_guard<std::mutex> g(cache_->mu);
      b->for_each([&](uint32_t i, Packet* p) {
        Key dst;
        b->result(i) = 0;
        if (!d->key_of(p, dst)) return void(b->result(i) = int16_t(drop_code(r_nodst_)));
        uint8_t fixed[6];
        if (d->fixed_mac(dst, fixed)) {
          if (!encap(p, fixed)) b->result(i) = int16_t(drop_code(r_room_));
          return;
        }
        auto it = cache_->map.find(dst);
        if (it != cache_->map.end() && it->second.known && age(now, it->second.updated_ns) < timeout_ns_) {
          if (!encap(p, it->second.eth.data())) b->result(i) = int16_t(drop_code(r_room_));
          return;
        }
        b->kill(i);
        enqueue(dst, p);
        auto& e = cache_->map[dst];
        if (e.known && age(now, e.updated_ns) >= timeout_ns_) e.known = false, e.queries = 0;  // expired
        if (e.last_query_ns == 0 || age(now, e.last_query_ns) >= retry_ns_) {
          e.last_query_ns = now;
          ++e.queries;
          ask.push_back(dst);
        }
      });
    }
    if (b->empty())
      recycle(b);
    else
      dispatch(b);
    send_queries(ask);
    if (!pending_.empty() && !timer_.scheduled) worker().schedule(timer_, now + kPollNs);
  }

  void run_timer(Timer&) override {
    const uint64_t now = worker().now_ns();
    std::vector<Key> ask, give_up;
    std::vector<std::pair<Key, Mac>> ready;
    {
      std::lock_guard<std::mutex> g(cache_->mu);
      for (auto& [dst, q] : pending_) {
        auto& e = cache_->map[dst];
        if (e.known) {
          ready.push_back({dst, e.eth});
        } else if (age(now, e.last_query_ns) >= retry_ns_) {
          if (e.queries >= retries_) {
            give_up.push_back(dst);
            e.queries = 0;
          } else {
            e.last_query_ns = now;
            ++e.queries;
            ask.push_back(dst);
          }
        }
      }
    }
    for (auto& [dst, m] : ready) release(dst, m.data());
    for (auto& dst : give_up) {
      auto it = pending_.find(dst);
      for (Packet* p : it->second) drop(p, r_noreply_);
      queued_ -= it->second.size();
      pending_.erase(it);
    }
    send_queries(ask);
    if (!pending_.empty()) worker().schedule(timer_, now + kPollNs);
  }

  size_t packets_held() const override { return queued_; }
  void cleanup() override {
    for (auto& [dst, q] : pending_)
      for (Packet* p : q) worker().pool().free(p);
    pending_.clear();
  }
  void add_handlers() override {
    add_stat_handler("queries", queries_);
    add_stat_handler("responses", responses_);
    add_read_handler(
        "count", [this] { return std::to_string(queued_); }, Agg::Sum, true);
    add_read_handler("table", [this] {
      std::lock_guard<std::mutex> g(cache_->mu);
      std::string s;
      uint64_t now = monotonic_ns();
      for (auto& [key, e] : cache_->map)
        s += fmt::format("{} {} {}\n", D::format_key(key), e.known && age(now, e.updated_ns) < timeout_ns_ ? 1 : 0,
                         e.known ? format_ether(e.eth.data()) : std::string("-"));
      return s;
    });
    add_write_handler("insert", [this](const std::string& v) {
      std::vector<Key> keys;
      Mac eth;
      std::string err;
      if (!D::parse_entry(trim(v), keys, eth, err)) throw std::runtime_error(err);
      std::lock_guard<std::mutex> g(cache_->mu);
      for (auto& key : keys) {
        auto& e = cache_->map[key];
        e.eth = eth;
        e.known = true;
        e.updated_ns = monotonic_ns();
      }
    });
    add_write_handler("clear", [this](const std::string&) {
      std::lock_guard<std::mutex> g(cache_->mu);
      cache_->map.clear();
    });
  }

 protected:
  bool encap(Packet* p, const uint8_t* dst_eth) {
    uint8_t* e = p->push(14);
    if (!e) return false;
    std::memcpy(e, dst_eth, 6);
    std::memcpy(e + 6, eth_.data(), 6);
    k::store_be16(e + 12, D::kEtherType);
    p->set_mac_header(0);
    return true;
  }
  Mac eth_{};
  uint16_t r_bad_ = 0, r_consumed_ = 0, r_pool_ = 0;

 private:
  static constexpr uint64_t kPollNs = 5'000'000;  // how often waiting packets look for an answer

  void enqueue(const Key& dst, Packet* p) {
    auto& q = pending_[dst];
    if (q.size() >= entry_capacity_ || queued_ >= capacity_) {
      if (q.empty()) return drop(p, r_full_);
      drop(q.front(), r_full_);  // the oldest makes room, as Linux's neighbour queue does
      q.erase(q.begin());
      --queued_;
    }
    q.push_back(p);
    ++queued_;
  }
  void release(const Key& dst, const uint8_t* eth) {
    auto it = pending_.find(dst);
    if (it == pending_.end()) return;
    PacketBatch* out = new_batch();
    for (Packet* p : it->second) {
      --queued_;
      if (!encap(p, eth)) {
        drop(p, r_room_);
        continue;
      }
      out->append(p);
      if (out->full()) output_push(0, out), out = new_batch();
    }
    pending_.erase(it);
    if (out->empty())
      recycle(out);
    else
      output_push(0, out);
  }
  void send_queries(const std::vector<Key>& ask) {
    if (ask.empty()) return;
    PacketBatch* out = new_batch();
    for (auto& dst : ask) {
      Packet* q = static_cast<D*>(this)->make_query(dst);
      if (!q) {
        count_lost(r_pool_);
        continue;
      }
      created();
      q->set_mac_header(0);
      queries_.add();
      out->append(q);
      if (out->full()) output_push(noutputs() - 1, out), out = new_batch();
    }
    if (out->empty())
      recycle(out);
    else
      output_push(noutputs() - 1, out);
  }
  // Input 1: answers from the wire teach the cache (only answers to our own
  // queries and refreshes of what we know); waiting packets then leave.
  void learn(PacketBatch* b) {
    std::vector<std::pair<Key, Mac>> got;
    static_cast<D*>(this)->parse_answers(b, got);
    recycle(b);
    if (got.empty()) return;
    const uint64_t now = worker().now_ns();
    {
      std::lock_guard<std::mutex> g(cache_->mu);
      for (auto& [key, m] : got) {
        if (cache_->map.find(key) == cache_->map.end() && pending_.find(key) == pending_.end()) continue;
        auto& e = cache_->map[key];
        e.eth = m;
        e.known = true;
        e.updated_ns = now;
        e.queries = 0;
        responses_.add();
      }
    }
    for (auto& [key, m] : got) release(key, m.data());
  }

  uint64_t timeout_ns_ = 0, retry_ns_ = 0;
  uint32_t retries_ = 3, capacity_ = 2048, entry_capacity_ = 64;
  std::shared_ptr<NeighborCache<Key>> cache_;
  std::map<Key, std::vector<Packet*>> pending_;
  size_t queued_ = 0;
  Timer timer_;
  uint16_t r_full_ = 0, r_noreply_ = 0, r_room_ = 0, r_nodst_ = 0;
  Stat queries_, responses_;
};

}  // namespace shoal

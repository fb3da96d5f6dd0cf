// ARP (RFC 826): ARPQuerier resolves next hops and encapsulates IP packets
// in Ethernet; ARPResponder answers requests for the router's addresses.
#include <fmt/format.h>

#include <unordered_map>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

namespace {
constexpr uint32_t kArpLen = 42;  // Ethernet + ARP for IPv4 over Ethernet

bool is_arp_ipv4(const uint8_t* d, uint32_t len) {
  return len >= kArpLen && k::load_be16(d + 12) == 0x0806 && k::load_be16(d + 14) == 1 &&
         k::load_be16(d + 16) == 0x0800 && d[18] == 6 && d[19] == 4;
}

// "ADDR[/MASK]..." words into (addr, mask) pairs; false on a bad word.
bool parse_addr_words(std::string_view s, std::vector<std::pair<uint32_t, uint32_t>>& out, EtherAddr& eth,
                      std::string& err) {
  std::vector<std::string_view> w;
  for (size_t i = 0; i < s.size();) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t e = s.find(' ', i);
    if (e == std::string_view::npos) e = s.size();
    if (e > i) w.push_back(s.substr(i, e - i));
    i = e;
  }
  if (w.size() < 2 || !parse_ether(w.back(), eth)) {
    err = fmt::format("'{}' is not 'ADDR[/MASK]... ETH'", s);
    return false;
  }
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    std::string_view a = w[i];
    size_t sl = a.find('/');
    IPv4Addr x;
    uint32_t mask = 0xffffffffu;
    if (!parse_ipv4(a.substr(0, sl), x)) return err = fmt::format("bad address '{}'", a), false;
    if (sl != std::string_view::npos) {
      uint64_t n;
      IPv4Addr m;
      if (parse_uint(a.substr(sl + 1), n) && n <= 32)
        mask = n ? ~uint32_t(0) << (32 - n) : 0;
      else if (parse_ipv4(a.substr(sl + 1), m))
        mask = m.host();
      else
        return err = fmt::format("bad mask in '{}'", a), false;
    }
    out.push_back({x.host() & mask, mask});
  }
  return true;
}
}  // namespace

// ---------------------------------------------------------------- ARPResponder
class ARPResponder : public PacketElement<ARPResponder> {
 public:
  void configure(Args& a) override {
    for (ArgItem* it : a.rest_positional()) {
      std::vector<std::pair<uint32_t, uint32_t>> addrs;
      EtherAddr eth;
      std::string err;
      if (!parse_addr_words(it->text, addrs, eth, err)) a.fail(*it, err);
      for (auto& [ad, m] : addrs) entries_.push_back({ad, m, eth});
    }
    a.complete();
    if (entries_.empty()) a.fail("at least one 'ADDR ETH' entry is required");
  }
  void initialize() override { r_ = add_drop_reason("not-for-us"); }
  int process(Packet* p) {
    uint8_t* d = p->data();
    int other = noutputs() > 1 ? 1 : drop_code(r_);
    if (!is_arp_ipv4(d, p->length()) || k::load_be16(d + 20) != 1) return other;
    uint32_t target = k::load_be32(d + 38);
    const Entry* e = nullptr;
    for (auto& x : entries_)
      if ((target & x.mask) == x.addr) {
        e = &x;
        break;
      }
    if (!e) return other;
    // The request becomes the reply in place.
    uint8_t sha[6], spa[4];
    std::memcpy(sha, d + 22, 6);
    std::memcpy(spa, d + 28, 4);
    std::memcpy(d, sha, 6);
    std::memcpy(d + 6, e->eth.b.data(), 6);
    k::store_be16(d + 20, 2);
    std::memcpy(d + 22, e->eth.b.data(), 6);
    k::store_be32(d + 28, target);
    std::memcpy(d + 32, sha, 6);
    std::memcpy(d + 38, spa, 4);
    replies_.add();
    return 0;
  }
  void add_handlers() override { add_stat_handler("replies", replies_); }

 private:
  struct Entry {
    uint32_t addr, mask;
    EtherAddr eth;
  };
  std::vector<Entry> entries_;
  uint16_t r_ = 0;
  Stat replies_;
};
SHOAL_ELEMENT(ARPResponder, .name = "ARPResponder", .ports = "1/1-2", .processing = "a/ah",
              .summary = "answers ARP requests",
              .description = "Each argument is 'ADDR[/MASK] [ADDR...] ETH'. An ARP request (Ethernet frame) for "
                             "one of the addresses becomes, in place, the reply from ETH to the asker. Other "
                             "packets leave on output 1 if it exists, else are dropped ('not-for-us').",
              .args = {{"ENTRY...", "ADDR[/MASK]... ETH", "addresses answered with ETH"}},
              .handlers = {{"replies", "r", "replies made"}},
              .example = "c[0] -> ARPResponder(10.0.0.1 02:00:00:00:00:01) -> out;");

// ---------------------------------------------------------------- ARPQuerier
// The cache is shared by every worker's copy; packets waiting for an answer
// stay with the worker that owns them and leave when it sees the answer.
struct ArpCache {
  struct Entry {
    uint8_t eth[6] = {};
    bool known = false;
    uint64_t updated_ns = 0;     // when the answer came
    uint64_t last_query_ns = 0;  // when a query last went out (any worker)
    uint32_t queries = 0;        // queries since the entry was last known
  };
  std::mutex mu;
  std::unordered_map<uint32_t, Entry> map;
};

class ARPQuerier : public Element {
 public:
  void configure(Args& a) override {
    IPv4Addr ip;
    EtherAddr eth;
    Duration timeout{300'000'000'000ull}, retry{1'000'000'000ull};
    IPv4Addr bcast;
    bool have_bcast = a.has("BROADCAST");
    a.read_mp("IP", ip).read_mp("ETH", eth);
    a.read("TIMEOUT", timeout).read("RETRY_INTERVAL", retry).read("RETRIES", retries_);
    a.read("CAPACITY", capacity_).read("ENTRY_PACKET_CAPACITY", entry_capacity_).read("BROADCAST", bcast);
    a.complete();
    ip_ = ip.host();
    std::memcpy(eth_, eth.b.data(), 6);
    timeout_ns_ = timeout.ns;
    retry_ns_ = retry.ns;
    if (have_bcast) bcast_ = bcast.host();
    if (retries_ == 0) a.fail("RETRIES must be at least 1");
    if (entry_capacity_ == 0) entry_capacity_ = capacity_;
  }
  void initialize() override {
    cache_ = shared_state<ArpCache>(this);
    timer_.owner = this;
    r_full_ = add_drop_reason("arp-queue-full");
    r_noreply_ = add_drop_reason("arp-no-reply");
    r_room_ = add_drop_reason("no-headroom");
    r_arp_ = add_drop_reason("arp-consumed");
    r_bad_ = add_drop_reason("bad-arp");
    r_pool_ = add_drop_reason("pool-exhausted");
    r_nodst_ = add_drop_reason("no-destination");
  }
  void push(int port, PacketBatch* b) override {
    if (port == 1) return learn(b);
    const uint64_t now = worker().now_ns();
    std::vector<uint32_t> ask;
    {
      std::lock_guard<std::mutex> g(cache_->mu);
      b->for_each([&](uint32_t i, Packet* p) {
        uint32_t dst = k::load_be32(p->anno().dst_ip);
        b->result(i) = 0;
        if (dst == 0) return void(b->result(i) = int16_t(drop_code(r_nodst_)));
        if (dst == 0xffffffffu || dst == bcast_) {
          static const uint8_t all[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
          if (!encap(p, all)) b->result(i) = int16_t(drop_code(r_room_));
          return;
        }
        auto it = cache_->map.find(dst);
        if (it != cache_->map.end() && it->second.known && now - it->second.updated_ns < timeout_ns_) {
          if (!encap(p, it->second.eth)) b->result(i) = int16_t(drop_code(r_room_));
          return;
        }
        b->kill(i);
        enqueue(dst, p);
        auto& e = cache_->map[dst];
        if (e.known && now - e.updated_ns >= timeout_ns_) e.known = false, e.queries = 0;  // expired
        if (e.last_query_ns == 0 || now - e.last_query_ns >= retry_ns_) {
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
    std::vector<uint32_t> ask;
    std::vector<std::pair<uint32_t, std::array<uint8_t, 6>>> ready;
    std::vector<uint32_t> give_up;
    {
      std::lock_guard<std::mutex> g(cache_->mu);
      for (auto& [dst, q] : pending_) {
        auto& e = cache_->map[dst];
        if (e.known) {
          std::array<uint8_t, 6> m;
          std::memcpy(m.data(), e.eth, 6);
          ready.push_back({dst, m});
        } else if (now - e.last_query_ns >= retry_ns_) {
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
    for (uint32_t dst : give_up) {
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
    add_read_handler("count", [this] { return std::to_string(queued_); }, Agg::Sum, true);
    add_read_handler("table", [this] {
      std::lock_guard<std::mutex> g(cache_->mu);
      std::string s;
      uint64_t now = monotonic_ns();
      for (auto& [ip, e] : cache_->map) {
        uint8_t a[4] = {uint8_t(ip >> 24), uint8_t(ip >> 16), uint8_t(ip >> 8), uint8_t(ip)};
        s += fmt::format("{} {} {}\n", format_ipv4(a), e.known && now - e.updated_ns < timeout_ns_ ? 1 : 0,
                         e.known ? format_ether(e.eth) : std::string("-"));
      }
      return s;
    });
    add_write_handler("insert", [this](const std::string& v) {
      std::vector<std::pair<uint32_t, uint32_t>> addrs;
      EtherAddr eth;
      std::string err;
      if (!parse_addr_words(trim(v), addrs, eth, err)) throw std::runtime_error(err);
      std::lock_guard<std::mutex> g(cache_->mu);
      for (auto& [ad, m] : addrs) {
        auto& e = cache_->map[ad];
        std::memcpy(e.eth, eth.b.data(), 6);
        e.known = true;
        e.updated_ns = monotonic_ns();
      }
    });
    add_write_handler("clear", [this](const std::string&) {
      std::lock_guard<std::mutex> g(cache_->mu);
      cache_->map.clear();
    });
  }

 private:
  static constexpr uint64_t kPollNs = 5'000'000;  // how often waiting packets look for an answer

  bool encap(Packet* p, const uint8_t* dst_eth) {
    uint8_t* e = p->push(14);
    if (!e) return false;
    std::memcpy(e, dst_eth, 6);
    std::memcpy(e + 6, eth_, 6);
    k::store_be16(e + 12, 0x0800);
    p->set_mac_header(0);
    return true;
  }
  void enqueue(uint32_t dst, Packet* p) {
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
  void release(uint32_t dst, const uint8_t* eth) {
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
  void send_queries(const std::vector<uint32_t>& ask) {
    if (ask.empty()) return;
    PacketBatch* out = new_batch();
    for (uint32_t dst : ask) {
      Packet* q = worker().pool().alloc(kArpLen);
      if (!q) {
        count_lost(r_pool_);
        continue;
      }
      created();
      uint8_t* d = q->data();
      std::memset(d, 0xff, 6);
      std::memcpy(d + 6, eth_, 6);
      k::store_be16(d + 12, 0x0806);
      k::store_be16(d + 14, 1);
      k::store_be16(d + 16, 0x0800);
      d[18] = 6;
      d[19] = 4;
      k::store_be16(d + 20, 1);
      std::memcpy(d + 22, eth_, 6);
      k::store_be32(d + 28, ip_);
      std::memset(d + 32, 0, 6);
      k::store_be32(d + 38, dst);
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
  // Input 1: ARP packets. Replies (and requests aimed at us, RFC 826's
  // merge) teach the cache; waiting packets then leave.
  void learn(PacketBatch* b) {
    std::vector<std::pair<uint32_t, std::array<uint8_t, 6>>> got;
    b->for_each([&](uint32_t, Packet* p) {
      const uint8_t* d = p->data();
      if (!is_arp_ipv4(d, p->length())) return drop(p, r_bad_);
      uint16_t op = k::load_be16(d + 20);
      uint32_t spa = k::load_be32(d + 28), tpa = k::load_be32(d + 38);
      if ((op == 2 || op == 1) && spa != 0 && (tpa == ip_ || op == 2)) {
        std::array<uint8_t, 6> m;
        std::memcpy(m.data(), d + 22, 6);
        if (!(m[0] & 1)) got.push_back({spa, m});
      }
      drop(p, r_arp_);
    });
    recycle(b);
    if (got.empty()) return;
    const uint64_t now = worker().now_ns();
    {
      std::lock_guard<std::mutex> g(cache_->mu);
      for (auto& [ip, m] : got) {
        auto it = cache_->map.find(ip);
        // Only answers we asked for, or refreshes of what we know (no cache
        // filling by unsolicited replies).
        if (it == cache_->map.end() && pending_.find(ip) == pending_.end()) continue;
        auto& e = cache_->map[ip];
        std::memcpy(e.eth, m.data(), 6);
        e.known = true;
        e.updated_ns = now;
        e.queries = 0;
        responses_.add();
      }
    }
    for (auto& [ip, m] : got) release(ip, m.data());
  }

  uint32_t ip_ = 0, bcast_ = 0xffffffffu;
  uint8_t eth_[6] = {};
  uint64_t timeout_ns_ = 0, retry_ns_ = 0;
  uint32_t retries_ = 3, capacity_ = 2048, entry_capacity_ = 64;
  std::shared_ptr<ArpCache> cache_;
  std::unordered_map<uint32_t, std::vector<Packet*>> pending_;
  size_t queued_ = 0;
  Timer timer_;
  uint16_t r_full_ = 0, r_noreply_ = 0, r_room_ = 0, r_arp_ = 0, r_bad_ = 0, r_pool_ = 0, r_nodst_ = 0;
  Stat queries_, responses_;
};
SHOAL_ELEMENT(ARPQuerier, .name = "ARPQuerier", .ports = "2/1-2", .processing = "h/h",
              .summary = "resolves next hops with ARP and adds Ethernet headers",
              .description =
                  "Input 0 takes IP packets whose DST_IP annotation is the next hop; input 1 takes ARP packets "
                  "(replies from the wire). A known next hop (answer younger than TIMEOUT) gets the Ethernet "
                  "header and the packet leaves on output 0; 255.255.255.255 and BROADCAST go to the Ethernet "
                  "broadcast address. Otherwise the packet waits (at most ENTRY_PACKET_CAPACITY per next hop "
                  "and CAPACITY in all; the oldest makes room, 'arp-queue-full') while a query goes out, again "
                  "every RETRY_INTERVAL, RETRIES times in all; then the waiting packets are dropped "
                  "('arp-no-reply'). Queries leave on output 1 if it exists, else output 0. The cache is shared "
                  "by all workers; it learns only answers to its own queries and refreshes of what it knows. ARP "
                  "packets on input 1 are consumed ('arp-consumed').",
              .args = {{"IP", "IPv4 address", "this interface's address"},
                       {"ETH", "Ethernet address", "this interface's Ethernet address"},
                       {"TIMEOUT", "time", "how long an answer is good (default 300 s)"},
                       {"RETRY_INTERVAL", "time", "time between queries (default 1 s)"},
                       {"RETRIES", "unsigned", "queries before giving up (default 3)"},
                       {"CAPACITY", "unsigned", "waiting packets in all (default 2048)"},
                       {"ENTRY_PACKET_CAPACITY", "unsigned", "waiting packets per next hop (default 64)"},
                       {"BROADCAST", "IPv4 address", "the interface's broadcast address"}},
              .handlers = {{"table", "r", "cache: IP, valid, Ethernet address"},
                           {"insert", "w", "ADDR ETH: add a static answer"},
                           {"clear", "w", "empty the cache"},
                           {"queries", "r", "queries sent"},
                           {"responses", "r", "answers learnt"},
                           {"count", "r", "packets waiting"}},
              .example = "fr -> [0]arpq :: ARPQuerier(10.0.1.1, 02:00:00:00:01:01) -> out1; "
                         "c1[1] -> [1]arpq;");

}  // namespace shoal

// ARPQuerier: resolves next hops with ARP (RFC 826) and encapsulates IP
// packets in Ethernet, with Click's ARP table: entries age out after
// TIMEOUT, queries for one address go out at most every 100 ms (every 2 s
// after ten unanswered), a known address is polled again once it is older
// than POLL_TIMEOUT, and waiting packets are bounded by CAPACITY (in all),
// ENTRY_PACKET_CAPACITY (per address) and ENTRY_CAPACITY (addresses).
#include <fmt/format.h>

#include <deque>
#include <list>
#include <map>
#include <mutex>

#include "shoal/core/graph.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/ether/arp.hh"
#include "shoal/elements/ether/arptable.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

using namespace arp;

class ARPQuerier : public Element {
 public:
  void configure(Args& a) override {
    Duration timeout{300 * kSec}, poll{60 * kSec};
    IPv4Addr bcast;
    bool have_bcast = a.has("BROADCAST");
    a.read("TABLE", table_name_);
    a.read("CAPACITY", capacity_)
        .read("ENTRY_CAPACITY", entry_capacity_)
        .read("ENTRY_PACKET_CAPACITY", entry_packet_capacity_)
        .read("CAPACITY_SLIM_FACTOR", slim_factor_)
        .read("TIMEOUT", timeout)
        .read("POLL_TIMEOUT", poll)
        .read("BROADCAST_POLL", broadcast_poll_)
        .read("BROADCAST", bcast);
    // 'IP ETH', or one name that has both (AddressInfo).
    std::string ip_word, eth_word;
    a.read_mp("IP", ip_word).read_p("ETH", eth_word);
    a.complete();
    if (slim_factor_ == 0) a.fail("CAPACITY_SLIM_FACTOR cannot be zero");
    if (eth_word.empty()) eth_word = ip_word;
    uint32_t mask = 0;
    if (!parse_ipv4_prefix(trim(ip_word), ip_, mask, true)) a.fail("IP: expected an IP address");
    EtherAddr eth;
    if (!parse_ether(trim(eth_word), eth)) a.fail("ETH: expected an Ethernet address");
    eth_ = eth.b;
    bcast_ = have_bcast ? bcast.host() : (ip_ | ~mask);
    if (!have_bcast && bcast_ == ip_) bcast_ = 0xffffffffu;
    timeout_ns_ = timeout.ns;
    poll_ns_ = poll.ns;
  }
  void initialize() override {
    if (!table_name_.empty()) {
      // TABLE: an ARPTable element's table (found from this element's
      // compound outwards), with its own TIMEOUT and ENTRY_CAPACITY.
      Element* t = find_element_from(*this, table_name_);
      if (!t || t->class_name() != "ARPTable")
        throw std::runtime_error(fmt::format("TABLE '{}' is not an ARPTable element", table_name_));
      table_ = shared_state_named<ArpTable>(this, table_key(t->name()));
    } else {
      bool first = false;
      table_ = shared_state<ArpTable>(this, &first);
      if (first) {
        table_->timeout_ns = timeout_ns_;
        table_->entry_capacity = entry_capacity_;
      }
    }
    r_expired_ = add_drop_reason("arp-expired");
    r_full_ = add_drop_reason("arp-queue-full");
    r_nodst_ = add_drop_reason("no-destination");
    r_room_ = add_drop_reason("no-headroom");
    r_consumed_ = add_drop_reason("arp-consumed");
    r_bad_ = add_drop_reason("bad-arp");
    r_pool_ = add_drop_reason("pool-exhausted");
    timer_.owner = this;
    timer_.background = true;
    // Click's expiry sweep: every TIMEOUT (whole seconds) plus one second.
    if (timeout_ns_) worker().schedule(timer_, worker().now_ns() + sweep_ns());
  }
  void push(int port, PacketBatch* b) override {
    if (port == 1) return learn(b);
    const uint64_t now = worker().now_ns();
    std::vector<Poll> polls;
    {
      std::lock_guard<std::mutex> g(table_->mu);
      forget_gone();
      b->for_each([&](uint32_t i, Packet* p) { b->result(i) = int16_t(resolve(b, i, p, now, polls)); });
    }
    // Queries first: Click sends one before the packet that asked for it.
    send_queries(polls);
    if (b->empty())
      recycle(b);
    else
      dispatch(b);
  }
  void run_timer(Timer&) override {
    const uint64_t now = worker().now_ns();
    {
      std::lock_guard<std::mutex> g(table_->mu);
      table_->slim(now);
      forget_gone();
    }
    if (timeout_ns_) worker().schedule(timer_, now + sweep_ns());
  }
  size_t packets_held() const override { return held_; }
  // Hot swap: the new configuration's querier, for the same addresses,
  // takes the old one's table entries (an ARPTable's go with the ARPTable)
  // and counts (Click's take_state); packets waiting for an answer stay
  // with the old configuration.
  void hot_swapped(Element* old) override {
    auto* o = dynamic_cast<ARPQuerier*>(old);
    if (!o || o->ip_ != ip_ || o->eth_ != eth_ || o->bcast_ != bcast_ || !o->table_) return;
    if (table_name_.empty() && o->table_name_.empty() && worker().id() == 0) table_->take(*o->table_);
    queries_.set(o->queries_.get());
    responses_.set(o->responses_.get());
    drops_.set(o->drops_.get());
  }
  void cleanup() override {
    for (auto& [ip, q] : waiting_)
      for (Packet* p : q) worker().pool().free(p);
    waiting_.clear();
    held_ = 0;
  }
  void add_handlers() override {
    add_stat_handler("queries", queries_);
    add_stat_handler("responses", responses_);
    add_stat_handler("drops", drops_);
    add_read_handler(
        "length", [this] { return std::to_string(held_); }, Agg::Sum, true);
    add_table_handlers(*this, [this]() -> ArpTable& { return *table_; });
    add_read_handler("stats", [this] {
      return fmt::format("{} packets killed\n{} ARP queries sent\n", drops_.get(), queries_.get());
    });
    add_read_handler("ipaddr", [this] { return ip_text(ip_); });
    add_write_handler("ipaddr", [this](const std::string& v) {
      IPv4Addr a;
      if (!parse_ipv4(trim(v), a)) throw std::runtime_error("expected an IP address");
      ip_ = a.host();
    });
    add_read_handler("broadcast", [this] { return ip_text(bcast_); });
    add_write_handler("broadcast", [this](const std::string& v) {
      IPv4Addr a;
      if (!parse_ipv4(trim(v), a)) throw std::runtime_error("expected an IP address");
      bcast_ = a.host();
    });
    add_write_handler("clear", [this](const std::string&) {
      std::lock_guard<std::mutex> g(table_->mu);
      table_->entries.clear();
      table_->age.clear();
      ++table_->generation;
      forget_gone();
      queries_.set(0);
      responses_.set(0);
      drops_.set(0);
    });
  }

 private:
  uint64_t sweep_ns() const { return (timeout_ns_ / kSec) * kSec + kSec; }

  bool encap(Packet* p, const uint8_t* dst) {
    uint8_t* e = p->push(14);
    if (!e) return false;
    std::memcpy(e, dst, 6);
    std::memcpy(e + 6, eth_.data(), 6);
    k::store_be16(e + 12, 0x0800);
    p->set_mac_header(0);
    return true;
  }
  int out_with(Packet* p, const uint8_t* dst) { return encap(p, dst) ? 0 : counted_drop(r_room_); }
  int counted_drop(uint16_t reason) {
    drops_.add();
    return drop_code(reason);
  }

  // One IP packet on input 0 (table locked): its output, or a drop, or -
  // waiting for an answer - taken out of the batch.
  // A query to send: for an address, to its Ethernet address or broadcast,
  // stamped with the time of the packet that asked.
  struct Poll {
    uint32_t ip;
    Mac to;
    uint64_t ts;
  };
  int resolve(PacketBatch* b, uint32_t i, Packet* p, uint64_t now, std::vector<Poll>& polls) {
    uint32_t dst = k::load_be32(p->anno().dst_ip);
    if (!ip_) return counted_drop(r_nodst_);
    ArpTable& t = *table_;
    auto it = t.entries.find(dst);
    if (it != t.entries.end() && t.known(it->second, now)) {
      ArpTable::Entry& e = it->second;
      // Known but old: poll it again (to its own address unless
      // BROADCAST_POLL), and send the packet meanwhile.
      if (poll_ns_ && now >= e.live_ns + poll_ns_ && ArpTable::allow_poll(e, now)) {
        ArpTable::mark_poll(e, now);
        polls.push_back({dst, broadcast_poll_ ? kBroadcast : e.eth, p->timestamp_ns()});
      }
      return out_with(p, e.eth.data());
    }
    if (dst == 0xffffffffu || dst == bcast_) return out_with(p, kBroadcast.data());
    if ((dst >> 28) == 14) {  // multicast: 01:00:5e and the low 23 bits
      uint8_t m[6] = {0x01, 0x00, 0x5e, uint8_t((dst >> 16) & 0x7f), uint8_t(dst >> 8), uint8_t(dst)};
      return out_with(p, m);
    }
    if (!dst) {
      if (!zero_warned_) run_error("would query for 0.0.0.0; missing destination IP annotation?", false);
      zero_warned_ = true;
      return counted_drop(r_nodst_);
    }
    ArpTable::Entry& e = t.ensure(dst, now);
    forget_gone();  // ensure() may have pushed entries out
    // An unknown entry stays at most TIMEOUT old while packets wait on it.
    if (t.timeout_ns && e.live_ns + t.timeout_ns < now) {
      e.live_ns = now - t.timeout_ns;
      t.move_forward(e, dst);
    }
    auto& q = waiting_[dst];
    if (entry_packet_capacity_ && q.size() >= entry_packet_capacity_) return counted_drop(r_full_);
    b->kill(i);
    if (capacity_ && held_ + 1 > capacity_) shed();
    q.push_back(p);
    ++held_;
    if (ArpTable::allow_poll(e, now)) {
      ArpTable::mark_poll(e, now);
      polls.push_back({dst, kBroadcast, p->timestamp_ns()});
    }
    return 0;
  }

  // Over CAPACITY: the oldest waiting packets go, down to CAPACITY less
  // CAPACITY / CAPACITY_SLIM_FACTOR (Click's slimming).
  void shed() {
    uint32_t target = capacity_ - capacity_ / slim_factor_;
    if (target == 0) target = 1;
    for (uint32_t ip : table_->age) {
      auto it = waiting_.find(ip);
      if (it == waiting_.end()) continue;
      while (!it->second.empty() && held_ + 1 > target) {
        drop(it->second.front(), r_full_);
        drops_.add();
        it->second.pop_front();
        --held_;
      }
      if (held_ + 1 <= target) break;
    }
  }

  // Packets waiting on entries that are gone (expired and swept, evicted,
  // cleared) are dropped. Table locked.
  void forget_gone() {
    if (seen_generation_ == table_->generation) return;
    seen_generation_ = table_->generation;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (table_->entries.count(it->first)) {
        ++it;
        continue;
      }
      for (Packet* p : it->second) drop(p, r_expired_), drops_.add();
      held_ -= it->second.size();
      it = waiting_.erase(it);
    }
  }

  void send_queries(const std::vector<Poll>& polls) {
    for (auto& [dst, to, ts] : polls) {
      Packet* q = worker().pool().alloc(kArpLen);
      if (!q) {
        count_lost(r_pool_);
        continue;
      }
      created();
      uint8_t* d = q->data();
      std::memcpy(d, to.data(), 6);
      std::memcpy(d + 6, eth_.data(), 6);
      k::store_be16(d + 12, 0x0806);
      k::store_be16(d + 14, 1);
      k::store_be16(d + 16, 0x0800);
      d[18] = 6;
      d[19] = 4;
      k::store_be16(d + 20, 1);
      std::memcpy(d + 22, eth_.data(), 6);
      k::store_be32(d + 28, ip_);
      std::memset(d + 32, 0, 6);
      k::store_be32(d + 38, dst);
      q->set_mac_header(0);
      q->set_timestamp_ns(ts);
      queries_.add();
      PacketBatch* out = new_batch();
      out->append(q);
      output_push(noutputs() - 1, out);
    }
  }

  // Input 1: ARP replies (and requests to us, RFC 826's merge) teach the
  // table addresses it has asked for or knows; their waiting packets leave.
  void learn(PacketBatch* b) {
    const uint64_t now = worker().now_ns();
    std::vector<std::pair<uint32_t, Mac>> got;
    b->for_each([&](uint32_t, Packet* p) {
      const uint8_t* d = p->data();
      if (!is_arp_ipv4(d, p->length())) return drop(p, r_bad_);
      uint16_t op = k::load_be16(d + 20);
      uint32_t spa = k::load_be32(d + 28), tpa = k::load_be32(d + 38);
      if ((op == 2 || (op == 1 && tpa == ip_)) && spa != 0 && !(d[22] & 1)) {
        Mac m;
        std::memcpy(m.data(), d + 22, 6);
        got.push_back({spa, m});
      }
      drop(p, r_consumed_);
    });
    recycle(b);
    std::vector<std::pair<uint32_t, Mac>> release;
    {
      std::lock_guard<std::mutex> g(table_->mu);
      for (auto& [ip, m] : got) {
        // Unsolicited answers teach nothing (no cache poisoning).
        if (!table_->entries.count(ip) && !waiting_.count(ip)) continue;
        table_->insert(ip, m, now);
        responses_.add();
        release.push_back({ip, m});
      }
    }
    for (auto& [ip, m] : release) {
      auto it = waiting_.find(ip);
      if (it == waiting_.end()) continue;
      std::deque<Packet*> q = std::move(it->second);
      waiting_.erase(it);
      held_ -= q.size();
      PacketBatch* out = new_batch();
      for (Packet* p : q) {
        if (!encap(p, m.data())) {
          drop(p, r_room_);
          drops_.add();
          continue;
        }
        out->append(p);
        if (out->full()) output_push(0, out), out = new_batch();
      }
      if (out->empty())
        recycle(out);
      else
        output_push(0, out);
    }
  }

  uint32_t ip_ = 0, bcast_ = 0xffffffffu;
  Mac eth_{};
  uint32_t capacity_ = 2048, entry_capacity_ = 0, entry_packet_capacity_ = 0, slim_factor_ = 2;
  uint64_t timeout_ns_ = 0, poll_ns_ = 0;
  bool broadcast_poll_ = false, zero_warned_ = false;
  std::shared_ptr<ArpTable> table_;
  std::string table_name_;                           // TABLE: an ARPTable element's
  std::map<uint32_t, std::deque<Packet*>> waiting_;  // this worker's packets, per address
  size_t held_ = 0;
  uint64_t seen_generation_ = 0;
  Timer timer_;
  uint16_t r_expired_ = 0, r_full_ = 0, r_nodst_ = 0, r_room_ = 0, r_consumed_ = 0, r_bad_ = 0, r_pool_ = 0;
  Stat queries_, responses_, drops_;
};
SHOAL_ELEMENT(
    ARPQuerier, .name = "ARPQuerier", .ports = "2/1-2", .processing = "h/h",
    .summary = "resolves next hops with ARP and adds Ethernet headers",
    .description =
        "Click's ARPQuerier. Input 0 takes IP packets whose destination IP annotation is the next hop; input 1 "
        "takes ARP packets from the wire. A next hop the table knows (an answer younger than TIMEOUT) gets the "
        "Ethernet header and the packet leaves on output 0; when the answer is older than POLL_TIMEOUT a query "
        "goes to that address first (to the broadcast address with BROADCAST_POLL). 255.255.255.255 and "
        "BROADCAST go to the Ethernet broadcast address, multicast groups to their 01:00:5e addresses. "
        "Otherwise the packet waits while a query is broadcast: at most one per address every 100 ms, every "
        "2 s once ten went unanswered, and only when packets come. Waiting packets leave when the answer "
        "comes; they are dropped ('arp-expired') when their entry expires (TIMEOUT after it was made, or "
        "pushed out by ENTRY_CAPACITY), or for room ('arp-queue-full': ENTRY_PACKET_CAPACITY per address, or "
        "CAPACITY in all, when the oldest go down to CAPACITY less CAPACITY/CAPACITY_SLIM_FACTOR). Queries "
        "leave on output 1 if it exists, else output 0, stamped with the time of the packet that asked. The "
        "table is shared by every worker; it learns answers (replies, and requests to this address) only for "
        "addresses it asked for or knows. ARP packets on input 1 are consumed ('arp-consumed').",
    .args = {{"IP", "IPv4 address[/len]", "this interface's address (a prefix sets the broadcast address)"},
             {"TABLE", "element", "an ARPTable to use (its TIMEOUT and ENTRY_CAPACITY apply) instead of its own"},
             {"ETH", "Ethernet address", "this interface's Ethernet address (one AddressInfo name may give both)"},
             {"TIMEOUT", "time", "how long an answer is good (default 300 s; 0: forever)"},
             {"POLL_TIMEOUT", "time", "age at which a known address is queried again (default 60 s; 0: never)"},
             {"BROADCAST_POLL", "boolean", "send those queries to the broadcast address (default false)"},
             {"CAPACITY", "unsigned", "waiting packets in all (default 2048; 0: no bound)"},
             {"ENTRY_CAPACITY", "unsigned", "addresses in the table (default 0: no bound)"},
             {"ENTRY_PACKET_CAPACITY", "unsigned", "waiting packets per address (default 0: no bound)"},
             {"CAPACITY_SLIM_FACTOR", "unsigned", "over CAPACITY, keep CAPACITY less CAPACITY/this (default 2)"},
             {"BROADCAST", "IPv4 address", "the interface's broadcast address"}},
    .handlers = {{"table", "r", "'IP KNOWN ETH AGE' per address, oldest first"},
                 {"count", "r", "addresses in the table"},
                 {"length", "r", "packets waiting"},
                 {"queries", "r", "queries sent"},
                 {"responses", "r", "answers learnt"},
                 {"drops", "r", "packets dropped"},
                 {"stats", "r", "drops and queries, as Click prints them"},
                 {"ipaddr", "rw", "this interface's address"},
                 {"broadcast", "rw", "the broadcast address"},
                 {"insert", "w", "'IP ETH': a static answer"},
                 {"delete", "w", "IP: forget the answer"},
                 {"clear", "w", "empty the table and the counts"}},
    .example =
        "fr -> [0]arpq :: ARPQuerier(10.0.1.1, 02:00:00:00:01:01) -> out1;\n"
        "c1[1] -> [1]arpq;");

}  // namespace shoal

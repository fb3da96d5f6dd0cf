// ARP (RFC 826): ARPQuerier resolves next hops and encapsulates IP packets
// in Ethernet; ARPResponder answers requests for the router's addresses.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>

#include "shoal/elements/common.hh"
#include "shoal/elements/ether/resolver.hh"
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
  std::vector<std::string_view> w = split_words(s);
  if (w.size() < 2 || !parse_ether(w.back(), eth)) {
    err = fmt::format("'{}' is not 'ADDR[/MASK]... ETH'", s);
    return false;
  }
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    uint32_t addr, mask;
    if (!parse_ipv4_prefix(w[i], addr, mask, true)) return err = fmt::format("bad address '{}'", w[i]), false;
    out.push_back({addr & mask, mask});
  }
  return true;
}
}  // namespace

// ---------------------------------------------------------------- ARPResponder
class ARPResponder : public PacketElement<ARPResponder> {
 public:
  void configure(Args& a) override {
    for (ArgItem* it : a.rest_positional()) {
      std::string err;
      if (!add_entry(it->text, entries_, err)) a.fail(*it, err);
    }
    a.complete();
    warn_duplicates(entries_);
  }
  void initialize() override { r_ = add_drop_reason("not-for-us"); }
  int process(Packet* p) {
    uint8_t* d = p->data();
    int other = noutputs() > 1 ? 1 : drop_code(r_);
    if (!is_arp_ipv4(d, p->length()) || k::load_be16(d + 20) != 1) return other;
    uint32_t target = k::load_be32(d + 38);
    const Entry* e = find(target);
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
  void add_handlers() override {
    add_stat_handler("replies", replies_);
    add_read_handler("table", [this] {
      std::string s;
      for (auto& e : entries_) s += fmt::format("{} {}\n", prefix_text(e), ether_text(e.eth));
      return s;
    });
    add_read_param_handler("lookup", [this](const std::string& v) {
      IPv4Addr ip;
      if (!parse_ipv4(trim(v), ip)) throw std::runtime_error(fmt::format("'{}' is not an IP address", trim(v)));
      const Entry* e = find(ip.host());
      return e ? ether_text(e->eth) : std::string();
    });
    // Click's reconfiguration: the whole table from ENTRY arguments.
    add_write_handler("config", [this](const std::string& v) {
      std::vector<Entry> fresh;
      std::string err;
      for (auto& it : split_args(v, {}, false))
        if (!add_entry(it.text, fresh, err)) throw std::runtime_error(err);
      warn_duplicates(fresh);
      entries_ = std::move(fresh);
      config_text_ = v;
    });
    add_read_handler("config", [this] { return config_text_ ? *config_text_ : config_string(); });
    add_write_handler("add", [this](const std::string& v) {
      std::vector<Entry> fresh;
      std::string err;
      if (!add_entry(trim(v), fresh, err)) throw std::runtime_error(err);
      for (auto& f : fresh) {
        auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const Entry& e) { return e.addr == f.addr && e.mask == f.mask; });
        if (it != entries_.end())
          it->eth = f.eth;
        else
          insert(entries_, f);
      }
    });
    add_write_handler("remove", [this](const std::string& v) {
      uint32_t addr, mask;
      if (!parse_ipv4_prefix(trim(v), addr, mask, true))
        throw std::runtime_error(fmt::format("'{}' is not an address or prefix", trim(v)));
      auto it = std::find_if(entries_.begin(), entries_.end(),
                             [&](const Entry& e) { return e.addr == (addr & mask) && e.mask == mask; });
      if (it == entries_.end()) throw std::runtime_error(fmt::format("{} is not in the table", trim(v)));
      entries_.erase(it);
    });
  }

 private:
  struct Entry {
    uint32_t addr, mask;
    EtherAddr eth;
  };
  // In the order given, except that an entry goes before the first one
  // that contains it, so the first match is the longest (Click's order).
  static void insert(std::vector<Entry>& v, const Entry& e) {
    auto at = std::find_if(v.begin(), v.end(), [&](const Entry& x) {
      return x.mask != e.mask && (x.mask & e.mask) == x.mask && (e.addr & x.mask) == x.addr;
    });
    v.insert(at, e);
  }
  // Click's entry: words that are addresses or prefixes, and one Ethernet
  // address, in any order; a name with both (AddressInfo) gives both.
  static bool add_entry(std::string_view text, std::vector<Entry>& v, std::string& err) {
    std::vector<std::string_view> w = split_words(text);
    std::vector<Entry> got;
    EtherAddr eth;
    bool have_eth = false;
    for (auto word : w) {
      uint32_t addr, mask;
      EtherAddr e;
      if (parse_ipv4_prefix(word, addr, mask, true)) {
        got.push_back({addr & mask, mask, {}});
      } else if (parse_ether(word, e)) {
        if (have_eth) return err = fmt::format("'{}': more than one ETH", text), false;
        eth = e;
        have_eth = true;
      } else {
        return err = fmt::format("'{}': expected IP/MASK ETH", text), false;
      }
    }
    for (size_t i = 0; !have_eth && i < w.size(); ++i) have_eth = parse_ether(w[i], eth);
    if (got.empty()) return err = fmt::format("'{}': missing IP/MASK", text), false;
    if (!have_eth) return err = fmt::format("'{}': missing ETH", text), false;
    for (auto& g : got) insert(v, {g.addr, g.mask, eth});
    return true;
  }
  const Entry* find(uint32_t ip) const {
    for (auto& x : entries_)
      if ((ip & x.mask) == x.addr) return &x;
    return nullptr;
  }
  static std::string prefix_text(const Entry& e) {
    uint8_t a[4] = {uint8_t(e.addr >> 24), uint8_t(e.addr >> 16), uint8_t(e.addr >> 8), uint8_t(e.addr)};
    return fmt::format("{}/{}", format_ipv4(a), std::popcount(e.mask));
  }
  static std::string ether_text(const EtherAddr& e) { return format_ether_click(e.b.data()); }
  // A prefix given twice keeps its last Ethernet address; Click warns.
  void warn_duplicates(std::vector<Entry>& v) const {
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = i + 1; j < v.size();)
        if (v[j].addr == v[i].addr && v[j].mask == v[i].mask) {
          if (worker().id() == 0) fmt::print(stderr, "  warning: multiple entries for {}\n", prefix_text(v[i]));
          v[i].eth = v[j].eth;
          v.erase(v.begin() + ptrdiff_t(j));
        } else {
          ++j;
        }
  }
  std::vector<Entry> entries_;
  std::optional<std::string> config_text_;  // as last written
  uint16_t r_ = 0;
  Stat replies_;
};
SHOAL_ELEMENT(ARPResponder, .name = "ARPResponder", .ports = "1/1-2", .processing = "a/ah",
              .summary = "answers ARP requests",
              .description =
                  "Each argument is 'ADDR[/MASK] [ADDR...] ETH', or one AddressInfo name that has both an "
                  "IP and an Ethernet address. An ARP request (Ethernet frame) for one of the addresses "
                  "becomes, in place, the reply from ETH to the asker; the most specific entry answers. Other "
                  "packets leave on output 1 if it exists, else are dropped ('not-for-us'). With no entries it "
                  "answers nothing until some are added.",
              .args = {{"ENTRY...", "ADDR[/MASK]... ETH", "addresses answered with ETH"}},
              .handlers = {{"replies", "r", "replies made"},
                           {"table", "r", "the entries, 'ADDR/LEN ETH' per line, most specific first"},
                           {"lookup", "r", "(with an address) the Ethernet address it is answered with"},
                           {"config", "w", "replace every entry (the element's arguments)"},
                           {"add", "w", "'ADDR[/MASK]... ETH': add entries, or change their ETH"},
                           {"remove", "w", "ADDR[/MASK]: remove that entry"}},
              .example = "c[0] -> ARPResponder(10.0.0.1 02:00:00:00:00:01) -> out;");

// ---------------------------------------------------------------- ARPQuerier
class ARPQuerier : public NeighborResolver<ARPQuerier, uint32_t> {
 public:
  static constexpr uint16_t kEtherType = 0x0800;
  void configure(Args& a) override {
    IPv4Addr ip, bcast;
    EtherAddr eth;
    bool have_bcast = a.has("BROADCAST");
    a.read_mp("IP", ip).read_mp("ETH", eth).read("BROADCAST", bcast);
    read_resolver_args(a, 300'000'000'000ull);
    a.complete();
    ip_ = ip.host();
    eth_ = eth.b;
    if (have_bcast) bcast_ = bcast.host();
  }
  void initialize() override { init_resolver("arp"); }

  bool key_of(Packet* p, uint32_t& dst) const {
    dst = k::load_be32(p->anno().dst_ip);
    return dst != 0;
  }
  bool fixed_mac(uint32_t dst, uint8_t* mac) const {
    if (dst != 0xffffffffu && dst != bcast_) return false;
    std::memset(mac, 0xff, 6);
    return true;
  }
  Packet* make_query(uint32_t dst) {
    Packet* q = worker().pool().alloc(kArpLen);
    if (!q) return nullptr;
    uint8_t* d = q->data();
    std::memset(d, 0xff, 6);
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
    return q;
  }
  // Replies, and requests aimed at us (RFC 826's merge), carry answers.
  void parse_answers(PacketBatch* b, std::vector<std::pair<uint32_t, Mac>>& got) {
    b->for_each([&](uint32_t, Packet* p) {
      const uint8_t* d = p->data();
      if (!is_arp_ipv4(d, p->length())) return drop(p, r_bad_);
      uint16_t op = k::load_be16(d + 20);
      uint32_t spa = k::load_be32(d + 28), tpa = k::load_be32(d + 38);
      if ((op == 2 || op == 1) && spa != 0 && (tpa == ip_ || op == 2)) {
        Mac m;
        std::memcpy(m.data(), d + 22, 6);
        if (!(m[0] & 1)) got.push_back({spa, m});
      }
      drop(p, r_consumed_);
    });
  }
  static std::string format_key(uint32_t ip) {
    uint8_t a[4] = {uint8_t(ip >> 24), uint8_t(ip >> 16), uint8_t(ip >> 8), uint8_t(ip)};
    return format_ipv4(a);
  }
  static bool parse_entry(std::string_view s, std::vector<uint32_t>& keys, Mac& eth, std::string& err) {
    std::vector<std::pair<uint32_t, uint32_t>> addrs;
    EtherAddr e;
    if (!parse_addr_words(s, addrs, e, err)) return false;
    for (auto& [ad, m] : addrs) keys.push_back(ad);
    eth = e.b;
    return true;
  }

 private:
  uint32_t ip_ = 0, bcast_ = 0xffffffffu;
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
              .example =
                  "fr -> [0]arpq :: ARPQuerier(10.0.1.1, 02:00:00:00:01:01) -> out1; "
                  "c1[1] -> [1]arpq;");

}  // namespace shoal

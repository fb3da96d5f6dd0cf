// ARPResponder: answers ARP requests for the router's addresses (RFC 826).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>

#include "shoal/elements/common.hh"
#include "shoal/elements/ether/arp.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

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
    // The reply is a new packet in Click: it carries no timestamp.
    p->set_timestamp_ns(0);
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
SHOAL_ELEMENT(
    ARPResponder, .name = "ARPResponder", .ports = "1/1-2", .processing = "a/ah", .summary = "answers ARP requests",
    .description =
        "Each argument is 'ADDR[/MASK] [ADDR...] ETH', or one AddressInfo name that has both an "
        "IP and an Ethernet address. An ARP request (Ethernet frame) for one of the addresses "
        "becomes, in place, the reply from ETH to the asker (with no timestamp, as Click's new reply packet); the "
        "most specific entry answers. Other "
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

}  // namespace shoal

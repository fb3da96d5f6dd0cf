// ARPTable: Click's ARP table as an element of its own, which ARPQuerier
// elements name with TABLE to share one table (and its configuration).
#include "shoal/elements/ether/arptable.hh"

#include "shoal/elements/common.hh"

namespace shoal {

namespace arp {
void add_table_handlers(Element& el, const std::function<ArpTable&()>& table) {
  Element* e = &el;
  e->add_read_handler("table", [e, table] { return table().text(e->worker().now_ns()); });
  e->add_read_handler("count", [table] {
    ArpTable& t = table();
    std::lock_guard<std::mutex> g(t.mu);
    return std::to_string(t.entries.size());
  });
  e->add_write_handler("insert", [e, table](const std::string& v) {
    auto w = split_words(v);
    IPv4Addr a;
    EtherAddr eth;
    if (w.size() != 2 || !parse_ipv4(w[0], a) || !parse_ether(w[1], eth)) throw std::runtime_error("expected IP ETH");
    ArpTable& t = table();
    std::lock_guard<std::mutex> g(t.mu);
    t.insert(a.host(), eth.b, e->worker().now_ns());
  });
  e->add_write_handler("delete", [e, table](const std::string& v) {
    IPv4Addr a;
    if (!parse_ipv4(trim(v), a)) throw std::runtime_error("expected an IP address");
    ArpTable& t = table();
    std::lock_guard<std::mutex> g(t.mu);
    t.insert(a.host(), kBroadcast, e->worker().now_ns());  // Click's: known no more
  });
}
}  // namespace arp

class ARPTable : public Element {
 public:
  void configure(Args& a) override {
    Duration timeout{300 * arp::kSec};
    a.read("TIMEOUT", timeout).read("ENTRY_CAPACITY", entry_capacity_);
    a.complete();
    timeout_ns_ = timeout.ns;
  }
  void initialize() override {
    table_ = shared_state_named<arp::ArpTable>(this, arp::table_key(name()));
    std::lock_guard<std::mutex> g(table_->mu);  // its queriers may have made it first
    table_->timeout_ns = timeout_ns_;
    table_->entry_capacity = entry_capacity_;
  }
  // Hot swap: the new table takes the old one's entries (Click's take_state).
  void hot_swapped(Element* old) override {
    if (auto* o = dynamic_cast<ARPTable*>(old); o && o->table_ && worker().id() == 0) table_->take(*o->table_);
  }
  void add_handlers() override {
    arp::add_table_handlers(*this, [this]() -> arp::ArpTable& { return *table_; });
    add_write_handler("clear", [this](const std::string&) {
      std::lock_guard<std::mutex> g(table_->mu);
      table_->entries.clear();
      table_->age.clear();
      ++table_->generation;
    });
  }

 private:
  uint64_t timeout_ns_ = 0;
  uint32_t entry_capacity_ = 0;
  std::shared_ptr<arp::ArpTable> table_;
};
SHOAL_ELEMENT(ARPTable, .name = "ARPTable", .ports = "0/0", .processing = "a/a",
              .summary = "an ARP table that ARPQuerier elements share",
              .description =
                  "Click's ARPTable: the table of addresses ARPQuerier(TABLE NAME) elements resolve with, so "
                  "several queriers (and every worker's copy) share one. Entries age out after TIMEOUT; with "
                  "ENTRY_CAPACITY, the oldest go first when it is full. The queriers using it keep their own "
                  "waiting packets, polls and counts. In a hot swap a new ARPTable of the same name takes the "
                  "old one's entries.",
              .args = {{"TIMEOUT", "time", "how long an answer is good (default 300 s; 0: forever)"},
                       {"ENTRY_CAPACITY", "unsigned", "addresses in the table (default 0: no bound)"}},
              .handlers = {{"table", "r", "'IP KNOWN ETH AGE' per address, oldest first"},
                           {"count", "r", "addresses in the table"},
                           {"insert", "w", "'IP ETH': a known address"},
                           {"delete", "w", "'IP': known no more"},
                           {"clear", "w", "empty the table"}},
              .example = "arpt :: ARPTable(TIMEOUT 5min); q :: ARPQuerier(TABLE arpt, 10.0.0.1, 00:11:22:33:44:55);");

}  // namespace shoal

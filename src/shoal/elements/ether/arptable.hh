// The ARP table (Click's ARPTable), shared by the copies of an ARPQuerier
// across workers, or by the queriers that name an ARPTable element.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "shoal/core/element.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/ether/arp.hh"

namespace shoal::arp {

inline constexpr uint64_t kSec = 1000000000ull;
using Mac = std::array<uint8_t, 6>;
inline constexpr Mac kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

inline std::string ip_text(uint32_t ip) {
  uint8_t a[4] = {uint8_t(ip >> 24), uint8_t(ip >> 16), uint8_t(ip >> 8), uint8_t(ip)};
  return format_ipv4(a);
}

// The table every worker's copy shares (Click's ARPTable). Entries are kept
// in the order they were last refreshed (`age`, oldest first), which is the
// order they expire and are evicted in.
struct ArpTable {
  struct Entry {
    Mac eth = kBroadcast;
    bool known = false;
    uint64_t live_ns = 0;    // when it was learnt (or, unknown, made)
    uint64_t polled_ns = 0;  // when it was last queried
    uint32_t polls = 0;      // queries since the last answer
    std::list<uint32_t>::iterator age_at;
  };
  std::mutex mu;
  std::map<uint32_t, Entry> entries;
  std::list<uint32_t> age;
  uint64_t timeout_ns = 300 * kSec;  // 0: entries never expire
  uint32_t entry_capacity = 0;       // 0: no bound
  uint64_t generation = 0;           // bumps whenever entries go

  bool expired(const Entry& e, uint64_t now) const { return timeout_ns && e.live_ns + timeout_ns < now; }
  bool known(const Entry& e, uint64_t now) const { return e.known && !expired(e, now); }
  // At most one query per 100 ms, per 2 s after ten unanswered.
  static bool allow_poll(const Entry& e, uint64_t now) {
    return now >= e.polled_ns + (e.polls >= 10 ? 2 * kSec : kSec / 10);
  }
  static void mark_poll(Entry& e, uint64_t now) {
    e.polled_ns = now;
    if (e.polls < 255) ++e.polls;
  }
  Entry& ensure(uint32_t ip, uint64_t now) {
    auto it = entries.find(ip);
    if (it != entries.end()) return it->second;
    if (entry_capacity && entries.size() + 1 > entry_capacity) slim(now, 1);
    Entry& e = entries[ip];
    e.live_ns = now;
    e.polled_ns = now - kSec;
    e.age_at = age.insert(age.end(), ip);
    return e;
  }
  void refresh_age(Entry& e, uint32_t ip) {
    age.erase(e.age_at);
    e.age_at = age.insert(age.end(), ip);
  }
  // An entry made younger (not to the present): forward past the entries
  // that are older still, as Click's append_query moves it.
  void move_forward(Entry& e, uint32_t ip) {
    auto next = std::next(e.age_at);
    while (next != age.end() && entries.at(*next).live_ns < e.live_ns) ++next;
    if (next == std::next(e.age_at)) return;
    age.erase(e.age_at);
    e.age_at = age.insert(next, ip);
  }
  // Removes expired entries, oldest first, and the oldest while there are
  // too many (`extra`: one about to be made).
  void slim(uint64_t now, size_t extra = 0) {
    while (!age.empty()) {
      uint32_t ip = age.front();
      if (!expired(entries.at(ip), now) && !(entry_capacity && entries.size() + extra > entry_capacity)) break;
      age.pop_front();
      entries.erase(ip);
      ++generation;
    }
  }
  void insert(uint32_t ip, const Mac& eth, uint64_t now) {
    Entry& e = ensure(ip, now);
    e.eth = eth;
    e.known = eth != kBroadcast;
    e.live_ns = now;
    e.polls = 0;
    e.polled_ns = now - kSec;
    refresh_age(e, ip);
  }
  // Hot swap: this table takes o's entries (and o gets this one's); both
  // generations move on, so queriers forget packets waiting on entries gone.
  void take(ArpTable& o) {
    std::scoped_lock g(mu, o.mu);
    entries.swap(o.entries);
    age.swap(o.age);
    generation = o.generation = std::max(generation, o.generation) + 1;
  }
  // Click's 'table' handler: "IP KNOWN ETH AGE" per address, oldest first.
  std::string text(uint64_t now) {
    std::lock_guard<std::mutex> g(mu);
    std::string s;
    for (uint32_t ip : age) {
      const auto& e = entries.at(ip);
      uint64_t a = now > e.live_ns ? now - e.live_ns : 0;
      s += fmt::format("{} {} {} {}.{:06}\n", ip_text(ip), known(e, now) ? 1 : 0, format_ether_click(e.eth.data()),
                       a / kSec, (a % kSec) / 1000);
    }
    return s;
  }
};

// The table handlers an ARPQuerier and an ARPTable both have (Click's):
// table, count, insert IP ETH, delete IP (each element adds its own clear).
// `table` says which table at each call.
void add_table_handlers(Element& e, const std::function<ArpTable&()>& table);
// The shared-state key of ARPTable element NAME's table.
inline std::string table_key(const std::string& element) { return "ARPTable " + element; }

}  // namespace shoal::arp

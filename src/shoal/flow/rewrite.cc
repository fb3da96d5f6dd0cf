#include "shoal/flow/rewrite.hh"

#include <cstddef>

#include <fmt/format.h>

#include <charconv>
#include <tuple>

namespace shoal::flow {

std::string format_ipv4_host(uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

std::string unparse(const FlowId& f) {
  return fmt::format("({}, {}, {}, {})", format_ipv4_host(f.saddr), f.sport, format_ipv4_host(f.daddr), f.dport);
}

namespace {

bool parse_i32(std::string_view s, int32_t& v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// Strips a '#' (in turn) or '?' (not the connection's own first) suffix.
std::string_view variation_suffix(std::string_view s, bool& sequential, bool& same_first) {
  if (!s.empty() && s.back() == '#')
    sequential = true, same_first = false, s.remove_suffix(1);
  else if (!s.empty() && s.back() == '?')
    same_first = false, s.remove_suffix(1);
  return s;
}

// 'A-B' or 'ADDR/PREFIX' (Click's ip_address_variation).
bool address_variation(std::string_view s, uint32_t& addr, uint32_t& variation, bool& sequential, bool& same_first,
                       const std::function<bool(std::string_view, uint32_t&)>& parse) {
  s = variation_suffix(s, sequential, same_first);
  size_t dash = s.find('-'), slash = s.find('/');
  uint32_t a2 = 0;
  if (dash != std::string_view::npos) {
    if (!parse(s.substr(0, dash), addr) || !parse(s.substr(dash + 1), a2) || a2 < addr) return false;
    variation = a2 - addr;
    return true;
  }
  if (slash == std::string_view::npos || !parse(s.substr(0, slash), addr) || !addr) return false;
  std::string_view m = s.substr(slash + 1);
  uint32_t mask = 0;
  int32_t len = 0;
  if (parse_i32(m, len)) {
    if (len < 1 || len > 32) return false;  // Click wants a non-zero mask
    mask = len == 32 ? 0xffffffffu : ~(0xffffffffu >> len);
  } else if (!parse(m, mask) || !mask || (~mask & (~mask + 1)) != 0) {
    return false;
  }
  if (mask == 0xffffffffu) {
    variation = 0;
  } else if (mask == 0xfffffffeu) {
    addr &= mask;
    variation = 1;
  } else {  // not PREFIX.0 nor the broadcast address
    addr = (addr & mask) | 1;
    variation = ~mask - 2;
  }
  return true;
}

bool port_variation(std::string_view s, int32_t& port, uint32_t& variation, bool& sequential, bool& same_first) {
  s = variation_suffix(s, sequential, same_first);
  size_t dash = s.find('-');
  int32_t p2 = 0;
  if (dash == std::string_view::npos || !parse_i32(s.substr(0, dash), port) || !parse_i32(s.substr(dash + 1), p2) ||
      port < 0 || p2 < port || p2 >= 65536)
    return false;
  variation = uint32_t(p2 - port);
  return true;
}

}  // namespace

bool RewritePattern::parse(const std::vector<std::string>& w, RewritePattern& out, std::string& err,
                           const std::function<bool(std::string_view, uint32_t&)>& addr) {
  RewritePattern p;
  if (w.size() < 2 || w.size() > 4) return err = "syntax error", false;
  // Click's word order: 'SADDR DADDR', 'SADDR DADDR SPORT' (sic), 'SADDR SPORT DADDR DPORT'.
  size_t i = 0;
  if (!(w[0] == "-" || addr(w[0], p.saddr) ||
        address_variation(w[0], p.saddr, p.variation_top, p.sequential, p.same_first, addr)))
    return err = "bad source address", false;
  if (w.size() >= 3) {
    i = w.size() == 3 ? 2 : 1;
    int32_t port = 0;
    if (w[i] == "-") {
    } else if (parse_i32(w[i], port) && port > 0 && port < 65536) {
      p.sport = uint16_t(port);
    } else if (port_variation(w[i], port, p.variation_top, p.sequential, p.same_first)) {
      p.sport = uint16_t(port);
    } else {
      return err = "bad source port", false;
    }
    i = w.size() == 3 ? 0 : 1;
  }
  ++i;
  if (!(w[i] == "-" || addr(w[i], p.daddr))) return err = "bad destination address", false;
  if (w.size() == 4) {
    int32_t port = 0;
    if (w[3] == "-") {
    } else if (parse_i32(w[3], port) && port > 0 && port < 65536) {
      p.dport = uint16_t(port);
    } else {
      return err = "bad destination port", false;
    }
  }
  p.napt = w.size() >= 3;
  out = p;
  return true;
}

bool RewritePattern::rewrite(const FlowId& in, FlowId& out, const std::function<bool(const FlowId&)>& taken,
                             const std::function<uint32_t(uint32_t)>& rnd) {
  out = in;
  if (saddr) out.saddr = saddr;
  if (sport) out.sport = sport;
  if (daddr) out.daddr = daddr;
  if (dport) out.dport = dport;
  if (!variation_top) return true;
  // The reply key each choice would take: the rewritten flow reversed,
  // whose destination is the varied source.
  FlowId lookup = out.reverse();
  uint32_t base = napt ? sport : saddr;
  uint32_t val = 0;
  bool found = false;
  if (same_first && napt && uint32_t(in.sport - base) <= variation_top) {
    lookup.dport = in.sport;
    val = uint32_t(in.sport - base);
    found = !taken(lookup);
  }
  if (!found) {
    val = sequential ? (next_variation > variation_top ? 0 : next_variation) : rnd(variation_top);
    for (uint32_t count = 0; count <= variation_top; ++count, val = val == variation_top ? 0 : val + 1) {
      if (napt)
        lookup.dport = uint16_t(base + val);
      else
        lookup.daddr = base + val;
      if (!taken(lookup)) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  next_variation = val + 1;
  if (napt)
    out.sport = lookup.dport;
  else
    out.saddr = lookup.daddr;
  return true;
}

std::string RewritePattern::unparse() const {
  std::string s;
  if (!napt && variation_top)
    s = format_ipv4_host(saddr) + "-" + format_ipv4_host(saddr + variation_top);
  else
    s = saddr ? format_ipv4_host(saddr) : "-";
  if (napt) {
    if (!sport)
      s += " -";
    else if (variation_top)
      s += fmt::format(" {}-{}", sport, sport + variation_top);
    else
      s += fmt::format(" {}", sport);
  }
  s += daddr ? " " + format_ipv4_host(daddr) : " -";
  if (napt) s += dport ? fmt::format(" {}", dport) : " -";
  return s;
}

namespace {
// RFC 1982 comparison: a at or after b.
bool seq_geq(uint32_t a, uint32_t b) { return int32_t(a - b) >= 0; }
}  // namespace

uint32_t TcpSeqShift::new_seq(int d, uint32_t seq) const {
  for (const Step& s : steps[d])
    if (seq_geq(seq, s.trigger)) return seq + uint32_t(s.delta);
  return seq + uint32_t(base[d]);
}

uint32_t TcpSeqShift::new_ack(int d, uint32_t ack) const {
  for (const Step& s : steps[!d])
    if (seq_geq(ack - uint32_t(s.delta), s.trigger)) return ack - uint32_t(s.delta);
  return ack - uint32_t(base[!d]);
}

bool TcpSeqShift::add(int d, uint32_t trigger, int32_t delta) {
  auto& v = steps[d];
  if (!v.empty() && !seq_geq(trigger, v.front().trigger)) return false;
  if (!v.empty() && trigger == v.front().trigger) {
    // the same place again: the change replaces the one made there
    v.front().delta = (v.size() > 1 ? v[1].delta : base[d]) + delta;
  } else {
    v.insert(v.begin(), Step{trigger, newest(d) + delta});
  }
  // Transitions 2^30 before this one can no longer be told apart from it:
  // the first such becomes the base.
  for (size_t i = 1; i < v.size(); ++i)
    if (seq_geq(trigger, v[i].trigger + (1u << 30))) {
      base[d] = v[i].delta;
      v.resize(i);
      break;
    }
  return true;
}

void TcpSeqShift::forget_old(int d, uint32_t seq) {
  auto& v = steps[d];
  if (!v.empty() && seq_geq(seq, v.front().trigger + (1u << 30))) {
    base[d] = v.front().delta;
    v.clear();
  }
}

size_t RewriteTable::KeyHash::operator()(const Key& k) const {
  uint64_t a = (uint64_t(k.f.saddr) << 32) | k.f.daddr;
  uint64_t b = (uint64_t(k.f.sport) << 48) | (uint64_t(k.f.dport) << 32) | (uint64_t(k.owner) << 8) | k.map;
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x7F4A7C159E3779B9ull + (a << 6) + (a >> 2));
  return size_t(h ^ (h >> 29));
}

uint32_t* RewriteTable::Index::find(const Key& k) {
  if (s_.empty()) return nullptr;
  uint32_t h = uint32_t(KeyHash()(k));
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    Slot& x = s_[i];
    if (!x.v) return nullptr;
    if (x.h == h && x.k == k) return &x.v;
  }
}

std::pair<uint32_t*, bool> RewriteTable::Index::emplace(const Key& k, uint32_t v) {
  if (2 * (n_ + 1) > s_.size()) grow();
  uint32_t h = uint32_t(KeyHash()(k));
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    Slot& x = s_[i];
    if (!x.v) {
      x.k = k;
      x.v = v;
      x.h = h;
      ++n_;
      return {&x.v, true};
    }
    if (x.h == h && x.k == k) return {&x.v, false};
  }
}

void RewriteTable::Index::erase(uint32_t* value) {
  size_t i = size_t(reinterpret_cast<Slot*>(reinterpret_cast<char*>(value) - offsetof(Slot, v)) - s_.data());
  // Backward shift: later entries of the run that may live at i move up.
  for (size_t j = (i + 1) & mask_; s_[j].v; j = (j + 1) & mask_) {
    size_t home = s_[j].h & mask_;
    bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!stays) {
      s_[i] = s_[j];
      i = j;
    }
  }
  s_[i].v = 0;
  --n_;
}

void RewriteTable::Index::grow() {
  std::vector<Slot> old;
  old.swap(s_);
  s_.resize(old.empty() ? 1024 : old.size() * 2);
  mask_ = s_.size() - 1;
  n_ = 0;
  for (const Slot& x : old)
    if (x.v) *emplace(x.k, x.v).first = x.v;
}

uint32_t RewriteTable::add_owner(const std::string& name, int ninputs) {
  for (uint32_t i = 0; i < owners_.size(); ++i)
    if (owners_[i].name == name) return i;
  owners_.push_back({name, std::vector<uint64_t>(size_t(ninputs)), std::vector<uint64_t>(size_t(ninputs))});
  return uint32_t(owners_.size() - 1);
}

std::pair<uint32_t, int> RewriteTable::find(uint32_t owner, uint8_t map, const FlowId& f) const {
  uint32_t* v = const_cast<Index&>(index_).find(Key{f, owner, map});
  if (!v) return {0, 0};
  return {*v >> 1, int(*v & 1)};
}

void RewriteTable::heap_insert(uint32_t id) {
  Mapping& m = mapping(id);
  m.order = ++order_;
  m.heap_exp = m.expiry_ns;
  m.heap_order = m.order;
  heap_[m.guaranteed].insert({m.heap_exp, m.heap_order, id});
}

void RewriteTable::heap_erase(uint32_t id) {
  Mapping& m = mapping(id);
  heap_[m.guaranteed].erase({m.heap_exp, m.heap_order, id});
}

// The heap's keys may lag: a refresh that only delays a mapping leaves its
// item where it was (a key at most the real one). The first item whose key
// is its mapping's real key is then the real minimum; the lagging ones met
// on the way are put where they belong.
uint32_t RewriteTable::top(int c) {
  for (;;) {
    auto [exp, ord, id] = *heap_[c].begin();
    Mapping& m = mapping(id);
    if (exp == m.expiry_ns && ord == m.order) return id;
    heap_[c].erase(heap_[c].begin());
    m.heap_exp = m.expiry_ns;
    m.heap_order = m.order;
    heap_[c].insert({m.heap_exp, m.heap_order, id});
  }
}

uint32_t RewriteTable::add(uint32_t owner, uint8_t map, uint16_t input, uint8_t ip_p, const FlowId& flow,
                           const FlowId& rewritten, int fout, int rout, bool guaranteed, uint64_t expiry_ns,
                           uint64_t best_effort_ns, uint64_t now) {
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    maps_.emplace_back();
    id = uint32_t(maps_.size());
  }
  Mapping& m = mapping(id);
  m = Mapping{};
  m.key[0] = flow;
  m.key[1] = rewritten.reverse();
  m.out[0] = fout;
  m.out[1] = rout;
  m.owner = owner;
  m.map = map;
  m.input = input;
  m.ip_p = ip_p;
  m.guaranteed = guaranteed;
  m.expiry_ns = expiry_ns;
  m.best_effort_ns = best_effort_ns;
  m.agg = agg_++;
  m.live = true;
  *index_.emplace(Key{m.key[0], owner, map}, id << 1).first = id << 1;
  // A reply key already in use belongs to a mapping this one replaces
  // (unless the two keys are equal: a degenerate mapping of a flow onto
  // its own reverse, whose reply entry simply wins).
  auto [it, fresh] = index_.emplace(Key{m.key[1], owner, map}, (id << 1) | 1);
  if (!fresh) {
    uint32_t old = *it >> 1;
    *it = (id << 1) | 1;
    if (old != id) destroy(old);
  }
  heap_insert(id);
  ++owners_[owner].count[input];
  if (int64_t(size()) > capacity) {
    // Full: guaranteed mappings whose guarantee ran out become best
    // effort; the best-effort mapping nearest expiry goes, or, when
    // every mapping is guaranteed, the new one is refused.
    shift_guaranteed(now);
    uint32_t dead = heap_[0].empty() ? id : top(0);
    destroy(dead);
    if (dead == id) {
      ++owners_[owner].failures[input];
      return 0;
    }
  }
  return id;
}

void RewriteTable::set_expiry(uint32_t id, bool guaranteed, uint64_t expiry_ns, uint64_t best_effort_ns) {
  Mapping& m = mapping(id);
  if (guaranteed == m.guaranteed && expiry_ns >= m.heap_exp) {
    // Later than its heap key: the item stays (top() moves it when it
    // comes first), so a packet's refresh costs no tree operation.
    m.order = ++order_;
    m.expiry_ns = expiry_ns;
    m.best_effort_ns = best_effort_ns;
    return;
  }
  heap_erase(id);
  m.guaranteed = guaranteed;
  m.expiry_ns = expiry_ns;
  m.best_effort_ns = best_effort_ns;
  heap_insert(id);
}

void RewriteTable::shift_guaranteed(uint64_t now) {
  while (!heap_[1].empty()) {
    uint32_t id = top(1);
    Mapping& m = mapping(id);
    if (m.expiry_ns > now) break;
    set_expiry(id, false, m.best_effort_ns, m.best_effort_ns);
  }
}

void RewriteTable::destroy(uint32_t id) {
  Mapping& m = mapping(id);
  heap_erase(id);
  for (int d = 0; d < 2; ++d) {
    uint32_t* v = index_.find(Key{m.key[d], m.owner, m.map});
    if (v && *v == ((id << 1) | uint32_t(d))) index_.erase(v);
  }
  --owners_[m.owner].count[m.input];
  m.live = false;
  m.seq.reset();
  free_.push_back(id);
}

void RewriteTable::reap(uint64_t now, bool clear) {
  shift_guaranteed(now);
  while (!heap_[0].empty()) {
    uint32_t id = top(0);
    if (mapping(id).expiry_ns > now) break;
    destroy(id);
  }
  int64_t cap = clear ? 0 : capacity;
  while (int64_t(size()) > cap) destroy(top(heap_[0].empty() ? 1 : 0));
}

void RewriteTable::remove_input(uint32_t owner, uint16_t input) {
  for (uint32_t id = 1; id <= maps_.size(); ++id) {
    const Mapping& m = mapping(id);
    if (m.live && m.owner == owner && m.input == input) destroy(id);
  }
}

}  // namespace shoal::flow

// The compiled rule set: fast patterns into the built-in DFA or Hyperscan,
// pcres sorted by what answers them.
#include "shoal/ids/hs_types.hh"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

namespace shoal::ids {

bool have_hyperscan() {
#ifdef SHOAL_HAVE_HYPERSCAN
  return true;
#else
  return false;
#endif
}

Database::Database() = default;
Database::~Database() = default;

namespace {

// Whether a pcre item needs only the yes/no answer: not relative, and the
// items after it up to the next non-negated one (which would take its end
// as their reference) are not relative either.
bool existence_only(const Rule& r, size_t k) {
  if (r.items[k].pcre.relative || r.items[k].buf != Buf::Packet || r.items[k].b64 || !r.items[k].pcre.captures.empty())
    return false;  // (a capturing pcre is run for its groups)
  for (size_t j = k + 1; j < r.items.size(); ++j) {
    const Item& it = r.items[j];
    if (it.byte.kind != ByteOp::None) return false;  // byte checks read the cursor: PCRE2 gives it
    if (it.relative()) return false;
    if (!(it.is_pcre ? it.pcre.neg : it.content.neg)) break;
  }
  return true;
}

#ifdef SHOAL_HAVE_HYPERSCAN
// PCRE's DOLLAR_ENDONLY for an engine without it: each '$' outside a class
// (and, with x, outside a comment) becomes \z: only the very end, not also
// before a final newline.
std::string dollar_end_only(const std::string& p, bool extended) {
  std::string out;
  bool cls = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      out += c;
      out += p[++i];
    } else if (cls) {
      if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]
        size_t e = p.find(":]", i + 2);
        if (e != std::string::npos) {
          out += p.substr(i, e + 2 - i);
          i = e + 1;
          continue;
        }
      }
      if (c == ']') cls = false;
      out += c;
    } else if (c == '[') {
      cls = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];  // a leading ']' is a member
    } else if (extended && c == '#') {                         // a comment, to the end of the line
      size_t e = p.find('\n', i);
      if (e == std::string::npos) e = p.size() - 1;
      out += p.substr(i, e + 1 - i);
      i = e;
    } else if (c == '$') {
      out += "\\z";
    } else {
      out += c;
    }
  }
  return out;
}

// A pcre as a Hyperscan expression asking only whether a match exists;
// false where its flags have no Hyperscan form (PCRE2 or the DFA answers).
bool hs_expression(const Pcre& p, std::string& expr, unsigned& flags) {
  flags = HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY;
  bool x = false, anchored = false, end_only = false;
  for (char f : p.flags) {
    switch (f) {
      case 'i': flags |= HS_FLAG_CASELESS; break;
      case 's': flags |= HS_FLAG_DOTALL; break;
      case 'm': flags |= HS_FLAG_MULTILINE; break;
      case 'x': x = true; break;
      case 'A': anchored = true; break;
      case 'E': end_only = true; break;
      case 'G':
      case 'B':
      case 'O': break;        // no bearing on whether a match exists
      default: return false;  // R, anything newer
    }
  }
  // (E means nothing with m, as in PCRE)
  std::string pat = end_only && !(flags & HS_FLAG_MULTILINE) ? dollar_end_only(p.pattern, x) : p.pattern;
  // anchored: the newline ends a trailing comment; with x it is only space
  if (anchored) pat = "\\A(?:" + pat + (x ? "\n)" : ")");
  expr = x ? "(?x)" + pat : pat;
  return true;
}
#endif

}  // namespace

namespace {
// Bounds on the ports a port set matches: its range, a list's span, the
// whole range when negated.
void port_bounds(const PortSet& ps, uint16_t& lo, uint16_t& hi) {
  lo = 0, hi = 65535;
  if (ps.neg || ps.any) return;
  if (!ps.list) {
    lo = ps.lo, hi = ps.hi;
    return;
  }
  uint32_t l = 65535, h = 0;
  for (const PortSet& k : ps.kids) {
    uint16_t a, b;
    port_bounds(k, a, b);
    l = std::min<uint32_t>(l, a), h = std::max<uint32_t>(h, b);
  }
  if (l <= h) lo = uint16_t(l), hi = uint16_t(h);
}
}  // namespace

bool Database::build(std::vector<Rule> rules, EngineKind kind, std::string& err) {
  kind_ = kind;
  rules_ = std::move(rules);
  // Suricata's evaluation order (its signature ordering): by action; then
  // by flowbits, flowints, hostbits and xbits (a rule that only sets a kind
  // of variable before one that sets and reads it, before one that only
  // reads it, before one that uses none); then by priority (1 first); then
  // by sid. A packet's matches are handled in this order: a pass stops
  // those after it, packet-alert-max keeps the first.
  auto rank = [](bool set, bool read) { return set && !read ? 0 : set ? 1 : read ? 2 : 3; };
  auto ranks = [&](const Rule& r) {
    bool fs = false, fr = false, is = false, ir = false, hs = false, hr = false, xs = false, xr = false;
    for (const Flowbit& fb : r.flowbits) (fb.check() ? fr : fs) = true;
    for (const Flowint& fi : r.flowints) (fi.modifies() ? is : ir) = true;
    for (const Hostbit& hb : r.hostbits)
      (hb.track == Hostbit::Pair ? (hb.check() ? xr : xs) : (hb.check() ? hr : hs)) = true;
    int prio = priority_of_ ? priority_of_(r) : r.priority ? r.priority : 3;
    return std::array<int, 6>{
        order_[size_t(action_rank(r.action))], rank(fs, fr), rank(is, ir), rank(hs, hr), rank(xs, xr), prio};
  };
  {
    std::vector<std::pair<std::array<int, 6>, uint32_t>> keys;
    keys.reserve(rules_.size());
    for (uint32_t i = 0; i < rules_.size(); ++i) keys.push_back({ranks(rules_[i]), i});
    std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : rules_[a.second].sid < rules_[b.second].sid;
    });
    std::vector<Rule> sorted;
    sorted.reserve(rules_.size());
    for (const auto& k : keys) sorted.push_back(std::move(rules_[k.second]));
    rules_ = std::move(sorted);
  }
  // long port lists as bitmaps, one per distinct list
  std::map<std::string, std::shared_ptr<const std::vector<uint64_t>>> port_bits;
  for (Rule& r : rules_)
    for (PortSet* ps : {&r.sport, &r.dport}) {
      if (!ps->list || ps->kids.size() < 4) continue;
      auto& b = port_bits[port_set_key(*ps)];
      if (!b) b = std::make_shared<const std::vector<uint64_t>>(port_bitmap(*ps));
      ps->bits = b;
    }
  patterns_.clear();
  pattern_rules_.clear();
  always_.clear();
  tx_rules_.clear();
  tx_payload_rules_.clear();
  stream_rules_.clear();
  std::map<std::string, uint32_t> ids;
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].stream_only()) {
      stream_rules_.push_back(i);
      continue;
    }
    if (rules_[i].stream_payload) stream_rules_.push_back(i);  // (and a packet rule)
    if (rules_[i].uses_tx()) {
      tx_rules_.push_back(i);
      if (std::any_of(rules_[i].items.begin(), rules_[i].items.end(),
                      [](const Item& it) { return it.buf == Buf::Packet; }))
        tx_payload_rules_.push_back(i);
      continue;
    }
    const Content* best = nullptr;
    for (const Item& it : rules_[i].items) {
      if (!it.is_content() || it.content.neg || it.buf != Buf::Packet || it.b64) continue;
      const Content& c = it.content;
      if (c.fast_pattern) {
        best = &c;
        break;
      }
      if (!best || c.bytes.size() > best->bytes.size()) best = &c;
    }
    if (!best) {
      always_.push_back(i);
      continue;
    }
    std::string key;
    for (char ch : best->bytes) key.push_back(char(fold(uint8_t(ch))));
    auto [pos, fresh] = ids.emplace(key, uint32_t(patterns_.size()));
    if (fresh) {
      patterns_.push_back(key);
      pattern_rules_.emplace_back();
    }
    pattern_rules_[pos->second].push_back(i);
  }
  if (!ac_.build(patterns_, err)) return false;
  if (!build_tx_prefilter(err)) return false;
  if (!build_stream_prefilter(err)) return false;

  // Each distinct pcre (pattern and flags) compiled to a DFA once; the
  // yes/no ones get a slot (answered once per packet).
  dfas_.assign(rules_.size(), {});
  item_slot_.assign(rules_.size(), {});
  regex_count_ = regex_compiled_ = 0;
  regex_refusals_.clear();
  pcre_stats_ = PcreStats();
  std::map<std::string, std::shared_ptr<const RegexDfa>> compiled;
  std::map<std::string, int32_t> slot_of;
  std::vector<const Pcre*> slot_pcre;
  slot_dfa_.clear();
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    item_slot_[i].assign(rules_[i].items.size(), -1);
    for (size_t k = 0; k < rules_[i].items.size(); ++k) {
      const Item& it = rules_[i].items[k];
      if (!it.is_pcre) continue;
      ++regex_count_;
      std::string key = it.pcre.flags + "/" + it.pcre.pattern;
      auto found = compiled.find(key);
      if (found == compiled.end()) {
        auto d = std::make_shared<RegexDfa>();
        std::string why;
        if (d->compile(it.pcre.pattern, it.pcre.flags, why)) {
          found = compiled.emplace(key, std::move(d)).first;
        } else {
          found = compiled.emplace(key, nullptr).first;
          regex_refusals_.push_back(
              fmt::format("sid {}: /{}/{}: {}", rules_[i].sid, it.pcre.pattern, it.pcre.flags, why));
        }
      } else if (!found->second) {
        regex_refusals_.push_back(
            fmt::format("sid {}: /{}/{}: as above", rules_[i].sid, it.pcre.pattern, it.pcre.flags));
      }
      if (found->second) ++regex_compiled_;
      dfas_[i].push_back(found->second);
      if (!existence_only(rules_[i], k)) continue;
      ++pcre_stats_.existence;
      auto [slot, fresh] = slot_of.emplace(key, int32_t(slot_dfa_.size()));
      if (fresh) {
        slot_dfa_.push_back(found->second.get());
        slot_pcre.push_back(&it.pcre);
      }
      item_slot_[i][k] = slot->second;
    }
  }
  slot_rules_.assign(slot_dfa_.size(), {});
  hs_.reset();
  if (kind == EngineKind::Hyperscan) {
#ifdef SHOAL_HAVE_HYPERSCAN
    hs_ = std::make_unique<Hs>();
    if (!build_hyperscan(err)) return false;
    // Each slot: Hyperscan where it takes the expression.
    hs_->re.assign(slot_dfa_.size(), nullptr);
    std::vector<bool> empty_ok(slot_dfa_.size(), true);
    for (size_t sl = 0; sl < slot_pcre.size(); ++sl) {
      std::string expr;
      unsigned fl = 0;
      if (!hs_expression(*slot_pcre[sl], expr, fl)) continue;
      hs_compile_error_t* ce = nullptr;
      if (hs_compile(expr.c_str(), fl, HS_MODE_BLOCK, nullptr, &hs_->re[sl], &ce) != HS_SUCCESS) {
        // (embedded start anchors, "can never match", resource limits)
        if (ce) hs_free_compile_error(ce);
        hs_->re[sl] = nullptr;
        continue;
      }
      hs_expr_info_t* info = nullptr;
      ce = nullptr;
      if (hs_expression_info(expr.c_str(), fl, &info, &ce) == HS_SUCCESS && info) {
        empty_ok[sl] = info->min_width == 0;
        free(info);
      } else if (ce) {
        hs_free_compile_error(ce);
      }
    }
    // Rules without fast pattern: prefiltered by their first positive
    // yes/no pcre that Hyperscan took and that cannot match empty.
    std::vector<uint32_t> still;
    for (uint32_t r : always_) {
      int32_t by = -1;
      for (size_t k = 0; k < rules_[r].items.size() && by < 0; ++k) {
        int32_t sl = item_slot_[r][k];
        if (sl >= 0 && !rules_[r].items[k].pcre.neg && hs_->re[size_t(sl)] && !empty_ok[size_t(sl)]) by = sl;
      }
      if (by < 0) {
        still.push_back(r);
      } else {
        slot_rules_[size_t(by)].push_back(r);
      }
    }
    std::vector<std::string> exprs;
    std::vector<unsigned> flags, idv;
    for (uint32_t sl = 0; sl < slot_rules_.size(); ++sl) {
      if (slot_rules_[sl].empty()) continue;
      std::string e;
      unsigned fl = 0;
      hs_expression(*slot_pcre[sl], e, fl);
      exprs.push_back(std::move(e));
      flags.push_back(fl);
      idv.push_back(sl);
    }
    if (!exprs.empty()) {
      std::vector<const char*> ptrs;
      ptrs.reserve(exprs.size());
      for (auto& e : exprs) ptrs.push_back(e.c_str());
      hs_compile_error_t* ce = nullptr;
      if (hs_compile_multi(ptrs.data(), flags.data(), idv.data(), unsigned(ptrs.size()), HS_MODE_BLOCK, nullptr,
                           &hs_->prefilter, &ce) == HS_SUCCESS) {
        always_ = std::move(still);
        for (auto& v : slot_rules_) pcre_stats_.prefiltered += v.size();
      } else {
        // each compiled alone, so this is a resource limit: verify them on every packet
        if (ce) hs_free_compile_error(ce);
        hs_->prefilter = nullptr;
        for (auto& v : slot_rules_) v.clear();
      }
    }
#else
    err = "this build has no Hyperscan (ENGINE builtin works everywhere)";
    return false;
#endif
  }
  // A slot nothing but PCRE2 can answer is no slot.
  for (uint32_t i = 0; i < rules_.size(); ++i)
    for (auto& sl : item_slot_[i]) {
      if (sl < 0) continue;
      bool hs = false;
#ifdef SHOAL_HAVE_HYPERSCAN
      hs = hs_ && hs_->re[size_t(sl)];
#endif
      if (hs) {
        ++pcre_stats_.hyperscan;
      } else if (slot_dfa_[size_t(sl)]) {
        ++pcre_stats_.dfa;
      } else {
        sl = -1;
      }
    }
  // Each rule's protocol classes and port bounds (Engine::may_match), and
  // the always-checked rules by the packet protocols they can match.
  quick_.assign(rules_.size(), Quick{});
  for (uint32_t r = 0; r < rules_.size(); ++r) {
    const Rule& x = rules_[r];
    Quick& q = quick_[r];
    switch (x.proto) {
      case Proto::TCP: q.classes = 1, q.need_ports = true; break;
      case Proto::UDP: q.classes = 2, q.need_ports = true; break;
      case Proto::ICMP:
      case Proto::ICMP4:
      case Proto::ICMP6: q.classes = 4; break;
      case Proto::SCTP: q.classes = 8, q.need_ports = true; break;
      default: q.classes = 15;  // ip, ipv4, ipv6: any protocol
    }
    if (q.need_ports && !x.bidirectional) {
      port_bounds(x.sport, q.slo, q.shi);
      port_bounds(x.dport, q.dlo, q.dhi);
    }
  }
  groups_.clear(), group_at_.assign(1, 0), group_rules_.clear();
  for (size_t pt = 0; pt < patterns_.size(); ++pt) {
    std::vector<std::pair<Quick, std::vector<uint32_t>>> gs;
    for (uint32_t r : pattern_rules_[pt]) {
      auto g = std::find_if(gs.begin(), gs.end(), [&](const auto& x) { return x.first == quick_[r]; });
      if (g == gs.end()) g = gs.insert(gs.end(), {quick_[r], {}});
      g->second.push_back(r);
    }
    for (const auto& g : gs) {
      groups_.push_back({g.first, uint32_t(group_rules_.size()), uint32_t(group_rules_.size() + g.second.size())});
      group_rules_.insert(group_rules_.end(), g.second.begin(), g.second.end());
    }
    group_at_.push_back(uint32_t(groups_.size()));
  }
  if (!build_port_groups(err)) return false;
  build_device_regex();
  for (auto& v : always_by_) v.clear();
  for (uint32_t r : always_)
    for (int c = 0; c < 4; ++c)
      if (quick_[r].classes & (1u << c)) always_by_[size_t(c)].push_back(r);
  return true;
}

void Database::build_device_regex() {
  constexpr size_t kDeviceRegexBytes = size_t(256) << 20;  // the DFAs' block
  DeviceRegex& d = dev_regex_;
  d = DeviceRegex();
  d.hdr.assign(slot_dfa_.size(), k::RegexHdr{});
  std::vector<uint8_t> placed(slot_dfa_.size(), 0);
  std::vector<uint32_t> seen(slot_dfa_.size(), UINT32_MAX);  // the last pattern that listed the slot
  d.pat_off.push_back(0);
  for (uint32_t pt = 0; pt < patterns_.size(); ++pt) {
    for (uint32_t r : pattern_rules_[pt])
      for (int32_t sl : item_slot_[r]) {
        if (sl < 0 || !slot_dfa_[size_t(sl)] || seen[size_t(sl)] == pt || placed[size_t(sl)] == 2) continue;
        seen[size_t(sl)] = pt;
        const RegexDfa& dfa = *slot_dfa_[size_t(sl)];
        if (!placed[size_t(sl)] && d.blob.size() + dfa.memory_bytes() + 8 > kDeviceRegexBytes) {
          placed[size_t(sl)] = 2;  // past the bound: the host answers it
          continue;
        }
        d.pat_slots.push_back(uint32_t(sl));
        if (placed[size_t(sl)]) continue;
        placed[size_t(sl)] = 1;
        k::RegexHdr& h = d.hdr[size_t(sl)];
        const k::RegexView v = dfa.view();
        h.nclasses = v.nclasses, h.start = v.start, h.accept = v.accept;
        auto put = [&](const void* src, size_t bytes) {
          size_t at = (d.blob.size() + 3) & ~size_t(3);
          d.blob.resize(at + bytes);
          std::memcpy(d.blob.data() + at, src, bytes);
          return uint32_t(at);
        };
        h.cls = put(dfa.cls().data(), dfa.cls().size());
        h.accept_end = put(dfa.accept_end().data(), dfa.accept_end().size());
        h.next = put(dfa.next().data(), dfa.next().size() * 4);
      }
    d.pat_off.push_back(uint32_t(d.pat_slots.size()));
  }
  if (d.pat_slots.empty()) d = DeviceRegex();
}

bool Database::build_tx_prefilter(std::string& err) {
  // Each tx rule's fast pattern: a positive content, read without
  // transforms, in an application-layer buffer (its fast_pattern, else its
  // longest); a rule with an `absent` item (whose run may hold without its
  // contents) or of both sides of a transaction (`=>`) has none.
  tx_pf_.clear();
  tx_always_.clear();
  std::map<Buf, std::pair<std::map<std::string, uint32_t>, std::vector<std::string>>> by_buf;
  std::map<Buf, std::vector<std::vector<uint32_t>>> rules_of;
  for (uint32_t r : tx_rules_) {
    const Rule& x = rules_[r];
    const Item* best = nullptr;
    bool usable = !x.transactional;
    for (const Item& it : x.items) {
      if (it.byte.kind == ByteOp::Absent) usable = false;
      if (!it.is_content() || it.content.neg || it.content.bytes.empty() || it.xform >= 0 || packet_buf(it.buf) ||
          it.b64)
        continue;
      if (best && best->content.fast_pattern) continue;
      if (it.content.fast_pattern || !best || it.content.bytes.size() > best->content.bytes.size()) best = &it;
    }
    if (!usable || !best) {
      tx_always_.push_back(r);
      continue;
    }
    Buf b = side_buf(x, best->buf);
    std::string key;
    for (char ch : best->content.bytes) key.push_back(char(fold(uint8_t(ch))));
    auto& [ids, pats] = by_buf[b];
    auto& lists = rules_of[b];
    auto [pos, fresh] = ids.emplace(key, uint32_t(pats.size()));
    if (fresh) pats.push_back(key), lists.emplace_back();
    lists[pos->second].push_back(r);
  }
  for (auto& [b, v] : by_buf) {
    TxPrefilter f;
    f.buf = b;
    if (!f.ac.build(v.second, err)) return false;
    f.rules = std::move(rules_of[b]);
    tx_pf_.push_back(std::move(f));
  }
  return true;
}

void Database::tx_candidates(const TxBuffers& tx, std::vector<uint32_t>& out) const {
  out.clear();
  std::vector<uint8_t> seen;  // per pattern of the buffer: found already
  for (const TxPrefilter& f : tx_pf_) {
    if (!tx.has(f.buf)) continue;
    seen.assign(f.rules.size(), 0);
    k::AcView v = f.ac.view();
    auto scan = [&](std::string_view s) {
      k::ac_scan(v, reinterpret_cast<const uint8_t*>(s.data()), uint32_t(s.size()), [&](uint32_t id, uint32_t) {
        if (!seen[id]) seen[id] = 1, out.insert(out.end(), f.rules[id].begin(), f.rules[id].end());
        return true;
      });
    };
    if (const std::vector<std::string>* many = tx.many[size_t(f.buf)]) {
      for (const std::string& s : *many) scan(s);
    } else {
      scan(tx.b[size_t(f.buf)]);
    }
  }
  out.insert(out.end(), tx_always_.begin(), tx_always_.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// The fast pattern of a rule's items in buffer b: its fast_pattern
// content, else its longest positive one (null: none).
static const Content* fast_content(const Rule& r, Buf b) {
  const Content* best = nullptr;
  for (const Item& it : r.items) {
    if (!it.is_content() || it.content.neg || it.content.bytes.empty() || it.buf != b || it.xform >= 0 || it.b64)
      continue;
    if (it.content.fast_pattern) return &it.content;
    if (!best || it.content.bytes.size() > best->bytes.size()) best = &it.content;
  }
  return best;
}

bool Database::build_stream_prefilter(std::string& err) {
  stream_of_.clear();
  stream_always_.clear();
  stream_len_.clear();
  stream_longest_ = 0;
  stream_plain_.assign(rules_.size(), 0);
  std::map<std::string, uint32_t> ids;
  std::vector<std::string> pats;
  for (uint32_t r : stream_rules_) {
    const Content* c = fast_content(rules_[r], Buf::Packet);
    if (!c) {
      stream_always_.push_back(r);
      continue;
    }
    const Rule& rule = rules_[r];
    if (rule.items.size() == 1 && rule.items[0].is_content() && rule.items[0].buf == Buf::Packet &&
        rule.items[0].xform < 0 && !rule.header_bufs) {
      const Content& k = rule.items[0].content;
      stream_plain_[r] = !k.neg && !k.endswith && !k.has_offset && !k.has_depth && !k.has_distance && !k.has_within &&
                         k.var_offset < 0 && k.var_depth < 0 && k.var_distance < 0 && k.var_within < 0;
    }
    std::string key;
    for (char ch : c->bytes) key.push_back(char(fold(uint8_t(ch))));
    auto [pos, fresh] = ids.emplace(key, uint32_t(pats.size()));
    if (fresh) {
      pats.push_back(key), stream_of_.emplace_back(), stream_len_.push_back(uint32_t(key.size()));
      stream_longest_ = std::max(stream_longest_, uint32_t(key.size()));
    }
    stream_of_[pos->second].push_back(r);
  }
  stream_pats_ = pats;
  return pats.empty() || stream_ac_.build(pats, err);
}

void Database::stream_candidates(const uint8_t* s, uint32_t n, std::vector<uint32_t>& out) const {
  out.clear();
  if (!stream_of_.empty()) {
    std::vector<uint8_t> seen(stream_of_.size(), 0);
    k::ac_scan(stream_ac_.view(), s, n, [&](uint32_t id, uint32_t) {
      if (!seen[id]) seen[id] = 1, out.insert(out.end(), stream_of_[id].begin(), stream_of_[id].end());
      return true;
    });
  }
  out.insert(out.end(), stream_always_.begin(), stream_always_.end());
  std::sort(out.begin(), out.end());
}

EngineKind Database::pick_faster() {
  scan_ns_per_kib_[0] = scan_ns_per_kib_[1] = 0;
#ifdef SHOAL_HAVE_HYPERSCAN
  if (kind_ != EngineKind::Hyperscan || !hs_ || !hs_->db || patterns_.empty()) return kind_;
  // 64 KiB like traffic: text lines (words, paths, headers) and binary runs
  std::string sample;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17, x; };
  static const char* const kWords[] = {"GET ",        "HTTP/1.1\r\n", "Host: ", ".com", "/index.html", "User-Agent: ",
                                       "Mozilla/5.0", "text/html",    "the ",   "and ", "data",        "="};
  while (sample.size() < 65536) {
    if (next() % 4 == 0) {
      for (int i = 0, n = int(next() % 64); i < n; ++i) sample.push_back(char(next()));
    } else if (next() % 2) {
      sample += kWords[next() % std::size(kWords)];
    } else {
      for (int i = 0, n = 2 + int(next() % 8); i < n; ++i) sample.push_back(char('a' + next() % 26));
      sample.push_back(' ');
    }
  }
  // Each engine's matchers, the whole and the port groups' (built-in: made
  // for the measurement, kept if it wins)
  build_group_automata();
  hs_scratch_t* scratch = nullptr;
  if (hs_alloc_scratch(hs_->db, &scratch) != HS_SUCCESS) return kind_;
  for (auto* g : hs_->group[0])
    if (g && hs_alloc_scratch(g, &scratch) != HS_SUCCESS) return hs_free_scratch(scratch), kind_;
  std::vector<uint32_t> seen(patterns_.size(), 0);
  uint32_t epoch = 0;
  // each as the engine runs it: packet-sized scans, each pattern once
  auto scan = [&](bool hs, int32_t set, const uint8_t* d) {
    ++epoch;
    if (hs) {
      struct Ctx {
        std::vector<uint32_t>* seen;
        uint32_t epoch;
      } ctx{&seen, epoch};
      hs_scan(
          set < 0 || !hs_->group[0][size_t(set)] ? hs_->db : hs_->group[0][size_t(set)],
          reinterpret_cast<const char*>(d), 1024, 0, scratch,
          [](unsigned id, unsigned long long, unsigned long long, unsigned, void* c) -> int {
            auto* k = static_cast<Ctx*>(c);
            (*k->seen)[id] = k->epoch;
            return 0;
          },
          &ctx);
    } else {
      const AcTable* t = group_automaton(set);
      const uint32_t* ids = t ? port_groups_[0].sets[size_t(set)].data() : nullptr;
      k::ac_scan((t ? *t : ac_).view(), d, 1024, [&](uint32_t id, uint32_t) {
        uint32_t p = ids ? ids[id] : id;
        if (seen[p] != epoch) seen[p] = epoch;
        return true;
      });
    }
  };
  auto time = [&](bool hs) {
    uint64_t best = ~0ull;
    for (int round = 0; round < 3; ++round) {
      auto t0 = std::chrono::steady_clock::now();
      for (int32_t set = -1; set < int32_t(port_groups_[0].sets.size()); ++set) {
        if (set >= 0 && port_groups_[0].sets[size_t(set)].empty()) continue;
        for (size_t at = 0; at < sample.size(); at += 1024)
          scan(hs, set, reinterpret_cast<const uint8_t*>(sample.data()) + at);
      }
      best = std::min<uint64_t>(
          best,
          uint64_t(
              std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
    }
    return best / 64 / (port_groups_[0].sets.size() + 1);  // per KiB (and matcher)
  };
  scan_ns_per_kib_[0] = time(false);
  scan_ns_per_kib_[1] = time(true);
  hs_free_scratch(scratch);
  if (scan_ns_per_kib_[0] < scan_ns_per_kib_[1])
    kind_ = EngineKind::Builtin;
  else
    clear_group_automata();
#endif
  return kind_;
}

bool Database::build_port_groups(std::string& err) {
  std::vector<uint8_t> cls(rules_.size()), ports(rules_.size());
  for (size_t r = 0; r < rules_.size(); ++r) cls[r] = quick_[r].classes, ports[r] = quick_[r].need_ports;
  // a set of more than 3/4 of the patterns scans at nearly the whole's cost
  port_groups_[0] = ids::build_port_groups(rules_, cls, ports, pattern_rules_, 0.75);
  // The second form, for packets whose payload the stream's inspection
  // reads: the patterns of the rules that are not stream-payload ones (those
  // are TCP rules: only the TCP class's sets are built; the other classes'
  // packets use the first form)
  two_forms_ = false;
  std::vector<std::vector<uint32_t>> packet_rules(pattern_rules_.size());
  for (size_t p = 0; p < pattern_rules_.size(); ++p)
    for (uint32_t r : pattern_rules_[p]) {
      if (rules_[r].stream_payload)
        two_forms_ = true;
      else
        packet_rules[p].push_back(r);
    }
  port_groups_[1] = PortGroups();
  if (two_forms_) {
    for (uint8_t& c : cls) c &= 1;
    port_groups_[1] = ids::build_port_groups(rules_, cls, ports, packet_rules, 0.75);
  }
  clear_group_automata();
  if (kind_ == EngineKind::Builtin) build_group_automata();
#ifdef SHOAL_HAVE_HYPERSCAN
  if (hs_) {
    for (size_t form = 0; form < 2; ++form) {
      const auto& sets = port_groups_[form].sets;
      hs_->group[form].assign(sets.size(), nullptr);
      for (size_t i = 0; i < sets.size(); ++i) {
        if (sets[i].empty()) continue;
        std::vector<const char*> exprs;
        std::vector<size_t> lens;
        std::vector<unsigned> flags, idv;
        for (uint32_t p : sets[i]) {
          exprs.push_back(patterns_[p].data());
          lens.push_back(patterns_[p].size());
          flags.push_back(HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH);
          idv.push_back(p);
        }
        hs_compile_error_t* ce = nullptr;
        if (hs_compile_lit_multi(exprs.data(), flags.data(), idv.data(), lens.data(), unsigned(exprs.size()),
                                 HS_MODE_BLOCK, nullptr, &hs_->group[form][i], &ce) != HS_SUCCESS) {
          err = fmt::format("Hyperscan: {}", ce ? ce->message : "compile failed");
          if (ce) hs_free_compile_error(ce);
          return false;
        }
      }
    }
  }
#endif
  return true;
}

void Database::build_group_automata() {
  for (size_t form = 0; form < 2; ++form) {
    const auto& sets = port_groups_[form].sets;
    std::vector<AcTable>& ac = group_ac_[form];
    ac.assign(sets.size(), AcTable());
    // together no more than the whole DFA's memory again (per form)
    size_t budget = ac_.memory_bytes();
    for (size_t i = 0; i < sets.size(); ++i) {
      if (sets[i].empty()) continue;
      std::vector<std::string> pats;
      for (uint32_t p : sets[i]) pats.push_back(patterns_[p]);
      std::string why;
      if (!ac[i].build(pats, why) || ac[i].memory_bytes() > budget) {
        ac[i] = AcTable();
        continue;
      }
      budget -= ac[i].memory_bytes();
    }
  }
}

bool Database::build_hyperscan(std::string& err) {
#ifdef SHOAL_HAVE_HYPERSCAN
  // a literal database of pats (ids: their positions), nothing when empty
  auto compile = [&](const std::vector<std::string>& pats, unsigned flag, hs_database_t** out) {
    if (pats.empty()) return true;
    std::vector<const char*> exprs;
    std::vector<size_t> lens;
    std::vector<unsigned> flags(pats.size(), flag), idv;
    for (uint32_t i = 0; i < pats.size(); ++i) {
      exprs.push_back(pats[i].data());
      lens.push_back(pats[i].size());
      idv.push_back(i);
    }
    hs_compile_error_t* ce = nullptr;
    if (hs_compile_lit_multi(exprs.data(), flags.data(), idv.data(), lens.data(), unsigned(exprs.size()), HS_MODE_BLOCK,
                             nullptr, out, &ce) != HS_SUCCESS) {
      err = fmt::format("Hyperscan: {}", ce ? ce->message : "compile failed");
      if (ce) hs_free_compile_error(ce);
      return false;
    }
    return true;
  };
  // the fast patterns, each once per scan; the stream rules' patterns, each
  // occurrence (the stream's prefilter keeps each pattern's latest)
  return compile(patterns_, HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH, &hs_->db) &&
         compile(stream_pats_, HS_FLAG_CASELESS, &hs_->stream);
#else
  err = "this build has no Hyperscan";
  return false;
#endif
}

}  // namespace shoal::ids

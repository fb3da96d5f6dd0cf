#include "shoal/ids/engine.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#ifdef SHOAL_HAVE_HYPERSCAN
#include <hs/hs.h>
#endif

namespace shoal::ids {

bool have_hyperscan() {
#ifdef SHOAL_HAVE_HYPERSCAN
  return true;
#else
  return false;
#endif
}

bool parse_packet(const uint8_t* ip, uint32_t len, PacketInfo& p) {
  p = PacketInfo();
  if (len < 1) return false;
  uint32_t l4 = 0, end = len;
  bool first_fragment = true;
  uint8_t v = ip[0] >> 4;
  if (v == 4) {
    uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
    if (hl < 20 || len < hl) return false;
    uint32_t total = uint32_t(ip[2]) << 8 | ip[3];
    if (total < hl) return false;
    end = std::min(total, len);  // padding off; a truncated capture keeps what it has
    p.src.v6 = p.dst.v6 = false;
    std::memcpy(p.src.b, ip + 12, 4);
    std::memcpy(p.dst.b, ip + 16, 4);
    p.proto = ip[9];
    first_fragment = ((uint32_t(ip[6]) << 8 | ip[7]) & 0x1fff) == 0;
    l4 = hl;
  } else if (v == 6) {
    if (len < 40) return false;
    end = std::min<uint32_t>(40u + (uint32_t(ip[4]) << 8 | ip[5]), len);
    p.src.v6 = p.dst.v6 = true;
    std::memcpy(p.src.b, ip + 8, 16);
    std::memcpy(p.dst.b, ip + 24, 16);
    uint8_t nh = ip[6];
    l4 = 40;
    // extension headers: hop-by-hop, routing, destination options, fragment
    for (int guard = 0; guard < 8 && (nh == 0 || nh == 43 || nh == 60 || nh == 44); ++guard) {
      if (l4 + 8 > end) return false;
      if (nh == 44) {
        first_fragment = ((uint32_t(ip[l4 + 2]) << 8 | ip[l4 + 3]) & 0xfff8) == 0;
        nh = ip[l4];
        l4 += 8;
      } else {
        uint8_t next = ip[l4];
        l4 += (uint32_t(ip[l4 + 1]) + 1) * 8;
        nh = next;
      }
    }
    if (l4 > end) return false;
    p.proto = nh;
  } else {
    return false;
  }
  uint32_t pay = l4;
  if (first_fragment) {
    if (p.proto == 6 && l4 + 20 <= end) {
      p.has_ports = true;
      p.sport = uint16_t(ip[l4] << 8 | ip[l4 + 1]);
      p.dport = uint16_t(ip[l4 + 2] << 8 | ip[l4 + 3]);
      pay = l4 + uint32_t(ip[l4 + 12] >> 4) * 4;
    } else if (p.proto == 17 && l4 + 8 <= end) {
      p.has_ports = true;
      p.sport = uint16_t(ip[l4] << 8 | ip[l4 + 1]);
      p.dport = uint16_t(ip[l4 + 2] << 8 | ip[l4 + 3]);
      pay = l4 + 8;
    } else if ((p.proto == 1 || p.proto == 58) && l4 + 8 <= end) {
      pay = l4 + 8;
    } else if (p.proto == 6 || p.proto == 17 || p.proto == 1 || p.proto == 58) {
      pay = end;  // a truncated transport header: nothing to inspect
    }
  }
  pay = std::min(pay, end);
  p.payload = ip + pay;
  p.plen = end - pay;
  return true;
}

bool header_matches(const Rule& r, const PacketInfo& p) {
  bool ports = false;
  switch (r.proto) {
    case Proto::TCP:
      if (p.proto != 6) return false;
      ports = true;
      break;
    case Proto::UDP:
      if (p.proto != 17) return false;
      ports = true;
      break;
    case Proto::ICMP:
      if (p.proto != 1 && p.proto != 58) return false;
      break;
    case Proto::IP: break;
  }
  if (ports && !p.has_ports) return false;
  if (r.has_dsize && (p.plen < r.dsize_lo || p.plen > r.dsize_hi)) return false;
  auto one_way = [&](const Addr& s, uint16_t sp, const Addr& d, uint16_t dp) {
    return r.src.match(s) && r.dst.match(d) && (!ports || (r.sport.match(sp) && r.dport.match(dp)));
  };
  return one_way(p.src, p.sport, p.dst, p.dport) || (r.bidirectional && one_way(p.dst, p.dport, p.src, p.sport));
}

namespace {

constexpr int kBacktrackBudget = 20000;

// The first occurrence of c at or after `from` that fits in [from, hi).
int64_t find(const Content& c, const uint8_t* s, int64_t from, int64_t hi) {
  const auto* pat = reinterpret_cast<const uint8_t*>(c.bytes.data());
  const int64_t m = int64_t(c.bytes.size());
  for (int64_t i = from; i + m <= hi; ++i) {
    if (c.nocase) {
      if (fold(s[i]) != fold(pat[0])) continue;
      int64_t j = 1;
      while (j < m && fold(s[i + j]) == fold(pat[j])) ++j;
      if (j == m) return i;
    } else {
      const void* q = std::memchr(s + i, pat[0], size_t(hi - m - i + 1));
      if (!q) return -1;
      i = static_cast<const uint8_t*>(q) - s;
      if (std::memcmp(s + i, pat, size_t(m)) == 0) return i;
    }
  }
  return -1;
}

// exists(k): for pcre item k, 1 or 0 when something other than PCRE2
// already knows whether it matches somewhere in the payload (the item is
// not relative and nothing after it uses its end), -1 to ask PCRE2.
template <class Exists>
bool items_from(const Rule& r, size_t k, const uint8_t* s, uint32_t n, int64_t prev_end, int& budget, Exists& exists) {
  if (k == r.items.size()) return true;
  if (--budget < 0) return false;  // pathological backtracking: no match (as Snort's limits)
  const Item& it = r.items[k];
  if (it.is_pcre) {
    int known = exists(k);
    size_t end = size_t(std::max<int64_t>(0, prev_end));  // unused when known: nothing reads it
    bool m;
    if (known >= 0) {
      m = known != 0;
    } else {
      size_t start = it.pcre.relative ? size_t(std::max<int64_t>(0, prev_end)) : 0;
      m = start <= n && pcre_match(it.pcre, s, n, start, end);
    }
    if (it.pcre.neg) return !m && items_from(r, k + 1, s, n, prev_end, budget, exists);
    return m && items_from(r, k + 1, s, n, int64_t(end), budget, exists);
  }
  const Content& c = it.content;
  int64_t lo, hi;
  if (c.relative()) {
    lo = prev_end + c.distance;
    hi = c.has_within ? lo + c.within : int64_t(n);
  } else {
    lo = c.has_offset ? c.offset : 0;
    hi = c.has_depth ? lo + c.depth : int64_t(n);
  }
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, n);
  if (c.neg) return find(c, s, lo, hi) < 0 && items_from(r, k + 1, s, n, prev_end, budget, exists);
  for (int64_t pos = find(c, s, lo, hi); pos >= 0; pos = find(c, s, pos + 1, hi)) {
    if (items_from(r, k + 1, s, n, pos + int64_t(c.bytes.size()), budget, exists)) return true;
    if (budget < 0) return false;
  }
  return false;
}

}  // namespace

bool payload_matches(const Rule& r, const uint8_t* payload, uint32_t plen) {
  int budget = kBacktrackBudget;
  auto pcre2 = [](size_t) { return -1; };
  return items_from(r, 0, payload, plen, 0, budget, pcre2);
}

// ---------------------------------------------------------------- Database
struct Database::Hs {
#ifdef SHOAL_HAVE_HYPERSCAN
  hs_database_t* db = nullptr;         // the fast patterns
  std::vector<hs_database_t*> re;      // per expression slot, null where Hyperscan refused it
  hs_database_t* prefilter = nullptr;  // the prefiltering pcres of rules without fast pattern (ids: slots)
  ~Hs() {
    if (db) hs_free_database(db);
    for (auto* d : re)
      if (d) hs_free_database(d);
    if (prefilter) hs_free_database(prefilter);
  }
#endif
};

struct Engine::Scratch {
#ifdef SHOAL_HAVE_HYPERSCAN
  hs_scratch_t* s = nullptr;
  ~Scratch() {
    if (s) hs_free_scratch(s);
  }
#endif
};

Database::Database() = default;
Database::~Database() = default;

namespace {

// Whether a pcre item needs only the yes/no answer: not relative, and the
// items after it up to the next non-negated one (which would take its end
// as their reference) are not relative either.
bool existence_only(const Rule& r, size_t k) {
  if (r.items[k].pcre.relative) return false;
  for (size_t j = k + 1; j < r.items.size(); ++j) {
    const Item& it = r.items[j];
    bool rel = it.is_pcre ? it.pcre.relative : it.content.relative();
    if (rel) return false;
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

bool Database::build(std::vector<Rule> rules, EngineKind kind, std::string& err) {
  kind_ = kind;
  rules_ = std::move(rules);
  patterns_.clear();
  pattern_rules_.clear();
  always_.clear();
  std::map<std::string, uint32_t> ids;
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    const Content* best = nullptr;
    for (const Item& it : rules_[i].items) {
      if (it.is_pcre || it.content.neg) continue;
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
  return true;
}

bool Database::build_hyperscan(std::string& err) {
#ifdef SHOAL_HAVE_HYPERSCAN
  if (patterns_.empty()) return true;
  std::vector<const char*> exprs;
  std::vector<size_t> lens;
  std::vector<unsigned> flags, idv;
  for (uint32_t i = 0; i < patterns_.size(); ++i) {
    exprs.push_back(patterns_[i].data());
    lens.push_back(patterns_[i].size());
    flags.push_back(HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH);
    idv.push_back(i);
  }
  hs_compile_error_t* ce = nullptr;
  if (hs_compile_lit_multi(exprs.data(), flags.data(), idv.data(), lens.data(), unsigned(exprs.size()), HS_MODE_BLOCK,
                           nullptr, &hs_->db, &ce) != HS_SUCCESS) {
    err = fmt::format("Hyperscan: {}", ce ? ce->message : "compile failed");
    if (ce) hs_free_compile_error(ce);
    return false;
  }
  return true;
#else
  err = "this build has no Hyperscan";
  return false;
#endif
}

// ---------------------------------------------------------------- Engine
Engine::Engine() = default;
Engine::~Engine() = default;

bool Engine::build(std::vector<Rule> rules, EngineKind kind, std::string& err) {
  auto db = std::make_shared<Database>();
  return db->build(std::move(rules), kind, err) && use(std::move(db), err);
}

bool Engine::use(std::shared_ptr<const Database> db, std::string& err) {
  db_ = std::move(db);
  hs_scratch_ = std::make_unique<Scratch>();
  seen_.assign(std::max(db_->rules().size(), db_->patterns().size()) * 2, 0);
  slot_epoch_.assign(db_->slots(), 0);
  slot_answer_.assign(db_->slots(), 0);
  epoch_ = 0;
#ifdef SHOAL_HAVE_HYPERSCAN
  if (const Database::Hs* hs = db_->hs()) {
    // one scratch, grown to serve every database
    auto grow = [&](const hs_database_t* d) { return !d || hs_alloc_scratch(d, &hs_scratch_->s) == HS_SUCCESS; };
    bool ok = grow(hs->db) && grow(hs->prefilter);
    for (auto* d : hs->re) ok = ok && grow(d);
    if (!ok) return err = "Hyperscan: no scratch", false;
  }
#else
  (void)err;
#endif
  return true;
}

void Engine::add_rule(uint32_t r) {
  // seen_: patterns in the first half, rules in the second
  uint32_t& sr = seen_[seen_.size() / 2 + r];
  if (sr == epoch_) return;
  sr = epoch_;
  cand_.push_back(r);
}

void Engine::add_candidates(uint32_t pattern) {
  uint32_t& sp = seen_[pattern];
  if (sp == epoch_) return;
  sp = epoch_;
  for (uint32_t r : db_->pattern_rules(pattern)) add_rule(r);
}

void Engine::candidates(const uint8_t* s, uint32_t n) {
  if (db_->patterns().empty() || n == 0) return;
  if (db_->kind() == EngineKind::Builtin) {
    k::ac_scan(db_->automaton().view(), s, n, [&](uint32_t id, uint32_t) {
      add_candidates(id);
      return true;
    });
    return;
  }
#ifdef SHOAL_HAVE_HYPERSCAN
  hs_scan(
      db_->hs()->db, reinterpret_cast<const char*>(s), n, 0, hs_scratch_->s,
      [](unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) -> int {
        static_cast<Engine*>(ctx)->add_candidates(id);
        return 0;
      },
      this);
#endif
}

void Engine::prefilter(const uint8_t* s, uint32_t n) {
#ifdef SHOAL_HAVE_HYPERSCAN
  const Database::Hs* hs = db_->hs();
  if (!hs || !hs->prefilter || n == 0) return;  // prefiltering pcres cannot match empty
  hs_scan(
      hs->prefilter, reinterpret_cast<const char*>(s), n, 0, hs_scratch_->s,
      [](unsigned slot, unsigned long long, unsigned long long, unsigned, void* ctx) -> int {
        auto* e = static_cast<Engine*>(ctx);
        e->slot_epoch_[slot] = e->epoch_;
        e->slot_answer_[slot] = 1;
        for (uint32_t r : e->db_->slot_prefiltered(slot)) e->add_rule(r);
        return 0;
      },
      this);
#else
  (void)s;
  (void)n;
#endif
}

int Engine::exists(uint32_t slot, const uint8_t* s, uint32_t n) {
  if (slot_epoch_[slot] == epoch_) return slot_answer_[slot];
  int a = -1;
#ifdef SHOAL_HAVE_HYPERSCAN
  const Database::Hs* hs = db_->hs();
  if (hs && hs->re[slot] && n > 0) {  // (an empty payload: the DFA or PCRE2 answers)
    bool found = false;
    hs_error_t e = hs_scan(
        hs->re[slot], reinterpret_cast<const char*>(s), n, 0, hs_scratch_->s,
        [](unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) -> int {
          *static_cast<bool*>(ctx) = true;
          return 1;  // one is enough
        },
        &found);
    if (e == HS_SUCCESS || e == HS_SCAN_TERMINATED) a = found;
  }
#endif
  if (a < 0) {
    if (const RegexDfa* d = db_->slot_dfa(slot)) a = d->search(s, n);
  }
  if (a < 0) return -1;
  slot_epoch_[slot] = epoch_;
  slot_answer_[slot] = uint8_t(a);
  return a;
}

void Engine::start() {
  cand_.clear();
  if (++epoch_ == 0) {
    std::fill(seen_.begin(), seen_.end(), 0);
    std::fill(slot_epoch_.begin(), slot_epoch_.end(), 0);
    epoch_ = 1;
  }
}

void Engine::verify(const PacketInfo& p, std::vector<uint32_t>& hits) {
  hits.clear();
  cand_.insert(cand_.end(), db_->always().begin(), db_->always().end());
  std::sort(cand_.begin(), cand_.end());
  verified_ = cand_.size();
  const auto& rules = db_->rules();
  for (uint32_t r : cand_) {
    if (!header_matches(rules[r], p)) continue;
    auto known = [&](size_t k) {
      int32_t sl = db_->existence_slot(r, uint32_t(k));
      return sl < 0 ? -1 : exists(uint32_t(sl), p.payload, p.plen);
    };
    int budget = kBacktrackBudget;
    if (items_from(rules[r], 0, p.payload, p.plen, 0, budget, known)) hits.push_back(r);
  }
}

void Engine::match(const PacketInfo& p, std::vector<uint32_t>& hits) {
  start();
  candidates(p.payload, p.plen);
  prefilter(p.payload, p.plen);
  verify(p, hits);
}

void Engine::match_found(const PacketInfo& p, const uint32_t* patterns, uint32_t n, std::vector<uint32_t>& hits) {
  start();
  for (uint32_t i = 0; i < n; ++i)
    if (patterns[i] < db_->patterns().size()) add_candidates(patterns[i]);
  prefilter(p.payload, p.plen);
  verify(p, hits);
}

}  // namespace shoal::ids

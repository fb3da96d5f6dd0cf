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
    case Proto::TCP: if (p.proto != 6) return false; ports = true; break;
    case Proto::UDP: if (p.proto != 17) return false; ports = true; break;
    case Proto::ICMP: if (p.proto != 1 && p.proto != 58) return false; break;
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

bool items_from(const Rule& r, size_t k, const uint8_t* s, uint32_t n, int64_t prev_end, int& budget) {
  if (k == r.items.size()) return true;
  if (--budget < 0) return false;  // pathological backtracking: no match (as Snort's limits)
  const Item& it = r.items[k];
  if (it.is_pcre) {
    size_t start = it.pcre.relative ? size_t(std::max<int64_t>(0, prev_end)) : 0, end = 0;
    bool m = start <= n && pcre_match(it.pcre, s, n, start, end);
    if (it.pcre.neg) return !m && items_from(r, k + 1, s, n, prev_end, budget);
    return m && items_from(r, k + 1, s, n, int64_t(end), budget);
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
  if (c.neg) return find(c, s, lo, hi) < 0 && items_from(r, k + 1, s, n, prev_end, budget);
  for (int64_t pos = find(c, s, lo, hi); pos >= 0; pos = find(c, s, pos + 1, hi)) {
    if (items_from(r, k + 1, s, n, pos + int64_t(c.bytes.size()), budget)) return true;
    if (budget < 0) return false;
  }
  return false;
}

}  // namespace

bool payload_matches(const Rule& r, const uint8_t* payload, uint32_t plen) {
  int budget = 20000;
  return items_from(r, 0, payload, plen, 0, budget);
}

// ---------------------------------------------------------------- Database
struct Database::Hs {
#ifdef SHOAL_HAVE_HYPERSCAN
  hs_database_t* db = nullptr;
  ~Hs() {
    if (db) hs_free_database(db);
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
  dfas_.assign(rules_.size(), {});
  regex_count_ = regex_compiled_ = 0;
  regex_refusals_.clear();
  for (uint32_t i = 0; i < rules_.size(); ++i)
    for (const Item& it : rules_[i].items) {
      if (!it.is_pcre) continue;
      ++regex_count_;
      auto d = std::make_shared<RegexDfa>();
      std::string why;
      if (d->compile(it.pcre.pattern, it.pcre.flags, why)) {
        ++regex_compiled_;
        dfas_[i].push_back(std::move(d));
      } else {
        dfas_[i].push_back(nullptr);
        regex_refusals_.push_back(fmt::format("sid {}: /{}/{}: {}", rules_[i].sid, it.pcre.pattern, it.pcre.flags, why));
      }
    }
  if (kind == EngineKind::Builtin) return true;
#ifdef SHOAL_HAVE_HYPERSCAN
  hs_ = std::make_unique<Hs>();
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
  err = "this build has no Hyperscan (ENGINE builtin works everywhere)";
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
  epoch_ = 0;
#ifdef SHOAL_HAVE_HYPERSCAN
  if (db_->kind() == EngineKind::Hyperscan && db_->hs()->db &&
      hs_alloc_scratch(db_->hs()->db, &hs_scratch_->s) != HS_SUCCESS)
    return err = "Hyperscan: no scratch", false;
#else
  (void)err;
#endif
  return true;
}

void Engine::add_candidates(uint32_t pattern) {
  // seen_: patterns in the first half, rules in the second
  uint32_t& sp = seen_[pattern];
  if (sp == epoch_) return;
  sp = epoch_;
  const size_t half = seen_.size() / 2;
  for (uint32_t r : db_->pattern_rules(pattern)) {
    uint32_t& sr = seen_[half + r];
    if (sr == epoch_) continue;
    sr = epoch_;
    cand_.push_back(r);
  }
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
  hs_scan(db_->hs()->db, reinterpret_cast<const char*>(s), n, 0, hs_scratch_->s,
          [](unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) -> int {
            static_cast<Engine*>(ctx)->add_candidates(id);
            return 0;
          },
          this);
#endif
}

void Engine::start() {
  cand_.clear();
  if (++epoch_ == 0) {
    std::fill(seen_.begin(), seen_.end(), 0);
    epoch_ = 1;
  }
}

void Engine::verify(const PacketInfo& p, std::vector<uint32_t>& hits) {
  hits.clear();
  cand_.insert(cand_.end(), db_->always().begin(), db_->always().end());
  std::sort(cand_.begin(), cand_.end());
  verified_ = cand_.size();
  const auto& rules = db_->rules();
  for (uint32_t r : cand_)
    if (header_matches(rules[r], p) && payload_matches(rules[r], p.payload, p.plen)) hits.push_back(r);
}

void Engine::match(const PacketInfo& p, std::vector<uint32_t>& hits) {
  start();
  candidates(p.payload, p.plen);
  verify(p, hits);
}

void Engine::match_found(const PacketInfo& p, const uint32_t* patterns, uint32_t n, std::vector<uint32_t>& hits) {
  start();
  for (uint32_t i = 0; i < n; ++i)
    if (patterns[i] < db_->patterns().size()) add_candidates(patterns[i]);
  verify(p, hits);
}

}  // namespace shoal::ids

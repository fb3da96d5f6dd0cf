#include "shoal/ids/hs_types.hh"
#include "shoal/ids/verify.hh"
#include "shoal/kernels/ids_scan.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace shoal::ids {

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
  stream_found_.clear();
  stream_at_.assign(db_->stream_patterns().size(), 0);
  epoch_ = 0;
#ifdef SHOAL_HAVE_HYPERSCAN
  if (const Database::Hs* hs = db_->hs()) {
    // one scratch, grown to serve every database
    auto grow = [&](const hs_database_t* d) { return !d || hs_alloc_scratch(d, &hs_scratch_->s) == HS_SUCCESS; };
    bool ok = grow(hs->db) && grow(hs->prefilter) && grow(hs->stream);
    for (const auto& form : hs->group)
      for (auto* d : form) ok = ok && grow(d);
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
  const uint32_t* rules = db_->group_rules();
  for (const Database::PatternGroup* g = db_->groups_begin(pattern); g != db_->groups_end(pattern); ++g)
    if (g->q.may_match(cls_, has_ports_, sport_, dport_))
      for (uint32_t i = g->first; i < g->end; ++i) add_rule(rules[i]);
}

void Engine::candidates(const uint8_t* s, uint32_t n, bool added) {
  if (db_->patterns().empty() || n == 0) return;
  // the packet's port group: the patterns its protocol and ports can need
  added = added && cls_ == 0;  // (the second form has TCP's sets only)
  const PortGroups& pg = db_->port_groups(added);
  int32_t g = pg.pick(cls_, has_ports_, sport_, dport_, db_->patterns().size());
  if (g >= 0 && pg.sets[size_t(g)].empty()) return;
  if (db_->kind() == EngineKind::Builtin) {
    if (const AcTable* t = db_->group_automaton(g, added)) {
      const uint32_t* ids = pg.sets[size_t(g)].data();
      k::ac_scan(t->view(), s, n, [&](uint32_t id, uint32_t) {
        add_candidates(ids[id]);
        return true;
      });
      return;
    }
    k::ac_scan(db_->automaton().view(), s, n, [&](uint32_t id, uint32_t) {
      add_candidates(id);
      return true;
    });
    return;
  }
#ifdef SHOAL_HAVE_HYPERSCAN
  const Database::Hs* hs = db_->hs();
  hs_scan(
      g >= 0 && hs->group[db_->form(added)][size_t(g)] ? hs->group[db_->form(added)][size_t(g)] : hs->db,
      reinterpret_cast<const char*>(s), n, 0, hs_scratch_->s,
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

bool Engine::hs_stream_scan(const uint8_t* s, uint32_t n, uint32_t from) {
#ifdef SHOAL_HAVE_HYPERSCAN
  const Database::Hs* hs = db_->hs();
  if (!hs || !hs->stream) return false;
  for (const auto& f : stream_found_) stream_at_[f.first] = 0;
  stream_found_.clear();
  stream_from_ = from;
  if (n == 0) return ++hs_stream_scans_, true;
  // each pattern's latest occurrence, kept once (a piece full of repeats
  // costs no memory; no order of the matches is assumed)
  hs_error_t e = hs_scan(
      hs->stream, reinterpret_cast<const char*>(s), n, 0, hs_scratch_->s,
      [](unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) -> int {
        auto* en = static_cast<Engine*>(ctx);
        if (to <= en->stream_from_) return 0;
        auto start = uint32_t(to) - en->db_->stream_pattern_len(id);
        uint32_t& at = en->stream_at_[id];
        if (at) {
          en->stream_found_[at - 1].second = std::max(en->stream_found_[at - 1].second, start);
        } else {
          en->stream_found_.emplace_back(id, start);
          at = uint32_t(en->stream_found_.size());
        }
        return 0;
      },
      this);
  if (e != HS_SUCCESS) return false;  // (the DFA scans it again)
  ++hs_stream_scans_;
  return true;
#else
  (void)s, (void)n, (void)from;
  return false;
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
  // the database's order: the candidates found (few) sorted, merged with
  // the always-checked rules of the packet's protocol (sorted at build;
  // disjoint from the candidates)
  std::sort(cand_.begin(), cand_.end());
  const std::vector<uint32_t>& always = db_->always_for(p.proto);
  merged_.resize(cand_.size() + always.size());
  std::merge(cand_.begin(), cand_.end(), always.begin(), always.end(), merged_.begin());
  verified_ = merged_.size();
  const auto& rules = db_->rules();
  for (uint32_t r : merged_) {
    if (p.stream_added && rules[r].stream_payload) continue;  // (the stream's inspection reads this payload)
    if (!header_matches(rules[r], p)) continue;
    auto known = [&](size_t k) {
      int32_t sl = db_->existence_slot(r, uint32_t(k));
      return sl < 0 ? -1 : exists(uint32_t(sl), p.payload, p.plen);
    };
    int budget = kBacktrackBudget;
    if (packet_items_match(rules[r], p, budget, known) && flowints_hold(rules[r], p)) {
      hits.push_back(r);
      apply_flowbits(rules[r], p);
    }
  }
}

void Engine::packet_filter(const PacketInfo& p) {
  cls_ = Database::proto_class(p.proto);
  has_ports_ = p.has_ports;
  sport_ = p.sport, dport_ = p.dport;
}

void Engine::match(const PacketInfo& p, std::vector<uint32_t>& hits) {
  start();
  packet_filter(p);
  candidates(p.payload, p.plen, p.stream_added);
  prefilter(p.payload, p.plen);
  verify(p, hits);
}

void Engine::match_found(const PacketInfo& p, const uint32_t* patterns, uint32_t n, std::vector<uint32_t>& hits,
                         const uint32_t* answers, uint32_t n_answers) {
  start();
  for (uint32_t i = 0; i < n_answers; ++i) {
    const uint32_t slot = answers[i] & ~k::kRegexMatched;
    if (slot >= slot_epoch_.size()) continue;
    slot_epoch_[slot] = epoch_;
    slot_answer_[slot] = (answers[i] & k::kRegexMatched) != 0;
  }
  packet_filter(p);
  for (uint32_t i = 0; i < n; ++i)
    if (patterns[i] < db_->patterns().size()) add_candidates(patterns[i]);
  prefilter(p.payload, p.plen);
  verify(p, hits);
}

}  // namespace shoal::ids

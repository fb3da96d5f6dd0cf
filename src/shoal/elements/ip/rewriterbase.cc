#include "shoal/elements/ip/rewriterbase.hh"

#include <fmt/format.h>

#include <map>

#include "shoal/core/graph.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

namespace {

constexpr uint64_t kSec = 1000000000ull;

bool parse_addr(std::string_view s, uint32_t& out) {
  IPv4Addr a;
  if (!parse_ipv4(s, a)) return false;
  out = a.host();
  return true;
}

struct PatternNames {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<flow::RewritePattern>> by_name;
};

std::vector<std::string> words_of(std::string_view s) {
  std::vector<std::string> w;
  for (auto x : split_words(s)) w.emplace_back(x);
  return w;
}

}  // namespace

std::shared_ptr<flow::RewritePattern> named_pattern(Element* e, const std::string& name) {
  auto names = shared_state_named<PatternNames>(e, "\x01IPRewriterPatterns");
  std::lock_guard<std::mutex> g(names->mu);
  auto it = names->by_name.find(name);
  return it == names->by_name.end() ? nullptr : it->second;
}

std::shared_ptr<void> define_pattern(Element* e, const std::string& name, std::shared_ptr<flow::RewritePattern> p,
                                     std::string& err) {
  auto names = shared_state_named<PatternNames>(e, "\x01IPRewriterPatterns");
  std::lock_guard<std::mutex> g(names->mu);
  if (!names->by_name.emplace(name, std::move(p)).second) err = fmt::format("pattern '{}' already defined", name);
  return names;
}

bool parse_pattern_with_ports(Element* e, std::string_view text, RewriteInput& in, std::string& err) {
  std::vector<std::string> w = words_of(text);
  if (w.size() <= 2) return err = "syntax error", false;
  int64_t f = 0, r = 0;
  std::string fw = w[w.size() - 2], rw = w[w.size() - 1];
  w.resize(w.size() - 2);
  if (w.size() == 1) {
    in.pattern = named_pattern(e, w[0]);
    if (!in.pattern) return err = fmt::format("no such pattern '{}'", w[0]), false;
  } else {
    auto p = std::make_shared<flow::RewritePattern>();
    if (!flow::RewritePattern::parse(w, *p, err, parse_addr)) return false;
    in.pattern = std::move(p);
  }
  if (!parse_int(fw, f)) return err = "bad forward port", false;
  if (!parse_int(rw, r)) return err = "bad reply port", false;
  in.fout = int(f);
  in.rout = int(r);
  return true;
}

void RewriterBase::parse_input(int i, const std::string& text, std::string& err) {
  RewriteInput in;
  std::string_view t = trim(text);
  size_t sp = t.find_first_of(" \t\n\r");
  std::string word(t.substr(0, sp));
  std::string_view rest = sp == std::string_view::npos ? std::string_view() : trim(t.substr(sp));
  auto out_of_range = [&](int port) { return port < 0 || port >= noutputs(); };
  if (word.empty()) {
    err = "empty argument";
  } else if (word == "pass" || word == "passthrough" || word == "nochange") {
    int64_t out = 0;
    if (!rest.empty() && !parse_int(rest, out))
      err = "syntax error, expected 'nochange [OUTPUT]'";
    else if (out_of_range(int(out)))
      err = "output port out of range";
    in.kind = RewriteInput::NoChange;
    in.fout = int(out);
  } else if (word == "keep") {
    auto w = split_words(rest);
    int64_t f = 0, r = 0;
    if (w.size() != 2 || !parse_int(w[0], f))
      err = "bad forward port";
    else if (!parse_int(w[1], r))
      err = "bad reply port";
    else if (out_of_range(int(f)) || out_of_range(int(r)))
      err = "output port out of range";
    in.kind = RewriteInput::Keep;
    in.fout = int(f), in.rout = int(r);
  } else if (word == "drop" || word == "discard") {
    if (!rest.empty()) err = fmt::format("syntax error, expected '{}'", word);
  } else if (word == "pattern" || word == "xpattern") {
    if (parse_pattern_with_ports(this, rest, in, err) && (out_of_range(in.fout) || out_of_range(in.rout)))
      err = "output port out of range";
    in.kind = RewriteInput::Pattern;
  } else if (rest.empty() && (std::isalpha(uint8_t(word[0])) || word[0] == '_')) {
    in.kind = RewriteInput::Mapper;  // resolved by initialize()
    in.mapper_name = word;
  } else {
    err = "unknown specification";
  }
  if (err.empty()) {
    if (size_t(i) >= inputs_.size()) inputs_.resize(size_t(i) + 1);
    inputs_[size_t(i)] = std::move(in);
  } else {
    err = fmt::format("input spec {}: {}", i, err);
  }
}

void RewriterBase::configure(Args& a) {
  configure_more(a);
  std::string anno;
  bool use_cache = false;
  Duration reap{reap_ns_}, guarantee{timeouts_.guarantee};
  a.read("GUARANTEE", guarantee)
      .read("MAPPING_CAPACITY", capacity_word_)
      .read("CAPACITY", capacity_word_)
      .read("REAP_INTERVAL", reap)
      .read("REAP_TIME", reap)
      .read("USE_CACHE", use_cache)
      .read("SET_AGGREGATE", set_aggregate_)
      .read("REPLY_ANNO", anno);
  reap_ns_ = reap.ns;
  timeouts_.guarantee = guarantee.ns;
  if (!anno.empty()) {
    if (anno != "PAINT") a.fail("REPLY_ANNO: only the PAINT annotation is supported");
    reply_anno_ = true;
  }
  auto specs = a.rest_positional();
  a.complete();
  if (int(specs.size()) != ninputs()) a.fail(fmt::format("need {} arguments, one per input port", ninputs()));
  inputs_.assign(specs.size(), RewriteInput{});
  std::string errs;
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string err;
    parse_input(int(i), specs[i]->value.empty() ? specs[i]->text : specs[i]->value, err);
    if (!err.empty()) errs += (errs.empty() ? "" : "\n") + err;
  }
  if (!errs.empty()) a.fail(errs);
  // The table: this element's own, or (MAPPING_CAPACITY ELEMENT) that
  // element's, whose capacity it then shares.
  int64_t cap = 0;
  std::string key = name();
  if (!capacity_word_.empty()) {
    if (parse_int(capacity_word_, cap)) {
      if (cap < 0) a.fail("bad MAPPING_CAPACITY");
      capacity_set_ = true;
      capacity_ = cap;
    } else if (std::isalpha(uint8_t(capacity_word_[0])) || capacity_word_[0] == '_') {
      key = capacity_word_;
    } else {
      a.fail("bad MAPPING_CAPACITY");
    }
  }
  table_ = shared_state_named<flow::RewriteTable>(this, "\x01rewriter " + key);
  std::lock_guard<std::mutex> g(table_->mu);
  if (capacity_set_) table_->capacity = capacity_;
  owner_ = table_->add_owner(name(), ninputs());
}

void RewriterBase::initialize() {
  if (!capacity_word_.empty() && !capacity_set_) {
    Element* e = router().find(capacity_word_);
    if (!e || !dynamic_cast<RewriterBase*>(e))
      throw std::runtime_error(fmt::format("MAPPING_CAPACITY: '{}' is not a rewriter", capacity_word_));
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    RewriteInput& in = inputs_[i];
    if (in.kind != RewriteInput::Mapper) continue;
    Element* e = router().find(in.mapper_name);
    if (!e) throw std::runtime_error(fmt::format("input spec {}: unknown specification", i));
    in.mapper = dynamic_cast<RewriteMapper*>(e);
    if (!in.mapper) throw std::runtime_error(fmt::format("input spec {}: element is not an IPMapper", i));
    in.mapper->check_ports(*this);
  }
  r_drop_ = add_drop_reason("rewriter-drop");
  r_full_ = add_drop_reason("rewriter-table-full");
  r_port_ = add_drop_reason("rewriter-no-free-port");
  r_unmapped_ = add_drop_reason("rewriter-not-rewritable");
  rng_ = &click_random_of(worker().runtime(), worker().id());
  reap_timer_.owner = this;
  reap_timer_.background = true;
  if (reap_ns_) worker().schedule(reap_timer_, worker().now_ns() + reap_ns_);
}

void RewriterBase::run_timer(Timer&) {
  uint64_t now = worker().now_ns();
  {
    std::lock_guard<std::mutex> g(table_->mu);
    table_->reap(now);
  }
  if (reap_ns_) worker().schedule(reap_timer_, now + reap_ns_);
}

void RewriterBase::push(int port, PacketBatch* b) {
  uint64_t now = worker().now_ns();
  int first = INT32_MIN;
  bool uniform = true;
  {
    std::lock_guard<std::mutex> g(table_->mu);
    b->for_each([&](uint32_t i, Packet* p) {
      int r = process(port, p, now);
      b->result(i) = int16_t(r);
      if (first == INT32_MIN) first = r;
      uniform &= r == first;
    });
  }
  if (first == INT32_MIN) return recycle(b);
  if (uniform && first >= 0 && first < noutputs()) return output_push(first, b);
  dispatch(b);
}

RewriterBase::Found RewriterBase::lookup(int port, uint8_t map, uint8_t ip_p, const flow::FlowId& f, Packet* p,
                                         uint64_t now, const Timeouts& to, bool (*fix)(flow::FlowId&)) {
  flow::RewriteTable& t = *table_;
  Found r;
  auto [id, d] = t.find(owner_, map, f);
  if (id) {
    r.id = id, r.dir = d;
    return r;
  }
  const RewriteInput& in = inputs_[size_t(port)];
  flow::FlowId out = f;
  int fout = in.fout, rout = in.rout;
  auto taken = [&](const flow::FlowId& k) { return reply_taken(map, k); };
  bool ok = true;
  switch (in.kind) {
    case RewriteInput::NoChange: r.code = in.fout; return r;
    case RewriteInput::Drop: r.code = drop_code(r_drop_); return r;
    case RewriteInput::Keep: break;
    case RewriteInput::Pattern:
      ok = in.pattern->rewrite(f, out, taken, [this](uint32_t top) { return random(top); });
      break;
    case RewriteInput::Mapper: ok = in.mapper->map_flow(*this, f, out, fout, rout, taken); break;
  }
  if (!ok) {
    ++t.owner(owner_).failures[size_t(port)];
    r.code = drop_code(r_port_);
    return r;
  }
  if (fix && !fix(out)) {
    r.code = drop_code(r_drop_);
    return r;
  }
  bool g = to.guarantee != 0;
  r.id = t.add(owner_, map, uint16_t(port), ip_p, f, out, fout, rout, g, now + (g ? to.guarantee : to.timeout),
               now + to.timeout, now);
  if (!r.id) {
    r.code = drop_code(r_full_);
    return r;
  }
  if (reply_anno_ && p) t.mapping(r.id).reply_anno = p->anno().paint;
  return r;
}

int RewriterBase::apply(const Found& f, RewriteView& v, Packet* p, bool ports) {
  const flow::RewriteTable::Mapping& m = table_->mapping(f.id);
  flow::FlowId to = m.rewritten(f.dir);
  v.rewrite(to, ports);
  if (dst_anno_)
    for (int i = 0; i < 4; ++i) p->anno().dst_ip[i] = uint8_t(to.daddr >> (24 - 8 * i));
  if (f.dir == 1 && reply_anno_) p->anno().paint = m.reply_anno;
  if (set_aggregate_) p->anno().aggregate = m.agg;
  return m.out[f.dir];
}

int RewriterBase::apply_tcp(const Found& f, RewriteView& v, Packet* p, uint64_t now, const Timeouts& to,
                            uint64_t data_timeout, uint64_t done_timeout) {
  int out = apply(f, v, p, true);
  flow::RewriteTable::Mapping& m = table_->mapping(f.id);
  if (v.l4len >= 14) {
    constexpr uint8_t kForwardDone = 1, kBothDone = 3, kForwardData = 4, kBothData = 12;
    uint8_t flags = v.l4[13];
    uint32_t ip_len = k::load_be16(v.ip + 2), th_off = uint32_t(v.l4[12] >> 4) * 4;
    bool payload = v.hl + th_off < ip_len;
    if (flags & 0x04)  // RST
      m.tflags |= kBothDone;
    else if (flags & 0x01)  // FIN
      m.tflags |= uint8_t(kForwardDone << f.dir);
    else if ((flags & 0x02) || payload)
      m.tflags &= uint8_t(~(kForwardDone << f.dir));
    if (payload) m.tflags |= uint8_t(kForwardData << f.dir);
    uint64_t t = (m.tflags & kBothDone) == kBothDone   ? done_timeout
                 : (m.tflags & kBothData) == kBothData ? data_timeout
                                                       : to.timeout;
    refresh(f.id, now, to, t);
    if (m.seq && v.l4len >= uint32_t(v.l4[12] >> 4) * 4) shift_seq(*m.seq, f.dir, v);
  } else {
    refresh(f.id, now, to, to.timeout);
  }
  return out;
}

namespace {
void set32(uint8_t* field, uint32_t v, uint8_t* sum) {
  uint32_t old = k::load_be32(field);
  if (old == v) return;
  k::store_be32(field, v);
  uint16_t c = k::load_be16(sum);
  c = k::csum_update16(c, uint16_t(old >> 16), uint16_t(v >> 16));
  c = k::csum_update16(c, uint16_t(old), uint16_t(v));
  k::store_be16(sum, c);
}
}  // namespace

// FTPPortMapper's shifts: sequence numbers of this direction, and
// acknowledgements (with SACK blocks) of the other's.
void RewriterBase::shift_seq(flow::TcpSeqShift& s, int dir, RewriteView& v) {
  uint8_t* tcp = v.l4;
  uint8_t* sum = tcp + 16;
  s.forget_old(dir, k::load_be32(tcp + 4));
  if (s.active(dir)) set32(tcp + 4, s.new_seq(dir, k::load_be32(tcp + 4)), sum);
  if (!s.active(!dir)) return;
  set32(tcp + 8, s.new_ack(dir, k::load_be32(tcp + 8)), sum);
  // SACK blocks, unless the options are a timestamp alone
  uint32_t off = uint32_t(tcp[12] >> 4) * 4;
  if (off < 32 || (off == 32 && k::load_be32(tcp + 20) == 0x0101080Au)) return;
  for (uint32_t i = 20; i < off;) {
    uint8_t kind = tcp[i];
    if (kind == 0) break;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= off || tcp[i + 1] < 2 || i + tcp[i + 1] > off) break;
    uint32_t len = tcp[i + 1];
    if (kind == 5) {
      if (len % 8 != 2) break;
      for (uint32_t b = i + 2; b + 8 <= i + len; b += 8) {
        set32(tcp + b, s.new_ack(dir, k::load_be32(tcp + b)), sum);
        set32(tcp + b + 4, s.new_ack(dir, k::load_be32(tcp + b + 4)), sum);
      }
    }
    i += len;
  }
}

flow::FlowId RewriterBase::map_data_flow(uint8_t ip_p, const flow::FlowId& f, int input, uint64_t now, bool& ok,
                                         uint32_t& id) {
  Found r = lookup(input, map_of(ip_p), ip_p, f, nullptr, now, timeouts_of(ip_p));
  ok = r.id != 0;
  id = r.id;
  if (!ok) return f;
  return table_->mapping(r.id).rewritten(r.dir);
}

int RewriterBase::apply_udp(const Found& f, RewriteView& v, Packet* p, uint64_t now, const Timeouts& to,
                            uint64_t streaming) {
  int out = apply(f, v, p, true);
  flow::RewriteTable::Mapping& m = table_->mapping(f.id);
  if (f.dir) m.tflags |= 1;
  if (m.tflags < 6) m.tflags = uint8_t(m.tflags + 2);
  refresh(f.id, now, to, m.tflags > 6 ? streaming : to.timeout);
  return out;
}

bool RewriterBase::find_mapping(uint8_t ip_p, const flow::FlowId& f, flow::FlowId& to, uint32_t& id, int& dir) {
  std::tie(id, dir) = table_->find(owner_, 0, f);
  if (!id) return false;
  const flow::RewriteTable::Mapping& m = table_->mapping(id);
  if (ip_p && m.ip_p && m.ip_p != ip_p) return false;
  to = m.rewritten(dir);
  return true;
}

void RewriterBase::refresh(uint32_t id, uint64_t now, const Timeouts& to, uint64_t timeout) {
  if (to.guarantee)
    table_->set_expiry(id, true, now + to.guarantee, now + timeout);
  else
    table_->set_expiry(id, false, now + timeout, now + timeout);
}

std::string RewriterBase::unparse_ports(const flow::RewriteTable::Mapping& m, int dir, uint64_t now, uint64_t expiry) {
  int64_t left = (int64_t(expiry) + int64_t(kSec / 2) - int64_t(now)) / int64_t(kSec);
  return fmt::format(" [{}{} {}{}] i{} exp{}", dir == 0 ? "*" : "", m.out[0], dir == 1 ? "*" : "", m.out[1], m.input,
                     left);
}

std::string RewriterBase::unparse(const flow::RewriteTable::Mapping& m, int dir, uint64_t now) const {
  std::string shift;
  if (m.seq && m.seq->newest(dir) != 0) shift = fmt::format(" seq {:+}", m.seq->newest(dir));
  return flow::unparse(m.key[dir]) + " => " + flow::unparse(m.rewritten(dir)) + shift +
         unparse_ports(m, dir, now, m.guaranteed ? m.best_effort_ns : m.expiry_ns);
}

std::string RewriterBase::table_text(uint8_t map, uint64_t now) const {
  std::string s;
  std::lock_guard<std::mutex> g(table_->mu);
  table_->for_each_entry(owner_, map,
                         [&](uint32_t id, int dir) { s += unparse(table_->mapping(id), dir, now) + "\n"; });
  return s;
}

std::string RewriterBase::lookup_text(uint8_t map, const std::string& arg) const {
  auto w = split_words(arg);
  IPv4Addr sa, da;
  uint16_t sp = 0, dp = 0;
  if (w.size() != 4 || !parse_ipv4(w[0], sa) || !parse_port(w[1], 0, sp) || !parse_ipv4(w[2], da) ||
      !parse_port(w[3], 0, dp))
    throw std::runtime_error("expected 'SADDR SPORT DADDR DPORT'");
  flow::FlowId f{sa.host(), da.host(), sp, dp};
  std::lock_guard<std::mutex> g(table_->mu);
  auto [id, dir] = table_->find(owner_, map, f);
  if (!id) return "";
  flow::FlowId r = table_->mapping(id).rewritten(dir);
  return fmt::format("{} {} {} {}", flow::format_ipv4_host(r.saddr), r.sport, flow::format_ipv4_host(r.daddr), r.dport);
}

void RewriterBase::add_handlers() {
  auto sum = [this](bool failures) {
    std::lock_guard<std::mutex> g(table_->mu);
    uint64_t n = 0;
    for (uint64_t c : failures ? table_->owner(owner_).failures : table_->owner(owner_).count) n += c;
    return std::to_string(n);
  };
  add_read_handler("table_size", [sum] { return sum(false); });
  add_read_handler("nmappings", [sum] { return sum(false); });
  add_read_handler("mapping_failures", [sum] { return sum(true); });
  auto pattern_text = [this](int i) {
    std::lock_guard<std::mutex> g(table_->mu);
    const RewriteInput& in = inputs_[size_t(i)];
    std::string s;
    switch (in.kind) {
      case RewriteInput::Drop: s = "<drop>"; break;
      case RewriteInput::NoChange: s = "<nochange>"; break;
      case RewriteInput::Keep: s = "<keep>"; break;
      case RewriteInput::Pattern: s = in.pattern->unparse(); break;
      case RewriteInput::Mapper: s = "<mapper>"; break;
    }
    if (uint64_t c = table_->owner(owner_).count[size_t(i)]) s += fmt::format(" [{}]", c);
    return s + "\n";
  };
  add_read_handler("patterns", [this, pattern_text] {
    std::string s;
    for (int i = 0; i < ninputs(); ++i) s += pattern_text(i);
    return s;
  });
  add_read_handler("size", [this] {
    std::lock_guard<std::mutex> g(table_->mu);
    return std::to_string(table_->size());
  });
  add_read_handler("capacity", [this] {
    std::lock_guard<std::mutex> g(table_->mu);
    return std::to_string(table_->capacity);
  });
  add_write_handler("capacity", [this](const std::string& v) {
    int64_t c;
    if (!parse_int(trim(v), c) || c < 0) throw std::runtime_error("expected a capacity");
    std::lock_guard<std::mutex> g(table_->mu);
    table_->capacity = c;
    table_->reap(worker().now_ns());
  });
  add_write_handler("clear", [this](const std::string&) {
    std::lock_guard<std::mutex> g(table_->mu);
    table_->reap(worker().now_ns(), true);
  });
  for (int i = 0; i < ninputs(); ++i) {
    add_read_handler(fmt::format("pattern{}", i), [pattern_text, i] { return pattern_text(i); });
    // A new specification for input i: the mappings it made go.
    add_write_handler(fmt::format("pattern{}", i), [this, i](const std::string& v) {
      std::string err;
      std::vector<RewriteInput> saved = inputs_;
      parse_input(i, v, err);
      if (!err.empty()) {
        inputs_ = std::move(saved);
        throw std::runtime_error(err);
      }
      if (inputs_[size_t(i)].kind == RewriteInput::Mapper) {
        Element* e = router().find(inputs_[size_t(i)].mapper_name);
        inputs_[size_t(i)].mapper = e ? dynamic_cast<RewriteMapper*>(e) : nullptr;
        if (!inputs_[size_t(i)].mapper) {
          inputs_ = std::move(saved);
          throw std::runtime_error(fmt::format("input spec {}: unknown specification", i));
        }
      }
      std::lock_guard<std::mutex> g(table_->mu);
      table_->remove_input(owner_, uint16_t(i));
    });
  }
  add_table_handlers();
}

bool RewriteView::parse(Packet* p) {
  ip = ip_header(p, &hl);
  if (!ip || (ip[0] >> 4) != 4) return false;
  proto = ip[9];
  uint16_t frag = k::load_be16(ip + 6);
  first_frag = (frag & 0x1fff) == 0;
  int64_t off = p->network_header_offset() + int64_t(hl);
  l4 = ip + hl;
  l4len = off < int64_t(p->length()) ? uint32_t(int64_t(p->length()) - off) : 0;
  return true;
}

flow::FlowId RewriteView::flow_id(bool ports) const {
  flow::FlowId f{k::load_be32(ip + 12), k::load_be32(ip + 16), 0, 0};
  if (ports && first_frag && l4len >= 4) {
    f.sport = k::load_be16(l4);
    f.dport = k::load_be16(l4 + 2);
  }
  return f;
}

namespace {
// Replaces a 16-bit big-endian field, updating the checksums that cover it.
void set16(uint8_t* field, uint16_t v, uint8_t* csum1, uint8_t* csum2) {
  uint16_t old = k::load_be16(field);
  if (old == v) return;
  k::store_be16(field, v);
  if (csum1) k::store_be16(csum1, k::csum_update16(k::load_be16(csum1), old, v));
  if (csum2) k::store_be16(csum2, k::csum_update16(k::load_be16(csum2), old, v));
}
}  // namespace

void RewriteView::rewrite(const flow::FlowId& to, bool ports) {
  // The transport checksum covers the addresses (pseudo-header) and ports.
  uint8_t* l4sum = nullptr;
  if (first_frag) {
    if (proto == 6 && l4len >= 18)
      l4sum = l4 + 16;
    else if (proto == 17 && l4len >= 8 && k::load_be16(l4 + 6) != 0)  // 0: no checksum
      l4sum = l4 + 6;
  }
  uint8_t* ipsum = ip + 10;
  set16(ip + 12, uint16_t(to.saddr >> 16), ipsum, l4sum);
  set16(ip + 14, uint16_t(to.saddr), ipsum, l4sum);
  set16(ip + 16, uint16_t(to.daddr >> 16), ipsum, l4sum);
  set16(ip + 18, uint16_t(to.daddr), ipsum, l4sum);
  if (ports && first_frag && l4len >= 4) {
    set16(l4, to.sport, l4sum, nullptr);
    set16(l4 + 2, to.dport, l4sum, nullptr);
  }
}

}  // namespace shoal

// libFuzzer: arbitrary TCP segment sequences through the reassembler.
// Run 1 (data segments after a SYN, no caps): the delivered stream equals a
// byte-level model's, under the policy the input picks (see
// tests/scripts/reassembly_model.py for first and last; a target-based
// policy gives a held byte the new data when every earlier segment
// holding it gives way, by overlap_new_wins()), and held_run() after each
// segment equals the held bytes taken one by one. Run 2 (any flags, tiny
// caps, normalization or not): no crash, the bytes held never exceed the
// caps, and a normalized segment differs from no held byte. Run 3 (any
// flags, caps the input picks, two connections): the batch reassembly on the
// host device backend, in batches the input cuts, equals the one-by-one
// reassembler after every batch (streams, gaps, ends, counters). Run 4:
// the same segments through the TCP session checks first (no crash, a
// segment that failed one is not taken).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "shoal/device/device.hh"
#include "shoal/flow/batch_reassembly.hh"
#include "shoal/flow/reassembly.hh"
#include "shoal/flow/tcp_session.hh"
#include "shoal/kernels/flowstate.hh"

using namespace shoal::flow;

namespace {

struct Sink : StreamSink {
  std::string out[2];
  uint64_t gaps = 0;
  void stream_data(uint32_t, uint8_t dir, uint64_t off, const uint8_t* d, uint32_t n) override {
    if (off != out[dir].size()) std::abort();  // in order, once, contiguous (gaps are filled below)
    out[dir].append(reinterpret_cast<const char*>(d), n);
  }
  void stream_gap(uint32_t, uint8_t dir, uint64_t off, uint64_t len) override {
    if (off != out[dir].size() || len == 0 || len > (1u << 20)) std::abort();
    out[dir].append(len, '\0');
    ++gaps;
  }
};

// In order and contiguous, gaps of any length (not kept: a stream the
// session checks restarted at another ISN may hold data far ahead).
struct Ends : StreamSink {
  uint64_t end[2] = {0, 0};
  void stream_data(uint32_t, uint8_t dir, uint64_t off, const uint8_t*, uint32_t n) override {
    if (off != end[dir]) std::abort();
    end[dir] += n;
  }
  void stream_gap(uint32_t, uint8_t dir, uint64_t off, uint64_t len) override {
    if (off != end[dir] || len == 0) std::abort();
    end[dir] += len;
  }
};

// Everything a sink is told, to compare two reassemblers.
struct Log : StreamSink {
  std::string out[2][2];
  int ends[2][2] = {};
  void stream_data(uint32_t f, uint8_t dir, uint64_t off, const uint8_t* d, uint32_t n) override {
    out[f][dir] += "D" + std::to_string(off) + ":";
    out[f][dir].append(reinterpret_cast<const char*>(d), n);
  }
  void stream_gap(uint32_t f, uint8_t dir, uint64_t off, uint64_t len) override {
    out[f][dir] += "G" + std::to_string(off) + "+" + std::to_string(len);
  }
  void stream_end(uint32_t f, uint8_t dir) override { ++ends[f][dir]; }
  // (a batch tells them in stream order, one by one in arrival order)
  std::multiset<std::string> overwrites[2][2];
  void stream_overwrite(uint32_t f, uint8_t dir, uint64_t off, const uint8_t* d, uint32_t n) override {
    overwrites[f][dir].insert(std::to_string(off) + ":" + std::string(reinterpret_cast<const char*>(d), n));
  }
  std::string all() const {
    std::string s;
    for (auto& f : out)
      for (auto& d : f) s += d + "|";
    for (auto& f : overwrites)
      for (auto& d : f)
        for (auto& o : d) s += "O" + o;
    for (auto& f : ends)
      for (int e : f) s += std::to_string(e);
    return s;
  }
};

// The counters both must agree on (`buffered_peak` aside: a batch places
// what it brings out of order instead of holding it).
std::vector<uint64_t> counters(const Reassembler& r) {
  const StreamCounters& c = r.counters();
  return {c.segments.get(),    c.delivered.get(),      c.out_of_order.get(), c.retransmitted.get(),
          c.overlaps.get(),    c.overlap_differ.get(), c.gaps.get(),         c.gap_bytes.get(),
          c.buffer_full.get(), c.after_fin.get(),      c.after_rst.get(),    c.no_handshake.get(),
          c.syn_data.get(),    c.buffered.get(),       c.overwritten.get()};
}

struct Seg {
  uint8_t dir, flags;
  uint32_t off;
  std::string data;
};

std::vector<Seg> parse(const uint8_t* p, size_t n) {
  std::vector<Seg> v;
  size_t i = 0;
  while (i + 5 <= n) {
    Seg s;
    s.dir = p[i] & 1;
    s.flags = p[i] >> 1;
    s.off = (uint32_t(p[i + 1]) << 8 | p[i + 2]) & 0x1fff;
    uint32_t len = p[i + 3] % 96;
    uint8_t fill = p[i + 4];
    i += 5;
    for (uint32_t k = 0; k < len; ++k) s.data += char(fill + k * 7);
    v.push_back(std::move(s));
  }
  return v;
}

std::string model(const std::vector<Seg>& segs, uint8_t dir, Overlap policy) {
  std::map<uint64_t, char> pending;
  std::set<std::pair<uint64_t, uint64_t>> earlier;  // the segments so far
  std::string out;
  for (auto& s : segs) {
    if (s.dir != dir) continue;
    uint64_t lo = s.off, hi = s.off + s.data.size();
    for (size_t k = 0; k < s.data.size(); ++k) {
      uint64_t at = s.off + k;
      if (at < out.size()) continue;
      bool take = !pending.count(at) || policy == Overlap::Last;
      if (!take && policy != Overlap::First) {
        take = true;
        for (auto [a, b] : earlier)
          if (a <= at && at < b && !overlap_new_wins(policy, lo, hi, a, b)) take = false;
      }
      if (take) pending[at] = s.data[k];
    }
    if (lo < hi) earlier.insert({lo, hi});
    while (pending.count(out.size())) {
      char c = pending[out.size()];
      pending.erase(out.size());
      out += c;
    }
  }
  if (!pending.empty()) {
    uint64_t top = pending.rbegin()->first;
    for (uint64_t at = out.size(); at <= top; ++at) out += pending.count(at) ? pending[at] : '\0';
  }
  return out;
}

constexpr Overlap kPolicies[] = {Overlap::First,     Overlap::Last,    Overlap::Bsd,     Overlap::Linux,
                                 Overlap::OldLinux,  Overlap::Solaris, Overlap::Hpux10,  Overlap::Hpux11,
                                 Overlap::Irix,      Overlap::Macos,   Overlap::Windows, Overlap::Vista,
                                 Overlap::Windows2k3};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const Overlap policy = kPolicies[data[0] % std::size(kPolicies)];
  uint32_t isn[2] = {uint32_t(data[1]) << 24 | uint32_t(data[2]) << 16 | 0xff00u, ~uint32_t(data[3]) << 20};
  std::vector<Seg> segs = parse(data + 5, size - 5);

  // 1: the model
  {
    StreamConfig c;
    c.policy = policy;
    Reassembler r(c);
    Sink s;
    r.set_sink(&s);
    Stream st;
    for (uint8_t d = 0; d < 2; ++d) r.segment(st, 1, d, isn[d], shoal::k::kTcpSyn, nullptr, 0);
    for (auto& g : segs) {
      r.segment(st, 1, g.dir, isn[g.dir] + 1 + g.off, shoal::k::kTcpAck,
                reinterpret_cast<const uint8_t*>(g.data.data()), uint32_t(g.data.size()));
      // held_run (an inline IPS's inspection of held data) against the held bytes, one by one
      const DirStream& ds = st.d[g.dir];
      uint64_t end = g.off + g.data.size();
      uint32_t max = 1 + g.off % 50;
      std::map<uint64_t, char> held;
      for (const auto& [o, v] : ds.ooo)
        for (size_t i = 0; i < v.size(); ++i) held[o + i] = char(v[i]);
      std::string want, got;
      uint64_t at = end;
      for (; at > 0 && end - at < max && held.count(at - 1); --at) want.insert(want.begin(), held[at - 1]);
      if (Reassembler::held_run(ds, end, max, got) != at || got != want) std::abort();
    }
    r.finish(st, 1);
    for (uint8_t d = 0; d < 2; ++d)  // (the model remembers every segment: the reassembler, a bounded number)
      if (r.counters().untracked.get() == 0 && s.out[d] != model(segs, d, policy)) std::abort();
    if (r.counters().buffered.get() != 0) std::abort();
  }
  // 2: every flag, tiny caps
  {
    StreamConfig c;
    c.policy = policy;
    c.dir_cap = 200;
    c.total_cap = 300;
    c.midstream = data[4] & 1;
    c.keep = data[4] & 2 ? 64 : 0;
    Reassembler r(c);
    Sink s;
    r.set_sink(&s);
    Stream st;
    for (auto& g : segs) {
      // (an inline IPS's normalization first, when kept: then no held byte differs)
      std::string d = g.data;
      uint64_t differ = r.counters().overlap_differ.get();
      if (c.keep)
        r.normalize(st, g.dir, isn[g.dir] + g.off, g.flags, reinterpret_cast<uint8_t*>(d.data()), uint32_t(d.size()));
      r.segment(st, 1, g.dir, isn[g.dir] + g.off, g.flags, reinterpret_cast<const uint8_t*>(d.data()),
                uint32_t(d.size()));
      if (c.keep && r.counters().overlap_differ.get() != differ) std::abort();
      if (r.counters().buffered.get() > c.total_cap || st.d[0].held > c.dir_cap || st.d[1].held > c.dir_cap)
        std::abort();
    }
    r.finish(st, 1);
    if (r.counters().buffered.get() != 0) std::abort();
  }
  // 4: the session checks over the same segments (acknowledging what the
  // other side sent so far, or a number the input picks): no crash, a
  // segment that failed a check is never taken, and the stream follows a
  // changed ISN only before it has data (as the IDS feeds them)
  {
    Reassembler r(StreamConfig{});
    Ends s;
    r.set_sink(&s);
    Stream st;
    TcpSession t;
    TcpSession::Config cfg;
    cfg.midstream = data[4] & 1;
    cfg.async_oneside = data[4] & 4;
    cfg.inline_mode = data[4] & 8;
    uint32_t sent[2] = {0, 0};
    for (size_t k = 0; k < segs.size(); ++k) {
      const Seg& g = segs[k];
      TcpSeg x;
      x.seq = isn[g.dir] + uint32_t(g.off);
      x.flags = g.flags;
      x.len = uint32_t(g.data.size());
      x.ack = g.data.size() % 3 ? isn[g.dir ^ 1] + 1 + sent[g.dir ^ 1] : uint32_t(g.off * 7919);
      x.win = uint16_t(g.off * 31);
      x.has_ts = g.off & 1;
      x.tsval = uint32_t(k * 3 - g.off);
      x.secs = uint32_t(k);
      bool valid = true;
      const uint32_t was = t.client_isn();
      t.check(x, g.dir, kPolicies[k % std::size(kPolicies)], cfg, valid);
      if (!valid && t.taken()) std::abort();
      if (t.client_isn() != was) r.restart(st, 0, t.client_isn());
      if (t.taken()) r.segment(st, 1, g.dir, x.seq, g.flags, reinterpret_cast<const uint8_t*>(g.data.data()), x.len);
      sent[g.dir] = std::max<uint32_t>(sent[g.dir], uint32_t(g.off + g.data.size()));
    }
    r.finish(st, 1);
  }
  // 3: batches on the host device against one by one
  {
    static std::shared_ptr<shoal::dev::Device> dev = [] {
      shoal::dev::DeviceOptions o;
      o.kind = "host";
      o.host_threads = 1;
      std::string detail, err;
      return shoal::dev::open_device(o, detail, err);
    }();
    StreamConfig c;
    c.policy = policy;
    c.dir_cap = data[4] & 2 ? 150 : 1u << 20;
    c.total_cap = data[4] & 4 ? 250 : 64u << 20;
    c.midstream = data[4] & 1;
    Reassembler one(c), batched(c);
    Log l1, l2;
    one.set_sink(&l1);
    batched.set_sink(&l2);
    BatchReassembler br;
    br.init(dev);
    Stream s1[2], s2[2];
    std::vector<Segment> batch;
    std::string err;
    uint32_t cut = (data[4] >> 3) % 9 + 1;  // segments per batch
    for (size_t at = 0; at < segs.size(); at += cut) {
      batch.clear();
      for (size_t i = at; i < std::min(segs.size(), at + cut); ++i) {
        const Seg& g = segs[i];
        uint32_t f = (g.off >> 12) & 1;  // two connections
        uint32_t seq = isn[g.dir] + (g.off & 0xfff) * 13;
        auto* p = reinterpret_cast<const uint8_t*>(g.data.data());
        one.segment(s1[f], f, g.dir, seq, g.flags, p, uint32_t(g.data.size()));
        batch.push_back({&s2[f], f, g.dir, g.flags, seq, p, uint32_t(g.data.size())});
      }
      br.run(batched, batch, err);
      if (l1.all() != l2.all() || counters(one) != counters(batched)) std::abort();
    }
    for (uint32_t f = 0; f < 2; ++f) one.finish(s1[f], f), batched.finish(s2[f], f);
    if (l1.all() != l2.all() || counters(one) != counters(batched)) std::abort();
  }
  return 0;
}

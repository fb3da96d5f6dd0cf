#include "shoal/flow/reassembly.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "shoal/kernels/flowstate.hh"

namespace shoal::flow {

namespace {
struct OverlapName {
  const char* name;
  Overlap p;
};
constexpr OverlapName kOverlapNames[] = {
    {"first", Overlap::First},     {"last", Overlap::Last},           {"bsd", Overlap::Bsd},
    {"bsd-right", Overlap::Bsd},   {"linux", Overlap::Linux},         {"old-linux", Overlap::OldLinux},
    {"solaris", Overlap::Solaris}, {"old-solaris", Overlap::Solaris}, {"hpux10", Overlap::Hpux10},
    {"hpux11", Overlap::Hpux11},   {"irix", Overlap::Irix},           {"macos", Overlap::Macos},
    {"windows", Overlap::Windows}, {"vista", Overlap::Vista},         {"windows2k3", Overlap::Windows2k3},
};
}  // namespace

bool parse_overlap(const std::string& name, Overlap& out) {
  for (const OverlapName& n : kOverlapNames)
    if (name == n.name) {
      out = n.p;
      return true;
    }
  return false;
}

const char* overlap_name(Overlap p) {
  if (p == Overlap::Default) return "default";
  for (const OverlapName& n : kOverlapNames)
    if (n.p == p) return n.name;
  return "?";
}

// Suricata's stream engine in IDS mode (stream-tcp-list.c), by where the
// new segment starts against the earlier one, then where it ends.
bool overlap_new_wins(Overlap p, uint64_t lo, uint64_t hi, uint64_t olo, uint64_t ohi) {
  if (p == Overlap::Last) return true;
  if (p == Overlap::First || p == Overlap::Default) return false;
  const bool solaris = p == Overlap::Solaris || p == Overlap::Hpux11;
  if (lo == olo)  // the same start: ending before the earlier one's end, it gives way
    return hi >= ohi && (solaris || p == Overlap::OldLinux || (hi > ohi && p == Overlap::Linux));
  if (lo < olo) {  // starting before: most systems take the new data
    if (solaris) return hi >= ohi;
    return p != Overlap::Vista;
  }
  return solaris && hi > ohi;  // starting after: only Solaris's, past the earlier one's end
}

bool HostPolicies::add(const std::string& net, Overlap p, std::string& err) {
  Net n{};
  n.p = p;
  std::string addr = net;
  int len = -1;
  if (auto slash = net.find('/'); slash != std::string::npos) {
    addr = net.substr(0, slash);
    std::string l = net.substr(slash + 1);
    if (l.empty() || l.size() > 3 || l.find_first_not_of("0123456789") != std::string::npos) {
      err = "'" + net + "': the prefix length is not a number";
      return false;
    }
    len = std::stoi(l);
  }
  n.v6 = addr.find(':') != std::string::npos;
  if (inet_pton(n.v6 ? AF_INET6 : AF_INET, addr.c_str(), n.b) != 1) {
    err = "'" + net + "' is not an IPv4 or IPv6 address or network";
    return false;
  }
  int bits = n.v6 ? 128 : 32;
  if (len < 0) len = bits;
  if (len > bits) {
    err = "'" + net + "': the prefix is longer than the address";
    return false;
  }
  n.len = uint8_t(len);
  for (int i = len; i < bits; ++i) n.b[i / 8] &= uint8_t(~(0x80u >> (i % 8)));  // (the host bits)
  nets_.insert(
      std::upper_bound(nets_.begin(), nets_.end(), n, [](const Net& a, const Net& b) { return a.len > b.len; }), n);
  return true;
}

Overlap HostPolicies::lookup(bool v6, const uint8_t* addr) const {
  for (const Net& n : nets_) {
    if (n.v6 != v6) continue;
    int full = n.len / 8, rest = n.len % 8;
    if (std::memcmp(n.b, addr, size_t(full)) != 0) continue;
    if (rest && ((addr[full] ^ n.b[full]) & uint8_t(0xff00u >> rest))) continue;
    return n.p;
  }
  return Overlap::Default;
}

void Reassembler::new_wins(const DirStream& d, uint64_t lo, uint64_t hi, Ranges& out) {
  out.clear();
  const Overlap p = policy(d);
  if (p == Overlap::First || p == Overlap::Default || lo >= hi) return;
  if (p == Overlap::Last) {
    out.push_back({lo, hi});
    return;
  }
  // the earlier segments it overlaps, by start
  ovl_.clear();
  if (d.x) {
    const DirStream::Extra& x = *d.x;
    for (auto it = x.held.lower_bound({lo > x.held_max ? lo - x.held_max : 0, 0}); it != x.held.end() && it->first < hi;
         ++it)
      if (it->second > lo) ovl_.push_back(*it);
    for (uint32_t i = 0; i < x.nrecent; ++i)
      if (x.recent[i].first < hi && x.recent[i].second > lo) ovl_.push_back(x.recent[i]);
    std::sort(ovl_.begin(), ovl_.end());
  }
  // the bytes an earlier segment keeps, and those no remembered segment
  // holds (delivered bytes it forgot, held ones past what it remembers:
  // they cannot be told apart, and stay; holes are filled whatever this says)
  keep_.clear();
  uint64_t covered = lo;  // (bytes before this are held by a segment seen so far)
  for (auto [olo, ohi] : ovl_) {
    uint64_t a = std::max(lo, olo), b = std::min(hi, ohi);
    if (a > covered) keep_.push_back({covered, a});
    covered = std::max(covered, b);
    if (!overlap_new_wins(p, lo, hi, olo, ohi)) keep_.push_back({a, b});
  }
  if (covered < hi) keep_.push_back({covered, hi});
  std::sort(keep_.begin(), keep_.end());
  uint64_t cur = lo;
  for (auto [a, b] : keep_) {
    if (a > cur) out.push_back({cur, a});
    cur = std::max(cur, b);
  }
  if (cur < hi) out.push_back({cur, hi});
}

// After the segment [lo, hi) was taken (and what follows on delivered).
void Reassembler::note_segment(DirStream& d, uint64_t lo, uint64_t hi) {
  DirStream::Extra& x = d.extra();
  auto remember = [&x](std::pair<uint64_t, uint64_t> g) {
    x.recent[x.at] = g;
    x.at = uint8_t((x.at + 1) % kKeptSegments);
    if (x.nrecent < kKeptSegments) ++x.nrecent;
  };
  // (an exact duplicate is one segment, as Suricata's list has it)
  bool dup = x.held.count({lo, hi}) > 0;
  for (uint32_t i = 0; i < x.nrecent && !dup; ++i) dup = x.recent[i] == std::pair{lo, hi};
  if (!dup) {
    if (hi <= d.next) {
      remember({lo, hi});
    } else if (x.held.size() < 16 + d.held / 64) {  // (bounded by the bytes held)
      x.held.insert({lo, hi});
      x.held_max = std::max<uint32_t>(x.held_max, uint32_t(std::min<uint64_t>(hi - lo, UINT32_MAX)));
    } else {
      c_.untracked.add();
    }
  }
  // held segments now delivered join the ring
  for (auto it = x.held.begin(); it != x.held.end() && it->first < d.next;) {
    if (it->second <= d.next) {
      remember(*it);
      it = x.held.erase(it);
    } else {
      ++it;
    }
  }
}

void Reassembler::redelivered(DirStream& d, uint32_t flow, uint8_t dir, uint64_t off, const uint8_t* data, uint32_t len,
                              const Ranges& wins) {
  (void)d;
  for (auto [a, b] : wins) {
    uint64_t lo = std::max(a, off), hi = std::min(b, off + len);
    if (lo >= hi) continue;
    c_.overwritten.add(hi - lo);
    if (sink_) sink_->stream_overwrite(flow, dir, lo, data + (lo - off), uint32_t(hi - lo));
  }
}

void Reassembler::deliver(DirStream& d, uint32_t flow, uint8_t dir, const uint8_t* data, uint32_t len) {
  if (!len) return;
  if (cfg_.keep) {  // (trimmed to the cap when twice over it)
    std::string& k = d.extra().kept;
    k.append(reinterpret_cast<const char*>(data), len);
    if (k.size() > 2 * size_t(cfg_.keep)) k.erase(0, k.size() - cfg_.keep);
  }
  if (sink_) sink_->stream_data(flow, dir, d.next, data, len);
  d.next += len;
  c_.delivered.add(len);
}

void Reassembler::end(DirStream& d, uint32_t flow, uint8_t dir) {
  if (d.ended) return;
  d.ended = true;
  if (sink_) sink_->stream_end(flow, dir);
}

void Reassembler::drop_held(DirStream& d, uint64_t n) {
  d.held -= n;
  c_.buffered.set(c_.buffered.get() - n);
}

// Delivers the buffered data that now follows on.
void Reassembler::drain(DirStream& d, uint32_t flow, uint8_t dir) {
  while (!d.ooo.empty() && d.ooo.begin()->first <= d.next) {
    auto it = d.ooo.begin();
    uint64_t start = it->first, size = it->second.size();
    if (start + size > d.next) {
      uint64_t skip = d.next - start;
      deliver(d, flow, dir, it->second.data() + skip, uint32_t(size - skip));
    }
    drop_held(d, size);
    d.ooo.erase(it);
  }
  if (d.fin && d.next >= d.fin_off && d.ooo.empty()) end(d, flow, dir);
}

// Gives up the hole before the first buffered segment.
void Reassembler::skip_hole(DirStream& d, uint32_t flow, uint8_t dir) {
  uint64_t at = d.ooo.begin()->first;
  if (at > d.next) {
    if (d.x) d.x->kept.clear();  // (kept bytes end at the next one)
    if (sink_) sink_->stream_gap(flow, dir, d.next, at - d.next);
    c_.gaps.add();
    c_.gap_bytes.add(at - d.next);
    d.next = at;
  }
  drain(d, flow, dir);
}

// Buffers [off, off+len): where nothing is held, and over held bytes
// where `wins` says the new data wins. Every offset is at or past d.next.
void Reassembler::insert(DirStream& d, uint64_t off, const uint8_t* data, uint32_t len, const Ranges& wins) {
  uint64_t end = off + len;
  auto it = d.ooo.upper_bound(off);
  if (it != d.ooo.begin()) {
    auto p = std::prev(it);
    if (p->first + p->second.size() > off) it = p;
  }
  uint64_t cur = off;
  std::vector<std::pair<uint64_t, uint64_t>> pieces;  // the holes it fills
  for (; it != d.ooo.end() && it->first < end; ++it) {
    uint64_t start = it->first;
    std::vector<uint8_t>& bytes = it->second;
    uint64_t lo = std::max(off, start), hi = std::min(end, start + bytes.size());
    if (lo < hi) {
      c_.overlaps.add();
      if (std::memcmp(bytes.data() + (lo - start), data + (lo - off), hi - lo) != 0) {
        c_.overlap_differ.add();
        for (auto [a, b] : wins) {  // the policy's bytes
          uint64_t x = std::max(a, lo), y = std::min(b, hi);
          if (x < y) std::memcpy(bytes.data() + (x - start), data + (x - off), y - x);
        }
      }
    }
    if (start > cur) pieces.push_back({cur, std::min<uint64_t>(start, end)});
    cur = std::max<uint64_t>(cur, start + bytes.size());
  }
  if (cur < end) pieces.push_back({cur, end});
  for (auto [a, b] : pieces) {
    d.ooo.emplace(a, std::vector<uint8_t>(data + (a - off), data + (b - off)));
    d.held += b - a;
    c_.buffered.add(b - a);
  }
  c_.buffered_peak.set(std::max(c_.buffered_peak.get(), c_.buffered.get()));
  count_regions(d);
}

void Reassembler::count_regions(DirStream& d) {
  // Suricata's streaming buffer for TCP: a region starts 2 KiB long at the
  // next byte; data within the region gap of a region's range joins it
  constexpr uint64_t kGap = 256 * 1024, kFirst = 2048;
  uint64_t end = d.next + kFirst;
  uint16_t n = 1;
  for (const auto& [off, bytes] : d.ooo) {
    if (off > end + kGap) ++n;
    end = std::max<uint64_t>(end, off + bytes.size());
  }
  d.max_regions = std::max(d.max_regions, n);
}

bool Reassembler::restart(Stream& s, uint8_t dir, uint32_t isn) {
  DirStream& d = s.d[dir];
  if (!d.init || d.next || !d.ooo.empty() || d.fin || d.rst) return false;
  d.base = isn + 1;
  return true;
}

bool Reassembler::segment(Stream& s, uint32_t flow, uint8_t dir, uint32_t seq, uint8_t flags, const uint8_t* data,
                          uint32_t len) {
  DirStream& d = s.d[dir];
  bool syn = flags & k::kTcpSyn, fin = flags & k::kTcpFin, rst = flags & k::kTcpRst;
  if (d.rst || (rst && d.ended)) {
    if (len) c_.after_rst.add();
    return false;
  }
  if (rst) {
    // the connection is aborted: both directions end with what they have
    s.d[0].rst = s.d[1].rst = true;
    if (len) c_.after_rst.add();
    finish(s, flow);
    return false;
  }
  if (syn) {
    if (!d.init) {
      d.init = true;
      d.base = seq + 1;
    }
    if (len) c_.syn_data.add();
    seq += 1;  // a SYN's data starts after its own sequence number
  }
  if (!d.init) {
    if (!len && !fin) return false;
    if (!cfg_.midstream) {
      if (len) c_.no_handshake.add();
      return false;
    }
    d.init = true;  // picked up midstream: this segment starts the stream
    d.base = seq;
  }
  // The segment's offset, unwrapped against the next expected byte.
  uint32_t next_seq = d.base + uint32_t(d.next);
  int64_t off = int64_t(d.next) + int64_t(int32_t(seq - next_seq));
  int64_t stop = off + int64_t(len);
  if (fin && !d.fin && stop >= int64_t(d.next)) {
    d.fin = true;
    d.fin_off = uint64_t(stop);
    // buffered data past the FIN is not part of the stream
    while (!d.ooo.empty()) {
      auto last = std::prev(d.ooo.end());
      uint64_t start = last->first, size = last->second.size();
      if (start + size <= d.fin_off) break;
      c_.after_fin.add();
      if (start >= d.fin_off) {
        drop_held(d, size);
        d.ooo.erase(last);
      } else {
        drop_held(d, start + size - d.fin_off);
        last->second.resize(d.fin_off - start);
      }
    }
  }
  std::pair<uint64_t, uint64_t> noted{0, 0};  // (a target-based policy's: the segment, once taken)
  if (len) {
    c_.segments.add();
    if (d.fin && stop > int64_t(d.fin_off)) {
      c_.after_fin.add();
      stop = int64_t(d.fin_off);
    }
    int64_t from = std::max<int64_t>(off, int64_t(d.next));
    // where the policy gives this segment the bytes others had (from the
    // stream's start on)
    const uint64_t lo = uint64_t(std::max<int64_t>(off, 0));
    Ranges& wins = wins_;
    wins.clear();
    if (stop > int64_t(lo) && (off < int64_t(d.next) || !d.ooo.empty()))  // (it may overlap)
      new_wins(d, lo, uint64_t(stop), wins);
    const bool target = stop > int64_t(lo) && target_based(d);
    if (from < stop && from > off) c_.retransmitted.add();          // partly old
    if (from > int64_t(lo) && stop > int64_t(lo) && !wins.empty())  // the old part may be the receiver's now
      redelivered(d, flow, dir, lo, data + (int64_t(lo) - off), uint32_t(std::min(from, stop) - int64_t(lo)), wins);
    if (from >= stop) {
      if (stop > off) c_.retransmitted.add();  // all of it delivered already
      if (target) noted = {lo, uint64_t(stop)};
    } else {
      const uint8_t* p = data + (from - off);
      uint32_t n = uint32_t(stop - from);
      if (uint64_t(from) == d.next && d.ooo.empty()) {
        deliver(d, flow, dir, p, n);
        if (target) noted = {lo, uint64_t(stop)};
      } else {
        if (uint64_t(from) > d.next) c_.out_of_order.add();
        // room: give up the oldest holes of this direction until it fits
        while ((d.held + n > cfg_.dir_cap || c_.buffered.get() + n > cfg_.total_cap) && !d.ooo.empty()) {
          c_.buffer_full.add();
          skip_hole(d, flow, dir);
          if (int64_t(d.next) > from) {  // the hole that went held this segment's start
            if (int64_t(d.next) >= stop) {
              n = 0;
              break;
            }
            p += d.next - uint64_t(from);
            n = uint32_t(stop - int64_t(d.next));
            from = int64_t(d.next);
          }
        }
        if (n && uint64_t(from) == d.next && d.ooo.empty()) {
          deliver(d, flow, dir, p, n);
          if (target) noted = {lo, uint64_t(stop)};
        } else if (n && d.held + n <= cfg_.dir_cap && c_.buffered.get() + n <= cfg_.total_cap) {
          insert(d, uint64_t(from), p, n, wins);
          if (target) noted = {lo, uint64_t(stop)};
        } else if (n) {
          c_.buffer_full.add();  // cannot be held at all: it will be part of a gap
        }
      }
    }
  }
  drain(d, flow, dir);
  if (noted.second) note_segment(d, noted.first, noted.second);
  return len > 0;
}

uint32_t Reassembler::normalize(Stream& s, uint8_t dir, uint32_t seq, uint8_t flags, uint8_t* data, uint32_t len) {
  DirStream& d = s.d[dir];
  if (!d.init || !len || d.rst || (flags & k::kTcpRst)) return 0;
  if (flags & k::kTcpSyn) seq += 1;
  uint32_t next_seq = d.base + uint32_t(d.next);
  int64_t off = int64_t(d.next) + int64_t(int32_t(seq - next_seq)), end = off + int64_t(len);
  uint32_t changed = 0;
  auto take = [&](int64_t at, const uint8_t* from, uint64_t n) {  // the stream's bytes [at, at+n)
    int64_t lo = std::max(at, off), hi = std::min(at + int64_t(n), end);
    for (int64_t i = lo; i < hi; ++i) {
      uint8_t& b = data[i - off];
      uint8_t want = from[i - at];
      if (b != want) b = want, ++changed;
    }
  };
  if (d.x && !d.x->kept.empty() && off < int64_t(d.next)) {
    const std::string& k = d.x->kept;
    take(int64_t(d.next) - int64_t(k.size()), reinterpret_cast<const uint8_t*>(k.data()), k.size());
  }
  if (end > int64_t(d.next) && !d.ooo.empty()) {
    auto it = d.ooo.upper_bound(uint64_t(std::max<int64_t>(off, 0)));
    if (it != d.ooo.begin()) --it;
    for (; it != d.ooo.end() && int64_t(it->first) < end; ++it)
      take(int64_t(it->first), it->second.data(), it->second.size());
  }
  if (changed) {
    c_.normalized.add();
    c_.normalized_bytes.add(changed);
  }
  return changed;
}

uint64_t Reassembler::held_run(const DirStream& d, uint64_t end, uint32_t max, std::string& out) {
  out.clear();
  // the pieces (non-overlapping, by offset), back from the one holding end - 1
  auto it = d.ooo.lower_bound(end);
  uint64_t start = end, floor = end > max ? end - max : 0;
  while (it != d.ooo.begin() && start > floor) {
    --it;
    uint64_t lo = it->first, hi = lo + it->second.size();
    if (hi < start) break;  // a hole (the first piece: no held byte at end - 1)
    start = std::max(lo, floor);
  }
  if (start == end) return end;
  out.reserve(size_t(end - start));
  for (it = d.ooo.upper_bound(start), --it; it != d.ooo.end() && it->first < end; ++it) {
    uint64_t lo = std::max(it->first, start), hi = std::min<uint64_t>(it->first + it->second.size(), end);
    out.append(reinterpret_cast<const char*>(it->second.data()) + (lo - it->first), size_t(hi - lo));
  }
  return start;
}

void Reassembler::acknowledged(Stream& s, uint8_t dir, uint64_t offset) {
  DirStream& d = s.d[dir];
  if (!d.x || d.x->kept.empty()) return;
  // (erased once they are half of what is kept: the receiver ignores a
  // retransmission of what it acknowledged, normalized or not)
  std::string& k = d.x->kept;
  uint64_t from = d.next - k.size();
  if (offset <= from) return;
  auto n = size_t(std::min<uint64_t>(offset - from, k.size()));
  if (2 * n >= k.size()) k.erase(0, n);
}

void Reassembler::finish(Stream& s, uint32_t flow) {
  for (uint8_t dir = 0; dir < 2; ++dir) {
    DirStream& d = s.d[dir];
    while (!d.ooo.empty()) skip_hole(d, flow, dir);
    d.x.reset();
    if (d.init) end(d, flow, dir);
  }
}

}  // namespace shoal::flow

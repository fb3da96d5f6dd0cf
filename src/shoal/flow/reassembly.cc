#include "shoal/flow/reassembly.hh"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "shoal/kernels/flowstate.hh"

namespace shoal::flow {

void Reassembler::deliver(DirStream& d, uint32_t flow, uint8_t dir, const uint8_t* data, uint32_t len) {
  if (!len) return;
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
    if (sink_) sink_->stream_gap(flow, dir, d.next, at - d.next);
    c_.gaps.add();
    c_.gap_bytes.add(at - d.next);
    d.next = at;
  }
  drain(d, flow, dir);
}

// Buffers [off, off+len), resolving overlaps with what is buffered by the
// policy. Every offset is at or past d.next.
void Reassembler::insert(DirStream& d, uint64_t off, const uint8_t* data, uint32_t len) {
  uint64_t end = off + len;
  auto it = d.ooo.upper_bound(off);
  if (it != d.ooo.begin()) {
    auto p = std::prev(it);
    if (p->first + p->second.size() > off) it = p;
  }
  auto add = [&](uint64_t from, uint64_t to) {
    if (to <= from) return;
    d.ooo.emplace(from, std::vector<uint8_t>(data + (from - off), data + (to - off)));
    d.held += to - from;
    c_.buffered.add(to - from);
  };
  auto count_overlap = [&](uint64_t start, const std::vector<uint8_t>& bytes) {
    uint64_t lo = std::max(off, start), hi = std::min(end, start + bytes.size());
    if (lo >= hi) return;
    c_.overlaps.add();
    if (std::memcmp(bytes.data() + (lo - start), data + (lo - off), hi - lo) != 0) c_.overlap_differ.add();
  };
  if (cfg_.policy == Overlap::First) {
    uint64_t cur = off;
    std::vector<std::pair<uint64_t, uint64_t>> pieces;
    for (; it != d.ooo.end() && it->first < end; ++it) {
      count_overlap(it->first, it->second);
      if (it->first > cur) pieces.push_back({cur, std::min<uint64_t>(it->first, end)});
      cur = std::max<uint64_t>(cur, it->first + it->second.size());
    }
    if (cur < end) pieces.push_back({cur, end});
    for (auto [a, b] : pieces) add(a, b);
  } else {
    while (it != d.ooo.end() && it->first < end) {
      count_overlap(it->first, it->second);
      uint64_t start = it->first;
      std::vector<uint8_t> bytes = std::move(it->second);
      drop_held(d, bytes.size());
      it = d.ooo.erase(it);
      uint64_t stop = start + bytes.size();
      if (start < off) {  // the part before the new data stays
        d.ooo.emplace(start, std::vector<uint8_t>(bytes.begin(), bytes.begin() + long(off - start)));
        d.held += off - start;
        c_.buffered.add(off - start);
      }
      if (stop > end) {  // and the part after it
        d.ooo.emplace(end, std::vector<uint8_t>(bytes.begin() + long(end - start), bytes.end()));
        d.held += stop - end;
        c_.buffered.add(stop - end);
        break;
      }
    }
    add(off, end);
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
  if (len) {
    c_.segments.add();
    if (d.fin && stop > int64_t(d.fin_off)) {
      c_.after_fin.add();
      stop = int64_t(d.fin_off);
    }
    int64_t from = std::max<int64_t>(off, int64_t(d.next));
    if (from < stop && from > off) c_.retransmitted.add();  // partly old
    if (from >= stop) {
      if (stop > off) c_.retransmitted.add();  // all of it delivered already
    } else {
      const uint8_t* p = data + (from - off);
      uint32_t n = uint32_t(stop - from);
      if (uint64_t(from) == d.next && d.ooo.empty()) {
        deliver(d, flow, dir, p, n);
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
        } else if (n && d.held + n <= cfg_.dir_cap && c_.buffered.get() + n <= cfg_.total_cap) {
          insert(d, uint64_t(from), p, n);
        } else if (n) {
          c_.buffer_full.add();  // cannot be held at all: it will be part of a gap
        }
      }
    }
  }
  drain(d, flow, dir);
  return len > 0;
}

void Reassembler::finish(Stream& s, uint32_t flow) {
  for (uint8_t dir = 0; dir < 2; ++dir) {
    DirStream& d = s.d[dir];
    while (!d.ooo.empty()) skip_hole(d, flow, dir);
    if (d.init) end(d, flow, dir);
  }
}

}  // namespace shoal::flow

// Snort's content/pcre verification over a payload, shared by
// payload_matches() and the engine (which answers some pcres from its
// prefilters): items_from() matches a rule's items from item k on,
// backtracking over earlier contents' occurrences within a budget.
#pragma once
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "shoal/ids/engine.hh"
#include "shoal/ids/transform.hh"

namespace shoal::ids {

constexpr int kBacktrackBudget = 20000;

// The first occurrence of c at or after `from` that fits in [from, hi).
inline int64_t find_content(const Content& c, const uint8_t* s, int64_t from, int64_t hi) {
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

// A number of `nbytes` bytes at pos (binary: big or little endian; string:
// digits in b.base), masked; false when the bytes are not all there, or a
// string has no digit.
inline bool read_number(const ByteOp& b, int nbytes, const uint8_t* s, int64_t n, int64_t pos, uint64_t& v) {
  if (pos < 0 || pos + nbytes > n) return false;
  v = 0;
  if (b.string) {
    int digits = 0;
    for (int i = 0; i < nbytes; ++i) {
      uint8_t c = s[pos + i];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : 99;
      if (d >= b.base) break;
      v = v * b.base + uint64_t(d);
      ++digits;
    }
    if (!digits) return false;
  } else {
    for (int i = 0; i < nbytes; ++i) v = b.little ? v | uint64_t(s[pos + i]) << (8 * i) : v << 8 | s[pos + i];
  }
  if (b.bitmask) v = (v & b.bitmask) >> __builtin_ctzll(b.bitmask);
  return true;
}

// The values of a rule's byte_extract and byte_math variables along the
// match being tried: set by those items, read by the items after them (a
// backtrack re-runs the setting item before any reader sees the value).
inline thread_local uint64_t tl_rule_vars[kMaxRuleVars];
inline int64_t var_or(int8_t var, int64_t literal) { return var >= 0 ? int64_t(tl_rule_vars[var]) : literal; }

// isdataat, byte_test, byte_jump, byte_extract, byte_math at the cursor
// prev_end; cur gets the cursor after it (byte_jump and byte_extract move it).
inline bool byte_check(const ByteOp& b, const uint8_t* s, int64_t n, int64_t prev_end, int64_t& cur) {
  cur = prev_end;
  int64_t base = b.relative ? prev_end : 0;
  const int64_t offset = var_or(b.var_offset, b.offset);
  // a count from a variable must be one the option could have been written with
  const int64_t nb = var_or(b.var_nbytes, b.nbytes);
  const bool reads = b.kind == ByteOp::ByteTest || b.kind == ByteOp::ByteJump || b.kind == ByteOp::ByteExtract ||
                     b.kind == ByteOp::ByteMath;
  if (reads && (nb < (b.kind == ByteOp::ByteJump && !b.string ? 0 : 1) || nb > (b.string ? 10 : 8))) return false;
  const int nbytes = int(nb);
  switch (b.kind) {
    case ByteOp::IsDataAt: {  // as Suricata: N more bytes after the cursor, or a byte at offset N
      bool has = b.relative ? base + offset <= n : offset < n;
      return has != b.neg;
    }
    case ByteOp::ByteExtract: {
      uint64_t v;
      if (!read_number(b, nbytes, s, n, base + offset, v)) return false;
      if (v > (uint64_t(1) << 40)) return false;  // (absurd: no offset can use it)
      v *= b.multiplier;
      if (b.align_to) v = (v + b.align_to - 1) / b.align_to * b.align_to;
      tl_rule_vars[b.var] = v;
      cur = base + offset + nbytes;
      return true;
    }
    case ByteOp::ByteMath: {
      uint64_t v;
      if (!read_number(b, nbytes, s, n, base + offset, v)) return false;
      uint64_t r = uint64_t(var_or(b.var_value, int64_t(b.value)));
      switch (b.math) {
        case '+': v += r; break;
        case '-': v -= r; break;
        case '*': v *= r; break;
        case '/':
          if (!r) return false;
          v /= r;
          break;
        case '<': v = r >= 64 ? 0 : v << r; break;
        case '>': v = r >= 64 ? 0 : v >> r; break;
        default: return false;
      }
      tl_rule_vars[b.var] = v;
      return true;
    }
    case ByteOp::ByteTest: {
      uint64_t v;
      if (!read_number(b, nbytes, s, n, base + offset, v)) return false;
      const uint64_t value = uint64_t(var_or(b.var_value, int64_t(b.value)));
      bool ok = false;
      std::string_view op(b.op);
      if (op == "<")
        ok = v < value;
      else if (op == ">")
        ok = v > value;
      else if (op == "=")
        ok = v == value;
      else if (op == "<=")
        ok = v <= value;
      else if (op == ">=")
        ok = v >= value;
      else if (op == "&")
        ok = (v & value) != 0;
      else if (op == "^")
        ok = (v ^ value) != 0;
      return ok != b.neg;
    }
    case ByteOp::ByteJump: {  // as Suricata: a jump before the buffer stops at its start, one to its end fails
      int64_t pos = base + offset;
      uint64_t v;
      if (n == 0 || (b.relative && nbytes && pos >= n) || !read_number(b, nbytes, s, n, pos, v)) return false;
      if (v > uint64_t(n) || (b.multiplier > 1 && v > uint64_t(n) / b.multiplier)) return false;  // past the end
      int64_t jump = int64_t(v * b.multiplier);
      if (b.align) jump = (jump + 3) & ~int64_t(3);
      int64_t np = b.from_beginning ? jump : b.from_end ? n + jump : pos + nbytes + jump;
      np = std::max<int64_t>(np + b.post_offset, 0);
      if (np >= n) return false;
      cur = np;
      return true;
    }
    case ByteOp::Bsize: return (uint64_t(n) >= b.value && uint64_t(n) <= b.hi) != b.neg;
    case ByteOp::Absent: return true;         // (tx_matches decides a run that starts so)
    case ByteOp::Dataset: return false;       // (items_from runs it: it needs the item's set)
    case ByteOp::Base64Decode: return false;  // (items_from runs it: the items after it read its bytes)
    case ByteOp::None: break;
  }
  return false;
}

// exists(k): for pcre item k, 1 or 0 when something other than PCRE2
// already knows whether it matches somewhere in the payload (the item is
// not relative and nothing after it uses its end), -1 to ask PCRE2.
template <class Exists>
bool items_from(const Rule& r, size_t k, const uint8_t* s, uint32_t n, int64_t prev_end, int& budget, Exists& exists,
                size_t start = 0) {
  // the end of the rule, or of the run of items in one buffer that began at `start`
  if (k == r.items.size() || (k > start && (r.items[k].buf != r.items[k - 1].buf || r.items[k].run_start))) return true;
  if (--budget < 0) return false;  // pathological backtracking: no match (as Snort's limits)
  const Item& it = r.items[k];
  if (it.byte.kind == ByteOp::Dataset)  // the whole buffer, whatever the cursor
    return it.dataset && dataset_check(*it.dataset_use, *it.dataset, s, n) &&
           items_from(r, k + 1, s, n, prev_end, budget, exists, start);
  if (it.byte.kind == ByteOp::Base64Decode) {
    // as Suricata: from the cursor (relative) plus offset, which must leave a byte to decode
    const int64_t from = (it.byte.relative ? prev_end : 0) + it.byte.offset;
    if (from < 0 || from >= int64_t(n)) return false;
    std::string d;
    base64_decode_rfc4648(s + from, size_t(std::min<uint64_t>(n - uint64_t(from), it.byte.value)), d);
    if (d.empty()) return false;
    if (k + 1 < r.items.size() && r.items[k + 1].b64)  // base64_data: the run's last items read d
      return items_from(r, k + 1, reinterpret_cast<const uint8_t*>(d.data()), uint32_t(d.size()), 0, budget, exists,
                        k + 1);
    return items_from(r, k + 1, s, n, prev_end, budget, exists, start);
  }
  if (it.byte.kind != ByteOp::None) {
    int64_t cur;
    return byte_check(it.byte, s, int64_t(n), prev_end, cur) && items_from(r, k + 1, s, n, cur, budget, exists, start);
  }
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
    if (it.pcre.neg) return !m && items_from(r, k + 1, s, n, prev_end, budget, exists, start);
    return m && items_from(r, k + 1, s, n, int64_t(end), budget, exists, start);
  }
  const Content& c = it.content;
  int64_t lo, hi;
  if (c.relative()) {
    lo = prev_end + var_or(c.var_distance, c.distance);
    hi = c.has_within ? lo + var_or(c.var_within, c.within) : int64_t(n);
  } else {
    lo = c.has_offset ? var_or(c.var_offset, c.offset) : 0;
    hi = c.has_depth ? lo + var_or(c.var_depth, c.depth) : int64_t(n);
  }
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, n);
  if (c.endswith) lo = std::max<int64_t>(lo, int64_t(n) - int64_t(c.bytes.size()));  // only a match ending at n
  if (c.neg) return find_content(c, s, lo, hi) < 0 && items_from(r, k + 1, s, n, prev_end, budget, exists, start);
  for (int64_t pos = find_content(c, s, lo, hi); pos >= 0; pos = find_content(c, s, pos + 1, hi)) {
    if (items_from(r, k + 1, s, n, pos + int64_t(c.bytes.size()), budget, exists, start)) return true;
    if (budget < 0) return false;
  }
  return false;
}

// A packet rule's items, run by run: the payload's (with exists answering
// its pcres) and the headers' (ipv4.hdr, tcp.hdr, ...).
template <class Exists>
bool packet_items_match(const Rule& r, const PacketInfo& p, int& budget, Exists& exists) {
  if (!r.header_bufs) return items_from(r, 0, p.payload, p.plen, 0, budget, exists);
  auto unknown = [](size_t) { return -1; };
  for (size_t k = 0; k < r.items.size(); ++k) {
    if (k > 0 && r.items[k].buf == r.items[k - 1].buf && !r.items[k].run_start) continue;  // inside a run
    if (r.items[k].buf == Buf::Packet) {
      if (!items_from(r, k, p.payload, p.plen, 0, budget, exists, k)) return false;
      continue;
    }
    std::string_view h;
    if (!header_buffer(p, r.items[k].buf, h)) return false;
    std::string transformed;
    if (r.items[k].xform >= 0) h = transformed = apply_transforms(r.xforms[size_t(r.items[k].xform)], h);
    if (!items_from(r, k, reinterpret_cast<const uint8_t*>(h.data()), uint32_t(h.size()), 0, budget, unknown, k))
      return false;
  }
  return true;
}

}  // namespace shoal::ids

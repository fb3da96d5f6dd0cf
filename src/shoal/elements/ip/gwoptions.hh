// The IPv4 options a router processes (RFC 791, RFC 1812 5.2.4): record
// route, timestamp, loose and strict source routes; IPGWOptions's work,
// and IPOutputCombo's.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "shoal/core/worker.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

struct GwOptions {
  int32_t bad_at = -1;   // the offset in the header of a malformed option's byte (ICMP's pointer); -1: none
  bool changed = false;  // an option was written: the checksum is the caller's
  bool routed = false;   // a source route moved the destination on to its next hop
};

// The time a timestamp option records: milliseconds since midnight UT.
inline uint32_t ms_since_midnight() { return uint32_t((realtime_ns() / 1000000) % 86400000); }

// The options of the IPv4 header at ip (hl bytes, there): `me` is recorded;
// `mine` (me among them) are the router's addresses, for prespecified
// timestamps and for source routes addressed to it.
inline GwOptions gw_options(uint8_t* ip, uint32_t hl, uint32_t me, const std::vector<uint32_t>& mine, uint32_t now_ms) {
  GwOptions r;
  auto is_mine = [&](uint32_t a) { return std::find(mine.begin(), mine.end(), a) != mine.end(); };
  auto bad = [&](uint32_t at) {
    r.bad_at = int32_t(at);
    return r;
  };
  for (uint32_t o = 20; o < hl;) {
    const uint8_t t = ip[o];
    if (t == 0) break;
    if (t == 1) {
      ++o;
      continue;
    }
    if (o + 1 >= hl) return bad(o);
    const uint32_t len = ip[o + 1];
    if (len < 2 || o + len > hl) return bad(o + 1);
    uint8_t* opt = ip + o;
    if (t == 7) {  // record route
      if (len < 3) return bad(o + 1);
      const uint32_t ptr = opt[2];
      if (ptr < 4) return bad(o + 2);
      if (ptr + 3 <= len) {
        k::store_be32(opt + ptr - 1, me);
        opt[2] = uint8_t(ptr + 4);
        r.changed = true;
      }
    } else if (t == 68) {  // timestamp
      if (len < 4) return bad(o + 1);
      const uint32_t ptr = opt[2], flag = opt[3] & 0xf;
      if (ptr < 5) return bad(o + 2);
      if (flag != 0 && flag != 1 && flag != 3) return bad(o + 3);
      const uint32_t entry = flag == 0 ? 4 : 8;
      if (ptr + entry - 1 <= len) {
        if (flag == 0) {
          k::store_be32(opt + ptr - 1, now_ms);
          opt[2] = uint8_t(ptr + 4);
          r.changed = true;
        } else if (flag == 1) {
          k::store_be32(opt + ptr - 1, me);
          k::store_be32(opt + ptr + 3, now_ms);
          opt[2] = uint8_t(ptr + 8);
          r.changed = true;
        } else if (is_mine(k::load_be32(opt + ptr - 1))) {  // prespecified: only our own slot
          k::store_be32(opt + ptr + 3, now_ms);
          opt[2] = uint8_t(ptr + 8);
          r.changed = true;
        }
      } else {  // full: count the overflow; an overflowing overflow is an error
        const uint8_t of = opt[3] >> 4;
        if (of == 15) return bad(o + 3);
        opt[3] = uint8_t(((of + 1) << 4) | flag);
        r.changed = true;
      }
    } else if (t == 131 || t == 137) {  // loose / strict source route
      if (len < 3) return bad(o + 1);
      const uint32_t ptr = opt[2];
      if (ptr < 4) return bad(o + 2);
      // Only the router the datagram is addressed to takes the next hop.
      if (is_mine(k::load_be32(ip + 16)) && ptr + 3 <= len) {
        std::memcpy(ip + 16, opt + ptr - 1, 4);
        k::store_be32(opt + ptr - 1, me);
        opt[2] = uint8_t(ptr + 4);
        r.changed = r.routed = true;
      }
    }
    o += len;
  }
  return r;
}

}  // namespace shoal

// FlowIPLoadBalancer's per-packet function (host+device): a connection's
// backend chosen once, by its originator's first packet to the VIP, kept in
// the flow's state, checked again when the backend set changes, and the
// originator's packets readdressed to it.
#pragma once
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/hd.hh"
#include "shoal/kernels/maglev.hh"

namespace shoal::k {

// A connection's state in the flow layer (zero when the flow starts).
struct LbState {
  uint32_t addr;     // the backend (host order); 0: none chosen yet
  uint32_t version;  // the backend set it was last checked against
};

// One backend set as the function sees it.
struct LbSet {
  const uint32_t* addrs = nullptr;   // in the order given
  const uint32_t* sorted = nullptr;  // ascending, for membership
  uint32_t n = 0;
  uint32_t version = 1;
  MaglevView maglev;  // maglev mode
  uint8_t mode = 0;   // kLbMaglev, kLbHash, kLbRoundRobin
  uint8_t has_vip = 0;
  uint32_t vip = 0;
};
constexpr uint8_t kLbMaglev = 0, kLbHash = 1, kLbRoundRobin = 2;

// What happened, for the element's counters (lb_process's `note`).
constexpr uint32_t kLbBackendMask = 0xffff;   // backend index + 1: the connection got a backend
constexpr uint32_t kLbReassigned = 1u << 16;  // its backend had left: it moved
constexpr uint32_t kLbPassed = 1u << 17;      // no backend and none to pick: passed untouched
constexpr int kLbNotIPv4 = 1, kLbNoBackend = 2;

SHOAL_HD bool lb_member(const uint32_t* sorted, uint32_t n, uint32_t a) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t m = (lo + hi) / 2;
    if (sorted[m] < a)
      lo = m + 1;
    else
      hi = m;
  }
  return lo < n && sorted[lo] == a;
}

// One packet of a flow whose IPv4 header is at ip (len bytes on): 0, or
// kLbNotIPv4 / kLbNoBackend (dropped). `rr` is the next round-robin pick
// (kLbRoundRobin only, host only: it is sequential).
SHOAL_HD int lb_process(const LbSet& s, LbState& st, uint8_t* ip, uint32_t len, uint8_t dir, uint32_t hash,
                        uint64_t* rr, uint32_t& note) {
  note = 0;
  if (!ip || len < 20 || (ip[0] >> 4) != 4) return kLbNotIPv4;
  if (st.addr && st.version != s.version) {
    if (!lb_member(s.sorted, s.n, st.addr)) {
      st.addr = 0;  // its backend left: the connection moves
      note |= kLbReassigned;
    } else {
      st.version = s.version;
    }
  }
  if (!st.addr) {
    // Only a connection's originator picks a backend, and only for the VIP;
    // other packets of connections without one pass untouched.
    if (dir != 0 || (s.has_vip && load_be32(ip + 16) != s.vip)) {
      note |= kLbPassed;
      return 0;
    }
    if (s.n == 0) return kLbNoBackend;
    uint32_t i;
    if (s.mode == kLbMaglev)
      i = maglev_pick(s.maglev, hash);
    else if (s.mode == kLbHash || !rr)
      i = hash % s.n;
    else
      i = uint32_t((*rr)++ % s.n);
    st.addr = s.addrs[i];
    st.version = s.version;
    note |= i + 1;
  }
  // The originator's packets go to the backend; packets the other way (a
  // path where replies come back through here) keep their addresses.
  if (dir == 0) ip4_set_addr(ip, len, 16, st.addr);
  return 0;
}

}  // namespace shoal::k

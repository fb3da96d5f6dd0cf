// Multi-field packet classification (ClassBench's five fields, TCP flags,
// Ethernet type and VLAN), first match wins: the key a frame yields, a
// rule's test, and the lookup in the cut trees that classbench/classify_build
// makes (HiCuts-style equal cuts on one field per node, the rules split
// into a few trees by how wide their addresses are, as EffiCuts does).
// The same functions serve the CPU element, the host backend and the CUDA
// kernel.
#pragma once
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/hd.hh"

namespace shoal::k {

// What a frame offers the rules. Ports and flags are 0 where the packet
// has none (not TCP/UDP/SCTP, a later fragment, a short transport header).
struct ClsKey {
  uint32_t src = 0, dst = 0;
  uint16_t sport = 0, dport = 0;
  uint16_t flags = 0;      // the TCP word at offset 12: data offset, NS, CWR..FIN (SYN = 0x0002, ACK = 0x0010)
  uint16_t ethertype = 0;  // after any 802.1Q / 802.1ad tag
  uint16_t vlan = 0;       // the outer tag's VLAN ID
  uint8_t proto = 0;
  uint8_t tagged = 0;  // 1: the frame carries a VLAN tag
  uint8_t ip = 0;      // 1: an IPv4 packet (the address, protocol and port fields are real)
};

enum : int { kClsOk = 0, kClsRunt = 1, kClsBadIp = 2 };
// Bytes of a frame a key needs at most: Ethernet with one tag, an IPv4
// header with options, the TCP word at offset 12.
constexpr uint32_t kClsKeyBytes = 18 + 60 + 14;

// The IPv4 fields of a packet whose IPv4 header starts at ip, len bytes
// on (ethertype and the VLAN fields are left alone): kClsBadIp when the
// header is broken.
SHOAL_HD int cls_key_ip4(const uint8_t* ip, uint32_t len, ClsKey& k) {
  if (len < 20) return kClsBadIp;
  uint32_t hl = uint32_t(ip[0] & 0x0f) * 4;
  if ((ip[0] >> 4) != 4 || hl < 20 || len < hl) return kClsBadIp;
  k.ip = 1;
  k.proto = ip[9];
  k.src = load_be32(ip + 12);
  k.dst = load_be32(ip + 16);
  if ((load_be16(ip + 6) & 0x1fff) != 0) return kClsOk;  // a later fragment: no transport header
  const uint8_t* l4 = ip + hl;
  uint32_t avail = len - hl;
  if ((k.proto == 6 || k.proto == 17 || k.proto == 132) && avail >= 4) {
    k.sport = load_be16(l4);
    k.dport = load_be16(l4 + 2);
  }
  if (k.proto == 6 && avail >= 14) k.flags = load_be16(l4 + 12);
  return kClsOk;
}

// The key of the frame in [f, f + len): kClsRunt when it is shorter than an
// Ethernet header, kClsBadIp when it says IPv4 but the header is not one.
SHOAL_HD int cls_key(const uint8_t* f, uint32_t len, ClsKey& k) {
  k = ClsKey();
  if (len < 14) return kClsRunt;
  uint32_t l3 = 14;
  uint16_t et = load_be16(f + 12);
  if (et == 0x8100 || et == 0x88a8) {
    if (len < 18) return kClsRunt;
    k.tagged = 1;
    k.vlan = uint16_t(load_be16(f + 14) & 0x0fff);
    et = load_be16(f + 16);
    l3 = 18;
  }
  k.ethertype = et;
  if (et != 0x0800) return kClsOk;
  return cls_key_ip4(f + l3, len - l3, k);
}

// One rule. Addresses and protocol under masks, ports as inclusive ranges,
// flags, Ethernet type and VLAN under masks (mask 0: any). `ip` rules need
// an IPv4 packet; the others look at the Ethernet fields only.
struct ClsRule {
  uint32_t src, smask, dst, dmask;
  uint16_t sp_lo, sp_hi, dp_lo, dp_hi;
  uint16_t flags, flags_mask;
  uint16_t ethertype, ethertype_mask;
  uint16_t vlan, vlan_mask;  // vlan_mask 0x0fff: tagged with this ID
  uint8_t proto, proto_mask;
  uint8_t ip;
  uint8_t untagged;  // 1: only frames without a VLAN tag
  int32_t action;    // the output port
};

SHOAL_HD bool cls_match(const ClsRule& r, const ClsKey& k) {
  if ((k.ethertype & r.ethertype_mask) != r.ethertype) return false;
  if (r.vlan_mask && (!k.tagged || (k.vlan & r.vlan_mask) != r.vlan)) return false;
  if (r.untagged && k.tagged) return false;
  if (!r.ip) return true;
  return k.ip && (k.src & r.smask) == r.src && (k.dst & r.dmask) == r.dst && k.sport >= r.sp_lo && k.sport <= r.sp_hi &&
         k.dport >= r.dp_lo && k.dport <= r.dp_hi && (k.proto & r.proto_mask) == r.proto &&
         (k.flags & r.flags_mask) == r.flags;
}

// The fields the trees cut: 0 source, 1 destination, 2 source port,
// 3 destination port, 4 protocol.
constexpr int kClsDims = 5;
SHOAL_HD uint32_t cls_field(const ClsKey& k, int d) {
  switch (d) {
    case 0: return k.src;
    case 1: return k.dst;
    case 2: return k.sport;
    case 3: return k.dport;
    default: return k.proto;
  }
}

// A tree node: its own rules leaf_rules[rfirst, rfirst + rcount),
// ascending (rule index is priority): a leaf's rules, or an inner node's
// rules that every child would hold (HyperCuts pushes them up instead of
// copying them). Inner: the child is children[first + ((field(dim) >>
// shift) & mask)]; a leaf has dim == kClsLeaf.
constexpr uint8_t kClsLeaf = 0xff;
struct ClsNode {
  uint8_t dim;
  uint8_t shift;
  uint16_t pad;
  uint32_t mask;
  uint32_t first;
  uint32_t rfirst;
  uint32_t rcount;
};

struct ClsView {
  const ClsRule* rules = nullptr;
  const ClsNode* nodes = nullptr;
  const uint32_t* children = nullptr;
  const uint32_t* leaf_rules = nullptr;
  const uint32_t* roots = nullptr;  // per tree: its root node, then its lowest rule index; by that index
  uint32_t ntrees = 0;
  uint32_t nrules = 0;
};

// The first rule (lowest index) that matches, or -1.
SHOAL_HD int32_t cls_lookup(const ClsView& v, const ClsKey& k) {
  uint32_t best = 0xffffffffu;
  for (uint32_t t = 0; t < v.ntrees; ++t) {
    if (v.roots[2 * t + 1] >= best) break;  // this tree and the later ones hold only later rules
    const ClsNode* n = &v.nodes[v.roots[2 * t]];
    for (;;) {
      for (uint32_t j = 0; j < n->rcount; ++j) {
        uint32_t r = v.leaf_rules[n->rfirst + j];
        if (r >= best) break;  // ascending: nothing better here
        if (cls_match(v.rules[r], k)) {
          best = r;
          break;
        }
      }
      if (n->dim == kClsLeaf) break;
      n = &v.nodes[v.children[n->first + ((cls_field(k, n->dim) >> n->shift) & n->mask)]];
    }
  }
  return best == 0xffffffffu ? -1 : int32_t(best);
}

// The linear first-match scan: the oracle, and small rule sets.
SHOAL_HD int32_t cls_linear(const ClsRule* rules, uint32_t n, const ClsKey& k) {
  for (uint32_t r = 0; r < n; ++r)
    if (cls_match(rules[r], k)) return int32_t(r);
  return -1;
}

// What the element does with a frame: the matching rule's output, or a
// drop code (-1 - reason) for runts, bad IPv4 headers and no match (unless
// nomatch >= 0 names an output). `missed` says whether no rule matched.
SHOAL_HD int cls_classify(const ClsView& v, const uint8_t* f, uint32_t len, int32_t nomatch, int32_t r_runt,
                          int32_t r_badip, int32_t r_nomatch, bool& missed) {
  missed = false;
  ClsKey key;
  int st = cls_key(f, len, key);
  if (st == kClsRunt) return -1 - r_runt;
  if (st == kClsBadIp) return -1 - r_badip;
  int32_t r = cls_lookup(v, key);
  if (r >= 0) return v.rules[r].action;
  missed = true;
  return nomatch >= 0 ? nomatch : -1 - r_nomatch;
}

}  // namespace shoal::k

// Flow key extraction and hashing from an Ethernet frame. Used by the worker
// dispatch (software RSS), HashSwitch and, later, the device flow tables.
#pragma once
#include "shoal/kernels/bytes.hh"

namespace shoal::k {

constexpr uint16_t kEthIPv4 = 0x0800;
constexpr uint16_t kEthIPv6 = 0x86DD;
constexpr uint16_t kEthVLAN = 0x8100;
constexpr uint16_t kEthQinQ = 0x88A8;
constexpr uint16_t kEthNsh = 0x894F;

struct FlowKey {
  uint32_t words[10];  // src[4] dst[4] (sport<<16|dport) (family<<8|proto)
};

SHOAL_HD uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x7feb352dU;
  h ^= h >> 15;
  h *= 0x846ca68bU;
  h ^= h >> 16;
  return h;
}

SHOAL_HD uint32_t hash_words(const uint32_t* w, int n, uint32_t seed = 0x9e3779b9U) {
  uint32_t h = seed;
  for (int i = 0; i < n; ++i) h = mix32(h ^ (w[i] + 0x9e3779b9U + (h << 6) + (h >> 2)));
  return h;
}

// The IP part of a flow key: an IPv4 (type 0x0800) or IPv6 (0x86dd) packet
// at ip; false (key untouched) when it is neither or truncated.
SHOAL_HD bool extract_ip_key(const uint8_t* ip, uint32_t len, uint16_t type, FlowKey& key) {
  if (type == kEthIPv4 && 20 <= len) {
    uint32_t ihl = uint32_t(ip[0] & 0xf) * 4;
    uint8_t proto = ip[9];
    key.words[0] = load_be32(ip + 12);
    key.words[4] = load_be32(ip + 16);
    key.words[9] = (4u << 8) | proto;
    bool frag = (load_be16(ip + 6) & 0x3fff) != 0;
    if (!frag && ihl >= 20 && (proto == 6 || proto == 17 || proto == 132) && ihl + 4 <= len)
      key.words[8] = load_be32(ip + ihl);
    return true;
  }
  if (type == kEthIPv6 && 40 <= len) {
    uint8_t proto = ip[6];
    for (int i = 0; i < 4; ++i) {
      key.words[i] = load_be32(ip + 8 + 4 * i);
      key.words[4 + i] = load_be32(ip + 24 + 4 * i);
    }
    key.words[9] = (6u << 8) | proto;
    if ((proto == 6 || proto == 17 || proto == 132) && 44 <= len) key.words[8] = load_be32(ip + 40);
    return true;
  }
  return false;
}

// Fills `key` from the frame. Returns false (key still filled with what could
// be read: the Ethernet addresses and type) for non-IP or truncated frames.
// Fragments other than the first, and first fragments too, hash on addresses
// and protocol only, so all fragments of a datagram go the same way.
// Where an Ethernet frame's network header starts (off) and its EtherType
// (type): past 802.1Q and QinQ tags and a Network Service Header (RFC 8300;
// its IPv4 or IPv6 payload answers 0x0800 or 0x86DD, an Ethernet payload is
// read in turn), as Suricata's decoder reads them. False when the frame is
// shorter than an Ethernet header; a truncated tag or NSH stays the type.
SHOAL_HD bool eth_l3(const uint8_t* f, uint32_t len, uint32_t& off, uint16_t& type) {
  if (len < 14) return false;
  type = load_be16(f + 12);
  if (type == kEthIPv4 || type == kEthIPv6) {  // (most frames)
    off = 14;
    return true;
  }
  uint32_t base = 0;
  for (int depth = 0; depth < 4; ++depth) {
    if (len < base + 14) return depth > 0;
    uint32_t at = base + 12;
    type = load_be16(f + at);
    while ((type == kEthVLAN || type == kEthQinQ) && at + 6 <= len) {
      at += 4;
      type = load_be16(f + at);
    }
    off = at + 2;
    if (type != kEthNsh || off + 8 > len) return true;
    uint32_t nsh = uint32_t(load_be16(f + off) & 0x3f) * 4;  // its length, in 4-byte words
    uint8_t next = f[off + 3];
    if (nsh < 8 || off + nsh > len) return true;
    if (next == 1 || next == 2) {
      off += nsh;
      type = next == 1 ? 0x0800 : 0x86DD;
      return true;
    }
    if (next != 3) return true;
    base = off + nsh;  // an Ethernet frame inside
  }
  return true;
}

SHOAL_HD bool extract_flow_key(const uint8_t* f, uint32_t len, FlowKey& key) {
  for (int i = 0; i < 10; ++i) key.words[i] = 0;
  if (len < 14) {
    for (uint32_t i = 0; i < len && i < 40; ++i) key.words[i / 4] |= uint32_t(f[i]) << (8 * (i % 4));
    return false;
  }
  uint32_t off = 14;
  uint16_t type = 0;
  eth_l3(f, len, off, type);
  if (extract_ip_key(f + off, len - off, type, key)) return true;
  key.words[0] = load_be32(f);
  key.words[1] = load_be16(f + 4);
  key.words[4] = load_be32(f + 6);
  key.words[5] = load_be16(f + 10);
  key.words[9] = type;
  return false;
}

// Symmetric: both directions of a connection hash alike (the endpoints are
// put in order first), so a connection's packets stay on one worker and the
// flow layer sees both directions there (the kernel's PACKET_FANOUT_HASH is
// symmetric too).
SHOAL_HD uint32_t symmetric_key_hash(FlowKey k) {
  bool swap = false;
  for (int i = 0; i < 4; ++i)
    if (k.words[i] != k.words[4 + i]) {
      swap = k.words[4 + i] < k.words[i];
      break;
    }
  if (swap || (k.words[0] == k.words[4] && k.words[1] == k.words[5] && k.words[2] == k.words[6] &&
               k.words[3] == k.words[7] && (k.words[8] & 0xffff) < (k.words[8] >> 16))) {
    for (int i = 0; i < 4; ++i) {
      uint32_t t = k.words[i];
      k.words[i] = k.words[4 + i];
      k.words[4 + i] = t;
    }
    k.words[8] = (k.words[8] << 16) | (k.words[8] >> 16);
  }
  return hash_words(k.words, 10);
}

// A dispatch key for the IP packet at ip: its flow key, or for an ICMP
// error (destination unreachable, source quench, redirect, time exceeded,
// parameter problem; ICMPv6's 1-4 right after the fixed header) the key of
// the packet it quotes, so the error goes where its connection goes (the
// flow layer counts it there, as Suricata's flow hash does). hosts: on the
// addresses (and family) alone, so every packet between two hosts hashes
// alike: a datagram's fragments with its connection's unfragmented
// packets, a tunnel's inner connections with each other.
SHOAL_HD void dispatch_ip_key(const uint8_t* ip, uint32_t len, uint16_t type, bool hosts, FlowKey& k) {
  if (!extract_ip_key(ip, len, type, k)) return;
  const uint8_t proto = uint8_t(k.words[9]);
  uint32_t at = 0;
  if (type == kEthIPv4 && proto == 1) {
    uint32_t ihl = uint32_t(ip[0] & 0xf) * 4;
    uint8_t t = ihl >= 20 && ihl + 8 <= len ? ip[ihl] : 0;
    if ((load_be16(ip + 6) & 0x1fff) == 0 && (t == 3 || t == 4 || t == 5 || t == 11 || t == 12)) at = ihl + 8;
  } else if (type == kEthIPv6 && proto == 58 && 48 <= len && ip[40] >= 1 && ip[40] <= 4) {
    at = 48;
  }
  FlowKey q;
  for (int i = 0; i < 10; ++i) q.words[i] = 0;
  if (at && extract_ip_key(ip + at, len - at, type, q)) k = q;
  if (hosts) k.words[8] = 0, k.words[9] &= 0xff00u;
}

SHOAL_HD uint32_t flow_hash(const uint8_t* frame, uint32_t len, bool hosts = false) {
  FlowKey k;
  if (extract_flow_key(frame, len, k)) {  // (IP: again, as a dispatch key)
    uint32_t off = 14;
    uint16_t type = 0;
    eth_l3(frame, len, off, type);
    dispatch_ip_key(frame + off, len - off, type, hosts, k);
  }
  return symmetric_key_hash(k);
}

// The same for a packet that starts at its IP header (raw IP and the link
// types whose header is not kept), hashing as its Ethernet frame would.
SHOAL_HD uint32_t flow_hash_ip(const uint8_t* ip, uint32_t len, bool hosts = false) {
  FlowKey k;
  for (int i = 0; i < 10; ++i) k.words[i] = 0;
  if (len >= 1) dispatch_ip_key(ip, len, (ip[0] >> 4) == 6 ? kEthIPv6 : kEthIPv4, hosts, k);
  return symmetric_key_hash(k);
}

}  // namespace shoal::k

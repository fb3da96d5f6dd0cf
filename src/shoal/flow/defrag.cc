#include "shoal/flow/defrag.hh"

#include <algorithm>
#include <cstring>

#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::flow {

bool parse_defrag_policy(const std::string& n, DefragPolicy& out) {
  if (n == "first")
    out = DefragPolicy::First;
  else if (n == "last")
    out = DefragPolicy::Last;
  else if (n == "bsd")
    out = DefragPolicy::Bsd;
  else if (n == "linux")
    out = DefragPolicy::Linux;
  else
    return false;
  return true;
}

bool Defragmenter::Key::operator==(const Key& o) const {
  return family == o.family && proto == o.proto && id == o.id && std::memcmp(src, o.src, 16) == 0 &&
         std::memcmp(dst, o.dst, 16) == 0;
}

size_t Defragmenter::KeyHash::operator()(const Key& k) const {
  uint64_t h = 1469598103934665603ull ^ (uint64_t(k.family) << 40 | uint64_t(k.proto) << 32 | k.id);
  auto mix = [&](const uint8_t* p) {
    for (int i = 0; i < 16; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  mix(k.src);
  mix(k.dst);
  return size_t(h);
}

void Defragmenter::drop(std::unordered_map<Key, Datagram, KeyHash>::iterator it) {
  bytes_ -= it->second.bytes;
  c_.held_bytes.set(bytes_);
  ages_.erase(it->second.age);
  map_.erase(it);
}

void Defragmenter::expire(uint64_t now) {
  while (!ages_.empty()) {
    auto it = map_.find(ages_.front());
    if (it->second.first_ns + cfg_.timeout_ns > now) break;
    c_.timeouts.add();
    drop(it);
  }
}

Defragmenter::Result Defragmenter::add(const uint8_t* ip, uint32_t len, uint64_t now, std::vector<uint8_t>& out) {
  if (len < 1) return NotFragment;
  Key k{};
  uint32_t off, dlen, hlen;  // the fragment's offset, data length, and where its data starts
  bool more;
  const uint8_t* head;
  uint32_t head_len, next_at = 0;
  uint8_t next = 0;
  if ((ip[0] >> 4) == 4) {
    if (len < 20) return NotFragment;
    uint32_t ihl = uint32_t(ip[0] & 0xf) * 4, tot = k::load_be16(ip + 2);
    uint16_t f = k::load_be16(ip + 6);
    more = f & 0x2000;
    off = uint32_t(f & 0x1fff) * 8;
    if (!more && off == 0) return NotFragment;
    if (ihl < 20 || tot < ihl || tot > len) {
      c_.invalid.add();
      return Invalid;
    }
    k.family = 4, k.proto = ip[9], k.id = k::load_be16(ip + 4);
    std::memcpy(k.src, ip + 12, 4), std::memcpy(k.dst, ip + 16, 4);
    hlen = ihl, dlen = tot - ihl, head = ip, head_len = ihl;
  } else if ((ip[0] >> 4) == 6) {
    if (len < 40) return NotFragment;
    uint32_t tot = std::min<uint32_t>(40 + k::load_be16(ip + 4), len);
    // the extension headers before a Fragment header
    uint8_t nh = ip[6];
    uint32_t at = 40, nh_at = 6;
    while (nh == 0 || nh == 43 || nh == 60) {
      if (at + 8 > tot) return NotFragment;
      nh_at = at;
      nh = ip[at];
      at += (uint32_t(ip[at + 1]) + 1) * 8;
    }
    if (nh != 44) return NotFragment;
    if (at + 8 > tot) {
      c_.invalid.add();
      return Invalid;
    }
    uint16_t f = k::load_be16(ip + at + 2);
    more = f & 1;
    off = f & 0xfff8;
    if (!more && off == 0) return NotFragment;  // an atomic fragment stands alone (RFC 6946)
    k.family = 6, k.proto = 0, k.id = k::load_be32(ip + at + 4);
    std::memcpy(k.src, ip + 8, 16), std::memcpy(k.dst, ip + 24, 16);
    next = ip[at];
    next_at = nh_at;
    head = ip, head_len = at;
    hlen = at + 8, dlen = tot - hlen;
  } else {
    return NotFragment;
  }
  c_.fragments.add();
  uint32_t end = off + dlen;
  if (end + head_len > 65535 || (more && dlen % 8) || dlen == 0) {
    c_.invalid.add();
    return Invalid;
  }
  auto it = map_.find(k);
  // A datagram past its timeout is given up whether or not an expiry pass
  // came since (they come once a batch): this fragment starts a new one, so
  // where a batch ends does not decide what it joins.
  if (it != map_.end() && it->second.first_ns + cfg_.timeout_ns <= now) {
    c_.timeouts.add();
    drop(it);
    it = map_.end();
  }
  if (it == map_.end()) {
    it = map_.emplace(k, Datagram{}).first;
    it->second.first_ns = now;
    it->second.age = ages_.insert(ages_.end(), k);
  }
  Datagram& d = it->second;
  if (d.frags.size() >= cfg_.max_frags) {
    c_.too_many.add();
    drop(it);
    return Invalid;
  }
  for (const Frag& f : d.frags)
    if (off < f.end && f.off < end) {
      c_.overlaps.add();
      break;
    }
  if (!more) {
    if (d.have_last && d.total != end) {  // two different ends: the datagram cannot be
      c_.invalid.add();
      drop(it);
      return Invalid;
    }
    d.have_last = true, d.total = end;
  }
  if (off == 0 && !d.have_first) {
    d.have_first = true;
    d.head.assign(head, head + head_len);
    d.next = next, d.next_at = next_at;
  }
  d.frags.push_back({off, end, std::vector<uint8_t>(ip + hlen, ip + hlen + dlen)});
  d.bytes += dlen;
  bytes_ += dlen;
  // memory: the oldest datagrams go first (this one last)
  while (bytes_ > cfg_.memcap && ages_.size() > 1) {
    auto old = map_.find(ages_.front() == k ? *std::next(ages_.begin()) : ages_.front());
    c_.evicted.add();
    drop(old);
  }
  c_.held_bytes.set(bytes_);
  if (!whole(d)) return Held;
  build(k, d, out);
  c_.reassembled.add();
  drop(map_.find(k));
  return Done;
}

bool Defragmenter::whole(const Datagram& d) const {
  if (!d.have_first || !d.have_last) return false;
  std::vector<std::pair<uint32_t, uint32_t>> r;
  r.reserve(d.frags.size());
  for (const Frag& f : d.frags) r.emplace_back(f.off, std::min(f.end, d.total));
  std::sort(r.begin(), r.end());
  uint32_t covered = 0;
  for (auto [a, b] : r) {
    if (a > covered) return false;
    covered = std::max(covered, b);
  }
  return covered >= d.total;
}

void Defragmenter::build(const Key& k, Datagram& d, std::vector<uint8_t>& out) {
  // the payload, byte by byte in arrival order: a later fragment's byte
  // replaces an earlier one's when the policy says so
  std::vector<uint8_t> data(d.total);
  std::vector<int32_t> owner(d.total, -1);
  for (size_t i = 0; i < d.frags.size(); ++i) {
    const Frag& f = d.frags[i];
    for (uint32_t b = f.off; b < f.end && b < d.total; ++b) {
      int32_t o = owner[b];
      bool take = o < 0;
      if (!take) {
        const Frag& old = d.frags[size_t(o)];
        switch (cfg_.policy) {
          case DefragPolicy::First: take = false; break;
          case DefragPolicy::Last: take = true; break;
          case DefragPolicy::Bsd: take = f.off < old.off; break;
          case DefragPolicy::Linux: take = f.off <= old.off; break;
        }
      }
      if (take) data[b] = f.data[b - f.off], owner[b] = int32_t(i);
    }
  }
  out = d.head;
  out.insert(out.end(), data.begin(), data.end());
  if (k.family == 4) {
    uint8_t* h = out.data();
    uint32_t ihl = uint32_t(d.head.size());
    k::store_be16(h + 2, uint16_t(ihl + d.total));
    k::store_be16(h + 6, uint16_t(k::load_be16(h + 6) & 0x4000));  // DF stays; MF and the offset go
    h[10] = h[11] = 0;
    k::store_be16(h + 10, k::ip_checksum(h, ihl));
  } else {
    out[d.next_at] = d.next;  // the header before the Fragment header now names what it carried
    k::store_be16(out.data() + 4, uint16_t(out.size() - 40));
  }
}

}  // namespace shoal::flow

#include "shoal/flow/dns.hh"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "shoal/kernels/bytes.hh"

namespace shoal::flow {

namespace {

constexpr uint32_t kMaxName = 1025;  // bytes of a name kept (Suricata's bound)
constexpr int kMaxHops = 128;        // compression pointers followed per name

// The name at off (off moves past it, where it was written); false when it
// runs past the message, loops, or uses a reserved label type.
bool read_name(const uint8_t* d, uint32_t n, uint32_t& off, std::string& out, bool& truncated) {
  out.clear();
  uint32_t pos = off;
  bool jumped = false;
  int hops = 0;
  while (true) {
    if (pos >= n) return false;
    uint8_t len = d[pos];
    if ((len & 0xc0) == 0xc0) {
      if (pos + 1 >= n) return false;
      uint32_t ptr = uint32_t(len & 0x3f) << 8 | d[pos + 1];
      if (!jumped) off = pos + 2;
      // only backwards: each hop goes to an earlier byte, so no loop
      if (ptr >= pos || ++hops > kMaxHops) return false;
      jumped = true;
      pos = ptr;
      continue;
    }
    if (len & 0xc0) return false;  // extended label types (RFC 6891 deprecated them)
    if (len == 0) {
      if (!jumped) off = pos + 1;
      return true;
    }
    if (pos + 1 + len > n) return false;
    size_t add = len + (out.empty() ? 0 : 1);
    if (out.size() + add > kMaxName) {
      truncated = true;
    } else {
      if (!out.empty()) out += '.';
      out.append(reinterpret_cast<const char*>(d + pos + 1), len);
    }
    pos += 1 + len;
  }
}

// The rdata of r (len bytes at `at`): Suricata's text for the types it
// renders, and the names inside it.
void read_rdata(const uint8_t* d, uint32_t n, uint32_t at, uint16_t len, DnsRecord& r, bool& truncated) {
  const uint8_t* p = d + at;
  uint32_t end = at + len;
  auto name = [&](uint32_t off, std::string& out) {
    return off < end && read_name(d, end, off, out, truncated) ? off : 0;  // (within the rdata)
  };
  (void)n;
  switch (r.type) {
    case 1:
      if (len == 4) r.rdata = fmt::format("{}.{}.{}.{}", p[0], p[1], p[2], p[3]);
      break;
    case 28:
      if (len == 16)
        for (int i = 0; i < 8; ++i) r.rdata += fmt::format("{}{:04x}", i ? ":" : "", k::load_be16(p + 2 * i));
      break;
    case 2:
    case 5:
    case 12:
    case 39:
      if (!name(at, r.rdata)) r.rdata.clear();
      break;
    case 15:  // MX: the exchange's name
      if (len < 3 || !name(at + 2, r.rdata)) r.rdata.clear();
      break;
    case 33:  // SRV: the target
      if (len < 7 || !name(at + 6, r.rdata)) r.rdata.clear();
      break;
    case 6: {  // SOA: two names and five numbers
      uint32_t off = name(at, r.soa.mname);
      if (off) off = name(off, r.soa.rname);
      if (!off || off + 20 > end) break;
      r.has_soa = true;
      r.soa.serial = k::load_be32(d + off), r.soa.refresh = k::load_be32(d + off + 4),
      r.soa.retry = k::load_be32(d + off + 8);
      r.soa.expire = k::load_be32(d + off + 12), r.soa.minimum = k::load_be32(d + off + 16);
      r.rdata_names = {r.soa.mname, r.soa.rname};
      return;
    }
    case 16:  // TXT: the character strings, one after the other
      for (uint32_t q = 0; q < len;) {
        uint8_t k = p[q];
        if (q + 1 + k > len) break;
        r.rdata.append(reinterpret_cast<const char*>(p + q + 1), k);
        q += 1 + k;
      }
      return;
    default: return;
  }
  if (r.type != 1 && r.type != 28 && !r.rdata.empty()) r.rdata_names = {r.rdata};
}

// The header's counts fit a message of n bytes; a request asks something.
bool header_plausible(const uint8_t* d, uint32_t n) {
  uint16_t flags = k::load_be16(d + 2);
  uint16_t qd = k::load_be16(d + 4), an = k::load_be16(d + 6), ns = k::load_be16(d + 8), ar = k::load_be16(d + 10);
  if (!(flags & 0x8000) && qd == 0) return false;
  // every question takes 5 bytes at least, every record 11
  uint64_t least = uint64_t(qd) * 5 + (uint64_t(an) + ns + ar) * 11;
  return n >= 12 && least <= n - 12;
}

}  // namespace

bool dns_parse(const uint8_t* d, uint32_t n, DnsMessage& m) {
  if (n < 12) return false;
  m = DnsMessage{};
  m.id = k::load_be16(d);
  m.flags = k::load_be16(d + 2);
  uint16_t counts[4] = {k::load_be16(d + 4), k::load_be16(d + 6), k::load_be16(d + 8), k::load_be16(d + 10)};
  uint32_t off = 12;
  for (uint16_t i = 0; i < counts[0]; ++i) {
    DnsQuestion q;
    if (!read_name(d, n, off, q.name, m.name_truncated) || off + 4 > n) {
      m.malformed = true;
      m.bad_section = 0;
      return true;
    }
    q.type = k::load_be16(d + off);
    q.cls = k::load_be16(d + off + 2);
    off += 4;
    m.queries.push_back(std::move(q));
  }
  std::vector<DnsRecord>* sections[3] = {&m.answers, &m.authorities, &m.additionals};
  for (int s = 0; s < 3; ++s)
    for (uint16_t i = 0; i < counts[s + 1]; ++i) {
      DnsRecord r;
      if (!read_name(d, n, off, r.name, m.name_truncated) || off + 10 > n) {
        m.malformed = true;
        m.bad_section = int8_t(s + 1);
        return true;
      }
      r.type = k::load_be16(d + off);
      r.cls = k::load_be16(d + off + 2);
      r.ttl = k::load_be32(d + off + 4);
      uint16_t len = k::load_be16(d + off + 8);
      off += 10;
      if (off + len > n) {
        m.malformed = true;
        m.bad_section = int8_t(s + 1);
        return true;
      }
      read_rdata(d, n, off, len, r, m.name_truncated);
      off += len;
      sections[s]->push_back(std::move(r));
    }
  return true;
}

bool dns_tcp_probe(const uint8_t* d, uint32_t n) {
  if (n < 14) return false;
  uint32_t len = k::load_be16(d);
  if (len < 12) return false;
  // the header's counts against the message's length; the question is
  // checked when it is here
  return header_plausible(d + 2, len) && (n < 2 + len || dns_probe(d + 2, len));
}

bool dns_probe(const uint8_t* d, uint32_t n) {
  if (n < 12 || !header_plausible(d, n)) return false;
  if (k::load_be16(d + 4) == 0) return true;
  std::string name;
  bool trunc = false;
  uint32_t off = 12;
  return read_name(d, n, off, name, trunc) && off + 4 <= n;
}

void DnsTcpFramer::data(const uint8_t* d, uint32_t n, const Message& out) {
  if (lost_) return;
  buf_.insert(buf_.end(), d, d + n);
  size_t at = 0;
  while (buf_.size() - at >= 2) {
    uint32_t len = k::load_be16(buf_.data() + at);
    if (buf_.size() - at < 2 + len) break;
    out(buf_.data() + at + 2, len);
    at += 2 + len;
  }
  buf_.erase(buf_.begin(), buf_.begin() + std::ptrdiff_t(at));
}

}  // namespace shoal::flow

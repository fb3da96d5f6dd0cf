#include "shoal/flow/ssh.hh"

#include <algorithm>
#include <cstring>

#include "shoal/flow/digest.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal::flow {

namespace {

constexpr uint32_t kMaxLine = 255, kMaxPreamble = 8 * 1024, kMaxPacket = 256 * 1024;

}  // namespace

int ssh_detect(const uint8_t* d, uint32_t n) {
  static const char kPrefix[] = "SSH-";
  uint32_t k = std::min<uint32_t>(n, 4);
  if (std::memcmp(d, kPrefix, k) != 0) return 0;
  return n >= 4 ? 1 : -1;
}

bool SshConn::data(uint8_t dir, const uint8_t* d, uint32_t n) {
  dir &= 1;
  SshSide& s = side_[dir];
  std::string& b = buf_[dir];
  if (state_[dir] == kDone) return false;
  b.append(reinterpret_cast<const char*>(d), n);
  size_t off = 0;
  while (state_[dir] == kLine) {
    size_t eol = b.find('\n', off);
    if (eol == std::string::npos) {
      if (b.size() - off > kMaxLine) return state_[dir] = kDone, b.clear(), false;
      break;
    }
    std::string line = b.substr(off, eol - off);
    off = eol + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.compare(0, 4, "SSH-") != 0) {  // a line before the identification (RFC 4253 4.2)
      skipped_[dir] += uint32_t(line.size() + 1);
      if (skipped_[dir] > kMaxPreamble) return state_[dir] = kDone, b.clear(), false;
      continue;
    }
    if (line.size() > kMaxLine) return state_[dir] = kDone, b.clear(), false;
    // SSH-protoversion-softwareversion[ SP comments]
    std::string rest = line.substr(4);
    size_t dash = rest.find('-');
    if (dash == std::string::npos) return state_[dir] = kDone, b.clear(), false;
    s.proto_version = rest.substr(0, dash);
    std::string sw = rest.substr(dash + 1);
    size_t sp = sw.find(' ');
    if (sp != std::string::npos) s.comments = sw.substr(sp + 1), sw.resize(sp);
    s.software_version = sw;
    s.banner = true;
    state_[dir] = kPackets;
    on_(dir, kBanner);
  }
  // binary packets: length, padding length, payload, padding (the MAC comes
  // only once keys are in use)
  while (state_[dir] == kPackets && b.size() - off >= 5) {
    uint32_t len = k::load_be32(reinterpret_cast<const uint8_t*>(b.data()) + off);
    if (len < 1 || len > kMaxPacket) return state_[dir] = kDone, b.clear(), false;
    if (b.size() - off < 4 + size_t(len)) break;
    const auto* p = reinterpret_cast<const uint8_t*>(b.data()) + off + 4;
    uint8_t pad = p[0];
    if (uint32_t(pad) + 1 > len) return state_[dir] = kDone, b.clear(), false;
    bool more = packet(dir, p + 1, len - 1 - pad);
    off += 4 + size_t(len);
    if (!more) state_[dir] = kDone;
  }
  b.erase(0, std::min(off, b.size()));
  if (state_[dir] == kDone) b.clear();
  return true;
}

// One packet's payload: KEXINIT (20) gives the fingerprint; NEWKEYS (21)
// ends what is in the clear. False when the rest is not to be read.
bool SshConn::packet(uint8_t dir, const uint8_t* p, uint32_t n) {
  if (n == 0) return true;
  SshSide& s = side_[dir];
  if (p[0] == 21) {
    s.newkeys = true;
    on_(dir, kNewkeys);
    return false;
  }
  if (p[0] != 20 || s.kexinit || n < 17) return true;
  // the name-lists after the 16-byte cookie: kex, host key, ciphers c2s,
  // s2c, MACs c2s, s2c, compression c2s, s2c, languages c2s, s2c
  std::string lists[10];
  uint32_t at = 17;
  for (std::string& l : lists) {
    if (at + 4 > n) return true;  // (cut short: no fingerprint)
    uint32_t len = k::load_be32(p + at);
    at += 4;
    if (len > n - at) return true;
    l.assign(reinterpret_cast<const char*>(p + at), len);
    at += len;
  }
  // the client's: its client-to-server lists; the server's: server-to-client
  int o = dir == 0 ? 0 : 1;
  s.hassh_string = lists[0] + ";" + lists[2 + o] + ";" + lists[4 + o] + ";" + lists[6 + o];
  s.hassh = hex_digest(EVP_md5(), s.hassh_string);
  s.kexinit = true;
  on_(dir, kKexinit);
  return true;
}

}  // namespace shoal::flow

// libFuzzer harness for IPsec: the input's first line is an ip-xfrm command
// for the SA database (any text: the parser must refuse what it does not
// take, with a column inside the line); the rest is an ESP packet from its
// ESP header, opened with a fixed SA of each suite. Nothing may crash or
// read out of bounds; a packet that opens is sealed again and must open to
// the same text; the replay window is driven with the packet's sequence
// number and checked against itself.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "shoal/crypto/esp.hh"
#include "shoal/crypto/sadb.hh"
#include "shoal/kernels/bytes.hh"

namespace {
using namespace shoal::crypto;

std::vector<SAParams> suites() {
  std::vector<SAParams> out;
  auto add = [&](Cipher c, size_t klen, Integ i, uint8_t icv, bool esn) {
    SAParams p;
    p.cipher = c;
    p.enc_key = std::string(klen, '\x11');
    p.salt = "\x01\x02\x03\x04";
    p.integ = i;
    p.auth_key = std::string(20, '\x22');
    p.icv_len = icv;
    p.esn = esn;
    out.push_back(p);
  };
  add(Cipher::AesGcm, 16, Integ::None, 16, false);
  add(Cipher::AesGcm, 32, Integ::None, 8, true);
  add(Cipher::AesCtr, 16, Integ::HmacSha1, 12, false);
  add(Cipher::AesCbc, 32, Integ::HmacSha256, 16, true);
  add(Cipher::Null, 0, Integ::HmacSha1, 12, false);
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<SAParams> kSuites = suites();
  std::string in(reinterpret_cast<const char*>(data), size);
  size_t nl = in.find('\n');
  std::string line = in.substr(0, nl);
  Database db;
  std::string err;
  size_t col = 0;
  if (!db.apply(line, err, col)) {
    if (err.empty() || col < 1 || col > line.size() + 2) __builtin_trap();
  } else {
    for (const auto& sa : db.sas()) (void)sa->params.suite();
    (void)db.list_sas();
    (void)db.list_policies();
  }
  if (nl == std::string::npos) return 0;
  std::vector<uint8_t> pkt(in.begin() + long(nl) + 1, in.end());
  if (pkt.size() < 8) return 0;
  for (const SAParams& p : kSuites) {
    EspCipher c(p);
    uint32_t over = 8 + c.iv_len() + c.icv_len();
    if (pkt.size() < over) continue;
    uint32_t text = uint32_t(pkt.size()) - over;
    if (text % c.align()) continue;
    ReplayWindow w(64);
    uint64_t seq = w.infer(shoal::k::load_be32(pkt.data() + 4), p.esn);
    if (!w.check(seq, p.esn)) continue;
    std::vector<uint8_t> b = pkt;
    if (!c.open(b.data(), text, seq)) continue;
    w.update(seq);
    if (w.check(seq, p.esn)) __builtin_trap();  // accepted twice
    // sealed again (a fresh IV), it opens to the same text
    std::vector<uint8_t> plain(b.begin() + 8 + c.iv_len(), b.begin() + 8 + c.iv_len() + text);
    std::vector<uint8_t> again = b;
    c.seal(again.data(), text, seq + 1);
    if (!c.open(again.data(), text, seq + 1)) __builtin_trap();
    if (!std::equal(plain.begin(), plain.end(), again.begin() + 8 + c.iv_len())) __builtin_trap();
  }
  return 0;
}

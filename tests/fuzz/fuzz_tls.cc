// libFuzzer: arbitrary bytes as the two directions of a TLS connection, cut
// into chunks the input chooses, with gaps, through flow::TlsConn (records,
// handshake messages, certificates through OpenSSL, JA3/JA4). No crash, no
// leak (ASan), and the bounds hold.
#include <cstdint>
#include <cstdlib>

#include "shoal/flow/tls.hh"

using namespace shoal::flow;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* p, size_t n) {
  TlsCounters counters;
  TlsConn conn(counters, [](TlsInfo& t, uint8_t) {
    if (t.certs.size() > 16 || t.client_certs.size() > 16) std::abort();
  });
  for (size_t i = 0; i < n;) {
    // a chunk header: direction (bit 7), gap (bit 6), length (bits 0-5, x16)
    uint8_t h = p[i++];
    uint8_t dir = h >> 7;
    if (h & 0x40) {
      conn.gap(dir);
      continue;
    }
    size_t len = std::min<size_t>(size_t(h & 0x3f) * 16 + 1, n - i);
    (void)tls_detect(p + i, uint32_t(len));
    conn.data(dir, p + i, uint32_t(len));
    i += len;
  }
  return 0;
}

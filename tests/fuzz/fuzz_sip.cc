// libFuzzer: arbitrary bytes as a SIP datagram (flow::sip_parse, the probe)
// and as a SIP-over-TCP stream cut into chunks (flow::SipTcpFramer). No
// crash, no leak (ASan), no message or body past its bound, no loop.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "shoal/flow/sip.hh"

using namespace shoal::flow;

namespace {
void check(const SipMessage& m, uint32_t n) {
  // everything comes from the message's bytes
  if (m.first_line.size() > n || m.body.size() > n || m.body.size() > kSipMaxBody) std::abort();
  if (m.request ? (m.method.empty() || m.uri.empty()) : m.code.size() != 3) std::abort();
  size_t total = 0;
  for (const auto& [k, v] : m.headers) total += k.size() + v.size();
  if (total > 2 * size_t(n)) std::abort();  // (folding adds a space per folded line)
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* p, size_t n) {
  (void)sip_probe(p, uint32_t(n));
  SipMessage m;
  if (sip_parse(p, uint32_t(n), m, true) > 0) check(m, uint32_t(n));
  SipTcpFramer f;
  for (size_t i = 0; i < n;) {
    size_t len = std::min<size_t>(size_t(p[i] % 61) + 1, n - i);
    if (!f.data(p + i, uint32_t(len), [&](const SipMessage& x) { check(x, uint32_t(n)); })) break;
    i += len;
  }
  return 0;
}

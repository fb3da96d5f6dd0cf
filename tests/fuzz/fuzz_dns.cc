// libFuzzer: arbitrary bytes as a DNS datagram (flow::dns_parse, the probe)
// and as a DNS-over-TCP stream cut into chunks (flow::DnsTcpFramer). No
// crash, no leak (ASan), no name past its bound, no loop.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "shoal/flow/dns.hh"

using namespace shoal::flow;

namespace {
void check(const DnsMessage& m, uint32_t n) {
  // every question and record comes from bytes of the message
  if (m.queries.size() > n / 5 + 1 || m.answers.size() + m.authorities.size() + m.additionals.size() > n / 11 + 1)
    std::abort();
  for (const auto& q : m.queries)
    if (q.name.size() > 1025) std::abort();
  for (const auto* sec : {&m.answers, &m.authorities, &m.additionals})
    for (const auto& r : *sec)
      if (r.name.size() > 1025 || r.rdata.size() > 65535) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* p, size_t n) {
  DnsMessage m;
  (void)dns_probe(p, uint32_t(n));
  if (dns_parse(p, uint32_t(n), m)) check(m, uint32_t(n));
  (void)dns_tcp_probe(p, uint32_t(n));
  DnsTcpFramer f;
  for (size_t i = 0; i < n;) {
    size_t len = std::min<size_t>(size_t(p[i] % 61) + 1, n - i);
    f.data(p + i, uint32_t(len), [&](const uint8_t* d, uint32_t k) {
      DnsMessage x;
      if (dns_parse(d, k, x)) check(x, k);
    });
    i += len;
  }
  return 0;
}

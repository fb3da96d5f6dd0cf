// libFuzzer: arbitrary bytes as the two directions of an SSH connection
// (flow::SshConn: identification lines, binary packets, KEXINIT name-lists),
// cut into chunks. No crash, no leak (ASan), nothing past its bound.
#include <cstdint>
#include <cstdlib>

#include "shoal/flow/ssh.hh"

using namespace shoal::flow;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* p, size_t n) {
  (void)ssh_detect(p, uint32_t(n));
  SshConn c([&](uint8_t dir, uint8_t) {
    const SshSide& s = c.side(dir);
    if (s.proto_version.size() + s.software_version.size() > 255 || (s.kexinit && s.hassh.size() != 32)) std::abort();
  });
  for (size_t i = 0; i < n;) {
    size_t len = std::min<size_t>(size_t(p[i] % 61) + 1, n - i);
    c.data(uint8_t(p[i] >> 7), p + i, uint32_t(len));
    i += len;
  }
  return 0;
}

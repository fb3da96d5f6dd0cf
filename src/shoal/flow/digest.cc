#include "shoal/flow/digest.hh"

#include <fmt/format.h>

namespace shoal::flow {

std::string hex_digest(const EVP_MD* md, const std::string& s, size_t chars) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), out, &len, md, nullptr);
  std::string h;
  for (unsigned int i = 0; i < len; ++i) h += fmt::format("{:02x}", out[i]);
  return chars ? h.substr(0, chars) : h;
}

}  // namespace shoal::flow

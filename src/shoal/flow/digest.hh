// A message digest as lower-case hex (JA3, JA4, HASSH and certificate
// fingerprints), by OpenSSL.
#pragma once
#include <openssl/evp.h>

#include <cstddef>
#include <string>

namespace shoal::flow {

// The digest of s by md (EVP_md5(), EVP_sha256(), ...), its first `chars`
// hex digits (0: all).
std::string hex_digest(const EVP_MD* md, const std::string& s, size_t chars = 0);

}  // namespace shoal::flow

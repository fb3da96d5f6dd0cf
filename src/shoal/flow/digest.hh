// Message digests as lower-case hex, by OpenSSL: of a string (JA3, JA4,
// HASSH and certificate fingerprints), and of a file as its bytes come
// (Suricata's fileinfo md5, sha1 and sha256; the filemd5, filesha1 and
// filesha256 rule keywords).
#pragma once
#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace shoal::flow {

// The digest of s by md (EVP_md5(), EVP_sha256(), ...), its first `chars`
// hex digits (0: all).
std::string hex_digest(const EVP_MD* md, const std::string& s, size_t chars = 0);

// Which of a file's digests are computed (bits; the same as ids::FileHashAlgo).
enum FileDigest : uint8_t { kDigestMd5 = 1, kDigestSha1 = 2, kDigestSha256 = 4, kDigestAll = 7 };

// A file's digests, computed as its bytes come: start() with the ones
// wanted, update() with each piece, finish() when the file is whole; then
// md5(), sha1(), sha256() hold the hex (empty: not computed). A file cut
// short is never finished: its digests stay empty, as Suricata logs none.
class FileHasher {
 public:
  void start(uint8_t which);
  void update(const void* d, size_t n);
  void finish();
  bool running() const { return ctx_[0] || ctx_[1] || ctx_[2]; }
  const std::string& md5() const { return hex_[0]; }
  const std::string& sha1() const { return hex_[1]; }
  const std::string& sha256() const { return hex_[2]; }

 private:
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx_[3];
  std::string hex_[3];
};

}  // namespace shoal::flow

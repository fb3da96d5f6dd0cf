#include "shoal/flow/digest.hh"

namespace shoal::flow {

namespace {

std::string hex(const unsigned char* d, unsigned int n) {
  static const char kHex[] = "0123456789abcdef";
  std::string h(size_t(n) * 2, '0');
  for (unsigned int i = 0; i < n; ++i) h[2 * i] = kHex[d[i] >> 4], h[2 * i + 1] = kHex[d[i] & 15];
  return h;
}

const EVP_MD* file_md(int i) { return i == 0 ? EVP_md5() : i == 1 ? EVP_sha1() : EVP_sha256(); }

}  // namespace

std::string hex_digest(const EVP_MD* md, const std::string& s, size_t chars) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), out, &len, md, nullptr);
  std::string h = hex(out, len);
  return chars ? h.substr(0, chars) : h;
}

void FileHasher::start(uint8_t which) {
  for (int i = 0; i < 3; ++i) {
    hex_[i].clear();
    ctx_[i].reset();
    if (!(which >> i & 1)) continue;
    ctx_[i].reset(EVP_MD_CTX_new());
    if (ctx_[i] && EVP_DigestInit_ex(ctx_[i].get(), file_md(i), nullptr) != 1) ctx_[i].reset();
  }
}

void FileHasher::update(const void* d, size_t n) {
  if (!n) return;
  for (auto& c : ctx_)
    if (c && EVP_DigestUpdate(c.get(), d, n) != 1) c.reset();  // (a digest that failed is left out)
}

void FileHasher::finish() {
  for (int i = 0; i < 3; ++i) {
    if (!ctx_[i]) continue;
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx_[i].get(), out, &len) == 1) hex_[i] = hex(out, len);
    ctx_[i].reset();
  }
}

}  // namespace shoal::flow

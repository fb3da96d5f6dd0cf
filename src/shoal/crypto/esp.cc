#include "shoal/crypto/esp.hh"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>
#include <stdexcept>

#include "shoal/kernels/bytes.hh"

namespace shoal::crypto {

struct EspCipher::Evp {
  EVP_CIPHER_CTX* enc = nullptr;    // keyed for encryption
  EVP_CIPHER_CTX* dec = nullptr;    // keyed for decryption
  EVP_CIPHER_CTX* ivgen = nullptr;  // CBC: AES-ECB under the SA's key, for IVs
  EVP_MD_CTX* inner = nullptr;      // HMAC: the hash state after key ^ ipad
  EVP_MD_CTX* outer = nullptr;      // ... and after key ^ opad
  EVP_MD_CTX* work = nullptr;
  ~Evp() {
    EVP_CIPHER_CTX_free(enc);
    EVP_CIPHER_CTX_free(dec);
    EVP_CIPHER_CTX_free(ivgen);
    EVP_MD_CTX_free(inner);
    EVP_MD_CTX_free(outer);
    EVP_MD_CTX_free(work);
  }
};

namespace {
[[noreturn]] void ossl_fail(const char* what) { throw std::runtime_error(fmt::format("OpenSSL: {} failed", what)); }
const EVP_CIPHER* aes(Cipher c, size_t key_len) {
  switch (c) {
    case Cipher::AesGcm:
      return key_len == 16 ? EVP_aes_128_gcm() : key_len == 24 ? EVP_aes_192_gcm() : EVP_aes_256_gcm();
    case Cipher::AesCtr:
      return key_len == 16 ? EVP_aes_128_ctr() : key_len == 24 ? EVP_aes_192_ctr() : EVP_aes_256_ctr();
    case Cipher::AesCbc:
      return key_len == 16 ? EVP_aes_128_cbc() : key_len == 24 ? EVP_aes_192_cbc() : EVP_aes_256_cbc();
    case Cipher::Null: break;
  }
  return nullptr;
}
}  // namespace

EspCipher::EspCipher(const SAParams& p) : p_(p), evp_(std::make_unique<Evp>()) {
  const auto* key = reinterpret_cast<const uint8_t*>(p_.enc_key.data());
  if (p_.cipher != Cipher::Null) {
    const EVP_CIPHER* c = aes(p_.cipher, p_.enc_key.size());
    evp_->enc = EVP_CIPHER_CTX_new();
    evp_->dec = EVP_CIPHER_CTX_new();
    if (!evp_->enc || !evp_->dec) ossl_fail("EVP_CIPHER_CTX_new");
    if (EVP_EncryptInit_ex(evp_->enc, c, nullptr, key, nullptr) != 1 ||
        EVP_DecryptInit_ex(evp_->dec, c, nullptr, key, nullptr) != 1)
      ossl_fail("setting the SA's key");
    EVP_CIPHER_CTX_set_padding(evp_->enc, 0);  // ESP pads by itself
    EVP_CIPHER_CTX_set_padding(evp_->dec, 0);
  }
  switch (p_.cipher) {
    case Cipher::Null: iv_len_ = 0; break;
    case Cipher::AesGcm:
    case Cipher::AesCtr: iv_len_ = 8; break;
    case Cipher::AesCbc:
      iv_len_ = 16;
      align_ = 16;
      evp_->ivgen = EVP_CIPHER_CTX_new();
      if (!evp_->ivgen || EVP_EncryptInit_ex(evp_->ivgen,
                                             p_.enc_key.size() == 16   ? EVP_aes_128_ecb()
                                             : p_.enc_key.size() == 24 ? EVP_aes_192_ecb()
                                                                       : EVP_aes_256_ecb(),
                                             nullptr, key, nullptr) != 1)
        ossl_fail("the CBC IV generator");
      EVP_CIPHER_CTX_set_padding(evp_->ivgen, 0);
      break;
  }
  icv_len_ = p_.icv_len;
  if (p_.integ != Integ::None) {
    const EVP_MD* md = p_.integ == Integ::HmacSha1 ? EVP_sha1() : EVP_sha256();
    size_t block = size_t(EVP_MD_get_block_size(md));
    std::string k = p_.auth_key;
    if (k.size() > block) {  // RFC 2104: a long key is hashed first
      uint8_t h[EVP_MAX_MD_SIZE];
      unsigned hl = 0;
      if (EVP_Digest(k.data(), k.size(), h, &hl, md, nullptr) != 1) ossl_fail("hashing the auth key");
      k.assign(reinterpret_cast<char*>(h), hl);
    }
    std::string ipad(block, '\x36'), opad(block, '\x5c');
    for (size_t i = 0; i < k.size(); ++i) ipad[i] = char(ipad[i] ^ k[i]), opad[i] = char(opad[i] ^ k[i]);
    evp_->inner = EVP_MD_CTX_new();
    evp_->outer = EVP_MD_CTX_new();
    evp_->work = EVP_MD_CTX_new();
    if (!evp_->inner || !evp_->outer || !evp_->work || EVP_DigestInit_ex(evp_->inner, md, nullptr) != 1 ||
        EVP_DigestUpdate(evp_->inner, ipad.data(), block) != 1 || EVP_DigestInit_ex(evp_->outer, md, nullptr) != 1 ||
        EVP_DigestUpdate(evp_->outer, opad.data(), block) != 1)
      ossl_fail("the HMAC key");
    OPENSSL_cleanse(ipad.data(), ipad.size());
    OPENSSL_cleanse(opad.data(), opad.size());
    OPENSSL_cleanse(k.data(), k.size());
  }
}

EspCipher::~EspCipher() = default;

// IVs never repeat under one key: GCM and CTR use the 64-bit sequence
// number (RFC 4106 §3.1 allows a counter); CBC needs an unpredictable IV,
// so it is the sequence number encrypted under the SA's key (NIST SP
// 800-38A, Appendix C).
void EspCipher::iv_for(uint64_t seq, uint8_t* iv) {
  if (p_.cipher == Cipher::AesCbc) {
    uint8_t block[16] = {};
    k::store_be64(block, seq);
    block[8] = 'E', block[9] = 'S', block[10] = 'P';
    int n = 0;
    if (EVP_EncryptUpdate(evp_->ivgen, iv, &n, block, 16) != 1 || n != 16) ossl_fail("the CBC IV");
  } else if (iv_len_ == 8) {
    k::store_be64(iv, seq);
  }
}

void EspCipher::hmac(const uint8_t* data, size_t len, const uint8_t* seq_hi, uint8_t* out) {
  uint8_t h[EVP_MAX_MD_SIZE];
  unsigned hl = 0;
  EVP_MD_CTX* w = evp_->work;
  if (EVP_MD_CTX_copy_ex(w, evp_->inner) != 1 || EVP_DigestUpdate(w, data, len) != 1 ||
      (seq_hi && EVP_DigestUpdate(w, seq_hi, 4) != 1) || EVP_DigestFinal_ex(w, h, &hl) != 1 ||
      EVP_MD_CTX_copy_ex(w, evp_->outer) != 1 || EVP_DigestUpdate(w, h, hl) != 1 || EVP_DigestFinal_ex(w, h, &hl) != 1)
    ossl_fail("HMAC");
  std::memcpy(out, h, icv_len_);
}

bool EspCipher::seal(uint8_t* esp, uint32_t text_len, uint64_t seq) {
  uint8_t* iv = esp + 8;
  uint8_t* text = iv + iv_len_;
  uint8_t* icv = text + text_len;
  uint8_t seq_hi[4];
  k::store_be32(seq_hi, uint32_t(seq >> 32));
  iv_for(seq, iv);
  int n = 0;
  switch (p_.cipher) {
    case Cipher::Null: break;
    case Cipher::AesGcm: {
      uint8_t nonce[12], aad[12];
      std::memcpy(nonce, p_.salt.data(), 4);
      std::memcpy(nonce + 4, iv, 8);
      // AAD: SPI, then the sequence number, 64 bits with ESN (RFC 4106 §5)
      std::memcpy(aad, esp, 4);
      uint32_t aad_len = 8;
      if (p_.esn) {
        std::memcpy(aad + 4, seq_hi, 4);
        std::memcpy(aad + 8, esp + 4, 4);
        aad_len = 12;
      } else {
        std::memcpy(aad + 4, esp + 4, 4);
      }
      EVP_CIPHER_CTX* c = evp_->enc;
      if (EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, nonce) != 1 ||
          EVP_EncryptUpdate(c, nullptr, &n, aad, int(aad_len)) != 1 ||
          EVP_EncryptUpdate(c, text, &n, text, int(text_len)) != 1 || EVP_EncryptFinal_ex(c, text + n, &n) != 1 ||
          EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, int(icv_len_), icv) != 1)
        ossl_fail("AES-GCM");
      return true;
    }
    case Cipher::AesCtr:
    case Cipher::AesCbc: {
      uint8_t ctr[16];
      const uint8_t* ivp = iv;
      if (p_.cipher == Cipher::AesCtr) {  // RFC 3686 §4: nonce, IV, a block counter from 1
        std::memcpy(ctr, p_.salt.data(), 4);
        std::memcpy(ctr + 4, iv, 8);
        k::store_be32(ctr + 12, 1);
        ivp = ctr;
      }
      EVP_CIPHER_CTX* c = evp_->enc;
      if (EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, ivp) != 1 ||
          EVP_EncryptUpdate(c, text, &n, text, int(text_len)) != 1)
        ossl_fail("AES");
      break;
    }
  }
  // the ICV covers the ESP header, the IV and the ciphertext, then the
  // sequence number's high half with ESN (RFC 4303 §2.2.1)
  if (p_.integ != Integ::None) hmac(esp, 8 + iv_len_ + text_len, p_.esn ? seq_hi : nullptr, icv);
  return true;
}

bool EspCipher::open(uint8_t* esp, uint32_t text_len, uint64_t seq) {
  uint8_t* iv = esp + 8;
  uint8_t* text = iv + iv_len_;
  uint8_t* icv = text + text_len;
  uint8_t seq_hi[4];
  k::store_be32(seq_hi, uint32_t(seq >> 32));
  int n = 0;
  if (p_.cipher == Cipher::AesGcm) {
    uint8_t nonce[12], aad[12];
    std::memcpy(nonce, p_.salt.data(), 4);
    std::memcpy(nonce + 4, iv, 8);
    std::memcpy(aad, esp, 4);
    uint32_t aad_len = 8;
    if (p_.esn) {
      std::memcpy(aad + 4, seq_hi, 4);
      std::memcpy(aad + 8, esp + 4, 4);
      aad_len = 12;
    } else {
      std::memcpy(aad + 4, esp + 4, 4);
    }
    EVP_CIPHER_CTX* c = evp_->dec;
    if (EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, nonce) != 1 ||
        EVP_DecryptUpdate(c, nullptr, &n, aad, int(aad_len)) != 1 ||
        EVP_DecryptUpdate(c, text, &n, text, int(text_len)) != 1 ||
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, int(icv_len_), icv) != 1)
      ossl_fail("AES-GCM");
    return EVP_DecryptFinal_ex(c, text + n, &n) == 1;
  }
  if (p_.integ != Integ::None) {
    uint8_t want[EVP_MAX_MD_SIZE];
    hmac(esp, 8 + iv_len_ + text_len, p_.esn ? seq_hi : nullptr, want);
    if (CRYPTO_memcmp(want, icv, icv_len_) != 0) return false;
  }
  if (p_.cipher == Cipher::Null) return true;
  uint8_t ctr[16];
  const uint8_t* ivp = iv;
  if (p_.cipher == Cipher::AesCtr) {
    std::memcpy(ctr, p_.salt.data(), 4);
    std::memcpy(ctr + 4, iv, 8);
    k::store_be32(ctr + 12, 1);
    ivp = ctr;
  }
  EVP_CIPHER_CTX* c = evp_->dec;
  if (EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, ivp) != 1 ||
      EVP_DecryptUpdate(c, text, &n, text, int(text_len)) != 1)
    ossl_fail("AES");
  return true;
}

}  // namespace shoal::crypto

#include "shoal/crypto/esp.hh"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include "shoal/kernels/bytes.hh"

#ifdef SHOAL_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif
#endif

namespace shoal::crypto {

bool parse_engine(std::string_view s, Engine& e) {
  if (s == "auto")
    e = Engine::Auto;
  else if (s == "ipsec-mb")
    e = Engine::IpsecMb;
  else if (s == "openssl")
    e = Engine::OpenSsl;
  else
    return false;
  return true;
}

// auto: ipsec-mb for AES-GCM (5-7x EVP per packet) and, where the caller
// batches through EspQueue, for CTR and CBC with HMAC too (one job at a
// time leaves ipsec-mb's multi-buffer lanes empty: measured slower than
// EVP, so auto keeps EVP for them there).
Engine engine_for(const SAParams& p, Engine e, bool batched) {
  if (e == Engine::IpsecMb) return Engine::IpsecMb;
  return e == Engine::Auto && have_ipsec_mb() && (batched || p.cipher == Cipher::AesGcm) ? Engine::IpsecMb
                                                                                         : Engine::OpenSsl;
}

#ifdef SHOAL_HAVE_IPSEC_MB
namespace {
// One multi-buffer manager per thread, made when first needed.
IMB_MGR* imb() {
  thread_local struct Holder {
    IMB_MGR* m = nullptr;
    ~Holder() {
      if (m) free_mb_mgr(m);
    }
  } h;
  if (!h.m) {
    h.m = alloc_mb_mgr(0);
    if (!h.m) throw std::runtime_error("intel-ipsec-mb: alloc_mb_mgr failed");
    IMB_ARCH arch;
    init_mb_mgr_auto(h.m, &arch);
    if (imb_get_errno(h.m) != 0) throw std::runtime_error("intel-ipsec-mb: no usable implementation on this CPU");
  }
  return h.m;
}
}  // namespace

bool have_ipsec_mb() {
  static const bool ok = [] {
    IMB_MGR* m = alloc_mb_mgr(0);
    if (!m) return false;
    IMB_ARCH arch = IMB_ARCH_NONE;
    init_mb_mgr_auto(m, &arch);
    bool usable = imb_get_errno(m) == 0 && arch >= IMB_ARCH_SSE;  // AES-NI (IMB_ARCH_NOAESNI is slow)
    free_mb_mgr(m);
    return usable;
  }();
  return ok;
}

namespace {
#ifdef __x86_64__
// One AES block under an expanded key (`rounds` 10, 12 or 14) with AES-NI:
// CBC's IV per packet, where an EVP call costs more than the block.
__attribute__((target("aes,sse2"))) void aesni_block(const uint8_t* rk, int rounds, const uint8_t* in, uint8_t* out) {
  auto key = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(rk + 16 * r)); };
  __m128i b = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)), key(0));
  for (int r = 1; r < rounds; ++r) b = _mm_aesenc_si128(b, key(r));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_aesenclast_si128(b, key(rounds)));
}
#endif
}  // namespace

struct EspCipher::Mb {
  alignas(64) gcm_key_data gcm;
  alignas(16) uint8_t enc[16 * 15];
  alignas(16) uint8_t dec[16 * 15];
  alignas(16) uint8_t ipad[32];
  alignas(16) uint8_t opad[32];
  uint32_t digest = 0;  // the full HMAC length
};
#else
bool have_ipsec_mb() { return false; }
struct EspCipher::Mb {};
#endif

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

EspCipher::EspCipher(const SAParams& p, Engine e, bool batched) : p_(p), evp_(std::make_unique<Evp>()) {
  const auto* key = reinterpret_cast<const uint8_t*>(p_.enc_key.data());
  if (e == Engine::IpsecMb && !have_ipsec_mb())
    throw std::runtime_error("intel-ipsec-mb is not built in or not usable on this CPU");
  engine_ = engine_for(p_, e, batched);
  if (engine_ == Engine::OpenSsl && p_.cipher != Cipher::Null) {
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
#ifdef SHOAL_HAVE_IPSEC_MB
  if (engine_ == Engine::IpsecMb) {
    mb_ = std::make_unique<Mb>();
    IMB_MGR* m = imb();
    size_t kl = p_.enc_key.size();
    if (p_.cipher == Cipher::AesGcm) {
      if (kl == 16) IMB_AES128_GCM_PRE(m, key, &mb_->gcm);
      if (kl == 24) IMB_AES192_GCM_PRE(m, key, &mb_->gcm);
      if (kl == 32) IMB_AES256_GCM_PRE(m, key, &mb_->gcm);
    } else if (p_.cipher != Cipher::Null) {
      if (kl == 16) IMB_AES_KEYEXP_128(m, key, mb_->enc, mb_->dec);
      if (kl == 24) IMB_AES_KEYEXP_192(m, key, mb_->enc, mb_->dec);
      if (kl == 32) IMB_AES_KEYEXP_256(m, key, mb_->enc, mb_->dec);
    }
    if (p_.integ != Integ::None) {
      std::string k = p_.auth_key;
      const EVP_MD* md = p_.integ == Integ::HmacSha1 ? EVP_sha1() : EVP_sha256();
      if (k.size() > 64) {  // RFC 2104: a long key is hashed first
        uint8_t h[EVP_MAX_MD_SIZE];
        unsigned hl = 0;
        if (EVP_Digest(k.data(), k.size(), h, &hl, md, nullptr) != 1) ossl_fail("hashing the auth key");
        k.assign(reinterpret_cast<char*>(h), hl);
      }
      alignas(16) uint8_t ib[64], ob[64];
      std::memset(ib, 0x36, 64);
      std::memset(ob, 0x5c, 64);
      for (size_t i = 0; i < k.size(); ++i) ib[i] ^= uint8_t(k[i]), ob[i] ^= uint8_t(k[i]);
      if (p_.integ == Integ::HmacSha1) {
        IMB_SHA1_ONE_BLOCK(m, ib, mb_->ipad);
        IMB_SHA1_ONE_BLOCK(m, ob, mb_->opad);
        mb_->digest = 20;
      } else {
        IMB_SHA256_ONE_BLOCK(m, ib, mb_->ipad);
        IMB_SHA256_ONE_BLOCK(m, ob, mb_->opad);
        mb_->digest = 32;
      }
      OPENSSL_cleanse(ib, sizeof ib);
      OPENSSL_cleanse(ob, sizeof ob);
      OPENSSL_cleanse(k.data(), k.size());
    }
    return;
  }
#endif
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
#if defined(SHOAL_HAVE_IPSEC_MB) && defined(__x86_64__)
    if (mb_) {  // (ipsec-mb's engine implies AES-NI; its key schedule is the standard one)
      aesni_block(mb_->enc, int(p_.enc_key.size() / 4 + 6), block, iv);
      return;
    }
#endif
    int n = 0;
    if (EVP_EncryptUpdate(evp_->ivgen, iv, &n, block, 16) != 1 || n != 16) ossl_fail("the CBC IV");
  } else if (iv_len_ == 8) {
    k::store_be64(iv, seq);
  }
}

// What EVP starts from: CTR's first counter block (RFC 3686 §4: nonce, IV,
// a block counter from 1), made in `ctr`; CBC's IV as it is.
const uint8_t* EspCipher::first_block(const uint8_t* iv, uint8_t* ctr) const {
  if (p_.cipher != Cipher::AesCtr) return iv;
  std::memcpy(ctr, p_.salt.data(), 4);
  std::memcpy(ctr + 4, iv, 8);
  k::store_be32(ctr + 12, 1);
  return ctr;
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
  if (mb_) return mb_seal(esp, text_len, seq);
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
      const uint8_t* ivp = first_block(iv, ctr);
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
  if (mb_) return mb_open(esp, text_len, seq);
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
  const uint8_t* ivp = first_block(iv, ctr);
  EVP_CIPHER_CTX* c = evp_->dec;
  if (EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, ivp) != 1 ||
      EVP_DecryptUpdate(c, text, &n, text, int(text_len)) != 1)
    ossl_fail("AES");
  return true;
}

void EspCipher::cipher_only(const uint8_t* iv, uint8_t* text, uint32_t len, bool encrypt) {
  if (mb_ || (p_.cipher != Cipher::AesCbc && p_.cipher != Cipher::AesCtr))
    throw std::runtime_error("EspCipher::cipher_only: CBC and CTR with OpenSSL's engine only");
  uint8_t ctr[16];
  const uint8_t* ivp = first_block(iv, ctr);
  EVP_CIPHER_CTX* c = encrypt ? evp_->enc : evp_->dec;
  int n = 0;
  if ((encrypt ? EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, ivp)
               : EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, ivp)) != 1 ||
      (encrypt ? EVP_EncryptUpdate(c, text, &n, text, int(len)) : EVP_DecryptUpdate(c, text, &n, text, int(len))) != 1)
    ossl_fail("AES");
}

#ifdef SHOAL_HAVE_IPSEC_MB
namespace {
// GCM's nonce (salt, IV) and AAD (SPI, sequence number: 64 bits with ESN).
uint32_t gcm_inputs(const SAParams& p, const uint8_t* esp, uint64_t seq, uint8_t* nonce, uint8_t* aad) {
  std::memcpy(nonce, p.salt.data(), 4);
  std::memcpy(nonce + 4, esp + 8, 8);
  std::memcpy(aad, esp, 4);
  if (!p.esn) {
    std::memcpy(aad + 4, esp + 4, 4);
    return 8;
  }
  k::store_be32(aad + 4, uint32_t(seq >> 32));
  std::memcpy(aad + 8, esp + 4, 4);
  return 12;
}
}  // namespace

// CTR, CBC and null with HMAC: one job, ciphered and hashed in the order
// ESP needs (encrypt then MAC; on the way in, MAC then decrypt). With ESN
// the high half is hashed after the text: it is written where the ICV
// goes for the time of the job (open() keeps the received ICV aside first).
// The full HMAC goes to `tag`; CTR's first counter block is made in `ctr`
// (both must live until the job completes).
void EspCipher::mb_fill(void* job, uint8_t* esp, uint32_t text_len, uint64_t seq, bool seal, uint8_t* tag,
                        uint8_t* ctr) {
  auto* j = static_cast<IMB_JOB*>(job);
  uint8_t* iv = esp + 8;
  uint8_t* text = iv + iv_len_;
  j->enc_keys = mb_->enc;
  j->dec_keys = mb_->dec;
  j->key_len_in_bytes = p_.enc_key.size();
  j->src = esp;
  j->dst = text;
  j->cipher_start_src_offset_in_bytes = 8 + iv_len_;
  j->msg_len_to_cipher_in_bytes = text_len;
  j->cipher_direction = seal ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
  j->chain_order = seal ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
  if (p_.cipher == Cipher::AesCtr) {  // RFC 3686 §4: nonce, IV, a block counter from 1
    j->cipher_mode = IMB_CIPHER_CNTR;
    j->iv = first_block(iv, ctr);
    j->iv_len_in_bytes = 16;
  } else if (p_.cipher == Cipher::AesCbc) {
    j->cipher_mode = IMB_CIPHER_CBC;
    j->iv = iv;
    j->iv_len_in_bytes = 16;
  } else {
    j->cipher_mode = IMB_CIPHER_NULL;
    j->iv = nullptr;
    j->iv_len_in_bytes = 0;
  }
  bool mac = p_.integ != Integ::None;
  j->hash_alg = !mac ? IMB_AUTH_NULL : p_.integ == Integ::HmacSha1 ? IMB_AUTH_HMAC_SHA_1 : IMB_AUTH_HMAC_SHA_256;
  j->hash_start_src_offset_in_bytes = 0;
  j->msg_len_to_hash_in_bytes = mac ? 8 + iv_len_ + text_len + (p_.esn ? 4 : 0) : 0;
  if (mac && p_.esn) k::store_be32(text + text_len, uint32_t(seq >> 32));
  j->auth_tag_output = mac ? tag : nullptr;
  j->auth_tag_output_len_in_bytes = mac ? mb_->digest : 0;
  j->u.HMAC._hashed_auth_key_xor_ipad = mb_->ipad;
  j->u.HMAC._hashed_auth_key_xor_opad = mb_->opad;
}

// One job, done now (the queue of EspQueue is the fast way).
void EspCipher::mb_job(void* mgr, uint8_t* esp, uint32_t text_len, uint64_t seq, bool seal, uint8_t* tag) {
  auto* m = static_cast<IMB_MGR*>(mgr);
  uint8_t ctr[16];
  IMB_JOB* j = IMB_GET_NEXT_JOB(m);
  mb_fill(j, esp, text_len, seq, seal, tag, ctr);
  j = IMB_SUBMIT_JOB(m);
  if (!j) j = IMB_FLUSH_JOB(m);
  if (!j || j->status != IMB_STATUS_COMPLETED)
    throw std::runtime_error(fmt::format("intel-ipsec-mb: job failed ({})", imb_get_errno(m)));
}

bool EspCipher::mb_seal(uint8_t* esp, uint32_t text_len, uint64_t seq) {
  IMB_MGR* m = imb();
  uint8_t* iv = esp + 8;
  uint8_t* text = iv + iv_len_;
  uint8_t* icv = text + text_len;
  iv_for(seq, iv);
  if (p_.cipher == Cipher::AesGcm) {
    uint8_t nonce[12], aad[12];
    uint32_t al = gcm_inputs(p_, esp, seq, nonce, aad);
    gcm_context_data ctx;
    switch (p_.enc_key.size()) {
      case 16: IMB_AES128_GCM_ENC(m, &mb_->gcm, &ctx, text, text, text_len, nonce, aad, al, icv, icv_len_); break;
      case 24: IMB_AES192_GCM_ENC(m, &mb_->gcm, &ctx, text, text, text_len, nonce, aad, al, icv, icv_len_); break;
      default: IMB_AES256_GCM_ENC(m, &mb_->gcm, &ctx, text, text, text_len, nonce, aad, al, icv, icv_len_); break;
    }
    return true;
  }
  uint8_t tag[32];
  mb_job(m, esp, text_len, seq, true, tag);
  if (p_.integ != Integ::None) std::memcpy(icv, tag, icv_len_);
  return true;
}

bool EspCipher::mb_open(uint8_t* esp, uint32_t text_len, uint64_t seq) {
  IMB_MGR* m = imb();
  uint8_t* iv = esp + 8;
  uint8_t* text = iv + iv_len_;
  uint8_t* icv = text + text_len;
  uint8_t got[32];
  std::memcpy(got, icv, icv_len_);
  if (p_.cipher == Cipher::AesGcm) {
    uint8_t nonce[12], aad[12], tag[16];
    uint32_t al = gcm_inputs(p_, esp, seq, nonce, aad);
    gcm_context_data ctx;
    switch (p_.enc_key.size()) {
      case 16: IMB_AES128_GCM_DEC(m, &mb_->gcm, &ctx, text, text, text_len, nonce, aad, al, tag, icv_len_); break;
      case 24: IMB_AES192_GCM_DEC(m, &mb_->gcm, &ctx, text, text, text_len, nonce, aad, al, tag, icv_len_); break;
      default: IMB_AES256_GCM_DEC(m, &mb_->gcm, &ctx, text, text, text_len, nonce, aad, al, tag, icv_len_); break;
    }
    return CRYPTO_memcmp(tag, got, icv_len_) == 0;
  }
  uint8_t tag[32];
  mb_job(m, esp, text_len, seq, false, tag);
  if (p_.integ == Integ::None) return true;
  std::memcpy(icv, got, icv_len_);
  // The text is decrypted whatever the ICV says (one job does both); the
  // caller drops the packet when it does not match, and uses nothing of it.
  return CRYPTO_memcmp(tag, got, icv_len_) == 0;
}
#else
void EspCipher::mb_job(void*, uint8_t*, uint32_t, uint64_t, bool, uint8_t*) {}
void EspCipher::mb_fill(void*, uint8_t*, uint32_t, uint64_t, bool, uint8_t*, uint8_t*) {}
bool EspCipher::mb_seal(uint8_t*, uint32_t, uint64_t) { return false; }
bool EspCipher::mb_open(uint8_t*, uint32_t, uint64_t) { return false; }
#endif

#ifdef SHOAL_HAVE_IPSEC_MB
struct EspQueue::Slot {
  alignas(16) uint8_t ctr[16];
  alignas(16) uint8_t digest[32];
  uint8_t got[32];  // open: the ICV received
  uint8_t* icv = nullptr;
  uint32_t result = 0;  // its place in results_
  uint32_t icv_len = 0;
  bool seal = false;
};
namespace {
constexpr uint32_t kQueueSlots = 128;  // jobs in the manager at once (it has room for IMB_MAX_JOBS)
}  // namespace
#else
struct EspQueue::Slot {};
#endif

EspQueue::EspQueue() = default;
EspQueue::~EspQueue() {
#ifdef SHOAL_HAVE_IPSEC_MB
  if (mgr_) free_mb_mgr(static_cast<IMB_MGR*>(mgr_));
#endif
}

void EspQueue::add(EspCipher& c, bool seal, uint8_t* esp, uint32_t text_len, uint64_t seq, uint32_t tag) {
  const auto ri = uint32_t(results_.size());
  results_.push_back({tag, false, false});
  try {
    if (!c.mb_jobs()) {
      results_[ri].ok = seal ? c.seal(esp, text_len, seq) : c.open(esp, text_len, seq);
      return;
    }
#ifdef SHOAL_HAVE_IPSEC_MB
    if (!mgr_) {
      IMB_MGR* m = alloc_mb_mgr(0);
      if (!m) throw std::runtime_error("intel-ipsec-mb: alloc_mb_mgr failed");
      IMB_ARCH arch;
      init_mb_mgr_auto(m, &arch);
      mgr_ = m;
      slots_ = std::make_unique<Slot[]>(kQueueSlots);
      for (uint32_t i = kQueueSlots; i-- > 0;) free_.push_back(i);
    }
    auto* m = static_cast<IMB_MGR*>(mgr_);
    if (free_.empty()) complete();
    Slot& s = slots_[free_.back()];
    s.result = ri;
    s.seal = seal;
    s.icv_len = c.icv_len_;
    s.icv = esp + 8 + c.iv_len_ + text_len;
    if (seal)
      c.iv_for(seq, esp + 8);
    else
      std::memcpy(s.got, s.icv, s.icv_len);
    free_.pop_back();
    IMB_JOB* j = IMB_GET_NEXT_JOB(m);
    c.mb_fill(j, esp, text_len, seq, seal, s.digest, s.ctr);
    j->user_data = &s;
    for (j = IMB_SUBMIT_JOB(m); j; j = IMB_GET_COMPLETED_JOB(m)) retire(j);
#endif
  } catch (const std::exception&) {
    results_[ri].failed = true;
  }
}

void EspQueue::complete() {
#ifdef SHOAL_HAVE_IPSEC_MB
  if (!mgr_) return;
  auto* m = static_cast<IMB_MGR*>(mgr_);
  while (IMB_JOB* j = IMB_FLUSH_JOB(m)) retire(j);
#endif
}

void EspQueue::retire([[maybe_unused]] void* job) {
#ifdef SHOAL_HAVE_IPSEC_MB
  auto* j = static_cast<IMB_JOB*>(job);
  Slot& s = *static_cast<Slot*>(j->user_data);
  Result& r = results_[s.result];
  if (j->status != IMB_STATUS_COMPLETED) {
    r.failed = true;
  } else if (s.seal) {
    std::memcpy(s.icv, s.digest, s.icv_len);
    r.ok = true;
  } else {  // (the text is decrypted whatever the ICV says; the caller uses none of it when it does not match)
    r.ok = CRYPTO_memcmp(s.digest, s.got, s.icv_len) == 0;
    std::memcpy(s.icv, s.got, s.icv_len);
  }
  free_.push_back(uint32_t(&s - slots_.get()));
#endif
}

const uint32_t* aes_te0() {
  static const auto table = [] {
    std::array<uint32_t, k::kAesTableWords> t{};
    k::aes_make_tables(t.data());
    return t;
  }();
  return table.data();
}

bool esp_device_keys(const SAParams& p, k::EspKeys& out, std::string& why) {
  out = k::EspKeys{};
  if (p.cipher == Cipher::AesGcm) {
    out.suite = k::kEspGcm;
    if (p.icv_len != 8 && p.icv_len != 12 && p.icv_len != 16)
      return why = fmt::format("a {}-byte GCM ICV", p.icv_len), false;
  } else if (p.cipher == Cipher::AesCtr && p.integ == Integ::HmacSha1) {
    out.suite = k::kEspCtrSha1;
    if (p.icv_len == 0 || p.icv_len > 20) return why = fmt::format("a {}-byte HMAC-SHA1 ICV", p.icv_len), false;
  } else if ((p.cipher == Cipher::AesCtr || p.cipher == Cipher::AesCbc) && p.integ == Integ::HmacSha256) {
    out.suite = p.cipher == Cipher::AesCtr ? k::kEspCtrSha256 : k::kEspCbcSha256;
    if (p.icv_len == 0 || p.icv_len > 32) return why = fmt::format("a {}-byte HMAC-SHA-256 ICV", p.icv_len), false;
  } else if (p.cipher == Cipher::AesCbc && p.integ == Integ::HmacSha1) {
    out.suite = k::kEspCbcSha1;
    if (p.icv_len == 0 || p.icv_len > 20) return why = fmt::format("a {}-byte HMAC-SHA1 ICV", p.icv_len), false;
  } else {
    return why = fmt::format("{} is not a device suite (AES-GCM, AES-CTR or AES-CBC with HMAC-SHA1 or SHA-256 are)",
                             p.suite()),
           false;
  }
  const bool cbc = k::esp_cbc(out.suite);
  if (!cbc && p.salt.size() != 4) return why = "the salt is not 4 bytes", false;
  if (!k::aes_expand(aes_te0(), reinterpret_cast<const uint8_t*>(p.enc_key.data()), uint32_t(p.enc_key.size()), out.rk,
                     out.rounds))
    return why = fmt::format("a {}-byte AES key", p.enc_key.size()), false;
  if (!cbc) std::memcpy(out.salt, p.salt.data(), 4);
  if (cbc) k::aes_decrypt_keys(aes_te0(), out.rk, out.rounds, out.drk);
  out.iv_len = cbc ? 16 : 8;
  out.spi = p.spi;
  out.tun_family = p.dst.family;
  std::memcpy(out.tun_src, p.src.b.data(), 16);
  std::memcpy(out.tun_dst, p.dst.b.data(), 16);
  out.icv_len = p.icv_len;
  out.esn = p.esn;
  out.encap = p.encap;
  out.encap_sport = p.encap_sport;
  out.encap_dport = p.encap_dport;
  if (out.suite == k::kEspGcm) {
    uint8_t zero[16] = {}, h[16];
    k::aes_encrypt(aes_te0(), out.rk, out.rounds, zero, h);
    k::ghash_table(h, out.hl, out.hh);
    k::ghash_power_tables(h, out.hl, out.hh, out.pl, out.ph);
  } else {
    k::esp_hmac_states(reinterpret_cast<const uint8_t*>(p.auth_key.data()), uint32_t(p.auth_key.size()),
                       k::esp_sha256(out.suite), out.inner, out.outer);
  }
  return true;
}

}  // namespace shoal::crypto

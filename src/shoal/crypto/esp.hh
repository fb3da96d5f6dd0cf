// ESP's cryptographic transform (RFC 4303) for one SA: AES-GCM (RFC 4106),
// AES-CTR (RFC 3686) and AES-CBC (RFC 3602) with HMAC-SHA1-96 (RFC 2404) or
// HMAC-SHA-256 (RFC 4868), and the null cipher. Two engines: Intel's
// intel-ipsec-mb (VPP's and DPDK's software crypto; for AES-GCM 5-7x OpenSSL's
// EVP per packet on this project's machines, see bench-ipsec) when it is
// built in and the CPU has AES-NI, else OpenSSL's EVP; Engine::Auto takes
// ipsec-mb for GCM and EVP for the HMAC suites (see the constructor). Keys are expanded once, when the
// context is made; an EspCipher belongs to one thread (each worker makes its
// own per SA).
//
// The ESP packet it works on, from the ESP header:
//   SPI(4) Seq(4) IV(iv_len) [payload | padding | pad length | next header] ICV(icv_len)
// where the bracketed part is `text_len` bytes, a multiple of `align()`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/crypto/sadb.hh"
#include "shoal/kernels/esp.hh"

namespace shoal::crypto {

enum class Engine : uint8_t { Auto, IpsecMb, OpenSsl };
// "auto", "ipsec-mb", "openssl"; false for another word.
bool parse_engine(std::string_view s, Engine& e);
// Whether intel-ipsec-mb is built in and usable on this CPU.
bool have_ipsec_mb();
// The engine an SA's cipher gets when `e` is asked for; `batched`: its
// transforms go through an EspQueue.
Engine engine_for(const SAParams& p, Engine e, bool batched = false);

class EspCipher {
 public:
  // Throws std::runtime_error when the engine refuses the SA's algorithms
  // (or ipsec-mb is asked for and not usable).
  explicit EspCipher(const SAParams& p, Engine e = Engine::Auto, bool batched = false);
  ~EspCipher();
  EspCipher(const EspCipher&) = delete;
  EspCipher& operator=(const EspCipher&) = delete;

  Engine engine() const { return engine_; }
  // Whether transforms go through intel-ipsec-mb's job manager (the HMAC
  // suites and the null cipher with that engine), which EspQueue batches.
  bool mb_jobs() const { return mb_ && p_.cipher != Cipher::AesGcm; }
  uint32_t iv_len() const { return iv_len_; }
  uint32_t icv_len() const { return icv_len_; }
  // The ciphertext's alignment: the block for CBC, 4 (RFC 4303's minimum) otherwise.
  uint32_t align() const { return align_; }
  // The padding a payload of `len` bytes needs so that len + pad + 2 is aligned.
  uint32_t pad_for(uint32_t len) const { return (align_ - ((len + 2) & (align_ - 1))) & (align_ - 1); }

  // Writes the IV for sequence number `seq`, encrypts the text in place and
  // writes the ICV after it. The SPI and the sequence number's low half
  // must already be in the header.
  bool seal(uint8_t* esp, uint32_t text_len, uint64_t seq);
  // Checks the ICV (before anything is decrypted, except for GCM, which
  // checks as it decrypts and whose plaintext is then not used when the
  // check fails) and decrypts in place. false: the ICV does not match.
  bool open(uint8_t* esp, uint32_t text_len, uint64_t seq);

  // The transform's steps one by one, for Click's IPsec elements (each
  // does one step; OpenSSL's engine only): the IV for sequence number
  // `seq`; the cipher alone over `len` bytes in place (CBC and CTR: `len`
  // a multiple of align(); GCM and the null cipher: not these); the
  // truncated HMAC of `len` bytes (icv_len() bytes to `out`).
  void make_iv(uint64_t seq, uint8_t* iv) { iv_for(seq, iv); }
  void cipher_only(const uint8_t* iv, uint8_t* text, uint32_t len, bool encrypt);
  void icv(const uint8_t* data, size_t len, uint8_t* out) { hmac(data, len, nullptr, out); }

 private:
  void iv_for(uint64_t seq, uint8_t* iv);
  const uint8_t* first_block(const uint8_t* iv, uint8_t* ctr) const;
  void hmac(const uint8_t* data, size_t len, const uint8_t* seq_hi, uint8_t* out);

  bool mb_seal(uint8_t* esp, uint32_t text_len, uint64_t seq);
  void mb_job(void* mgr, uint8_t* esp, uint32_t text_len, uint64_t seq, bool seal, uint8_t* tag);
  void mb_fill(void* job, uint8_t* esp, uint32_t text_len, uint64_t seq, bool seal, uint8_t* tag, uint8_t* ctr);
  friend class EspQueue;
  bool mb_open(uint8_t* esp, uint32_t text_len, uint64_t seq);

  SAParams p_;
  Engine engine_ = Engine::OpenSsl;
  uint32_t iv_len_ = 0, icv_len_ = 0, align_ = 4;
  struct Evp;
  std::unique_ptr<Evp> evp_;
  struct Mb;
  std::unique_ptr<Mb> mb_;
};

// The ESP transforms of many packets (a batch's), for any mix of SAs: the
// jobs of the HMAC suites with intel-ipsec-mb go into a multi-buffer
// manager, which hashes (and for CBC encrypts) as many packets at once as
// its SIMD registers have lanes, and complete when the queue is finished;
// the others (AES-GCM, OpenSSL's engine) are done when added. One job at a
// time leaves the lanes empty: for HMAC-SHA1 at 512 bytes the manager fed
// by a batch is about 4.5x one job at a time and 4.5x OpenSSL's EVP
// (bench-ipsec). Belongs to one thread; owns its manager.
class EspQueue {
 public:
  EspQueue();
  ~EspQueue();
  EspQueue(const EspQueue&) = delete;
  EspQueue& operator=(const EspQueue&) = delete;
  // c.seal(esp, text_len, seq) (or open), now or by finish(); `tag` comes
  // back with its result. The buffers must stay put until finish().
  void add(EspCipher& c, bool seal, uint8_t* esp, uint32_t text_len, uint64_t seq, uint32_t tag);
  bool empty() const { return results_.empty(); }
  // Completes what was added and calls done(tag, ok, failed) for each, in
  // the order added: ok as seal/open return it; failed when the library
  // failed (an exception of seal/open, a job the manager refused).
  template <class F>
  void finish(F&& done) {
    complete();
    for (const Result& r : results_) done(r.tag, r.ok, r.failed);
    results_.clear();
  }

 private:
  struct Result {
    uint32_t tag;
    bool ok, failed;
  };
  struct Slot;
  void complete();         // every job in the manager done
  void retire(void* job);  // a job the manager gave back: its result
  std::vector<Result> results_;
  std::unique_ptr<Slot[]> slots_;
  std::vector<uint32_t> free_;  // slots not in the manager
  void* mgr_ = nullptr;
};

// The SA's keys for the per-packet functions of kernels/esp.hh (the device
// path): false, with the reason, for a suite they do not do (the null
// cipher, an ICV length the suite does not allow).
bool esp_device_keys(const SAParams& p, k::EspKeys& out, std::string& why);
// AES's tables for kernels/esp.hh (k::kAesTableWords words: Te0, Td0, the
// inverse S-box), made once.
const uint32_t* aes_te0();

}  // namespace shoal::crypto

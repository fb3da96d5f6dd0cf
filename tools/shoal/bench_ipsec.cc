// shoal bench-ipsec: ESP per core, each suite and packet size: the element
// graph (IPsecOutbound, IPsecInbound) against a bare loop of the same
// library (intel-ipsec-mb or OpenSSL EVP, keys expanded once, HMAC pads
// precomputed, multi-buffer jobs completed per batch of 32) doing
// the same cryptography over the same number of bytes, in the same run.
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "common.hh"
#include "shoal/crypto/esp.hh"
#include "shoal/crypto/sadb.hh"

#ifdef SHOAL_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>
#endif

namespace shoal::tool {
namespace {

using clk = std::chrono::steady_clock;

struct Suite {
  const char* name;
  const char* xfrm;  // the algorithm words of `ip xfrm state add`
};
const Suite kSuites[] = {
    {"aes128-gcm16", "aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128"},
    {"aes256-gcm16",
     "aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128"},
    {"aes128-ctr-hmac-sha1-96",
     "enc 'rfc3686(ctr(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 auth-trunc 'hmac(sha1)' "
     "0x000102030405060708090a0b0c0d0e0f10111213 96"},
    {"aes128-cbc-hmac-sha1-96",
     "enc 'cbc(aes)' 0x000102030405060708090a0b0c0d0e0f auth-trunc 'hmac(sha1)' "
     "0x000102030405060708090a0b0c0d0e0f10111213 96"},
    {"aes256-cbc-hmac-sha256-128",
     "enc 'cbc(aes)' 0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f auth-trunc 'hmac(sha256)' "
     "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f 128"},
};

// The bare loops: what ESP's cryptography costs with the library and
// nothing else (no packets, headers, policies or replay window): buffers of
// the ESP header, IV, text and ICV, each sealed (or opened) in turn.
class Bare {
 public:
  explicit Bare(const crypto::SAParams& p) : p_(p) {
    const auto* key = reinterpret_cast<const uint8_t*>(p.enc_key.data());
    size_t kl = p.enc_key.size();
    const EVP_CIPHER* c = p.cipher == crypto::Cipher::AesGcm   ? (kl == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm())
                          : p.cipher == crypto::Cipher::AesCtr ? (kl == 16 ? EVP_aes_128_ctr() : EVP_aes_256_ctr())
                                                               : (kl == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc());
    enc_ = EVP_CIPHER_CTX_new();
    dec_ = EVP_CIPHER_CTX_new();
    EVP_EncryptInit_ex(enc_, c, nullptr, key, nullptr);
    EVP_DecryptInit_ex(dec_, c, nullptr, key, nullptr);
    EVP_CIPHER_CTX_set_padding(enc_, 0);
    EVP_CIPHER_CTX_set_padding(dec_, 0);
    if (p.integ != crypto::Integ::None) {
      const EVP_MD* md = p.integ == crypto::Integ::HmacSha1 ? EVP_sha1() : EVP_sha256();
      size_t block = size_t(EVP_MD_get_block_size(md));
      std::string ip(block, '\x36'), op(block, '\x5c');
      for (size_t i = 0; i < p.auth_key.size(); ++i)
        ip[i] = char(ip[i] ^ p.auth_key[i]), op[i] = char(op[i] ^ p.auth_key[i]);
      in_ = EVP_MD_CTX_new();
      out_ = EVP_MD_CTX_new();
      w_ = EVP_MD_CTX_new();
      EVP_DigestInit_ex(in_, md, nullptr);
      EVP_DigestUpdate(in_, ip.data(), block);
      EVP_DigestInit_ex(out_, md, nullptr);
      EVP_DigestUpdate(out_, op.data(), block);
    }
  }
  ~Bare() {
    EVP_CIPHER_CTX_free(enc_);
    EVP_CIPHER_CTX_free(dec_);
    EVP_MD_CTX_free(in_);
    EVP_MD_CTX_free(out_);
    EVP_MD_CTX_free(w_);
  }
  uint32_t iv_len() const { return p_.cipher == crypto::Cipher::AesCbc ? 16 : 8; }
  bool flush() { return true; }  // (each packet is done when run() returns)
  // One packet's work: b holds header(8) IV text ICV.
  bool run(uint8_t* b, uint32_t text, bool seal, uint64_t seq) {
    int n = 0;
    uint8_t* iv = b + 8;
    uint8_t* t = iv + iv_len();
    uint8_t* icv = t + text;
    EVP_CIPHER_CTX* c = seal ? enc_ : dec_;
    if (p_.cipher == crypto::Cipher::AesGcm) {
      uint8_t nonce[12] = {1, 2, 3, 4};
      std::memcpy(nonce + 4, &seq, 8);
      if (seal) {
        EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, nonce);
        EVP_EncryptUpdate(c, nullptr, &n, b, 8);
        EVP_EncryptUpdate(c, t, &n, t, int(text));
        EVP_EncryptFinal_ex(c, t + n, &n);
        return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, icv) == 1;
      }
      EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, nonce);
      EVP_DecryptUpdate(c, nullptr, &n, b, 8);
      EVP_DecryptUpdate(c, t, &n, t, int(text));
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, icv);
      return EVP_DecryptFinal_ex(c, t + n, &n) == 1;
    }
    uint8_t ivb[16] = {};
    std::memcpy(ivb, &seq, 8);
    if (seal) {
      EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, ivb);
      EVP_EncryptUpdate(c, t, &n, t, int(text));
    }
    uint8_t h[EVP_MAX_MD_SIZE];
    unsigned hl = 0;
    EVP_MD_CTX_copy_ex(w_, in_);
    EVP_DigestUpdate(w_, b, 8 + iv_len() + text);
    EVP_DigestFinal_ex(w_, h, &hl);
    EVP_MD_CTX_copy_ex(w_, out_);
    EVP_DigestUpdate(w_, h, hl);
    EVP_DigestFinal_ex(w_, h, &hl);
    if (seal) {
      std::memcpy(icv, h, p_.icv_len);
      return true;
    }
    bool ok = CRYPTO_memcmp(h, icv, p_.icv_len) == 0;
    EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, ivb);
    EVP_DecryptUpdate(c, t, &n, t, int(text));
    return ok;
  }

 private:
  crypto::SAParams p_;
  EVP_CIPHER_CTX *enc_ = nullptr, *dec_ = nullptr;
  EVP_MD_CTX *in_ = nullptr, *out_ = nullptr, *w_ = nullptr;
};

#ifdef SHOAL_HAVE_IPSEC_MB
// The same with intel-ipsec-mb: GCM's direct calls; for CTR and CBC with
// HMAC, jobs into the multi-buffer manager, flushed every batch (the keys
// expanded and the HMAC pads hashed once).
class BareMb {
 public:
  explicit BareMb(const crypto::SAParams& p) : p_(p) {
    m_ = alloc_mb_mgr(0);
    IMB_ARCH arch;
    init_mb_mgr_auto(m_, &arch);
    const auto* key = reinterpret_cast<const uint8_t*>(p.enc_key.data());
    if (p.cipher == crypto::Cipher::AesGcm) {
      if (p.enc_key.size() == 16)
        IMB_AES128_GCM_PRE(m_, key, &gcm_);
      else
        IMB_AES256_GCM_PRE(m_, key, &gcm_);
    } else if (p.enc_key.size() == 16) {
      IMB_AES_KEYEXP_128(m_, key, enc_, dec_);
    } else {
      IMB_AES_KEYEXP_256(m_, key, enc_, dec_);
    }
    if (p.integ != crypto::Integ::None) {
      alignas(16) uint8_t ib[64], ob[64];
      std::memset(ib, 0x36, 64);
      std::memset(ob, 0x5c, 64);
      for (size_t i = 0; i < p.auth_key.size(); ++i) ib[i] ^= uint8_t(p.auth_key[i]), ob[i] ^= uint8_t(p.auth_key[i]);
      if (p.integ == crypto::Integ::HmacSha1) {
        IMB_SHA1_ONE_BLOCK(m_, ib, ipad_);
        IMB_SHA1_ONE_BLOCK(m_, ob, opad_);
      } else {
        IMB_SHA256_ONE_BLOCK(m_, ib, ipad_);
        IMB_SHA256_ONE_BLOCK(m_, ob, opad_);
      }
    }
  }
  ~BareMb() { free_mb_mgr(m_); }
  uint32_t iv_len() const { return p_.cipher == crypto::Cipher::AesCbc ? 16 : 8; }
  bool run(uint8_t* b, uint32_t text, bool seal, uint64_t seq) {
    uint8_t* iv = b + 8;
    uint8_t* t = iv + iv_len();
    uint8_t* icv = t + text;
    if (p_.cipher == crypto::Cipher::AesGcm) {
      uint8_t nonce[12] = {1, 2, 3, 4}, tag[16];
      std::memcpy(nonce + 4, &seq, 8);
      gcm_context_data ctx;
      bool k128 = p_.enc_key.size() == 16;
      if (seal) {
        if (k128)
          IMB_AES128_GCM_ENC(m_, &gcm_, &ctx, t, t, text, nonce, b, 8, icv, 16);
        else
          IMB_AES256_GCM_ENC(m_, &gcm_, &ctx, t, t, text, nonce, b, 8, icv, 16);
        return true;
      }
      if (k128)
        IMB_AES128_GCM_DEC(m_, &gcm_, &ctx, t, t, text, nonce, b, 8, tag, 16);
      else
        IMB_AES256_GCM_DEC(m_, &gcm_, &ctx, t, t, text, nonce, b, 8, tag, 16);
      return CRYPTO_memcmp(tag, icv, 16) == 0;
    }
    // CTR and CBC with HMAC: into the manager, completed jobs checked as it
    // gives them back, the rest at flush() (per batch, as the elements do)
    Job& w = jobs_[next_++ % kJobs];
    w.icv = icv;
    w.seal = seal;
    std::memset(w.iv, 0, 16);
    std::memcpy(w.iv, ivinit_, 4);
    std::memcpy(w.iv + 4, &seq, 8);
    IMB_JOB* j = IMB_GET_NEXT_JOB(m_);
    j->enc_keys = enc_;
    j->dec_keys = dec_;
    j->key_len_in_bytes = p_.enc_key.size();
    j->src = b;
    j->dst = t;
    j->cipher_start_src_offset_in_bytes = 8 + iv_len();
    j->msg_len_to_cipher_in_bytes = text;
    j->cipher_direction = seal ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
    j->chain_order = seal ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
    j->cipher_mode = p_.cipher == crypto::Cipher::AesCtr ? IMB_CIPHER_CNTR : IMB_CIPHER_CBC;
    j->iv = w.iv;
    j->iv_len_in_bytes = 16;
    j->hash_alg = p_.integ == crypto::Integ::HmacSha1 ? IMB_AUTH_HMAC_SHA_1 : IMB_AUTH_HMAC_SHA_256;
    j->hash_start_src_offset_in_bytes = 0;
    j->msg_len_to_hash_in_bytes = 8 + iv_len() + text;
    j->auth_tag_output = w.tag;
    j->auth_tag_output_len_in_bytes = p_.integ == crypto::Integ::HmacSha1 ? 20 : 32;
    j->u.HMAC._hashed_auth_key_xor_ipad = ipad_;
    j->u.HMAC._hashed_auth_key_xor_opad = opad_;
    j->user_data = &w;
    bool ok = true;
    for (j = IMB_SUBMIT_JOB(m_); j; j = IMB_GET_COMPLETED_JOB(m_)) ok &= retire(j);
    return ok;
  }
  // Completes the jobs in the manager; false when one failed.
  bool flush() {
    bool ok = true;
    while (IMB_JOB* j = IMB_FLUSH_JOB(m_)) ok &= retire(j);
    return ok;
  }

 private:
  struct Job {
    alignas(16) uint8_t iv[16];
    uint8_t tag[32];
    uint8_t* icv;
    bool seal;
  };
  bool retire(IMB_JOB* j) {
    Job& w = *static_cast<Job*>(j->user_data);
    if (j->status != IMB_STATUS_COMPLETED) return false;
    if (w.seal) {
      std::memcpy(w.icv, w.tag, p_.icv_len);
      return true;
    }
    return CRYPTO_memcmp(w.tag, w.icv, p_.icv_len) == 0;
  }
  static constexpr uint32_t kJobs = 256;  // more than the manager holds
  Job jobs_[kJobs];
  uint32_t next_ = 0;
  uint8_t ivinit_[4] = {1, 2, 3, 4};
  crypto::SAParams p_;
  IMB_MGR* m_ = nullptr;
  alignas(64) gcm_key_data gcm_;
  alignas(16) uint8_t enc_[16 * 15], dec_[16 * 15], ipad_[32], opad_[32];
};
#endif

// Packets per second of a bare loop over packets of IP length `ip_len`
// (the element's text: the IP packet, padding and trailer).
constexpr uint32_t kBatch = 32;  // the graph's batch (the sources' default BURST)

template <class B>
double bare_pps(const crypto::SAParams& p, uint32_t ip_len, bool seal, double seconds) {
  B b(p);
  uint32_t align = p.cipher == crypto::Cipher::AesCbc ? 16 : 4;
  uint32_t text = ip_len + (align - (ip_len + 2) % align) % align + 2;
  uint32_t icv = p.icv_len;
  const uint32_t ring = 4096;  // distinct buffers, as packets are
  uint32_t stride = (8 + b.iv_len() + text + icv + 63) / 64 * 64;
  std::vector<uint8_t> mem(size_t(ring) * stride, 0x5a);
  uint64_t seq = 1, done = 0;
  std::vector<uint8_t> sealed;
  if (!seal) {  // opening needs genuine packets: sealed once, copied back before each round (as a read copies them)
    for (uint32_t i = 0; i < ring; ++i) b.run(&mem[size_t(i) * stride], text, true, i + 1);
    b.flush();
    sealed = mem;
  }
  bool ok = true;
  auto t0 = clk::now();
  do {
    if (!seal) std::memcpy(mem.data(), sealed.data(), mem.size());
    for (uint32_t i = 0; i < ring; ++i, ++seq) {
      ok &= b.run(&mem[size_t(i) * stride], text, seal, seal ? seq : i + 1);
      if (i % kBatch == kBatch - 1) ok &= b.flush();  // per batch, as the elements complete their queue
    }
    done += ring;
  } while (since(t0) < seconds);
  double pps = double(done) / since(t0);
  if (!ok) fmt::print(stderr, "bench-ipsec: the bare loop failed to open its own packets\n");
  return pps;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int cmd_bench_ipsec(int argc, char** argv) {
  CLI::App app{"shoal bench-ipsec: ESP per core, the element graph against a bare OpenSSL loop"};
  std::string out = "bench/results/ipsec-latest.json";
  std::vector<uint32_t> sizes{64, 512, 1400};
  uint64_t packets = 300000;
  int reps = 7;
  std::vector<std::string> only;
  std::vector<uint32_t> npolicies{1};
  app.add_option("--out", out, "JSON output file");
  app.add_option(
      "--policies", npolicies,
      "tunnels (default 1), each with its two SAs and a policy each way; the others, 10.0.0.0/8 to one /24 of "
      "100.0.0.0/8 each (a gateway's sites, up to 65,536), come first, so the traffic's policy is the last a scan "
      "would try; the policy lookup's ns are also timed against trying each policy in turn");
  app.add_option("--sizes", sizes, "frame lengths (the IP packet is 14 bytes shorter)");
  app.add_option("--packets", packets, "packets per graph run");
  app.add_option("--suites", only, "suites to run (default all)");
  app.add_option("--reps", reps, "repetitions (graph and bare loop back to back; medians reported)");
  std::string engine = "auto";
  app.add_option("--crypto", engine, "the engine of the elements and of the bare loop: auto, ipsec-mb, openssl");
  std::string device;
  app.add_option("--device", device,
                 "also encrypt with IPsecOutbound offloaded (OffloadBalancer(1), NBA's form) on this device (host, "
                 "cuda): the device's ESP kernels; its Mpps and its ratio to the CPU graph's");
  CLI11_PARSE(app, argc, argv);
  crypto::Engine asked;
  if (!crypto::parse_engine(engine, asked) || (asked == crypto::Engine::IpsecMb && !crypto::have_ipsec_mb())) {
    fmt::print(stderr, "bench-ipsec: --crypto {}: auto, openssl{}\n", engine,
               crypto::have_ipsec_mb() ? " or ipsec-mb" : "");
    return 1;
  }
  // The engine of a suite (auto: what the elements pick for it), given to
  // the elements and used by the bare loop.
  auto engine_of = [&](const crypto::SAParams& p) {
    return crypto::engine_for(p, asked, true) == crypto::Engine::IpsecMb ? std::string("ipsec-mb")
                                                                         : std::string("openssl");
  };
  auto bare = [&](const crypto::SAParams& p, uint32_t ip_len, bool seal, double secs) {
#ifdef SHOAL_HAVE_IPSEC_MB
    if (engine_of(p) == "ipsec-mb") return bare_pps<BareMb>(p, ip_len, seal, secs);
#endif
    return bare_pps<Bare>(p, ip_len, seal, secs);
  };

  nlohmann::json j = bench_record("ipsec");
  j["crypto_asked"] = engine;
  if (!device.empty()) j["offload_device"] = device;
  auto dir = std::filesystem::temp_directory_path() / fmt::format("shoal-bench-ipsec-{}", getpid());
  std::filesystem::create_directories(dir);
  fmt::print(
      "shoal bench-ipsec on {}, one core (crypto {} asked): Mpps of the graph and of a bare loop of the same library, "
      "and their ratio (the median of {} back-to-back runs) for the whole graph and for the element alone (the "
      "source's time taken out)\n",
      cpu_model(), engine, reps);
  fmt::print("{:<28} {:<8} {:>6} {:>9} {:>9} {:>7} {:>7} {:>9} {:>9} {:>7} {:>7} {:>8}\n", "suite", "crypto", "frame",
             "encrypt", "bare", "graph", "element", "decrypt", "bare", "graph", "element", "Gbit/s");
  for (const Suite& s : kSuites)
    for (uint32_t npol : npolicies) {
      if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
      std::string sad = (dir / "b.sad").string();
      {
        std::ofstream f(sad);
        f << fmt::format("ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001 reqid 1 mode tunnel {}\n",
                         s.xfrm);
        for (uint32_t i = 1; i < npol; ++i) {  // the other tunnels: their SAs and policies, each way
          std::string peer = fmt::format("198.18.{}.{}", (i >> 8) & 255, i & 255),
                      site = fmt::format("100.{}.{}.0/24", (i >> 8) & 255, i & 255);
          f << fmt::format(
              "ip xfrm state add src 192.0.2.1 dst {0} proto esp spi {1} reqid {1} mode tunnel {2}\n"
              "ip xfrm state add src {0} dst 192.0.2.1 proto esp spi {1} reqid {1} mode tunnel {2}\n"
              "ip xfrm policy add src 10.0.0.0/8 dst {3} dir out tmpl src 192.0.2.1 dst {0} proto esp reqid {1} "
              "mode tunnel\n"
              "ip xfrm policy add src {3} dst 10.0.0.0/8 dir fwd tmpl src {0} dst 192.0.2.1 proto esp reqid {1} "
              "mode tunnel\n",
              peer, 0x10000 + i, s.xfrm, site);
        }
        f << "ip xfrm policy add src 10.0.0.0/8 dst 10.0.0.0/8 dir out tmpl src 192.0.2.1 dst 192.0.2.2 proto esp "
             "reqid 1 mode tunnel\n";
      }
      crypto::Database db;
      std::string err;
      auto load_start = clk::now();
      if (!db.load_file(sad, err)) {
        fmt::print(stderr, "bench-ipsec: {}\n", err);
        return 1;
      }
      double load_s = since(load_start);
      const crypto::SAParams& p = db.sas()[0]->params;
      // The policy lookup of the traffic's packets, by the index and by a scan.
      double index_ns = 0, scan_ns = 0;
      {
        crypto::Selector sel;
        const uint8_t a[4] = {10, 1, 0, 1}, b[4] = {10, 2, 0, 1};
        sel.src = crypto::Addr::v4(a), sel.dst = crypto::Addr::v4(b), sel.proto = 17, sel.dport = 1234;
        auto time_ns = [&](auto&& lookup) {
          uint64_t n = 0, found = 0;
          auto t0 = clk::now();
          do {
            for (int k = 0; k < 64; ++k, ++n) {
              sel.sport = uint16_t(n);
              found += lookup(sel) != nullptr;
            }
          } while (since(t0) < 0.1);
          if (found != n) fmt::print(stderr, "bench-ipsec: a lookup missed the traffic's policy\n");
          return since(t0) * 1e9 / double(n);
        };
        index_ns = time_ns([&](const crypto::Selector& x) { return db.match(crypto::Dir::Out, x); });
        scan_ns = time_ns([&](const crypto::Selector& x) { return db.match_linear(crypto::Dir::Out, x); });
      }
      if (npolicies.size() > 1 || npol > 1)
        fmt::print(
            "{} policies each way: the file loaded in {:.3f} s; a lookup {:.1f} ns ({} mask groups), {:.1f} ns "
            "trying each in turn\n",
            npol, load_s, index_ns, db.index().groups(crypto::Dir::Out), scan_ns);
      const std::string eng = engine_of(p);
      for (uint32_t size : sizes) {
        std::string esp = (dir / "esp.pcap").string();
        auto src = fmt::format(
            "FastUDPFlows(LENGTH {}, FLOWS 64, FLOWSIZE 4, SRCIP 10.1.0.1, DSTIP 10.2.0.1, LIMIT {}, STOP true) -> "
            "Strip(14)",
            size, packets);
        uint64_t got = 0;
        // the ESP capture the decryption runs read (unique sequence numbers)
        if (graph_pps(
                fmt::format(
                    "{} -> IPsecOutbound(SAD {}, VERBOSE false, CRYPTO {}) -> c :: Counter -> ToDump({}, ENCAP IP);",
                    src, sad, eng, esp),
                false, got, err) < 0 ||
            got != packets) {
          fmt::print(stderr, "bench-ipsec: {}: {}\n", s.name, err.empty() ? "packets went missing" : err);
          return 1;
        }
        // This machine's speed drifts from second to second (a shared VM), so
        // each repetition times the graph and the bare loop back to back and
        // the ratio reported is the median of the repetitions' ratios.
        uint32_t ip_len = size - 14;
        std::vector<double> es, ds, bes, bds, er, dr, eer, edr;
        for (int rep = 0; rep < reps; ++rep) {
          double e =
              graph_pps(fmt::format("{} -> IPsecOutbound(SAD {}, VERBOSE false, CRYPTO {}) -> c :: Counter -> Discard;",
                                    src, sad, eng),
                        false, got, err);
          bool ok = e > 0 && got == packets;
          double be = bare(p, ip_len, true, 0.2);
          double d =
              graph_pps(fmt::format("FromDump({}, STOP true) -> IPsecInbound(SAD {}, VERBOSE false, CRYPTO {}) -> c :: "
                                    "Counter -> Discard;",
                                    esp, sad, eng),
                        false, got, err);
          ok = ok && d > 0 && got == packets;
          double bd = bare(p, ip_len, false, 0.2);
          // the same sources into a Counter alone: what reading or making the packets costs
          double fe = graph_pps(fmt::format("{} -> c :: Counter -> Discard;", src), false, got, err);
          ok = ok && fe > 0 && got == packets;
          double fd =
              graph_pps(fmt::format("FromDump({}, STOP true) -> c :: Counter -> Discard;", esp), false, got, err);
          ok = ok && fd > 0 && got == packets;
          if (!ok) {
            fmt::print(stderr, "bench-ipsec: {}: {}\n", s.name, err.empty() ? "packets went missing" : err);
            return 1;
          }
          es.push_back(e), ds.push_back(d), bes.push_back(be), bds.push_back(bd);
          er.push_back(e / be), dr.push_back(d / bd);
          // the element alone: the graph's time per packet less its source's
          // (a run too short to tell the two apart gives no figure: 0)
          auto alone = [](double graph, double source, double bare_pps) {
            double t = 1 / graph - 1 / source;
            return t > 0 ? 1 / t / bare_pps : 0.0;
          };
          eer.push_back(alone(e, fe, be)), edr.push_back(alone(d, fd, bd));
        }
        // Offloaded: the same graph with the balancer sending every batch to
        // the device; the device must have sealed every packet.
        double dev_pps = 0, dev_ratio = 0, dev_share = 0;
        if (!device.empty() && (std::string(s.name).find("cbc") == std::string::npos)) {
          static bool warmed = false;  // the device's first use (its context, kernels, pinned memory): untimed
          if (!warmed) {
            warmed = true;
            uint64_t g = 0;
            std::string e2;
            graph_run(fmt::format("FastUDPFlows(LENGTH {}, FLOWS 64, FLOWSIZE 4, SRCIP 10.1.0.1, DSTIP 10.2.0.1, "
                                  "LIMIT 20000, STOP true) -> Strip(14) -> OffloadBalancer(1) -> IPsecOutbound(SAD {}, "
                                  "VERBOSE false, CRYPTO {}) -> c :: Counter -> Discard;",
                                  size, sad, eng),
                      device, {}, nullptr, g, e2);
          }
          std::vector<double> dv, dvr, share;
          for (int rep = 0; rep < std::max(1, reps / 2); ++rep) {
            std::map<std::string, std::string> h;
            double e = graph_run(fmt::format("{} -> OffloadBalancer(1) -> o :: IPsecOutbound(SAD {}, VERBOSE false, "
                                             "CRYPTO {}) -> c :: Counter -> Discard;",
                                             src, sad, eng),
                                 device, {"o.device_sealed", "o.host_sealed"}, &h, got, err);
            // every packet sealed, by the device or (an aggregate that found
            // every device slot in flight: the kernels run on the host) by
            // the host; the device's share reported
            const uint64_t on_dev = std::strtoull(h["o.device_sealed"].c_str(), nullptr, 10),
                           on_host = std::strtoull(h["o.host_sealed"].c_str(), nullptr, 10);
            if (e <= 0 || got != packets || on_dev + on_host != packets || on_dev == 0) {
              fmt::print(stderr, "bench-ipsec: {} offloaded on {}: {} (device_sealed {}, host_sealed {}, of {})\n",
                         s.name, device, err.empty() ? "the device sealed none, or packets went missing" : err, on_dev,
                         on_host, packets);
              return 1;
            }
            dv.push_back(e), dvr.push_back(e / es[size_t(rep) % es.size()]);
            share.push_back(double(on_dev) / double(packets));
          }
          dev_pps = median(dv), dev_ratio = median(dvr), dev_share = median(share);
        }
        double enc = median(es), dec = median(ds), benc = median(bes), bdec = median(bds);
        double enc_ratio = median(er), dec_ratio = median(dr), enc_elem = median(eer), dec_elem = median(edr);
        double gbps = enc * ip_len * 8 / 1e9;
        fmt::print(
            "{:<28} {:<8} {:>6} {:>9.3f} {:>9.3f} {:>6.2f}x {:>6.2f}x {:>9.3f} {:>9.3f} {:>6.2f}x {:>6.2f}x {:>8.2f}\n",
            s.name, eng, size, enc / 1e6, benc / 1e6, enc_ratio, enc_elem, dec / 1e6, bdec / 1e6, dec_ratio, dec_elem,
            gbps);
        if (dev_pps > 0)
          fmt::print(
              "{:<28} {:<8} {:>6} {:>9.3f} {:>9} {:>6.2f}x  (encrypt offloaded to {}: Mpps, ratio to the CPU graph; "
              "{:.0f}% sealed on the device)\n",
              "", "device", size, dev_pps / 1e6, "", dev_ratio, device, 100 * dev_share);
        j["results"].push_back({{"suite", s.name},
                                {"policies_per_direction", npol},
                                {"policy_lookup_ns", index_ns},
                                {"policy_scan_ns", scan_ns},
                                {"sad_load_s", load_s},
                                {"crypto", eng},
                                {"frame_bytes", size},
                                {"ip_bytes", ip_len},
                                {"encrypt_pps", enc},
                                {"bare_encrypt_pps", benc},
                                {"encrypt_ratio", enc_ratio},
                                {"decrypt_pps", dec},
                                {"bare_decrypt_pps", bdec},
                                {"decrypt_ratio", dec_ratio},
                                {"encrypt_element_ratio", enc_elem},
                                {"decrypt_element_ratio", dec_elem},
                                {"repetitions", reps},
                                {"encrypt_ratios", er},
                                {"decrypt_ratios", dr},
                                {"encrypt_gbps_inner", gbps},
                                {"offloaded_encrypt_pps", dev_pps},
                                {"offloaded_encrypt_ratio_to_cpu_graph", dev_ratio},
                                {"offloaded_device_sealed_share", dev_share}});
        std::filesystem::remove(esp);
      }
    }
  std::filesystem::remove_all(dir);
  if (!write_bench_json(out, j)) return 1;
  return 0;
}

}  // namespace shoal::tool

// ESP's transform (RFC 4303) as per-packet host+device functions, for the
// device path of the IPsec elements: AES-CTR (RFC 3686) and AES-GCM (RFC 4106)
// with 128-, 192- and 256-bit keys, HMAC-SHA1-96 (RFC 2404) and
// HMAC-SHA-256-128 (RFC 4868). The CPU elements use intel-ipsec-mb or
// OpenSSL (AES-NI); these are what a GPU thread (or the host backend's
// threads) runs, checked byte for byte against them (tests/unit/esp_kernel_test.cc).
//
// Same packet layout and IVs as crypto::EspCipher, from the ESP header:
//   SPI(4) Seq(4) IV(8) [payload | padding | pad length | next header] ICV
// with the 64-bit sequence number as the IV. Everything a packet needs that
// depends only on the SA is computed once on the host (esp_keys): the AES
// round keys, GHASH's table of the hash key, HMAC's inner and outer states.
// AES uses one 1 KiB table (aes_te0) the caller passes: on a device it lives
// in device memory beside the keys.
#pragma once
#include <cstdint>

#include "shoal/kernels/atomic.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/hd.hh"

namespace shoal::k {

enum EspSuite : uint8_t { kEspCtrSha1 = 1, kEspCtrSha256 = 2, kEspGcm = 3, kEspCbcSha1 = 4, kEspCbcSha256 = 5 };
SHOAL_HD bool esp_cbc(uint8_t suite) { return suite == kEspCbcSha1 || suite == kEspCbcSha256; }
SHOAL_HD bool esp_sha256(uint8_t suite) { return suite == kEspCtrSha256 || suite == kEspCbcSha256; }

// An SA's keys as the per-packet functions use them.
struct EspKeys {
  uint32_t rk[60];          // AES encryption round keys
  uint32_t drk[60];         // CBC: the decryption round keys (the equivalent inverse cipher's)
  uint32_t rounds;          // 10, 12 or 14
  uint8_t salt[4];          // RFC 3686's nonce / RFC 4106's salt
  uint8_t suite;            // EspSuite
  uint8_t icv_len;          // bytes of ICV (the tag or the truncated HMAC)
  uint8_t esn;              // 64-bit sequence numbers (the high half is authenticated)
  uint8_t iv_len;           // 8 (CTR, GCM) or 16 (CBC)
  uint64_t hl[16], hh[16];  // GCM: GHASH's 4-bit table of H (Shoup's)
  // GCM, for GHASH split among threads (esp_chunk): the tables of H^(L·2^j),
  // L = kEspChunk blocks, j < kEspPowers
  uint64_t pl[7][16], ph[7][16];
  uint32_t inner[8], outer[8];  // HMAC: the hash's state after the key XOR ipad / opad block
  uint32_t spi;
  uint8_t tun_family;  // the SA's addresses' family (4 or 6): a tunnel's outer header
  uint8_t tun_src[16], tun_dst[16];
  uint8_t encap;                      // ESP in UDP (RFC 3948): a UDP header between the IP header and ESP
  uint16_t encap_sport, encap_dport;  // ... with these ports
};

// A packet's text split among threads on a device (esp_chunk): each takes
// kEspChunk 16-byte blocks; GHASH's partial sums are moved to their place
// by the powers H^(kEspChunk·2^j), j < kEspPowers, of EspKeys::pl/ph.
constexpr uint32_t kEspChunk = 8;
constexpr int kEspPowers = 7;

SHOAL_HD uint32_t rotr32(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
SHOAL_HD uint32_t rotl32(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// ---- AES (FIPS 197) ---------------------------------------------------------
// The tables the functions take (`tab`, kAesTableWords words, made once on
// the host and mirrored to a device): Te0, then Td0, then the inverse S-box
// (256 bytes). CTR and GCM only encrypt blocks; CBC decrypts too.
constexpr uint32_t kAesTableWords = 256 + 256 + 64;

// Te0[x] = (2·S[x], S[x], S[x], 3·S[x]); the other three tables are its
// rotations and the S-box its second byte.
inline void aes_make_te0(uint32_t* te0) {
  uint8_t sbox[256];
  uint8_t p = 1, q = 1;
  do {  // p runs over the multiplicative group by 3, q over the inverses
    p = uint8_t(p ^ (p << 1) ^ (p & 0x80 ? 0x1b : 0));
    q ^= uint8_t(q << 1);
    q ^= uint8_t(q << 2);
    q ^= uint8_t(q << 4);
    if (q & 0x80) q ^= 0x09;
    auto rl = [](uint8_t x, int n) { return uint8_t((x << n) | (x >> (8 - n))); };
    sbox[p] = uint8_t(q ^ rl(q, 1) ^ rl(q, 2) ^ rl(q, 3) ^ rl(q, 4) ^ 0x63);
  } while (p != 1);
  sbox[0] = 0x63;
  for (int x = 0; x < 256; ++x) {
    uint32_t s = sbox[x], s2 = uint8_t((s << 1) ^ (s & 0x80 ? 0x1b : 0)), s3 = s2 ^ s;
    te0[x] = (s2 << 24) | (s << 16) | (s << 8) | s3;
  }
}

// Td0 and the inverse S-box after Te0 (tab[0..255]):
// Td0[x] = (0e·Si[x], 09·Si[x], 0d·Si[x], 0b·Si[x]).
inline void aes_make_tables(uint32_t* tab) {
  aes_make_te0(tab);
  uint8_t* si = reinterpret_cast<uint8_t*>(tab + 512);
  for (int x = 0; x < 256; ++x) si[(tab[x] >> 16) & 0xff] = uint8_t(x);
  auto mul = [](uint32_t a, uint32_t b) {
    uint32_t r = 0;
    for (; b; b >>= 1, a = (a << 1) ^ (a & 0x80 ? 0x11b : 0))
      if (b & 1) r ^= a;
    return r & 0xff;
  };
  for (int x = 0; x < 256; ++x) {
    uint32_t v = si[x];
    tab[256 + x] = (mul(v, 0x0e) << 24) | (mul(v, 0x09) << 16) | (mul(v, 0x0d) << 8) | mul(v, 0x0b);
  }
}

SHOAL_HD uint32_t aes_sub_word(const uint32_t* te0, uint32_t w) {
  return ((te0[w >> 24] >> 16 & 0xff) << 24) | ((te0[w >> 16 & 0xff] >> 16 & 0xff) << 16) |
         ((te0[w >> 8 & 0xff] >> 16 & 0xff) << 8) | (te0[w & 0xff] >> 16 & 0xff);
}

// Round keys of a 16-, 24- or 32-byte key; false for another length.
SHOAL_HD_CALL bool aes_expand(const uint32_t* te0, const uint8_t* key, uint32_t len, uint32_t* rk, uint32_t& rounds) {
  if (len != 16 && len != 24 && len != 32) return false;
  const uint32_t nk = len / 4;
  rounds = nk + 6;
  const uint32_t total = 4 * (rounds + 1);
  for (uint32_t i = 0; i < nk; ++i) rk[i] = load_be32(key + 4 * i);
  uint32_t rcon = 1;
  for (uint32_t i = nk; i < total; ++i) {
    uint32_t t = rk[i - 1];
    if (i % nk == 0) {
      t = aes_sub_word(te0, rotl32(t, 8)) ^ (rcon << 24);
      rcon = (rcon << 1) ^ (rcon & 0x80 ? 0x11b : 0);
    } else if (nk == 8 && i % nk == 4) {
      t = aes_sub_word(te0, t);
    }
    rk[i] = rk[i - nk] ^ t;
  }
  return true;
}

SHOAL_HD void aes_encrypt(const uint32_t* te0, const uint32_t* rk, uint32_t rounds, const uint8_t* in, uint8_t* out) {
  uint32_t s0 = load_be32(in) ^ rk[0], s1 = load_be32(in + 4) ^ rk[1], s2 = load_be32(in + 8) ^ rk[2],
           s3 = load_be32(in + 12) ^ rk[3];
  auto col = [te0](uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return te0[a >> 24] ^ rotr32(te0[b >> 16 & 0xff], 8) ^ rotr32(te0[c >> 8 & 0xff], 16) ^ rotr32(te0[d & 0xff], 24);
  };
  for (uint32_t r = 1; r < rounds; ++r) {
    const uint32_t* k = rk + 4 * r;
    uint32_t t0 = col(s0, s1, s2, s3) ^ k[0], t1 = col(s1, s2, s3, s0) ^ k[1], t2 = col(s2, s3, s0, s1) ^ k[2],
             t3 = col(s3, s0, s1, s2) ^ k[3];
    s0 = t0, s1 = t1, s2 = t2, s3 = t3;
  }
  auto last = [te0](uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return ((te0[a >> 24] >> 16 & 0xff) << 24) | ((te0[b >> 16 & 0xff] >> 16 & 0xff) << 16) |
           ((te0[c >> 8 & 0xff] >> 16 & 0xff) << 8) | (te0[d & 0xff] >> 16 & 0xff);
  };
  const uint32_t* k = rk + 4 * rounds;
  store_be32(out, last(s0, s1, s2, s3) ^ k[0]);
  store_be32(out + 4, last(s1, s2, s3, s0) ^ k[1]);
  store_be32(out + 8, last(s2, s3, s0, s1) ^ k[2]);
  store_be32(out + 12, last(s3, s0, s1, s2) ^ k[3]);
}

// The equivalent inverse cipher's round keys (FIPS 197 §5.3.5): the
// encryption keys in reverse round order, InvMixColumns applied to all but
// the first and last round's (as Td0[S[b]] gives that column of b).
inline void aes_decrypt_keys(const uint32_t* tab, const uint32_t* rk, uint32_t rounds, uint32_t* drk) {
  for (uint32_t r = 0; r <= rounds; ++r)
    for (int c = 0; c < 4; ++c) drk[4 * r + c] = rk[4 * (rounds - r) + c];
  const uint32_t* td0 = tab + 256;
  for (uint32_t i = 4; i < 4 * rounds; ++i) {
    uint32_t w = drk[i];
    auto s = [tab](uint32_t b) { return (tab[b & 0xff] >> 16) & 0xff; };
    drk[i] = td0[s(w >> 24)] ^ rotr32(td0[s(w >> 16)], 8) ^ rotr32(td0[s(w >> 8)], 16) ^ rotr32(td0[s(w)], 24);
  }
}

SHOAL_HD void aes_decrypt(const uint32_t* tab, const uint32_t* drk, uint32_t rounds, const uint8_t* in, uint8_t* out) {
  const uint32_t* td0 = tab + 256;
  const uint8_t* si = reinterpret_cast<const uint8_t*>(tab + 512);
  uint32_t s0 = load_be32(in) ^ drk[0], s1 = load_be32(in + 4) ^ drk[1], s2 = load_be32(in + 8) ^ drk[2],
           s3 = load_be32(in + 12) ^ drk[3];
  auto col = [td0](uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return td0[a >> 24] ^ rotr32(td0[b >> 16 & 0xff], 8) ^ rotr32(td0[c >> 8 & 0xff], 16) ^ rotr32(td0[d & 0xff], 24);
  };
  for (uint32_t r = 1; r < rounds; ++r) {
    const uint32_t* k = drk + 4 * r;
    uint32_t t0 = col(s0, s3, s2, s1) ^ k[0], t1 = col(s1, s0, s3, s2) ^ k[1], t2 = col(s2, s1, s0, s3) ^ k[2],
             t3 = col(s3, s2, s1, s0) ^ k[3];
    s0 = t0, s1 = t1, s2 = t2, s3 = t3;
  }
  auto last = [si](uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return (uint32_t(si[a >> 24]) << 24) | (uint32_t(si[b >> 16 & 0xff]) << 16) | (uint32_t(si[c >> 8 & 0xff]) << 8) |
           si[d & 0xff];
  };
  const uint32_t* k = drk + 4 * rounds;
  store_be32(out, last(s0, s3, s2, s1) ^ k[0]);
  store_be32(out + 4, last(s1, s0, s3, s2) ^ k[1]);
  store_be32(out + 8, last(s2, s1, s0, s3) ^ k[2]);
  store_be32(out + 12, last(s3, s2, s1, s0) ^ k[3]);
}

// CBC (NIST SP 800-38A) over n bytes (whole blocks) in place.
SHOAL_HD void aes_cbc_encrypt(const uint32_t* tab, const EspKeys& k, const uint8_t* iv, uint8_t* d, uint32_t n) {
  const uint8_t* prev = iv;
  for (uint32_t off = 0; off < n; off += 16) {
    uint8_t x[16];
    for (int i = 0; i < 16; ++i) x[i] = uint8_t(d[off + i] ^ prev[i]);
    aes_encrypt(tab, k.rk, k.rounds, x, d + off);
    prev = d + off;
  }
}
SHOAL_HD void aes_cbc_decrypt(const uint32_t* tab, const EspKeys& k, const uint8_t* iv, uint8_t* d, uint32_t n) {
  uint8_t prev[16], c[16], x[16];
  for (int i = 0; i < 16; ++i) prev[i] = iv[i];
  for (uint32_t off = 0; off < n; off += 16) {
    for (int i = 0; i < 16; ++i) c[i] = d[off + i];
    aes_decrypt(tab, k.drk, k.rounds, c, x);
    for (int i = 0; i < 16; ++i) d[off + i] = uint8_t(x[i] ^ prev[i]), prev[i] = c[i];
  }
}

// XORs n bytes with the keystream of counter block `ctr` (its last 32 bits
// counting up from their value, as CTR and GCM's GCTR do).
SHOAL_HD void aes_ctr(const uint32_t* te0, const EspKeys& k, const uint8_t* ctr0, uint8_t* d, uint32_t n) {
  uint8_t ctr[16], ks[16];
  for (int i = 0; i < 16; ++i) ctr[i] = ctr0[i];
  uint32_t c = load_be32(ctr + 12);
  for (uint32_t off = 0; off < n; off += 16) {
    store_be32(ctr + 12, c++);
    aes_encrypt(te0, k.rk, k.rounds, ctr, ks);
    uint32_t m = n - off < 16 ? n - off : 16;
    for (uint32_t i = 0; i < m; ++i) d[off + i] ^= ks[i];
  }
}

// ---- GHASH (NIST SP 800-38D) with Shoup's 4-bit tables --------------------

inline void ghash_table(const uint8_t* h, uint64_t* hl, uint64_t* hh) {
  uint64_t vh = load_be64(h), vl = load_be64(h + 8);
  hl[0] = hh[0] = 0;
  hl[8] = vl, hh[8] = vh;
  for (int i = 4; i > 0; i >>= 1) {
    uint64_t t = (vl & 1) * 0xe1000000u;
    vl = (vh << 63) | (vl >> 1);
    vh = (vh >> 1) ^ (t << 32);
    hl[i] = vl, hh[i] = vh;
  }
  for (int i = 2; i <= 8; i *= 2)
    for (int j = 1; j < i; ++j) hh[i + j] = hh[i] ^ hh[j], hl[i + j] = hl[i] ^ hl[j];
}

// The reduction of the four bits shifted out: r times x^128 mod GCM's
// polynomial, as Shoup's last4 table holds it.
SHOAL_HD uint64_t ghash_last4(uint64_t r) {
  uint64_t x = 0;
  for (int b = 0; b < 4; ++b)
    if (r >> b & 1) x ^= uint64_t(0x1c20) << b;
  return x;
}

// y = y · X, X given by its 4-bit tables (ghash_table)
SHOAL_HD void ghash_mul_by(const uint64_t* tl, const uint64_t* th, uint8_t* y) {
  uint32_t lo = y[15] & 0xf;
  uint64_t zh = th[lo], zl = tl[lo];
  for (int i = 15; i >= 0; --i) {
    lo = y[i] & 0xf;
    uint32_t hi = y[i] >> 4 & 0xf;
    if (i != 15) {
      uint64_t rem = zl & 0xf;
      zl = (zh << 60) | (zl >> 4);
      zh = (zh >> 4) ^ (ghash_last4(rem) << 48) ^ th[lo];
      zl ^= tl[lo];
    }
    uint64_t rem = zl & 0xf;
    zl = (zh << 60) | (zl >> 4);
    zh = (zh >> 4) ^ (ghash_last4(rem) << 48) ^ th[hi];
    zl ^= tl[hi];
  }
  store_be64(y, zh);
  store_be64(y + 8, zl);
}

// y = y · H
SHOAL_HD void ghash_mul(const EspKeys& k, uint8_t* y) { ghash_mul_by(k.hl, k.hh, y); }

// The power tables of EspKeys (pl, ph) from H's (hl, hh): H^L by L - 1
// multiplications, then each the square of the one before.
inline void ghash_power_tables(const uint8_t* h, const uint64_t* hl, const uint64_t* hh, uint64_t (*pl)[16],
                               uint64_t (*ph)[16]) {
  uint8_t x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = h[i];
  for (uint32_t i = 1; i < kEspChunk; ++i) ghash_mul_by(hl, hh, x);
  for (int j = 0; j < kEspPowers; ++j) {
    ghash_table(x, pl[j], ph[j]);
    for (int i = 0; i < 16; ++i) y[i] = x[i];
    ghash_mul_by(pl[j], ph[j], y);  // x^2
    for (int i = 0; i < 16; ++i) x[i] = y[i];
  }
}

SHOAL_HD void ghash_update(const EspKeys& k, uint8_t* y, const uint8_t* d, uint32_t n) {
  for (uint32_t off = 0; off < n; off += 16) {
    uint32_t m = n - off < 16 ? n - off : 16;
    for (uint32_t i = 0; i < m; ++i) y[i] ^= d[off + i];
    ghash_mul(k, y);
  }
}

// ---- SHA-1 and SHA-256 (FIPS 180-4), for HMAC -----------------------------

SHOAL_HD_CALL void sha1_block(uint32_t* h, const uint8_t* b) {
  uint32_t w[16];
  for (int i = 0; i < 16; ++i) w[i] = load_be32(b + 4 * i);
  uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    if (i >= 16) w[i & 15] = rotl32(w[(i + 13) & 15] ^ w[(i + 8) & 15] ^ w[(i + 2) & 15] ^ w[i & 15], 1);
    uint32_t f, kk;
    if (i < 20)
      f = (bb & c) | (~bb & d), kk = 0x5a827999;
    else if (i < 40)
      f = bb ^ c ^ d, kk = 0x6ed9eba1;
    else if (i < 60)
      f = (bb & c) | (bb & d) | (c & d), kk = 0x8f1bbcdc;
    else
      f = bb ^ c ^ d, kk = 0xca62c1d6;
    uint32_t t = rotl32(a, 5) + f + e + kk + w[i & 15];
    e = d, d = c, c = rotl32(bb, 30), bb = a, a = t;
  }
  h[0] += a, h[1] += bb, h[2] += c, h[3] += d, h[4] += e;
}

SHOAL_HD_CALL void sha256_block(uint32_t* h, const uint8_t* b) {
  const uint32_t kk[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t w[16];
  for (int i = 0; i < 16; ++i) w[i] = load_be32(b + 4 * i);
  uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    if (i >= 16) {
      uint32_t w15 = w[(i + 1) & 15], w2 = w[(i + 14) & 15];
      w[i & 15] += (rotr32(w15, 7) ^ rotr32(w15, 18) ^ (w15 >> 3)) + w[(i + 9) & 15] +
                   (rotr32(w2, 17) ^ rotr32(w2, 19) ^ (w2 >> 10));
    }
    uint32_t t1 = hh + (rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)) + ((e & f) ^ (~e & g)) + kk[i] + w[i & 15];
    uint32_t t2 = (rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
    hh = g, g = f, f = e, e = d + t1, d = c, c = bb, bb = a, a = t1 + t2;
  }
  h[0] += a, h[1] += bb, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

// A hash in progress over data that starts after one 64-byte block (the
// HMAC key's block, already in `h`).
struct ShaRun {
  uint32_t h[8];
  uint8_t buf[64];
  uint32_t used;
  uint64_t total;  // bytes, the key block included
  bool sha256;
  SHOAL_HD void block(const uint8_t* b) {
    if (sha256)
      sha256_block(h, b);
    else
      sha1_block(h, b);
  }
  SHOAL_HD void start(const uint32_t* state, bool is256) {
    sha256 = is256;
    for (int i = 0; i < 8; ++i) h[i] = state[i];
    used = 0;
    total = 64;
  }
  SHOAL_HD void update(const uint8_t* d, uint32_t n) {
    total += n;
    while (n) {
      if (used == 0 && n >= 64) {
        block(d);
        d += 64, n -= 64;
        continue;
      }
      uint32_t m = 64 - used < n ? 64 - used : n;
      for (uint32_t i = 0; i < m; ++i) buf[used + i] = d[i];
      used += m, d += m, n -= m;
      if (used == 64) block(buf), used = 0;
    }
  }
  // The digest's bytes (20 or 32) into out.
  SHOAL_HD void finish(uint8_t* out) {
    uint64_t bits = total * 8;
    buf[used++] = 0x80;
    if (used > 56) {
      while (used < 64) buf[used++] = 0;
      block(buf), used = 0;
    }
    while (used < 56) buf[used++] = 0;
    store_be64(buf + 56, bits);
    block(buf);
    for (int i = 0; i < (sha256 ? 8 : 5); ++i) store_be32(out + 4 * i, h[i]);
  }
};

// HMAC over the ESP header, IV and text (and the sequence number's high half
// with ESN), truncated into icv.
SHOAL_HD_CALL void esp_hmac(const EspKeys& k, const uint8_t* esp, uint32_t len, uint64_t seq, uint8_t* icv) {
  const bool s256 = esp_sha256(k.suite);
  ShaRun r;
  r.start(k.inner, s256);
  r.update(esp, len);
  if (k.esn) {
    uint8_t hi[4];
    store_be32(hi, uint32_t(seq >> 32));
    r.update(hi, 4);
  }
  uint8_t d[32];
  r.finish(d);
  r.start(k.outer, s256);
  r.update(d, s256 ? 32 : 20);
  r.finish(d);
  for (uint32_t i = 0; i < k.icv_len; ++i) icv[i] = d[i];
}

// ---- GCM -------------------------------------------------------------------

// GCM's AAD block of an ESP packet (zero-padded): the SPI, then the
// sequence number (64 bits with ESN). Returns the AAD's bytes.
SHOAL_HD uint32_t esp_gcm_aad(const EspKeys& k, const uint8_t* esp, uint64_t seq, uint8_t* aad) {
  for (int i = 0; i < 16; ++i) aad[i] = 0;
  for (int i = 0; i < 4; ++i) aad[i] = esp[i];
  if (k.esn) {
    store_be32(aad + 4, uint32_t(seq >> 32));
    for (int i = 0; i < 4; ++i) aad[8 + i] = esp[4 + i];
    return 12;
  }
  for (int i = 0; i < 4; ++i) aad[4 + i] = esp[4 + i];
  return 8;
}

// GCM's tag from GHASH over the AAD and text (y, before the lengths'
// block): the lengths' block, then E(J0).
SHOAL_HD_CALL void esp_gcm_tag_end(const uint32_t* te0, const EspKeys& k, uint8_t* y, uint32_t aad_len,
                                   uint32_t text_len, const uint8_t* j0, uint8_t* tag) {
  uint8_t lens[16];
  store_be64(lens, uint64_t(aad_len) * 8);
  store_be64(lens + 8, uint64_t(text_len) * 8);
  ghash_update(k, y, lens, 16);
  uint8_t ek[16];
  aes_encrypt(te0, k.rk, k.rounds, j0, ek);
  for (uint32_t i = 0; i < k.icv_len; ++i) tag[i] = uint8_t(y[i] ^ ek[i]);
}

// The tag of a GCM packet whose text is `text` (ciphertext), into tag.
SHOAL_HD void esp_gcm_tag(const uint32_t* te0, const EspKeys& k, const uint8_t* esp, const uint8_t* text,
                          uint32_t text_len, uint64_t seq, const uint8_t* j0, uint8_t* tag) {
  uint8_t aad[16], y[16] = {};
  const uint32_t aad_len = esp_gcm_aad(k, esp, seq, aad);
  ghash_update(k, y, aad, 16);
  ghash_update(k, y, text, text_len);
  esp_gcm_tag_end(te0, k, y, aad_len, text_len, j0, tag);
}

// The first counter block: salt, IV, then 1 (GCM's J0, RFC 3686's first block).
SHOAL_HD void esp_counter0(const EspKeys& k, const uint8_t* iv, uint8_t* ctr) {
  for (int i = 0; i < 4; ++i) ctr[i] = k.salt[i];
  for (int i = 0; i < 8; ++i) ctr[4 + i] = iv[i];
  store_be32(ctr + 12, 1);
}

// ---- the transform ---------------------------------------------------------

// EspCipher::seal: writes the IV for `seq`, encrypts the text in place and
// writes the ICV after it. The SPI and the sequence number's low half are
// already in the header.
SHOAL_HD void esp_seal(const uint32_t* te0, const EspKeys& k, uint8_t* esp, uint32_t text_len, uint64_t seq) {
  uint8_t* iv = esp + 8;
  if (esp_cbc(k.suite)) {  // the IV: the sequence number encrypted (EspCipher's, NIST SP 800-38A Appendix C)
    uint8_t* text = esp + 24;
    uint8_t b[16] = {};
    store_be64(b, seq);
    b[8] = 'E', b[9] = 'S', b[10] = 'P';
    aes_encrypt(te0, k.rk, k.rounds, b, iv);
    aes_cbc_encrypt(te0, k, iv, text, text_len);
    esp_hmac(k, esp, 24 + text_len, seq, text + text_len);
    return;
  }
  uint8_t* text = esp + 16;
  store_be64(iv, seq);
  uint8_t ctr[16];
  esp_counter0(k, iv, ctr);
  if (k.suite == kEspGcm) {
    store_be32(ctr + 12, 2);
    aes_ctr(te0, k, ctr, text, text_len);
    store_be32(ctr + 12, 1);
    esp_gcm_tag(te0, k, esp, text, text_len, seq, ctr, text + text_len);
  } else {
    aes_ctr(te0, k, ctr, text, text_len);
    esp_hmac(k, esp, 16 + text_len, seq, text + text_len);
  }
}

// EspCipher::open: checks the ICV before anything is decrypted (GCM's tag
// too: GHASH runs over the ciphertext), then decrypts in place. false: the
// ICV does not match, and the packet is untouched.
SHOAL_HD bool esp_open(const uint32_t* te0, const EspKeys& k, uint8_t* esp, uint32_t text_len, uint64_t seq) {
  const uint8_t* iv = esp + 8;
  const bool cbc = esp_cbc(k.suite);
  uint8_t* text = esp + (cbc ? 24 : 16);
  uint8_t ctr[16], want[32];
  esp_counter0(k, iv, ctr);
  if (k.suite == kEspGcm)
    esp_gcm_tag(te0, k, esp, text, text_len, seq, ctr, want);
  else
    esp_hmac(k, esp, (cbc ? 24 : 16) + text_len, seq, want);
  uint8_t diff = 0;  // (every byte compared: no early exit on the first difference)
  for (uint32_t i = 0; i < k.icv_len; ++i) diff |= uint8_t(want[i] ^ text[text_len + i]);
  if (diff) return false;
  if (cbc) {
    aes_cbc_decrypt(te0, k, iv, text, text_len);
    return true;
  }
  if (k.suite == kEspGcm) store_be32(ctr + 12, 2);
  aes_ctr(te0, k, ctr, text, text_len);
  return true;
}

// ---- the outbound transform split among threads (a device's split step) ---
// NBA's GPU IPsec went a thread per 16-byte block; one thread per packet
// leaves most of a GPU idle and runs a 1400-byte packet's 88 blocks in turn.
// Here the text of a GCM or CTR packet is cut into chunks of kEspChunk
// blocks, counted from its end (for GCM the AAD's block comes first and
// belongs to the first chunk), so every chunk but the first is whole. Thread
// `s` of a packet encrypts its chunk in place (CTR's keystream: the counter
// is 1 + block for RFC 3686, 2 + block for GCM) and, for GCM, sums GHASH
// over its blocks by Horner's rule, moves the sum to its place (times
// H^(kEspChunk · chunks after it), by the squares in EspKeys::pl/ph) and
// XORs it into the packet's accumulator (GF(2^128) adds by XOR, so the
// order of the threads does not matter). esp_seal_end then finishes, once
// every thread of the packet has: GCM's tag from the accumulator, or the
// HMAC over the encrypted packet (a hash is sequential). The bytes are
// esp_seal's (tests/unit/ipsec_test.cc).

SHOAL_HD bool esp_split_suite(uint8_t suite) {
  return suite == kEspGcm || suite == kEspCtrSha1 || suite == kEspCtrSha256;
}

// The threads a packet of `text_len` bytes of text takes.
SHOAL_HD uint32_t esp_chunks(const EspKeys& k, uint32_t text_len) {
  const uint32_t m = (text_len + 15) / 16 + (k.suite == kEspGcm ? 1 : 0);
  return (m + kEspChunk - 1) / kEspChunk;
}

// y times H^(kEspChunk * c), by the squares in EspKeys::pl/ph.
SHOAL_HD void ghash_shift_chunks(const EspKeys& k, uint8_t* y, uint32_t c) {
  constexpr uint32_t top = 1u << (kEspPowers - 1);
  while (c >= 2 * top) ghash_mul_by(k.pl[kEspPowers - 1], k.ph[kEspPowers - 1], y), c -= top;
  for (int j = 0; j < kEspPowers; ++j)
    if (c >> j & 1) ghash_mul_by(k.pl[j], k.ph[j], y);
}

// Thread s's chunk of a GCM or CTR packet: `crypt` XORs CTR's keystream
// (from the IV in the packet) into its text, `hash` (GCM) sums GHASH over
// its ciphertext (after the XOR when both: sealing) and XORs the sum, moved
// to its place, into acc (the packet's 4 words, zero before its first
// thread).
SHOAL_HD void esp_chunk_work(const uint32_t* te0, const EspKeys& k, uint8_t* esp, uint32_t text_len, uint64_t seq,
                             uint32_t s, uint32_t* acc, bool crypt, bool hash) {
  const bool gcm = k.suite == kEspGcm;
  hash = hash && gcm;
  const uint32_t lead = gcm ? 1 : 0, m = (text_len + 15) / 16 + lead;
  const uint32_t chunks = (m + kEspChunk - 1) / kEspChunk;
  if (s >= chunks) return;
  const uint32_t after = chunks - 1 - s, e = m - after * kEspChunk, a = e > kEspChunk ? e - kEspChunk : 0;
  uint8_t* text = esp + 16;
  uint8_t ctr[16], ks[16], y[16] = {};
  esp_counter0(k, esp + 8, ctr);
  for (uint32_t b = a; b < e; ++b) {
    if (b < lead) {  // GCM's AAD
      if (!hash) continue;
      uint8_t aad[16];
      esp_gcm_aad(k, esp, seq, aad);
      for (int i = 0; i < 16; ++i) y[i] ^= aad[i];
      ghash_mul(k, y);
      continue;
    }
    const uint32_t j = b - lead, off = j * 16, n = text_len - off < 16 ? text_len - off : 16;
    if (crypt) {
      store_be32(ctr + 12, lead + 1 + j);
      aes_encrypt(te0, k.rk, k.rounds, ctr, ks);
      for (uint32_t i = 0; i < n; ++i) text[off + i] ^= ks[i];
    }
    if (hash) {
      for (uint32_t i = 0; i < n; ++i) y[i] ^= text[off + i];
      ghash_mul(k, y);
    }
  }
  if (!hash) return;
  ghash_shift_chunks(k, y, after);
  for (int w = 0; w < 4; ++w) {
    uint32_t v;
    __builtin_memcpy(&v, y + 4 * w, 4);
    atomic_xor32(acc + w, v);
  }
}

// Sealing, thread s's part (the IV for `seq` already in the packet).
SHOAL_HD void esp_seal_chunk(const uint32_t* te0, const EspKeys& k, uint8_t* esp, uint32_t text_len, uint64_t seq,
                             uint32_t s, uint32_t* acc) {
  esp_chunk_work(te0, k, esp, text_len, seq, s, acc, true, true);
}

// After every thread's part: the ICV behind the text.
SHOAL_HD void esp_seal_end(const uint32_t* te0, const EspKeys& k, uint8_t* esp, uint32_t text_len, uint64_t seq,
                           const uint32_t* acc) {
  uint8_t* text = esp + 16;
  if (k.suite != kEspGcm) return esp_hmac(k, esp, 16 + text_len, seq, text + text_len);
  uint8_t y[16], aad[16], iv[8], j0[16];
  __builtin_memcpy(y, acc, 16);
  const uint32_t aad_len = esp_gcm_aad(k, esp, seq, aad);
  store_be64(iv, seq);
  esp_counter0(k, iv, j0);
  esp_gcm_tag_end(te0, k, y, aad_len, text_len, j0, text + text_len);
}

// ---- the inbound transform split among threads -------------------------------
// The same chunks, in three passes, so nothing is decrypted before the ICV
// matched (RFC 4303 §3.4.4): esp_open_chunk, thread s of a GCM packet sums
// GHASH over its chunk of the ciphertext into acc; esp_open_check, once per
// packet after every thread, compares the ICV (GCM's tag from acc; the HMAC
// over the packet, sequential); esp_open_crypt_chunk, for a packet that
// matched, thread s decrypts its chunk in place. The bytes and verdicts are
// esp_open's (tests/unit/ipsec_test.cc).

SHOAL_HD void esp_open_chunk(const uint32_t* te0, const EspKeys& k, uint8_t* esp, uint32_t text_len, uint64_t seq,
                             uint32_t s, uint32_t* acc) {
  esp_chunk_work(te0, k, esp, text_len, seq, s, acc, false, true);
}

// Whether the ICV matches with the sequence number seq (next_epoch: seq +
// 2^32, ESN's other guess; acc summed with seq's AAD, which with ESN holds
// the high half: the difference moved to the AAD block's place is XORed
// in). Nothing is changed.
SHOAL_HD bool esp_open_check(const uint32_t* te0, const EspKeys& k, const uint8_t* esp, uint32_t text_len, uint64_t seq,
                             const uint32_t* acc, bool next_epoch) {
  const uint64_t s2 = next_epoch ? seq + (uint64_t(1) << 32) : seq;
  const uint8_t* text = esp + 16;
  uint8_t want[32];
  if (k.suite == kEspGcm) {
    uint8_t y[16], aad[16], j0[16];
    __builtin_memcpy(y, acc, 16);
    const uint32_t aad_len = esp_gcm_aad(k, esp, s2, aad);
    if (next_epoch && k.esn) {  // y ^= (AAD(seq) ^ AAD(s2)) * H^m, m the blocks from the AAD's on
      uint8_t d[16];
      esp_gcm_aad(k, esp, seq, d);
      for (int i = 0; i < 16; ++i) d[i] ^= aad[i];
      const uint32_t m = (text_len + 15) / 16 + 1;
      for (uint32_t i = 0; i < m % kEspChunk; ++i) ghash_mul(k, d);
      ghash_shift_chunks(k, d, m / kEspChunk);
      for (int i = 0; i < 16; ++i) y[i] ^= d[i];
    }
    esp_counter0(k, esp + 8, j0);
    esp_gcm_tag_end(te0, k, y, aad_len, text_len, j0, want);
  } else {
    esp_hmac(k, esp, 16 + text_len, s2, want);
  }
  uint8_t diff = 0;  // (every byte compared: no early exit on the first difference)
  for (uint32_t i = 0; i < k.icv_len; ++i) diff |= uint8_t(want[i] ^ text[text_len + i]);
  return diff == 0;
}

SHOAL_HD void esp_open_crypt_chunk(const uint32_t* te0, const EspKeys& k, uint8_t* esp, uint32_t text_len, uint32_t s) {
  esp_chunk_work(te0, k, esp, text_len, 0, s, nullptr, true, false);
}

// ---- outbound packets: the layout around the transform ----------------------

// What the host decided for one outbound packet (a pre-function block): the
// device lays the packet out and seals it, or only gives it the result the
// host chose.
struct EspJob {
  int32_t action;      // kEspSeal, kEspHost, or a result (an output port, or -1 - drop reason)
  uint32_t sa;         // the SA's index in the key table
  uint64_t seq;        // its sequence number
  uint16_t hdr;        // transport mode: the IP header's bytes, kept in front of ESP
  uint16_t trim;       // link-layer padding behind the IP packet, taken off first
  uint16_t ip_id;      // a tunnel's outer IPv4 ID
  uint8_t pad, nh;     // padding bytes; the next header (4, 41, or the transport protocol)
  uint8_t tos, outer;  // DSCP/ECN copied; the outer header: 0 (transport), 4 or 6 (tunnel)
  uint8_t ttl, unused_;
};
constexpr int32_t kEspSeal = INT32_MIN, kEspHost = INT32_MIN + 1, kEspOpen = INT32_MIN + 2;

// What the host decided for one inbound packet: the device checks its ICV
// and decrypts it in place (kEspOpen), or gives it the host's result.
struct EspInJob {
  int32_t action;     // kEspOpen, kEspHost, or a result
  uint32_t sa;        // the SA's index in the key table
  uint64_t seq;       // the sequence number, 64 bits (ESN's high half inferred)
  uint32_t text_len;  // bytes between the IV and the ICV
  uint16_t hdr;       // the outer IP header's bytes (the ESP header follows)
  uint16_t trim;      // link-layer padding behind the packet (taken off by the host)
  // ESN: when the ICV does not match with seq, try seq + 2^32. The host
  // inferred the high half from the window as it was before this aggregate,
  // and earlier packets of the aggregate may move the window into the next
  // epoch (which can only raise the high half by one); the host then checks
  // the number that authenticated against the window, in order.
  uint8_t try_next_epoch;
  uint8_t unused_[7];
};

// Lays out an outbound ESP packet in place. `start` is its new first byte,
// `front` bytes before the old one (the new outer header, if any, and the
// ESP header and IV); transport mode moves the old IP header (`hdr` bytes)
// to the front. `inner` bytes follow the IV (`ivl` bytes); the padding and
// the trailer go behind them (the room for them and the ICV is there).
// Returns the ESP header.
SHOAL_HD uint8_t* esp_layout(uint8_t* start, uint32_t front, uint32_t hdr, uint32_t outer, uint32_t ivl, uint32_t inner,
                             uint32_t pad, uint8_t nh, uint32_t spi, uint32_t seq_lo) {
  for (uint32_t i = 0; i < hdr; ++i) start[i] = start[front + i];  // (forward: the source is ahead)
  uint8_t* esp = start + outer;
  store_be32(esp, spi);
  store_be32(esp + 4, seq_lo);
  uint8_t* t = esp + 8 + ivl + inner;
  for (uint32_t i = 0; i < pad; ++i) t[i] = uint8_t(i + 1);  // RFC 4303 §2.4's default padding
  t[pad] = uint8_t(pad);
  t[pad + 1] = nh;
  return esp;
}

// The IP header in front of a sealed ESP packet of `total` bytes: a tunnel's
// new outer header (family 4 or 6: the SA's addresses, DSCP/ECN copied, TTL,
// an IPv4 ID), or transport mode's own (family 0); protocol 50 (17 for ESP
// in UDP), lengths and the IPv4 checksum.
SHOAL_HD void esp_outer_header(uint8_t* ip, uint8_t family, const uint8_t* src, const uint8_t* dst, uint8_t tos,
                               uint8_t ttl, uint16_t id, uint32_t total, uint8_t proto = 50) {
  if (family == 4) {
    ip[0] = 0x45;
    ip[1] = tos;
    store_be16(ip + 2, uint16_t(total));
    store_be16(ip + 4, id);
    store_be16(ip + 6, 0);
    ip[8] = ttl;
    ip[9] = proto;
    uint32_t sa, da;  // one store each (the next step reads the destination back whole)
    __builtin_memcpy(&sa, src, 4);
    __builtin_memcpy(&da, dst, 4);
    __builtin_memcpy(ip + 12, &sa, 4);
    __builtin_memcpy(ip + 16, &da, 4);
    // the checksum from the values, not read back from the bytes just stored
    // one by one (wider loads of them wait for the stores to retire)
    uint32_t sum = 0x4500u + tos + uint32_t(total & 0xffff) + id + (uint32_t(ttl) << 8) + proto + load_be16(src) +
                   load_be16(src + 2) + load_be16(dst) + load_be16(dst + 2);
    store_be16(ip + 10, csum_fold(sum));
    return;
  } else if (family == 6) {
    store_be32(ip, (6u << 28) | (uint32_t(tos) << 20));
    ip[7] = ttl;
    for (int i = 0; i < 16; ++i) ip[8 + i] = src[i], ip[24 + i] = dst[i];
  }
  if ((ip[0] >> 4) == 4) {
    ip[9] = proto;
    store_be16(ip + 2, uint16_t(total));
    set_ipv4_header_checksum(ip, uint32_t(ip[0] & 0xf) * 4);
  } else {
    ip[6] = proto;
    store_be16(ip + 4, uint16_t(total - 40));
  }
}

// The UDP header of ESP in UDP (RFC 3948 §2.1), between the IP header
// (`outer` bytes at `ip`) and the sealed ESP packet, `total` bytes in all:
// the SA's ports; checksum 0 over IPv4 (as RFC 3948 says to send),
// computed over IPv6 (RFC 8200 §8.1), so after sealing.
SHOAL_HD void esp_udp_header(uint8_t* ip, uint32_t outer, uint16_t sport, uint16_t dport, uint32_t total) {
  uint8_t* u = ip + outer;
  const uint32_t len = total - outer;
  store_be16(u, sport);
  store_be16(u + 2, dport);
  store_be16(u + 4, uint16_t(len));
  store_be16(u + 6, 0);
  if ((ip[0] >> 4) != 6) return;
  uint32_t sum = csum_partial(ip + 8, 32);  // source and destination
  sum += len + 17;
  uint16_t c = csum_fold(csum_partial(u, len, sum));
  store_be16(u + 6, c ? c : 0xffff);
}

// ---- per SA, on the host ---------------------------------------------------

// An HMAC key's inner and outer states (RFC 2104: a key longer than a block
// is hashed first).
inline void esp_hmac_states(const uint8_t* key, uint32_t len, bool sha256, uint32_t* inner, uint32_t* outer) {
  static const uint32_t iv1[8] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0, 0, 0, 0};
  static const uint32_t iv256[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t digest[32];
  if (len > 64) {
    ShaRun r;
    r.start(sha256 ? iv256 : iv1, sha256);
    r.total = 0;
    r.update(key, len);
    r.finish(digest);
    key = digest, len = sha256 ? 32 : 20;
  }
  uint8_t pad[64];
  for (int which = 0; which < 2; ++which) {
    uint32_t* st = which ? outer : inner;
    for (int i = 0; i < 8; ++i) st[i] = sha256 ? iv256[i] : iv1[i];
    for (uint32_t i = 0; i < 64; ++i) pad[i] = uint8_t((i < len ? key[i] : 0) ^ (which ? 0x5c : 0x36));
    if (sha256)
      sha256_block(st, pad);
    else
      sha1_block(st, pad);
  }
}

}  // namespace shoal::k

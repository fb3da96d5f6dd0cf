#include "shoal/flow/tls.hh"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "shoal/flow/digest.hh"
#include "shoal/ids/rules.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal::flow {

namespace {

constexpr uint32_t kMaxRecord = 18 * 1024;    // 2^14 plus expansion (RFC 8446 5.2), with slack
constexpr uint32_t kMaxMessage = 256 * 1024;  // a handshake message (certificate chains)
constexpr size_t kMaxCerts = 16;

uint32_t be24(const uint8_t* p) { return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]; }
// The handshake messages Suricata's parser knows (RFC 5246, 6066, 4507):
// hello_request, client_hello, server_hello, new_session_ticket,
// certificate, server_key_exchange, certificate_request, server_hello_done,
// certificate_verify, client_key_exchange, finished, certificate_url,
// certificate_status.
bool known_handshake(uint8_t t) { return t <= 2 || t == 4 || (t >= 11 && t <= 16) || (t >= 20 && t <= 22); }

// A bounds-checked reader over a message.
struct Reader {
  const uint8_t* p;
  uint32_t n, at = 0;
  bool ok = true;
  bool need(uint32_t k) { return ok = ok && at + k <= n; }
  uint8_t u8() { return need(1) ? p[at++] : 0; }
  uint16_t u16() {
    if (!need(2)) return 0;
    at += 2;
    return k::load_be16(p + at - 2);
  }
  uint32_t u24() {
    if (!need(3)) return 0;
    at += 3;
    return be24(p + at - 3);
  }
  Reader sub(uint32_t k) {  // the next k bytes, skipped here
    Reader r{p, 0};
    if (!need(k)) return r;
    r = Reader{p + at, k};
    at += k;
    return r;
  }
  std::string str(uint32_t k) {
    if (!need(k)) return {};
    at += k;
    return std::string(reinterpret_cast<const char*>(p + at - k), k);
  }
  bool end() const { return at >= n; }
};

// Calls f(type, data) for each extension of a hello's extension block (the
// rest of r), stopping at one cut short.
template <class F>
void each_extension(Reader& r, F f) {
  if (r.end()) return;
  Reader ex = r.sub(r.u16());
  while (ex.ok && !ex.end()) {
    uint16_t et = ex.u16();
    Reader e = ex.sub(ex.u16());
    if (!ex.ok) break;
    f(et, e);
  }
}

template <class T>
std::string join(const std::vector<T>& v, const char* sep, bool skip_grease) {
  std::string s;
  for (T x : v) {
    if (skip_grease && tls_grease(uint16_t(x))) continue;
    if (!s.empty()) s += sep;
    s += std::to_string(x);
  }
  return s;
}

std::string name_text(const X509_NAME* nm) {
  // "C=US, O=Example, CN=example.com": every entry in order, as Suricata
  std::string s;
  for (int i = 0, n = X509_NAME_entry_count(nm); i < n; ++i) {
    const X509_NAME_ENTRY* e = X509_NAME_get_entry(nm, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
    const char* sn = nid != NID_undef ? OBJ_nid2sn(nid) : nullptr;
    char oid[80];
    if (!sn) {
      OBJ_obj2txt(oid, sizeof oid, X509_NAME_ENTRY_get_object(e), 1);
      sn = oid;
    }
    const ASN1_STRING* v = X509_NAME_ENTRY_get_data(e);
    if (!s.empty()) s += ", ";
    s += sn;
    s += '=';
    s.append(reinterpret_cast<const char*>(ASN1_STRING_get0_data(v)), size_t(ASN1_STRING_length(v)));
  }
  return s;
}

std::string time_text(const ASN1_TIME* t) {
  struct tm tm {};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return {};
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// Whether the length octets of a certificate's DER header, or of its
// tbsCertificate's inside it, run past the bytes there are (a header cut
// short, rather than contents that do not parse).
bool der_header_cut(const uint8_t* d, uint32_t n) {
  uint32_t at = 0;
  for (int depth = 0; depth < 2; ++depth) {
    if (n - at < 2) return true;
    uint32_t len = d[at + 1];
    at += 2;
    if (len & 0x80) {
      uint32_t k = len & 0x7f;
      if (k > n - at) return true;
      uint64_t l = 0;
      for (uint32_t i = 0; i < k; ++i) l = l << 8 | d[at + i];
      at += k;
      len = uint32_t(std::min<uint64_t>(l, n - at));
    }
    n = at + std::min(len, n - at);  // the next header is inside these contents
  }
  return false;
}

bool parse_cert(const uint8_t* d, uint32_t n, TlsCert& c) {
  const unsigned char* p = d;
  X509* x = d2i_X509(nullptr, &p, long(n));
  c.der.assign(reinterpret_cast<const char*>(d), n);
  unsigned char sha1[20];
  EVP_Digest(d, n, sha1, nullptr, EVP_sha1(), nullptr);
  for (int i = 0; i < 20; ++i) c.fingerprint += fmt::format("{}{:02x}", i ? ":" : "", sha1[i]);
  if (!x) return false;
  c.subject = name_text(X509_get_subject_name(x));
  c.issuer = name_text(X509_get_issuer_name(x));
  // the serial's bytes as DER has them (a leading 00 when the top bit is set)
  const ASN1_INTEGER* sn = X509_get0_serialNumber(x);
  std::string bytes(reinterpret_cast<const char*>(ASN1_STRING_get0_data(sn)), size_t(ASN1_STRING_length(sn)));
  if (!bytes.empty() && (uint8_t(bytes[0]) & 0x80)) bytes.insert(bytes.begin(), '\0');
  for (size_t i = 0; i < bytes.size(); ++i) c.serial += fmt::format("{}{:02X}", i ? ":" : "", uint8_t(bytes[i]));
  c.not_before = time_text(X509_get0_notBefore(x));
  c.not_after = time_text(X509_get0_notAfter(x));
  if (auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x, NID_subject_alt_name, nullptr, nullptr))) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
      const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, i);
      if (g->type != GEN_DNS) continue;
      const ASN1_STRING* s = g->d.dNSName;
      c.san.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), size_t(ASN1_STRING_length(s)));
    }
    GENERAL_NAMES_free(names);
  }
  X509_free(x);
  return true;
}

// JA4's version code of a protocol version.
const char* ja4_version(uint16_t v) {
  switch (v) {
    case 0x0304: return "13";
    case 0x0303: return "12";
    case 0x0302: return "11";
    case 0x0301: return "10";
    case 0x0300: return "s3";
    case 0x0002: return "s2";
    default: return "00";
  }
}

std::string ja4(const TlsInfo& t) {
  uint16_t ver = t.client_version;
  for (uint16_t v : t.versions)
    if (!tls_grease(v) && v > ver) ver = v;
  auto count = [](size_t n) { return fmt::format("{:02d}", std::min<size_t>(n, 99)); };
  std::vector<uint16_t> ciphers, exts;
  for (uint16_t c : t.ciphers)
    if (!tls_grease(c)) ciphers.push_back(c);
  size_t next = 0;
  for (uint16_t e : t.extensions) {
    if (tls_grease(e)) continue;
    ++next;
    if (e != 0x0000 && e != 0x0010) exts.push_back(e);
  }
  std::string alpn = "00";
  if (!t.alpn.empty() && !t.alpn[0].empty()) {
    const std::string& a = t.alpn[0];
    unsigned char f = uint8_t(a.front()), l = uint8_t(a.back());
    if (std::isalnum(f) && std::isalnum(l))
      alpn = {char(f), char(l)};
    else
      alpn = fmt::format("{:x}{:x}", f >> 4, l & 0xf);
  }
  std::string a =
      fmt::format("t{}{}{}{}{}", ja4_version(ver), t.sni.empty() ? 'i' : 'd', count(ciphers.size()), count(next), alpn);
  auto hexlist = [](std::vector<uint16_t> v, bool sort) {
    if (sort) std::sort(v.begin(), v.end());
    std::string s;
    for (uint16_t x : v) s += fmt::format("{}{:04x}", s.empty() ? "" : ",", x);
    return s;
  };
  std::string b = ciphers.empty() ? "000000000000" : hex_digest(EVP_sha256(), hexlist(ciphers, true), 12);
  std::string ext = hexlist(exts, true);
  std::vector<uint16_t> sigs;
  for (uint16_t s : t.sig_algs)
    if (!tls_grease(s)) sigs.push_back(s);
  if (!sigs.empty()) ext += "_" + hexlist(sigs, false);
  std::string c = exts.empty() ? "000000000000" : hex_digest(EVP_sha256(), ext, 12);
  return a + "_" + b + "_" + c;
}

}  // namespace

bool tls_grease(uint16_t v) { return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff); }

std::string TlsInfo::version_text() const {
  uint16_t v = server_hello ? selected_version : client_hello ? client_version : 0;
  switch (v) {
    case 0x0002: return "SSLv2";
    case 0x0300: return "SSLv3";
    case 0x0301: return "TLSv1";  // (Suricata's name for 1.0)
    case 0x0302: return "TLS 1.1";
    case 0x0303: return "TLS 1.2";
    case 0x0304: return "TLS 1.3";
    default: return "UNDETERMINED";
  }
}

int tls_detect(const uint8_t* d, uint32_t n) {
  if (n >= 1 && (d[0] & 0x80)) {  // SSLv2's 2-byte header, a CLIENT-HELLO of version 2.0 or 3.x
    if (n >= 3 && d[2] != 1) return 0;
    if (n >= 4 && d[3] != 3 && d[3] != 0) return 0;
    if (n >= 5 && d[3] == 0 && d[4] != 2) return 0;
    return n >= 5 ? 1 : -1;
  }
  if (n >= 1 && d[0] != 0x16) return 0;
  if (n >= 2 && d[1] != 0x03) return 0;
  if (n >= 3 && d[2] > 0x04) return 0;
  return n >= 5 ? 1 : -1;
}

void TlsConn::event(uint8_t e) {
  uint64_t bit = uint64_t(1) << e;
  if (info_.events & bit) return;
  info_.events |= bit;
  fire(kEvent);
}

void TlsConn::anomaly(uint8_t dir) {
  ++info_.anomalies;
  c_.anomalies.add();
  dir_[dir].broken = true;
  dir_[dir].rec.clear();
  dir_[dir].hs.clear();
}

void TlsConn::data(uint8_t dir, const uint8_t* d, uint32_t n) {
  Dir& s = dir_[dir];
  // Suricata's guard on its record loop: more records begun or continued
  // in one segment than records of 6 bytes (a header and one byte) could
  // fill, past one more, is an error (runs of empty records)
  const uint32_t most = std::max<uint32_t>(n / 6, 1) + 1;
  uint32_t records = 0;
  bool begin = true;
  while (n && !s.broken) {
    if (s.rec.empty() || begin) {
      if (++records > most) {
        event(ids::kTlsTooManyRecordsInPacket);
        return anomaly(dir);
      }
      if (s.rec.empty()) {
        // SSLv2's records (a top bit set: no TLS type is above 24): the
        // client's first, and both sides' after an SSLv2 start
        s.v2 = (d[0] & 0x80) && (v2_ || (dir == 0 && s.first));
        if (s.v2 && dir == 0 && s.first) v2_ = true;
      }
    }
    begin = false;
    if (s.v2) {
      // SSLv2's record (RFC 5246 E.2): a 15-bit length with the top bit set
      uint32_t want = s.rec.size() < 2 ? 2 : 2 + ((s.rec[0] & 0x7fu) << 8 | s.rec[1]);
      uint32_t take = std::min<uint32_t>(n, want - uint32_t(s.rec.size()));
      s.rec.insert(s.rec.end(), d, d + take);
      d += take, n -= take;
      if (s.rec.size() < 2) continue;
      uint32_t whole = 2 + ((s.rec[0] & 0x7fu) << 8 | s.rec[1]);
      if (s.rec.size() < whole) continue;
      bool first = s.first;
      s.v2 = s.first = false;
      v2_record(dir, first, s.rec.data() + 2, whole - 2);
      s.rec.clear();
      continue;
    }
    // a record's header, then its body
    uint32_t want = s.rec.size() < 5 ? 5 : 5 + k::load_be16(s.rec.data() + 3);
    uint32_t take = std::min<uint32_t>(n, want - uint32_t(s.rec.size()));
    s.rec.insert(s.rec.end(), d, d + take);
    d += take, n -= take;
    if (s.rec.size() == 5) {
      s.first = false;
      uint8_t type = s.rec[0];
      uint16_t len = k::load_be16(s.rec.data() + 3);
      int bad = type < 20 || type > 24 ? ids::kTlsInvalidRecordType
                : s.rec[1] != 3        ? ids::kTlsInvalidRecordVersion
                : len > kMaxRecord     ? ids::kTlsInvalidRecordLength
                                       : -1;
      if (bad >= 0) {
        event(uint8_t(bad));
        event(ids::kTlsInvalidTlsHeader);
        return anomaly(dir);
      }
      if (len == 0) s.rec.clear();
      continue;
    }
    if (s.rec.size() < 5 || s.rec.size() < 5u + k::load_be16(s.rec.data() + 3)) continue;
    record(dir, s.rec[0], s.rec.data() + 5, uint32_t(s.rec.size() - 5));
    s.rec.clear();
  }
}

// An SSLv2 record (its message type first): the client's first must be a
// CLIENT-HELLO; an ERROR (a side refusing the session, say for its
// version) is an event on either side; the others (SERVER-HELLO, the keys,
// and what is encrypted) are read past.
void TlsConn::v2_record(uint8_t dir, bool first, const uint8_t* d, uint32_t n) {
  if (n == 0) {
    event(ids::kTlsInvalidSslv2Header);
    return anomaly(dir);
  }
  if (d[0] == 0) return event(ids::kTlsErrorMessageEncountered);
  if (!(dir == 0 && first)) return;
  if (d[0] == 1 && n < 7) {  // shorter than a CLIENT-HELLO's fixed fields
    event(ids::kTlsInvalidSslRecord);
    return anomaly(dir);
  }
  v2_hello(d, n);
}

// An SSLv2-format CLIENT-HELLO (SSL 2.0's, or RFC 5246 Appendix E.2's from a
// client that also speaks TLS): its version is the client's, its cipher
// specs of the form 00 XX YY are TLS suites, its challenge is the right of
// the random. (No JA3 or JA4: they are defined on TLS's ClientHello.)
void TlsConn::v2_hello(const uint8_t* d, uint32_t n) {
  Reader r{d, n};
  auto bad = [&] {
    event(ids::kTlsInvalidSslv2Header);
    anomaly(0);
  };
  if (r.u8() != 1) return bad();
  TlsInfo& t = info_;
  uint16_t version = r.u16(), cs_len = r.u16(), sid_len = r.u16(), ch_len = r.u16();
  if (!r.ok || cs_len % 3 || ch_len < 16 || ch_len > 32) return bad();
  Reader cs = r.sub(cs_len);
  r.sub(sid_len);
  std::string challenge = r.str(ch_len);
  if (!r.ok || !r.end()) return bad();
  while (cs.ok && !cs.end()) {
    uint8_t k = cs.u8();
    uint16_t suite = cs.u16();
    if (k == 0) t.ciphers.push_back(suite);
  }
  t.client_version = version;
  t.client_random = std::string(32 - ch_len, '\0') + challenge;
  t.client_hello = true;
  fire(kClientHello);
}

void TlsConn::record(uint8_t dir, uint8_t type, const uint8_t* d, uint32_t n) {
  Dir& s = dir_[dir];
  if (type == 20) {  // ChangeCipherSpec: this direction encrypts from here
    info_.encrypted[dir] = true;
  } else if (type == 23) {
    info_.encrypted[dir] = true;
  } else if (type == 24) {
    heartbeat(dir, d, n);
  } else if (type == 22 && !info_.encrypted[dir]) {
    s.hs.insert(s.hs.end(), d, d + n);
    size_t at = 0;
    while (s.hs.size() - at >= 4) {
      uint32_t len = be24(s.hs.data() + at + 1);
      if (len > kMaxMessage) {
        event(ids::kTlsHandshakeInvalidLength);
        return anomaly(dir);
      }
      if (s.hs.size() - at < 4 + len) break;
      if (!known_handshake(s.hs[at])) event(ids::kTlsInvalidHandshakeMessage);
      handshake(dir, s.hs[at], s.hs.data() + at + 4, len);
      at += 4 + len;
      if (s.broken) return;
    }
    // a message's header split between records: legal in TLS, an error to
    // Suricata's parser (which buffers bodies, not headers)
    if (s.hs.size() - at > 0 && s.hs.size() - at < 4) {
      event(ids::kTlsInvalidSslRecord);
      return anomaly(dir);
    }
    s.hs.erase(s.hs.begin(), s.hs.begin() + std::ptrdiff_t(at));
  }
  // the handshake is done once both directions encrypt (or TLS 1.3's
  // server did, its certificate being encrypted)
  bool done = info_.encrypted[0] && info_.encrypted[1];
  if (done && !done_) {
    done_ = true;
    fire(kHandshakeDone);
  }
}

// RFC 6520: a type (1 request, 2 response), a payload length, the payload
// and at least 16 bytes of padding. Read in the clear; once the direction
// encrypts, a request and its echo have records of the same length.
void TlsConn::heartbeat(uint8_t dir, const uint8_t* d, uint32_t n) {
  event(ids::kTlsHeartbeatMessage);
  if (!info_.encrypted[dir]) {
    if (n < 3 || (d[0] != 1 && d[0] != 2)) return event(ids::kTlsInvalidHeartbeatMessage);
    if (uint32_t(k::load_be16(d + 1)) + 3 + 16 > n) event(ids::kTlsOverflowHeartbeatMessage);
    return;
  }
  uint8_t other = dir ^ 1;
  if (heartbeat_len_[other]) {  // the answer to the other side's
    if (n != heartbeat_len_[other]) event(ids::kTlsDataleakHeartbeatMismatch);
    heartbeat_len_[other] = 0;
  } else {
    heartbeat_len_[dir] = n;
  }
}

void TlsConn::handshake(uint8_t dir, uint8_t type, const uint8_t* d, uint32_t n) {
  Reader r{d, n};
  if (type == 1 && dir == 0 && !info_.client_hello) {  // ClientHello
    TlsInfo& t = info_;
    t.client_version = r.u16();
    t.client_random = r.str(32);
    t.client_session_id = r.str(r.u8());
    Reader cs = r.sub(r.u16());
    while (cs.ok && !cs.end()) t.ciphers.push_back(cs.u16());
    r.sub(r.u8());
    if (!r.ok) {
      event(ids::kTlsInvalidHandshakeMessage);
      return anomaly(dir);
    }
    bool sni_seen = false;
    each_extension(r, [&](uint16_t et, Reader& e) {
      t.extensions.push_back(et);
      if (et == 0 && e.n) {  // server_name: the first host_name
        // (one extension, whose first name is a host name of 1 to 255
        // bytes, as Suricata checks it)
        int bad = sni_seen ? ids::kTlsMultipleSniExtensions : -1;
        sni_seen = true;
        Reader l = e.sub(e.u16());
        for (bool first = true; bad < 0 && l.ok && !l.end(); first = false) {
          uint8_t nt = l.u8();
          uint16_t len = l.u16();
          std::string host = l.str(len);
          if (first && nt != 0) bad = ids::kTlsInvalidSniType;
          if (first && (!l.ok || len == 0 || len > 255)) bad = ids::kTlsInvalidSniLength;
          if (l.ok && nt == 0 && t.sni.empty()) t.sni = host;
        }
        if (bad >= 0) {
          event(uint8_t(bad));
          event(ids::kTlsInvalidHandshakeMessage);
        }
      } else if (et == 10) {
        Reader l = e.sub(e.u16());
        while (l.ok && !l.end()) t.groups.push_back(l.u16());
      } else if (et == 11) {
        Reader l = e.sub(e.u8());
        while (l.ok && !l.end()) t.point_formats.push_back(l.u8());
      } else if (et == 13) {
        Reader l = e.sub(e.u16());
        while (l.ok && !l.end()) t.sig_algs.push_back(l.u16());
      } else if (et == 16) {
        Reader l = e.sub(e.u16());
        while (l.ok && !l.end()) {
          std::string p = l.str(l.u8());
          if (l.ok) t.alpn.push_back(p);
        }
      } else if (et == 43) {
        Reader l = e.sub(e.u8());
        while (l.ok && !l.end()) t.versions.push_back(l.u16());
      }
    });
    t.client_hello = true;
    t.ja3 = fmt::format("{},{},{},{},{}", t.client_version, join(t.ciphers, "-", true), join(t.extensions, "-", true),
                        join(t.groups, "-", true), join(t.point_formats, "-", false));
    t.ja3_hash = hex_digest(EVP_md5(), t.ja3);
    t.ja4 = ja4(t);
    fire(kClientHello);
  } else if (type == 2 && dir == 1 && !info_.server_hello) {  // ServerHello
    TlsInfo& t = info_;
    t.server_version = t.selected_version = r.u16();
    t.server_random = r.str(32);
    std::string session_id = r.str(r.u8());
    t.cipher = r.u16();
    r.u8();
    if (!r.ok) {
      event(ids::kTlsInvalidHandshakeMessage);
      return anomaly(dir);
    }
    each_extension(r, [&](uint16_t et, Reader& e) {
      t.server_extensions.push_back(et);
      if (et == 43 && e.n == 2) t.selected_version = e.u16();
    });
    t.server_hello = true;
    t.session_resumed = !session_id.empty() && session_id == t.client_session_id && t.selected_version != 0x0304;
    t.ja3s = fmt::format("{},{},{}", t.server_version, t.cipher, join(t.server_extensions, "-", true));
    t.ja3s_hash = hex_digest(EVP_md5(), t.ja3s);
    // TLS 1.3: what follows from the server is encrypted
    if (t.selected_version == 0x0304) info_.encrypted[1] = true;
    fire(kServerHello);
  } else if (type == 12 && dir == 1) {
    fire(kServerKeyx);
  } else if (type == 16 && dir == 0) {
    fire(kClientKeyx);
  } else if (type == 11) {  // Certificate (TLS 1.3's are encrypted: not seen)
    std::vector<TlsCert>& out = dir == 1 ? info_.certs : info_.client_certs;
    if (!out.empty()) return;
    Reader l = r.sub(r.u24());
    while (l.ok && !l.end() && out.size() < kMaxCerts) {
      uint32_t len = l.u24();
      if (!l.need(len)) break;
      TlsCert c;
      if (!parse_cert(l.p + l.at, len, c)) {
        event(der_header_cut(l.p + l.at, len) ? ids::kTlsCertificateInvalidLength : ids::kTlsInvalidCertificate);
        event(ids::kTlsInvalidHandshakeMessage);
      }
      l.at += len;
      out.push_back(std::move(c));
    }
    if (!l.ok) {
      ++info_.anomalies;
      event(ids::kTlsInvalidHandshakeMessage);
    }
    fire(kCertificate);
  }
}

}  // namespace shoal::flow

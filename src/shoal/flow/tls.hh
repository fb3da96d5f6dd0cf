// TLS over a connection's reassembled streams, as an IDS reads it: the
// record layer of each direction, the handshake messages in the clear
// (ClientHello, ServerHello, Certificate), and what detection and Suricata's
// EVE take from them: SNI, versions, the certificates' subject, issuer,
// serial, fingerprint and validity (OpenSSL parses the DER), and the
// JA3, JA3S and JA4 fingerprints.
//
// Detection is by the first bytes (a handshake record), not by port. Memory
// is bounded: a record is at most 18 KiB (RFC 8446's limit plus slack), a
// handshake message at most 256 KiB, certificates at most 16 per chain; past
// a bound, or at a record that cannot be TLS, the direction is given up
// (counted as an anomaly). Once a direction encrypts (ChangeCipherSpec, or
// TLS 1.3 after the ServerHello), its handshake is no longer read.
//
// What is wrong is raised as Suricata's TLS decoder events (its
// tls-events.rules): a record header that is not TLS's (its type, version
// or length, each with invalid_tls_header), an SSLv2-format record that is
// no CLIENT-HELLO or one that is an ERROR (error_message_encountered),
// a handshake message of no known type, over its bound or cut short, one
// whose header a record cuts (invalid_ssl_record), more records in one
// segment than records of 6 bytes would fill, past one more
// (too_many_records_in_packet: Suricata's guard), a
// server_name extension repeated or with a bad name, a certificate OpenSSL
// cannot read (certificate_invalid_length where a DER header's length runs
// past the certificate's bytes, else invalid_certificate, each with
// invalid_handshake_message), and heartbeats (RFC 6520): every one, one of
// no known type or whose payload overruns its record (Heartbleed's request)
// in the clear, and an encrypted answer whose record's length differs from
// the request's (dataleak_heartbeat_mismatch).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shoal/core/stat.hh"

namespace shoal::flow {

struct TlsCert {
  std::string subject, issuer, serial, fingerprint;  // Suricata's forms ("C=US, O=...", "0A:1B", "aa:bb")
  std::string not_before, not_after;                 // "2024-01-31T12:00:00"
  std::vector<std::string> san;                      // DNS names of subjectAltName
  std::string der;
};

struct TlsInfo {
  // ClientHello
  bool client_hello = false;
  uint16_t client_version = 0;
  std::string sni;
  std::string client_random;
  std::vector<uint16_t> ciphers, extensions, groups, sig_algs, versions;
  std::vector<uint8_t> point_formats;
  std::vector<std::string> alpn;
  std::string ja3, ja3_hash, ja4;
  // ServerHello
  bool server_hello = false;
  uint16_t server_version = 0;    // the legacy field
  uint16_t selected_version = 0;  // supported_versions, else the legacy field
  uint16_t cipher = 0;
  std::vector<uint16_t> server_extensions;
  std::string server_random;
  std::string ja3s, ja3s_hash;
  // the server took up the session the client's hello named (its session
  // id, not empty, repeated; before TLS 1.3): an abbreviated handshake
  bool session_resumed = false;
  std::string client_session_id;
  // Certificate (the server's; a client's in client_certs)
  std::vector<TlsCert> certs, client_certs;
  // directions given up: records or messages that could not be read
  uint32_t anomalies = 0;
  // Suricata's TLS decoder events raised (bits of ids::TlsEvent)
  uint64_t events = 0;
  bool encrypted[2] = {false, false};
  // "TLS 1.2", "TLS 1.3", "SSLv3", ... of the negotiated version; "UNDETERMINED" before
  std::string version_text() const;
};

struct TlsCounters {
  Stat connections;  // connections detected as TLS
  Stat anomalies;    // directions given up (bad record, over a bound)
};

class TlsConn {
 public:
  // What progressed: kClientHello, kServerHello, kCertificate, kServerKeyx,
  // kClientKeyx, kHandshakeDone; kEvent: a decoder event not raised before
  // (TlsInfo::events).
  static constexpr uint8_t kClientHello = 1, kServerHello = 2, kCertificate = 4, kHandshakeDone = 8, kServerKeyx = 16,
                           kClientKeyx = 32, kEvent = 64;
  using Event = std::function<void(TlsInfo& info, uint8_t what)>;
  TlsConn(TlsCounters& c, Event on_event) : c_(c), on_event_(std::move(on_event)) { c_.connections.add(); }
  // Stream data in order: dir 0 from the client, 1 from the server.
  void data(uint8_t dir, const uint8_t* d, uint32_t n);
  void gap(uint8_t dir) { dir_[dir].broken = true; }
  const TlsInfo& info() const { return info_; }
  bool done() const { return done_; }

 private:
  struct Dir {
    std::vector<uint8_t> rec;  // a record being assembled
    std::vector<uint8_t> hs;   // handshake bytes being assembled into messages
    bool broken = false;
    bool first = true;  // no record yet (the client's first may be SSLv2's)
    bool v2 = false;    // rec is an SSLv2 record
  };
  void v2_record(uint8_t dir, bool first, const uint8_t* d, uint32_t n);
  void v2_hello(const uint8_t* d, uint32_t n);
  void record(uint8_t dir, uint8_t type, const uint8_t* d, uint32_t n);
  void handshake(uint8_t dir, uint8_t type, const uint8_t* d, uint32_t n);
  void anomaly(uint8_t dir);
  void event(uint8_t e);  // an ids::TlsEvent
  void heartbeat(uint8_t dir, const uint8_t* d, uint32_t n);
  void fire(uint8_t what) { on_event_(info_, what); }
  TlsCounters& c_;
  Event on_event_;
  TlsInfo info_;
  Dir dir_[2];
  uint32_t heartbeat_len_[2] = {0, 0};  // an encrypted heartbeat's record awaiting the other side's echo
  bool done_ = false;
  bool v2_ = false;  // the client began with an SSLv2 record: either side's records may be SSLv2's
};

// Whether the first bytes of a direction look like TLS: 1 yes, 0 no, -1 not
// enough bytes yet (a handshake record of a known version, or an
// SSLv2-format ClientHello).
int tls_detect(const uint8_t* d, uint32_t n);

// JA3's value list rules: GREASE values (RFC 8701) are left out.
bool tls_grease(uint16_t v);

}  // namespace shoal::flow

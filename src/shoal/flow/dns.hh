// DNS messages (RFC 1035) as an IDS reads them: the header, the questions
// and the resource records of every section, with names decompressed.
//
// Parsing is defensive and partial, as Suricata's: a message whose header
// is there is a message; records that cannot be read (a section running
// past the end, a compression loop or a pointer forward, a name over 1,025
// bytes) end the parse and mark it malformed, and what was read before
// stays. Names keep their bytes (labels joined by '.'); compression pointers
// may only point backwards, and at most 128 of them are followed per name.
//
// Over TCP, messages carry a two-byte length prefix (RFC 1035 4.2.2):
// DnsTcpFramer cuts a direction's reassembled stream into them, holding at
// most one message (64 KiB) per direction.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace shoal::flow {

struct DnsQuestion {
  std::string name;
  uint16_t type = 0, cls = 0;
};

struct DnsRecord {
  std::string name;
  uint16_t type = 0, cls = 0;
  uint32_t ttl = 0;
  std::string rdata;                     // as Suricata's EVE writes it (addresses, names, text); empty for other types
  std::vector<std::string> rdata_names;  // names inside the rdata (CNAME, NS, PTR, MX, SOA, SRV...)
  struct Soa {
    std::string mname, rname;
    uint32_t serial = 0, refresh = 0, retry = 0, expire = 0, minimum = 0;
  };
  bool has_soa = false;
  Soa soa;
};

struct DnsMessage {
  uint16_t id = 0, flags = 0;
  std::vector<DnsQuestion> queries;
  std::vector<DnsRecord> answers, authorities, additionals;
  bool malformed = false;   // a section could not be read to its end
  int8_t bad_section = -1;  // ... which: 0 questions, 1 answers, 2 authorities, 3 additionals
  bool name_truncated = false;
  bool qr() const { return flags & 0x8000; }
  uint8_t opcode() const { return uint8_t(flags >> 11 & 0xf); }
  uint8_t rcode() const { return uint8_t(flags & 0xf); }
};

// Parses one message; false when there is no DNS header (fewer than 12
// bytes). Section counts larger than the message can hold mark it malformed.
bool dns_parse(const uint8_t* d, uint32_t n, DnsMessage& m);

// Whether a datagram plausibly is DNS (Suricata's probing: a header, a sane
// opcode, at least one question in a request, counts the size can hold).
bool dns_probe(const uint8_t* d, uint32_t n);

// Whether the first bytes of a TCP direction plausibly are DNS: a length
// prefix and a header (n >= 14) as dns_probe checks them.
bool dns_tcp_probe(const uint8_t* d, uint32_t n);

// A direction of a DNS-over-TCP connection, cut into messages.
class DnsTcpFramer {
 public:
  using Message = std::function<void(const uint8_t* d, uint32_t n)>;
  // Stream bytes in order; whole messages go to `out`.
  void data(const uint8_t* d, uint32_t n, const Message& out);
  // A hole in the stream: the message being assembled is dropped.
  void gap() {
    buf_.clear();
    lost_ = true;
  }
  bool lost() const { return lost_; }

 private:
  std::vector<uint8_t> buf_;
  bool lost_ = false;  // framing lost at a gap: nothing more is parsed
};

}  // namespace shoal::flow

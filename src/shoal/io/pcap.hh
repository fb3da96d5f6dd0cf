// Captures: read pcap (mapped) and pcapng (libpcap) with nanosecond
// timestamps; write pcap with nanosecond (default) or microsecond ones.
#pragma once
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/io/outfile.hh"

typedef struct pcap pcap_t;

namespace shoal::io {

// Reads a capture, mapped into memory, records read in place with no copy
// and no call per packet into a library: classic pcap (either byte order,
// micro- or nanosecond timestamps) and pcapng (either byte order, several
// sections and interfaces, each interface with its own link type and
// timestamp resolution: packet_linktype() says which a packet has). Other
// formats libpcap knows go through libpcap.
class PcapReader {
 public:
  PcapReader() = default;
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;
  bool open(const std::string& path, std::string& err);
  // 1: a packet (data valid until the next call); 0: end of file; -1: error
  // (err says why, e.g. a truncated file).
  int next(const uint8_t*& data, uint32_t& caplen, uint32_t& wirelen, uint64_t& ts_ns, std::string& err) {
    if (map_) return ng_ ? next_ng(data, caplen, wirelen, ts_ns, err) : next_mapped(data, caplen, wirelen, ts_ns, err);
    return next_pcap(data, caplen, wirelen, ts_ns, err);
  }
  // The file's link type (pcapng: the first interface's), as a DLT value.
  int linktype() const { return linktype_; }
  // The link type of the packet next() returned last.
  int packet_linktype() const { return ng_ ? pkt_linktype_ : linktype_; }
  bool pcapng() const { return ng_; }
  // DLT value of a LINKTYPE_ value in a file (they differ for a few).
  static int dlt_of(uint32_t linktype);
  uint64_t file_size() const { return size_; }
  uint64_t position() const;
  bool mapped() const { return map_ != nullptr; }
  // The mapping (null when not mapped), for MapFaultGuard.
  const uint8_t* map_begin() const { return map_; }
  uint64_t map_size() const { return map_ ? size_ : 0; }
  void close();

  // The largest record length accepted (libpcap's limit).
  static constexpr uint32_t kMaxRecord = 262144;

 private:
  int next_pcap(const uint8_t*& data, uint32_t& caplen, uint32_t& wirelen, uint64_t& ts_ns, std::string& err);
  int next_ng(const uint8_t*& data, uint32_t& caplen, uint32_t& wirelen, uint64_t& ts_ns, std::string& err);
  bool ng_section(uint64_t at, std::string& err);  // a section header block at `at`
  bool ng_interface(const uint8_t* body, uint32_t len, std::string& err);
  struct NgIface {
    int linktype = 0;
    uint32_t snaplen = 0;
    bool pow2 = false;     // if_tsresol: 2^-res (else 10^-res) seconds per unit
    uint8_t res = 6;       // default: microseconds
    int64_t offset_s = 0;  // if_tsoffset
  };
  std::vector<NgIface> ifaces_;
  bool ng_ = false;
  int pkt_linktype_ = 0;
  uint16_t rd16(const uint8_t* p) const {
    uint16_t v;
    __builtin_memcpy(&v, p, 2);
    return swap_ ? __builtin_bswap16(v) : v;
  }
  int next_mapped(const uint8_t*& data, uint32_t& caplen, uint32_t& wirelen, uint64_t& ts_ns, std::string& err) {
    if (pos_ == size_) return 0;
    if (size_ - pos_ < 16) return truncated(16, size_ - pos_, "header", err);
    const uint8_t* h = map_ + pos_;
    __builtin_prefetch(h + 1024);  // the records after the next ones (across page boundaries too)
    uint32_t sec = rd32(h), frac = rd32(h + 4), cap = rd32(h + 8), len = rd32(h + 12);
    if (cap > kMaxRecord) return bad_length(cap, err);
    if (size_ - pos_ - 16 < cap) return truncated(cap, size_ - pos_ - 16, "captured", err);
    data = h + 16;
    caplen = cap;
    wirelen = len;
    ts_ns = uint64_t(sec) * 1000000000ull + (nano_ ? frac : uint64_t(frac) * 1000);
    pos_ += 16 + uint64_t(cap);
    return 1;
  }
  uint32_t rd32(const uint8_t* p) const {
    uint32_t v;
    __builtin_memcpy(&v, p, 4);
    return swap_ ? __builtin_bswap32(v) : v;
  }
  int truncated(uint64_t want, uint64_t got, const char* what, std::string& err);
  int bad_length(uint32_t cap, std::string& err);
  pcap_t* p_ = nullptr;
  const uint8_t* map_ = nullptr;
  uint64_t pos_ = 0;
  bool swap_ = false, nano_ = false;
  int linktype_ = 0;
  uint64_t size_ = 0;
};

// Writes a classic pcap file (nanosecond or microsecond timestamps) through
// an OutFile: every write is checked, a failed one leaves the file cut at
// its last whole record and says how many records were lost.
class PcapWriter {
 public:
  bool open(const std::string& path, int linktype, uint32_t snaplen, bool nano, std::string& err);
  // Buffers one record (written by flush(), or once 1 MiB is buffered).
  void write(const uint8_t* data, uint32_t caplen, uint32_t wirelen, uint64_t ts_ns);
  uint64_t flush() { return f_.flush(); }  // records lost by this flush
  bool close() { return f_.close(); }      // false: error() says why
  bool is_open() const { return f_.is_open(); }
  uint32_t snaplen() const { return snaplen_; }
  bool failed() const { return f_.failed(); }
  const std::string& error() const { return f_.error(); }
  uint64_t records_lost() const { return f_.records_lost(); }
  uint64_t records_written() const { return f_.records_written(); }
  OutFile& file() { return f_; }

 private:
  OutFile f_;
  uint32_t snaplen_ = 0;
  bool nano_ = true;
};

// A file cut shorter after it was mapped (a capture rotated or truncated
// while being read) makes reading past its new end raise SIGBUS. While a
// guard lives on a thread, a SIGBUS at an address in [begin, begin + len)
// jumps back to where the caller did `sigsetjmp(guard.jump, 0)` (which then
// returns 1) instead of killing the process; any other SIGBUS keeps its
// default action. Locals the caller changes after sigsetjmp are not
// reliable after the jump.
class MapFaultGuard {
 public:
  MapFaultGuard(const uint8_t* begin, uint64_t len);
  ~MapFaultGuard();
  MapFaultGuard(const MapFaultGuard&) = delete;
  MapFaultGuard& operator=(const MapFaultGuard&) = delete;
  sigjmp_buf jump;

 private:
  MapFaultGuard* prev_;
  const uint8_t *begin_, *end_;
  friend void map_fault_handler(int, siginfo_t*, void*);
};

// DLT names for messages and the ENCAP arguments.
int linktype_from_name(const std::string& name);  // -1 if unknown
std::string linktype_name(int dlt);
// A link type as the one byte a packet's annotation holds (Anno::link):
// 0 for one it cannot name; link_dlt turns it back (-1 for 0).
uint8_t link_code(int dlt);
int link_dlt(uint8_t code);
// Where the IP header of a frame of link type `dlt` starts: Ethernet (0),
// raw IP, Linux cooked (SLL, SLL2), BSD loopback (NULL, LOOP), PPP, PPP in
// HDLC framing and Cisco HDLC. -1 when the frame carries something other
// than IPv4 or IPv6 (ARP...) or is too short; -2 when the link type is not
// one of these. Ethernet frames answer 0 (their MAC header starts there).
int link_ip_offset(int dlt, const uint8_t* d, uint32_t len);

}  // namespace shoal::io

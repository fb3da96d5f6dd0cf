// libpcap wrappers: read pcap and pcapng with nanosecond timestamps; write
// pcap with nanosecond (default) or microsecond timestamps.
#pragma once
#include <cstdint>
#include <string>

typedef struct pcap pcap_t;
typedef struct pcap_dumper pcap_dumper_t;

namespace shoal::io {

class PcapReader {
 public:
  PcapReader() = default;
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;
  bool open(const std::string& path, std::string& err);
  // 1: a packet; 0: end of file; -1: error (err says why, e.g. truncated file).
  int next(const uint8_t*& data, uint32_t& caplen, uint32_t& wirelen, uint64_t& ts_ns, std::string& err);
  int linktype() const { return linktype_; }
  uint64_t file_size() const { return size_; }
  uint64_t position() const;
  void close();

 private:
  pcap_t* p_ = nullptr;
  int linktype_ = 0;
  uint64_t size_ = 0;
};

class PcapWriter {
 public:
  PcapWriter() = default;
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  bool open(const std::string& path, int linktype, uint32_t snaplen, bool nano, std::string& err);
  void write(const uint8_t* data, uint32_t caplen, uint32_t wirelen, uint64_t ts_ns);
  void flush();
  void close();
  bool is_open() const { return d_ != nullptr; }
  uint32_t snaplen() const { return snaplen_; }

 private:
  pcap_t* p_ = nullptr;
  pcap_dumper_t* d_ = nullptr;
  uint32_t snaplen_ = 0;
  bool nano_ = true;
};

// DLT names for messages and the ENCAP arguments.
int linktype_from_name(const std::string& name);  // -1 if unknown
std::string linktype_name(int dlt);

}  // namespace shoal::io

#include "shoal/io/pcap.hh"

#include <pcap/pcap.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace shoal::io {

PcapReader::~PcapReader() { close(); }

bool PcapReader::open(const std::string& path, std::string& err) {
  char eb[PCAP_ERRBUF_SIZE] = {};
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    err = path + ": " + std::strerror(errno);
    return false;
  }
  size_ = uint64_t(st.st_size);
  p_ = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, eb);
  if (!p_) {
    err = path + ": " + eb;
    return false;
  }
  linktype_ = pcap_datalink(p_);
  return true;
}

int PcapReader::next(const uint8_t*& data, uint32_t& caplen, uint32_t& wirelen, uint64_t& ts_ns, std::string& err) {
  pcap_pkthdr* h;
  const u_char* d;
  int r = pcap_next_ex(p_, &h, &d);
  if (r == 1) {
    data = d;
    caplen = h->caplen;
    wirelen = h->len;
    ts_ns = uint64_t(h->ts.tv_sec) * 1000000000ull + uint64_t(h->ts.tv_usec);
    return 1;
  }
  if (r == PCAP_ERROR_BREAK) return 0;
  err = pcap_geterr(p_);
  return -1;
}

uint64_t PcapReader::position() const {
  if (!p_) return 0;
  FILE* f = pcap_file(p_);
  long pos = f ? std::ftell(f) : -1;
  return pos < 0 ? 0 : uint64_t(pos);
}

void PcapReader::close() {
  if (p_) pcap_close(p_);
  p_ = nullptr;
}

PcapWriter::~PcapWriter() { close(); }

bool PcapWriter::open(const std::string& path, int linktype, uint32_t snaplen, bool nano, std::string& err) {
  nano_ = nano;
  snaplen_ = snaplen;
  p_ = pcap_open_dead_with_tstamp_precision(linktype, int(snaplen),
                                            nano ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
  if (!p_) {
    err = "pcap_open_dead failed";
    return false;
  }
  d_ = pcap_dump_open(p_, path.c_str());
  if (!d_) {
    err = path + ": " + pcap_geterr(p_);
    pcap_close(p_);
    p_ = nullptr;
    return false;
  }
  return true;
}

void PcapWriter::write(const uint8_t* data, uint32_t caplen, uint32_t wirelen, uint64_t ts_ns) {
  pcap_pkthdr h{};
  h.ts.tv_sec = time_t(ts_ns / 1000000000ull);
  h.ts.tv_usec = suseconds_t(nano_ ? ts_ns % 1000000000ull : (ts_ns % 1000000000ull) / 1000);
  h.caplen = caplen < snaplen_ ? caplen : snaplen_;
  h.len = wirelen < caplen ? caplen : wirelen;
  pcap_dump(reinterpret_cast<u_char*>(d_), &h, data);
}

void PcapWriter::flush() {
  if (d_) pcap_dump_flush(d_);
}

void PcapWriter::close() {
  if (d_) pcap_dump_close(d_);
  if (p_) pcap_close(p_);
  d_ = nullptr;
  p_ = nullptr;
}

int linktype_from_name(const std::string& n) {
  if (n == "ETHER" || n == "ETHERNET" || n == "EN10MB") return DLT_EN10MB;
  if (n == "IP" || n == "RAW") return DLT_RAW;
  if (n == "IPV4") return DLT_IPV4;
  if (n == "IPV6") return DLT_IPV6;
  if (n == "LINUX_SLL" || n == "SLL") return DLT_LINUX_SLL;
  return -1;
}

std::string linktype_name(int dlt) {
  const char* n = pcap_datalink_val_to_name(dlt);
  return n ? n : std::to_string(dlt);
}

}  // namespace shoal::io

#include "shoal/io/pcap.hh"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace shoal::io {

PcapReader::~PcapReader() { close(); }

bool PcapReader::open(const std::string& path, std::string& err) {
  close();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    err = path + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return false;
  }
  size_ = uint64_t(st.st_size);
  // A classic pcap file: mapped, read in place.
  uint8_t fh[24];
  if (S_ISREG(st.st_mode) && size_ >= 24 && ::pread(fd, fh, 24, 0) == 24) {
    uint32_t magic;
    std::memcpy(&magic, fh, 4);
    bool known = true;
    if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du)
      swap_ = false;
    else if (magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u)
      swap_ = true;
    else
      known = false;
    if (known) {
      // Up to 1 GiB populated up front: the page tables are made in one
      // pass, not by a fault per page while packets are read (larger files
      // would wait for all of it to be read before the first packet).
      int flags = MAP_PRIVATE | (size_ <= (uint64_t(1) << 30) ? MAP_POPULATE : 0);
      void* m = ::mmap(nullptr, size_, PROT_READ, flags, fd, 0);
      if (m != MAP_FAILED) {
        ::madvise(m, size_, MADV_SEQUENTIAL | MADV_WILLNEED);
        map_ = static_cast<const uint8_t*>(m);
        uint32_t mg = rd32(fh);
        nano_ = mg == 0xa1b23c4du;
        // The file's LINKTYPE (the low 28 bits; the rest: FCS information) as
        // the DLT value libpcap would report; they differ for a few types.
        int lt = int(rd32(fh + 20) & 0x0fffffff);
        linktype_ = lt == 101 ? DLT_RAW : lt == 100 ? DLT_ATM_RFC1483 : lt;
        pos_ = 24;
        ::close(fd);
        return true;
      }
    }
  }
  ::close(fd);
  char eb[PCAP_ERRBUF_SIZE] = {};
  p_ = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, eb);
  if (!p_) {
    err = path + ": " + eb;
    return false;
  }
  linktype_ = pcap_datalink(p_);
  return true;
}

int PcapReader::truncated(uint64_t want, uint64_t got, const char* what, std::string& err) {
  err = "truncated dump file; tried to read " + std::to_string(want) + " " + what + " bytes, only got " +
        std::to_string(got);
  pos_ = size_;
  return -1;
}

int PcapReader::bad_length(uint32_t cap, std::string& err) {
  err =
      "invalid packet capture length " + std::to_string(cap) + ", bigger than maximum of " + std::to_string(kMaxRecord);
  pos_ = size_;
  return -1;
}

int PcapReader::next_pcap(const uint8_t*& data, uint32_t& caplen, uint32_t& wirelen, uint64_t& ts_ns,
                          std::string& err) {
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
  if (map_) return pos_;
  if (!p_) return 0;
  FILE* f = pcap_file(p_);
  long pos = f ? std::ftell(f) : -1;
  return pos < 0 ? 0 : uint64_t(pos);
}

void PcapReader::close() {
  if (p_) pcap_close(p_);
  p_ = nullptr;
  if (map_) ::munmap(const_cast<uint8_t*>(map_), size_);
  map_ = nullptr;
  pos_ = 0;
}

bool PcapWriter::open(const std::string& path, int linktype, uint32_t snaplen, bool nano, std::string& err) {
  nano_ = nano;
  snaplen_ = snaplen;
  if (!f_.open(path, false, err)) return false;
  // The file header (LINKTYPE_RAW is 101 in files, DLT_RAW 12 or 14 in memory).
  uint32_t h[6] = {
      nano ? 0xa1b23c4du : 0xa1b2c3d4u, 2u | (4u << 16), 0, 0, snaplen, uint32_t(linktype == DLT_RAW ? 101 : linktype)};
  f_.put(h, sizeof h);
  f_.end_record();
  if (f_.flush()) {
    err = f_.error();
    f_.close();
    return false;
  }
  return true;
}

void PcapWriter::write(const uint8_t* data, uint32_t caplen, uint32_t wirelen, uint64_t ts_ns) {
  uint32_t cap = caplen < snaplen_ ? caplen : snaplen_;
  uint32_t h[4] = {uint32_t(ts_ns / 1000000000ull),
                   uint32_t(nano_ ? ts_ns % 1000000000ull : (ts_ns % 1000000000ull) / 1000), cap,
                   wirelen < caplen ? caplen : wirelen};
  f_.put(h, sizeof h);
  f_.put(data, cap);
  f_.end_record();
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

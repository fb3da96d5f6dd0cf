#include "shoal/io/pcap.hh"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

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
    if (magic == 0x0A0D0D0Au) {
      // pcapng: mapped like pcap; blocks parsed in place.
      void* m =
          ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | (size_ <= (uint64_t(1) << 30) ? MAP_POPULATE : 0), fd, 0);
      ::close(fd);
      if (m == MAP_FAILED) {
        err = path + ": " + std::strerror(errno);
        return false;
      }
      ::madvise(m, size_, MADV_SEQUENTIAL | MADV_WILLNEED);
      map_ = static_cast<const uint8_t*>(m);
      ng_ = true;
      if (!ng_section(0, err)) {
        err = path + ": " + err;
        close();
        return false;
      }
      // The file's link type: the first interface's (blocks before the
      // first packet define the interfaces).
      for (uint64_t at = pos_; at + 12 <= size_;) {
        uint32_t type = rd32(map_ + at), len = rd32(map_ + at + 4);
        if (len < 12 || len > size_ - at) break;
        if (type == 1 && len >= 20) {
          linktype_ = dlt_of(rd16(map_ + at + 8));
          break;
        }
        if (type == 2 || type == 3 || type == 6) break;
        at += len;
      }
      return true;
    }
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
        linktype_ = dlt_of(rd32(fh + 20) & 0x0fffffff);
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

namespace {
thread_local MapFaultGuard* t_guard = nullptr;
std::once_flag g_handler_once;
}  // namespace

void map_fault_handler(int sig, siginfo_t* info, void*) {
  auto* addr = static_cast<const uint8_t*>(info->si_addr);
  for (MapFaultGuard* g = t_guard; g; g = g->prev_)
    if (addr >= g->begin_ && addr < g->end_) siglongjmp(g->jump, 1);
  // Not a guarded mapping: what SIGBUS would have done.
  signal(sig, SIG_DFL);
  raise(sig);
}

MapFaultGuard::MapFaultGuard(const uint8_t* begin, uint64_t len) : prev_(t_guard), begin_(begin), end_(begin + len) {
  std::call_once(g_handler_once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = map_fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, nullptr);
  });
  t_guard = this;
}

MapFaultGuard::~MapFaultGuard() { t_guard = prev_; }

int PcapReader::dlt_of(uint32_t lt) { return lt == 101 ? DLT_RAW : lt == 100 ? DLT_ATM_RFC1483 : int(lt); }

// A section header block: its byte order, and a fresh set of interfaces.
bool PcapReader::ng_section(uint64_t at, std::string& err) {
  if (size_ - at < 28) return err = "truncated pcapng section header", false;
  uint32_t bom;
  std::memcpy(&bom, map_ + at + 8, 4);
  if (bom == 0x1A2B3C4Du)
    swap_ = false;
  else if (bom == 0x4D3C2B1Au)
    swap_ = true;
  else
    return err = "bad pcapng byte-order magic", false;
  uint32_t len = rd32(map_ + at + 4);
  if (len < 28 || len % 4 || len > size_ - at) return err = "bad pcapng section header length", false;
  ifaces_.clear();
  pos_ = at + len;
  return true;
}

// An interface description block's body (after type and length): link
// type, snap length, and the options that change timestamps.
bool PcapReader::ng_interface(const uint8_t* b, uint32_t len, std::string& err) {
  if (len < 8) return err = "truncated pcapng interface block", false;
  NgIface f;
  f.linktype = dlt_of(rd16(b));
  f.snaplen = rd32(b + 4);
  for (uint32_t o = 8; o + 4 <= len;) {
    uint16_t code = rd16(b + o), olen = rd16(b + o + 2);
    if (code == 0 || o + 4 + olen > len) break;
    if (code == 9 && olen >= 1) {  // if_tsresol
      f.pow2 = b[o + 4] & 0x80;
      f.res = b[o + 4] & 0x7f;
      if ((f.pow2 && f.res > 63) || (!f.pow2 && f.res > 19))
        return err = "unsupported pcapng timestamp resolution", false;
    } else if (code == 14 && olen >= 8) {  // if_tsoffset
      uint64_t v;
      std::memcpy(&v, b + o + 4, 8);
      f.offset_s = int64_t(swap_ ? __builtin_bswap64(v) : v);
    }
    o += 4 + ((olen + 3u) & ~3u);
  }
  ifaces_.push_back(f);
  return true;
}

int PcapReader::next_ng(const uint8_t*& data, uint32_t& caplen, uint32_t& wirelen, uint64_t& ts_ns, std::string& err) {
  while (pos_ < size_) {
    if (size_ - pos_ < 12) return truncated(12, size_ - pos_, "block header", err);
    const uint8_t* h = map_ + pos_;
    uint32_t type = rd32(h);
    if (type == 0x0A0D0D0Au) {
      if (!ng_section(pos_, err)) return pos_ = size_, -1;
      continue;
    }
    uint32_t len = rd32(h + 4);
    if (len < 12 || len % 4) {
      err = "bad pcapng block length " + std::to_string(len);
      pos_ = size_;
      return -1;
    }
    if (len > size_ - pos_) return truncated(len, size_ - pos_, "block", err);
    const uint8_t* b = h + 8;
    uint32_t blen = len - 12;
    pos_ += len;
    uint32_t ifid = 0, cap = 0, wire = 0;
    uint64_t units = 0;
    const uint8_t* d = nullptr;
    if (type == 1) {
      if (!ng_interface(b, blen, err)) return pos_ = size_, -1;
      continue;
    } else if (type == 6 && blen >= 20) {  // enhanced packet
      ifid = rd32(b);
      units = (uint64_t(rd32(b + 4)) << 32) | rd32(b + 8);
      cap = rd32(b + 12);
      wire = rd32(b + 16);
      d = b + 20;
      if (cap > blen - 20) return bad_length(cap, err);
    } else if (type == 3 && blen >= 4) {  // simple packet: interface 0, no time
      wire = rd32(b);
      cap = std::min<uint32_t>(wire, blen - 4);
      if (!ifaces_.empty() && ifaces_[0].snaplen) cap = std::min(cap, ifaces_[0].snaplen);
      d = b + 4;
    } else if (type == 2 && blen >= 20) {  // obsolete packet block
      ifid = rd16(b);
      units = (uint64_t(rd32(b + 4)) << 32) | rd32(b + 8);
      cap = rd32(b + 12);
      wire = rd32(b + 16);
      d = b + 20;
      if (cap > blen - 20) return bad_length(cap, err);
    } else {
      continue;  // statistics, name resolution, comments...
    }
    if (ifid >= ifaces_.size()) {
      err = "pcapng packet for interface " + std::to_string(ifid) + ", which no interface block defined";
      pos_ = size_;
      return -1;
    }
    if (cap > kMaxRecord) return bad_length(cap, err);
    const NgIface& f = ifaces_[ifid];
    auto pow10 = [](unsigned n) {
      uint64_t v = 1;
      while (n--) v *= 10;
      return v;
    };
    unsigned __int128 ns;
    if (f.pow2)
      ns = ((unsigned __int128)units * 1000000000u) >> f.res;
    else if (f.res <= 9)
      ns = (unsigned __int128)units * pow10(9 - f.res);
    else
      ns = units / pow10(f.res - 9);
    ts_ns = uint64_t(ns) + uint64_t(f.offset_s * 1000000000);
    pkt_linktype_ = f.linktype;
    data = d;
    caplen = cap;
    wirelen = wire;
    return 1;
  }
  return 0;
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
  ng_ = false;
  ifaces_.clear();
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

int link_ip_offset(int dlt, const uint8_t* d, uint32_t len) {
  auto be16 = [&](uint32_t at) { return uint16_t(d[at] << 8 | d[at + 1]); };
  auto ip_type = [](uint16_t t) { return t == 0x0800 || t == 0x86dd; };
  auto ppp_ip = [](uint16_t proto) { return proto == 0x0021 || proto == 0x0057; };
  switch (dlt) {
    case DLT_EN10MB: return 0;
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6: return 0;
    case DLT_LINUX_SLL:  // 16 bytes, the protocol last
      return len >= 16 && ip_type(be16(14)) ? 16 : -1;
    case DLT_LINUX_SLL2:  // 20 bytes, the protocol first
      return len >= 20 && ip_type(be16(0)) ? 20 : -1;
    case DLT_NULL:
    case DLT_LOOP: {  // a 4-byte address family: host order (NULL) or network order (LOOP)
      if (len < 4) return -1;
      uint32_t le = uint32_t(d[0]) | uint32_t(d[1]) << 8 | uint32_t(d[2]) << 16 | uint32_t(d[3]) << 24;
      uint32_t be = uint32_t(d[0]) << 24 | uint32_t(d[1]) << 16 | uint32_t(d[2]) << 8 | uint32_t(d[3]);
      uint32_t fam = dlt == DLT_LOOP ? be : (le < 256 ? le : be);  // files from either byte order
      // AF_INET 2; AF_INET6: 10 Linux, 24 NetBSD/OpenBSD, 28 FreeBSD, 30 macOS
      return fam == 2 || fam == 10 || fam == 24 || fam == 28 || fam == 30 ? 4 : -1;
    }
    case DLT_PPP:
    case DLT_PPP_SERIAL: {  // optional ff 03 (address, control), then the protocol
      uint32_t at = len >= 2 && d[0] == 0xff && d[1] == 0x03 ? 2 : 0;
      if (len < at + 1) return -1;
      if (d[at] & 1) return ppp_ip(d[at]) ? int(at + 1) : -1;  // a compressed (1-byte) protocol, RFC 1661 6.5
      if (len < at + 2) return -1;
      return ppp_ip(be16(at)) ? int(at + 2) : -1;
    }
    case DLT_C_HDLC:  // address, control, then an Ethernet type
      return len >= 4 && ip_type(be16(2)) ? 4 : -1;
  }
  return -2;
}

namespace {
// The link types a packet's annotation can name (io::link_code), by code - 1.
constexpr int kLinkDlts[] = {DLT_EN10MB, DLT_RAW,  DLT_IPV4, DLT_IPV6,       DLT_LINUX_SLL, DLT_LINUX_SLL2,
                             DLT_NULL,   DLT_LOOP, DLT_PPP,  DLT_PPP_SERIAL, DLT_C_HDLC};
}  // namespace

uint8_t link_code(int dlt) {
  for (size_t i = 0; i < std::size(kLinkDlts); ++i)
    if (kLinkDlts[i] == dlt) return uint8_t(i + 1);
  return 0;
}

int link_dlt(uint8_t code) { return code >= 1 && code <= std::size(kLinkDlts) ? kLinkDlts[code - 1] : -1; }

std::string linktype_name(int dlt) {
  const char* n = pcap_datalink_val_to_name(dlt);
  return n ? n : std::to_string(dlt);
}

}  // namespace shoal::io

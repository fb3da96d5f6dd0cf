// The common part of CheckTCPHeader, CheckUDPHeader and CheckICMPHeader
// (Click's): a packet that fails goes to output 1 when there is one, else
// is dropped with its reason; VERBOSE says why on standard error (the first
// ten); handlers count, drops and drop_details.
#pragma once
#include <fmt/format.h>

#include <array>
#include <cstdio>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

template <class D, int N>
class CheckL4Header : public PacketElement<D> {
 public:
  void configure(Args& a) override {
    a.read("VERBOSE", verbose_).read("DETAILS", details_).read("CHECKSUM", checksum_);
    a.complete();
  }
  void initialize() override {
    for (int i = 0; i < N; ++i) r_[size_t(i)] = this->add_drop_reason(D::kReasons[i]);
  }
  int process(Packet* p) {
    int bad = static_cast<D*>(this)->check(p);
    if (bad < 0) {
      count_.add();
      return 0;
    }
    bad_[size_t(bad)].add();
    if (verbose_ && said_++ < 10)
      std::fputs(fmt::format("{}: {} header check failed: {}\n", this->name(), D::kProto, D::kReasonTexts[bad]).c_str(),
                 stderr);
    return this->noutputs() > 1 ? 1 : this->drop_code(r_[size_t(bad)]);
  }
  void add_handlers() override {
    this->add_stat_handler("count", count_);
    this->add_read_handler(
        "drops",
        [this] {
          uint64_t n = 0;
          for (auto& s : bad_) n += s.get();
          return std::to_string(n);
        },
        Agg::Sum, true);
    this->add_read_handler("drop_details", [this] {
      std::string s;
      for (int i = 0; i < N; ++i)
        s += fmt::format("{:15} packets due to: {:>24}\n", bad_[size_t(i)].get(), D::kReasonTexts[i]);
      return s;
    });
  }

 protected:
  bool checksum_ = true;

 private:
  bool verbose_ = false, details_ = false;
  std::array<uint16_t, N> r_{};
  std::array<Stat, N> bad_;
  Stat count_;
  uint64_t said_ = 0;
};

// The IPv4 header and its transport part as the Check*Header elements see
// them: the header at the annotation, the transport bytes IP's length
// promises (`len`), all present in the packet.
struct L4View {
  uint8_t* ip = nullptr;
  uint8_t* l4 = nullptr;
  uint32_t len = 0;  // transport length by ip_len
};
// -1: not protocol `proto` (or a later fragment); 0: lengths bad; 1: ok.
inline int l4_view(Packet* p, uint8_t proto, L4View& v) {
  uint8_t* ip = ip_header20(p);
  if (!ip || ip[9] != proto || (k::load_be16(ip + 6) & 0x1fff) != 0) return -1;
  uint32_t hl = (ip[0] & 0xf) * 4u, iplen = k::load_be16(ip + 2);
  int64_t room = int64_t(p->length()) - p->network_header_offset();
  if (hl < 20 || iplen < hl || int64_t(iplen) > room) return 0;
  v.ip = ip;
  v.l4 = ip + hl;
  v.len = iplen - hl;
  return 1;
}

}  // namespace shoal

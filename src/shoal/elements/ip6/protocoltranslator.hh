// What ProtocolTranslator46 and ProtocolTranslator64 share: the PREFIX
// argument, the drop reasons, and putting a translation in place of the
// packet (elements/ip6/siit.hh translates).
#pragma once
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip6/siit.hh"

namespace shoal {

template <class D>
class ProtocolTranslator : public PacketElement<D> {
 public:
  void configure(Args& a) override {
    std::string prefix = "::ffff:0:0/96";
    a.read("PREFIX", prefix);
    a.complete();
    std::string_view v = trim(prefix);
    size_t slash = v.find('/');
    IPv6Addr p;
    if (!parse_ipv6(v.substr(0, slash), p) || (slash != std::string_view::npos && trim(v.substr(slash + 1)) != "96"))
      a.fail(fmt::format("PREFIX '{}' is not an IPv6 /96 prefix", prefix));
    std::memcpy(pfx_.b, p.b.data(), 12);
  }
  void initialize() override {
    for (const char* r : siit::kReasons) reasons_.push_back(this->add_drop_reason(r));
    buf_.resize(siit::kMaxOut);
  }

 protected:
  // Replaces the packet's IP packet (from its network header, or its start)
  // by what `translate(in, len, out, why)` writes; the output port, or a drop.
  template <class F>
  int replace(Packet* p, F&& translate) {
    int64_t off = p->has_network_header() ? p->network_header_offset() : 0;
    if (off < 0 || off >= int64_t(p->length())) return reason("bad-header");
    p->pull(uint32_t(off));  // (a link header before the IP packet is not kept)
    const char* why = nullptr;
    uint32_t n = translate(p->data(), p->length(), buf_.data(), why);
    if (!n) return reason(why);
    if (n > p->length()) {
      if (!p->push(n - p->length()) && !p->put(n - p->length())) return reason("no-room");
    } else {
      p->take(p->length() - n);
    }
    std::memcpy(p->data(), buf_.data(), n);
    p->set_network_header(0);
    p->set_transport_header((p->data()[0] >> 4) == 4 ? 20 : transport_offset(p->data(), n));
    return 0;
  }
  int reason(const char* why) {
    for (size_t i = 0; i < std::size(siit::kReasons); ++i)
      if (std::strcmp(why, siit::kReasons[i]) == 0) return this->drop_code(reasons_[i]);
    return this->drop_code(reasons_[0]);
  }
  static uint32_t transport_offset(const uint8_t* ip6, uint32_t n) { return ip6[6] == 44 && n >= 48 ? 48 : 40; }

  siit::Prefix pfx_;
  std::vector<uint16_t> reasons_;
  std::vector<uint8_t> buf_;
};

}  // namespace shoal

// What the elements on live links share (FromXDPDevice, FromDPDKDevice;
// ToDevice, ToXDPDevice, ToDPDKDevice): copying a received frame into a
// packet, and a sender's drop reasons, frame check and pull task.
#pragma once
#include <cstdint>

#include "shoal/elements/common.hh"

namespace shoal {

// A source that copies frames out of a driver's buffers.
class LinkSource : public SourceElement {
 protected:
  // Reads SNAPLEN and the source arguments; adds the 'no-buffer' reason.
  void read_link_source_args(Args& a);
  void initialize() override;
  // Appends a copy of the frame to b, stamped with `now_ns` (taken at the
  // first frame of a burst when 0); an empty pool is a counted drop
  // (nullptr). The packet appended.
  Packet* take_frame(PacketBatch* b, const uint8_t* d, uint32_t len, uint64_t& now_ns);
  uint32_t snaplen_ = 65535;

 private:
  uint16_t r_nobuf_ = 0;
};

// A sink that hands frames to a link.
class LinkSink : public Element {
 protected:
  // The drop reasons 'tx-ring-full', 'exceeds-mtu', 'too-short'; a pull
  // task when the input pulls (call from initialize()).
  void init_link_sink();
  // The drop reason of a frame the link cannot carry (shorter than an
  // Ethernet header; longer than the MTU plus the header, and a VLAN tag
  // when it has one, or than max_frame), or -1.
  int link_refusal(const Packet* p, uint32_t mtu, uint32_t max_frame = UINT32_MAX) const;
  uint32_t burst_ = 32;
  PullTask pt_;
  uint16_t r_full_ = 0;
  Stat count_;

 private:
  uint16_t r_mtu_ = 0, r_short_ = 0;
};

}  // namespace shoal

// The IPv4 or IPv6 packet as the rules see it: addresses, protocol, ports
// and payload.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/ids/rules.hh"

namespace shoal::ids {

class HostBits;

// What the rules look at in a packet.
struct PacketInfo {
  Addr src, dst;
  uint8_t proto = 0;
  bool has_ports = false;
  uint16_t sport = 0, dport = 0;
  const uint8_t* l3 = nullptr;  // the IP header (IPv6: the fixed 40 bytes), l3len long
  uint16_t l3len = 0;
  const uint8_t* l4 = nullptr;  // the transport header (first fragment, complete), or null
  uint16_t l4len = 0;           // its length, options included (ICMP: by type, as Suricata)
  uint64_t events = 0;          // its decoder events (DecodeEvent bits)
  uint64_t stream_events = 0;   // the stream events its data raised (StreamEvent bits)
  bool no_l3 = false;           // the decoder gave up on its IP header: no addresses (nor flow)
  bool invalid = false;         // ... or on its transport: no flow
  uint8_t ttl = 0;              // IPv4 TTL, IPv6 hop limit
  uint16_t ip_id = 0;
  uint8_t vlan_layers = 0;           // its 802.1Q/QinQ tags, outermost first (Suricata keeps 3 at most)
  uint16_t vlan[3] = {};             // their ids
  uint8_t ip_flags = 0;              // IPv4: reserved 4, don't fragment 2, more fragments 1
  uint16_t ip_opts = 0;              // IPv4 options present (ipopts: kIpOpt* bits)
  const uint8_t* payload = nullptr;  // after the TCP/UDP/ICMP header (IP payload otherwise)
  uint32_t plen = 0;
  // The packet's flow, when a flow layer tracks it (FlowIPManager).
  bool has_flow = false;
  bool established = false;      // TCP: the handshake completed; others: both directions seen
  uint8_t dir = 0;               // 0: to the server (from the originator), 1: to the client
  bool first_in_dir = true;      // the flow's first packet this way (IP-only rules look at no other)
  bool has_stream = false;       // TCP: stream_size's numbers below are known
  uint32_t stream_size[2] = {};  // per side (0 client, 1 server): next sequence number minus the initial one
  uint64_t* flowbits = nullptr;  // the flow's bits (kMaxFlowbits), or null
  FlowInts* flowints = nullptr;  // the flow's flowints, or null
  HostBits* hostbits = nullptr;  // the matcher's hostbits and xbits, or null
  uint64_t ts_ns = 0;            // the packet's time (hostbits expire by it)
  uint16_t app = kAppNone;       // the flow's application protocol, when detected
  bool app_known = false;        // detection ended this way (app none then: no protocol this engine knows)
  // TCP: the payload joined the flow's reassembled stream, whose inspection
  // reads it (the stream payload rules do not read the packet then)
  bool stream_added = false;
  // An inline IPS's packet: its bytes, which the pointers above point into,
  // writable (the stream may normalize the payload: IdsAppLayer), or null.
  uint8_t* wire = nullptr;
  uint32_t wire_len = 0;
  bool normalized = false;  // the payload was set to the stream's bytes (the TCP checksum follows)
};

// An application-layer transaction's buffers, as the rules read them.
static_assert(size_t(Buf::Count) <= 128, "TxBuffers::ready has a bit per buffer");
struct TxBuffers {
  std::string_view b[size_t(Buf::Count)];
  const std::vector<std::string>* many[size_t(Buf::Count)] = {};  // multi-buffers: any value may match
  uint64_t ready[2] = {0, 0};                                     // bit per Buf: available
  uint64_t events = 0;                                            // the transaction's app-layer events (bits)
  // the transaction's numbers (FieldCond::Dns*, from kTxFirst): any value may match
  std::vector<uint64_t> nums[FieldCond::kTxFields];
  // the transaction's whole files' digests (lower-case hex; empty: not
  // computed), for filemd5, filesha1 and filesha256: one file may match
  struct FileDigests {
    std::string_view md5, sha1, sha256;
  };
  std::vector<FileDigests> files;
  void set(Buf x, std::string_view v) {
    b[size_t(x)] = v;
    ready[size_t(x) >> 6] |= uint64_t(1) << (size_t(x) & 63);
  }
  void set_many(Buf x, const std::vector<std::string>& v) {
    many[size_t(x)] = &v;
    ready[size_t(x) >> 6] |= uint64_t(1) << (size_t(x) & 63);
  }
  bool has(Buf x) const { return ready[size_t(x) >> 6] >> (size_t(x) & 63) & 1; }
  // known not to be there (a header the request did not send): no buffer,
  // where even a negated content fails and `absent` holds
  uint64_t gone[2] = {0, 0};
  void set_absent(Buf x) {
    b[size_t(x)] = {};
    ready[size_t(x) >> 6] |= uint64_t(1) << (size_t(x) & 63);
    gone[size_t(x) >> 6] |= uint64_t(1) << (size_t(x) & 63);
  }
  bool absent(Buf x) const { return gone[size_t(x) >> 6] >> (size_t(x) & 63) & 1; }
};

// A header buffer's bytes (ipv4.hdr, tcp.hdr, ...); false when the packet
// has no such header.
bool header_buffer(const PacketInfo& p, Buf b, std::string_view& out);

// Parses an IPv4 or IPv6 packet starting at ip; false when it is not one
// (too short, bad version, truncated headers).
bool parse_packet(const uint8_t* ip, uint32_t len, PacketInfo& out);

}  // namespace shoal::ids

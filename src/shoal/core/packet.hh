// Packet: one contiguous buffer from a per-worker pool, with headroom and
// tailroom, header offsets, and one cache line of annotations.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

namespace shoal {

class PacketPool;

// The annotation area: exactly one cache line, copied with the packet.
struct alignas(64) Anno {
  uint64_t timestamp_ns = 0;  // wall-clock timestamp (Click's timestamp annotation)
  uint8_t dst_ip[4] = {};     // DST_IP annotation, network order
  uint32_t flow_hash = 0;     // valid when flags & kFlowHashValid
  uint32_t predicates = 0;    // offload predicate bits
  uint16_t input_port = 0;    // device/interface index the packet came in on
  uint16_t output_port = 0;   // chosen output interface (routers)
  uint8_t paint = 0;          // PAINT annotation
  uint8_t flags = 0;
  uint8_t dst_ip6[16] = {};  // DST_IP6 annotation (IPv6 next hop), network order
  uint16_t user16 = 0;       // free for elements (documented per element)
  uint32_t flow = 0;         // flow layer: the packet's flow id in its worker's table (0: none)
  uint8_t flow_dir = 0;      // flow layer: 0 from the connection's originator, 1 from its responder
  uint8_t flow_facts = 0;    // flow layer: what held once this packet was tracked (flow::kFact*)
  uint16_t vlan_tci = 0;     // VLAN TCI (Click's VLAN_TCI_ANNO): VLANDecap sets it, VLANEncap(ANNO) reads it
  uint32_t aggregate = 0;    // Click's AGGREGATE annotation (AggregateIPFlows, ToIPSummaryDump 'aggregate')
  uint8_t user[4] = {};      // free for elements (documented per element)
  uint8_t param_off = 0;     // ICMP parameter problem pointer (Click's ICMP_PARAMPROB_ANNO)
  uint8_t packet_type = 0;   // link-level type, as Linux's PACKET_HOST.. (Click's PACKET_TYPE_ANNO)
  uint8_t link = 0;          // the link type the frame was read with (io::link_code; 0: not recorded)
  uint8_t link_hdr = 0;      // bytes of a link header kept in the headroom just before the network header
                             // (links whose header the graph does not carry: SLL, PPP...)
  static constexpr uint8_t kFlowHashValid = 1;
  static constexpr uint8_t kFixIPSrc = 2;      // set by ICMPError: FixIPSrc rewrites the source
  static constexpr uint8_t kDefragmented = 4;  // rebuilt from fragments (IPReassembler)
  static constexpr uint8_t kTunnelInner = 8;   // the inner packet of a tunnel (TunnelDecap)
  static constexpr uint8_t kTunnelOuter = 16;  // a tunnel packet whose inner packet follows (TunnelDecap)
  static constexpr uint8_t kFragment = 32;     // a fragment passed on by IPReassembler(FRAGMENTS true)
  static constexpr uint8_t kFragOverlap = 64;  // ... whose data overlapped data held
  // packet_type values (linux/if_packet.h)
  static constexpr uint8_t kHost = 0, kBroadcast = 1, kMulticast = 2, kOtherHost = 3, kOutgoing = 4;
};
static_assert(sizeof(Anno) == 64, "annotations must fit one cache line");

class alignas(64) Packet {
 public:
  static constexpr uint32_t kNoHeader = UINT32_MAX;

  uint8_t* data() { return buf_ + off_; }
  const uint8_t* data() const { return buf_ + off_; }
  uint32_t length() const { return len_; }
  uint32_t headroom() const { return off_; }
  uint32_t tailroom() const { return cap_ - off_ - len_; }
  uint8_t* end_data() { return buf_ + off_ + len_; }

  // Click's push/pull/put/take. push and put return nullptr when the room is
  // missing (the packet is unchanged); pull and take clamp to the length.
  uint8_t* push(uint32_t n) {
    if (n > off_) return nullptr;
    off_ -= n;
    len_ += n;
    return data();
  }
  void pull(uint32_t n) {
    if (n > len_) n = len_;
    off_ += n;
    len_ -= n;
  }
  uint8_t* put(uint32_t n) {
    if (n > tailroom()) return nullptr;
    uint8_t* p = end_data();
    len_ += n;
    return p;
  }
  void take(uint32_t n) { len_ -= (n > len_ ? len_ : n); }
  bool set_length(uint32_t n) {
    if (n > cap_ - off_) return false;
    len_ = n;
    return true;
  }

  // Moves the data, and any header annotation in the headroom before it,
  // `by` bytes within the buffer (Click's shift_data, for alignment);
  // false, and nothing moved, when that leaves the buffer.
  bool shift_data(int32_t by) {
    uint32_t start = off_;
    for (uint32_t h : {mac_, net_, trans_})
      if (h != kNoHeader && h < start) start = h;
    int64_t ns = int64_t(start) + by, ne = int64_t(off_) + len_ + by;
    if (ns < 0 || ne > int64_t(cap_)) return false;
    std::memmove(buf_ + ns, buf_ + start, off_ + len_ - start);
    off_ = uint32_t(int64_t(off_) + by);
    for (uint32_t* h : {&mac_, &net_, &trans_})
      if (*h != kNoHeader) *h = uint32_t(int64_t(*h) + by);
    return true;
  }

  // Header offsets are kept relative to the buffer start so push/pull keep them.
  void set_mac_header(uint32_t data_off) { mac_ = off_ + data_off; }
  void set_network_header(uint32_t data_off) { net_ = off_ + data_off; }
  void set_transport_header(uint32_t data_off) { trans_ = off_ + data_off; }
  bool has_mac_header() const { return mac_ != kNoHeader; }
  bool has_network_header() const { return net_ != kNoHeader; }
  bool has_transport_header() const { return trans_ != kNoHeader; }
  uint8_t* mac_header() { return buf_ + mac_; }
  uint8_t* network_header() { return buf_ + net_; }
  uint8_t* transport_header() { return buf_ + trans_; }
  // Offsets relative to data(); negative when the header lies in the headroom.
  int64_t mac_header_offset() const { return int64_t(mac_) - int64_t(off_); }
  int64_t network_header_offset() const { return int64_t(net_) - int64_t(off_); }
  int64_t transport_header_offset() const { return int64_t(trans_) - int64_t(off_); }
  void clear_headers() { mac_ = net_ = trans_ = kNoHeader; }
  // The packet's length on the wire: an IPv4 packet cut short (a summary
  // dump's record, a snapped capture) counts as long as its header says, as
  // Click's extra-length annotation makes it.
  uint32_t wire_length() const {
    if (net_ == kNoHeader || net_ < off_ || net_ - off_ + 4 > len_ || (buf_[net_] >> 4) != 4) return len_;
    uint32_t ip_len = uint32_t(buf_[net_ + 2]) << 8 | buf_[net_ + 3];
    return std::max(len_, net_ - off_ + ip_len);
  }

  Anno& anno() { return anno_; }
  const Anno& anno() const { return anno_; }
  uint64_t timestamp_ns() const { return anno_.timestamp_ns; }
  void set_timestamp_ns(uint64_t t) { anno_.timestamp_ns = t; }

  PacketPool* pool() const { return pool_; }
  uint32_t buffer_capacity() const { return cap_; }
  // The packet's number at its source, from 1 (FromDump: its record in the
  // file, Suricata's pcap_cnt); 0 when the source does not number packets.
  uint64_t source_index() const { return src_index_; }
  void set_source_index(uint64_t i) { src_index_ = i; }
  // The trace's time when the packet was read: the latest timestamp of the
  // source's records up to this one, every worker's (FromDump reads them
  // all), so that the flow layer of each worker keeps one worker's clock
  // whatever worker a packet went to; 0 when the source keeps none.
  uint64_t trace_ns() const { return trace_ns_; }
  void set_trace_ns(uint64_t t) { trace_ns_ = t; }

 private:
  friend class PacketPool;
  uint8_t* buf_ = nullptr;
  uint32_t cap_ = 0, off_ = 0, len_ = 0;
  uint32_t mac_ = kNoHeader, net_ = kNoHeader, trans_ = kNoHeader;
  PacketPool* pool_ = nullptr;
  bool jumbo_ = false;
  uint64_t src_index_ = 0;
  uint64_t trace_ns_ = 0;  // (in what was padding before the annotations' line)
  Anno anno_;
};
static_assert(sizeof(Packet) == 128, "a packet's fields and annotations: two cache lines");

// Copies n bytes between non-overlapping buffers: inline 16-byte moves for
// the short frames packet traffic is made of (a libc memcpy pays a call and
// a rep-movsb start-up on each), memcpy for long ones.
inline void copy_frame(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n >= 16 && n <= 256) {
    for (size_t i = 0; i + 16 < n; i += 16) std::memcpy(dst + i, src + i, 16);
    std::memcpy(dst + n - 16, src + n - 16, 16);  // the last 16, overlapping the loop's
  } else if (n >= 8 && n < 16) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  } else {
    std::memcpy(dst, src, n);
  }
}

struct PoolConfig {
  uint32_t count = 8192;      // regular buffers
  uint32_t buf_size = 2048;   // bytes per regular buffer (headroom included)
  uint32_t headroom = 128;    // default headroom for new packets
  uint32_t jumbo_count = 64;  // buffers for frames that do not fit a regular one
};

// A per-worker pool. Only the owning worker allocates and frees, so there is no
// locking; memory is bounded by the configuration and exhaustion returns
// nullptr for the caller to count as a drop.
class PacketPool {
 public:
  static constexpr uint32_t kMaxFrame = 65535 + 14 + 4;  // largest frame held
  explicit PacketPool(const PoolConfig& cfg = {});
  ~PacketPool();
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // A packet of `len` bytes (contents uninitialised) with `headroom` in front.
  // The common case (a regular buffer, one free) inline: sources call it
  // per packet.
  Packet* alloc(uint32_t len, uint32_t headroom) {
    if (uint64_t(len) + headroom <= cfg_.buf_size && !free_.empty()) [[likely]] {
      Packet* p = free_.back();
      free_.pop_back();
      init_packet(p, len, headroom);
      return p;
    }
    return alloc_slow(len, headroom);
  }
  Packet* alloc(uint32_t len) { return alloc(len, cfg_.headroom); }
  Packet* make(const uint8_t* bytes, uint32_t len) {
    Packet* p = alloc(len);
    if (p) copy_frame(p->data(), bytes, len);
    return p;
  }
  // A full copy: data, headroom position, header offsets and annotations.
  Packet* clone(const Packet* src);
  void free(Packet* p) {
    --outstanding_;
    (p->jumbo_ ? jumbo_free_ : free_).push_back(p);
  }

  size_t outstanding() const { return outstanding_; }
  size_t capacity() const { return cfg_.count; }
  uint64_t failures() const { return failures_; }
  const PoolConfig& config() const { return cfg_; }

 private:
  void init_packet(Packet* p, uint32_t len, uint32_t headroom) {
    p->off_ = headroom;
    p->len_ = len;
    p->mac_ = p->net_ = p->trans_ = Packet::kNoHeader;
    p->src_index_ = 0;
    p->trace_ns_ = 0;
    p->anno_ = Anno{};
    ++outstanding_;
  }
  Packet* alloc_slow(uint32_t len, uint32_t headroom);
  PoolConfig cfg_;
  uint8_t* arena_ = nullptr;
  Packet* headers_ = nullptr;
  std::vector<Packet*> free_;
  std::vector<Packet*> jumbo_free_;
  std::vector<Packet*> jumbo_all_;
  size_t outstanding_ = 0;
  uint64_t failures_ = 0;
};

}  // namespace shoal

#include "shoal/elements/io/linkport.hh"

#include <algorithm>
#include <cstring>

#include "shoal/kernels/bytes.hh"

namespace shoal {

void LinkSource::read_link_source_args(Args& a) {
  a.read("SNAPLEN", snaplen_);
  read_source_args(a, 32);
}

void LinkSource::initialize() {
  r_nobuf_ = add_drop_reason("no-buffer");
  SourceElement::initialize();
}

Packet* LinkSource::take_frame(PacketBatch* b, const uint8_t* d, uint32_t len, uint64_t& now_ns) {
  len = std::min(len, snaplen_);
  Packet* p = worker().pool().alloc(len);
  if (!p) {  // counted as received and dropped
    received();
    emitted_.add();
    count_dropped(r_nobuf_);
    return nullptr;
  }
  std::memcpy(p->data(), d, len);
  if (!now_ns) now_ns = realtime_ns();
  p->set_timestamp_ns(now_ns);
  p->set_mac_header(0);
  b->append(p);
  return p;
}

void LinkSink::init_link_sink() {
  r_full_ = add_drop_reason("tx-ring-full");
  r_mtu_ = add_drop_reason("exceeds-mtu");
  r_short_ = add_drop_reason("too-short");
  if (input_proc(0) == Proc::Pull) {
    pt_.init(this, burst_);
    add_task();
  }
}

int LinkSink::link_refusal(const Packet* p, uint32_t mtu, uint32_t max_frame) const {
  uint32_t len = p->length();
  if (len < 14) return r_short_;
  uint32_t limit = mtu + 14 + (len >= 16 && k::load_be16(p->data() + 12) == 0x8100 ? 4 : 0);
  return len > limit || len > max_frame ? r_mtu_ : -1;
}

}  // namespace shoal

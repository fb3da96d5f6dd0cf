// TCPReassembler: each TCP connection's byte streams, in order, for the
// stream elements downstream; packets pass unchanged.
#include "shoal/elements/flow/tcpreassembler.hh"

#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/offload/services.hh"

namespace shoal {

TCPReassembler::~TCPReassembler() {
  for (flow::Stream* s : live_) delete s;
}

void TCPReassembler::configure(Args& a) {
  flow::StreamConfig c;
  std::string policy = "first";
  uint64_t dir_cap = c.dir_cap, total = c.total_cap;
  a.read("POLICY", policy).read("BUFFER", dir_cap).read("MEMORY", total).read("MIDSTREAM", c.midstream);
  a.read("DEVICE", device_);
  a.complete();
  if (!flow::parse_overlap(policy, c.policy))
    a.fail(
        fmt::format("POLICY '{}': first, last, or a system's (bsd, bsd-right, linux, old-linux, solaris, "
                    "old-solaris, hpux10, hpux11, irix, macos, windows, vista, windows2k3)",
                    policy));
  if (dir_cap > UINT32_MAX) a.fail("BUFFER is at most 4 GB");
  c.dir_cap = uint32_t(dir_cap);
  c.total_cap = total;
  r_.configure(c);
  r_.set_sink(this);
  mgr_ = &FlowIPManager::require(this, a);
  off_ = mgr_->table().reserve(sizeof(flow::Stream*), alignof(flow::Stream*), FlowIPManager::state_owner(*this, false));
}

void TCPReassembler::initialize() {
  if (device_) {
    std::string err;
    offload::Services& sv = offload::services(worker().runtime());
    auto d = sv.device(err);
    if (!d && sv.claim_device_report())
      fmt::print(stderr, "shoal: {}: no device ({}); segments are reassembled one by one on the CPU\n", name(), err);
    batch_.init(std::move(d));
  }
  mgr_->table().on_release([this](uint32_t id, const flow::Flow&, flow::Release) {
    flow::Stream*& s = slot(id);
    if (!s) return;
    r_.finish(*s, id);
    live_.erase(s);
    delete s;
    s = nullptr;
    streams_.add(uint64_t(-1));
  });
}

TCPReassembler& TCPReassembler::require(Element* e, Args& a) {
  TCPReassembler* t = e->ninputs() ? find_upstream<TCPReassembler>(e) : nullptr;
  if (!t) a.fail(fmt::format("{} needs a TCPReassembler upstream (the streams it reads)", e->class_name()));
  return *t;
}

flow::Stream*& TCPReassembler::slot(uint32_t id) {
  return *reinterpret_cast<flow::Stream**>(mgr_->table().state(id) + off_);
}

void TCPReassembler::segments(PacketBatch* b) {
  flow::FlowTable& t = mgr_->table();
  b->for_each([&](uint32_t, Packet* p) {
    uint32_t id = p->anno().flow;
    if (!id || t.flow(id).key.proto != 6) return;
    uint32_t len = 0;
    const uint8_t* ip = flow_ip_header(p, len);
    k::ParsedKey pk;
    if (!ip) return;
    k::KeyKind kind = k::parse_conn_key(ip, len, pk);
    if (pk.icmp_error) return;
    if (kind == k::KeyKind::Frag || kind == k::KeyKind::FirstFrag) {
      fragmented_.add(1);  // reassemble IP first (IPReassembler) to see these
      return;
    }
    if (kind != k::KeyKind::Conn || !pk.l4_off || len < pk.l4_off + 20u) {
      bad_header_.add(1);
      return;
    }
    const uint8_t* tcp = ip + pk.l4_off;
    uint32_t doff = uint32_t(tcp[12] >> 4) * 4;
    uint32_t avail = len - pk.l4_off;
    if (doff < 20 || doff > avail) {
      bad_header_.add(1);
      return;
    }
    flow::Stream*& s = slot(id);
    if (!s) {
      s = new flow::Stream;
      live_.insert(s);
      streams_.add(1);
    }
    // the payload the IP header declares, within what the packet holds
    uint32_t n = std::min<uint32_t>(pk.payload_len, avail - doff);
    if (device_)
      segs_.push_back({s, id, p->anno().flow_dir, pk.tcp_flags, k::load_be32(tcp + 4), tcp + doff, n});
    else
      r_.segment(*s, id, p->anno().flow_dir, k::load_be32(tcp + 4), pk.tcp_flags, tcp + doff, n);
  });
  if (segs_.empty()) return;
  std::string err;
  uint64_t failures = batch_.counters().device_failures.get();
  batch_.run(r_, segs_, err);
  segs_.clear();
  if (batch_.counters().device_failures.get() > failures && failures == 0)
    fmt::print(stderr,
               "shoal: {}: the device failed ({}); its batches are reassembled on the CPU (counted in "
               "'device_failures')\n",
               name(), err);
}

void TCPReassembler::push(int, PacketBatch* b) {
  segments(b);
  output_push(0, b);
}

PacketBatch* TCPReassembler::pull(int, uint32_t max) {
  PacketBatch* b = input_pull(0, max);
  if (b) segments(b);
  return b;
}

void TCPReassembler::stream_data(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) {
  for (auto* s : sinks_) s->stream_data(flow, dir, offset, data, len);
}
void TCPReassembler::stream_gap(uint32_t flow, uint8_t dir, uint64_t offset, uint64_t len) {
  for (auto* s : sinks_) s->stream_gap(flow, dir, offset, len);
}
void TCPReassembler::stream_end(uint32_t flow, uint8_t dir) {
  for (auto* s : sinks_) s->stream_end(flow, dir);
}

void TCPReassembler::add_handlers() {
  add_stat_handler("streams", streams_);
  add_stat_handler("bad_header", bad_header_);
  add_stat_handler("fragmented", fragmented_);
  auto num = [this](const char* name, Stat flow::StreamCounters::*m) {
    add_read_handler(
        name, [this, m] { return std::to_string((r_.counters().*m).get()); }, Agg::Sum, true);
  };
  num("segments", &flow::StreamCounters::segments);
  num("delivered", &flow::StreamCounters::delivered);
  num("out_of_order", &flow::StreamCounters::out_of_order);
  num("retransmitted", &flow::StreamCounters::retransmitted);
  num("overlaps", &flow::StreamCounters::overlaps);
  num("overlap_differ", &flow::StreamCounters::overlap_differ);
  num("overwritten", &flow::StreamCounters::overwritten);
  num("untracked", &flow::StreamCounters::untracked);
  num("gaps", &flow::StreamCounters::gaps);
  num("gap_bytes", &flow::StreamCounters::gap_bytes);
  num("buffer_full", &flow::StreamCounters::buffer_full);
  num("after_fin", &flow::StreamCounters::after_fin);
  num("after_rst", &flow::StreamCounters::after_rst);
  num("no_handshake", &flow::StreamCounters::no_handshake);
  num("syn_data", &flow::StreamCounters::syn_data);
  num("buffered", &flow::StreamCounters::buffered);
  num("buffered_peak", &flow::StreamCounters::buffered_peak);
  auto dev = [this](const char* name, Stat flow::BatchCounters::*m) {
    add_read_handler(
        name, [this, m] { return std::to_string((batch_.counters().*m).get()); }, Agg::Sum, true);
  };
  dev("device_batches", &flow::BatchCounters::batches);
  dev("device_placed", &flow::BatchCounters::placed);
  dev("one_by_one", &flow::BatchCounters::one_by_one);
  dev("device_failures", &flow::BatchCounters::device_failures);
  add_read_handler("device", [this] { return batch_.device() ? batch_.device()->describe() : std::string(); });
}

SHOAL_ELEMENT(
    TCPReassembler, .name = "TCPReassembler", .ports = "1/1", .processing = "a/a",
    .summary = "reassembles each TCP connection's byte streams for the stream elements downstream",
    .description =
        "Packets pass unchanged. Each TCP segment's payload goes into its connection's stream for that direction (the "
        "flow layer of the FlowIPManager upstream); stream elements downstream (TCPStreamDump) receive each "
        "direction's bytes once and in order, as soon as they follow on, with their stream offsets (0: the first byte "
        "after the SYN).\n\n"
        "Out-of-order data is buffered up to BUFFER bytes per direction and MEMORY bytes over all streams of the "
        "worker; past a cap the oldest hole is given up (a gap, reported to the stream elements and counted) and the "
        "stream goes on. Overlapping buffered data is resolved by POLICY: first keeps the bytes that came first, last "
        "the bytes that came last; a system's name (Suricata's host-os-policy names) resolves it as that system's "
        "TCP stack would (target-based reassembly: by where the new segment starts and ends against each earlier "
        "one; bsd, Suricata's default, gives the new data the bytes of an earlier segment it starts before; linux "
        "also those of one it starts with and outlasts; old-linux, solaris and hpux11 more; vista none). Data "
        "already delivered never changes downstream (a retransmission of it is counted and dropped; "
        "'overwritten' counts the bytes the policy would have given it). Sequence numbers wrap. Data on a SYN is "
        "stream data. A "
        "direction whose SYN was not seen is picked up at its first data (MIDSTREAM true) or not reassembled. Data "
        "past a FIN, or after a RST, is counted and dropped; a RST ends both directions. When the flow ends, holes "
        "left become gaps and what was buffered is delivered.\n\n"
        "IP fragments of TCP are counted ('fragmented') and not reassembled; reassemble IP first.\n\n"
        "DEVICE true reassembles each batch at once on the device (run --device; GASPP's batch reassembly): the "
        "device sorts the batch's segments by connection direction and offset and finds with max-scans which "
        "continue their streams; those are delivered from the packets as they are, the rest (connections with a "
        "SYN, FIN or RST in the batch, overlaps, data past a hole, held data, and every direction under a system's "
        "POLICY) one by one on the CPU, so the streams, "
        "gaps and counters are those of DEVICE false (only 'buffered' and 'buffered_peak' are lower: data the "
        "batch brings out of order is placed, not held). A device failure sends its batch one by one (counted).",
    .args = {{"POLICY", "first, last or a system", "overlap policy (default first)"},
             {"BUFFER", "bytes", "out-of-order bytes held per direction (default 1 MB)"},
             {"MEMORY", "bytes", "out-of-order bytes held over all streams, per worker (default 64 MB)"},
             {"MIDSTREAM", "boolean", "pick up a direction without its SYN (default true)"},
             {"DEVICE", "boolean", "place each batch's segments on the device (default false)"}},
    .handlers = {{"streams", "r", "connections with a stream now"},
                 {"segments", "r", "segments with payload"},
                 {"delivered", "r", "bytes delivered in order"},
                 {"out_of_order", "r", "segments that came ahead of a hole"},
                 {"retransmitted", "r", "segments with data already delivered"},
                 {"overlaps", "r", "buffered data overlapped by a later segment"},
                 {"overlap_differ", "r", "overlaps whose bytes differed"},
                 {"overwritten", "r", "delivered bytes a retransmission would have replaced by POLICY"},
                 {"untracked", "r",
                  "segments a system's POLICY did not remember (over 16 plus one per 64 bytes held a direction: "
                  "the bytes they share with later ones stay)"},
                 {"gaps", "r", "holes given up"},
                 {"gap_bytes", "r", "bytes in those holes"},
                 {"buffer_full", "r", "holes given up (or segments not held) because a cap was reached"},
                 {"after_fin", "r", "segments with data past the FIN"},
                 {"after_rst", "r", "segments with data after a RST"},
                 {"no_handshake", "r", "segments dropped from streams for want of a SYN (MIDSTREAM false)"},
                 {"syn_data", "r", "SYNs with data"},
                 {"buffered", "r", "out-of-order bytes held now"},
                 {"buffered_peak", "r", "the most out-of-order bytes held at once"},
                 {"bad_header", "r", "TCP packets with a header cut short or a bad data offset"},
                 {"fragmented", "r", "IP fragments of TCP (not reassembled)"},
                 {"device_batches", "r", "batches whose segments the device placed (DEVICE true)"},
                 {"device_placed", "r", "segments the device placed in their streams"},
                 {"one_by_one", "r", "segments with data reassembled one by one on the CPU (DEVICE true)"},
                 {"device_failures", "r", "batches the device failed, reassembled on the CPU"},
                 {"device", "r", "the device (DEVICE true)"}},
    .example =
        "FromDump(in.pcap, STOP true) -> FlowIPManager -> TCPReassembler(POLICY last) -> "
        "TCPStreamDump(streams/) -> Discard;");

}  // namespace shoal

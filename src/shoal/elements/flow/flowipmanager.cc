// FlowIPManager: one flow-table lookup per packet for every stateful element
// downstream (FastClick's FlowIPManager, with conntrack's TCP states and
// timeouts).
#include "shoal/elements/flow/flowipmanager.hh"

#include <fmt/format.h>
#include <pcap/dlt.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <thread>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/trace_clock.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/flowhash.hh"

namespace shoal {

const uint8_t* flow_ip_header(Packet* p, uint32_t& len) {
  if (p->has_network_header()) {
    int64_t off = p->network_header_offset();
    if (off < 0 || off >= int64_t(p->length())) return nullptr;
    len = p->length() - uint32_t(off);
    return p->data() + off;
  }
  const uint8_t* d = p->data();
  uint32_t n = p->length();
  uint32_t off = 0;
  uint16_t type = 0;
  if (k::eth_l3(d, n, off, type) && (type == k::kEthIPv4 || type == k::kEthIPv6) && off <= n) {
    len = n - off;
    return d + off;
  }
  if (n >= 20 && ((d[0] >> 4) == 4 || (d[0] >> 4) == 6)) {
    len = n;
    return d;
  }
  return nullptr;
}

int vlan_stack(const Packet* p, uint16_t ids[3]) {
  int n = 0;
  const uint8_t* end = p->data() + p->length();
  auto frame_tags = [&](const uint8_t* e) {
    for (const uint8_t* t = e + 12; t + 4 <= end && n < 3; t += 4) {
      uint16_t type = k::load_be16(t);
      if (type != k::kEthVLAN && type != k::kEthQinQ) break;
      ids[n++] = k::load_be16(t + 2) & 0x0fff;
    }
  };
  int dlt = io::link_dlt(p->anno().link);
  if (p->has_mac_header() && p->mac_header_offset() >= 0 && (dlt < 0 || dlt == DLT_EN10MB))
    frame_tags(p->data() + p->mac_header_offset());
  const Anno& a = p->anno();
  uint32_t eth = uint32_t(a.user[1]) | uint32_t(a.user[2]) << 8;  // (TunnelDecap's inner frame)
  if (!(a.flags & Anno::kTunnelInner) || !eth || a.user[3] == 2 || a.user16 + eth + 14 > p->length())
    return n;  // (no inner frame: IP, or PPP)
  const uint8_t* inner = p->data() + a.user16 + eth;
  if (a.user[3] == 1 && eth >= 8 && n < 3)
    if (uint16_t id = k::load_be16(inner - 8) & 0x0fff) ids[n++] = id;
  frame_tags(inner);
  return n;
}

namespace {

constexpr uint64_t kNsPerSec = 1'000'000'000ull;

}  // namespace

void FlowIPManager::configure(Args& a) {
  uint64_t capacity = cfg_.capacity, memory = 0;
  Duration gran{cfg_.granularity_ns};
  a.read_p("CAPACITY", capacity).read("MEMORY", memory).read("MIDSTREAM", cfg_.midstream).read("GRANULARITY", gran);
  a.read("ASYNC_ONESIDE", cfg_.async_oneside).read("VLAN", vlan_).read("TCP_WINDOW", window_arg_);
  cfg_.granularity_ns = gran.ns;
  for (int c = 0; c < k::kFlowClasses; ++c) {
    Duration d{cfg_.timeouts.ns[c]};
    a.read(flow::Timeouts::kArgNames[c], d);
    if (d.ns == 0) a.fail(fmt::format("{} must be positive", flow::Timeouts::kArgNames[c]));
    cfg_.timeouts.ns[c] = d.ns;
  }
  a.complete();
  if (capacity == 0 || capacity > (1u << 30)) a.fail("CAPACITY must be between 1 and 2^30 flows");
  cfg_.capacity = uint32_t(capacity);
  cfg_.memory = memory;
}

void FlowIPManager::initialize() {
  // Stateful elements downstream reserved their state in their configure(),
  // and asked for window tracking there.
  cfg_.tcp_window = window_arg_ || window_wanted_;
  table_.init(cfg_);
  trace_ = TraceClock::of(this);
  // Elements downstream that hold batches for later (offload aggregates)
  // use their packets' flow state then: ended flows wait for them.
  std::vector<Element*> seen{this}, todo{this};
  while (!todo.empty()) {
    Element* e = todo.back();
    todo.pop_back();
    for (int i = 0; i < e->noutputs(); ++i) {
      Element* n = e->output(i).e;
      if (!n || std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
      seen.push_back(n);
      todo.push_back(n);
      if (n->holds_batches()) holders_.push_back(n);
    }
  }
  table_.hold(!holders_.empty());
  table_.on_reuse([this](uint32_t id, const flow::Flow& f) {
    if (retain_) keep_released(id, f);
  });
  timer_.owner = this;
  timer_.background = true;  // flow time on the wall clock must not keep a finished run going
}

void FlowIPManager::keep_released(uint32_t id, const flow::Flow& f) {
  const uint32_t sb = table_.state_bytes();
  if (released_.empty()) {
    released_.assign(kRetain, Released{0, 0});
    released_state_.assign(size_t(kRetain) * sb, 0);
  }
  Released& r = released_[released_next_];
  if (r.key) released_at_.erase(r.key);
  r.key = uint64_t(id) << 32 | f.gen;
  r.hash = f.hash;
  std::memcpy(released_state_.data() + size_t(released_next_) * sb, table_.state(id), sb);
  released_at_[r.key] = released_next_;
  released_next_ = (released_next_ + 1) % kRetain;
}

uint8_t* FlowIPManager::released_state(uint32_t id, uint32_t gen, uint32_t& hash) {
  auto it = released_at_.find(uint64_t(id) << 32 | gen);
  if (it == released_at_.end()) return nullptr;
  hash = released_[it->second].hash;
  return released_state_.data() + size_t(it->second) * table_.state_bytes();
}

std::string FlowIPManager::state_owner(const Element& e, bool carried) {
  std::string o = fmt::format("{} {}({})", e.class_name(), e.name(), e.config_string());
  if (!carried) o += fmt::format(" {}", static_cast<const void*>(&e));  // unlike any other element's
  return o;
}

void FlowIPManager::hot_swapped(Element* old) {
  auto* o = dynamic_cast<FlowIPManager*>(old);
  if (!o || !o->table_.size()) return;
  std::string why;
  if (!table_.take(o->table_, why)) {
    // The old flows end with the old configuration (their records written).
    if (worker().id() == 0) fmt::print(stderr, "shoal: {}: the flows are not carried over: {}\n", name(), why);
    return;
  }
  clock_ = o->clock_;
  last_mono_ = o->last_mono_;
  live_clock_ = o->live_clock_;
  if (table_.size()) worker().schedule(timer_, worker().now_ns() + 1'000'000'000ull);
}

FlowIPManager* FlowIPManager::upstream(Element* e, int port) { return find_upstream<FlowIPManager>(e, port); }

FlowIPManager& FlowIPManager::require(Element* e, Args& a) {
  FlowIPManager* m = e->ninputs() ? upstream(e, 0) : nullptr;
  if (!m)
    a.fail(fmt::format("{} needs a FlowIPManager upstream (the flow layer it keeps its state in)", e->class_name()));
  return *m;
}

// The epoch through which every batch tracked is done with: the one before
// the oldest batch an element downstream holds, or the last tracked.
uint64_t FlowIPManager::done_epoch() const {
  uint64_t oldest = UINT64_MAX;
  for (const Element* h : holders_)
    if (uint64_t e = h->oldest_flow_epoch(); e && e < oldest) oldest = e;
  return oldest == UINT64_MAX ? table_.epoch() : oldest - 1;
}

void FlowIPManager::tick(uint64_t now) {
  if (now > clock_) clock_ = now;
  const bool held = table_.held();
  const uint64_t done = held ? done_epoch() : 0;
  if (held) table_.settle(done);
  table_.expire(clock_);
  if (held) table_.settle(done);  // (flows that timed out with no packet held: their hooks now, as without holders)
}

void FlowIPManager::track(PacketBatch* b) {
  uint32_t cap = b->capacity();
  if (keys_.size() < cap) {
    keys_.resize(cap);
    lens_.resize(cap);
    nows_.resize(cap);
    ids_.resize(cap);
    dirs_.resize(cap);
    facts_.resize(cap);
    slots_.resize(cap);
    ips_.resize(cap);
  }
  uint64_t wall = 0;
  uint32_t n = 0;
  // (Locals, and the body inlined into both of for_each's loops: through
  // members and a call per packet, the pass spilled and reloaded them all.)
  k::ParsedKey* keys = keys_.data();
  uint32_t* lens = lens_.data();
  uint32_t* slots = slots_.data();
  const uint8_t** ips = ips_.data();
  const bool window = cfg_.tcp_window;
  uint64_t* nows = nows_.data();
  uint64_t clock = clock_;
  const bool vlan = vlan_;
  b->for_each([&](uint32_t i, Packet * p) __attribute__((always_inline)) {
    // the flow layer's clock: the packet's time, or the trace's when later
    // (a capture's time going back: one worker's clock on every worker)
    uint64_t ts = std::max(p->timestamp_ns(), p->trace_ns());
    if (!ts) ts = wall ? wall : (wall = realtime_ns());
    if (n == 0) {
      // expiry runs once a batch, at its first packet's time
      if (clock_ == 0) {
        uint64_t rt = realtime_ns();
        live_clock_ = ts + 60 * kNsPerSec > rt && ts < rt + 60 * kNsPerSec;
      }
      tick(ts);
      clock = clock_;
    } else if (ts > clock) {
      clock = ts;
    }
    uint32_t len = 0;
    const uint8_t* ip;
    if (int64_t off = p->network_header_offset(); p->has_network_header() && off >= 0 && off < int64_t(p->length())) {
      ip = p->data() + off;  // (flow_ip_header's first case, inline)
      len = p->length() - uint32_t(off);
    } else {
      ip = flow_ip_header(p, len);
    }
    // the IP header found is marked (as MarkIPHeader would) for the elements
    // after: device chains reach it through the annotation
    if (ip && !p->has_network_header()) p->set_network_header(uint32_t(ip - p->data()));
    if (ip && !(p->anno().flags & Anno::kFragment))  // (a fragment whose datagram follows: no flow)
      k::parse_conn_key(ip, len, keys[n]);
    else
      keys[n].kind = k::KeyKind::NotIP;  // counted as no flow
    if (vlan) {
      uint16_t v[3];
      keys[n].key.vlan = k::vlan_key(v, vlan_stack(p, v));
    }
    lens[n] = len;
    if (window) ips[n] = ip;
    nows[n] = clock;
    slots[n] = i;
    ++n;
  });
  clock_ = clock;
  if (n == 0 && table_.held()) table_.settle(done_epoch());  // (no packet: no tick)
  table_.track_batch(keys_.data(), lens_.data(), nows_.data(), n, ids_.data(), dirs_.data(), facts_.data(),
                     window ? ips : nullptr);
  b->anno.flow_epoch = table_.epoch();
  const bool routes = noutputs() > 1;  // packets without a flow leave on output 1
  for (uint32_t j = 0; j < n; ++j) {
    Packet* p = b->at(slots_[j]);
    p->anno().flow = ids_[j];
    p->anno().flow_dir = dirs_[j];
    p->anno().flow_facts = facts_[j];
    if (routes) b->result(slots_[j]) = int16_t(ids_[j] ? 0 : 1);
  }
  last_mono_ = worker().now_ns();
  if (owner_.load(std::memory_order_relaxed) != std::this_thread::get_id())
    owner_.store(std::this_thread::get_id(), std::memory_order_release);
  if (live_clock_ && !timer_.scheduled) worker().schedule(timer_, last_mono_ + kNsPerSec);
}

void FlowIPManager::push(int, PacketBatch* b) {
  track(b);
  if (noutputs() == 1) return output_push(0, b);
  dispatch(b);
}

PacketBatch* FlowIPManager::pull(int, uint32_t max) {
  PacketBatch* b = input_pull(0, max);
  if (!b) return nullptr;
  track(b);
  if (noutputs() == 1) return b;
  b = dispatch(b, 0);
  if (b->empty()) {
    recycle(b);
    return nullptr;
  }
  return b;
}

// Live traffic only: while no packet comes, flow time follows the wall
// clock, so idle flows still expire. (Reading a trace, flow time is the
// trace's and stands still between packets, as in Zeek.)
void FlowIPManager::run_timer(Timer&) {
  uint64_t now = worker().now_ns();
  if (now >= last_mono_ + kNsPerSec) {
    tick(clock_ + (now - last_mono_));
    last_mono_ = now;
  }
  if (table_.size()) worker().schedule(timer_, now + kNsPerSec);
}

// At a stop, once the packets in flight downstream (offloaded aggregates)
// have come through, and before the elements downstream close their files:
// every flow still open ends (reason 'end'), so stateful elements see each
// one go after its last packet. The flows whose timeout had passed by the
// last packet (of a capture: the trace's last, whichever worker had it)
// end as timed out first: expiry passes come once a batch, and where the
// last batch began must not decide.
bool FlowIPManager::end_at_stop() {
  if (flushed_) return false;
  flushed_ = true;
  // (the trace's last time: with several workers the last packet may have
  // been another's, and one worker or several must end the same flows so)
  uint64_t end = std::max(clock_, trace_ ? trace_->get(worker().id()) : 0);
  if (end) tick(end);
  table_.flush();
  return true;
}

void FlowIPManager::add_handlers() {
  auto num = [this](const char* name, auto get) {
    add_read_handler(
        name, [this, get] { return std::to_string(get(table_)); }, Agg::Sum, true);
  };
  num("count", [](const flow::FlowTable& t) { return t.counters().live.get(); });
  num("capacity", [](const flow::FlowTable& t) { return uint64_t(t.capacity()); });
  num("memory", [](const flow::FlowTable& t) { return uint64_t(t.memory_bytes()); });
  num("lookups", [](const flow::FlowTable& t) { return t.counters().lookups.get(); });
  num("inserts", [](const flow::FlowTable& t) { return t.counters().inserts.get(); });
  num("expired", [](const flow::FlowTable& t) { return t.counters().expired.get(); });
  num("evicted", [](const flow::FlowTable& t) { return t.counters().evicted.get(); });
  num("reopened", [](const flow::FlowTable& t) { return t.counters().reopened.get(); });
  num("reset", [](const flow::FlowTable& t) { return t.counters().reset.get(); });
  num("reused_early", [](const flow::FlowTable& t) { return t.counters().reused_early.get(); });
  add_read_handler("held", [this] { return std::to_string(table_.held() ? holders_.size() : 0); });
  num("no_flow", [](const flow::FlowTable& t) { return t.counters().no_flow.get(); });
  num("fragment_orphans", [](const flow::FlowTable& t) { return t.counters().frag_orphans.get(); });
  num("icmp_errors", [](const flow::FlowTable& t) { return t.counters().icmp_errors.get(); });
  num("tcp_ignored", [](const flow::FlowTable& t) { return t.counters().tcp_ignored.get(); });
  num("tcp_invalid", [](const flow::FlowTable& t) {
    const flow::Counters& c = t.counters();
    return c.tcp_seq_over.get() + c.tcp_ack_over.get() + c.tcp_bad_rst.get() + c.tcp_bad_state.get();
  });
  num("tcp_seq_over", [](const flow::FlowTable& t) { return t.counters().tcp_seq_over.get(); });
  num("tcp_ack_over", [](const flow::FlowTable& t) { return t.counters().tcp_ack_over.get(); });
  num("tcp_bad_rst", [](const flow::FlowTable& t) { return t.counters().tcp_bad_rst.get(); });
  num("tcp_bad_state", [](const flow::FlowTable& t) { return t.counters().tcp_bad_state.get(); });
  add_read_handler(
      "flows", [this] { return on_worker([this] { return list_flows(); }); }, Agg::Concat);
}

std::string FlowIPManager::list_flows() const {
  std::string out;
  table_.for_each([&](uint32_t, const flow::Flow& f) {
    std::string state = f.key.proto == 6 ? flow::tcp_state_name(f.tcp.state) : (f.pkts[1] ? "REPLIED" : "UNREPLIED");
    uint64_t expires = f.last_ns + table_.timeout_ns(f);
    out += fmt::format("{} {} {} packets {}/{} bytes {}/{} age {:.3f} idle {:.3f} expires {:.3f}\n",
                       flow::flow_tuple(f), state, table_.app_name(f.app), f.pkts[0], f.pkts[1], f.bytes[0], f.bytes[1],
                       double(clock_ - f.first_ns) / 1e9, double(clock_ - f.last_ns) / 1e9,
                       double(expires > clock_ ? expires - clock_ : 0) / 1e9);
  });
  return out;
}

// The table belongs to the worker that tracks packets into it: while it
// runs, another thread's read is handed to it (through its mailbox) and
// waited for; otherwise (the worker's own thread, or no packet seen yet, or
// the run over) it is read here.
std::string FlowIPManager::on_worker(const std::function<std::string()>& f) {
  std::thread::id owner = owner_.load(std::memory_order_acquire);
  if (owner == std::thread::id() || owner == std::this_thread::get_id() || worker().runtime().stopping()) return f();
  auto done = std::make_shared<std::promise<std::string>>();
  auto result = done->get_future();
  worker().post([done, f] { done->set_value(f()); });
  if (result.wait_for(std::chrono::seconds(2)) != std::future_status::ready) return "(the worker did not answer)\n";
  return result.get();
}

SHOAL_ELEMENT(
    FlowIPManager, .name = "FlowIPManager", .ports = "1/1-2", .processing = "a/a",
    .summary = "the flow layer: one flow lookup per packet for the stateful elements downstream",
    .description =
        "Finds each IPv4/IPv6 packet's connection in a bounded flow table and sets the packet's flow annotations (its "
        "flow, and its direction: from the originator or the responder). Both directions of a connection share one "
        "flow; ICMP errors belong to the connection they quote; a later IP fragment belongs to the flow its first "
        "fragment opened (seen within 30 s); ICMP queries are keyed by their identifier.\n\n"
        "The IP header is the network header annotation (after CheckIPHeader), else an Ethernet frame's (VLAN tags "
        "skipped), else the packet's start. Packets that get no flow (not IP, cut short, a fragment whose first "
        "fragment was not seen, an ICMP error about an untracked connection) leave on output 1 if there is one, else "
        "on output 0 with no flow.\n\n"
        "TCP connections follow conntrack's states (SYN_SENT, SYN_RECV, ESTABLISHED, FIN_WAIT, CLOSE_WAIT, LAST_ACK, "
        "TIME_WAIT, CLOSE); a SYN on a connection in TIME_WAIT or CLOSE starts a new flow ('reopened'). With "
        "TCP_WINDOW "
        "(or when an element downstream asks for it, as Firewall does) the sequence and acknowledgement numbers are "
        "checked against each direction's window too, and the states follow conntrack's table (with SYN_SENT2 for a "
        "simultaneous open): a segment beyond what "
        "the receiver allowed, one that acknowledges data never sent, a reset before the sequence number the other "
        "side acknowledged, or one the state does not allow (a FIN before the SYN-ACK...) is INVALID (its packet "
        "passes with a flow fact that Firewall drops on) and moves nothing, so a blind reset does not close the "
        "connection; a reset inside the window but not at the expected number keeps the connection (its receiver "
        "answers with a challenge ACK, RFC 5961); a retransmission of acknowledged data, or a SYN inside a live "
        "connection, passes without moving anything (a SYN-ACK that answers such a SYN takes the tracking up on "
        "the new connection, a reset that answers it closes the connection, and RFC 5961's challenge ACKs pass "
        "as conntrack lets them: a client resets the connection a server kept, and connects again). Connections picked "
        "up midstream are checked liberally (only resets), as conntrack "
        "does. Each state, "
        "UDP "
        "(unreplied, replied), ICMP and other protocols have an idle timeout (conntrack's defaults); with window "
        "tracking, conntrack's shorter ones too: an established connection with data or a FIN not yet acknowledged "
        "times out after TCP_UNACKNOWLEDGED_TIMEOUT, after the same ACK segment four times or a zero window after "
        "TCP_MAX_RETRANS_TIMEOUT, after a reset inside the window that left it open after TCP_CLOSE_TIMEOUT, and one "
        "picked up midstream with no reply yet lives no longer than TCP_UNACKNOWLEDGED_TIMEOUT; a segment conntrack "
        "does not accept (invalid, ignored, a SYN sent again before any reply) renews nothing, and a connection a "
        "reset ends before any reply came (a refused connection, a scan's probe) is removed at once ('reset'), as "
        "conntrack does; a reply counts once one of its segments was not invalid. Expiry is exact "
        "and costs O(1) per packet (one list per timeout, in last-seen order, a flow moving on it at most once per "
        "GRANULARITY), and a packet that finds its flow past the timeout starts a new one, so where batches begin "
        "does not decide which flow a packet joins; flow time is the packets' timestamps "
        "(a trace's own time, and with several workers the trace's as FromDump read it, so a capture whose time "
        "goes back gives each worker one worker's clock; live, the wall clock also moves it while no packet comes); "
        "at a stop, the flows "
        "past their timeout at the last packet's time end as timed out, the others as 'end'. A full table evicts the "
        "flow "
        "nearest its expiry, so a flood of half-open connections evicts its own before an established one.\n\n"
        "Each worker has its own table of CAPACITY flows (FromDump, FromDevice and FromDPDKDevice keep a connection on "
        "one worker; FromXDPDevice does when the NIC's RSS hash is symmetric). "
        "Stateful elements downstream (FlowLog...) find the nearest FlowIPManager upstream and reserve per-flow state "
        "in it; at a stop every open flow ends, so they see each one go.",
    .args = {{"CAPACITY", "integer", "flows per worker (default 65536)"},
             {"MEMORY", "bytes",
              "cap on the table's memory per worker; lowers CAPACITY to fit, with the spare entries the table keeps "
              "(a quarter of CAPACITY, at most 256: a flow that ends keeps its entry until the next batch) "
              "(default: no cap)"},
             {"MIDSTREAM", "boolean",
              "pick up TCP connections whose handshake was not seen, as ESTABLISHED (default true, as conntrack's "
              "tcp_loose); the sender of the first packet seen opened it, but for a SYN-ACK's or an HTTP response's "
              "(Suricata reverses such a flow)"},
             {"ASYNC_ONESIDE", "boolean",
              "a capture of one side of each TCP connection (asymmetric routing): the handshake completes on the "
              "client's ACK without the SYN-ACK, or on the server's packets after its SYN-ACK, and a SYN-ACK opens "
              "a connection even without MIDSTREAM (Suricata's stream.async-oneside; default false)"},
             {"VLAN", "boolean",
              "flows are also keyed on the packets' VLAN ids (a frame's 802.1Q/802.1ad tags, and a tunnel's inner "
              "packet's ERSPAN and inner-frame ones): the same addresses and ports on two VLANs are two flows "
              "(Suricata's vlan.use-for-tracking; default false, as FastClick). One id is kept exactly; two or three "
              "are folded into 16 bits, so two stacks of several ids may, one time in 61,440, share a flow"},
             {"TCP_WINDOW", "boolean",
              "check TCP segments against their connection's state and windows, as conntrack (default false; on "
              "when an element downstream asks: Firewall; not with ASYNC_ONESIDE); 64 bytes of state per flow"},
             {"GRANULARITY", "duration",
              "a flow moves on its expiry list at most this often, so an idle flow may end up to this late (a "
              "packet after its timeout starts a new flow all the same; default 1 s; 0: exact, with list work on "
              "every packet)"},
             {"TCP_SYN_SENT_TIMEOUT", "duration", "default 120 s"},
             {"TCP_SYN_RECV_TIMEOUT", "duration", "default 60 s"},
             {"TCP_ESTABLISHED_TIMEOUT", "duration", "default 432000 s (5 days)"},
             {"TCP_FIN_WAIT_TIMEOUT", "duration", "default 120 s"},
             {"TCP_CLOSE_WAIT_TIMEOUT", "duration", "default 60 s"},
             {"TCP_LAST_ACK_TIMEOUT", "duration", "default 30 s"},
             {"TCP_TIME_WAIT_TIMEOUT", "duration", "default 120 s"},
             {"TCP_CLOSE_TIMEOUT", "duration", "default 10 s"},
             {"UDP_TIMEOUT", "duration", "UDP flow with no reply (default 30 s)"},
             {"UDP_STREAM_TIMEOUT", "duration", "UDP flow with replies (default 120 s)"},
             {"ICMP_TIMEOUT", "duration", "default 30 s"},
             {"GENERIC_TIMEOUT", "duration", "other protocols, and TCP without state (default 600 s)"},
             {"TCP_MAX_RETRANS_TIMEOUT", "duration",
              "with TCP_WINDOW: an established connection after the same ACK segment again and again, or a zero "
              "window (default 300 s)"},
             {"TCP_UNACKNOWLEDGED_TIMEOUT", "duration",
              "with TCP_WINDOW: an established connection with data not yet acknowledged (default 300 s)"}},
    .handlers = {{"count", "r", "flows in the table"},
                 {"capacity", "r", "flows the table holds"},
                 {"memory", "r", "bytes the table took"},
                 {"lookups", "r", "packets looked up"},
                 {"inserts", "r", "flows started"},
                 {"expired", "r", "flows that timed out"},
                 {"evicted", "r", "flows evicted from a full table"},
                 {"reopened", "r", "TCP connections ended by a new SYN on their tuple"},
                 {"reused_early", "r",
                  "entries of ended flows a new flow took while a batch held after the flow layer (an offload "
                  "aggregate) still had the ended flow's packets (more such flows than spare entries)"},
                 {"held", "r",
                  "elements after this one that hold batches for later (offload aggregates, a Batcher): an ended "
                  "flow's release (records, its entry's reuse) waits until the batches they held at its end are "
                  "done"},
                 {"reset", "r",
                  "with TCP_WINDOW: TCP connections removed at once because a reset ended them before any reply "
                  "(conntrack's rule: a refused connection, a scan's probe)"},
                 {"no_flow", "r", "packets that got no flow"},
                 {"fragment_orphans", "r", "later fragments whose first fragment was not seen"},
                 {"icmp_errors", "r", "ICMP errors looked up by the connection they quote"},
                 {"tcp_invalid", "r", "TCP segments conntrack finds INVALID (TCP_WINDOW): the sum of the four below"},
                 {"tcp_seq_over", "r", "segments beyond the receiver's window"},
                 {"tcp_ack_over", "r", "segments acknowledging data never sent"},
                 {"tcp_bad_rst", "r", "resets before the sequence number the other side acknowledged"},
                 {"tcp_bad_state", "r",
                  "segments their connection's state does not allow (conntrack's table: a FIN or the client's ACK "
                  "before the SYN-ACK, a SYN from the server once established...)"},
                 {"tcp_ignored", "r", "segments outside the window that pass and move nothing (retransmissions)"},
                 {"flows", "r",
                  "one line per flow: tuple as the originator sent it, state, application protocol ('-': not known), "
                  "packets and bytes per direction, age, idle and time left, in seconds"}},
    .example = "FromDump(in.pcap, STOP true) -> FlowIPManager(CAPACITY 1000000) -> FlowLog(conn.log) -> Discard;");

}  // namespace shoal

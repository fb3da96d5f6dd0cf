// ICMPPingSource (Click's, also ICMPSendPings): sends ICMP echo requests
// every INTERVAL (or one per pull) and, when replies come back on its input,
// keeps ping(1)'s statistics.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

namespace {

// Click's cp_unparse_microseconds: "250us" under a millisecond, else seconds
// with no trailing zeros ("0.0015s", "0s").
std::string click_microseconds(uint64_t us) {
  if (us && us < 1000) return fmt::format("{}us", us);
  std::string s = fmt::format("{}.{:06d}", us / 1000000, us % 1000000);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + "s";
}

}  // namespace

// What every worker's copy shares: the count of requests sent and, per
// sequence number, when the request left (negative once answered, as Click
// keeps them, so a second reply is a duplicate).
struct PingState {
  std::mutex mu;
  int64_t count = 0;
  int64_t sent_ns[65536] = {};
  uint64_t received = 0, duplicates = 0, timed = 0;
  uint64_t min_us = 0, max_us = 0, sum_us = 0, sum_sq_us = 0;
  void reset() {
    count = 0;
    std::memset(sent_ns, 0, sizeof sent_ns);
    received = duplicates = timed = min_us = max_us = sum_us = sum_sq_us = 0;
  }
};

class ICMPPingSource : public Element {
 public:
  void configure(Args& a) override {
    DataString d;
    a.read_mp("SRC", src_)
        .read_mp("DST", dst_)
        .read("INTERVAL", interval_)
        .read("IDENTIFIER", id_)
        .read("DATA", d)
        .read("LIMIT", limit_)
        .read("ACTIVE", active_)
        .read("VERBOSE", verbose_)
        .read("STOP", stop_)
        .read("MIRROR", mirror_);
    a.complete();
    if (id_ > 0xffff) a.fail("IDENTIFIER must be at most 65535");
    data_ = d.bytes;
    if (data_.size() > 65535 - 28) a.fail("DATA is too long for one packet");
  }
  void initialize() override {
    if (mirror_ && output_proc(0) == Proc::Pull) throw std::runtime_error("MIRROR invalid on pull element");
    state_ = shared_state<PingState>(this);
    r_not_reply_ = add_drop_reason("not-echo-reply");
    r_reply_ = add_drop_reason("echo-reply");
    r_pool_ = add_drop_reason("pool-empty");
    timer_.owner = this;
    // One stream of requests: the home worker's copy sends; replies may
    // reach any copy, which all count into the shared state.
    if (!on_home_thread()) {
      if (stop_ && limit_ >= 0) request_stop();
      return;
    }
    if (limit_ != 0 && active_ && output_proc(0) == Proc::Push) schedule_next();
  }
  void cleanup() override {
    if (ninputs() == 0 || !verbose_ || !on_home_thread()) return;
    std::string s = summary(), out;
    for (size_t at = 0; at < s.size();) {
      size_t nl = s.find('\n', at);
      if (nl == std::string::npos) nl = s.size();
      out += fmt::format("{} :: {}: {}\n", name(), class_name(), s.substr(at, nl - at));
      at = nl + 1;
    }
    std::fputs(out.c_str(), stderr);
  }

  void run_timer(Timer&) override {
    if (!active_) return;
    {
      std::lock_guard<std::mutex> g(state_->mu);
      if (limit_ >= 0 && state_->count >= limit_) {
        if (stop_) request_stop();
        return;
      }
    }
    Packet* p = make_request(nullptr);
    if (p) {
      received(1);
      PacketBatch* b = new_batch();
      b->append(p);
      output_push(0, b);
    }
    schedule_next();
  }
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* b = nullptr;
    max = std::min(max, worker().batches().batch_capacity());  // (Click's one a pull: --batch 1)
    for (uint32_t i = 0; i < max && active_; ++i) {
      {
        std::lock_guard<std::mutex> g(state_->mu);
        if (limit_ >= 0 && state_->count >= limit_) {
          if (stop_) request_stop(), stop_ = false;
          break;
        }
      }
      Packet* p = make_request(nullptr);
      if (!p) break;
      received(1);
      if (!b) b = new_batch();
      b->append(p);
    }
    return b;
  }
  void push(int, PacketBatch* b) override {
    for (uint32_t i = 0; i < b->slots(); ++i) {
      if (!b->is_live(i)) continue;
      Packet* p = b->at(i);
      b->kill(i);
      if (!take_reply(p)) {
        drop(p, r_not_reply_);
        continue;
      }
      if (mirror_) {
        // The reply's buffer becomes the next request, its data kept.
        if (Packet* q = make_request(p)) {
          PacketBatch* o = new_batch();
          o->append(q);
          output_push(0, o);
        }
        continue;
      }
      drop(p, r_reply_);
    }
    recycle(b);
  }

  void add_handlers() override {
    add_read_handler("active", [this] { return std::string(active_ ? "true" : "false"); });
    add_write_handler("active", [this](const std::string& v) {
      bool on;
      if (!parse_bool(trim(v), on)) throw std::runtime_error("type mismatch");
      active_ = on;
      if (on && on_home_thread() && !timer_.scheduled && output_proc(0) == Proc::Push)
        worker().schedule(timer_, worker().now_ns());
    });
    address_handler("src", src_);
    address_handler("dst", dst_);
    add_read_handler("count", [this] {
      std::lock_guard<std::mutex> g(state_->mu);
      return std::to_string(state_->count);
    });
    add_write_handler("limit", [this](const std::string& v) {
      int64_t n;
      if (!parse_int(trim(v), n)) throw std::runtime_error("'limit' should be integer");
      limit_ = n;
      restart();
    });
    add_write_handler("interval", [this](const std::string& v) {
      Duration d;
      if (!parse_duration(trim(v), d)) throw std::runtime_error("'interval' should be an interval");
      interval_ = d;
    });
    add_write_handler("reset_counts", [this](const std::string&) {
      {
        std::lock_guard<std::mutex> g(state_->mu);
        state_->reset();
      }
      restart();
    });
    if (ninputs() == 0) return;
    add_read_handler("summary", [this] { return summary(); });
    add_read_handler("rtt_min", [this] { return rtt([](const PingState& s) { return s.min_us; }); });
    add_read_handler("rtt_avg",
                     [this] { return rtt([](const PingState& s) { return s.sum_us / (s.timed ? s.timed : 1); }); });
    add_read_handler("rtt_max", [this] { return rtt([](const PingState& s) { return s.max_us; }); });
    add_read_handler("duplicates", [this] {
      std::lock_guard<std::mutex> g(state_->mu);
      return std::to_string(state_->duplicates);
    });
  }

 private:
  void schedule_next() { worker().schedule(timer_, worker().now_ns() + interval_.ns); }
  // After a change of LIMIT or a reset: sending again if it had stopped.
  void restart() {
    bool more;
    {
      std::lock_guard<std::mutex> g(state_->mu);
      more = limit_ < 0 || state_->count < limit_;
    }
    if (more && active_ && on_home_thread() && !timer_.scheduled && output_proc(0) == Proc::Push) schedule_next();
  }
  void address_handler(const char* name, IPv4Addr& a) {
    add_read_handler(name, [&a] { return format_ipv4(a.b.data()); });
    add_write_handler(name, [&a](const std::string& v) {
      IPv4Addr x;
      if (!parse_ipv4(trim(v), x)) throw std::runtime_error("syntax error");
      a = x;
    });
  }

  // The next echo request, in q's buffer (its data kept) or a new packet
  // carrying DATA. Click's layout: IP ID and sequence count from 1 and
  // skip 0 (the sequence in network order), TTL 200, the identifier in this
  // machine's byte order as Click writes it on Linux.
  Packet* make_request(Packet* q) {
    const uint32_t hsz = 28;
    Packet* p = q;
    if (p) {
      if (p->has_network_header() && p->network_header_offset() > 0) p->pull(uint32_t(p->network_header_offset()));
      if (p->length() < hsz) {
        drop(p, r_not_reply_);
        return nullptr;
      }
    } else {
      p = worker().pool().alloc(uint32_t(hsz + data_.size()));
      if (!p) {
        count_lost(r_pool_);
        return nullptr;
      }
      p->set_length(uint32_t(hsz + data_.size()));
      std::memcpy(p->data() + hsz, data_.data(), data_.size());
    }
    uint8_t* ip = p->data();
    std::memset(ip, 0, hsz);
    uint64_t now = realtime_ns();
    uint16_t seq;
    {
      std::lock_guard<std::mutex> g(state_->mu);
      seq = uint16_t(state_->count % 0xffff + 1);
      ++state_->count;
      state_->sent_ns[seq] = int64_t(now);
    }
    ip[0] = 0x45;
    k::store_be16(ip + 2, uint16_t(p->length()));
    k::store_be16(ip + 4, seq);
    ip[8] = 200;
    ip[9] = 1;
    std::memcpy(ip + 12, src_.b.data(), 4);
    std::memcpy(ip + 16, dst_.b.data(), 4);
    set_ip_checksum(ip, 20);
    uint8_t* icmp = ip + 20;
    icmp[0] = 8;
    const uint16_t id = uint16_t(id_);
    std::memcpy(icmp + 4, &id, 2);
    k::store_be16(icmp + 6, seq);
    k::store_be16(icmp + 2, k::ip_checksum(icmp, p->length() - 20));
    std::memcpy(p->anno().dst_ip, dst_.b.data(), 4);
    p->set_network_header(0);
    p->set_timestamp_ns(now);
    return p;
  }

  // Counts an echo reply to one of this source's requests (by identifier
  // and sequence number); false for anything else.
  bool take_reply(Packet* p) {
    uint32_t hl;
    const uint8_t* ip = ip_header(p, &hl);
    if (!ip || ip[9] != 1) return false;
    uint64_t tot = k::load_be16(ip + 2);
    uint64_t avail = p->length() - uint64_t(p->network_header_offset());
    if (tot < hl + 8 || tot > avail) return false;
    const uint8_t* icmp = ip + hl;
    uint16_t id;
    std::memcpy(&id, icmp + 4, 2);
    if (icmp[0] != 0 || id != uint16_t(id_)) return false;
    uint16_t seq = k::load_be16(icmp + 6);
    uint64_t at = p->timestamp_ns() ? p->timestamp_ns() : realtime_ns();
    uint64_t us = 0;
    {
      std::lock_guard<std::mutex> g(state_->mu);
      PingState& s = *state_;
      int64_t& sent_at = s.sent_ns[seq];
      if (sent_at == 0) return true;  // not a request of ours (or reset since): passes uncounted
      if (sent_at < 0) ++s.duplicates, sent_at = -sent_at;
      us = at > uint64_t(sent_at) ? (at - uint64_t(sent_at)) / 1000 : 0;
      if (!s.timed || us < s.min_us) s.min_us = us;
      if (!s.timed || us > s.max_us) s.max_us = us;
      s.sum_us += us;
      s.sum_sq_us += us * us;
      ++s.timed;
      ++s.received;
      sent_at = -sent_at;
    }
    if (verbose_)
      std::fputs(fmt::format("{} :: {}: {} bytes from {}: icmp_seq={} ttl={} time={}.{:03d} ms\n", name(), class_name(),
                             tot - hl - 8, format_ipv4(ip + 12), seq, ip[8], us / 1000, us % 1000)
                     .c_str(),
                 stderr);
    return true;
  }

  // ping(1)'s summary, in Click's words.
  std::string summary() {
    std::lock_guard<std::mutex> g(state_->mu);
    const PingState& s = *state_;
    std::string o = fmt::format("{} packets transmitted, {} received", s.count, s.received - s.duplicates);
    if (s.duplicates) o += fmt::format(", +{} duplicates", s.duplicates);
    if (s.count) {
      int64_t lost = s.count - int64_t(s.received - s.duplicates);
      o += fmt::format(", {}% packet loss\n", lost * 100 / s.count);
    }
    if (s.received) {
      uint64_t avg = s.sum_us / s.received, avg_sq = s.sum_sq_us / s.received;
      uint64_t mdev = avg_sq > avg * avg ? uint64_t(std::sqrt(double(avg_sq - avg * avg))) : 0;
      auto ms = [](uint64_t us) { return fmt::format("{}.{:03d}", us / 1000, us % 1000); };
      o += fmt::format("rtt min/avg/max/mdev = {}/{}/{}/{}\n", ms(s.min_us), ms(avg), ms(s.max_us), ms(mdev));
    }
    return o;
  }
  template <class F>
  std::string rtt(F f) {
    std::lock_guard<std::mutex> g(state_->mu);
    return click_microseconds(f(*state_));
  }

  IPv4Addr src_, dst_;
  Duration interval_{1'000'000'000};
  uint32_t id_ = 0;
  std::string data_;
  int64_t limit_ = -1;
  bool active_ = true, verbose_ = true, stop_ = false, mirror_ = false;
  Timer timer_;
  std::shared_ptr<PingState> state_;
  uint16_t r_not_reply_ = 0, r_reply_ = 0, r_pool_ = 0;
};
// Both names' reference.
#define SHOAL_PING_DOC(NAME, SUMMARY)                                                                              \
  .name = NAME, .ports = "0-1/1", .processing = "h/a", .summary = SUMMARY,                                         \
  .description =                                                                                                   \
      "Click's ICMPPingSource (ICMPSendPings): an IPv4 ICMP echo request from SRC to DST every INTERVAL (pushed "  \
      "on a timer; pulled: one per packet asked for), LIMIT in all (-1: no limit), each carrying DATA. Click's "   \
      "layout: TTL 200, the IP ID and the echo sequence count 1, 2, ... and skip 0, the IDENTIFIER in this "       \
      "machine's byte order (as Click writes it on Linux); timestamp, network header and DST_IP annotations "      \
      "set. Echo replies with its identifier, sent to the optional input, are matched by sequence number to "      \
      "their request: each prints a ping(1) line (unless VERBOSE is false), and the summary (printed at exit) "    \
      "gives sent, received, duplicates, loss and RTT min/avg/max/mdev. An RTT is the reply's timestamp "          \
      "(the time it was read) minus the request's; a reply without a timestamp is timed on arrival. Other "        \
      "packets on the input are dropped ('not-echo-reply'); replies, once counted, end there too ('echo-reply'). " \
      "With MIRROR, each reply's buffer is sent back "                                                             \
      "at once as the next request (push output only). One stream whatever the number of workers: the home "       \
      "worker sends, and replies reaching any worker are counted together.",                                       \
  .args = {{"SRC", "IPv4 address", "source address, mandatory"},                                                   \
           {"DST", "IPv4 address", "destination address, mandatory"},                                              \
           {"INTERVAL", "time", "time between requests when pushed (default 1 s)"},                                \
           {"IDENTIFIER", "unsigned", "the echo identifier (default 0)"},                                          \
           {"DATA", "data string", "the echo payload (default empty)"},                                            \
           {"LIMIT", "integer", "requests to send (default -1: no limit)"},                                        \
           {"ACTIVE", "boolean", "send when true (default true)"},                                                 \
           {"VERBOSE", "boolean", "print a line per reply and the summary at exit (default true)"},                \
           {"STOP", "boolean", "stop the router after LIMIT (default false)"},                                     \
           {"MIRROR", "boolean", "send the next request as soon as a reply comes (default false)"}},               \
  .handlers = {{"active", "rw", "ACTIVE"},                                                                         \
               {"src", "rw", "SRC"},                                                                               \
               {"dst", "rw", "DST"},                                                                               \
               {"count", "r", "requests sent"},                                                                    \
               {"limit", "w", "LIMIT (sending resumes if under it)"},                                              \
               {"interval", "w", "INTERVAL"},                                                                      \
               {"reset_counts", "w", "zero the counts and statistics"},                                            \
               {"summary", "r", "ping(1)'s summary (with an input)"},                                              \
               {"rtt_min", "r", "the smallest RTT (with an input)"},                                               \
               {"rtt_avg", "r", "the mean RTT (with an input)"},                                                   \
               {"rtt_max", "r", "the largest RTT (with an input)"},                                                \
               {"duplicates", "r", "replies seen twice (with an input)"}},                                         \
  .example =                                                                                                       \
      "ping :: ICMPPingSource(10.0.0.1, 10.0.0.2, INTERVAL 0.2, LIMIT 5) -> tun :: KernelTun(10.0.0.1/24); "       \
      "tun -> ping;"

SHOAL_ELEMENT(ICMPPingSource,
              SHOAL_PING_DOC("ICMPPingSource", "sends ICMP echo requests and keeps ping statistics from the replies"));

// Click's other name for it.
class ICMPSendPings : public ICMPPingSource {};
SHOAL_ELEMENT(ICMPSendPings, SHOAL_PING_DOC("ICMPSendPings", "ICMPPingSource under Click's older name"));

}  // namespace shoal

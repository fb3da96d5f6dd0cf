// FromDump: reads packets from a pcap or pcapng file.
#include <fmt/format.h>
#include <pcap/pcap.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/trace_clock.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/flowhash.hh"

namespace shoal {

class FromDump : public SourceElement {
 public:
  void configure(Args& a) override {
    InputPath in;
    a.read_mp("FILENAME", in).read("TIMING", timing_).read("FORCE_IP", force_ip_);
    std::string damage = "error", spread = "flows";
    a.read("DAMAGE", damage).read("SPREAD", spread);
    read_source_args(a, 32);
    a.complete();
    if (damage != "error" && damage != "warn") a.fail(fmt::format("DAMAGE '{}': error or warn", damage));
    if (spread != "flows" && spread != "hosts") a.fail(fmt::format("SPREAD '{}': flows or hosts", spread));
    hosts_ = spread == "hosts";
    damage_fails_ = damage == "error";
    file_ = in.path;
  }
  void initialize() override {
    std::string err;
    if (!rd_.open(file_, err)) throw std::runtime_error(err);
    trace_ = TraceClock::of(this);
    // A pcap file has one link type; a pcapng file one per interface, so
    // its packets of a type we cannot carry are dropped one by one.
    int lt = rd_.linktype();
    if (!rd_.pcapng() && !supported(lt))
      throw std::runtime_error(fmt::format(
          "{}: unsupported link type {} (Ethernet, raw IP, Linux SLL/SLL2, NULL/LOOP, PPP or C-HDLC expected)", file_,
          io::linktype_name(lt)));
    r_big_ = add_drop_reason("too-large");
    r_link_ = add_drop_reason("unsupported-link-type");
    r_notip_ = add_drop_reason("not-ip");
    SourceElement::initialize();
  }
  bool rate_limited() const override { return timing_; }
  uint32_t produce(PacketBatch* b, uint32_t max, bool& done) override {
    // The file cut shorter while mapped: stop there, as at a truncated
    // record, instead of dying of SIGBUS. After the jump b holds what was
    // made (a buffer being filled at the fault stays out of the pool).
    io::MapFaultGuard guard(rd_.map_begin(), rd_.map_size());
    if (sigsetjmp(guard.jump, 0)) {
      run_error(fmt::format("{}: the file became shorter while it was being read; what was read before went on", file_),
                damage_fails_);
      error_ = "file truncated while being read";
      pending_ = false;
      done = true;
      return b->live();
    }
    return read_records(b, max, done);
  }
  uint32_t read_records(PacketBatch* b, uint32_t max, bool& done) {
    uint32_t n = 0, nread = 0;
    std::string err;
    while (n < max) {
      if (!pending_) {
        int r = rd_.next(pd_, pcap_, pwire_, pts_, err);
        if (r == 0) {
          done = true;
          break;
        }
        if (r < 0) {
          // Worker copies read the same file: one message (Runtime dedups),
          // and the run ends with a failure status.
          run_error(fmt::format("{}: {} (read {} packets before it)", file_, err, read_.get() + nread), damage_fails_);
          error_ = err;
          done = true;
          break;
        }
        ++nread;
        ++recno_;
        if (!first_ts_) first_ts_ = pts_;
        if (pts_ > trace_ns_) trace_ns_ = pts_;
        // Several workers read the file; each keeps its own flows (software RSS).
        int nw = worker().nworkers();
        if (nw > 1) {
          int at = io::link_ip_offset(rd_.packet_linktype(), pd_, pcap_);
          uint32_t h = at == 0 && rd_.packet_linktype() == DLT_EN10MB ? k::flow_hash(pd_, pcap_, hosts_)
                       : at >= 0 ? k::flow_hash_ip(pd_ + at, pcap_ - uint32_t(at), hosts_)
                                 : 0;
          if (int(h % uint32_t(nw)) != worker().id()) continue;
        }
        pending_ = true;
      }
      if (timing_) {
        uint64_t now = worker().now_ns();
        if (!start_) start_ = now;
        if (pts_ - first_ts_ > now - start_) break;
      }
      int lt = rd_.packet_linktype();
      int ip_at = io::link_ip_offset(lt, pd_, pcap_);
      if (ip_at < 0) {
        // a link type we do not carry, or (on a link other than Ethernet,
        // whose header we do not keep) a frame that is not IP
        pending_ = false;
        received();
        count_dropped(ip_at == -2 ? r_link_ : r_notip_);
        continue;
      }
      if (pcap_ > PacketPool::kMaxFrame) {
        // A frame that no buffer holds: received and dropped with a reason.
        pending_ = false;
        received();
        count_dropped(r_big_);
        continue;
      }
      // Ethernet and raw IP keep their frames; other links start at the IP
      // header, their link header kept in the headroom (Anno::link_hdr).
      uint32_t cut = lt == DLT_EN10MB ? 0 : uint32_t(ip_at);
      Packet* p = worker().pool().make(pd_, pcap_);
      if (!p) break;  // pool empty: retry on the next run (back-pressure)
      p->pull(cut);
      p->anno().link = io::link_code(lt);
      p->anno().link_hdr = uint8_t(cut);
      pending_ = false;
      p->set_timestamp_ns(pts_);
      p->set_source_index(recno_);
      p->set_trace_ns(trace_ns_);
      // As Click's FromDump: the MAC header of Ethernet frames, the IP
      // header of raw IP packets.
      if (lt == DLT_EN10MB)
        p->set_mac_header(0);
      else
        p->set_network_header(0);
      b->append(p);
      ++n;
    }
    read_.add(nread);
    if (trace_) trace_->advance(worker().id(), trace_ns_);
    return n;
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    add_read_handler("filename", [this] { return file_; });
    add_read_handler("filesize", [this] { return std::to_string(rd_.file_size()); });
    add_read_handler(
        "filepos", [this] { return std::to_string(pos_.get()); }, Agg::Max, true);
    add_stat_handler("packets_read", read_);
    add_read_handler("encap", [this] { return io::linktype_name(rd_.linktype()); });
    add_read_handler("error", [this] { return error_; });
  }
  bool run_task() override {
    bool r = SourceElement::run_task();
    pos_.set(rd_.position());
    return r;
  }
  int linktype() const { return rd_.linktype(); }

 private:
  std::string file_, error_;
  bool damage_fails_ = true;  // DAMAGE error: a corrupt record fails the run
  bool timing_ = false, force_ip_ = false;
  bool hosts_ = false;                 // SPREAD hosts
  uint64_t trace_ns_ = 0;              // the latest timestamp read, every worker's records
  std::shared_ptr<TraceClock> trace_;  // where it goes for the flow layer
  io::PcapReader rd_;
  bool pending_ = false;
  const uint8_t* pd_ = nullptr;
  uint32_t pcap_ = 0, pwire_ = 0;
  uint64_t pts_ = 0, first_ts_ = 0, start_ = 0;
  uint64_t recno_ = 0;  // records read (every worker reads them all)
  Stat read_, pos_;
  uint16_t r_big_ = 0, r_link_ = 0, r_notip_ = 0;
  static bool supported(int lt) {
    uint8_t probe[1] = {0};
    return io::link_ip_offset(lt, probe, 0) != -2;
  }
};
SHOAL_ELEMENT(
    FromDump, .name = "FromDump", .ports = "0/1", .processing = "a/a",
    .summary = "reads packets from a pcap or pcapng file",
    .description =
        "Reads FILENAME (pcap or pcapng, mapped into memory), keeping nanosecond timestamps. Ethernet "
        "frames get the MAC header annotation, raw IP packets the network header annotation. Linux cooked "
        "captures (SLL, SLL2), BSD loopback (NULL, LOOP), PPP and Cisco HDLC start at the IP header (network "
        "header annotation), their link header kept in the headroom for logs that write the frame as read "
        "(IDSMatcher's EVE_PACKET); their frames that carry something other than IP are dropped ('not-ip'). In a "
        "pcapng file each interface has its own link type and "
        "timestamp resolution; packets of an interface with another link type are dropped "
        "('unsupported-link-type'). With several workers each reads the file and keeps the flows that hash to "
        "it, so a flow stays on one worker and in order; with SPREAD hosts the packets between two hosts do, so "
        "a fragmented datagram and the unfragmented packets of its connection, or a tunnel's inner connections, "
        "meet on one worker too (Suricata's advice for RSS: hash on the addresses alone). A truncated or corrupt "
        "file is "
        "reported once and read up to the damage; with DAMAGE error (the default) the run then ends with a failure "
        "status, with DAMAGE warn it does not (as Suricata reads a damaged capture). Frames larger than any buffer are "
        "dropped "
        "(reason 'too-large'). With STOP true the router stops at the end of the file.",
    .args = {{"FILENAME", "string", "the file, mandatory"},
             {"STOP", "boolean", "stop the router at end of file (default false)"},
             {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') when done"},
             {"TIMING", "boolean", "replay at the recorded pace (default false)"},
             {"LIMIT", "integer", "packets to emit at most"},
             {"BURST", "unsigned", "packets per batch (default 32)"},
             {"ACTIVE", "boolean", "read when true"},
             {"FORCE_IP", "boolean", "accepted for Click compatibility"},
             {"DAMAGE", "error|warn", "a truncated or corrupt file fails the run, or is only reported (default error)"},
             {"SPREAD", "flows|hosts",
              "with several workers, what stays on one: a connection, or every packet between two hosts (default "
              "flows)"}},
    .handlers = {{"count", "r", "packets emitted"},
                 {"filesize", "r", "bytes in the file"},
                 {"filepos", "r", "bytes read so far"},
                 {"packets_read", "r", "records read"},
                 {"encap", "r", "link type"},
                 {"active", "rw", "reading or paused"},
                 {"error", "r", "the read error, if any"}},
    .example = "FromDump(in.pcap, STOP true) -> c :: Counter -> ToDump(out.pcap);");

}  // namespace shoal

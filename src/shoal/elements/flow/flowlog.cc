// FlowLog: one record per connection when it ends, with Zeek conn.log's
// fields (tab-separated with Zeek's header, or Zeek's JSON lines).
#include <fmt/format.h>

#include <ctime>
#include <map>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/io/outfile.hh"
#include "shoal/io/shared_file.hh"

namespace shoal {

namespace {

// Per-flow state kept in the flow layer.
struct LogState {
  uint64_t payload[2];  // transport payload bytes per direction
  uint16_t seen;        // history letters seen: bit (letter + 6 * direction)
  uint8_t hist_len;
  char hist[13];
};
static_assert(sizeof(LogState) == 32);

constexpr char kLetters[] = "SHADFR";  // SYN, SYN-ACK, ACK, data, FIN, RST (Zeek's history letters)

std::string uid_for(uint64_t x) {
  static const char kB62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string s = "C";
  for (int i = 0; i < 11; ++i, x /= 62) s += kB62[x % 62];
  return s;
}

std::string zeek_time(uint64_t ns) { return fmt::format("{}.{:06d}", ns / 1000000000, (ns % 1000000000) / 1000); }

std::string json_str(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (uint8_t(c) < 0x20)
      o += fmt::format("\\u{:04x}", unsigned(uint8_t(c)));
    else
      o += c;
  }
  return o + '"';
}

}  // namespace

class FlowLog : public Element {
 public:
  void configure(Args& a) override {
    OutputPath out;
    std::string format = "zeek";
    a.read_mp("FILENAME", out).read("FORMAT", format);
    a.complete();
    if (format != "zeek" && format != "json") a.fail("FORMAT must be zeek or json");
    json_ = format == "json";
    file_ = out.path;
    mgr_ = &FlowIPManager::require(this, a);
    off_ = mgr_->table().reserve(sizeof(LogState), 8, FlowIPManager::state_owner(*this));
  }
  void initialize() override {
    std::string err;
    auto make = [&](io::OutFile& o) {
      if (!o.open(file_, false, err) || json_) return;
      o.put(fmt::format(
          "#separator \\x09\n#set_separator\t,\n#empty_field\t(empty)\n#unset_field\t-\n#path\tconn\n#open\t{}\n"
          "#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tservice\tduration\torig_bytes\tresp_"
          "bytes\t"
          "conn_state\thistory\torig_pkts\torig_ip_bytes\tresp_pkts\tresp_ip_bytes\n"
          "#types\ttime\tstring\taddr\tport\taddr\tport\tenum\tstring\tinterval\tcount\tcount\tstring\tstring\tcount\tc"
          "ount\t"
          "count\tcount\n",
          stamp()));
      o.end_record();
      if (o.flush()) err = o.error(), o.close();
    };
    if (!out_.open(registry(), file_, make, [](io::OutFile& o) { return o.is_open(); }))
      throw std::runtime_error(err.empty() ? file_ + ": cannot open for writing" : err);
    mgr_->table().on_release([this](uint32_t id, const flow::Flow& f, flow::Release) { write(id, f); });
  }
  void push(int, PacketBatch* b) override {
    note(b);
    output_push(0, b);
  }
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* b = input_pull(0, max);
    if (b) note(b);
    return b;
  }
  void on_stop() override {
    std::string err;
    out_.with([&](io::OutFile& o) {
      if (!o.is_open()) return;
      // A hot swap's FlowLog of the same file goes on writing it: no #close.
      if (!worker().runtime().swap_pending() && last_copy() && !json_) {
        o.put(fmt::format("#close\t{}\n", stamp()));
        o.end_record();
      }
      o.flush();
      if (!o.failed() && o.records_lost() == 0) return;
      err = o.error();
    });
    if (!err.empty()) run_error(err);
  }
  void cleanup() override { out_.close(); }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_stat_handler("lost", lost_);
  }

 private:
  static io::SharedRegistry<io::OutFile>& registry() {
    static io::SharedRegistry<io::OutFile> r;
    return r;
  }
  // Whether this is the last copy of the element on this file to stop (it
  // writes #close). Called under the shared file's lock.
  bool last_copy() {
    static std::map<std::string, int> stopped;
    int& n = stopped[file_];
    if (++n < worker().nworkers()) return false;
    stopped.erase(file_);
    return true;
  }
  static std::string stamp() {
    time_t t = time(nullptr);
    struct tm tm {};
    gmtime_r(&t, &tm);
    char buf[32];
    strftime(buf, sizeof buf, "%Y-%m-%d-%H-%M-%S", &tm);
    return buf;
  }

  void note(PacketBatch* b) {
    flow::FlowTable& t = mgr_->table();
    b->for_each([&](uint32_t, Packet* p) {
      uint32_t id = p->anno().flow;
      if (!id) return;
      uint8_t dir = p->anno().flow_dir;
      auto* s = reinterpret_cast<LogState*>(t.state(id) + off_);
      uint32_t len = 0;
      const uint8_t* ip = flow_ip_header(p, len);
      k::ParsedKey pk;
      if (!ip || k::parse_conn_key(ip, len, pk) == k::KeyKind::NotIP || pk.icmp_error) return;
      s->payload[dir] += pk.payload_len;
      uint8_t f = pk.tcp_flags;
      bool tcp = t.flow(id).key.proto == 6 && pk.l4_off;
      if (tcp) {
        if ((f & k::kTcpSyn) && !(f & k::kTcpAck)) letter(s, 0, dir);
        if ((f & k::kTcpSyn) && (f & k::kTcpAck)) letter(s, 1, dir);
        if ((f & k::kTcpAck) && !(f & (k::kTcpSyn | k::kTcpRst))) letter(s, 2, dir);
      }
      if (pk.payload_len) letter(s, 3, dir);
      if (tcp && (f & k::kTcpFin)) letter(s, 4, dir);
      if (tcp && (f & k::kTcpRst)) letter(s, 5, dir);
    });
  }
  static void letter(LogState* s, int l, uint8_t dir) {
    uint16_t bit = uint16_t(1u << (l + 6 * dir));
    if (s->seen & bit) return;
    s->seen |= bit;
    if (s->hist_len < sizeof s->hist) s->hist[s->hist_len++] = char(dir ? kLetters[l] + 32 : kLetters[l]);
  }
  static bool seen(const LogState* s, int l, int dir) { return s->seen & (1u << (l + 6 * dir)); }

  // Zeek's conn_state from what each side sent.
  static const char* conn_state(const flow::Flow& f, const LogState* s) {
    if (f.key.proto == 17 || f.key.proto == 136) return f.pkts[1] ? "SF" : "S0";
    if (f.key.proto != 6) return "OTH";
    bool syn = seen(s, 0, 0), synack = seen(s, 1, 1);
    bool fin_o = seen(s, 4, 0), fin_r = seen(s, 4, 1), rst_o = seen(s, 5, 0), rst_r = seen(s, 5, 1);
    if (syn && !synack) {
      if (rst_o) return "RSTOS0";
      if (rst_r) return "REJ";
      if (fin_o) return "SH";
      return "S0";
    }
    if (!syn && synack) {
      if (rst_r) return "RSTRH";
      if (fin_r) return "SHR";
      return "OTH";
    }
    if (!syn) return "OTH";
    if (rst_o) return "RSTO";
    if (rst_r) return "RSTR";
    if (fin_o && fin_r) return "SF";
    if (fin_o) return "S2";
    if (fin_r) return "S3";
    return "S1";
  }

  void write(uint32_t id, const flow::Flow& f) {
    const auto* s = reinterpret_cast<const LogState*>(mgr_->table().state(id) + off_);
    const k::ConnKey& key = f.key;
    bool ab = f.orig_dir == 0;
    auto addr = [&](const uint32_t* a) {
      uint8_t b[16];
      for (int i = 0; i < 4; ++i) k::store_be32(b + 4 * i, a[i]);
      return key.family == 4 ? format_ipv4(b) : format_ipv6(b);
    };
    std::string oh = addr(ab ? key.a : key.b), rh = addr(ab ? key.b : key.a);
    uint16_t op = ab ? key.pa : key.pb, rp = ab ? key.pb : key.pa;
    const char* proto = key.proto == 6                        ? "tcp"
                        : key.proto == 17                     ? "udp"
                        : (key.proto == 1 || key.proto == 58) ? "icmp"
                                                              : "unknown_transport";
    const std::string& service = mgr_->table().app_name(f.app);  // "-" when not known
    std::string hist(s->hist, s->hist_len);
    if (hist.empty()) hist = json_ ? "" : "-";
    uint64_t h = (uint64_t(k::conn_hash(key)) << 32) ^ f.first_ns ^ (uint64_t(worker().id()) << 56);
    double dur = double(f.last_ns - f.first_ns) / 1e9;
    std::string rec;
    if (json_) {
      rec = fmt::format(
          "{{\"ts\":{},\"uid\":\"{}\",\"id.orig_h\":\"{}\",\"id.orig_p\":{},\"id.resp_h\":\"{}\",\"id.resp_p\":{},"
          "\"proto\":\"{}\",{}\"duration\":{:.6f},\"orig_bytes\":{},\"resp_bytes\":{},\"conn_state\":\"{}\","
          "\"history\":{},\"orig_pkts\":{},\"orig_ip_bytes\":{},\"resp_pkts\":{},\"resp_ip_bytes\":{}}}\n",
          zeek_time(f.first_ns), uid_for(h), oh, op, rh, rp, proto,
          f.app ? fmt::format("\"service\":{},", json_str(service)) : std::string(), dur, s->payload[0], s->payload[1],
          conn_state(f, s), json_str(hist), f.pkts[0], f.bytes[0], f.pkts[1], f.bytes[1]);
    } else {
      rec = fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.6f}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                        zeek_time(f.first_ns), uid_for(h), oh, op, rh, rp, proto, service, dur, s->payload[0],
                        s->payload[1], conn_state(f, s), hist, f.pkts[0], f.bytes[0], f.pkts[1], f.bytes[1]);
    }
    uint64_t lost = 0;
    std::string err;
    out_.with([&](io::OutFile& o) {
      uint64_t before = o.records_lost();
      o.put(rec);
      o.end_record();
      lost = o.records_lost() - before;
      if (lost) err = o.error();
    });
    count_.add(1 - lost);
    if (lost) {
      lost_.add(lost);
      run_error(err);
    }
  }

  std::string file_;
  bool json_ = false;
  FlowIPManager* mgr_ = nullptr;
  uint32_t off_ = 0;
  io::SharedFile<io::OutFile> out_;
  Stat count_, lost_;
};
SHOAL_ELEMENT(
    FlowLog, .name = "FlowLog", .ports = "1/1", .processing = "a/a",
    .summary = "writes one Zeek conn.log record per connection when it ends",
    .description =
        "Passes packets through unchanged, noting per connection (in the flow layer of the FlowIPManager upstream) "
        "the payload bytes each side sent and Zeek's history letters (S SYN, H SYN-ACK, A ACK, D data, F FIN, R RST; "
        "upper case from the originator, lower case from the responder, in the order first seen). When a flow ends "
        "(timed out, evicted, reopened, or at the stop) it writes a record with Zeek conn.log's fields: ts uid "
        "id.orig_h id.orig_p id.resp_h id.resp_p proto service duration orig_bytes resp_bytes conn_state history "
        "orig_pkts "
        "orig_ip_bytes resp_pkts resp_ip_bytes (service: the label an L7Classifier gave the flow). conn_state follows "
        "Zeek (S0 S1 SF REJ S2 S3 RSTO RSTR RSTOS0 RSTRH SH "
        "SHR OTH; UDP S0 or SF). orig_bytes and resp_bytes sum payload lengths, so a retransmission counts again "
        "(Zeek measures them by sequence numbers). FORMAT zeek writes Zeek's tab-separated log with its '#' header "
        "lines; json writes one JSON object per line, as Zeek's JSON logs. Records come in the order flows end. Copies "
        "on several workers share the file. A record that cannot be written is counted in 'lost' and fails the run.",
    .args = {{"FILENAME", "string", "output file ('-': standard output), mandatory"},
             {"FORMAT", "zeek or json", "default zeek"}},
    .handlers = {{"count", "r", "records written"}, {"lost", "r", "records that could not be written"}},
    .example = "FromDump(in.pcap, STOP true) -> FlowIPManager -> FlowLog(conn.log) -> Discard;");

}  // namespace shoal

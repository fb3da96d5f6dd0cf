// FTPPortMapper: rewrites FTP PORT commands for a NAT, and makes the data
// connection's mapping.
#include <fmt/format.h>

#include "shoal/core/graph.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ip/rewriterbase.hh"

namespace shoal {

class FTPPortMapper : public PacketElement<FTPPortMapper> {
 public:
  void configure(Args& a) override {
    int64_t input = 0;
    a.read_mp("CONTROL_REWRITER", control_name_)
        .read_mp("DATA_REWRITER", data_name_)
        .read_mp("DATA_REWRITER_INPUT", input);
    a.complete();
    data_input_ = int(input);
  }
  void initialize() override {
    auto find = [this](const std::string& n, const char* what) {
      Element* e = router().find(n);
      auto* rw = e ? dynamic_cast<RewriterBase*>(e) : nullptr;
      if (!rw) throw std::runtime_error(fmt::format("{} '{}' is not a rewriter", what, n));
      return rw;
    };
    control_ = find(control_name_, "CONTROL_REWRITER");
    data_ = find(data_name_, "DATA_REWRITER");
    if (data_input_ < 0 || data_input_ >= data_->ninputs())
      throw std::runtime_error("DATA_REWRITER_INPUT out of range");
  }
  void process(Packet* p) {
    RewriteView v;
    if (!v.parse(p) || v.proto != 6 || !v.first_frag || v.l4len < 20) return;
    uint32_t off = uint32_t(v.l4[12] >> 4) * 4;
    if (off < 20 || off > v.l4len) return;
    const uint8_t* data = v.l4 + off;
    uint32_t len = v.l4len - off;
    auto upper = [](uint8_t c) { return uint8_t(c >= 'a' && c <= 'z' ? c - 32 : c); };
    if (len < 5 || upper(data[0]) != 'P' || upper(data[1]) != 'O' || upper(data[2]) != 'R' || upper(data[3]) != 'T' ||
        data[4] != ' ')
      return;
    // 'PORT h1,h2,h3,h4,p1,p2' then CR or LF
    uint32_t pos = 5;
    while (pos < len && data[pos] == ' ') ++pos;
    uint32_t arg = pos;
    uint32_t nums[6] = {0, 0, 0, 0, 0, 0};
    int which = 0;
    for (; pos < len && which < 6; ++pos) {
      if (data[pos] >= '0' && data[pos] <= '9')
        nums[which] = std::min<uint32_t>(nums[which] * 10 + uint32_t(data[pos] - '0'), 1000);
      else if (data[pos] == ',')
        ++which;
      else
        break;
    }
    if (which != 5 || pos >= len || (data[pos] != '\r' && data[pos] != '\n')) return;
    for (uint32_t n : nums)
      if (n >= 256) return;
    flow::FlowId control = v.flow_id(true);
    // The data connection: from the address and port given, to the control
    // connection's destination, port one below the control port (20 for 21).
    flow::FlowId dataflow{nums[0] << 24 | nums[1] << 16 | nums[2] << 8 | nums[3], control.daddr,
                          uint16_t(nums[4] << 8 | nums[5]), uint16_t(control.dport - 1)};
    std::unique_lock<std::mutex> g1(control_->table().mu, std::defer_lock), g2(data_->table().mu, std::defer_lock);
    if (&control_->table() == &data_->table())
      g1.lock();
    else
      std::lock(g1, g2);
    flow::FlowId to;
    uint32_t cid = 0, did = 0;
    int cdir = 0;
    if (!control_->find_mapping(6, control, to, cid, cdir)) return;
    bool ok = false;
    flow::FlowId nf = data_->map_data_flow(6, dataflow, data_input_, worker().now_ns(), ok, did);
    if (!ok) return;
    std::string text = fmt::format("{},{},{},{},{},{}", nf.saddr >> 24, (nf.saddr >> 16) & 255, (nf.saddr >> 8) & 255,
                                   nf.saddr & 255, nf.sport >> 8, nf.sport & 255);
    uint32_t old_len = pos - arg, new_len = uint32_t(text.size());
    uint32_t data_off = uint32_t(data - p->data());
    if (new_len > old_len) {
      if (!p->put(new_len - old_len)) return;  // no tailroom: leave the command as it is
    }
    uint8_t* d = p->data() + data_off;
    std::memmove(d + arg + new_len, d + arg + old_len, len - pos);
    std::copy(text.begin(), text.end(), d + arg);
    if (new_len < old_len) p->take(old_len - new_len);
    // The control connection's later bytes in this direction move by the
    // difference, from the end of this segment on.
    RewriteView w;
    w.parse(p);
    auto& m = control_->table().mapping(cid);
    if (!m.seq) m.seq = std::make_unique<flow::TcpSeqShift>();
    m.seq->add(cdir, k::load_be32(w.l4 + 4) + len, int32_t(new_len) - int32_t(old_len));
    data_->table().mapping(did).reply_anno = m.reply_anno;
    // Lengths and checksums
    uint32_t ip_len = p->length() - uint32_t(p->network_header_offset());
    k::store_be16(w.ip + 2, uint16_t(ip_len));
    set_ip_checksum(w.ip, w.hl);
    uint32_t tlen = ip_len - w.hl;
    w.l4[16] = w.l4[17] = 0;
    k::store_be16(w.l4 + 16,
                  k::csum_fold(k::csum_partial(w.l4, tlen, k::ipv4_pseudo_sum(w.ip + 12, w.ip + 16, 6, tlen))));
    rewritten_.add();
  }
  void add_handlers() override { add_stat_handler("rewritten", rewritten_); }

 private:
  std::string control_name_, data_name_;
  int data_input_ = 0;
  RewriterBase *control_ = nullptr, *data_ = nullptr;
  Stat rewritten_;
};
SHOAL_ELEMENT(
    FTPPortMapper, .name = "FTPPortMapper", .ports = "1/1", .processing = "a/a",
    .summary = "rewrites FTP PORT commands so active FTP crosses a NAT",
    .description =
        "Click's FTPPortMapper, placed before CONTROL_REWRITER on an FTP control connection's path. A TCP "
        "packet whose payload is 'PORT h1,h2,h3,h4,p1,p2' (ended by CR or LF), on a connection "
        "CONTROL_REWRITER has mapped, asks DATA_REWRITER's input DATA_REWRITER_INPUT for a mapping of the data "
        "connection the client announces (from that address and port to the server, port one below the "
        "control port); the command is rewritten to announce the mapped address and port instead, the packet's "
        "lengths and checksums are set, and the control mapping shifts the connection's later sequence "
        "numbers (and the other side's acknowledgements and SACK blocks) by the change in length. Other "
        "packets pass unchanged, and so does a PORT command the control rewriter has no mapping for yet (in a "
        "batch, one that came with the connection's first packet; 'shoal click' runs one packet at a time).",
    .args = {{"CONTROL_REWRITER", "element", "the rewriter of the control connection (TCPRewriter, IPRewriter)"},
             {"DATA_REWRITER", "element", "the rewriter that maps data connections"},
             {"DATA_REWRITER_INPUT", "integer", "the input whose specification maps them"}},
    .handlers = {{"rewritten", "r", "PORT commands rewritten"}},
    .example =
        "IPRewriterPatterns(nat 1.0.0.1 1024-65535# - -);\n"
        "rw :: TCPRewriter(pattern nat 0 1, drop);\n"
        "ftp_in -> FTPPortMapper(rw, rw, 0) -> [0]rw;");

}  // namespace shoal

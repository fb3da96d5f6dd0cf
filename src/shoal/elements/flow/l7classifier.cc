// L7Classifier: labels each flow with its application protocol from the
// first bytes of the connection (l7-filter's patterns), and sends packets by
// label.
#include <fmt/format.h>

#include <deque>
#include <sstream>

#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/flow/l7.hh"

namespace shoal {

namespace {

// Per-flow state in the flow layer, followed by one DFA state per pattern.
struct L7State {
  uint8_t status;  // kClassifying, kDone
  uint8_t packets;
  uint16_t label;  // 1 + pattern index; 0: none (unknown when kDone)
  uint32_t bytes;
};
constexpr uint8_t kClassifying = 0, kDone = 1;

}  // namespace

class L7Classifier : public Element {
 public:
  void configure(Args& a) override {
    std::string dir, protocols;
    uint64_t bytes = 2048, packets = 10;
    a.read_mp("PATTERNS", dir).read("PROTOCOLS", protocols).read("BYTES", bytes).read("PACKETS", packets);
    a.complete();
    if (bytes == 0 || packets == 0 || packets > 255) a.fail("BYTES must be positive and PACKETS between 1 and 255");
    bytes_ = uint32_t(std::min<uint64_t>(bytes, UINT32_MAX));
    packets_ = uint8_t(packets);
    std::string err;
    std::vector<std::string> names;
    std::istringstream words(protocols);
    for (std::string w; words >> w;) names.push_back(w);
    if (!set_.load(dir, names, err, &skipped_)) a.fail(err);
    if (set_.size() == 0) a.fail(fmt::format("PATTERNS '{}': no pattern could be used", dir));
    if (noutputs() > 1 && size_t(noutputs()) != set_.size() + 1)
      a.fail(
          fmt::format("{} outputs: one per protocol ({}) and one for the rest, or only one", noutputs(), set_.size()));
    mgr_ = &FlowIPManager::require(this, a);
    flow::FlowTable& t = mgr_->table();
    off_ = t.reserve(uint32_t(sizeof(L7State) + 4 * set_.state_words()), 8);
    for (size_t i = 0; i < set_.size(); ++i) app_.push_back(t.app_id(set_.at(i).name));
    counts_.resize(set_.size() + 1);
  }
  void push(int, PacketBatch* b) override {
    if (classify(b)) return output_push(0, b);
    dispatch(b);
  }
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* b = input_pull(0, max);
    if (!b) return nullptr;
    if (classify(b)) return b;
    b = dispatch(b, 0);
    if (b->empty()) {
      recycle(b);
      return nullptr;
    }
    return b;
  }
  void add_handlers() override {
    add_stat_handler("classified", classified_);
    add_stat_handler("unknown", unknown_);
    add_read_handler("protocols", [this] {
      std::string s;
      for (size_t i = 0; i < set_.size(); ++i)
        if (counts_[i].get()) s += fmt::format("{} {}\n", set_.at(i).name, counts_[i].get());
      return s;
    });
    add_read_handler("skipped", [this] {
      std::string s;
      for (auto& x : skipped_) s += x + "\n";
      return s;
    });
    add_read_handler("patterns", [this] { return std::to_string(set_.size()); });
  }

 private:
  // Returns true when every packet goes to output 0.
  bool classify(PacketBatch* b) {
    flow::FlowTable& t = mgr_->table();
    int rest = noutputs() - 1;
    bool uniform = true;
    b->for_each([&](uint32_t i, Packet* p) {
      uint32_t id = p->anno().flow;
      int out = rest;
      if (id) {
        auto* st = reinterpret_cast<L7State*>(t.state(id) + off_);
        auto* dfa = reinterpret_cast<uint32_t*>(st + 1);
        if (st->status == kClassifying && st->packets == 0 && st->bytes == 0) set_.start(dfa);
        if (st->status == kClassifying) feed(t, id, st, dfa, p);
        if (st->label) out = st->label - 1;
      }
      if (noutputs() == 1) out = 0;
      b->result(i) = int16_t(out);
      uniform &= out == 0;
    });
    return uniform;
  }
  void feed(flow::FlowTable& t, uint32_t id, L7State* st, uint32_t* dfa, Packet* p) {
    uint32_t len = 0;
    const uint8_t* ip = flow_ip_header(p, len);
    k::ParsedKey pk;
    if (!ip || k::parse_conn_key(ip, len, pk) != k::KeyKind::Conn || pk.icmp_error || !pk.l4_off) return;
    const uint8_t* l4 = ip + pk.l4_off;
    uint32_t hdr = pk.key.proto == 6 ? uint32_t(l4[12] >> 4) * 4 : pk.key.proto == 17 ? 8 : 0;
    if (!hdr || pk.l4_off + hdr > len) return;
    uint32_t n = std::min<uint32_t>(pk.payload_len, len - pk.l4_off - hdr);
    if (n == 0) return;  // l7-filter counts only packets with data
    n = std::min(n, bytes_ - st->bytes);
    int hit = set_.feed(dfa, l4 + hdr, n);
    st->bytes += n;
    ++st->packets;
    if (hit >= 0) {
      st->status = kDone;
      st->label = uint16_t(hit + 1);
      t.flow(id).app = app_[size_t(hit)];
      classified_.add(1);
      counts_[size_t(hit)].add(1);
    } else if (st->bytes >= bytes_ || st->packets >= packets_) {
      st->status = kDone;
      unknown_.add(1);
    }
  }

  flow::L7Set set_;
  std::vector<std::string> skipped_;
  std::vector<uint16_t> app_;
  FlowIPManager* mgr_ = nullptr;
  uint32_t off_ = 0, bytes_ = 2048;
  uint8_t packets_ = 10;
  Stat classified_, unknown_;
  std::deque<Stat> counts_;
};
SHOAL_ELEMENT(
    L7Classifier, .name = "L7Classifier", .ports = "1/1-", .processing = "a/a",
    .summary = "labels each flow with its application protocol (l7-filter patterns) and sends packets by label",
    .description =
        "Matches l7-filter's patterns (PATTERNS: a directory of .pat files, such as l7-filter's protocols/) against "
        "the first bytes of each connection, as l7-filter does: the payload of both directions in the order it comes, "
        "NUL bytes skipped, without regard to case, until a pattern matches or BYTES bytes or PACKETS packets with "
        "data have gone by (then the flow is unknown); when several patterns match by the same packet, the first "
        "listed wins. PROTOCOLS names the patterns, in priority order (default: every .pat file that compiles but "
        "l7-filter's dummies 'unknown' and 'unset'; the better patterns first by their 'Pattern attributes' line, "
        "great, good, "
        "ok, marginal, poor, then supersets of other patterns, then those that overmatch; the skipped handler lists "
        "files that do not compile). Each pattern runs as a DFA whose state the flow keeps "
        "(4 bytes per pattern in the flow layer), so nothing is buffered or rescanned.\n\n"
        "The label goes into the flow (FlowLog writes it as Zeek's service). With one output every packet leaves on "
        "it; otherwise there is one output per protocol, in PROTOCOLS order, and a last one for packets of flows not "
        "(yet) labelled and packets with no flow.",
    .args = {{"PATTERNS", "directory", "the .pat files, mandatory"},
             {"PROTOCOLS", "names", "space-separated pattern names, in priority order (default all)"},
             {"BYTES", "integer", "payload bytes looked at per connection (default 2048)"},
             {"PACKETS", "integer", "packets with data looked at per connection (default 10, at most 255)"}},
    .handlers = {{"classified", "r", "flows labelled"},
                 {"unknown", "r", "flows that matched nothing in their first bytes"},
                 {"protocols", "r", "flows labelled per protocol"},
                 {"patterns", "r", "patterns in use"},
                 {"skipped", "r", "pattern files left out (outside the regex subset), with the reason"}},
    .example =
        "FromDump(in.pcap, STOP true) -> FlowIPManager\n"
        "  -> l7 :: L7Classifier(PATTERNS l7/protocols, PROTOCOLS \"http ssh dns\");\n"
        "l7[0] -> ToDump(http.pcap); l7[1] -> ToDump(ssh.pcap); l7[2] -> ToDump(dns.pcap); l7[3] -> Discard;");

}  // namespace shoal

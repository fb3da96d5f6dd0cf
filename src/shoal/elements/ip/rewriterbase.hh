// RewriterBase: what Click's IPRewriter family shares (IPRewriterBase):
// one input specification per input port ('drop', 'pass OUTPUT', 'keep
// FOUTPUT ROUTPUT', 'pattern ... FOUTPUT ROUTPUT', 'pattern NAME FOUTPUT
// ROUTPUT', or the name of a mapper element), mappings kept in the flow
// layer's RewriteTable, the capacity, guarantee and reaping arguments, and
// the handlers. Each element says how it keys a packet and rewrites it.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/element.hh"
#include "shoal/elements/clickrandom.hh"
#include "shoal/flow/rewrite.hh"

namespace shoal {

class RewriterBase;

// A rewritten packet's IPv4 header and first transport bytes.
struct RewriteView {
  uint8_t* ip = nullptr;
  uint8_t* l4 = nullptr;
  uint32_t hl = 0, l4len = 0;
  uint8_t proto = 0;
  bool first_frag = false;
  bool parse(Packet* p);
  flow::FlowId flow_id(bool ports) const;
  // Writes the new addresses (and ports), updating the IP and the TCP/UDP
  // checksums incrementally.
  void rewrite(const flow::FlowId& to, bool ports);
};

// Click's IPMapper: an element named as an input specification that picks
// the rewritten flow (RoundRobinIPMapper).
class RewriteMapper {
 public:
  virtual ~RewriteMapper() = default;
  // The rewritten flow of `in` and its output ports; false: drop.
  virtual bool map_flow(RewriterBase& rw, const flow::FlowId& in, flow::FlowId& out, int& fout, int& rout,
                        const std::function<bool(const flow::FlowId&)>& taken) = 0;
  // Fails (throws) when a port it may choose is not one of `rw`'s outputs.
  virtual void check_ports(const RewriterBase& rw) const = 0;
};

// An input specification, or a mapper's pattern.
struct RewriteInput {
  enum Kind { Drop, NoChange, Keep, Pattern, Mapper } kind = Drop;
  int fout = -1, rout = -1;
  std::shared_ptr<flow::RewritePattern> pattern;
  std::string mapper_name;
  RewriteMapper* mapper = nullptr;
};

// Parses "pattern ..." words with their two ports ("SADDR SPORT DADDR DPORT
// FOUTPUT ROUTPUT" or "NAME FOUTPUT ROUTPUT"); false with `err` set.
bool parse_pattern_with_ports(Element* e, std::string_view text, RewriteInput& in, std::string& err);
// The IPRewriterPatterns names of the element's runtime.
std::shared_ptr<flow::RewritePattern> named_pattern(Element* e, const std::string& name);
// Defines a name; the names live while the returned holder does.
std::shared_ptr<void> define_pattern(Element* e, const std::string& name, std::shared_ptr<flow::RewritePattern> p,
                                     std::string& err);

class RewriterBase : public Element {
 public:
  // How a mapping is refreshed: its best-effort timeout, and the guarantee
  // (0: none), in ns.
  struct Timeouts {
    uint64_t timeout = 0, guarantee = 0;
  };
  void configure(Args& a) override;
  void initialize() override;
  void push(int port, PacketBatch* b) override;
  void run_timer(Timer& t) override;
  void add_handlers() override;
  flow::RewriteTable& table() { return *table_; }
  uint32_t owner() const { return owner_; }
  // 0..top as Click draws it (RandomSeed seeds the worker's generator)
  uint32_t random(uint32_t top) { return rng_->range(0, top); }
  // ICMPRewriter's question: the mapping that a packet of flow `f`
  // (protocol ip_p; for ICMP, sport is the echo identifier) would take as it
  // arrives, without making one; sets `to` to what that packet's addresses
  // and ports become. Call with table().mu held.
  virtual bool find_mapping(uint8_t ip_p, const flow::FlowId& f, flow::FlowId& to, uint32_t& id, int& dir);
  int output_of(uint32_t id, int dir) { return table_->mapping(id).out[dir]; }
  // FTPPortMapper's: the mapping input `input`'s specification makes (or
  // finds) for a new flow; returns the rewritten flow, `ok` false when
  // there is none. Call with table().mu held.
  flow::FlowId map_data_flow(uint8_t ip_p, const flow::FlowId& f, int input, uint64_t now, bool& ok, uint32_t& id);
  // The map and timeouts of a protocol's mappings.
  virtual uint8_t map_of(uint8_t) const { return 0; }
  virtual const Timeouts& timeouts_of(uint8_t) const { return timeouts_; }
  uint8_t reply_anno_of(uint32_t id) { return table_->mapping(id).reply_anno; }

 protected:
  // The element's own keywords, read before the common ones.
  virtual void configure_more(Args&) {}
  // One packet arriving on `port`: its output, or drop_code(reason).
  virtual int process(int port, Packet* p, uint64_t now) = 0;
  // The lines of the element's table handlers (Click's unparse).
  virtual std::string unparse(const flow::RewriteTable::Mapping& m, int dir, uint64_t now) const;
  // Element-specific handlers (table, lookup...).
  virtual void add_table_handlers() = 0;

  // The mapping of `f` in map `map`, found or made through the input's
  // specification; id 0 when there is none, and then `code` is the
  // packet's output (a 'pass' input) or its drop code. `fix` may complete
  // a rewritten flow, or refuse it (false: the element cannot apply it).
  struct Found {
    uint32_t id = 0;
    int dir = 0;
    int code = 0;
  };
  Found lookup(int port, uint8_t map, uint8_t ip_p, const flow::FlowId& f, Packet* p, uint64_t now, const Timeouts& to,
               bool (*fix)(flow::FlowId&) = nullptr);
  // Whether a new mapping's reply key `k` is in use (a pattern's choice).
  virtual bool reply_taken(uint8_t map, const flow::FlowId& k) const { return table_->taken(owner_, map, k); }
  // A packet the element cannot rewrite (not its protocol, a later
  // fragment, too short): passed by a 'pass' input, else dropped.
  int not_rewritable(int port) const {
    const RewriteInput& in = inputs_[size_t(port)];
    return in.kind == RewriteInput::NoChange ? in.fout : drop_code(r_unmapped_);
  }
  // Rewrites addresses and ports as mapping `f` says for direction f.dir,
  // sets the annotations, and returns the mapping's output.
  int apply(const Found& f, RewriteView& v, Packet* p, bool ports);
  // Click's TCPRewriter and UDPRewriter: rewrite a found mapping's packet,
  // follow the connection's state and refresh its expiry by it (TCP: the
  // DONE timeout once both sides closed or one reset, the DATA timeout
  // once both sent data, else `to.timeout`; UDP: `streaming` once the
  // flow carried packets both ways, else `to.timeout`).
  int apply_tcp(const Found& f, RewriteView& v, Packet* p, uint64_t now, const Timeouts& to, uint64_t data_timeout,
                uint64_t done_timeout);
  int apply_udp(const Found& f, RewriteView& v, Packet* p, uint64_t now, const Timeouts& to, uint64_t streaming);
  void shift_seq(flow::TcpSeqShift& s, int dir, RewriteView& v);
  // Refreshes the mapping's expiry after a packet; `timeout` is its
  // best-effort timeout in its current state.
  void refresh(uint32_t id, uint64_t now, const Timeouts& to, uint64_t timeout);
  std::string table_text(uint8_t map, uint64_t now) const;
  // Click's lookup handler: "SADDR SPORT DADDR DPORT" -> the rewritten flow.
  std::string lookup_text(uint8_t map, const std::string& arg) const;
  static std::string unparse_ports(const flow::RewriteTable::Mapping& m, int dir, uint64_t now, uint64_t expiry);

  std::vector<RewriteInput> inputs_;
  std::shared_ptr<flow::RewriteTable> table_;
  uint32_t owner_ = 0;
  Timeouts timeouts_;  // TIMEOUT, GUARANTEE
  bool dst_anno_ = true;
  bool reply_anno_ = false;  // REPLY_ANNO PAINT
  bool set_aggregate_ = false;
  uint64_t reap_ns_ = 15 * 60 * 1000000000ull;
  Timer reap_timer_;
  uint16_t r_drop_ = 0, r_full_ = 0, r_port_ = 0, r_unmapped_ = 0;
  ClickRandom* rng_ = nullptr;

 private:
  void parse_input(int i, const std::string& text, std::string& err);
  std::string capacity_word_;
  bool capacity_set_ = false;
  int64_t capacity_ = 0;
};

}  // namespace shoal

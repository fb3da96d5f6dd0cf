// AggregateCounter: counts packets (or bytes) per aggregate annotation.
#include <fmt/format.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class AggregateCounter : public Element {
 public:
  void configure(Args& a) override {
    std::string call_nnz, call_count;
    uint64_t freeze_nnz = 0, stop_nnz = 0, freeze_count = 0, stop_count = 0;
    bool multipacket = true, extra_length = true;
    a.read("BYTES", bytes_)
        .read("IP_BYTES", ip_bytes_)
        .read("MULTIPACKET", multipacket)
        .read("EXTRA_LENGTH", extra_length)
        .read("AGGREGATE_FREEZE", freeze_nnz)
        .read("AGGREGATE_STOP", stop_nnz)
        .read("AGGREGATE_CALL", call_nnz)
        .read("COUNT_FREEZE", freeze_count)
        .read("COUNT_STOP", stop_count)
        .read("COUNT_CALL", call_count)
        .read("BANNER", banner_);
    a.complete();
    auto pick = [&](const char* what, uint64_t freeze, uint64_t stop, const std::string& call, Call& out) {
      if ((freeze != 0) + (stop != 0) + !call.empty() > 1)
        a.fail(fmt::format("'{0}_FREEZE', '{0}_STOP' and '{0}_CALL' are mutually exclusive", what));
      if (freeze) out = {freeze, name() + ".freeze", "true"};
      if (stop) out = {stop, name() + ".stop", ""};
      if (!call.empty()) {
        auto w = split_words(call);
        if (w.size() < 2 || !parse_uint(w[0], out.at)) a.fail(fmt::format("{}_CALL expects 'N HANDLER [VALUE]'", what));
        out.handler = std::string(w[1]);
        out.value = std::string(trim(std::string_view(call).substr(call.find(w[1]) + w[1].size())));
      }
    };
    pick("AGGREGATE", freeze_nnz, stop_nnz, call_nnz, nnz_call_);
    pick("COUNT", freeze_count, stop_count, call_count, count_call_);
    if (!banner_.empty() && banner_.back() != '\n') banner_ += '\n';
  }
  void initialize() override { s_ = shared_state<Shared>(this); }
  void push(int port, PacketBatch* b) override {
    {
      std::lock_guard<std::mutex> g(s_->mu);
      b->for_each([&](uint32_t i, Packet* p) { b->result(i) = int16_t(update(p, port == 1) ? 0 : 1); });
    }
    run_calls();
    if (noutputs() == 1) return output_push(0, b);
    dispatch(b);
  }
  PacketBatch* pull(int port, uint32_t max) override {
    PacketBatch* b = input_pull(ninputs() == 1 ? 0 : port, max);
    if (!b) return nullptr;
    {
      std::lock_guard<std::mutex> g(s_->mu);
      b->for_each([&](uint32_t, Packet* p) { update(p, port == 1); });
    }
    run_calls();
    return b;
  }
  void add_handlers() override {
    for (const auto& hf : {std::pair{"write_text_file", Text},
                           {"write_ascii_file", Text},
                           {"write_file", Binary},
                           {"write_ip_file", IP},
                           {"write_pdf_file", Pdf}}) {
      Format f = hf.second;
      add_write_handler(hf.first, [this, f](const std::string& v) { write_file(std::string(trim(v)), f); });
    }
    auto flag = [this](const char* h, bool Shared::*f) {
      add_read_handler(h, [this, f] {
        std::lock_guard<std::mutex> g(s_->mu);
        return std::string(s_.get()->*f ? "true" : "false");
      });
      add_write_handler(h, [this, f](const std::string& v) {
        bool on;
        if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
        std::lock_guard<std::mutex> g(s_->mu);
        s_.get()->*f = on;
      });
    };
    flag("freeze", &Shared::frozen);
    flag("active", &Shared::active);
    add_write_handler("stop", [this](const std::string&) {
      {
        std::lock_guard<std::mutex> g(s_->mu);
        s_->active = false;
      }
      worker().runtime().stop_event();
    });
    add_write_handler("clear", [this](const std::string&) {
      std::lock_guard<std::mutex> g(s_->mu);
      s_->counts.clear();
      s_->total = 0;
    });
    // Click's reaggregate_counts: the aggregates become the counts seen,
    // each counted once per aggregate that had it (a count's frequency).
    auto reagg = [this](const std::string&) {
      std::lock_guard<std::mutex> g(s_->mu);
      std::map<uint32_t, uint64_t> freq;
      for (auto& [agg, n] : s_->counts) ++freq[uint32_t(n)];
      s_->counts = std::move(freq);
      s_->total = 0;
      for (auto& [agg, n] : s_->counts) s_->total += n;
    };
    add_write_handler("reaggregate_counts", reagg);
    add_write_handler("counts_pdf", reagg);
    add_read_handler("banner", [this] { return banner_; });
    add_write_handler("banner", [this](const std::string& v) {
      banner_ = v;
      if (!banner_.empty() && banner_.back() != '\n') banner_ += '\n';
    });
    add_read_handler("count", [this] {
      std::lock_guard<std::mutex> g(s_->mu);
      return std::to_string(s_->total);
    });
    add_read_handler("nagg", [this] {
      std::lock_guard<std::mutex> g(s_->mu);
      return std::to_string(s_->counts.size());
    });
  }

 private:
  enum Format { Text, Binary, IP, Pdf };
  struct Call {
    uint64_t at = 0;  // 0: none
    std::string handler, value;
  };
  // One count for every worker's copy (aggregates cross workers).
  struct Shared {
    std::mutex mu;
    std::map<uint32_t, uint64_t> counts;  // aggregates with a non-zero count, in order
    uint64_t total = 0;
    bool frozen = false, active = true;
  };

  // Counts p; false when it was not counted (inactive, or frozen and new).
  bool update(Packet* p, bool frozen) {
    Shared& s = *s_;
    if (!s.active) return false;
    frozen |= s.frozen;
    uint32_t agg = p->anno().aggregate;
    uint64_t amount = 1;
    if (bytes_) {
      amount = p->length();
      if (ip_bytes_ && p->has_network_header() && p->network_header_offset() > 0)
        amount -= uint64_t(p->network_header_offset());
    }
    auto it = s.counts.find(agg);
    if (it == s.counts.end()) {
      if (frozen || !amount) return false;
      if (nnz_call_.at && s.counts.size() >= nnz_call_.at) {
        Call c = std::exchange(nnz_call_, Call{});
        call(c);
        if (!s.active) return false;
        if (s.frozen) return false;
      }
      it = s.counts.emplace(agg, 0).first;
    }
    it->second += amount;
    s.total += amount;
    if (count_call_.at && s.total >= count_call_.at) call(std::exchange(count_call_, Call{}));
    return true;
  }
  // A threshold reached while the counts are locked: this element's own
  // freeze and stop act at once (later packets of the batch see them);
  // other handlers are called once the lock is released (they may be this
  // element's, such as clear).
  void call(const Call& c) {
    if (c.handler == name() + ".freeze") {
      s_->frozen = true;
    } else if (c.handler == name() + ".stop") {
      s_->active = false;
      stop_ = true;
    } else {
      calls_.push_back(c);
    }
  }
  void run_calls() {
    if (stop_) stop_ = false, worker().runtime().stop_event();
    for (const Call& c : std::exchange(calls_, {})) {
      std::string err;
      if (!worker().runtime().write_handler(c.handler, c.value, err, worker().id()))
        run_error(fmt::format("{}: {}", c.handler, err));
    }
  }
  void write_file(const std::string& path, Format f) {
    std::lock_guard<std::mutex> g(s_->mu);
    FILE* out = path == "-" ? stdout : std::fopen(path.c_str(), f == Binary ? "wb" : "w");
    if (!out) throw std::runtime_error(fmt::format("{}: {}", path, std::strerror(errno)));
    std::string head = "!IPAggregate 1.0\n" + banner_ + fmt::format("!num_nonzero {}\n", s_->counts.size());
    if (f == Binary) head += std::endian::native == std::endian::little ? "!packed_le\n" : "!packed_be\n";
    if (f == IP) head += "!ip\n";
    std::fputs(head.c_str(), out);
    for (auto& [agg, n] : s_->counts) {
      uint32_t cnt = uint32_t(n);
      if (f == Binary) {
        std::fwrite(&agg, 4, 1, out);
        std::fwrite(&cnt, 4, 1, out);
      } else if (f == IP) {
        std::fputs(
            fmt::format("{}.{}.{}.{} {}\n", agg >> 24, (agg >> 16) & 255, (agg >> 8) & 255, agg & 255, cnt).c_str(),
            out);
      } else if (f == Pdf) {
        std::fputs(fmt::format("{} {:.12g}\n", agg, double(cnt) / double(s_->total)).c_str(), out);
      } else {
        std::fputs(fmt::format("{} {}\n", agg, cnt).c_str(), out);
      }
    }
    bool bad = std::ferror(out) != 0;
    if (out == stdout)
      std::fflush(out);
    else
      bad |= std::fclose(out) != 0;
    if (bad) throw std::runtime_error(fmt::format("{}: file error", path));
  }

  bool bytes_ = false, ip_bytes_ = false;
  std::string banner_;
  Call nnz_call_, count_call_;
  std::vector<Call> calls_;  // to make once the counts are unlocked
  bool stop_ = false;
  std::shared_ptr<Shared> s_;
};
SHOAL_ELEMENT(
    AggregateCounter, .name = "AggregateCounter", .ports = "1-2/1-2", .processing = "a/a",
    .summary = "counts packets or bytes per aggregate annotation",
    .description =
        "Click's AggregateCounter: counts the packets (BYTES: bytes; IP_BYTES: from the network header on) of "
        "each aggregate annotation (AggregateIPFlows, the rewriters' SET_AGGREGATE, FromIPSummaryDump's "
        "'aggregate' field), one count for all workers. Packets on input 1, or all while 'freeze' is true, "
        "are counted only for aggregates already seen. AGGREGATE_CALL N HANDLER [VALUE] calls a write handler "
        "when an N+1st aggregate would be added (AGGREGATE_FREEZE N, AGGREGATE_STOP N: freeze, stop); "
        "COUNT_CALL, COUNT_FREEZE, COUNT_STOP the same when the total reaches N. With two outputs, packets not "
        "counted leave on output 1. The write_*_file handlers write Click's IPAggregate files ('-': standard "
        "output): 'AGG COUNT' lines in aggregate order (text), dotted aggregates (ip), fractions of the total "
        "(pdf), or packed 32-bit pairs (binary).",
    .args = {{"BYTES", "boolean", "count bytes, not packets (default false)"},
             {"IP_BYTES", "boolean", "with BYTES, count from the network header (default false)"},
             {"MULTIPACKET", "boolean", "accepted (Shoal has no extra-packets annotation)"},
             {"EXTRA_LENGTH", "boolean", "accepted (Shoal has no extra-length annotation)"},
             {"AGGREGATE_CALL", "N HANDLER [VALUE]", "call a handler at N aggregates"},
             {"AGGREGATE_FREEZE", "unsigned", "freeze at N aggregates"},
             {"AGGREGATE_STOP", "unsigned", "stop at N aggregates"},
             {"COUNT_CALL", "N HANDLER [VALUE]", "call a handler when the total reaches N"},
             {"COUNT_FREEZE", "unsigned", "freeze when the total reaches N"},
             {"COUNT_STOP", "unsigned", "stop when the total reaches N"},
             {"BANNER", "string", "lines written after the files' first line"}},
    .handlers = {{"write_text_file", "w", "FILE: write the counts as text (also write_ascii_file)"},
                 {"write_ip_file", "w", "FILE: the same, aggregates as IP addresses"},
                 {"write_pdf_file", "w", "FILE: the same, counts as fractions of the total"},
                 {"write_file", "w", "FILE: binary"},
                 {"count", "r", "the total"},
                 {"nagg", "r", "aggregates counted"},
                 {"freeze", "rw", "count only aggregates already seen"},
                 {"active", "rw", "count at all"},
                 {"stop", "w", "stop counting and stop the router"},
                 {"clear", "w", "forget every count"},
                 {"reaggregate_counts", "w", "replace the counts by their frequencies (also counts_pdf)"},
                 {"banner", "rw", "the files' banner"}},
    .example =
        "FromIPSummaryDump(in.txt) -> ac :: AggregateCounter -> Discard;\n"
        "DriverManager(wait, write ac.write_text_file counts.txt);");

}  // namespace shoal

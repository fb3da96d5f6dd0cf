// ICMPErrorBase<D>: what ICMPError (IPv4, RFC 792/1812) and ICMP6Error
// (IPv6, RFC 4443) share. Each packet is replaced by the error D makes for
// it: the error leaves on output 0 and the original is counted as dropped
// ('answered-with-icmp'); a packet no error may answer leaves on output 1
// if there is one, else is dropped ('no-icmp-allowed'); a packet without a
// network header ('no-ip-header') or an empty pool ('pool-exhausted') is
// dropped. D provides `Packet* make_error(Packet*, uint16_t& why)`, which
// returns nullptr with `why` set when no error is made, and builds the
// error in new_error().
#pragma once
#include <string_view>

#include "shoal/core/args.hh"
#include "shoal/elements/common.hh"

namespace shoal {

// A name of an ICMP type or code, and its value.
struct IcmpName {
  const char* name;
  int value;
};
// The value of name `s` in table t, or `s` as a number below 256.
template <size_t N>
bool lookup_icmp_name(const IcmpName (&t)[N], std::string_view s, int& v) {
  for (auto& e : t)
    if (s == e.name) return v = e.value, true;
  uint64_t x;
  if (parse_uint(s, x) && x < 256) return v = int(x), true;
  return false;
}

template <class D>
class ICMPErrorBase : public Element {
 public:
  void initialize() override {
    r_sent_ = add_drop_reason("answered-with-icmp");
    r_skip_ = add_drop_reason("no-icmp-allowed");
    r_bad_ = add_drop_reason("no-ip-header");
    r_pool_ = add_drop_reason("pool-exhausted");
  }
  void push(int, PacketBatch* b) override {
    PacketBatch* out = nullptr;
    PacketBatch* rej = nullptr;
    b->for_each([&](uint32_t i, Packet* p) {
      b->kill(i);
      uint16_t why = r_skip_;
      Packet* q = static_cast<D*>(this)->make_error(p, why);
      if (!q) {
        if (why == r_skip_ && noutputs() > 1) {
          if (!rej) rej = new_batch();
          rej->append(p);
          if (rej->full()) output_push(1, rej), rej = nullptr;
          return;
        }
        return drop(p, why);
      }
      drop(p, r_sent_);  // the original is answered, not forwarded
      if (!out) out = new_batch(), out->anno = b->anno;
      out->append(q);
      if (out->full()) output_push(0, out), out = nullptr;
    });
    recycle(b);
    if (out) output_push(0, out);
    if (rej) output_push(1, rej);
  }
  void add_handlers() override { add_stat_handler("errors", errors_); }

 protected:
  // A packet of `len` bytes for the error of p (timestamp copied), counted
  // as created; nullptr with why = 'pool-exhausted' when the pool is empty.
  Packet* new_error(const Packet* p, uint32_t len, uint16_t& why) {
    Packet* q = worker().pool().alloc(len);
    if (!q) return why = r_pool_, nullptr;
    created();
    errors_.add();
    q->anno().timestamp_ns = p->anno().timestamp_ns;
    return q;
  }
  uint16_t r_sent_ = 0, r_skip_ = 0, r_bad_ = 0, r_pool_ = 0;
  Stat errors_;
};

}  // namespace shoal

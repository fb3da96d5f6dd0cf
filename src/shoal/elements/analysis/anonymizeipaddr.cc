// AnonymizeIPAddr: Click's prefix-preserving address anonymization (as
// tcpdpriv -A50). Output bit i of an address is input bit i flipped, or
// not, by a random choice made once for the input's first i bits: two
// addresses that share exactly p leading bits map to two that share exactly
// p. The choices live in a binary trie shared by every worker's copy, so
// one address maps the same way wherever it is seen.
#include <fmt/format.h>

#include <mutex>
#include <unordered_map>
#include <vector>

#include "shoal/core/worker.hh"
#include "shoal/elements/clickrandom.hh"
#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

namespace {
struct AnonTrie {
  std::mutex mu;
  bool ready = false;
  struct Node {
    uint32_t child[2] = {0, 0};  // 0: none yet
    uint8_t flip = 0;
  };
  std::vector<Node> nodes{Node{}};
  std::unordered_map<uint32_t, uint32_t> memo;
  ClickRandom rng;
};
}  // namespace

class AnonymizeIPAddr : public PacketElement<AnonymizeIPAddr> {
 public:
  void configure(Args& a) override {
    std::string preserve;
    bool seed = true;
    a.read("CLASS", class_).read("PRESERVE_8", preserve).read("SEED", seed);
    a.complete();
    if (class_ > 32) a.fail("CLASS must be 0 to 32");
    for (auto w : split_words(preserve)) {
      uint64_t n;
      if (!parse_uint(w, n) || n > 255) a.fail(fmt::format("PRESERVE_8: '{}' is not 0 to 255", w));
      preserve8_.push_back(uint8_t(n));
    }
  }
  void initialize() override {
    r_not_ip_ = add_drop_reason("not-ipv4");
    trie_ = shared_state<AnonTrie>(this);
    std::lock_guard<std::mutex> g(trie_->mu);
    if (!trie_->ready) {  // seeded from Click's random numbers: RandomSeed makes the mapping repeatable
      trie_->rng.srandom(click_random_of(worker().runtime(), worker().id()).random());
      trie_->nodes[0].flip = fresh_flip(0, 0);  // the root: the first bit's choice
      trie_->ready = true;
    }
  }
  // The trie is every worker's: held for a batch at a time.
  void begin_batch(PacketBatch*) { held_ = std::unique_lock<std::mutex>(trie_->mu); }
  bool finish_batch(PacketBatch*) {
    held_.unlock();
    return false;
  }
  int process(Packet* p) {
    int64_t off = p->has_network_header() ? p->network_header_offset() : -1;
    if (off < 0 || uint64_t(off) + 20 > p->length() || (p->network_header()[0] >> 4) != 4)
      return noutputs() > 1 ? 1 : drop_code(r_not_ip_);
    uint8_t* ip = p->network_header();
    uint32_t len = p->length() - uint32_t(off), hl = (ip[0] & 0xf) * 4u;
    // The addresses, with the header's and TCP's or UDP's checksums updated.
    k::ip4_set_addr(ip, len, 12, map(k::load_be32(ip + 12)));
    k::ip4_set_addr(ip, len, 16, map(k::load_be32(ip + 16)));
    // An ICMP error quotes a packet: its addresses too (swapped, as it went
    // the other way), and the ICMP checksum again when the message is whole.
    uint16_t frag = k::load_be16(ip + 6);
    if (ip[9] == 1 && (frag & 0x3fff) == 0 && hl >= 20 && len >= hl + 8 + 20) {
      uint8_t* icmp = ip + hl;
      uint8_t type = icmp[0];
      uint8_t* in = icmp + 8;
      uint32_t ilen = len - hl - 8, ihl = (in[0] & 0xf) * 4u;
      if ((type == 3 || type == 4 || type == 5 || type == 11 || type == 12) && (in[0] >> 4) == 4 && ihl >= 20 &&
          ilen >= ihl) {
        k::ip4_set_addr(in, ilen, 12, map(k::load_be32(in + 12)));
        k::ip4_set_addr(in, ilen, 16, map(k::load_be32(in + 16)));
        uint32_t tot = std::min<uint32_t>(k::load_be16(ip + 2), len);
        if (tot >= hl + 8) {
          k::store_be16(icmp + 2, 0);
          k::store_be16(icmp + 2, k::ip_checksum(icmp, tot - hl));
        }
      }
    }
    return 0;
  }
  void add_handlers() override {
    add_read_param_handler("map", [this](const std::string& v) {
      IPv4Addr a;
      if (!parse_ipv4(trim(v), a)) throw std::runtime_error(fmt::format("map: '{}' is not an IPv4 address", v));
      std::lock_guard<std::mutex> g(trie_->mu);
      uint32_t m = map(a.host());
      uint8_t b[4] = {uint8_t(m >> 24), uint8_t(m >> 16), uint8_t(m >> 8), uint8_t(m)};
      return format_ipv4(b);
    });
  }

 private:
  // (trie_->mu held: the batch's, or the handler's)
  uint32_t map(uint32_t a) {
    if (a == 0 || a == 0xffffffffu) return a;  // (Click: these map to themselves)
    auto it = trie_->memo.find(a);
    if (it != trie_->memo.end()) return it->second;
    uint32_t out = 0, node = 0;
    for (int i = 0; i < 32; ++i) {
      uint32_t bit = (a >> (31 - i)) & 1;
      out |= (bit ^ trie_->nodes[node].flip) << (31 - i);
      uint32_t& c = trie_->nodes[node].child[bit];
      if (!c) {
        c = uint32_t(trie_->nodes.size());
        trie_->nodes.emplace_back();
        trie_->nodes.back().flip = fresh_flip(a, i + 1);
      }
      node = trie_->nodes[node].child[bit];
    }
    trie_->memo.emplace(a, out);
    return out;
  }
  // The choice for the node of a's first `depth` bits: none where CLASS or
  // PRESERVE_8 keeps the bit, else a random one.
  uint8_t fresh_flip(uint32_t a, int depth) {
    if (depth < int(class_)) {  // the prefix so far all ones: the class bit kept
      uint32_t prefix = depth ? a >> (32 - depth) : 0, ones = depth ? (1u << depth) - 1 : 0;
      if (prefix == ones) return 0;
    }
    if (depth < 8)
      for (uint8_t n : preserve8_)
        if (depth == 0 || (a >> (32 - depth)) == uint32_t(n >> (8 - depth))) return 0;
    return uint8_t(trie_->rng.random() >> 30 & 1);
  }

  uint32_t class_ = 0;
  std::vector<uint8_t> preserve8_;
  std::shared_ptr<AnonTrie> trie_;
  std::unique_lock<std::mutex> held_;  // the trie, during a batch
  uint16_t r_not_ip_ = 0;
};
SHOAL_ELEMENT(
    AnonymizeIPAddr, .name = "AnonymizeIPAddr", .ports = "1/1-2", .processing = "a/ah",
    .summary = "anonymizes IPv4 addresses, preserving prefixes (tcpdpriv -A50)",
    .description =
        "Replaces each IPv4 packet's source and destination addresses (at its network header) by their "
        "anonymized forms: two addresses sharing exactly p leading bits map to two sharing exactly p (each output "
        "bit is the input bit flipped, or not, by a random choice made once per input prefix). One mapping serves "
        "every worker; Click's random numbers choose it (RandomSeed makes it repeatable). 0.0.0.0 and "
        "255.255.255.255 map to themselves. The IP header checksum, and TCP's and UDP's, are updated "
        "incrementally (Click's updates the IP header's only); in an ICMP error, the quoted packet's addresses are "
        "anonymized too and the ICMP checksum recomputed. CLASS c keeps classes: a run of leading one bits shorter "
        "than c is kept (1: class A stays A; 4: A, B, C and D). PRESERVE_8 keeps the listed /8 networks (and, by "
        "prefix preservation, some neighbours). A packet that is not IPv4 leaves on output 1, or is dropped "
        "('not-ipv4').",
    .args = {{"CLASS", "unsigned", "keep address classes: leading one bits up to CLASS (default 0)"},
             {"PRESERVE_8", "integers", "/8 networks kept as they are (space-separated)"},
             {"SEED", "boolean", "accepted for Click compatibility (RandomSeed seeds the mapping)"}},
    .handlers = {{"map", "r", "with an address as parameter: its anonymized form ('map 10.0.0.1')"}},
    .example =
        "FromDump(in.pcap) -> Strip(14) -> CheckIPHeader -> AnonymizeIPAddr(CLASS 4) -> Unstrip(14) -> "
        "ToDump(anon.pcap);");

}  // namespace shoal

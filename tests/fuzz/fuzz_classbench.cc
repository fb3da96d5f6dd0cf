// libFuzzer harness: any byte string as a ClassBench filter file gives
// rules or an error that names the line, never a crash or sanitizer report.
// Rules that load print back to text that parses to the same rules, and the
// cut trees built from them give the linear first-match answer for keys
// made from the input (and from the rules' own corners).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "shoal/classbench/classbench.hh"
#include "shoal/classbench/classify_build.hh"

using namespace shoal;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size), err;
  std::vector<k::ClsRule> rules;
  if (!classify::parse_rules(text, "fuzz.rules", rules, err)) {
    if (err.find("fuzz.rules:") == std::string::npos) __builtin_trap();  // errors name the file and line
    return 0;
  }
  if (rules.empty() || rules.size() > 200) return 0;
  for (const k::ClsRule& r : rules) {  // print and parse back
    k::ClsRule again;
    std::string line = classify::unparse_rule(r), e2;
    if (!classify::parse_rule(line, again, e2) || classify::unparse_rule(again) != line) __builtin_trap();
  }
  k::ClsTrees t;
  k::ClsTrees::Options o;
  o.binth = 1 + uint32_t(size % 8);
  if (!t.build(rules, o, err)) return 0;
  k::ClsView v = t.view();
  auto check = [&](const k::ClsKey& key) {
    if (k::cls_lookup(v, key) != k::cls_linear(rules.data(), uint32_t(rules.size()), key)) __builtin_trap();
  };
  for (size_t off = 0; off + 16 <= size && off < 4096; off += 16) {  // keys from the input's bytes
    k::ClsKey key;
    std::memcpy(&key.src, data + off, 4);
    std::memcpy(&key.dst, data + off + 4, 4);
    std::memcpy(&key.sport, data + off + 8, 2);
    std::memcpy(&key.dport, data + off + 10, 2);
    key.proto = data[off + 12];
    key.flags = uint16_t(data[off + 13] << 8 | data[off + 14]);
    key.ip = data[off + 15] & 1;
    key.tagged = (data[off + 15] >> 1) & 1;
    key.vlan = uint16_t(data[off + 15] >> 2);
    key.ethertype = key.ip ? 0x0800 : uint16_t(0x0806 + (data[off + 15] >> 4));
    check(key);
  }
  for (const k::ClsRule& r : rules) {  // each rule's lowest and highest corners
    for (int hi = 0; hi < 2; ++hi) {
      k::ClsKey key;
      key.src = hi ? r.src | ~r.smask : r.src;
      key.dst = hi ? r.dst | ~r.dmask : r.dst;
      key.sport = hi ? r.sp_hi : r.sp_lo;
      key.dport = hi ? r.dp_hi : r.dp_lo;
      key.proto = r.proto;
      key.flags = r.flags;
      key.ethertype = r.ethertype ? r.ethertype : 0x0800;
      key.ip = key.ethertype == 0x0800;
      key.vlan = r.vlan;
      key.tagged = r.vlan_mask != 0;
      check(key);
    }
  }
  return 0;
}

// libFuzzer harness: any byte string as a Snort/Suricata rules file (and as
// a variables file) gives rules or problems, never a crash, hang or
// sanitizer report; the rules that load build both engines' prefilters and
// match a payload made of the input. The input's start is also compiled as
// a regular expression by the DFA compiler, which accepts it or says why.
#include <cstdint>
#include <string>

#include "shoal/ids/engine.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  {
    shoal::ids::RegexDfa d;
    std::string why;
    if (d.compile(text.substr(0, 48), size % 2 ? "is" : "mx", why, 256))
      d.search(data, size);
    else if (why.empty())
      __builtin_trap();  // a refusal always has a reason
  }
  shoal::ids::Vars vars;
  std::string err;
  vars.load_text(text, "fuzz.yaml", err);
  vars.set("HOME_NET", "[10.0.0.0/8,!10.1.0.0/16]");
  vars.set("HTTP_PORTS", "[80,8000:8080]");
  shoal::ids::RuleSet set;
  set.load_text(text, "fuzz.rules", vars, false, err);
  if (set.rules().empty() || set.rules().size() > 64) return 0;
  shoal::ids::Engine e;
  if (!e.build(set.rules(), shoal::ids::EngineKind::Builtin, err)) return 0;
  shoal::ids::PacketInfo p;
  p.proto = 6, p.has_ports = true, p.sport = 1234, p.dport = 80;
  p.payload = data;
  p.plen = uint32_t(size);
  std::vector<uint32_t> hits;
  e.match(p, hits);
  return 0;
}

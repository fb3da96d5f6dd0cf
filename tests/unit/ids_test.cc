// The IDS: the Aho-Corasick DFA against a naive search and Hyperscan on
// random pattern sets; rule semantics option by option; headers, variables
// and lists; malformed rules; packet parsing on hostile input; IDSMatcher
// end to end (fast.log, EVE, output 1) with both engines.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "helpers.hh"
#include "regex_gen.hh"
#include "shoal/ids/engine.hh"
#include "shoal/ids/stream_prefilter.hh"
#include "shoal/ids/verify.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/ids_scan.hh"

using namespace shoal;
using namespace shoal::ids;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = char(fold(uint8_t(c)));
  return s;
}

// Every (pattern, end) occurrence, case-folded, by brute force.
std::set<std::pair<uint32_t, uint32_t>> naive(const std::vector<std::string>& pats, const std::string& text) {
  std::set<std::pair<uint32_t, uint32_t>> out;
  std::string t = lower(text);
  for (uint32_t id = 0; id < pats.size(); ++id) {
    std::string p = lower(pats[id]);
    for (size_t pos = t.find(p); pos != std::string::npos; pos = t.find(p, pos + 1))
      out.insert({id, uint32_t(pos + p.size())});
  }
  return out;
}

std::string random_text(std::mt19937& rng, size_t n, const std::string& alphabet) {
  std::string s(n, ' ');
  for (auto& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

Rule parse(const std::string& text, const Vars& vars = Vars()) {
  Rule r;
  std::string err;
  EXPECT_TRUE(parse_rule(text, vars, r, err)) << text << ": " << err;
  return r;
}

bool payload(const std::string& opts, const std::string& data) {
  Rule r = parse("alert ip any any -> any any (" + opts + " sid:1;)");
  return payload_matches(r, reinterpret_cast<const uint8_t*>(data.data()), uint32_t(data.size()));
}

}  // namespace

TEST(AhoCorasick, FindsWhatANaiveSearchFinds) {
  std::mt19937 rng(5);
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(char(b));
  for (const std::string& alphabet : {std::string("ab"), std::string("aAbBcC"), bytes})
    for (size_t npat : {1u, 7u, 120u, 2000u}) {
      std::vector<std::string> pats;
      for (size_t i = 0; i < npat; ++i) pats.push_back(random_text(rng, 1 + rng() % 12, alphabet));
      AcTable ac;
      std::string err;
      ASSERT_TRUE(ac.build(pats, err)) << err;
      EXPECT_LE(ac.classes(), std::min<size_t>(256, alphabet.size() + 1));
      for (int t = 0; t < 20; ++t) {
        std::string text = random_text(rng, rng() % 600, alphabet);
        if (t % 3 == 0 && text.size() > 20) text.replace(rng() % 10, 0, pats[rng() % npat]);  // a planted match
        std::set<std::pair<uint32_t, uint32_t>> got;
        k::ac_scan(ac.view(), reinterpret_cast<const uint8_t*>(text.data()), uint32_t(text.size()),
                   [&](uint32_t id, uint32_t end) {
                     got.insert({id, end});
                     return true;
                   });
        // identical patterns share no id here: the naive set lists each id
        ASSERT_EQ(got, naive(pats, text)) << "alphabet " << alphabet.size() << ", " << npat << " patterns";
        // the device form: 16-byte loads from every alignment, the distinct
        // patterns as a list of at most kIdsFound (count beyond: overflow)
        std::set<uint32_t> distinct;
        for (auto& g : got) distinct.insert(g.first);
        alignas(16) uint8_t buf[640];
        uint32_t shift = uint32_t(t % 16);
        std::copy(text.begin(), text.end(), buf + shift);
        std::set<std::pair<uint32_t, uint32_t>> got16;
        k::ac_scan16(ac.view(), buf + shift, uint32_t(text.size()), [&](uint32_t id, uint32_t end) {
          got16.insert({id, end});
          return true;
        });
        ASSERT_EQ(got16, got) << "16-byte loads at alignment " << shift;
        k::IdsScanOut out{};
        k::ids_scan(ac.view(), buf + shift, uint32_t(text.size()), out);
        if (distinct.size() <= k::kIdsFound) {
          ASSERT_EQ(out.count, distinct.size());
          EXPECT_EQ(std::set<uint32_t>(out.ids, out.ids + out.count), distinct);
        } else {
          EXPECT_EQ(out.count, k::kIdsFound + 1) << "an overflow says so";
        }
      }
    }
}

// GASPP's parallel scan: the chunks' lists together hold exactly the
// patterns one thread finds (repeats aside), for chunk sizes down to one
// byte and every alignment; a packet whose chunks find more than a list
// holds says so (count over kIdsFound), so the host scans it.
TEST(AhoCorasick, ChunkedScanFindsWhatOneThreadFinds) {
  std::mt19937 rng(11);
  for (size_t npat : {1u, 30u, 900u}) {
    std::vector<std::string> pats;
    uint32_t longest = 1;
    for (size_t i = 0; i < npat; ++i) {
      pats.push_back(random_text(rng, 1 + rng() % 14, "abcdE"));
      longest = std::max(longest, uint32_t(pats.back().size()));
    }
    AcTable ac;
    std::string err;
    ASSERT_TRUE(ac.build(pats, err)) << err;
    for (int t = 0; t < 60; ++t) {
      std::string text = random_text(rng, rng() % 1500, "abcdefghE");
      for (int k = 0; k < 3 && !text.empty(); ++k) text.replace(rng() % text.size(), 0, pats[rng() % npat]);
      alignas(16) uint8_t buf[1600 + 64];
      uint32_t shift = uint32_t(t % 16), n = uint32_t(text.size());
      std::copy(text.begin(), text.end(), buf + shift);
      k::IdsScanOut one{};
      k::ids_scan(ac.view(), buf + shift, n, one);
      for (uint32_t chunk : {1u, 5u, 64u, 128u, 2000u}) {
        k::IdsScanOut out{};
        bool any = false;
        for (uint32_t from = 0; from < n; from += chunk)
          any |= k::ids_scan_chunk(ac.view(), buf + shift, n, from, chunk, longest - 1, out);
        EXPECT_EQ(any, out.count > 0);
        if (one.count > k::kIdsFound) {
          EXPECT_GT(out.count, k::kIdsFound) << "chunk " << chunk << ": the overflow shows";
          continue;
        }
        if (out.count > k::kIdsFound) continue;  // repeats filled the list: the host scans (correct, slower)
        EXPECT_EQ(std::set<uint32_t>(out.ids, out.ids + out.count), std::set<uint32_t>(one.ids, one.ids + one.count))
            << npat << " patterns, chunk " << chunk << ", " << n << " bytes";
      }
    }
  }
}

// A direction's stream inspected a piece at a time (pieces of any size,
// the window trimmed to its last W bytes after each, holes that start it
// over): the candidates kept incrementally are those of a scan of the whole
// window, every time.
TEST(AhoCorasick, StreamPrefilterEqualsScanningTheWholeWindow) {
  std::mt19937 rng(12);
  size_t matched = 0, skipped = 0, device = 0, overflowed = 0;
  for (size_t npat : {1u, 20u, 300u}) {
    std::string text;
    for (size_t i = 0; i < npat; ++i) {
      std::string p = random_text(rng, 1 + rng() % 12, "abcdE");
      // every third rule looks for more than its pattern (not plain: found in an earlier piece, it may
      // match anew when the rest arrives)
      text += fmt::format("alert tcp-stream any any -> any any (content:\"{}\"; {}sid:{};)\n", p,
                          i % 3 == 2 ? "content:\"Eh\"; distance:0; " : "", i + 1);
    }
    text += "alert tcp-stream any any -> any any (pcre:\"/zq+/\"; sid:100000;)\n";  // no content: always a candidate
    RuleSet set;
    std::string err;
    ASSERT_TRUE(set.load_text(text, "stream", Vars(), false, err)) << err;
    for (const auto& p : set.problems()) ADD_FAILURE() << p.str();
    Database db;
    ASSERT_TRUE(db.build(set.rules(), EngineKind::Builtin, err)) << err;
    ASSERT_EQ(db.stream_rules().size(), npat + 1);
    // hs: fed by an engine over a Hyperscan database (Engine::stream_scan)
    auto hdb = std::make_shared<Database>();
    Engine he;
    bool with_hs = have_hyperscan();
    if (with_hs) {
      ASSERT_TRUE(hdb->build(set.rules(), EngineKind::Hyperscan, err)) << err;
      ASSERT_TRUE(he.use(hdb, err)) << err;
    }
    for (uint32_t window : {16u, 100u, 2048u}) {
      StreamPrefilter pre, dev, hs;  // dev: fed the device's scan of each piece (the seam scanned here)
      std::string w;
      uint64_t end = 0;  // the stream offset w ends at
      size_t nonempty = 0;
      std::vector<uint32_t> got, want;
      for (int step = 0; step < 400; ++step) {
        if (rng() % 40 == 0) {  // a hole
          end += 1 + rng() % 100;
          w.clear();
          pre.clear();
          dev.clear();
          hs.clear();
        }
        std::string piece = random_text(rng, rng() % (rng() % 4 ? 20 : 300), "abcdefghE");
        if (rng() % 2 && npat) {  // a rule's pattern, sometimes cut across pieces
          const std::string& c = set.rules()[rng() % npat].items[0].content.bytes;
          piece.insert(rng() % (piece.size() + 1), c);
        }
        auto old = uint32_t(w.size());
        w += piece;
        end += piece.size();
        const auto* s = reinterpret_cast<const uint8_t*>(w.data());
        auto n = uint32_t(w.size());
        pre.add(db, s, old, n, end - n);
        if (with_hs) hs.add(he, s, old, n, end - n);
        k::IdsStreamOut found;
        k::ids_stream_scan(db.stream_automaton().view(), s + old, n - old, found);
        if (dev.add_found(db, found, s, old, n, end - n)) {
          device += found.count > 0;
        } else {
          ++overflowed;
          dev.add(db, s, old, n, end - n);
        }
        pre.candidates(db, end - n, got);
        db.stream_candidates(s, n, want);
        ASSERT_EQ(got, want) << npat << " patterns, window " << window << ", step " << step;
        dev.candidates(db, end - n, got);
        ASSERT_EQ(got, want) << "device scan: " << npat << " patterns, window " << window << ", step " << step;
        if (with_hs) {
          hs.candidates(*hdb, end - n, got);
          ASSERT_EQ(got, want) << "Hyperscan: " << npat << " patterns, window " << window << ", step " << step;
        }
        nonempty += want.size() > 1;
        // leaving out the plain rules whose pattern is not new loses no new match
        auto anew = [&](const std::vector<uint32_t>& cands) {
          std::vector<uint32_t> m;
          for (uint32_t r : cands)
            if (payload_matches(db.rules()[r], s, n) && !(old && payload_matches(db.rules()[r], s, old)))
              m.push_back(r);
          return m;
        };
        pre.candidates(db, end - n, got, end - n + old);
        EXPECT_LE(got.size(), want.size());
        ASSERT_EQ(anew(got), anew(want)) << npat << " patterns, window " << window << ", step " << step;
        std::vector<uint32_t> got_dev;
        dev.candidates(db, end - n, got_dev, end - n + old);
        ASSERT_EQ(got_dev, got) << "device scan: " << npat << " patterns, window " << window << ", step " << step;
        if (with_hs) {
          hs.candidates(*hdb, end - n, got_dev, end - n + old);
          ASSERT_EQ(got_dev, got) << "Hyperscan: " << npat << " patterns, window " << window << ", step " << step;
        }
        matched += !anew(want).empty();
        skipped += want.size() - got.size();
        if (w.size() > window) w.erase(0, w.size() - window);
      }
      EXPECT_GT(nonempty, 100u) << "most windows hold a pattern";
    }
    if (with_hs) {
      EXPECT_EQ(he.hs_stream_scans(), 3u * 400) << "Hyperscan scanned each piece (no fall back to the DFA)";
    }
  }
  EXPECT_GT(matched, 300u) << "rules match anew often";
  EXPECT_GT(skipped, 300u) << "plain rules whose pattern is old are left out often";
  EXPECT_GT(device, 300u) << "the device's lists carried patterns";
  EXPECT_GT(overflowed, 10u) << "some pieces hold more distinct patterns than a device list";
}

TEST(AhoCorasick, EnginesAgreeWithANaiveSearchOnRuleSets) {
  // One nocase content per rule: a rule matches exactly when its pattern
  // occurs, case-folded. Built-in and Hyperscan prefilters, same verdicts.
  std::mt19937 rng(8);
  for (size_t n : {1u, 50u, 1000u, 10000u}) {
    std::vector<std::string> pats;
    std::string rules;
    for (size_t i = 0; i < n; ++i) {
      std::string p = random_text(rng, 3 + rng() % 10, "abcdefgXYZ|/.-");
      pats.push_back(p);
      std::string esc;
      for (char c : p) esc += c == '|' ? std::string("|7C|") : std::string(1, c);
      rules += fmt::format("alert tcp any any -> any any (content:\"{}\"; nocase; sid:{};)\n", esc, i + 1);
    }
    RuleSet set;
    std::string err;
    ASSERT_TRUE(set.load_text(rules, "gen.rules", Vars(), true, err)) << err;
    ASSERT_EQ(set.rules().size(), n);
    Engine builtin, hs;
    ASSERT_TRUE(builtin.build(set.rules(), EngineKind::Builtin, err)) << err;
    bool with_hs = have_hyperscan();
    if (with_hs) {
      ASSERT_TRUE(hs.build(set.rules(), EngineKind::Hyperscan, err)) << err;
    }
    std::vector<uint32_t> a, b;
    for (int t = 0; t < 30; ++t) {
      std::string text = random_text(rng, rng() % 1500, "abcdefgABCXYZxyz|/.- ");
      for (int k = 0; k < 3; ++k) text.insert(rng() % (text.size() + 1), pats[rng() % n]);
      std::set<uint32_t> want;
      for (auto& [id, end] : naive(pats, text)) want.insert(id);
      PacketInfo p;
      p.proto = 6, p.has_ports = true;
      p.payload = reinterpret_cast<const uint8_t*>(text.data());
      p.plen = uint32_t(text.size());
      builtin.match(p, a);
      ASSERT_EQ(std::set<uint32_t>(a.begin(), a.end()), want) << n << " rules";
      if (with_hs) {
        hs.match(p, b);
        ASSERT_EQ(a, b) << "Hyperscan and the built-in engine disagree, " << n << " rules";
      }
    }
  }
}

namespace {
// The rules that match p, each tried in turn without prefilter (the
// oracle of the engine tests), in the database's order.
std::vector<uint32_t> every_rule(const std::vector<Rule>& db, const PacketInfo& p) {
  std::vector<uint32_t> want;
  for (uint32_t r = 0; r < db.size(); ++r) {
    int budget = kBacktrackBudget;
    auto unknown = [](size_t) { return -1; };
    if (header_matches(db[r], p) && packet_items_match(db[r], p, budget, unknown)) want.push_back(r);
  }
  return want;
}
}  // namespace

// The engine queues a candidate only when the rule's protocol and port
// bounds allow the packet (Database::Quick), and checks the rules without
// fast pattern by protocol: against every rule tried on every packet, in
// the database's order, none is lost.
TEST(AhoCorasick, ProtocolAndPortBoundsLoseNoRule) {
  std::mt19937 rng(11);
  const char* protos[] = {"tcp", "udp", "icmp", "ip", "icmpv4", "ipv6"};
  const char* ports[] = {"any", "80", "[80,443]", "1000:2000", "!80", "![1:1023]", "443:", "[53,!54]", "22"};
  const char* words[] = {"alpha", "beta", "gamma", "delta", "omega"};
  std::string rules;
  for (int i = 0; i < 600; ++i) {
    const char* proto = protos[rng() % std::size(protos)];
    bool ported = std::string(proto) == "tcp" || std::string(proto) == "udp";
    std::string sp = ported && rng() % 4 == 0 ? ports[rng() % std::size(ports)] : "any";
    std::string dp = ported ? ports[rng() % std::size(ports)] : "any";
    std::string opts = rng() % 5 == 0 ? (std::string(proto).rfind("icmp", 0) == 0 ? "itype:8;" : "dsize:>3;")
                                      : fmt::format("content:\"{}\";", words[rng() % std::size(words)]);
    rules += fmt::format("alert {} any {} {} any {} ({} sid:{};)\n", proto, sp, rng() % 6 == 0 ? "<>" : "->", dp, opts,
                         i + 1);
  }
  RuleSet set;
  std::string err;
  ASSERT_TRUE(set.load_text(rules, "ports.rules", Vars(), true, err)) << err;
  Engine builtin, hs;
  ASSERT_TRUE(builtin.build(set.rules(), EngineKind::Builtin, err)) << err;
  bool with_hs = have_hyperscan();
  if (with_hs) {
    ASSERT_TRUE(hs.build(set.rules(), EngineKind::Hyperscan, err)) << err;
  }
  const auto& db = builtin.database()->rules();
  const uint16_t some_ports[] = {80, 443, 22, 53, 54, 1500, 3000, 1023, 8080};
  const uint8_t some_protos[] = {6, 17, 1, 58, 47};
  std::vector<uint32_t> got, got_hs;
  size_t hits = 0;
  for (int t = 0; t < 400; ++t) {
    std::string text = random_text(rng, rng() % 60, "abcdefg ");
    text.insert(rng() % (text.size() + 1), words[rng() % std::size(words)]);
    PacketInfo p;
    p.proto = some_protos[rng() % std::size(some_protos)];
    p.has_ports = p.proto == 6 || p.proto == 17;
    p.src.v6 = p.dst.v6 = rng() % 3 == 0;
    if (p.has_ports)
      p.sport = some_ports[rng() % std::size(some_ports)], p.dport = some_ports[rng() % std::size(some_ports)];
    uint8_t icmp[8] = {uint8_t(rng() % 2 ? 8 : 0), 0, 0, 0, 0, 0, 0, 0};
    if (p.proto == 1 || p.proto == 58) p.l4 = icmp;
    p.payload = reinterpret_cast<const uint8_t*>(text.data());
    p.plen = uint32_t(text.size());
    std::vector<uint32_t> want = every_rule(db, p);
    builtin.match(p, got);
    ASSERT_EQ(got, want) << "packet " << t << " proto " << int(p.proto) << " ports " << p.sport << "->" << p.dport;
    if (with_hs) {
      hs.match(p, got_hs);
      ASSERT_EQ(got_hs, want) << "packet " << t;
    }
    hits += want.size();
  }
  EXPECT_GT(hits, 400u) << "the packets match rules: the comparison means something";
}

// Port groups (ids/port_groups.hh): a packet is scanned only for the fast
// patterns its protocol and ports can need. Each rule has a pattern of its
// own, port sets of every form (lists, ranges, negations inside lists and
// out, open ranges, bidirectional rules); packets hold many rules'
// patterns, with ports in and out of the sets: against every rule tried on
// every packet, nothing is lost, with either engine, while the sets
// scanned are much smaller than the whole.
TEST(AhoCorasick, PortGroupsLoseNoRule) {
  std::mt19937 rng(21);
  std::string http = "[80,81,311,591,593,8000,8080,8088,8443,9000,34443]";
  const std::string ports[] = {"any",   "80",        http,        "![1:1023]", "[1000:2000,!1500]",
                               "1024:", ":1023",     "!" + http,  "[53,!54]",  "[22,[23,25],!24]",
                               "443",   "![80,443]", "6000:6010", "[1:65535]", "!8080"};
  const char* protos[] = {"tcp", "tcp", "tcp", "udp", "ip", "icmp"};
  std::vector<std::string> pats;
  std::string rules;
  for (int i = 0; i < 800; ++i) {
    std::string proto = protos[rng() % std::size(protos)];
    bool ported = proto == "tcp" || proto == "udp";
    std::string sp = ported && rng() % 3 == 0 ? ports[rng() % std::size(ports)] : "any";
    std::string dp = ported && rng() % 5 ? ports[rng() % std::size(ports)] : "any";
    pats.push_back(fmt::format("k{}q{}", random_text(rng, 2, "abcdefgh"), i));
    // (a third of the TCP rules are no stream-payload rules: dsize reads the packet)
    rules +=
        fmt::format("alert {} any {} {} any {} (content:\"{}\"; {}sid:{};)\n", proto, sp, rng() % 10 == 0 ? "<>" : "->",
                    dp, pats.back(), proto == "tcp" && i % 3 == 0 ? "dsize:>0; " : "", i + 1);
  }
  RuleSet set;
  std::string err;
  ASSERT_TRUE(set.load_text(rules, "groups.rules", Vars(), true, err)) << err;
  ASSERT_EQ(set.rules().size(), 800u);
  Engine builtin, hs;
  ASSERT_TRUE(builtin.build(set.rules(), EngineKind::Builtin, err)) << err;
  bool with_hs = have_hyperscan();
  if (with_hs) {
    ASSERT_TRUE(hs.build(set.rules(), EngineKind::Hyperscan, err)) << err;
  }
  // each distinct port set's bitmap (what the groups and long lists' match
  // use) admits exactly the ports its structure does
  std::set<std::string> seen;
  for (const Rule& r : set.rules())
    for (const PortSet* ps : {&r.sport, &r.dport}) {
      ASSERT_FALSE(ps->bits) << "a rule set's own rules have no bitmaps (the database's copies do)";
      if (!seen.insert(port_set_key(*ps)).second) continue;
      std::vector<uint64_t> b = port_bitmap(*ps);
      for (uint32_t p = 0; p < 65536; ++p)
        ASSERT_EQ(b[p >> 6] >> (p & 63) & 1, uint64_t(ps->match(uint16_t(p)))) << port_set_key(*ps) << " port " << p;
    }
  EXPECT_GE(seen.size(), 12u);
  const Database& d = *builtin.database();
  ASSERT_GT(d.port_groups().sets.size(), 2u) << "the rules' ports make groups: the test means something";
  const auto& db = d.rules();
  const uint16_t some_ports[] = {80,   81,   443,  22,   23,    24,   25,    53, 54, 1000,  1500, 2000,
                                 1023, 1024, 8080, 9000, 34443, 6005, 65535, 0,  1,  40000, 311,  8443};
  const uint8_t some_protos[] = {6, 6, 17, 1, 47};
  std::vector<uint32_t> got, got_hs;
  size_t hits = 0, scanned = 0, added_hits = 0, scanned_tcp = 0, scanned_added = 0;
  for (int t = 0; t < 1500; ++t) {
    std::string text = random_text(rng, rng() % 40, "abcdefgh ");
    for (int k = 0; k < 60; ++k) text += pats[rng() % pats.size()] + " ";
    PacketInfo p;
    p.proto = some_protos[rng() % std::size(some_protos)];
    p.has_ports = (p.proto == 6 || p.proto == 17) && rng() % 20;
    auto port = [&] { return rng() % 4 ? some_ports[rng() % std::size(some_ports)] : uint16_t(rng()); };
    if (p.has_ports) p.sport = port(), p.dport = port();
    uint8_t icmp[8] = {8, 0, 0, 0, 0, 0, 0, 0};
    if (p.proto == 1) p.l4 = icmp;
    p.payload = reinterpret_cast<const uint8_t*>(text.data());
    p.plen = uint32_t(text.size());
    std::vector<uint32_t> want = every_rule(db, p);
    builtin.match(p, got);
    ASSERT_EQ(got, want) << "packet " << t << " proto " << int(p.proto) << " ports " << p.sport << "->" << p.dport;
    if (with_hs) {
      hs.match(p, got_hs);
      ASSERT_EQ(got_hs, want) << "packet " << t << " proto " << int(p.proto) << " ports " << p.sport << "->" << p.dport;
    }
    hits += want.size();
    int32_t g =
        d.port_groups().pick(Database::proto_class(p.proto), p.has_ports, p.sport, p.dport, d.patterns().size());
    scanned += d.port_groups().size_of(g, d.patterns().size());
    if (p.proto != 6) continue;
    // The same TCP packet's payload joined its connection's stream: the
    // stream-payload rules are the stream's (the packet is scanned for the
    // others' patterns only, Database::port_groups(true)), the others match
    // as before
    p.stream_added = true;
    std::erase_if(want, [&](uint32_t r) { return db[r].stream_payload; });
    builtin.match(p, got);
    ASSERT_EQ(got, want) << "added: packet " << t << " ports " << p.sport << "->" << p.dport;
    if (with_hs) {
      hs.match(p, got_hs);
      ASSERT_EQ(got_hs, want) << "added: packet " << t << " ports " << p.sport << "->" << p.dport;
    }
    added_hits += want.size();
    scanned_tcp += d.port_groups().size_of(g, d.patterns().size());
    g = d.port_groups(true).pick(0, p.has_ports, p.sport, p.dport, d.patterns().size());
    scanned_added += d.port_groups(true).size_of(g, d.patterns().size());
  }
  EXPECT_GT(hits, 1500u) << "the packets match rules";
  EXPECT_LT(scanned, 1500 * d.patterns().size() * 2 / 3) << "the groups scan for fewer patterns than the whole";
  EXPECT_EQ(d.form(true), 1u) << "stream-payload rules with fast patterns: a second form";
  EXPECT_GT(added_hits, 300u) << "packet rules matched stream-added packets";
  EXPECT_LT(scanned_added * 2, scanned_tcp) << "a stream-added packet is scanned for far fewer patterns";
}

// Rules on thousands of distinct ports: the groups stay bounded (512 sets;
// past that a class's ports share its set) and still lose nothing.
TEST(AhoCorasick, PortGroupsStayBoundedWithThousandsOfPorts) {
  std::string rules;
  for (int i = 0; i < 1500; ++i)
    rules += fmt::format("alert tcp any any -> any {} (content:\"port{}x\"; sid:{};)\n", 2000 + i, i, i + 1);
  for (int i = 0; i < 1000; ++i)
    rules += fmt::format("alert tcp any any -> any any (content:\"any{}x\"; sid:{};)\n", i, 10000 + i);
  RuleSet set;
  std::string err;
  ASSERT_TRUE(set.load_text(rules, "many.rules", Vars(), true, err)) << err;
  Engine e;
  ASSERT_TRUE(e.build(set.rules(), EngineKind::Builtin, err)) << err;
  const Database& d = *e.database();
  EXPECT_LE(d.port_groups().sets.size(), 512u);
  EXPECT_TRUE(d.port_groups().by_port[0][1].empty()) << "1,501 destination-port sets: past the bound";
  std::vector<uint32_t> got;
  for (uint16_t dport : {uint16_t(2000), uint16_t(2700), uint16_t(3499), uint16_t(80), uint16_t(3500)}) {
    std::string text = fmt::format("port{}x any7x port5x any999x", dport - 2000);
    PacketInfo p;
    p.proto = 6, p.has_ports = true, p.sport = 40000, p.dport = dport;
    p.payload = reinterpret_cast<const uint8_t*>(text.data());
    p.plen = uint32_t(text.size());
    std::vector<uint32_t> want = every_rule(d.rules(), p);
    e.match(p, got);
    EXPECT_EQ(got, want) << "dport " << dport;
    EXPECT_GE(want.size(), 2u);
  }
}

// Transaction rules are tried only when their buffer holds their fast
// pattern (Database::tx_candidates): against every tx rule tried on every
// transaction, none that matches is left out, and most that cannot are.
TEST(AhoCorasick, TxPrefilterLosesNoTransactionRule) {
  std::mt19937 rng(12);
  const char* bufs[] = {"http.uri", "http.host", "http.user_agent", "http.request_header", "file.data", "http.method"};
  const char* words[] = {"admin", "Login", "wp-", "x.php", "curl", "GET", "evil.example"};
  std::string rules;
  for (int i = 0; i < 300; ++i) {
    std::string opts;
    for (int k = 0, n = 1 + int(rng() % 3); k < n; ++k) {
      opts += fmt::format("{}; ", bufs[rng() % std::size(bufs)]);
      if (rng() % 8 == 0) opts += "to_lowercase; ";
      if (rng() % 10 == 0) opts += "absent: or_else; ";
      opts += fmt::format("content:\"{}\"; {}", words[rng() % std::size(words)],
                          rng() % 3 == 0   ? "nocase; "
                          : rng() % 5 == 0 ? "fast_pattern; "
                                           : "");
    }
    if (rng() % 10 == 0) opts = "http.uri; content:!\"zzz\"; ";
    rules += fmt::format("alert http any any -> any any ({}sid:{};)\n", opts, i + 1);
  }
  RuleSet set;
  std::string err;
  ASSERT_TRUE(set.load_text(rules, "tx.rules", Vars(), false, err)) << err;
  Engine e;
  ASSERT_TRUE(e.build(set.rules(), EngineKind::Builtin, err)) << err;
  const Database& db = *e.database();
  ASSERT_GT(db.tx_rules().size(), 250u);
  EXPECT_GT(db.tx_prefiltered(), db.tx_rules().size() / 2);
  PacketInfo p;
  p.proto = 6, p.has_ports = true, p.sport = 40000, p.dport = 80, p.app = kAppHttp, p.app_known = true;
  std::vector<uint32_t> cands;
  size_t matched = 0, tried = 0;
  for (int t = 0; t < 300; ++t) {
    auto text = [&] {
      std::string v = random_text(rng, rng() % 30, "abcxyz/.-");
      if (rng() % 2) v.insert(rng() % (v.size() + 1), words[rng() % std::size(words)]);
      if (rng() % 4 == 0)
        for (char& c : v) c = char(std::toupper(uint8_t(c)));
      return v;
    };
    std::string uri = text(), host = text(), ua = text(), body = text(), method = rng() % 2 ? "GET" : "POST";
    std::vector<std::string> headers = {text(), text()};
    TxBuffers b;
    b.set(Buf::HttpUri, uri);
    if (rng() % 4) b.set(Buf::HttpHost, host);
    b.set(Buf::HttpUserAgent, ua);
    b.set_many(Buf::HttpRequestHeader, headers);
    b.set(Buf::HttpRequestBody, body);
    b.set(Buf::HttpResponseBody, body);
    b.set(Buf::HttpMethod, method);
    db.tx_candidates(b, cands);
    ASSERT_TRUE(std::is_sorted(cands.begin(), cands.end()));
    tried += cands.size();
    for (uint32_t r : db.tx_rules()) {
      if (!tx_matches(db.rules()[r], b, p)) continue;
      ++matched;
      ASSERT_TRUE(std::binary_search(cands.begin(), cands.end(), r))
          << "transaction " << t << ": sid " << db.rules()[r].sid << " matches but was not a candidate";
    }
  }
  EXPECT_GT(matched, 100u) << "the transactions match rules: the comparison means something";
  EXPECT_LT(tried, 300 * db.tx_rules().size() / 2) << "the prefilter leaves most rules untried";
}

// ENGINE auto: both prefilters timed at load, the faster kept; the two
// agree on every verdict (EnginesAgreeWithANaiveSearchOnRuleSets), so the
// choice changes only the speed.
TEST(AhoCorasick, AutoEnginePicksByMeasurement) {
  if (!have_hyperscan()) GTEST_SKIP() << "no Hyperscan: auto is the built-in engine";
  std::string rules;
  for (int i = 0; i < 200; ++i)
    rules += fmt::format("alert tcp any any -> any any (content:\"pat{}x\"; sid:{};)\n", i, i + 1);
  RuleSet set;
  std::string err;
  ASSERT_TRUE(set.load_text(rules, "auto.rules", Vars(), true, err)) << err;
  Database db;
  ASSERT_TRUE(db.build(set.rules(), EngineKind::Hyperscan, err)) << err;
  EngineKind k = db.pick_faster();
  EXPECT_EQ(k, db.kind());
  const uint64_t* t = db.scan_ns_per_kib();
  ASSERT_GT(t[0], 0u);
  ASSERT_GT(t[1], 0u);
  EXPECT_EQ(k, t[0] < t[1] ? EngineKind::Builtin : EngineKind::Hyperscan);
  std::string dir = test::tmpdir(), rf = dir + "/auto.rules";
  std::ofstream(rf) << rules;
  auto r = test::run(fmt::format("Idle -> i :: IDSMatcher(RULES {}, QUIET true) -> Discard;", rf));
  ASSERT_TRUE(r->ok) << r->errors;
  std::string engine = r->h("i.engine");
  EXPECT_NE(engine.find("auto: built-in"), std::string::npos) << engine;
  test::finish(*r);
  EXPECT_FALSE(test::run(fmt::format("Idle -> IDSMatcher(RULES {}, ENGINE fastest) -> Discard;", rf))->ok);
}

TEST(RuleSemantics, ContentsAndTheirPositions) {
  EXPECT_TRUE(payload("content:\"abc\";", "xxabcxx"));
  EXPECT_FALSE(payload("content:\"ABC\";", "xxabcxx")) << "case matters without nocase";
  EXPECT_TRUE(payload("content:\"ABC\"; nocase;", "xxabcxx"));
  EXPECT_TRUE(payload("content:\"|41 42|C\";", "zABCz")) << "hex bytes";
  EXPECT_TRUE(payload("content:\"|41|b\"; nocase;", "zaBz")) << "nocase with hex";
  EXPECT_TRUE(payload("content:\"a\\;b\";", "a;b")) << "escaped semicolon";
  EXPECT_TRUE(payload("content:\"q\\\"t\";", "q\"t")) << "escaped quote";
  // offset/depth: from the payload's start
  EXPECT_TRUE(payload("content:\"abc\"; offset:2;", "xxabc"));
  EXPECT_FALSE(payload("content:\"abc\"; offset:3;", "xxabc"));
  EXPECT_TRUE(payload("content:\"abc\"; depth:5;", "xxabc"));
  EXPECT_FALSE(payload("content:\"abc\"; depth:4;", "xxabc"));
  EXPECT_TRUE(payload("content:\"abc\"; offset:2; depth:3;", "xxabcabc"));
  EXPECT_FALSE(payload("content:\"abc\"; depth:10;", "ab")) << "depth beyond the payload";
  // distance/within: from the end of the previous match
  EXPECT_TRUE(payload("content:\"hello\"; content:\"world\"; distance:4; within:5;", "hello1234world"));
  EXPECT_FALSE(payload("content:\"hello\"; content:\"world\"; distance:4; within:5;", "hello123world"));
  EXPECT_FALSE(payload("content:\"hello\"; content:\"world\"; distance:4; within:5;", "hello12345world"));
  EXPECT_TRUE(payload("content:\"foo\"; content:\"bar\"; within:10;", "foo1234567bar"));
  EXPECT_FALSE(payload("content:\"foo\"; content:\"bar\"; within:10;", "foo12345678bar"));
  EXPECT_TRUE(payload("content:\"ab\"; content:\"b\"; distance:-1;", "ab")) << "negative distance";
  EXPECT_FALSE(payload("content:\"bar\"; content:\"foo\"; distance:0;", "foobar")) << "relative: after, not before";
  // backtracking: the first 'a=' does not have 'b' right after, the second does
  EXPECT_TRUE(payload("content:\"a=\"; content:\"b\"; within:1;", "a=x a=b"));
  // negation
  EXPECT_TRUE(payload("content:\"abc\"; content:!\"xyz\";", "abc"));
  EXPECT_FALSE(payload("content:\"abc\"; content:!\"xyz\";", "abcxyz"));
  EXPECT_TRUE(payload("content:\"abc\"; content:!\"xyz\"; within:3;", "abc...xyz")) << "negated in a window";
  EXPECT_TRUE(payload("content:!\"evil\";", "")) << "only a negated content, empty payload";
  // dsize, through the header check
  Rule r = parse("alert udp any any -> any any (dsize:>3; content:\"a\"; sid:9;)");
  PacketInfo p;
  p.proto = 17, p.has_ports = true;
  std::string d = "aaaa";
  p.payload = reinterpret_cast<const uint8_t*>(d.data());
  p.plen = 4;
  EXPECT_TRUE(header_matches(r, p));
  p.plen = 3;
  EXPECT_FALSE(header_matches(r, p));
  Rule r2 = parse("alert udp any any -> any any (dsize:2<>5; sid:9;)");
  p.plen = 2;
  EXPECT_FALSE(header_matches(r2, p)) << "<> is exclusive";
  p.plen = 4;
  EXPECT_TRUE(header_matches(r2, p));
}

TEST(RuleSemantics, Pcre) {
  if (!have_pcre()) GTEST_SKIP() << "built without PCRE2";
  EXPECT_TRUE(payload("pcre:\"/ab+c/\";", "xabbbc"));
  EXPECT_FALSE(payload("pcre:\"/ABC/\";", "abc"));
  EXPECT_TRUE(payload("pcre:\"/ABC/i\";", "abc"));
  EXPECT_TRUE(payload("pcre:\"/^GET/\";", "GET /"));
  EXPECT_FALSE(payload("pcre:\"/^GET/\";", " GET /"));
  EXPECT_TRUE(payload("pcre:\"/a.b/s\";", "a\nb"));
  EXPECT_FALSE(payload("pcre:\"/a.b/\";", "a\nb"));
  EXPECT_TRUE(payload("pcre:\"/^b/m\";", "a\nb"));
  EXPECT_TRUE(payload("content:\"user\"; pcre:\"/^\\s*root/R\";", "user   root")) << "relative to the content";
  EXPECT_FALSE(payload("content:\"user\"; pcre:\"/^\\s*root/R\";", "root user x"));
  EXPECT_TRUE(payload("content:\"x\"; pcre:!\"/evil/\";", "x good"));
  EXPECT_FALSE(payload("content:\"x\"; pcre:!\"/evil/\";", "x evil"));
  EXPECT_TRUE(payload("pcre:\"/a{2,3}b/\";", "caaab"));
}

// pcre captures (Suricata's): named groups pkt_/flow_/alert_NAME, or the
// groups in order after the flags; a relative pcre's groups are those of
// its match on the rule's path.
TEST(RuleSemantics, PcreCapturesGroupsIntoVariables) {
  if (!have_pcre()) GTEST_SKIP() << "built without PCRE2";
  Rule r = parse(
      "alert ip any any -> any any (pcre:\"/uid=(\\d+)\\(([^)]+)\\)/, pkt:uid, flow:user\"; "
      "content:\"gid=\"; pcre:\"/^(?P<alert_gid>\\d+) (?P<other>x)?/R\"; sid:1;)");
  ASSERT_EQ(r.items.size(), 3u);
  EXPECT_TRUE(r.captures);
  ASSERT_EQ(r.items[0].pcre.captures.size(), 2u);
  EXPECT_EQ(r.items[0].pcre.flags, "");
  std::string data = "gid=7 uid=0(root) gid=42 end";
  PacketInfo p;
  p.payload = reinterpret_cast<const uint8_t*>(data.data()), p.plen = uint32_t(data.size());
  ASSERT_TRUE(payload_matches(r, p.payload, p.plen));
  std::vector<Captured> got;
  rule_captures(r, nullptr, p, got);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].scope, PcreCapture::Pkt);
  EXPECT_EQ(got[0].name, "uid");
  EXPECT_EQ(got[0].value, "0");
  EXPECT_EQ(got[1].scope, PcreCapture::Flow);
  EXPECT_EQ(got[1].value, "root");
  EXPECT_EQ(got[2].scope, PcreCapture::Alert);
  EXPECT_EQ(got[2].name, "gid");
  EXPECT_EQ(got[2].value, "7") << "the first gid= the rule matched after";
  Rule bad;
  std::string err;
  EXPECT_FALSE(parse_rule("alert ip any any -> any any (pcre:\"/(a)/, var:x\"; sid:2;)", Vars(), bad, err));
  EXPECT_NE(err.find("pkt:NAME"), std::string::npos) << err;
  EXPECT_FALSE(parse_rule("alert ip any any -> any any (pcre:\"/(a)/, pkt:x, pkt:y\"; sid:3;)", Vars(), bad, err));
  EXPECT_NE(err.find("has 1"), std::string::npos) << err;
  EXPECT_FALSE(parse_rule("alert ip any any -> any any (pcre:!\"/(?P<pkt_x>a)/\"; sid:4;)", Vars(), bad, err));
  // more groups than are kept: the first ones still captured
  Rule many = parse(
      "alert ip any any -> any any (pcre:\"/(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)(m)(n)(o)(p)(q)/, pkt:first\"; "
      "sid:5;)");
  std::string abc = "abcdefghijklmnopq";
  PacketInfo q;
  q.payload = reinterpret_cast<const uint8_t*>(abc.data()), q.plen = uint32_t(abc.size());
  got.clear();
  rule_captures(many, nullptr, q, got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].value, "a");
}

TEST(RuleSemantics, HeadersVariablesListsAndDirection) {
  Vars v;
  std::string err;
  ASSERT_TRUE(v.load_text(R"(%YAML 1.1
---
vars:
  address-groups:
    HOME_NET: "[10.0.0.0/8,192.168.0.0/16]"
    EXTERNAL_NET: "!$HOME_NET"
  port-groups:
    HTTP_PORTS: "[80,8000:8080]"
portvar SHELLCODE_PORTS !80
ipvar DNS_SERVERS [10.0.0.53, 2001:db8::53]
)",
                          "vars.yaml", err))
      << err;
  auto pkt = [](const char* s, uint16_t sp, const char* d, uint16_t dp) {
    PacketInfo p;
    IPv4Addr a, b;
    IPv6Addr a6, b6;
    if (parse_ipv4(s, a) && parse_ipv4(d, b)) {
      std::memcpy(p.src.b, a.b.data(), 4), std::memcpy(p.dst.b, b.b.data(), 4);
    } else {
      EXPECT_TRUE(parse_ipv6(s, a6) && parse_ipv6(d, b6));
      p.src.v6 = p.dst.v6 = true;
      std::memcpy(p.src.b, a6.b.data(), 16), std::memcpy(p.dst.b, b6.b.data(), 16);
    }
    p.proto = 6, p.has_ports = true, p.sport = sp, p.dport = dp;
    return p;
  };
  Rule r = parse("alert tcp $EXTERNAL_NET any -> $HOME_NET $HTTP_PORTS (sid:1;)", v);
  EXPECT_TRUE(header_matches(r, pkt("8.8.8.8", 1234, "10.1.2.3", 80)));
  EXPECT_TRUE(header_matches(r, pkt("8.8.8.8", 1234, "192.168.1.1", 8080)));
  EXPECT_FALSE(header_matches(r, pkt("8.8.8.8", 1234, "192.168.1.1", 8081)));
  EXPECT_FALSE(header_matches(r, pkt("10.9.9.9", 1234, "10.1.2.3", 80))) << "source is not external";
  EXPECT_FALSE(header_matches(r, pkt("10.1.2.3", 80, "8.8.8.8", 1234))) << "-> is one way";
  Rule bi = parse("alert tcp $EXTERNAL_NET any <> $HOME_NET $HTTP_PORTS (sid:2;)", v);
  EXPECT_TRUE(header_matches(bi, pkt("10.1.2.3", 80, "8.8.8.8", 1234))) << "<> both ways";
  Rule ex = parse("alert tcp any $SHELLCODE_PORTS -> [10.0.0.0/8,!10.0.0.0/24] [1:1023,!22] (sid:3;)", v);
  EXPECT_TRUE(header_matches(ex, pkt("1.1.1.1", 81, "10.1.0.1", 21)));
  EXPECT_FALSE(header_matches(ex, pkt("1.1.1.1", 80, "10.1.0.1", 21))) << "!80 source port";
  EXPECT_FALSE(header_matches(ex, pkt("1.1.1.1", 81, "10.0.0.1", 21))) << "excluded /24";
  EXPECT_FALSE(header_matches(ex, pkt("1.1.1.1", 81, "10.1.0.1", 22))) << "excluded port";
  EXPECT_FALSE(header_matches(ex, pkt("1.1.1.1", 81, "10.1.0.1", 2000))) << "outside 1:1023";
  Rule dns = parse("alert tcp any any -> $DNS_SERVERS 53 (sid:4;)", v);
  EXPECT_TRUE(header_matches(dns, pkt("2001:db8::1", 5000, "2001:db8::53", 53)));
  EXPECT_FALSE(header_matches(dns, pkt("2001:db8::1", 5000, "2001:db8::54", 53)));
  EXPECT_TRUE(header_matches(dns, pkt("1.2.3.4", 5000, "10.0.0.53", 53)));
  Rule full = parse("alert tcp any 0: -> any 0:65535 (sid:5;)");
  EXPECT_TRUE(header_matches(full, pkt("1.2.3.4", 0, "5.6.7.8", 65535)));
  PacketInfo u = pkt("1.2.3.4", 1, "5.6.7.8", 2);
  u.proto = 17;
  EXPECT_FALSE(header_matches(full, u)) << "a tcp rule does not match UDP";
  Rule ip = parse("alert ip any any -> any any (sid:6;)");
  EXPECT_TRUE(header_matches(ip, u));
}

TEST(RuleErrors, EachBadRuleSaysWhereAndWhy) {
  struct Bad {
    const char* rule;
    const char* says;
  } bad[] = {
      {"alert tcp any any -> any any (content:\"a\";)", "no sid"},
      {"alert tcp any any any any (sid:1;)", "6 fields"},
      {"bogus tcp any any -> any any (sid:1;)", "unknown action"},
      {"alert smb any any -> any any (sid:1;)", "protocol 'smb'"},
      {"alert tcp $NOPE any -> any any (sid:1;)", "undefined variable $NOPE"},
      {"alert tcp 10.0.0.0/33 any -> any any (sid:1;)", "bad prefix length"},
      {"alert tcp any 70000 -> any any (sid:1;)", "not a port"},
      {"alert tcp any any <- any any (sid:1;)", "direction"},
      {"alert tcp any any -> any any (content:\"a\"; sid:1)", "not terminated"},
      {"alert tcp any any -> any any (content:\"|4|\"; sid:1;)", "odd number of hex"},
      {"alert tcp any any -> any any (content:\"|41\"; sid:1;)", "unterminated |hex|"},
      {"alert tcp any any -> any any (nocase; sid:1;)", "needs a content"},
      {"alert tcp any any -> any any (content:\"abc\"; depth:2; sid:1;)", "shorter than its content"},
      {"alert tcp any any -> any any (content:\"a\"; http.header_names.raw; sid:1;)", "application-layer buffer"},
      {"alert tcp any any -> any any (content:\"a\"; http_uri; content:\"b\"; distance:0; sid:1;)",
       "a relative content in pkt_data follows an item in http.uri"},
      {"alert tcp any any -> any any (flow:to_server,to_client; sid:1;)", "never match"},
      {"alert tcp any any -> any any (flow:only_stream; sid:1;)", "no content or pcre to look for in the stream"},
      {"alert udp any any -> any any (flow:only_stream; content:\"a\"; sid:1;)", "streams are TCP's"},
      {"alert tcp-stream any any -> any any (content:\"a\"; dsize:>3; sid:1;)", "dsize is a packet's size"},
      {"alert tcp-stream any any -> any any (http.uri; content:\"a\"; sid:1;)", "not other buffers"},
      {"alert tcp any any -> any any (flow:only_stream,no_stream; content:\"a\"; sid:1;)", "never match"},
      {"alert tcp any any -> any any (flowbits:maybe,x; sid:1;)", "flowbits: 'maybe'"},
      {"alert tcp any any -> any any (flowbits:set,a|b; sid:1;)", "not '|'"},
      {"alert tcp any any -> any any (flags:SX; sid:1;)", "unknown flag 'X'"},
      {"alert tcp any any -> any any (itype:>x; sid:1;)", "bad itype"},
      {"alert tcp any any -> any any (urilen:5,odd; sid:1;)", "urilen: 'odd'"},
      {"alert tcp any any -> any any (byte_test:4,>,1,0,dce; sid:1;)", "DCE/RPC parser"},
      {"alert tcp any any -> any any (byte_test:4,~,1,0; sid:1;)", "bad operator"},
      {"alert tcp any any -> any any (asn1:oversize_length 100; sid:1;)", "option 'asn1' is not supported"},
      {"alert tcp any any -> any any (content:\"a\"; offset:x; sid:1;)", "not a number"},
      {"alert tcp any any -> any any (pcre:\"/a(/\"; sid:1;)", "does not compile"},
      {"alert tcp any any -> any any (pcre:\"/a/Z\"; sid:1;)", "flag 'Z'"},
      {"alert tcp any any -> any any (dsize:a<>b; sid:1;)", "bad dsize"},
      {"alert tcp [1.2.3.4 any -> any any (sid:1;)", "unterminated address or port list"},
  };
  std::string text;
  for (auto& b : bad) text += std::string(b.rule) + "\n";
  text += "alert tcp any any -> any any (content:\"ok\"; sid:77;)\n";
  RuleSet set;
  std::string err;
  ASSERT_TRUE(set.load_text(text, "bad.rules", Vars(), false, err)) << err;
  ASSERT_EQ(set.rules().size(), 1u);
  EXPECT_EQ(set.rules()[0].sid, 77u);
  ASSERT_EQ(set.problems().size(), std::size(bad));
  for (size_t i = 0; i < std::size(bad); ++i) {
    std::string s = set.problems()[i].str();
    if (!have_pcre() && std::string(bad[i].rule).find("pcre") != std::string::npos) continue;
    EXPECT_EQ(s.rfind(fmt::format("bad.rules:{}: ", i + 1), 0), 0u) << s;
    EXPECT_NE(s.find(bad[i].says), std::string::npos) << s << "\n  wanted: " << bad[i].says;
    if (set.problems()[i].sid) {
      EXPECT_NE(s.find("sid 1: "), std::string::npos) << s;
    }
  }
  RuleSet strict;
  EXPECT_FALSE(strict.load_text(text, "bad.rules", Vars(), true, err));
  EXPECT_NE(err.find("bad.rules:1: "), std::string::npos) << err;
  // a rule over several lines, and a missing file
  RuleSet cont;
  ASSERT_TRUE(cont.load_text("# c\nalert tcp any any -> any any \\\n  (content:\"x\"; \\\n sid:5;)\n", "c.rules",
                             Vars(), true, err))
      << err;
  ASSERT_EQ(cont.rules().size(), 1u);
  EXPECT_EQ(cont.rules()[0].line, 2);
  RuleSet none;
  EXPECT_FALSE(none.load_file("/nonexistent/x.rules", Vars(), false, err));
  EXPECT_NE(err.find("cannot read"), std::string::npos);
}

TEST(IdsPackets, HostileInputNeverCrashes) {
  std::mt19937 rng(3);
  PacketInfo p;
  std::vector<uint8_t> buf(70000);
  for (int t = 0; t < 20000; ++t) {
    uint32_t n = rng() % 120;
    for (uint32_t i = 0; i < n; ++i) buf[i] = uint8_t(rng());
    if (t % 2) buf[0] = uint8_t((t % 4 == 1 ? 0x40 : 0x60) | (rng() & 0xf));
    if (parse_packet(buf.data(), n, p)) {
      ASSERT_LE(p.payload + p.plen, buf.data() + n);
      ASSERT_GE(p.payload, buf.data());
    }
  }
  // a 64 KiB UDP payload, scanned by both engines
  std::fill(buf.begin(), buf.end(), 'A');
  uint8_t* ip = buf.data();
  ip[0] = 0x45, ip[2] = 0xff, ip[3] = 0xff, ip[6] = ip[7] = 0, ip[9] = 17;
  std::memcpy(ip + 28 + 65000, "needle", 6);
  ASSERT_TRUE(parse_packet(ip, 65535, p));
  EXPECT_EQ(p.plen, 65535u - 28);
  RuleSet set;
  std::string err;
  ASSERT_TRUE(
      set.load_text("alert udp any any -> any any (content:\"needle\"; sid:1;)\n"
                    "alert udp any any -> any any (content:\"AAAA\"; content:\"B\"; distance:0; sid:2;)\n",
                    "x", Vars(), true, err));
  for (EngineKind k : {EngineKind::Builtin, EngineKind::Hyperscan}) {
    if (k == EngineKind::Hyperscan && !have_hyperscan()) continue;
    Engine e;
    ASSERT_TRUE(e.build(set.rules(), k, err)) << err;
    std::vector<uint32_t> hits;
    e.match(p, hits);
    EXPECT_EQ(hits, std::vector<uint32_t>{0}) << "backtracking over 65,000 'AAAA' stays bounded";
  }
}

namespace {
using Bytes = std::vector<uint8_t>;
Bytes frame(const char* src, const char* dst, uint8_t proto, uint16_t sp, uint16_t dp, const std::string& data) {
  Bytes f = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0};
  uint32_t l4 = proto == 6 ? 20 : 8;
  Bytes ip(20 + l4, 0);
  ip[0] = 0x45, ip[8] = 64, ip[9] = proto;
  uint32_t tot = 20 + l4 + uint32_t(data.size());
  ip[2] = uint8_t(tot >> 8), ip[3] = uint8_t(tot);
  IPv4Addr a, b;
  parse_ipv4(src, a), parse_ipv4(dst, b);
  std::memcpy(&ip[12], a.b.data(), 4), std::memcpy(&ip[16], b.b.data(), 4);
  ip[20] = uint8_t(sp >> 8), ip[21] = uint8_t(sp), ip[22] = uint8_t(dp >> 8), ip[23] = uint8_t(dp);
  if (proto == 6) ip[32] = 0x50;
  if (proto == 17) ip[24] = uint8_t((8 + data.size()) >> 8), ip[25] = uint8_t(8 + data.size());  // the UDP length
  f.insert(f.end(), ip.begin(), ip.end());
  f.insert(f.end(), data.begin(), data.end());
  return f;
}
}  // namespace

TEST(IDSMatcher, AlertsGoToFastLogEveAndOutputOne) {
  std::string dir = test::tmpdir();
  std::string rules = dir + "/ids.rules", in = dir + "/ids-in.pcap";
  std::ofstream(rules) << "# test rules\n"
                          "alert tcp $EXTERNAL_NET any -> $HOME_NET 80 (msg:\"GET passwd\"; content:\"GET \"; depth:4; "
                          "content:\"/etc/passwd\"; distance:0; classtype:attempted-recon; sid:1000001; rev:2;)\n"
                          "alert udp any any -> any 53 (msg:\"dns evil\"; content:\"|05|evil|03|com\"; nocase; "
                          "priority:1; sid:1000002; rev:1;)\n"
                          "alert tcp any any -> any any (msg:\"http\"; content:\"x\"; http_uri; sid:1000003;)\n";
  std::ofstream(dir + "/vars.yaml") << "vars:\n  address-groups:\n    HOME_NET: \"[10.0.0.0/8]\"\n"
                                       "    EXTERNAL_NET: \"!$HOME_NET\"\n";
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(in, 1, 65535, true, err)) << err;
    std::vector<Bytes> fs = {
        frame("8.8.8.8", "10.0.0.1", 6, 4000, 80, "GET /etc/passwd HTTP/1.0\r\n"),   // alert 1
        frame("8.8.8.8", "10.0.0.1", 6, 4000, 80, "POST /etc/passwd HTTP/1.0\r\n"),  // GET not at 0
        frame("10.0.0.2", "10.0.0.1", 6, 4000, 80, "GET /etc/passwd HTTP/1.0\r\n"),  // internal source
        frame("1.1.1.1", "9.9.9.9", 17, 999, 53,
              std::string("\x05"
                          "EVIL\x03"
                          "com",
                          9)),  // alert 2
        frame("1.1.1.1", "9.9.9.9", 17, 999, 54,
              std::string("\x05"
                          "evil\x03"
                          "com",
                          9)),  // wrong port
        {1, 2, 3},              // not IP
    };
    for (size_t i = 0; i < fs.size(); ++i)
      w.write(fs[i].data(), uint32_t(fs[i].size()), uint32_t(fs[i].size()), 1700000000000000000ull + i * 1000);
  }
  std::vector<std::string> eves;
  for (const char* engine : {"builtin", "hyperscan"}) {
    if (std::string(engine) == "hyperscan" && !have_hyperscan()) continue;
    std::string fast = dir + "/fast-" + engine + ".log", eve = dir + "/eve-" + engine + ".json";
    std::remove(fast.c_str()), std::remove(eve.c_str());
    auto r = test::run(fmt::format(R"(FromDump({}, STOP true) -> ids :: IDSMatcher(RULES {}, VARS {}, ENGINE {},
        FASTLOG {}, EVE {}, QUIET true); ids[0] -> clean :: Counter -> Discard; ids[1] -> alerted :: Counter -> Discard;)",
                                   in, rules, dir + "/vars.yaml", engine, fast, eve));
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("ids.rules"), 2u);
    EXPECT_EQ(r->n("ids.skipped"), 1u);
    EXPECT_NE(r->h("ids.problems")
                  .find("ids.rules:4: sid 1000003: flow, flowbits, streams and application protocols need flow "
                        "tracking"),
              std::string::npos)
        << r->h("ids.problems");
    EXPECT_EQ(r->n("ids.alerts"), 2u);
    EXPECT_EQ(r->n("alerted.count"), 2u);
    EXPECT_EQ(r->n("clean.count"), 4u);
    EXPECT_EQ(r->n("ids.uninspected"), 1u);
    test::finish(*r);
    std::ifstream f(fast);
    std::string l1, l2, l3;
    std::getline(f, l1), std::getline(f, l2);
    EXPECT_FALSE(std::getline(f, l3));
    EXPECT_EQ(
        l1,
        "11/14/2023-22:13:20.000000  [**] [1:1000001:2] GET passwd [**] [Classification: Attempted Information Leak] "
        "[Priority: 2] {TCP} 8.8.8.8:4000 -> 10.0.0.1:80");
    EXPECT_EQ(l2,
              "11/14/2023-22:13:20.000003  [**] [1:1000002:1] dns evil [**] [Classification: (null)] "
              "[Priority: 1] {UDP} 1.1.1.1:999 -> 9.9.9.9:53");
    std::ifstream e(eve);
    std::string line, all;
    int n = 0, stats = 0;
    while (std::getline(e, line)) {
      auto j = nlohmann::json::parse(line);
      if (j["event_type"] == "stats") {  // the run's counters, once, at the end (Suricata's)
        ++stats;
        EXPECT_EQ(j["stats"]["decoder"]["pkts"], 6) << line;
        EXPECT_EQ(j["stats"]["decoder"]["invalid"], 1) << line;
        EXPECT_EQ(j["stats"]["decoder"]["tcp"], 3) << line;
        EXPECT_EQ(j["stats"]["detect"]["alert"], 2) << line;
        EXPECT_FALSE(std::getline(e, line)) << "the stats record is the last";
        break;
      }
      EXPECT_EQ(j["event_type"], "alert");
      EXPECT_TRUE(j["alert"].contains("signature_id"));
      EXPECT_TRUE(j.contains("src_port"));
      ++n;
      all += line + "\n";
    }
    EXPECT_EQ(n, 2);
    EXPECT_EQ(stats, 1);
    auto j = nlohmann::json::parse(all.substr(0, all.find('\n')));
    EXPECT_EQ(j["timestamp"], "2023-11-14T22:13:20.000000+0000");
    EXPECT_EQ(j["alert"]["signature_id"], 1000001);
    EXPECT_EQ(j["alert"]["signature"], "GET passwd");
    EXPECT_EQ(j["alert"]["category"], "Attempted Information Leak") << "classification.config's description";
    EXPECT_EQ(j["alert"]["severity"], 2);
    EXPECT_EQ(j["dest_port"], 80);
    eves.push_back(all);
  }
  if (eves.size() == 2) {
    EXPECT_EQ(eves[0], eves[1]) << "both engines raise the same alerts";
  }
  auto bad = test::run(
      fmt::format("Idle -> IDSMatcher(RULES {}, VARS {}, STRICT true) -> Discard;", rules, dir + "/vars.yaml"));
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("sid 1000003"), std::string::npos) << bad->errors;
  auto missing = test::run("Idle -> IDSMatcher(RULES /nonexistent.rules) -> Discard;");
  EXPECT_FALSE(missing->ok);
  EXPECT_NE(missing->errors.find("RULES: cannot read '/nonexistent.rules': No such file or directory"),
            std::string::npos)
      << missing->errors;
}

TEST(IDSMatcher, SnortCommunityRulesLoad) {
  std::string dir = std::string(SHOAL_SOURCE_DIR) + "/../shared/data/rules/snort-community";
  if (!std::ifstream(dir + "/community.rules")) GTEST_SKIP() << "../shared/data (Snort community rules) is absent";
  Vars v;
  std::string err;
  ASSERT_TRUE(v.load_file(dir + "/snort.conf", err)) << err;
  RuleSet set;
  ASSERT_TRUE(set.load_file(dir + "/community.rules", v, false, err)) << err;
  EXPECT_GT(set.rules().size(), 20u);
  EXPECT_EQ(set.rules().size() + set.problems().size(), 545u) << "every enabled rule is loaded or reported";
  for (auto& p : set.problems()) EXPECT_GT(p.sid, 0u) << p.str();
  Engine e;
  ASSERT_TRUE(e.build(set.rules(), EngineKind::Builtin, err)) << err;
  // Their pcres through the DFA compiler: refused ones say why; compiled
  // ones agree with PCRE2 on strings made of the expression's own bytes.
  const Database& db = *e.database();
  EXPECT_EQ(db.regex_compiled() + db.regex_refusals().size(), db.regex_count());
  std::mt19937 rng(3);
  size_t checked = 0;
  for (uint32_t r = 0; r < db.rules().size(); ++r) {  // the database's order (Suricata's action order)
    size_t k = 0;
    for (const Item& it : db.rules()[r].items) {
      if (!it.is_pcre) continue;
      const auto& dfa = db.regex_dfas(r)[k++];
      if (!dfa) continue;
      std::string bytes = it.pcre.pattern + "\r\n \t";
      for (int t = 0; t < 200; ++t) {
        std::string s;
        for (size_t n = rng() % 40; n-- > 0;) s.push_back(bytes[rng() % bytes.size()]);
        size_t end;
        bool limit;
        bool want = pcre_match(it.pcre, reinterpret_cast<const uint8_t*>(s.data()), s.size(), 0, end, &limit);
        if (limit) continue;
        ASSERT_EQ(dfa->search(reinterpret_cast<const uint8_t*>(s.data()), s.size()), want)
            << "/" << it.pcre.pattern << "/" << it.pcre.flags << " on " << s;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0u);

  // The whole rule set on payloads made of its rules' contents and pcre
  // bytes (headers opened to any, so the payload options decide): the
  // built-in engine and Hyperscan (pcres answered by the DFA, Hyperscan or
  // PCRE2 as each can) raise exactly what PCRE2 with a naive search does.
  std::vector<Rule> open_rules = set.rules();
  std::erase_if(open_rules, [](const Rule& r) { return r.uses_tx(); });  // those match transactions, not packets
  for (Rule& r : open_rules) {
    r.proto = Proto::IP;
    r.src = r.dst = AddrSet();
    r.src.any = r.dst.any = true;
    r.has_dsize = false;
    r.flow = 0;  // no flow: the payload decides
    r.flowbits.clear();
    r.app = kAppNone;
  }
  std::vector<EngineKind> kinds = {EngineKind::Builtin};
  if (have_hyperscan()) kinds.push_back(EngineKind::Hyperscan);
  for (EngineKind kind : kinds) {
    Engine eng;
    ASSERT_TRUE(eng.build(open_rules, kind, err)) << err;
    const auto& st = eng.database()->pcre_stats();
    EXPECT_GT(st.existence, eng.database()->regex_count() / 3) << "most pcres need only a yes/no";
    if (kind == EngineKind::Hyperscan) {
      EXPECT_GT(st.hyperscan, st.existence * 3 / 4);
    }
    std::mt19937 prng(17);
    size_t alerts = 0;
    for (int t = 0; t < 3000; ++t) {
      std::string s;
      for (int j = 0, rules_in = 1 + int(prng() % 3); j < rules_in; ++j) {
        const Rule& r = open_rules[prng() % open_rules.size()];
        for (const Item& it : r.items) {
          if (it.byte.kind != ByteOp::None) continue;  // byte checks have no bytes of their own
          std::string bytes = it.is_pcre ? it.pcre.pattern : it.content.bytes;
          if (it.is_pcre || prng() % 4 == 0) {  // scrambled
            std::string mixed;
            for (size_t n = prng() % 24; n-- > 0;) mixed.push_back(bytes[prng() % bytes.size()]);
            bytes = mixed;
          }
          s += bytes + (prng() % 2 ? " " : "/");
        }
      }
      PacketInfo p;
      p.payload = reinterpret_cast<const uint8_t*>(s.data());
      p.plen = uint32_t(s.size());
      std::vector<uint32_t> got, want;
      eng.match(p, got);
      for (uint32_t r = 0; r < eng.rules().size(); ++r)  // the engine's (Suricata's) rule order
        if (payload_matches(eng.rules()[r], p.payload, p.plen)) want.push_back(r);
      ASSERT_EQ(got, want) << "engine " << int(kind) << " on " << s;
      alerts += got.size();
    }
    EXPECT_GT(alerts, 500u);
  }
}

TEST(IDSMatcher, TheExamplesRaiseTheirSixAlertsWithEitherEngineAndOffloaded) {
  // examples/ids.click over examples/data/ids-traffic.pcap: one alert per
  // rule, none for the near misses (POST, internal source, union...select
  // too far apart, a small ping); examples/gpu-ids.click the same offloaded.
  std::string root = SHOAL_SOURCE_DIR;
  struct Run {
    const char* file;
    const char* log;
    const char* engine;
  } runs[] = {{"ids.click", "/tmp/shoal-ids-", "builtin"},
              {"ids.click", "/tmp/shoal-ids-", "hyperscan"},
              {"gpu-ids.click", "/tmp/shoal-gpu-ids-", nullptr}};
  for (const Run& run : runs) {
    if (run.engine && std::string(run.engine) == "hyperscan" && !have_hyperscan()) continue;
    std::ifstream f(root + "/examples/" + run.file);
    ASSERT_TRUE(f) << run.file;
    std::string text((std::istreambuf_iterator<char>(f)), {});
    std::string cfg = text,
                log = fmt::format("{}/example-{}-{}-", test::tmpdir(), run.file, run.engine ? run.engine : "");
    auto sub = [&](const std::string& from, const std::string& to) {
      for (size_t p = cfg.find(from); p != std::string::npos; p = cfg.find(from, p + to.size()))
        cfg.replace(p, from.size(), to);
    };
    sub("examples/", root + "/examples/");
    sub(fmt::format("$LOG {}", run.log), "$LOG " + log);
    if (run.engine) sub("$ENGINE hyperscan", std::string("$ENGINE ") + run.engine);
    auto r = test::run(cfg);
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("ids.alerts"), 6u) << run.file;
    EXPECT_EQ(r->n("alerted.count"), 6u) << run.file;
    EXPECT_EQ(r->n("clean.count"), 84u) << run.file;
    if (!run.engine) {
      EXPECT_EQ(r->n("ids.offload_packets"), 90u) << "every packet went through the device chain";
    }
    test::finish(*r);
    std::ifstream eve(log + "eve.json");
    std::vector<uint32_t> sids;
    for (std::string line; std::getline(eve, line);) {
      auto j = nlohmann::json::parse(line);
      if (j["event_type"] == "alert") sids.push_back(j["alert"]["signature_id"]);  // (flow records too)
    }
    EXPECT_EQ(sids, (std::vector<uint32_t>{1000001, 1000002, 1000003, 1000004, 1000005, 1000006})) << run.file;
  }
}

// The offloaded IDSMatcher (NBA's form: the device scans, the host verifies)
// raises exactly the CPU element's alerts, in the same order, and sends the
// same packets to each output: with all or half of the batches on the
// device, with random device delays and injected faults, with packets whose
// payload holds more distinct fast patterns than a device list can carry.
TEST(IDSOffload, DeviceScanGivesTheCpuElementsAlerts) {
  std::mt19937 rng(5);
  std::vector<std::string> words;
  for (int i = 0; i < 400; ++i) {
    std::string w;
    for (size_t n = 3 + rng() % 8; w.size() < n;) w.push_back(char("abcdefghijklmnop/=.%'<>"[rng() % 23]));
    words.push_back(w);
  }
  std::string dir = test::tmpdir(), rules = dir + "/off.rules", in = dir + "/off-in.pcap";
  {
    std::ofstream r(rules);
    for (int i = 0; i < 300; ++i) {
      std::string opts = fmt::format("content:\"{}\";", words[i]);
      if (i % 3 == 0) opts += " nocase;";
      if (i % 5 == 0) opts += fmt::format(" content:\"{}\"; distance:0;", words[(i * 7) % 400]);
      if (i % 11 == 0) opts += fmt::format(" content:!\"{}\";", words[(i * 13) % 400]);
      if (i % 17 == 0) opts += " pcre:\"/[a-d]{2}[^x]/i\";";
      // yes/no pcres: the device answers them after its scan
      static const char* const res[] = {"/[e-h]{3}/", "/^[a-m]/", "!/q[^u]/", "/(o|p){2}\\w/i", "!/z$/", "/\\d/"};
      if (i % 7 == 3) opts += fmt::format(" pcre:\"{}\";", res[(i / 7) % std::size(res)]);
      if (i % 19 == 0) opts += " dsize:>40;";
      r << fmt::format("alert {} any any -> any {} (msg:\"r{}\"; {} sid:{}; rev:1;)\n", i % 4 == 0 ? "udp" : "ip",
                       i % 4 == 0 ? "53" : "any", i, opts, 1000 + i);
    }
    r << "alert ip any any -> any any (msg:\"no fast pattern\"; pcre:\"/^[a-c]{3}/\"; sid:5000;)\n";
  }
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(in, 1, 65535, true, err)) << err;
    for (int i = 0; i < 3000; ++i) {
      std::string data;
      size_t len = i % 50 == 0 ? 1400 : rng() % 300;
      while (data.size() < len) data += rng() % 4 ? std::string(1, char('a' + rng() % 26)) : words[rng() % 400];
      if (i % 97 == 0) data = "";
      Bytes f = frame("10.0.0.1", "10.0.0.2", i % 2 ? 6 : 17, 1000, i % 3 ? 53 : 80, data);
      if (i % 101 == 0) f.resize(f.size() / 2);  // truncated capture
      if (i % 103 == 0) f = {1, 2, 3};           // not IP
      w.write(f.data(), uint32_t(f.size()), uint32_t(f.size()), 1700000000000000000ull + uint64_t(i) * 1000);
    }
  }
  auto cfg = [&](const std::string& tag, const std::string& bal, const std::string& chunk = "128") {
    return fmt::format(R"(FromDump({}, STOP true) -> {} ids :: IDSMatcher(RULES {}, ENGINE builtin, FASTLOG {}/{}.log,
        QUIET true, SCAN_CHUNK {}); ids[0] -> ToDump({}/{}-0.pcap); ids[1] -> ToDump({}/{}-1.pcap);)",
                       in, bal, rules, dir, tag, chunk, dir, tag, dir, tag);
  };
  auto slurp = [](const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  auto cpu = test::run(cfg("cpu", ""));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  uint64_t alerts = cpu->n("ids.alerts");
  test::finish(*cpu);
  std::string want = slurp(dir + "/cpu.log");
  EXPECT_GT(alerts, 1000u);
  ASSERT_EQ(size_t(std::count(want.begin(), want.end(), '\n')), alerts);
  struct Variant {
    double faults;
    const char *frac, *chunk;
  };
  // SCAN_CHUNK: the default (128: the 1400-byte payloads are scanned in
  // chunks), one thread per packet, and chunks of 7 bytes (shorter than
  // some patterns: the overlap carries them)
  for (Variant v : {Variant{0, "1", "128"}, Variant{0, "0.5", "128"}, Variant{0.3, "1", "128"},
                    Variant{0.3, "0.5", "128"}, Variant{0, "1", "0"}, Variant{0, "1", "7"}}) {
    double faults = v.faults;
    test::Options o = test::default_options();
    o.offload.device.delay_us = 30;
    o.offload.device.fault_rate = faults;
    o.offload.inflight = 4;
    std::string tag = fmt::format("off-{}-{}-{}", v.frac, faults, v.chunk);
    std::remove(fmt::format("{}/{}.log", dir, tag).c_str());
    auto off = test::run_with(cfg(tag, fmt::format("OffloadBalancer({}) ->", v.frac), v.chunk), o);
    ASSERT_TRUE(off->ok) << off->errors;
    EXPECT_GT(off->n("ids.offload_packets"), 0u);
    if (faults == 0) {
      if (std::string(v.chunk) == "0")
        EXPECT_EQ(off->n("ids.device_chunked"), 0u);
      else
        EXPECT_GT(off->n("ids.device_chunked"), 0u) << "aggregates with long payloads were scanned in chunks";
    }
    EXPECT_GT(off->n("ids.device_overflows"), 0u) << "some payloads hold over 15 distinct fast patterns";
    EXPECT_GT(off->n("ids.device_regex"), 200u) << "the device answered candidates' pcres";
    if (std::string(v.frac) == "0.5") {  // CPU batches behind aggregates in flight: the CPU's scan, at their turn
      EXPECT_GT(off->n("ids.offload_host_direct"), 0u);
    }
    EXPECT_EQ(off->n("ids.alerts"), alerts);
    EXPECT_EQ(off->n("ids.inspected"), cpu->n("ids.inspected"));
    EXPECT_EQ(off->n("ids.uninspected"), cpu->n("ids.uninspected"));
    test::finish(*off, false, faults > 0);
    EXPECT_EQ(slurp(fmt::format("{}/{}.log", dir, tag)), want) << tag;
    for (int port = 0; port < 2; ++port) {
      auto a = test::read_pcap(fmt::format("{}/cpu-{}.pcap", dir, port));
      auto b = test::read_pcap(fmt::format("{}/{}-{}.pcap", dir, tag, port));
      ASSERT_EQ(a.size(), b.size()) << tag << " output " << port;
      for (size_t j = 0; j < a.size(); ++j) ASSERT_EQ(a[j].bytes, b[j].bytes) << tag << " output " << port;
    }
  }
}

TEST(PcreVerification, DeviceAnswersGiveTheCpuPathsAlerts) {
  // Offloaded, the device scans for the fast patterns and then runs the
  // candidate rules' yes/no pcres as DFAs (k::ids_regex over the
  // database's device tables); the host verifies with those answers. Every
  // answer must be the DFA's own, and verification with them must raise
  // exactly the alerts of the CPU's path, where Hyperscan answers those
  // pcres (ENGINE hyperscan; the DFA answers them with the built-in engine,
  // and the test above checks both against PCRE2).
  if (!have_pcre()) GTEST_SKIP() << "no PCRE2 in this build";
  std::mt19937 rng(11);
  std::vector<Rule> rules;
  const char* shapes[] = {
      "content:\"{2}\"; pcre:\"/{0}/{1}\";",                             // yes/no: the device answers
      "pcre:!\"/{0}/{1}\"; content:\"{2}\";",                            // negated yes/no
      "content:\"{2}\"; pcre:\"/{0}/{1}\"; pcre:\"/{3}/\";",             // two of them
      "pcre:\"/{0}/{1}\"; content:\"{2}\"; distance:0;",                 // its end needed: PCRE2 on the host
      "content:\"{2}\"; pcre:\"/{0}/{1}\"; content:\"1\"; distance:0;",  // the same
  };
  const char* fast[] = {"a", "b", "c", "ab", "1", "_ ", "B"};
  while (rules.size() < 400) {
    shoal::test::RegexGen g{rng};
    std::string e = g.expr(), e2 = g.expr(), flags;
    for (char f : std::string("ismE"))
      if (rng() % 4 == 0) flags.push_back(f);
    std::string opts =
        fmt::format(fmt::runtime(shapes[rng() % std::size(shapes)]), e, flags, fast[rng() % std::size(fast)], e2);
    Rule r;
    std::string err;
    if (parse_rule(fmt::format("alert ip any any -> any any ({} sid:{};)", opts, rules.size() + 1), Vars(), r, err))
      rules.push_back(std::move(r));
  }
  std::vector<EngineKind> kinds = {EngineKind::Builtin};
  if (have_hyperscan()) kinds.push_back(EngineKind::Hyperscan);
  for (EngineKind kind : kinds) {
    Engine eng;
    std::string err;
    ASSERT_TRUE(eng.build(rules, kind, err)) << err;
    const Database& db = *eng.database();
    const Database::DeviceRegex& rx = db.device_regex();
    ASSERT_FALSE(rx.empty());
    ASSERT_EQ(rx.pat_off.size(), db.patterns().size() + 1);
    k::IdsRegexTables t;
    t.npatterns = uint32_t(db.patterns().size());
    t.pat_off = rx.pat_off.data(), t.pat_slots = rx.pat_slots.data();
    t.set = {uint32_t(rx.hdr.size()), rx.hdr.data(), rx.blob.data()};
    std::mt19937 prng(9);
    size_t alerts = 0, answers = 0, matched = 0, full = 0;
    for (int n = 0; n < 800; ++n) {
      std::string s;
      for (size_t len = prng() % 40; len-- > 0;) s.push_back("abcAB1_ -\n."[prng() % 11]);
      const auto* d = reinterpret_cast<const uint8_t*>(s.data());
      k::IdsScanOut found{};
      k::ids_scan(eng.automaton().view(), d, uint32_t(s.size()), found);
      k::IdsRegexOut out{};
      k::ids_regex(t, d, uint32_t(s.size()), found, out);
      ASSERT_LE(out.count, k::kRegexAnswers);
      full += out.count == k::kRegexAnswers;
      for (uint32_t j = 0; j < out.count; ++j) {
        uint32_t slot = out.slot[j] & ~k::kRegexMatched;
        ASSERT_LT(slot, db.slots());
        ASSERT_NE(db.slot_dfa(slot), nullptr);
        bool yes = (out.slot[j] & k::kRegexMatched) != 0;
        ASSERT_EQ(yes, db.slot_dfa(slot)->search(d, s.size())) << "slot " << slot << " on \"" << s << "\"";
        matched += yes;
      }
      answers += out.count;
      PacketInfo p;
      p.payload = d;
      p.plen = uint32_t(s.size());
      std::vector<uint32_t> got, want;
      if (found.count > k::kIdsFound)
        eng.match(p, got);
      else
        eng.match_found(p, found.ids, found.count, got, out.slot, out.count);
      eng.match(p, want);
      ASSERT_EQ(got, want) << "payload \"" << s << "\" engine " << int(kind);
      alerts += got.size();
    }
    EXPECT_GT(answers, 4000u) << "the device answered most candidates' pcres";
    EXPECT_GT(matched, 500u);
    EXPECT_GT(answers - matched, 500u);
    EXPECT_GT(full, 10u) << "some packets had more expressions than the list holds (the host answers the rest)";
    EXPECT_GT(alerts, 500u) << "the payloads make the rules fire";
  }
}

TEST(PcreVerification, HyperscanAndTheDfaAnswerAsPcre2Would) {
  // Rules whose pcres only need a yes/no are answered by Hyperscan or the
  // DFA (and, without fast pattern, prefiltered by Hyperscan); the others
  // by PCRE2. Both engines must raise exactly the alerts of PCRE2 alone.
  if (!have_pcre()) GTEST_SKIP() << "no PCRE2 in this build";
  std::mt19937 rng(5);
  std::vector<Rule> rules;
  const char* shapes[] = {
      "pcre:\"/{0}/{1}\";",                                                 // no fast pattern: prefiltered
      "content:\"a\"; pcre:\"/{0}/{1}\";",                                  // yes/no
      "pcre:\"/{0}/{1}\"; content:\"b\"; distance:0;",                      // its end needed: PCRE2
      "content:\"1\"; pcre:\"/{0}/{1}R\";",                                 // relative: PCRE2
      "pcre:!\"/{0}/{1}\"; content:\"c\";",                                 // negated yes/no
      "pcre:\"/{0}/{1}\"; pcre:!\"/b{{2}}/\"; content:\"a\"; distance:0;",  // end read past a negation
  };
  while (rules.size() < 400) {
    shoal::test::RegexGen g{rng};
    std::string e = g.expr(), flags;
    for (char f : std::string("ismxEG"))
      if (rng() % 4 == 0) flags.push_back(f);
    if (rng() % 8 == 0) flags.push_back('A');
    std::string opts = fmt::format(fmt::runtime(shapes[rng() % std::size(shapes)]), e, flags);
    Rule r;
    std::string err;
    bool ok =
        parse_rule(fmt::format("alert ip any any -> any any ({} sid:{};)", opts, rules.size() + 1), Vars(), r, err);
    // with x, "a *" leaves a quantifier without an item: PCRE2 says so
    ASSERT_TRUE(ok || flags.find('x') != std::string::npos) << opts << ": " << err;
    if (ok) rules.push_back(std::move(r));
  }
  std::vector<EngineKind> kinds = {EngineKind::Builtin};
  if (have_hyperscan()) kinds.push_back(EngineKind::Hyperscan);
  for (EngineKind kind : kinds) {
    Engine eng;
    std::string err;
    ASSERT_TRUE(eng.build(rules, kind, err)) << err;
    const auto& st = eng.database()->pcre_stats();
    EXPECT_GT(st.existence, 150u);
    if (kind == EngineKind::Hyperscan) {
      EXPECT_GT(st.hyperscan, st.existence * 3 / 4) << "Hyperscan answers most yes/no pcres";
      EXPECT_GT(st.hyperscan + st.dfa, st.existence * 19 / 20) << "the DFA most of the rest";
      EXPECT_GT(st.prefiltered, 30u);
      EXPECT_LT(eng.always_checked(), 40u);
    } else {
      EXPECT_GT(st.dfa, st.existence * 3 / 4);
    }
    std::mt19937 prng(9);
    size_t alerts = 0;
    for (int t = 0; t < 600; ++t) {
      std::string s;
      for (size_t n = prng() % 24; n-- > 0;) s.push_back("abcAB1_ -\n."[prng() % 11]);
      PacketInfo p;
      p.payload = reinterpret_cast<const uint8_t*>(s.data());
      p.plen = uint32_t(s.size());
      std::vector<uint32_t> got, want;
      eng.match(p, got);
      for (uint32_t r = 0; r < rules.size(); ++r)
        if (payload_matches(rules[r], p.payload, p.plen)) want.push_back(r);
      ASSERT_EQ(got, want) << "payload \"" << s << "\" engine " << int(kind);
      alerts += got.size();
    }
    EXPECT_GT(alerts, 2000u) << "the payloads make the rules fire";
  }
}

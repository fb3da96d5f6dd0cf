// libFuzzer: arbitrary bytes as a dataset's file (the first byte picks the
// type) and as a rule's dataset: option. No crash, no leak (ASan); what a
// set loads it writes back as a file that loads to the same set.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "shoal/ids/dataset.hh"

using namespace shoal::ids;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* p, size_t n) {
  if (n == 0) return 0;
  static const Dataset::Type kTypes[] = {Dataset::Type::String, Dataset::Type::Md5, Dataset::Type::Sha256,
                                         Dataset::Type::Ipv4, Dataset::Type::Ip};
  Dataset::Type t = kTypes[p[0] % 5];
  std::string_view text(reinterpret_cast<const char*>(p + 1), n - 1);
  std::string err;
  Dataset a("a", t, 1000);
  if (a.load_text(text, "input", err)) {
    std::string once = a.save_text();
    Dataset b("b", t, 1000);
    if (!b.load_text(once, "saved", err) || b.size() != a.size() || b.save_text() != once) std::abort();
  }
  DatasetUse u;
  if (parse_dataset(text, u, err) && (u.name.empty() || u.name.size() > 63)) std::abort();
  uint64_t size;
  (void)parse_suricata_size(text, size);
  return 0;
}

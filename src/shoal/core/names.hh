// Click's names for addresses and ports: AddressInfo and PortInfo define
// them, scoped by compound (a name defined inside compound "c" is seen by
// the elements inside "c" first); the address and port parsers of args.hh
// consult the names of the element being configured. Built-in service
// names ("ssh", "www"...) are known everywhere.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace shoal {

struct NamedAddress {
  bool has_ip = false, has_eth = false, has_ip6 = false;
  uint32_t ip = 0;  // host order
  int prefix = -1;  // -1: an address without a prefix length
  std::array<uint8_t, 6> eth{};
  std::array<uint8_t, 16> ip6{};
  int prefix6 = -1;
};

class NameDB {
 public:
  // `scope` is the compound path with a trailing '/' ("" at top level).
  void add_address(const std::string& scope, const std::string& name, const NamedAddress& a);
  void add_port(const std::string& scope, const std::string& name, uint16_t port, int proto);
  const NamedAddress* address(std::string_view scope, std::string_view name) const;
  // proto 6 or 17 (0: either); a port defined for another protocol is not seen.
  bool port(std::string_view scope, std::string_view name, int proto, uint16_t& out) const;

 private:
  std::map<std::string, NamedAddress, std::less<>> addrs_;
  std::map<std::string, std::pair<uint16_t, int>, std::less<>> ports_;
};

// The names the current thread's configuration code sees: set by
// Router::configure around each element's configure().
struct NameScope {
  const NameDB* db = nullptr;
  std::string scope;
};
const NameScope* current_names();
class NameScopeGuard {
 public:
  NameScopeGuard(const NameDB* db, std::string scope);
  ~NameScopeGuard();
  NameScopeGuard(const NameScopeGuard&) = delete;
  NameScopeGuard& operator=(const NameScopeGuard&) = delete;

 private:
  NameScope mine_;
  const NameScope* prev_;
};
// The compound scope of an element name: "a/b/c" -> "a/b/".
std::string name_scope(std::string_view element_name);

// Well-known service names (Click's and tcpdump's), or false.
bool builtin_port(std::string_view name, uint16_t& port);

}  // namespace shoal

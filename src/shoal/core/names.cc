// Click's names for addresses and ports (see names.hh).
#include "shoal/core/names.hh"

namespace shoal {

namespace {
thread_local const NameScope* t_scope = nullptr;

// Innermost scope first: "a/b/" -> "a/b/NAME", "a/NAME", "NAME".
template <class M, class F>
bool scoped_find(const M& m, std::string_view scope, std::string_view name, F&& f) {
  std::string s(scope);
  for (;;) {
    auto it = m.find(s + std::string(name));
    if (it != m.end() && f(it->second)) return true;
    if (s.empty()) return false;
    s.pop_back();
    size_t slash = s.rfind('/');
    s = slash == std::string::npos ? "" : s.substr(0, slash + 1);
  }
}
}  // namespace

void NameDB::add_address(const std::string& scope, const std::string& name, const NamedAddress& a) {
  addrs_[scope + name] = a;
}
void NameDB::add_port(const std::string& scope, const std::string& name, uint16_t port, int proto) {
  ports_[scope + name] = {port, proto};
}
const NamedAddress* NameDB::address(std::string_view scope, std::string_view name) const {
  const NamedAddress* out = nullptr;
  scoped_find(addrs_, scope, name, [&](const NamedAddress& a) { return out = &a, true; });
  return out;
}
bool NameDB::port(std::string_view scope, std::string_view name, int proto, uint16_t& out) const {
  return scoped_find(ports_, scope, name, [&](const std::pair<uint16_t, int>& p) {
    if (proto && p.second && p.second != proto) return false;
    return out = p.first, true;
  });
}

const NameScope* current_names() { return t_scope; }
NameScopeGuard::NameScopeGuard(const NameDB* db, std::string scope) : mine_{db, std::move(scope)}, prev_(t_scope) {
  t_scope = &mine_;
}
NameScopeGuard::~NameScopeGuard() { t_scope = prev_; }

std::string name_scope(std::string_view n) {
  size_t slash = n.rfind('/');
  return slash == std::string_view::npos ? "" : std::string(n.substr(0, slash + 1));
}

bool builtin_port(std::string_view name, uint16_t& port) {
  static constexpr std::pair<const char*, uint16_t> kPorts[] = {
      {"echo", 7},    {"discard", 9}, {"daytime", 13},     {"chargen", 19},      {"ftp-data", 20},
      {"ftp", 21},    {"ssh", 22},    {"telnet", 23},      {"smtp", 25},         {"domain", 53},
      {"dns", 53},    {"bootps", 67}, {"bootpc", 68},      {"tftp", 69},         {"finger", 79},
      {"www", 80},    {"http", 80},   {"pop3", 110},       {"sunrpc", 111},      {"auth", 113},
      {"nntp", 119},  {"ntp", 123},   {"netbios-ns", 137}, {"netbios-dgm", 138}, {"netbios-ssn", 139},
      {"imap", 143},  {"snmp", 161},  {"snmp-trap", 162},  {"bgp", 179},         {"irc", 194},
      {"imap3", 220}, {"https", 443}, {"rip", 520},        {"route", 520},       {"imaps", 993},
      {"pop3s", 995}};
  for (auto& p : kPorts)
    if (name == p.first) return port = p.second, true;
  return false;
}

}  // namespace shoal

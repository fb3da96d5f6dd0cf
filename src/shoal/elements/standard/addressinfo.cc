// AddressInfo: names for IPv4, IPv6 and Ethernet addresses, as Click's.
#include <fmt/format.h>

#include "shoal/core/graph.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class AddressInfo : public Element {
 public:
  void configure(Args& a) override {
    std::string scope = name_scope(name());
    for (auto& it : a.items()) {
      it.used = true;
      auto w = split_words(it.text);
      if (w.empty()) continue;
      if (w.size() < 2) a.fail(it, fmt::format("'{}' has no address", w[0]));
      NamedAddress na;
      for (size_t i = 1; i < w.size(); ++i) {
        std::string_view v = w[i];
        uint32_t addr, mask;
        EtherAddr e;
        IPv6Addr six;
        if (parse_ipv4_prefix(v, addr, mask, true) && v.find(':') == std::string_view::npos) {
          if (na.has_ip) a.fail(it, fmt::format("'{}' has two IPv4 addresses", w[0]));
          na.has_ip = true, na.ip = addr;
          na.prefix = v.find('/') == std::string_view::npos ? -1 : __builtin_popcount(mask);
        } else if (parse_ether(v, e)) {
          if (na.has_eth) a.fail(it, fmt::format("'{}' has two Ethernet addresses", w[0]));
          na.has_eth = true, na.eth = e.b;
        } else if (size_t sl = v.find('/'); parse_ipv6(v.substr(0, sl), six)) {
          uint64_t pl = 128;
          if (sl != std::string_view::npos && (!parse_uint(v.substr(sl + 1), pl) || pl > 128))
            a.fail(it, fmt::format("bad IPv6 prefix '{}'", v));
          na.has_ip6 = true, na.ip6 = six.b;
          na.prefix6 = sl == std::string_view::npos ? -1 : int(pl);
        } else {
          a.fail(it, fmt::format("'{}' is not an IPv4, IPv6 or Ethernet address", v));
        }
      }
      router().names().add_address(scope, std::string(w[0]), na);
      names_ += std::string(it.text) + "\n";
    }
  }
  void add_handlers() override {
    add_read_handler("config", [this] { return names_; });
  }

 private:
  std::string names_;
};
SHOAL_ELEMENT(AddressInfo, .name = "AddressInfo", .ports = "0/0", .processing = "a/a",
              .summary = "names IPv4, IPv6 and Ethernet addresses for other elements' arguments",
              .description =
                  "Each argument is 'NAME ADDRESS...': an IPv4 address (with /LEN, a network too), an Ethernet "
                  "address and an IPv6 address, in any order. Elements then take NAME where Click takes an address: "
                  "NAME or NAME:ip (the IPv4 address), NAME:ipnet (its network, with the prefix), NAME:bcast (its "
                  "broadcast address), NAME:eth, NAME:ip6. Names defined inside a compound are seen by the elements "
                  "in it first. AddressInfo is configured before the other elements.",
              .args = {{"NAME ADDRESS...", "name and addresses", "one per argument"}},
              .handlers = {{"config", "r", "the names"}},
              .example = "AddressInfo(eth0 10.0.0.1/24 00:16:3e:00:00:01); ... -> EtherEncap(0x0800, eth0, ...)",
              .configure_first = true);

}  // namespace shoal

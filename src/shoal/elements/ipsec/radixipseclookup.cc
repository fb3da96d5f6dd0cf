// RadixIPsecLookup: see radixipseclookup.hh.
#include "shoal/elements/ipsec/radixipseclookup.hh"

namespace shoal {

SHOAL_ELEMENT(RadixIPsecLookup,
              SHOAL_IPSEC_LOOKUP_DOC("RadixIPsecLookup", "IPv4 route lookup with IPsec ESP tunnels", ""));

}  // namespace shoal

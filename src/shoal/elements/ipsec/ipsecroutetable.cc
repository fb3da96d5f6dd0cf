// IPsecRouteTable: Click's name for the interface RadixIPsecLookup
// implements (an abstract superclass there); here the same table.
#include "shoal/elements/ipsec/radixipseclookup.hh"

namespace shoal {

class IPsecRouteTable : public RadixIPsecLookup {};
SHOAL_ELEMENT(IPsecRouteTable,
              SHOAL_IPSEC_LOOKUP_DOC("IPsecRouteTable", "IPv4 route table with IPsec ESP tunnels",
                                     " In Click IPsecRouteTable is the interface RadixIPsecLookup implements and "
                                     "cannot be used itself; here it is the same table as RadixIPsecLookup."));

}  // namespace shoal

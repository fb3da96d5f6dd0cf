#include "shoal/ids/dns_names.hh"

#include <strings.h>

#include <iterator>

namespace shoal::ids {

namespace {

struct TypeName {
  uint16_t type;
  const char* name;
};
constexpr TypeName kTypes[] = {
    {1, "A"},      {2, "NS"},       {3, "MD"},       {4, "MF"},     {5, "CNAME"},  {6, "SOA"},         {7, "MB"},
    {8, "MG"},     {9, "MR"},       {10, "NULL"},    {11, "WKS"},   {12, "PTR"},   {13, "HINFO"},      {14, "MINFO"},
    {15, "MX"},    {16, "TXT"},     {17, "RP"},      {18, "AFSDB"}, {19, "X25"},   {20, "ISDN"},       {21, "RT"},
    {22, "NSAP"},  {23, "NSAPPTR"}, {24, "SIG"},     {25, "KEY"},   {26, "PX"},    {27, "GPOS"},       {28, "AAAA"},
    {29, "LOC"},   {30, "NXT"},     {33, "SRV"},     {34, "ATMA"},  {35, "NAPTR"}, {36, "KX"},         {37, "CERT"},
    {38, "A6"},    {39, "DNAME"},   {41, "OPT"},     {42, "APL"},   {43, "DS"},    {44, "SSHFP"},      {45, "IPSECKEY"},
    {46, "RRSIG"}, {47, "NSEC"},    {48, "DNSKEY"},  {49, "DHCID"}, {50, "NSEC3"}, {51, "NSEC3PARAM"}, {52, "TLSA"},
    {55, "HIP"},   {59, "CDS"},     {60, "CDNSKEY"}, {64, "SVCB"},  {65, "HTTPS"}, {99, "SPF"},        {249, "TKEY"},
    {250, "TSIG"}, {251, "IXFR"},   {252, "AXFR"},   {255, "ANY"},  {256, "URI"},  {257, "CAA"},       {32768, "TA"},
    {32769, "DLV"}};

}  // namespace

std::string dns_rrtype_name(uint16_t type) {
  for (const TypeName& t : kTypes)
    if (t.type == type) return t.name;
  return std::to_string(type);
}

int dns_rrtype_value(const std::string& name) {
  for (const TypeName& t : kTypes)
    if (strcasecmp(t.name, name.c_str()) == 0) return t.type;
  return -1;
}

std::string dns_rcode_name(uint8_t rcode) {
  static const char* const kNames[] = {"NOERROR",  "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
                                       "YXDOMAIN", "YXRRSET", "NXRRSET",  "NOTAUTH",  "NOTZONE"};
  return rcode < std::size(kNames) ? kNames[rcode] : std::to_string(rcode);
}

}  // namespace shoal::ids

// Two of Click's IPsec routers back to back (the route table and elements of
// Click's conf/router/ipsec-router.click): gateway A (192.0.2.1, hosts
// 10.1.0.0/16) sends site B's traffic through an ESP tunnel to gateway B
// (192.0.2.2, hosts 10.2.0.0/16), which checks, decrypts and delivers it.
// The SA rides on each tunnel route: SPI, AES-128-CBC key, HMAC-SHA1 key,
// first sequence number, replay window. The steps are in RFC 4303's order
// (encrypt, then authenticate), so the wire carries standard ESP.
//   shoal run examples/click-ipsec-routers.click --stats text
define($N 20000)

FastUDPFlows(LENGTH 200, FLOWS 64, SRCIP 10.1.0.1, DSTIP 10.2.0.1, LIMIT $N, STOP true)
  -> Strip(14) -> CheckIPHeader -> [0]a;

a :: RadixIPsecLookup(192.0.2.1/32 0,
                      10.2.0.0/16 192.0.2.2 1 0x1234 000102030405060708090A0B0C0D0E0F 101112131415161718191A1B1C1D1E1F 1 1024,
                      192.0.2.2/32 3,
                      10.1.0.0/16 4);
a[1] -> IPsecESPEncap -> IPsecAES(1) -> IPsecAuthHMACSHA1(0) -> IPsecEncap(50) -> [0]a;
a[0] -> StripIPHeader -> IPsecAuthHMACSHA1(1) -> IPsecAES(0) -> IPsecESPUnencap -> CheckIPHeader -> [0]a;
a[2] -> Discard;  // for A's own stack
a[3] -> FixIPSrc(192.0.2.1) -> wire :: Counter -> CheckIPHeader -> [0]b;
a[4] -> Discard;  // A's hosts

b :: RadixIPsecLookup(192.0.2.2/32 0,
                      10.1.0.0/16 192.0.2.1 1 0x1234 000102030405060708090A0B0C0D0E0F 101112131415161718191A1B1C1D1E1F 1 1024,
                      192.0.2.1/32 3,
                      10.2.0.0/16 4);
b[1] -> IPsecESPEncap -> IPsecAES(1) -> IPsecAuthHMACSHA1(0) -> IPsecEncap(50) -> [0]b;
b[0] -> StripIPHeader -> IPsecAuthHMACSHA1(1) -> IPsecAES(0) -> IPsecESPUnencap -> CheckIPHeader -> [0]b;
b[2] -> Discard;
b[3] -> FixIPSrc(192.0.2.2) -> Discard;  // back to A (nothing in this example)
b[4] -> delivered :: Counter -> Discard;  // B's hosts

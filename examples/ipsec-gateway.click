// An IPsec ESP gateway (site A, 192.0.2.1, protecting 10.1.0.0/16) on the
// CPU: ESP from site B's gateway is checked and decrypted, traffic from
// site A to site B is encrypted, the rest is routed in the clear; the SAs
// and policies are `ip xfrm` commands (examples/data/ipsec/gateway.sad), so
// a Linux peer is set up with the same lines. Replays, forgeries, unknown
// SPIs, clear traffic the policy wants protected and blocked destinations
// are counted drops with their reasons (--stats text shows them; the `sa`
// handler shows each SA's counters).
//   shoal run examples/ipsec-gateway.click --stats text
define($IN examples/data/ipsec/gateway.pcap, $OUT /tmp/shoal-ipsec-gateway-,
       $SAD examples/data/ipsec/gateway.sad)

FromDump($IN, STOP true)
  -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
  -> inbound :: IPsecInbound(SAD $SAD)
  -> DecIPTTL  // forwarding: the inner packet's TTL, before encryption (as Linux does it)
  -> outbound :: IPsecOutbound(SAD $SAD)
  -> rt :: DirectIPLookup(10.1.0.0/16 0, 192.0.2.0/24 1, 0.0.0.0/0 192.0.2.254 1);
rt[0] -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:0a) -> lan :: Counter -> ToDump(${OUT}lan.pcap);
rt[1] -> EtherEncap(0x0800, 02:00:00:00:01:01, 02:00:00:00:01:fe) -> wan :: Counter -> ToDump(${OUT}wan.pcap);

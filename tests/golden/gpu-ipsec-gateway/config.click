// ipsec-gateway's graph with IPsecInbound and IPsecOutbound offloaded (NBA's
// form, the host backend or CUDA) and one way out: the device's ESP kernels
// check and decrypt site B's traffic and seal site A's (AES-128-GCM), the
// rest passes in the clear. The same bytes as the CPU elements' (this file
// without the OffloadBalancers gives expected.pcap too). One output: an aggregate's packets leave port by port,
// so two ports' packets merged into one file would interleave by timing.
FromDump($IN, STOP true)
  -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
  -> OffloadBalancer(FRACTION 1)
  -> IPsecInbound(SAD examples/data/ipsec/gateway.sad, VERBOSE false)
  -> DecIPTTL
  -> OffloadBalancer(FRACTION 1)
  -> IPsecOutbound(SAD examples/data/ipsec/gateway.sad, VERBOSE false)
  -> EtherEncap(0x0800, 02:00:00:00:01:01, 02:00:00:00:01:fe)
  -> ToDump($OUT);

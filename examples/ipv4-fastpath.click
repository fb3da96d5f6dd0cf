// A minimal IPv4 forwarding path: check the header, look up the route
// (DIR-24-8), decrement the TTL, rewrite Ethernet addresses per output.
// Bad headers, unroutable packets and expiring TTLs are dropped with reasons.
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-)

FromDump($IN, STOP true)
  -> CheckIPHeader(14)
  -> rt :: DirectIPLookup(10.1.0.0/16 0,
                          10.2.0.0/16 10.2.0.254 1,
                          0.0.0.0/0 10.9.9.9 1);
rt[0] -> DecIPTTL -> EtherRewrite(SRC 02:00:00:00:01:01, DST 02:00:00:00:01:02) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
rt[1] -> DecIPTTL -> EtherRewrite(SRC 02:00:00:00:02:01, DST 02:00:00:00:02:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);

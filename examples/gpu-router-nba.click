// The IPv4 fast path offloaded in NBA's form: the configuration is the
// ordinary CPU router (examples/ipv4-fastpath.click) with a balancer in
// front. Batches it marks for the device (FRACTION of them) are aggregated
// by CheckIPHeader, which runs itself and the offloadable elements after it
// on output 0 (DirectIPLookup, then DecIPTTL) as one device chain; each
// packet leaves from the element and port where it left the chain, in
// order. Batches left on the CPU take the usual per-packet path.
//   c.offload_chain: the chain and its ROI union; c.offload_h2d_bytes etc.
//   write `b.fraction 0.5` to split batches between CPU and device.
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-nba-)

FromDump($IN, STOP true)
  -> b :: OffloadBalancer(FRACTION 1)
  -> c :: CheckIPHeader(14)
  -> rt :: DirectIPLookup(10.1.0.0/16 0,
                          10.2.0.0/16 10.2.0.254 1,
                          0.0.0.0/0 10.9.9.9 1);
rt[0] -> DecIPTTL -> EtherRewrite(SRC 02:00:00:00:01:01, DST 02:00:00:00:01:02) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
rt[1] -> DecIPTTL -> EtherRewrite(SRC 02:00:00:00:02:01, DST 02:00:00:00:02:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);

// Snap's DPI router on the CPU: the IPv4 fast path (header check, route
// lookup, TTL) with every packet's payload matched against Snort rules on
// the way; alerts go to fast.log and EVE JSON and every packet is routed
// (log and forward: one output, so nothing is reordered; ids.alerted_packets
// counts them). The offloaded variant is examples/gpu-dpi-router.click;
// both write the same pcaps and the same 6 alerts.
//   shoal run examples/dpi-router.click --stats text
define($IN examples/data/ids-traffic.pcap, $OUT /tmp/shoal-dpi-)

FromDump($IN, STOP true)
  -> CheckIPHeader(14)
  -> FlowIPManager  // the flows the rules' flow options ask about
  -> ids :: IDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                       FASTLOG ${OUT}fast.log, EVE ${OUT}eve.json)
  -> rt :: DirectIPLookup(10.0.0.64/26 10.0.0.126 1, 10.0.0.0/24 0, 0.0.0.0/0 10.0.0.254 1);
rt[0] -> DecIPTTL -> EtherRewrite(SRC 02:00:00:00:01:01, DST 02:00:00:00:01:02) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
rt[1] -> DecIPTTL -> EtherRewrite(SRC 02:00:00:00:02:01, DST 02:00:00:00:02:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);

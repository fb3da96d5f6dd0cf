// Snap's IDS router on the CPU: an access list (SDNClassifier, ClassBench
// rules) denies some traffic, an inline IDS drops the allowed packets that
// match a Snort rule (alerts to fast.log and EVE JSON), and the rest is
// routed (lookup, TTL) to two ports. The offloaded variant is
// examples/gpu-ids-router.click; both write the same pcaps and alerts.
//   shoal run examples/ids-router.click --stats text
define($IN examples/data/ids-traffic.pcap, $OUT /tmp/shoal-ids-router-)

FromDump($IN, STOP true)
  -> CheckIPHeader(14)
  -> acl :: SDNClassifier(RULES examples/data/sdn/ids-router.rules);
acl[1] -> denied :: Counter -> Discard;
acl[0]
  -> FlowIPManager  // the flows the rules' flow options ask about
  -> ids :: IDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                       FASTLOG ${OUT}fast.log, EVE ${OUT}eve.json);
ids[1] -> alerted :: Counter -> Discard;
ids[0]
  -> rt :: DirectIPLookup(10.0.0.64/26 10.0.0.126 1, 10.0.0.0/24 0, 0.0.0.0/0 10.0.0.254 1);
rt[0] -> DecIPTTL -> EtherRewrite(SRC 02:00:00:00:01:01, DST 02:00:00:00:01:02) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
rt[1] -> DecIPTTL -> EtherRewrite(SRC 02:00:00:00:02:01, DST 02:00:00:00:02:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);

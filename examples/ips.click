// An inline IPS in a router: the IPv4 fast path with an IDSMatcher after
// the lookup; packets that match a rule are logged and dropped (output 1 to
// Discard), the rest are forwarded. Compare examples/ids.click (log and
// forward).
define($IN examples/data/ids-traffic.pcap, $OUT /tmp/shoal-ips-out.pcap, $LOG /tmp/shoal-ips-, $ENGINE hyperscan)

FromDump($IN, STOP true)
  -> CheckIPHeader(14)
  -> rt :: DirectIPLookup(10.0.0.0/8 0, 0.0.0.0/0 198.51.100.1 0)
  -> DecIPTTL
  -> FlowIPManager  // the flows the rules' flow options ask about
  -> ips :: IDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, ENGINE $ENGINE,
                       FASTLOG ${LOG}fast.log, EVE ${LOG}eve.json);
ips[0] -> forwarded :: Counter -> ToDump($OUT);
ips[1] -> blocked :: Counter -> Discard;

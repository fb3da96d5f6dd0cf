// Snap's divergence configuration on the CPU: a classifier sends web
// traffic (TCP to 80 or 8080) to one IDS and everything else to another,
// each with its own rule set; each IDS writes its clean and its alerted
// packets to their own pcaps. The offloaded variant,
// examples/gpu-divergence.click, runs both IDSes on the device in one
// chain, each on its own packets, and splits after the Debatcher.
//   shoal run examples/divergence.click --stats text
define($IN examples/data/ids-traffic.pcap, $OUT /tmp/shoal-divergence-)

FromDump($IN, STOP true)
  -> CheckIPHeader(14)
  -> cls :: SDNClassifier(RULES examples/data/sdn/divergence.rules);
cls[0] -> web :: IDSMatcher(RULES examples/data/ids/web.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                            FASTLOG ${OUT}web-fast.log);
cls[1] -> other :: IDSMatcher(RULES examples/data/ids/other.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                              FASTLOG ${OUT}other-fast.log);
web[0] -> c0 :: Counter -> ToDump(${OUT}web.pcap);
web[1] -> a0 :: Counter -> ToDump(${OUT}web-alerts.pcap);
other[0] -> c1 :: Counter -> ToDump(${OUT}other.pcap);
other[1] -> a1 :: Counter -> ToDump(${OUT}other-alerts.pcap);

// Snap's SDN forwarder on the CPU: a ClassBench access list (1,000 rules,
// made by `shoal gen --classbench acl`) decides each frame's output; each
// output rewrites the Ethernet addresses and writes its own pcap. Frames
// no rule matches would be dropped ('no-match'); this list ends with a
// catch-all. The offloaded variant is examples/gpu-sdn-forwarder.click.
//   shoal run examples/sdn-forwarder.click --stats text
define($IN examples/data/sdn/acl1k-trace.pcap, $RULES examples/data/sdn/acl1k.rules, $OUT /tmp/shoal-sdn-)

FromDump($IN, STOP true)
  -> sdn :: SDNClassifier(RULES $RULES);
sdn[0] -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:01:01) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
sdn[1] -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:01:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);
sdn[2] -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:01:03) -> c2 :: Counter -> ToDump(${OUT}port2.pcap);
sdn[3] -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:01:04) -> c3 :: Counter -> ToDump(${OUT}port3.pcap);

// Snap's SDN forwarder offloaded: the same rules and outputs as
// examples/sdn-forwarder.click, with the classification on the device in
// Snap's form. Frames are collected into aggregates, only their first 92
// bytes (Ethernet, VLAN tag, IPv4 header, TCP flags) cross to the device,
// the rule a frame matches sets its predicate bit, and a Dispatcher after
// the Debatcher sends it to that output, in arrival order. CUDA when a GPU
// is usable, else the host backend (the same kernels on CPU threads):
//   shoal run examples/gpu-sdn-forwarder.click --device host --stats text
define($IN examples/data/sdn/acl1k-trace.pcap, $RULES examples/data/sdn/acl1k.rules, $OUT /tmp/shoal-gpu-sdn-)

FromDump($IN, STOP true)
  -> Batcher(1024, 100us)
  -> h :: HostToDevice(INFLIGHT 8)
  -> sdn :: GPUSDNClassifier(RULES $RULES)
  -> DeviceToHost
  -> cq :: CompletionQueue
  -> Debatcher
  -> d :: Dispatcher(0, 1, 2, 3);
d[0] -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:01:01) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
d[1] -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:01:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);
d[2] -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:01:03) -> c2 :: Counter -> ToDump(${OUT}port2.pcap);
d[3] -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:01:04) -> c3 :: Counter -> ToDump(${OUT}port3.pcap);

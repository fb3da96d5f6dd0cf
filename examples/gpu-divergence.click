// Snap's divergence configuration offloaded: the classifier marks each
// packet with predicate bit 0 (web) or 1 (other) on the device; the web IDS
// (PRED 0) and the other IDS (PRED 1) each scan only their own packets, in
// the same chain, so the aggregate never splits on the device; the host
// verifies each IDS's candidates at completion and sets bit 6 (web) or 7
// (other) on alerted packets. One Dispatcher after the Debatcher makes the
// four outputs of examples/divergence.click, with the same contents.
//   h.h2d_bytes / h.packets: bytes moved per packet.
define($IN examples/data/ids-traffic.pcap, $OUT /tmp/shoal-gpu-divergence-)

FromDump($IN, STOP true)
  -> Batcher(1024, 100us)
  -> h :: HostToDevice(INFLIGHT 8)
  -> GPUCheckIPHeader(14)
  -> cls :: GPUSDNClassifier(RULES examples/data/sdn/divergence.rules)
  -> web :: GPUIDSMatcher(RULES examples/data/ids/web.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                          FASTLOG ${OUT}web-fast.log, PRED 0, ALERT 6)
  -> other :: GPUIDSMatcher(RULES examples/data/ids/other.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                            FASTLOG ${OUT}other-fast.log, PRED 1, ALERT 7)
  -> DeviceToHost
  -> CompletionQueue
  -> Debatcher
  -> d :: Dispatcher(6, 7, 0, 1);
d[0] -> a0 :: Counter -> ToDump(${OUT}web-alerts.pcap);
d[1] -> a1 :: Counter -> ToDump(${OUT}other-alerts.pcap);
d[2] -> c0 :: Counter -> ToDump(${OUT}web.pcap);
d[3] -> c1 :: Counter -> ToDump(${OUT}other.pcap);

// Snap's DPI router offloaded in Snap's form: the header check, the payload
// scan (Aho-Corasick DFA), the route lookup and the TTL decrement run on the
// device in one chain; the host verifies the scan's candidate rules and logs
// the alerts in packet order at completion; a Dispatcher after the
// Debatcher sends each packet out by its route's predicate bit. Same rules,
// routes and outputs as examples/dpi-router.click, and the same results.
// CUDA when a GPU is usable, else the host backend (`--device host`).
//   h.h2d_bytes / h.packets: bytes moved per packet (whole payloads here).
define($IN examples/data/ids-traffic.pcap, $OUT /tmp/shoal-gpu-dpi-)

FromDump($IN, STOP true)
  -> Batcher(1024, 100us)
  -> FlowIPManager  // the flows the rules' flow options ask about
  -> h :: HostToDevice(INFLIGHT 8)
  -> GPUCheckIPHeader(14)
  -> ids :: GPUIDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                          FASTLOG ${OUT}fast.log, EVE ${OUT}eve.json)
  -> GPUIPLookup(10.0.0.64/26 10.0.0.126 1, 10.0.0.0/24 0, 0.0.0.0/0 10.0.0.254 1)
  -> GPUDecIPTTL
  -> DeviceToHost
  -> CompletionQueue
  -> Debatcher
  -> d :: Dispatcher(0, 1);
d[0] -> EtherRewrite(SRC 02:00:00:00:01:01, DST 02:00:00:00:01:02) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
d[1] -> EtherRewrite(SRC 02:00:00:00:02:01, DST 02:00:00:00:02:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);

// The IDS of examples/ids.click offloaded in NBA's form: the balancer marks
// batches for the device, IDSMatcher aggregates them, the device scans each
// payload with the Aho-Corasick DFA (16-byte loads) and returns the distinct
// fast patterns per packet; the host verifies those rules and logs in
// packet order. Without a GPU the host backend runs the same kernel on CPU
// threads (shoal run --device host). Expect the same 6 alerts as ids.click.
//   ids.offload_packets, ids.offload_h2d_bytes, ids.offload_d2h_bytes;
//   ids.device_overflows: payloads with more than 15 distinct fast patterns.
define($IN examples/data/ids-traffic.pcap, $LOG /tmp/shoal-gpu-ids-)

FromDump($IN, STOP true)
  -> FlowIPManager
  -> OffloadBalancer(FRACTION 1)
  -> ids :: IDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, ENGINE builtin,
                       FASTLOG ${LOG}fast.log, EVE ${LOG}eve.json);
ids[0] -> clean :: Counter -> Discard;
ids[1] -> alerted :: Counter -> Discard;

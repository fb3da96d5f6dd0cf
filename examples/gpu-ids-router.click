// Snap's IDS router offloaded in Snap's form: the header check, the access
// list, the payload scan, the route lookup and the TTL decrement are one
// device chain, steered by predicate bits: the access list sets bit 0
// (allow) or 1 (deny); the IDS (PRED 0) inspects allowed packets and marks
// the ones with candidate rules with bit 7; the lookup and the decrement
// (PRED 0, SKIP 7) pass denied and suspect packets by, the lookup's routes
// set bits 2 and 3. At completion the host verifies the suspects: bit 7
// stays on those that alert and is cleared on the others, whose lookup and
// decrement then run on the host. After the Debatcher one Dispatcher does
// the split. Same results as examples/ids-router.click.
//   h.host_steps: steps run on the host for suspects found clean.
define($IN examples/data/ids-traffic.pcap, $OUT /tmp/shoal-gpu-ids-router-)

FromDump($IN, STOP true)
  -> Batcher(1024, 100us)
  -> FlowIPManager  // the flows the rules' flow options ask about
  -> h :: HostToDevice(INFLIGHT 8)
  -> GPUCheckIPHeader(14)
  -> acl :: GPUSDNClassifier(RULES examples/data/sdn/ids-router.rules)
  -> ids :: GPUIDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                          FASTLOG ${OUT}fast.log, EVE ${OUT}eve.json, PRED 0, ALERT 7)
  -> GPUIPLookup(10.0.0.64/26 10.0.0.126 3, 10.0.0.0/24 2, 0.0.0.0/0 10.0.0.254 3, PRED 0, SKIP 7)
  -> GPUDecIPTTL(PRED 0, SKIP 7)
  -> DeviceToHost
  -> CompletionQueue
  -> Debatcher
  -> d :: Dispatcher(1, 7, 2, 3);
d[0] -> denied :: Counter -> Discard;
d[1] -> alerted :: Counter -> Discard;
d[2] -> EtherRewrite(SRC 02:00:00:00:01:01, DST 02:00:00:00:01:02) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
d[3] -> EtherRewrite(SRC 02:00:00:00:02:01, DST 02:00:00:00:02:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);

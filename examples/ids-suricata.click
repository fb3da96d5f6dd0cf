// Suricata's IDS mode, the graph `shoal ids` builds (see `shoal ids
// --dump-config`): fragments reassembled, tunnels decoded, flows keyed on
// their VLAN ids too (picked up midstream here: the capture has no
// handshakes), each TCP direction's data inspected and parsed once the other
// side acknowledged it, a transaction's rules on packets of their direction;
// alerts, http and flow records to EVE JSON. Every packet is forwarded.
//   shoal run examples/ids-suricata.click --stats text; ids.alerts
define($IN examples/data/ids-traffic.pcap, $OUT /tmp/shoal-ids-suricata-)

FromDump($IN, STOP true)
  -> IPReassembler(FRAGMENTS true)
  -> TunnelDecap
  -> IPReassembler(FRAGMENTS true, INNER true)  // fragments carried in tunnels
  -> FlowIPManager(MIDSTREAM true, VLAN true)
  -> ids :: IDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                       STREAM_INSPECT acked, EVE ${OUT}eve.json, EVE_TYPES "alert http flow");
ids[0] -> clean :: Counter -> Discard;
ids[1] -> alerted :: Counter -> Discard;

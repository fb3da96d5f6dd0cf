// An IDS on a capture: Snort/Suricata rules (examples/data/ids/local.rules,
// variables in vars.yaml) over every IP packet; alerts to fast.log and EVE
// JSON; every packet is forwarded. FlowIPManager tracks the flows that the
// rules' flow options (established, to_server) ask about. The traffic (made by
// examples/data/ids/make_traffic.py) holds one packet per rule among 80
// benign ones and near misses: expect 6 alerts.
//   ids.alerts, ids.rules, ids.problems; ENGINE builtin for the Aho-Corasick DFA.
define($IN examples/data/ids-traffic.pcap, $LOG /tmp/shoal-ids-, $ENGINE hyperscan)

FromDump($IN, STOP true)
  -> FlowIPManager
  -> ids :: IDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, ENGINE $ENGINE,
                       FASTLOG ${LOG}fast.log, EVE ${LOG}eve.json);
ids[0] -> clean :: Counter -> Discard;
ids[1] -> alerted :: Counter -> Discard;

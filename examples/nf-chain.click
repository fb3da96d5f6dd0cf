// GPUNFV's service chain (Zhang et al., APNet 2017): flow monitor -> firewall
// -> load balancer, each network function keeping its per-flow state in the
// flow layer, on the CPU. The monitor writes one JSON record per flow as it
// ends; the firewall admits web-like TCP and every UDP flow to 10.1.0.0/16 and
// denies the rest (counted drops, reason 'denied'); the balancer spreads the
// connections to 10.1.0.1 over four backends with Maglev's table.
// Run: shoal run examples/nf-chain.click --stats text
//      (then: shoal ctl ... read lb.backends / fw.table, or --stats-out)
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-)
FromDump($IN, STOP true)
  -> FlowIPManager(CAPACITY 100000)
  -> FlowLog(${OUT}nf-flows.log, FORMAT json)
  -> fw :: Firewall("allow @0.0.0.0/0 10.1.0.0/16 0 : 65535 5000 : 5099 0x06/0xFF",
                    "allow @0.0.0.0/0 10.1.0.0/16 0 : 65535 0 : 65535 0x11/0xFF",
                    DEFAULT deny, MIDSTREAM true)   // the capture starts mid-connection
  -> lb :: FlowIPLoadBalancer(VIP 10.1.0.1, DST 10.2.0.1 10.2.0.2 10.2.0.3 10.2.0.4)
  -> ToDump(${OUT}nf-out.pcap);

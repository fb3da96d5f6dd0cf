// GPUNFV's service chain offloaded: the CPU chain of examples/nf-chain.click
// with a balancer in front. The flow layer and the flow monitor stay on the
// CPU; batches the balancer marks for the device are aggregated by the
// firewall, which runs itself and the network functions after it
// (load balancer, rate limiter) as one device chain: the aggregate's packets
// are grouped by flow, one device thread takes each flow's packets in
// arrival order against the flow's state (copied to the device with the
// aggregate and back), and every packet leaves where it left the chain, in
// order. Same packets and per-flow state as on the CPU.
// Run: shoal run examples/gpu-nf-chain.click --offload-adaptive --stats text
//      (fw.offload_chain: the chain and what goes to the device;
//       fw.offload_flow_runs: flows per aggregate; fw.offload_sizer: the
//       aggregate size GPUNFV's dynamic sizing settled on)
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-gpu-)
FromDump($IN, STOP true)
  -> OffloadBalancer(FRACTION 1)
  -> FlowIPManager(CAPACITY 100000)
  -> FlowLog(${OUT}nf-flows.log, FORMAT json)
  -> fw :: Firewall("allow @0.0.0.0/0 10.1.0.0/16 0 : 65535 5000 : 5099 0x06/0xFF",
                    "allow @0.0.0.0/0 10.1.0.0/16 0 : 65535 0 : 65535 0x11/0xFF",
                    DEFAULT deny, MIDSTREAM true)
  -> lb :: FlowIPLoadBalancer(VIP 10.1.0.1, DST 10.2.0.1 10.2.0.2 10.2.0.3 10.2.0.4)
  -> rl :: FlowRateLimiter(BANDWIDTH 1Gbps)
  -> ToDump(${OUT}nf-out.pcap);

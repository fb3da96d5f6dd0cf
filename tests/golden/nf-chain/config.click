// GPUNFV's chain on a capture: the firewall admits TCP to port 80 and UDP to
// port 53 of the VIP from 10.0.0.0/8 (conntrack's rules for TCP), each flow
// is held to 100 packets a second (a burst of 3), and the load balancer sends
// each admitted connection to one of three backends. One packet per batch.
FromDump($IN, STOP true, BURST 1) -> FlowIPManager
  -> fw :: Firewall("allow @10.0.0.0/8 10.1.0.1/32 0 : 65535 80 : 80 0x06/0xFF",
                    "allow @10.0.0.0/8 10.1.0.1/32 0 : 65535 53 : 53 0x11/0xFF")
  -> rl :: FlowRateLimiter(RATE 100, BURST 3)
  -> lb :: FlowIPLoadBalancer(VIP 10.1.0.1, DST 10.2.0.1 10.2.0.2 10.2.0.3)
  -> ToDump($OUT);

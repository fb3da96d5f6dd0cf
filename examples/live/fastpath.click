// A minimal IPv4 fast path between two interfaces: no ARP (fixed next-hop
// Ethernet addresses), no options, no ICMP; packets whose TTL runs out or
// that have no route are dropped and counted. The forwarding path of the
// router benchmark (`shoal bench --case router`). Run as root:
//   shoal run examples/live/fastpath.click IF0=eth0 IF1=eth1 --threads 2
define($IF0 eth0, $IF1 eth1,
       $MAC0 02:00:00:00:01:01, $MAC1 02:00:00:00:02:01,
       $NH0 02:00:00:00:01:02, $NH1 02:00:00:00:02:02)

rt :: DirectIPLookup(10.1.0.0/16 0, 10.2.0.0/16 1, 0.0.0.0/0 1);
FromDevice($IF0) -> Strip(14) -> CheckIPHeader -> rt;
FromDevice($IF1) -> Strip(14) -> CheckIPHeader -> rt;
rt[0] -> DecIPTTL -> Unstrip(14) -> EtherRewrite($MAC0, $NH0) -> Queue(1024) -> ToDevice($IF0);
rt[1] -> DecIPTTL -> Unstrip(14) -> EtherRewrite($MAC1, $NH1) -> Queue(1024) -> ToDevice($IF1);

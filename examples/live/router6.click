// An IPv6-only router between two Ethernet interfaces: neighbour discovery
// (solicitations answered, next hops resolved), header checks, longest-prefix
// match by binary search on prefix lengths, hop limit, and ICMPv6 errors
// (time exceeded, packet too big). Run as root:
//   shoal run examples/live/router6.click IF0=eth0 IF1=eth1
define($IF0 eth0, $IF1 eth1,
       $A0 2001:db8:1::1, $A1 2001:db8:2::1,
       $MAC0 02:00:00:00:01:01, $MAC1 02:00:00:00:02:01, $MTU1 1500)

out0 :: Queue(1024) -> ToDevice($IF0);
out1 :: Queue(1024) -> ToDevice($IF1);
// NS, NA, other IPv6, the rest
c0 :: Classifier(12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -);
c1 :: Classifier(12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -);
FromDevice($IF0) -> c0;
FromDevice($IF1) -> c1;
c0[0] -> IP6NDAdvertiser($A0 $MAC0) -> out0;
c1[0] -> IP6NDAdvertiser($A1 $MAC1) -> out1;
nds0 :: IP6NDSolicitor($A0, $MAC0) -> out0;
nds1 :: IP6NDSolicitor($A1, $MAC1) -> out1;
c0[1] -> [1]nds0;
c1[1] -> [1]nds1;
c0[2] -> ip6;
c1[2] -> ip6;
c0[3] -> Discard;
c1[3] -> Discard;

ip6 :: Strip(14) -> CheckIP6Header -> rt6;
rt6 :: LookupIP6Route($A0/128 0, $A1/128 0,
                      2001:db8:1::/64 1, 2001:db8:2::/64 2,
                      ::/0 2001:db8:2::fe 2);
rt6[0] -> Discard;  // addressed to the router
rt6[1] -> dh0 :: DecIP6HLIM -> cl0 :: CheckLength(1500) -> [0]nds0;
rt6[2] -> dh1 :: DecIP6HLIM -> cl1 :: CheckLength($MTU1) -> [0]nds1;
dh0[1] -> ICMP6Error($A0, timeexceeded) -> rt6;
dh1[1] -> ICMP6Error($A1, timeexceeded) -> rt6;
cl0[1] -> ICMP6Error($A0, packettoobig, MTU 1500) -> rt6;
cl1[1] -> ICMP6Error($A1, packettoobig, MTU $MTU1) -> rt6;

// An IP router, written by `shoal mkrouter` (the Click router of Kohler et al., Figure 8,
// with IPv6). Interfaces:
//   eth0: 192.168.1.1/24 2001:db8:1::1/64 ether 02:00:00:00:01:01 mtu 1500
//   eth1: 192.168.2.1/24 2001:db8:2::1/64 ether 02:00:00:00:02:01 mtu 1500

// ---- eth0
out0 :: Queue(1024) -> ToDevice(eth0);
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800,
                   12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -);
FromDevice(eth0) -> c0;
c0[0] -> ARPResponder(192.168.1.1 02:00:00:00:01:01) -> out0;
arpq0 :: ARPQuerier(192.168.1.1, 02:00:00:00:01:01) -> out0;
c0[1] -> [1]arpq0;
c0[2] -> Paint(1) -> ip4;
c0[3] -> IP6NDAdvertiser(2001:db8:1::1 02:00:00:00:01:01) -> out0;
nds0 :: IP6NDSolicitor(2001:db8:1::1, 02:00:00:00:01:01) -> out0;
c0[4] -> [1]nds0;
c0[5] -> Paint(1) -> ip6;
c0[6] -> Discard;  // neither IP nor ARP

// ---- eth1
out1 :: Queue(1024) -> ToDevice(eth1);
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800,
                   12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -);
FromDevice(eth1) -> c1;
c1[0] -> ARPResponder(192.168.2.1 02:00:00:00:02:01) -> out1;
arpq1 :: ARPQuerier(192.168.2.1, 02:00:00:00:02:01) -> out1;
c1[1] -> [1]arpq1;
c1[2] -> Paint(2) -> ip4;
c1[3] -> IP6NDAdvertiser(2001:db8:2::1 02:00:00:00:02:01) -> out1;
nds1 :: IP6NDSolicitor(2001:db8:2::1, 02:00:00:00:02:01) -> out1;
c1[4] -> [1]nds1;
c1[5] -> Paint(2) -> ip6;
c1[6] -> Discard;  // neither IP nor ARP

// ---- IPv4
ip4 :: Strip(14) -> CheckIPHeader(INTERFACES 192.168.1.1/24 192.168.2.1/24) -> rt;
rt :: DirectIPLookup(
    192.168.1.1/32 0, 192.168.1.255/32 0, 192.168.1.0/32 0, 
    192.168.2.1/32 0, 192.168.2.255/32 0, 192.168.2.0/32 0, 
    255.255.255.255/32 0, 0.0.0.0/32 0,
    192.168.1.0/24 1,
    192.168.2.0/24 2,
    0.0.0.0/0 192.168.2.254 2);
// Addressed to the router: echo requests are answered, the rest is not ours to handle.
rt[0] -> ping :: ICMPPingResponder -> Paint(0) -> rt;
ping[1] -> Discard;

rt[1] -> DropBroadcasts -> cp0 :: PaintTee(1) -> gio0 :: IPGWOptions(192.168.1.1) -> FixIPSrc(192.168.1.1)
  -> dt0 :: DecIPTTL -> fr0 :: IPFragmenter(1500) -> [0]arpq0;
dt0[1] -> ICMPError(192.168.1.1, timeexceeded, BADADDRS 192.168.1.255 192.168.2.255) -> rt;
fr0[1] -> ICMPError(192.168.1.1, unreachable, needfrag, MTU 1500, BADADDRS 192.168.1.255 192.168.2.255) -> rt;
gio0[1] -> ICMPError(192.168.1.1, parameterproblem, BADADDRS 192.168.1.255 192.168.2.255) -> rt;
cp0[1] -> ICMPError(192.168.1.1, redirect, host, BADADDRS 192.168.1.255 192.168.2.255) -> rt;

rt[2] -> DropBroadcasts -> cp1 :: PaintTee(2) -> gio1 :: IPGWOptions(192.168.2.1) -> FixIPSrc(192.168.2.1)
  -> dt1 :: DecIPTTL -> fr1 :: IPFragmenter(1500) -> [0]arpq1;
dt1[1] -> ICMPError(192.168.2.1, timeexceeded, BADADDRS 192.168.1.255 192.168.2.255) -> rt;
fr1[1] -> ICMPError(192.168.2.1, unreachable, needfrag, MTU 1500, BADADDRS 192.168.1.255 192.168.2.255) -> rt;
gio1[1] -> ICMPError(192.168.2.1, parameterproblem, BADADDRS 192.168.1.255 192.168.2.255) -> rt;
cp1[1] -> ICMPError(192.168.2.1, redirect, host, BADADDRS 192.168.1.255 192.168.2.255) -> rt;

// ---- IPv6
ip6 :: Strip(14) -> CheckIP6Header -> rt6;
rt6 :: LookupIP6Route(
    2001:db8:1::1/128 0,
    2001:db8:2::1/128 0,
    2001:db8:1::/64 1,
    2001:db8:2::/64 2,
    ::/0 2001:db8:2::fe 2);
rt6[0] -> Discard;  // addressed to the router
rt6[1] -> dh0 :: DecIP6HLIM -> cl0 :: CheckLength(1500) -> [0]nds0;
dh0[1] -> ICMP6Error(2001:db8:1::1, timeexceeded) -> rt6;
cl0[1] -> ICMP6Error(2001:db8:1::1, packettoobig, MTU 1500) -> rt6;
rt6[2] -> dh1 :: DecIP6HLIM -> cl1 :: CheckLength(1500) -> [0]nds1;
dh1[1] -> ICMP6Error(2001:db8:2::1, timeexceeded) -> rt6;
cl1[1] -> ICMP6Error(2001:db8:2::1, packettoobig, MTU 1500) -> rt6;

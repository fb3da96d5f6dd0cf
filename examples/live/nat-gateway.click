// A NAT gateway (masquerade): hosts on eth0's 192.168.1.0/24 reach the outside through eth1 as
// 198.51.100.1, as nftables' masquerade does. Made by:
//   shoal mkrouter -i eth0,192.168.1.1/24,mac=02:00:00:00:01:01 -i eth1,198.51.100.1/24,mac=02:00:00:00:02:01 --nat eth1
// (tests/netns/nat.sh runs the same between two network namespaces, and the kernel's NAT beside it).
// An IP router, written by `shoal mkrouter` (the Click router of Kohler et al., Figure 8,
// with IPv6). Interfaces:
//   eth0: 192.168.1.1/24 ether 02:00:00:00:01:01 mtu 1400
//   eth1: 198.51.100.1/24 ether 02:00:00:00:02:01 mtu 1500

// ---- eth0
out0 :: Queue(1024) -> ToDevice(eth0);
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800,
                   12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -);
FromDevice(eth0) -> c0;
c0[0] -> ARPResponder(192.168.1.1 02:00:00:00:01:01) -> out0;
arpq0 :: ARPQuerier(192.168.1.1, 02:00:00:00:01:01) -> out0;
c0[1] -> [1]arpq0;
c0[2] -> Paint(1) -> ip4;
c0[3] -> Discard; c0[4] -> Discard; c0[5] -> Discard;  // no IPv6 here
c0[6] -> Discard;  // neither IP nor ARP

// ---- eth1
out1 :: Queue(1024) -> ToDevice(eth1);
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800,
                   12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -);
FromDevice(eth1) -> c1;
c1[0] -> ARPResponder(198.51.100.1 02:00:00:00:02:01) -> out1;
arpq1 :: ARPQuerier(198.51.100.1, 02:00:00:00:02:01) -> out1;
c1[1] -> [1]arpq1;
c1[2] -> Paint(2) -> Strip(14) -> CheckIPHeader(INTERFACES 192.168.1.1/24 198.51.100.1/24) -> natin;  // see NAT
c1[3] -> Discard; c1[4] -> Discard; c1[5] -> Discard;  // no IPv6 here
c1[6] -> Discard;  // neither IP nor ARP

// ---- IPv4
ip4 :: Strip(14) -> CheckIPHeader(INTERFACES 192.168.1.1/24 198.51.100.1/24) -> rt;
rt :: DirectIPLookup(
    192.168.1.1/32 0, 192.168.1.255/32 0, 192.168.1.0/32 0, 
    198.51.100.1/32 0, 198.51.100.255/32 0, 198.51.100.0/32 0, 
    255.255.255.255/32 0, 0.0.0.0/32 0,
    192.168.1.0/24 1,
    198.51.100.0/24 2);
// Addressed to the router: echo requests are answered, the rest is not ours to handle.
rt[0] -> ping :: ICMPPingResponder -> Paint(0) -> rt;
ping[1] -> Discard;

rt[1] -> DropBroadcasts -> cp0 :: PaintTee(1) -> gio0 :: IPGWOptions(192.168.1.1) -> FixIPSrc(192.168.1.1)
  -> dt0 :: DecIPTTL -> fr0 :: IPFragmenter(1400) -> [0]arpq0;
dt0[1] -> ICMPError(192.168.1.1, timeexceeded, BADADDRS 192.168.1.255 198.51.100.255) -> rt;
fr0[1] -> ICMPError(192.168.1.1, unreachable, needfrag, MTU 1400, BADADDRS 192.168.1.255 198.51.100.255) -> rt;
gio0[1] -> ICMPError(192.168.1.1, parameterproblem, BADADDRS 192.168.1.255 198.51.100.255) -> rt;
cp0[1] -> ICMPError(192.168.1.1, redirect, host, BADADDRS 192.168.1.255 198.51.100.255) -> rt;

rt[2] -> DropBroadcasts -> cp1 :: PaintTee(2) -> gio1 :: IPGWOptions(198.51.100.1) -> FixIPSrc(198.51.100.1)
  -> dt1 :: DecIPTTL -> natout :: IPClassifier(tcp or udp, icmp type echo, -);
fr1 :: IPFragmenter(1500) -> [0]arpq1;
natout[0] -> [0]nat[0] -> fr1; natout[1] -> [0]natp[0] -> fr1; natout[2] -> fr1;
dt1[1] -> ICMPError(198.51.100.1, timeexceeded, BADADDRS 192.168.1.255 198.51.100.255) -> rt;
fr1[1] -> ICMPError(198.51.100.1, unreachable, needfrag, MTU 1500, BADADDRS 192.168.1.255 198.51.100.255) -> rt;
gio1[1] -> ICMPError(198.51.100.1, parameterproblem, BADADDRS 192.168.1.255 198.51.100.255) -> rt;
cp1[1] -> ICMPError(198.51.100.1, redirect, host, BADADDRS 192.168.1.255 198.51.100.255) -> rt;

// ---- NAT: IPv4 connections routed out of eth1 leave as 198.51.100.1, ports 1024-65535 (masquerade).
// Their replies, echo replies and the ICMP errors about them come back to their hosts; anything
// else arriving on eth1 is routed as usual.
nat :: IPRewriter(pattern 198.51.100.1 1024-65535 - - 0 1, pass 1);
natp :: ICMPPingRewriter(pattern 198.51.100.1 - 0-65535 0 1, pass 1);
natin :: IPClassifier(dst host 198.51.100.1 and (tcp or udp), dst host 198.51.100.1 and icmp type echo-reply,
                      dst host 198.51.100.1 and icmp, -);
natin[0] -> [1]nat; natin[1] -> [1]natp; natin[3] -> rt;
natin[2] -> nate :: ICMPRewriter(nat natp) -> rt; nate[1] -> rt;
nat[1] -> rt; natp[1] -> rt;


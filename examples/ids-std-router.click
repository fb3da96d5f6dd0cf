// Snap's standards router with an IDS, on the CPU: the Click IP router of
// `shoal mkrouter` (ARP, header checks with the interfaces' bad source
// addresses, route lookup, packets for the router, broadcasts, redirects,
// IP options, source fixing, TTL, fragmentation to eth0's MTU of 1000, and
// every ICMP error) with an inline IDS between the header check and the
// lookup: packets that match a Snort rule are logged and dropped. The
// offloaded variant, in the shape of Snap's Figure 10, is
// examples/gpu-ids-std-router.click; both write the same frames per link.
//   shoal run examples/ids-std-router.click --stats text
define($IN examples/data/router-ids.pcap, $OUT /tmp/shoal-ids-std-router-)

// Both links in one capture: a frame's destination MAC says which
// interface it came in on. Frames are read once eth0's hosts and the
// uplink's gateway have static ARP entries (the ARPQueriers take only the
// answers to their own queries, and when those come depends on timing).
src :: FromDump($IN, STOP true, ACTIVE false);
Script(write arpq0.insert 10.1.0.5 02:00:00:00:01:05, write arpq0.insert 10.1.0.6 02:00:00:00:01:06,
       write arpq0.insert 10.1.0.7 02:00:00:00:01:07, write arpq0.insert 10.1.0.8 02:00:00:00:01:08,
       write arpq1.insert 10.2.0.254 02:00:00:00:02:fe, write src.active true);
link :: Classifier(0/020000000101, 0/020000000201, 0/ffffffffffff, -);
src -> link;
link[0] -> c0; link[1] -> c1; link[2] -> c0;  // broadcasts: this capture's are eth0's
link[3] -> Discard;

// ---- eth0
out0 :: Counter -> ToDump(${OUT}eth0.pcap);
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c0[0] -> ARPResponder(10.1.0.1 02:00:00:00:01:01) -> out0;
arpq0 :: ARPQuerier(10.1.0.1, 02:00:00:00:01:01) -> out0;
c0[1] -> [1]arpq0;
c0[2] -> Paint(1) -> ip4;
c0[3] -> Discard;

// ---- eth1
out1 :: Counter -> ToDump(${OUT}eth1.pcap);
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c1[0] -> ARPResponder(10.2.0.1 02:00:00:00:02:01) -> out1;
arpq1 :: ARPQuerier(10.2.0.1, 02:00:00:00:02:01) -> out1;
c1[1] -> [1]arpq1;
c1[2] -> Paint(2) -> ip4;
c1[3] -> Discard;

// ---- IPv4: header check, IDS, lookup
ip4 :: Strip(14) -> CheckIPHeader(INTERFACES 10.1.0.1/16 10.2.0.1/16)
  -> FlowIPManager  // the flows the rules' flow options ask about
  -> ids :: IDSMatcher(RULES examples/data/ids/local.rules, VARS examples/data/ids/vars.yaml, QUIET true,
                       FASTLOG ${OUT}fast.log, EVE ${OUT}eve.json);
ids[1] -> alerted :: Counter -> Discard;
ids[0] -> rt;
rt :: DirectIPLookup(
    10.1.0.1/32 0, 10.1.255.255/32 0, 10.1.0.0/32 0,
    10.2.0.1/32 0, 10.2.255.255/32 0, 10.2.0.0/32 0,
    255.255.255.255/32 0, 0.0.0.0/32 0,
    10.1.0.0/16 1, 10.2.0.0/16 2, 0.0.0.0/0 10.2.0.254 2);

// Addressed to the router: echo requests are answered, the rest is not ours to handle.
rt[0] -> ping :: ICMPPingResponder -> Paint(0) -> rt;
ping[1] -> Discard;

rt[1] -> DropBroadcasts -> cp0 :: PaintTee(1) -> gio0 :: IPGWOptions(10.1.0.1) -> FixIPSrc(10.1.0.1)
  -> dt0 :: DecIPTTL -> fr0 :: IPFragmenter(1000) -> [0]arpq0;
dt0[1] -> ICMPError(10.1.0.1, timeexceeded, BADADDRS 10.1.255.255 10.2.255.255) -> rt;
fr0[1] -> ICMPError(10.1.0.1, unreachable, needfrag, MTU 1000, BADADDRS 10.1.255.255 10.2.255.255) -> rt;
gio0[1] -> ICMPError(10.1.0.1, parameterproblem, BADADDRS 10.1.255.255 10.2.255.255) -> rt;
cp0[1] -> ICMPError(10.1.0.1, redirect, host, BADADDRS 10.1.255.255 10.2.255.255) -> rt;

rt[2] -> DropBroadcasts -> cp1 :: PaintTee(2) -> gio1 :: IPGWOptions(10.2.0.1) -> FixIPSrc(10.2.0.1)
  -> dt1 :: DecIPTTL -> fr1 :: IPFragmenter(1500) -> [0]arpq1;
dt1[1] -> ICMPError(10.2.0.1, timeexceeded, BADADDRS 10.1.255.255 10.2.255.255) -> rt;
fr1[1] -> ICMPError(10.2.0.1, unreachable, needfrag, MTU 1500, BADADDRS 10.1.255.255 10.2.255.255) -> rt;
gio1[1] -> ICMPError(10.2.0.1, parameterproblem, BADADDRS 10.1.255.255 10.2.255.255) -> rt;
cp1[1] -> ICMPError(10.2.0.1, redirect, host, BADADDRS 10.1.255.255 10.2.255.255) -> rt;

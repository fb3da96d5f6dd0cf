// The IPv6 forwarding path: CheckIP6Header drops a bad version, a short
// header and a payload length past the end; LookupIP6Route picks the
// output (no route: counted drop); DecIP6HLIM answers hop limit 1 with
// ICMPv6 time exceeded; a packet over the 1280-byte link gets packet too
// big. Outputs tag the source MAC (..:60:0N).
FromDump($IN, STOP true) -> Strip(14) -> CheckIP6Header
  -> rt :: LookupIP6Route(fd01::/16 0, 2001:db8::/32 fe80::1 1);
out :: ToDump($OUT);
rt[0] -> dh :: DecIP6HLIM -> Unstrip(14) -> EtherRewrite(02:00:00:00:60:00, 02:00:00:00:00:0b) -> out;
dh[1] -> ICMP6Error(fd00::fe, timeexceeded) -> EtherEncap(0x86dd, 02:00:00:00:00:01, 02:00:00:00:00:0a) -> out;
rt[1] -> cl :: CheckLength(1280) -> DecIP6HLIM -> Unstrip(14) -> EtherRewrite(02:00:00:00:60:01, 02:00:00:00:00:0c) -> out;
cl[1] -> ICMP6Error(fd00::fe, packettoobig, MTU 1280) -> EtherEncap(0x86dd, 02:00:00:00:00:01, 02:00:00:00:00:0a) -> out;

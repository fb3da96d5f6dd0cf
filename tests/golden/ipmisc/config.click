// DropBroadcasts drops link-level broadcasts and multicasts;
// ICMPPingResponder answers echo requests (other packets to output 1);
// the rest is IP-in-IP encapsulated by IPEncap (SetIPChecksum after it
// must find nothing to change).
FromDump($IN, STOP true) -> DropBroadcasts -> CheckIPHeader(14) -> Strip(14)
  -> ping :: ICMPPingResponder -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:0a) -> out :: ToDump($OUT);
ping[1] -> IPEncap(ipip, 192.0.2.1, 198.51.100.1, TTL 33) -> MarkIPHeader -> SetIPChecksum -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:0b) -> out;

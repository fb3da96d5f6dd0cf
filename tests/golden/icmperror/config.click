// DecIPTTL -> ICMPError(timeexceeded): expiring packets are answered,
// quoting up to 576 bytes, except an ICMP error, a non-first fragment, a
// multicast destination and a zero source (RFC 1812 4.3.2.7), which are
// counted drops.
FromDump($IN, STOP true) -> CheckIPHeader(14, BADSRC 255.255.255.255) -> dt :: DecIPTTL -> out :: ToDump($OUT);
dt[1] -> err :: ICMPError(10.0.0.254, timeexceeded)
      -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:0a) -> out;

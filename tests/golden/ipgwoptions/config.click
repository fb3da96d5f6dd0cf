// IPGWOptions(10.0.0.254): record route gets our address where there is
// room, a loose source route addressed to us moves to its next hop, a
// strict route not for us and unknown options pass untouched, and an
// option that overruns the header becomes ICMP parameter problem with the
// pointer at the bad option.
FromDump($IN, STOP true) -> MarkIPHeader(14) -> gw :: IPGWOptions(10.0.0.254) -> out :: ToDump($OUT);
gw[1] -> ICMPError(10.0.0.254, parameterproblem)
      -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:0a) -> out;

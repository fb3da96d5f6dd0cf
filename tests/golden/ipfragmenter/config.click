// IPFragmenter at MTU 100 and at MTU 36: small packets pass, large ones
// split on 8-byte boundaries (later fragments keep only copied options),
// fragments are refragmented keeping their offset and MF, DF packets get
// ICMP fragmentation needed (at 100) or a counted drop (at 36), and a
// header plus 8 bytes that exceeds the MTU is a counted drop. The
// Ethernet header is copied to every fragment.
FromDump($IN, STOP true) -> CheckIPHeader(14) -> t :: Tee(2);
t[0] -> fr :: IPFragmenter(100) -> out :: ToDump($OUT);
fr[1] -> ICMPError(10.0.0.254, unreachable, needfrag, MTU 100)
      -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:0a) -> out;
t[1] -> tiny :: IPFragmenter(36) -> out;

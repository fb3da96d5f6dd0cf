// NAT for 10.0.0.0/8 behind 1.0.0.1: TCP and UDP leave with ports from 1024
// in turn (one pattern, so UDP takes the next port), their replies come back
// to the inside hosts, an unsolicited packet is dropped, an ICMP error about
// a rewritten datagram becomes one about the original, and a ping crosses
// with a new identifier. One packet per batch, so the capture keeps order.
FromDump($IN, STOP true, BURST 1) -> Strip(14) -> CheckIPHeader
  -> c :: IPClassifier(src net 10.0.0.0/8 and (tcp or udp), src net 10.0.0.0/8 and icmp type echo,
                       dst host 1.0.0.1 and icmp type echo-reply, dst host 1.0.0.1 and icmp, dst host 1.0.0.1, -);
rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
ping :: ICMPPingRewriter(pattern 1.0.0.1 - 0-65535# 0 1, drop);
out :: EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:02) -> ToDump($OUT);
c[0] -> [0]rw; c[1] -> [0]ping; c[2] -> [1]ping; c[4] -> [1]rw; c[5] -> Discard;
c[3] -> ICMPRewriter(rw ping) -> out;
rw[0] -> out; rw[1] -> out; ping[0] -> out; ping[1] -> out;

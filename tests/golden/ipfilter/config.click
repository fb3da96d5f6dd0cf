// IPFilter, then IPClassifier on what it lets through to output 3. Each
// output tags the frame's source MAC (..:f0:0N for the filter, ..:c0:0N
// for the classifier) so the output pcap shows every decision; denied
// packets and non-first fragments are counted drops.
FromDump($IN, STOP true) -> MarkIPHeader(14)
  -> f :: IPFilter(0 tcp dst port www && syn && !ack,
                   1 tcp dst port www or ssh,
                   deny ip frag && ip[6:2] & 0x1fff != 0,
                   2 src net 172.16.0.0/12 && udp && (dst port domain or src port ntp),
                   deny icmp type echo,
                   3 all);
out :: ToDump($OUT);
f[0] -> EtherRewrite(02:00:00:00:f0:00, 02:00:00:00:00:01) -> out;
f[1] -> EtherRewrite(02:00:00:00:f0:01, 02:00:00:00:00:01) -> out;
f[2] -> EtherRewrite(02:00:00:00:f0:02, 02:00:00:00:00:01) -> out;
f[3] -> c :: IPClassifier(icmp type echo-reply or timeexceeded, ip proto 47, transp[0:2] == 1234, -);
c[0] -> EtherRewrite(02:00:00:00:c0:00, 02:00:00:00:00:01) -> out;
c[1] -> EtherRewrite(02:00:00:00:c0:01, 02:00:00:00:00:01) -> out;
c[2] -> EtherRewrite(02:00:00:00:c0:02, 02:00:00:00:00:01) -> out;
c[3] -> EtherRewrite(02:00:00:00:c0:03, 02:00:00:00:00:01) -> out;

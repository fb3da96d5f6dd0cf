// A stateless firewall on a pcap: Click's IPFilter rules (tcpdump-like
// patterns, compiled into a decision DAG) split the bundled capture into
// what is allowed, what is logged, and what is denied (counted drops).
// Run: shoal run examples/firewall.click --stats text
define($IN examples/data/mixed.pcap)
FromDump($IN, STOP true)
  -> Strip(14)
  -> CheckIPHeader
  -> fw :: IPFilter(deny ip frag && ip[6:2] & 0x1fff < 8,   // tiny non-first fragments
                    allow tcp && (dst port www or https or ssh),
                    allow udp && dst port domain,
                    1 icmp type echo or echo-reply,
                    deny src net 10.0.0.0/8 && dst port < 1024,
                    allow all);
fw[0] -> allowed :: Counter -> Discard;
fw[1] -> pings :: Counter -> Discard;

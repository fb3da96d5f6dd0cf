// One packet per batch, so the capture's order is the order of events.
// IP6NDAdvertiser answers a solicitation for fd00::fe (hop limit 255 only);
// IP6NDSolicitor holds IPv6 packets for fd00::1, solicits its
// solicited-node group, and sends them when the advertisement comes.
FromDump($IN, STOP true, BURST 1) -> c :: Classifier(12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd);
out :: ToDump($OUT);
c[0] -> IP6NDAdvertiser(fd00::fe 02:00:00:00:00:01) -> out;
c[1] -> [1]nd :: IP6NDSolicitor(fd00::fe, 02:00:00:00:00:01) -> out;
c[2] -> Strip(14) -> CheckIP6Header -> LookupIP6Route(fd00::/64 0) -> nd;

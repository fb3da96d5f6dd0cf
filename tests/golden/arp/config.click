// One packet per batch, so the capture's order is the order of events.
// ARPResponder answers requests for 10.0.0.254 (others are counted drops);
// ARPQuerier holds IP packets for an unresolved next hop, sends one query,
// and releases them when the reply comes; an unsolicited reply teaches it
// nothing, so the packet for 10.0.0.3 still waits for its own query.
FromDump($IN, STOP true, BURST 1) -> c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800);
out :: ToDump($OUT);
c[0] -> ARPResponder(10.0.0.254 02:00:00:00:00:01) -> out;
c[1] -> [1]q :: ARPQuerier(10.0.0.254, 02:00:00:00:00:01) -> out;
c[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> q;

// Generator -> Classifier -> Counter -> Discard (a bench entry). Classifies
// by Ethernet type and IP protocol with Click's offset/value patterns.
define($LENGTH 64, $FLOWS 1024, $LIMIT 5000000, $BURST 32)
FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, LIMIT $LIMIT, BURST $BURST, STOP true, PROTO mix)
  -> cl :: Classifier(12/0806,            // ARP
                      12/0800 23/06,      // TCP
                      12/0800 23/11,      // UDP
                      12/0800,            // other IPv4
                      -);
cl[0] -> arp :: Counter -> Discard;
cl[1] -> tcp :: Counter -> Discard;
cl[2] -> udp :: Counter -> Discard;
cl[3] -> ip :: Counter -> Discard;
cl[4] -> other :: Counter -> Discard;

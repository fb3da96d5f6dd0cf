// The demo: split a capture by transport protocol, count each class, and
// write one pcap per class. Run with IN=file.pcap OUT=prefix/.
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-demo-)

src :: FromDump($IN, STOP true)
  -> all :: Counter
  -> proto :: Classifier(12/0800 23/06,   // IPv4 TCP
                         12/0800 23/11,   // IPv4 UDP
                         -);              // everything else

proto[0] -> tcp :: Counter -> ToDump(${OUT}tcp.pcap);
proto[1] -> udp :: Counter -> ToDump(${OUT}udp.pcap);
proto[2] -> other :: Counter -> ToDump(${OUT}other.pcap);

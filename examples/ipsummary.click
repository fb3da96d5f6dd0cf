// Capture to Click's IP summary text and back to packets.
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-)
FromDump($IN, STOP true)
  -> ToIPSummaryDump(${OUT}summary.txt, CONTENTS timestamp ip_src sport ip_dst dport ip_proto ip_len tcp_flags payload_len);

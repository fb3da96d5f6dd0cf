// Copy a capture through a push/pull pipeline: FromDump pushes into a Queue,
// Unqueue pulls batches out, ToDump writes them (nanosecond timestamps kept).
// DriverManager waits for FromDump's stop request, then prints the counts.
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-)
FromDump($IN, STOP true) -> in :: Counter -> q :: Queue(4096) -> Unqueue(BURST 64) -> out :: Counter -> ToDump(${OUT}copy.pcap);
DriverManager(wait_stop, wait 10ms, print "read" $(in.count) "wrote" $(out.count) "queue" $(q.length), stop);

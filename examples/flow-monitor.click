// A flow monitor: one Zeek conn.log record per connection, as each ends (or
// at the end of the capture), and each TCP connection's two byte streams
// reassembled into files named as tcpflow names them.
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-)
FromDump($IN, STOP true)
  -> flows :: FlowIPManager(CAPACITY 100000)
  -> tcp :: TCPReassembler(POLICY first)
  -> TCPStreamDump(${OUT}streams)
  -> FlowLog(${OUT}conn.log)
  -> Discard;

// A UDP tunnel entry offloaded in NBA's form, showing the datablocks beyond
// ROI ranges: UDPIPEncap sends each packet to the device whole, with 28
// bytes of room in front (a "whole packet with size delta"); the device
// pushes the outer IPv4 and UDP headers and checksums the whole packet; the
// host applies the new start and length. The IP IDs travel in a user
// pre-function block, assigned on the host in packet order, so the output
// is byte for byte what the CPU element writes.
//   e.offload_chain: the resizable range and the block;
//   e.offload_h2d_bytes, e.offload_d2h_bytes: bytes moved.
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-tunnel.pcap)

FromDump($IN, STOP true)
  -> OffloadBalancer(FRACTION 1)
  -> e :: UDPIPEncap(192.0.2.1, 5000, 198.51.100.7, 5000)
  -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:02)
  -> c :: Counter
  -> ToDump($OUT);

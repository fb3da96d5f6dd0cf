// The IPv4 fast path offloaded in Snap's form: packets are collected into
// aggregates, only the bytes the device elements declared (the IP header
// for the check, the TTL word for the decrement, the DST_IP annotation for
// the lookup) cross to the device, the results come back in order, and a
// Dispatcher sends each packet out by the predicate bit its route set.
// Runs on CUDA when a GPU is usable, else on the host backend (same kernels
// on CPU threads): `shoal run examples/gpu-router-snap.click --device host`.
//   h.h2d_bytes / h.packets: bytes moved per packet; h.chain: the ROI union.
define($IN examples/data/mixed.pcap, $OUT /tmp/shoal-snap-)

FromDump($IN, STOP true)
  -> Batcher(4096, 100us)
  -> h :: HostToDevice(INFLIGHT 8)
  -> GPUCheckIPHeader(14)
  -> GPUIPLookup(10.1.0.0/16 0, 10.2.0.0/16 10.2.0.254 1, 0.0.0.0/0 10.9.9.9 1)
  -> GPUDecIPTTL
  -> DeviceToHost
  -> cq :: CompletionQueue
  -> Debatcher
  -> d :: Dispatcher(0, 1);
d[0] -> EtherRewrite(SRC 02:00:00:00:01:01, DST 02:00:00:00:01:02) -> c0 :: Counter -> ToDump(${OUT}port0.pcap);
d[1] -> EtherRewrite(SRC 02:00:00:00:02:01, DST 02:00:00:00:02:02) -> c1 :: Counter -> ToDump(${OUT}port1.pcap);

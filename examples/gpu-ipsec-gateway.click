// examples/ipsec-gateway.click with both ESP transforms offloaded (NBA's
// IPsec gateway): after each balancer, batches for the device cross to it
// whole. Inbound, the host finds each packet's SA and checks the replay
// window, the device checks the ICV and decrypts, the host updates the
// window and takes the packet apart; outbound, the host picks each packet's
// policy, SA and sequence number and the device's ESP kernels pad, lay out
// and seal it. AES-GCM and AES-CTR with HMAC run on the device, an SA with
// another suite on the host; the same bytes as the CPU gateway's. Runs on
// CUDA when a GPU is usable, else on the host backend (the same kernels on
// CPU threads):
//   shoal run examples/gpu-ipsec-gateway.click --device host --stats text
//   inbound.device_opened, outbound.device_sealed (and host_*): where.
define($IN examples/data/ipsec/gateway.pcap, $OUT /tmp/shoal-gpu-ipsec-gateway-,
       $SAD examples/data/ipsec/gateway.sad)

FromDump($IN, STOP true)
  -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
  -> OffloadBalancer(FRACTION 1)
  -> inbound :: IPsecInbound(SAD $SAD)
  -> DecIPTTL
  -> OffloadBalancer(FRACTION 1)
  -> outbound :: IPsecOutbound(SAD $SAD)
  -> rt :: DirectIPLookup(10.1.0.0/16 0, 192.0.2.0/24 1, 0.0.0.0/0 192.0.2.254 1);
rt[0] -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:0a) -> lan :: Counter -> ToDump(${OUT}lan.pcap);
rt[1] -> EtherEncap(0x0800, 02:00:00:00:01:01, 02:00:00:00:01:fe) -> wan :: Counter -> ToDump(${OUT}wan.pcap);

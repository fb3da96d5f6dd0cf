// examples/ipsec-gateway.click's graph with one output: ESP from site B
// decrypted (or dropped as replay, integrity, unknown SPI, policy-mismatch),
// site A's traffic to site B encrypted with AES-128-GCM (IVs from the
// sequence numbers, so the bytes are the same every run), the rest routed
// in the clear. Source MACs say the port: ..:00:01 LAN, ..:01:01 WAN.
// tests/scripts/ipsec_oracle.py checks the transform itself against scapy.
FromDump($IN, STOP true)
  -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
  -> IPsecInbound(SAD examples/data/ipsec/gateway.sad, VERBOSE false)
  -> DecIPTTL
  -> IPsecOutbound(SAD examples/data/ipsec/gateway.sad, VERBOSE false)
  -> rt :: DirectIPLookup(10.1.0.0/16 0, 192.0.2.0/24 1, 0.0.0.0/0 192.0.2.254 1);
out :: ToDump($OUT);
rt[0] -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:0a) -> out;
rt[1] -> EtherEncap(0x0800, 02:00:00:00:01:01, 02:00:00:00:01:fe) -> out;

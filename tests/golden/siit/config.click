// Stateless IPv4/IPv6 translation (RFC 7915) under NAT64's prefix: IPv4
// frames leave as IPv6 (source MAC ..:46:00), IPv6 frames as IPv4
// (..:64:00); what cannot be translated is a counted drop by reason.
FromDump($IN, STOP true) -> c :: Classifier(12/0800, 12/86dd, -);
out :: ToDump($OUT);
c[0] -> Strip(14) -> CheckIPHeader -> ProtocolTranslator46(PREFIX 64:ff9b::/96)
  -> EtherEncap(0x86dd, 02:00:00:00:46:00, 02:00:00:00:00:0b) -> out;
c[1] -> Strip(14) -> CheckIP6Header -> ProtocolTranslator64(PREFIX 64:ff9b::/96)
  -> EtherEncap(0x0800, 02:00:00:00:64:00, 02:00:00:00:00:0a) -> out;
c[2] -> Discard;

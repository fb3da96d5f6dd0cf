// IPReassembler then TunnelDecap: fragments out of order (IPv4, IPv6) give
// their datagrams back, overlaps follow the bsd policy, a datagram that never
// completes stays held (its fragment counted), and tunnel packets are
// followed by their inner packets (IP-in-IP, GRE).
FromDump($IN, STOP true) -> re :: IPReassembler -> TunnelDecap -> ToDump($OUT);

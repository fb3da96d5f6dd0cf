// IPv4 input checks, then TTL decrement: bad headers and expiring TTLs are
// dropped with their reasons; good packets lose Ethernet padding and leave
// with TTL - 1 and a checksum updated incrementally.
FromDump($IN, STOP true) -> CheckIPHeader(14) -> DecIPTTL -> ToDump($OUT);

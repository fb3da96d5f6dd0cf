#!/usr/bin/python3
# Writes the in.pcap of the golden cases built with scapy (run from the
# repository root: /usr/bin/python3 tests/golden/make_inputs.py). The
# expected outputs come from `UPDATE=1 tests/scripts/golden.sh` and were
# checked by hand and with tshark when they were made. GOLDEN_ONLY=CASE
# writes that case's alone.
import os
from scapy.all import Ether, IP, IPOption, UDP, TCP, ICMP, Raw, IPv6, ICMPv6EchoRequest, \
    ICMPv6ND_NS, ICMPv6NDOptSrcLLAddr, wrpcap, fragment

MAC_A, MAC_R = "02:00:00:00:00:0a", "02:00:00:00:00:01"
E = Ether(src=MAC_A, dst=MAC_R)


def write(case, pkts):
    if os.environ.get("GOLDEN_ONLY", case) != case:  # (GOLDEN_ONLY=CASE: that case's input alone)
        return
    os.makedirs(f"tests/golden/{case}", exist_ok=True)
    for i, p in enumerate(pkts):
        p.time = 1700000000 + i / 1000
    wrpcap(f"tests/golden/{case}/in.pcap", pkts)


def overrun(p):
    """The first option's length byte made 40: past the end of the header."""
    b = bytearray(bytes(p))
    b[14 + 21] = 40
    q = Ether(bytes(b))
    del q[IP].chksum
    return Ether(bytes(q))


def payload(n):
    return Raw(bytes((i * 7) & 0xff for i in range(n)))


# IPFragmenter(100): small, large, DF, a fragment to refragment, options
# with and without the copy bit, and a 64-byte MTU case in the config.
write("ipfragmenter", [
    E / IP(src="10.0.0.1", dst="10.9.0.1", id=1) / UDP(sport=1, dport=2) / payload(40),
    E / IP(src="10.0.0.1", dst="10.9.0.1", id=2) / UDP(sport=1, dport=2) / payload(250),
    E / IP(src="10.0.0.1", dst="10.9.0.1", id=3, flags="DF") / UDP(sport=1, dport=2) / payload(250),
    E / IP(src="10.0.0.1", dst="10.9.0.1", id=4, flags="MF", frag=10) / payload(200),
    E / IP(src="10.0.0.1", dst="10.9.0.1", id=5, frag=40) / payload(150),
    # options: security-like (copied, type 0x82 len 4) and record route (not copied)
    E / IP(src="10.0.0.1", dst="10.9.0.1", id=6,
           options=[IPOption(b"\x82\x04\xaa\xbb"), IPOption(b"\x07\x07\x04\x00\x00\x00\x00"), IPOption(b"\x00")])
      / UDP(sport=1, dport=2) / payload(200),
    E / IP(src="10.0.0.1", dst="10.9.0.1", id=7) / TCP(sport=1, dport=2, flags="A") / payload(93),
])

# DecIPTTL -> ICMPError: expiring TTLs answered with time exceeded, except
# where RFC 1812 forbids an error.
write("icmperror", [
    E / IP(src="10.0.0.1", dst="10.9.0.1", ttl=1) / UDP(sport=1, dport=2) / payload(20),
    E / IP(src="10.0.0.1", dst="10.9.0.1", ttl=5) / UDP(sport=1, dport=2) / payload(20),
    E / IP(src="10.0.0.1", dst="10.9.0.1", ttl=1) / ICMP(type=3, code=1) / IP(src="10.9.0.1", dst="10.0.0.1") / UDP(),
    E / IP(src="10.0.0.1", dst="10.9.0.1", ttl=1) / ICMP(type=8, id=9, seq=1) / payload(600),
    E / IP(src="10.0.0.1", dst="10.9.0.1", ttl=1, frag=20) / payload(30),
    E / IP(src="10.0.0.1", dst="224.0.0.9", ttl=1) / UDP(sport=520, dport=520) / payload(20),
    E / IP(src="0.0.0.0", dst="10.9.0.1", ttl=1) / UDP(sport=68, dport=67) / payload(20),
    E / IP(src="10.0.0.1", dst="10.9.0.1", ttl=1, options=[IPOption(b"\x01\x01\x01\x00")]) / TCP(sport=5, dport=6),
])

# IPGWOptions(10.0.0.254): record route with room and full, loose source
# route through us, strict route not for us, a length that overruns the
# header, and an unknown option (passed).
write("ipgwoptions", [
    E / IP(src="10.0.0.1", dst="10.9.0.1", options=[IPOption(b"\x07\x0b\x04" + bytes(8)), IPOption(b"\x00")]) / UDP(),
    E / IP(src="10.0.0.1", dst="10.9.0.1", options=[IPOption(b"\x07\x07\x08\x01\x02\x03\x04"), IPOption(b"\x00")]) / UDP(),
    E / IP(src="10.0.0.1", dst="10.0.0.254",
           options=[IPOption(b"\x83\x0b\x04\x0a\x09\x00\x05\x0a\x09\x00\x01"), IPOption(b"\x00")]) / UDP(),
    E / IP(src="10.0.0.1", dst="10.7.0.1",
           options=[IPOption(b"\x89\x07\x04\x0a\x09\x00\x05"), IPOption(b"\x00")]) / UDP(),
    overrun(E / IP(src="10.0.0.1", dst="10.9.0.1", options=[IPOption(b"\x07\x07\x04" + bytes(4)), IPOption(b"\x00")]) / UDP()),
    E / IP(src="10.0.0.1", dst="10.9.0.1", options=[IPOption(b"\x99\x04\x00\x00")]) / UDP(),
    E / IP(src="10.0.0.1", dst="10.9.0.1") / UDP(),
])

# IPFilter and IPClassifier over a mixed set: ports, flags, fragments,
# ICMP types, networks, truncated transport headers.
f = []
for sport, dport, flags in [(1234, 80, "S"), (1234, 80, "A"), (1234, 22, "S"), (22, 40000, "SA"), (5, 443, "F")]:
    f.append(E / IP(src="10.1.2.3", dst="192.168.1.10") / TCP(sport=sport, dport=dport, flags=flags))
f.append(E / IP(src="172.16.0.9", dst="192.168.1.10") / UDP(sport=5353, dport=53) / payload(12))
f.append(E / IP(src="172.16.0.9", dst="192.168.1.10") / UDP(sport=123, dport=123) / payload(48))
f.append(E / IP(src="8.8.8.8", dst="192.168.1.10") / ICMP(type=0) / payload(8))
f.append(E / IP(src="8.8.8.8", dst="192.168.1.10") / ICMP(type=8) / payload(8))
f.append(E / IP(src="8.8.8.8", dst="192.168.1.10") / ICMP(type=11) / payload(28))
big = IP(src="10.1.2.3", dst="192.168.1.10", id=77) / TCP(sport=1234, dport=80, flags="PA") / payload(300)
f += [E / x for x in fragment(big, fragsize=200)]
f.append(E / IP(src="10.200.0.1", dst="192.168.7.7", proto=47) / payload(20))
t = E / IP(src="10.1.2.3", dst="192.168.1.10") / TCP(sport=1234, dport=80)
f.append(Ether(bytes(t)[:14 + 20 + 2]))  # transport header cut after the source port
write("ipfilter", f)

# The IPv6 path: CheckIP6Header (bad version, short, payload length past
# the end), DecIP6HLIM with ICMP6Error time exceeded, LookupIP6Route to two
# outputs and a packet too big for the 1280-byte link.
E6 = Ether(src=MAC_A, dst=MAC_R)
write("ip6-router", [
    E6 / IPv6(src="fd00::1", dst="fd01::5", hlim=64) / UDP(sport=1, dport=2) / payload(10),
    E6 / IPv6(src="fd00::1", dst="2001:db8::7", hlim=64) / UDP(sport=1, dport=2) / payload(10),
    E6 / IPv6(src="fd00::1", dst="fd01::5", hlim=1) / UDP(sport=1, dport=2) / payload(10),
    E6 / IPv6(src="fd00::1", dst="2001:db8::7", hlim=9) / ICMPv6EchoRequest() / payload(1400),
    E6 / IPv6(src="fd00::1", dst="3000::1", hlim=9) / UDP(),
    Ether(src=MAC_A, dst=MAC_R, type=0x86dd) / Raw(b"\x40" + bytes(47)),
    Ether(src=MAC_A, dst=MAC_R, type=0x86dd) / Raw(bytes(bytes(IPv6(src="fd00::1", dst="fd01::5", plen=100) / UDP()))[:60]),
    Ether(src=MAC_A, dst=MAC_R, type=0x86dd) / Raw(b"\x60\x00"),
])

# Every IPv4 lookup element on one table: addresses at prefix edges, /0,
# /32, nested prefixes.
dsts = ["10.0.0.0", "10.0.0.255", "10.0.1.0", "10.1.255.255", "10.2.0.0", "192.168.1.1", "192.168.1.2",
        "192.168.1.3", "172.16.0.1", "1.1.1.1", "255.255.255.255", "0.0.0.0"]
write("iplookup", [E / IP(src="10.0.0.1", dst=d) / UDP(sport=1, dport=2) for d in dsts])

# ICMPPingResponder, IPEncap, SetIPAddress/GetIPAddress, DropBroadcasts.
write("ipmisc", [
    E / IP(src="10.0.0.1", dst="10.0.0.254") / ICMP(type=8, id=7, seq=1) / payload(32),
    E / IP(src="10.0.0.1", dst="10.0.0.254") / ICMP(type=8, id=7, seq=2) / payload(0),
    E / IP(src="10.0.0.1", dst="10.0.0.254") / ICMP(type=0, id=7, seq=3) / payload(8),
    E / IP(src="10.0.0.1", dst="10.0.0.254") / UDP(sport=5, dport=6) / payload(8),
    Ether(src=MAC_A, dst="ff:ff:ff:ff:ff:ff") / IP(src="10.0.0.1", dst="10.0.0.255") / UDP(sport=5, dport=6),
    Ether(src=MAC_A, dst="01:00:5e:00:00:09") / IP(src="10.0.0.1", dst="224.0.0.9") / UDP(sport=520, dport=520),
])

# ARPResponder and ARPQuerier: a request for us is answered; IP packets to
# an unresolved next hop wait while a query goes out; the reply releases
# them; later packets go at once; a request for another address and an
# unsolicited reply change nothing.
from scapy.all import ARP, ICMPv6ND_NA, ICMPv6NDOptDstLLAddr  # noqa: E402
BC = "ff:ff:ff:ff:ff:ff"
write("arp", [
    Ether(src=MAC_A, dst=BC) / ARP(op=1, hwsrc=MAC_A, psrc="10.0.0.1", pdst="10.0.0.254"),
    Ether(src=MAC_A, dst=BC) / ARP(op=1, hwsrc=MAC_A, psrc="10.0.0.1", pdst="10.0.0.77"),
    E / IP(src="10.9.0.1", dst="10.0.0.1") / UDP(sport=1, dport=2) / payload(10),
    E / IP(src="10.9.0.1", dst="10.0.0.1") / UDP(sport=1, dport=3) / payload(10),
    Ether(src="02:00:00:00:00:0c", dst=MAC_R) / ARP(op=2, hwsrc="02:00:00:00:00:0c", psrc="10.0.0.3",
                                                    hwdst=MAC_R, pdst="10.0.0.254"),
    Ether(src=MAC_A, dst=MAC_R) / ARP(op=2, hwsrc=MAC_A, psrc="10.0.0.1", hwdst=MAC_R, pdst="10.0.0.254"),
    E / IP(src="10.9.0.1", dst="10.0.0.1") / UDP(sport=1, dport=4) / payload(10),
    E / IP(src="10.9.0.1", dst="10.0.0.3") / UDP(sport=1, dport=5) / payload(10),
])

# IP6NDAdvertiser and IP6NDSolicitor, the same story with neighbour
# discovery; a solicitation with a hop limit below 255 is ignored.
SN = "33:33:ff:00:00:fe"
write("nd", [
    Ether(src=MAC_A, dst=SN) / IPv6(src="fd00::1", dst="ff02::1:ff00:fe", hlim=255)
      / ICMPv6ND_NS(tgt="fd00::fe") / ICMPv6NDOptSrcLLAddr(lladdr=MAC_A),
    Ether(src=MAC_A, dst=SN) / IPv6(src="fd00::1", dst="ff02::1:ff00:fe", hlim=64)
      / ICMPv6ND_NS(tgt="fd00::fe") / ICMPv6NDOptSrcLLAddr(lladdr=MAC_A),
    E / IPv6(src="fd09::1", dst="fd00::1") / UDP(sport=1, dport=2) / payload(10),
    E / IPv6(src="fd09::1", dst="fd00::1") / UDP(sport=1, dport=3) / payload(10),
    Ether(src=MAC_A, dst=MAC_R) / IPv6(src="fd00::1", dst="fd00::fe", hlim=255)
      / ICMPv6ND_NA(tgt="fd00::1", R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=MAC_A),
    E / IPv6(src="fd09::1", dst="fd00::1") / UDP(sport=1, dport=4) / payload(10),
])

# IPReassembler then TunnelDecap: an IPv4 datagram in three fragments out of
# order, an IPv6 one in two, overlapping IPv4 fragments (bsd: the later one,
# starting earlier, wins: the A bytes), a fragment whose datagram never completes, then
# an IP-in-IP and a GRE packet followed by their inner packets.
from scapy.all import fragment6, IPv6ExtHdrFragment, GRE  # noqa: E402
v4 = fragment(IP(src="10.0.0.1", dst="10.9.0.1", id=7) / UDP(sport=1, dport=2) / payload(300), fragsize=120)
v6 = fragment6(IPv6(src="fd00::1", dst="fd09::1") / IPv6ExtHdrFragment(id=9) / UDP(sport=1, dport=2)
               / payload(200), 160)
ov = [IP(src="10.0.0.2", dst="10.9.0.1", id=8, flags="MF", frag=0, proto=17) / Raw(b"A" * 16),
      IP(src="10.0.0.2", dst="10.9.0.1", id=8, frag=2, proto=17) / Raw(b"B" * 8),
      IP(src="10.0.0.2", dst="10.9.0.1", id=8, flags="MF", frag=1, proto=17) / Raw(b"C" * 8)]
write("ipreassembler", [E / v4[2], E / v4[0], E / v4[1]]
      + [Ether(src=MAC_A, dst=MAC_R, type=0x86dd) / f for f in reversed(v6)]
      + [E / ov[2], E / ov[1], E / ov[0]]
      + [E / IP(src="10.0.0.3", dst="10.9.0.1", id=10, flags="MF", proto=17) / Raw(b"x" * 64)]
      + [E / IP(src="192.0.2.1", dst="192.0.2.2") / IP(src="10.0.0.4", dst="10.9.0.1") / UDP(sport=3, dport=4)
         / payload(20),
         E / IP(src="192.0.2.1", dst="192.0.2.2") / GRE() / IP(src="10.0.0.5", dst="10.9.0.1")
         / UDP(sport=5, dport=6) / payload(20)])

# NAT: inside TCP and UDP flows leave as 1.0.0.1 with ports in turn, their
# replies come back, an unsolicited packet is dropped, an ICMP error about a
# rewritten datagram is rewritten to be about the original, and a ping
# crosses with a new identifier and back.
OUT_MAC = "02:00:00:00:00:0b"
write("nat", [
    E / IP(src="10.0.0.5", dst="8.8.4.4") / TCP(sport=3000, dport=80, flags="S", seq=100),
    E / IP(src="10.0.0.6", dst="8.8.8.8") / UDP(sport=5353, dport=53) / payload(12),
    Ether(src=OUT_MAC, dst=MAC_R) / IP(src="8.8.4.4", dst="1.0.0.1") / TCP(sport=80, dport=1024, flags="SA",
                                                                          seq=500, ack=101),
    Ether(src=OUT_MAC, dst=MAC_R) / IP(src="8.8.8.8", dst="1.0.0.1") / UDP(sport=53, dport=1025) / payload(20),
    Ether(src=OUT_MAC, dst=MAC_R) / IP(src="8.8.4.4", dst="1.0.0.1") / TCP(sport=80, dport=2000, flags="S"),
    Ether(src=OUT_MAC, dst=MAC_R) / IP(src="9.9.9.9", dst="1.0.0.1") / ICMP(type=3, code=3)
      / IP(src="1.0.0.1", dst="8.8.8.8") / UDP(sport=1025, dport=53) / payload(12),
    E / IP(src="10.0.0.7", dst="8.8.8.8") / ICMP(type=8, id=77, seq=1) / payload(8),
    Ether(src=OUT_MAC, dst=MAC_R) / IP(src="8.8.8.8", dst="1.0.0.1") / ICMP(type=0, id=0, seq=1) / payload(8),
])

# GPUNFV's chain (Firewall -> FlowRateLimiter -> FlowIPLoadBalancer): admitted
# TCP and UDP connections to the VIP go to their backends (each connection's
# packets to one), replies and an ICMP error about an admitted connection
# pass unchanged, and the drops carry their reasons: a connection no rule
# allows, a new connection without a SYN, flags no segment carries, an error
# about a denied connection, IPv6 (no rule), a frame that is not IP, and a
# flow over its rate.
VIP = "10.1.0.1"
write("nf-chain", [
    E / IP(src="10.0.0.1", dst=VIP) / TCP(sport=1000, dport=80, flags="S", seq=1),
    E / IP(src=VIP, dst="10.0.0.1") / TCP(sport=80, dport=1000, flags="SA", seq=9, ack=2),
    E / IP(src="10.0.0.1", dst=VIP) / TCP(sport=1000, dport=80, flags="PA", seq=2, ack=10) / payload(20),
    E / IP(src="10.0.0.2", dst=VIP) / TCP(sport=1001, dport=80, flags="S", seq=1),
    E / IP(src="10.0.0.3", dst=VIP) / TCP(sport=1002, dport=22, flags="S", seq=1),
    E / IP(src="10.0.0.4", dst=VIP) / TCP(sport=1003, dport=80, flags="A", seq=1, ack=1),
    E / IP(src="10.0.0.5", dst=VIP) / TCP(sport=1004, dport=80, flags="SF", seq=1),
    E / IP(src="10.0.0.6", dst=VIP) / UDP(sport=5353, dport=53) / payload(12),
    E / IP(src="10.0.0.6", dst=VIP) / UDP(sport=5353, dport=53) / payload(13),
    E / IP(src="10.0.0.6", dst=VIP) / UDP(sport=5353, dport=53) / payload(14),
    E / IP(src="10.0.0.6", dst=VIP) / UDP(sport=5353, dport=53) / payload(15),
    E / IP(src="10.0.0.6", dst=VIP) / UDP(sport=5353, dport=53) / payload(16),
    E / IP(src="10.9.9.9", dst="10.0.0.1") / ICMP(type=3, code=4)
      / IP(src="10.0.0.1", dst=VIP) / TCP(sport=1000, dport=80, flags="PA", seq=2),
    E / IP(src="10.9.9.9", dst="10.0.0.3") / ICMP(type=3, code=4)
      / IP(src="10.0.0.3", dst=VIP) / TCP(sport=1002, dport=22, flags="S", seq=1),
    E / IPv6(src="fd00::1", dst="fd00::2") / TCP(sport=1005, dport=80, flags="S"),
    Ether(src=MAC_A, dst="ff:ff:ff:ff:ff:ff", type=0x0806) / payload(28),
])

# An inline IPS (IDSMatcher IPS true, stream inspection on arrival): data
# held past a hole is inspected on the segment that ends it, so the drop
# rule stops the packet that completes "evil payload" while the hole is
# open (and the flow's packets after it); a retransmission that says BAD!
# over delivered, unacknowledged GOOD leaves normalized to GOOD (checksum
# updated); a clean connection passes unchanged.
C, S = "10.0.0.1", "10.9.0.1"


def tcp(src, dst, sport, dport, flags, seq, ack, data=b""):
    p = E / IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack)
    return p / Raw(data) if data else p


def handshake(sport, cseq=100, sseq=500):
    return [tcp(C, S, sport, 80, "S", cseq, 0), tcp(S, C, 80, sport, "SA", sseq, cseq + 1),
            tcp(C, S, sport, 80, "A", cseq + 1, sseq + 1)]


write("ips-inline", handshake(40001) + [
    tcp(C, S, 40001, 80, "PA", 101, 501, b"hello "),
    # a hole at 107-110, never filled
    tcp(C, S, 40001, 80, "PA", 111, 501, b"evil "),
    tcp(C, S, 40001, 80, "PA", 116, 501, b"payload"),
    tcp(C, S, 40001, 80, "PA", 123, 501, b"more"),
    tcp(S, C, 80, 40001, "A", 501, 107),
] + handshake(40002) + [
    tcp(C, S, 40002, 80, "PA", 101, 501, b"GOOD"),
    tcp(C, S, 40002, 80, "PA", 101, 501, b"BAD!"),
    tcp(S, C, 80, 40002, "A", 501, 105),
    tcp(C, S, 40002, 80, "FA", 105, 501),
    tcp(S, C, 80, 40002, "FA", 501, 106),
] + handshake(40003) + [
    tcp(C, S, 40003, 80, "PA", 101, 501, b"just some data"),
    tcp(S, C, 80, 40003, "PA", 501, 115, b"fine"),
])

# Stateless IPv4/IPv6 translation under NAT64's prefix: TCP, UDP (one
# without a checksum), ICMP echo and a port unreachable quoting UDP, a
# fragmented datagram; IPv6 UDP, echo reply and Packet Too Big back; then
# what is refused: an ICMP timestamp, a UDP fragment without a checksum, an
# IPv6 address outside the prefix, a neighbour solicitation.
from scapy.all import ICMPv6EchoReply, ICMPv6PacketTooBig  # noqa: E402
N = "64:ff9b::"
q4 = IP(src="198.51.100.7", dst="192.0.2.1") / UDP(sport=4000, dport=53) / payload(12)
q6 = IPv6(src=N + "c000:201", dst=N + "c633:6407") / UDP(sport=53, dport=4000) / payload(12)
write("siit", [
    E / IP(src="192.0.2.1", dst="198.51.100.7", tos=0x10, ttl=30) / TCP(sport=1025, dport=80, flags="S", seq=7),
    E / IP(src="192.0.2.1", dst="198.51.100.7") / UDP(sport=1, dport=2) / payload(40),
    E / IP(src="192.0.2.1", dst="198.51.100.7") / UDP(sport=1, dport=3, chksum=0) / payload(41),
    E / IP(src="192.0.2.1", dst="198.51.100.7") / ICMP(type=8, id=1, seq=2) / payload(16),
    E / IP(src="192.0.2.1", dst="198.51.100.7") / ICMP(type=3, code=3) / Raw(bytes(q4)),
] + [E / f for f in fragment(IP(src="192.0.2.1", dst="198.51.100.7", id=99) / UDP(sport=5, dport=6) / payload(200),
                              fragsize=96)] + [
    E6 / IPv6(src=N + "c633:6407", dst=N + "c000:201", hlim=40) / UDP(sport=2, dport=1) / payload(40),
    E6 / IPv6(src=N + "c633:6407", dst=N + "c000:201") / ICMPv6EchoReply(id=1, seq=2) / payload(16),
    E6 / IPv6(src=N + "c633:6407", dst=N + "c000:201") / ICMPv6PacketTooBig(mtu=1300) / Raw(bytes(q6)),
    E / IP(src="192.0.2.1", dst="198.51.100.7") / ICMP(type=13),
    E / IP(src="192.0.2.1", dst="198.51.100.7", flags="MF") / UDP(sport=1, dport=4, chksum=0) / payload(64),
    E6 / IPv6(src="2001:db8::1", dst=N + "c000:201") / UDP(sport=2, dport=1),
    E6 / IPv6(src=N + "c633:6407", dst=N + "c000:201") / ICMPv6ND_NS(tgt="fe80::1"),
])

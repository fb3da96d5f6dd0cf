#!/usr/bin/env python3
"""ProtocolTranslator46 and ProtocolTranslator64 (SIIT, RFC 7915) against
scapy: scapy builds IPv4 and IPv6 packets (TCP, UDP with and without a
checksum, ICMP echo and errors with the packet in error, fragments), Shoal
translates them, and scapy parses what comes out: each field must be what
RFC 7915 says, and every checksum what scapy computes on the translated
packet. Then IPv4 -> IPv6 -> IPv4 must give back the original transport
bytes, and what cannot be translated must be counted drops by reason.
Usage: siit_oracle.py SHOAL. Exit 77 when scapy is missing."""
import json, os, subprocess, sys, tempfile

try:
    from scapy.all import (IP, IPv6, TCP, UDP, ICMP, ICMPv6EchoRequest, ICMPv6EchoReply, ICMPv6DestUnreach,
                           ICMPv6PacketTooBig, ICMPv6ParamProblem, ICMPv6TimeExceeded, ICMPv6ND_NS,
                           IPv6ExtHdrFragment, IPv6ExtHdrRouting, Raw, fragment, rdpcap, wrpcap)
    from scapy.layers.inet6 import IPerror6, UDPerror
    from scapy.layers.inet import IPerror
except ImportError:
    print("skipped: scapy is not installed")
    sys.exit(77)

SHOAL = sys.argv[1]
tmp = tempfile.mkdtemp()
fails = 0


def check(name, ok, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else "  " + str(detail)))
    fails += 0 if ok else 1


def run(config):
    conf = os.path.join(tmp, "c.click")
    stats = os.path.join(tmp, "stats.json")
    with open(conf, "w") as f:
        f.write(config)
    p = subprocess.run([SHOAL, "run", "-q", conf, "--stats-out", stats], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit(1)
    return json.load(open(stats))


def translate(pkts, element, prefix=None):
    src, dst = os.path.join(tmp, "in.pcap"), os.path.join(tmp, "out.pcap")
    wrpcap(src, pkts)
    arg = "(PREFIX %s)" % prefix if prefix else ""
    stats = run("FromDump(%s) -> t :: %s%s -> ToDump(%s, ENCAP IP);\n" % (src, element, arg, dst))
    out = [bytes(p) for p in rdpcap(dst)] if os.path.getsize(dst) > 24 else []
    return out, stats


def checksum_ok(pkt):  # scapy's own checksums of the translated packet
    again = pkt.__class__(bytes(pkt))
    for layer in (TCP, UDP, ICMP, IP):
        if again.haslayer(layer) and hasattr(again[layer], "chksum") and not isinstance(again[layer], (IPerror, UDPerror)):
            want = again[layer].chksum
            del again[layer].chksum
            if again.__class__(bytes(again))[layer].chksum != want:
                return False
    return True


def icmp6_checksum_ok(pkt):
    again = IPv6(bytes(pkt))
    layer = again.getlayer(2) if again.haslayer(IPv6ExtHdrFragment) else again.getlayer(1)
    want = layer.cksum
    del layer.cksum
    return IPv6(bytes(again)).getlayer(again.layers().index(type(layer))).cksum == want


def l4_checksum_ok6(p6):
    a = IPv6(bytes(p6))
    for layer in (TCP, UDP):
        if a.haslayer(layer):
            want = a[layer].chksum
            del a[layer].chksum
            return IPv6(bytes(a))[layer].chksum == want
    return True


S4, D4 = "192.0.2.1", "198.51.100.7"
payload = bytes(range(200))
v4 = [
    IP(src=S4, dst=D4, tos=0x28, ttl=33, id=7) / TCP(sport=1234, dport=80, flags="PA", seq=99) / Raw(payload),
    IP(src=S4, dst=D4, ttl=64) / UDP(sport=53, dport=5353) / Raw(payload[:77]),
    IP(src=S4, dst=D4, ttl=64) / UDP(sport=53, dport=5354, chksum=0) / Raw(payload[:33]),
    IP(src=S4, dst=D4, ttl=9) / ICMP(type=8, id=5, seq=6) / Raw(b"ping data"),
]
# an ICMP port unreachable quoting a UDP datagram, and a fragmentation-needed
quoted = IP(src=D4, dst=S4, ttl=50) / UDP(sport=4000, dport=53) / Raw(b"q" * 20)
errs4 = [IP(src=S4, dst=D4, ttl=60) / ICMP(type=3, code=3) / Raw(bytes(quoted)),
         IP(src=S4, dst=D4, ttl=60) / ICMP(type=3, code=4, nexthopmtu=1400) / Raw(bytes(quoted)),
         IP(src=S4, dst=D4, ttl=60) / ICMP(type=11, code=0) / Raw(bytes(quoted))]
frags = fragment(IP(src=S4, dst=D4, id=0x4242) / UDP(sport=7, dport=9) / Raw(b"F" * 300), fragsize=128)
bad4 = [IP(src=S4, dst=D4) / ICMP(type=13),  # a timestamp request: not translated
        IP(src=S4, dst=D4, id=5, flags="MF") / UDP(sport=1, dport=2, chksum=0) / Raw(b"x" * 64)]  # UDP fragment, no checksum

out6, st = translate(v4 + errs4 + frags + bad4, "ProtocolTranslator46")
drops = st["drops"].get("t", {})
check("4->6: every translatable packet out, two dropped by reason", len(out6) == len(v4) + len(errs4) + len(frags)
      and drops.get("icmp-untranslatable") == 1 and drops.get("udp-no-checksum-fragment") == 1, (len(out6), drops))
check("4->6: accounting balanced", st["accounting"]["balanced"], st["accounting"])
p6 = [IPv6(b) for b in out6]
tcp6 = p6[0]
check("4->6 TCP: ::ffff: addresses, TC = TOS, hop limit = TTL, payload kept",
      tcp6.src == "::ffff:" + S4 and tcp6.dst == "::ffff:" + D4 and tcp6.tc == 0x28 and tcp6.hlim == 33
      and tcp6.nh == 6 and bytes(tcp6[TCP].payload) == payload, tcp6.summary())
check("4->6 TCP and UDP checksums as scapy computes them", all(l4_checksum_ok6(p) for p in p6[:3]))
check("4->6 UDP without a checksum gets one", p6[2][UDP].chksum != 0 and l4_checksum_ok6(p6[2]))
check("4->6 echo request -> ICMPv6 128, checksum right",
      p6[3].haslayer(ICMPv6EchoRequest) and p6[3][ICMPv6EchoRequest].id == 5 and icmp6_checksum_ok(p6[3]), p6[3].summary())
pu = p6[4]
check("4->6 port unreachable -> ICMPv6 1/4, the quoted UDP datagram translated",
      pu.haslayer(ICMPv6DestUnreach) and pu[ICMPv6DestUnreach].code == 4 and pu.haslayer(IPerror6)
      and pu[IPerror6].src == "::ffff:" + D4 and pu[IPerror6].nh == 17 and icmp6_checksum_ok(pu), pu.summary())
ptb = p6[5]
check("4->6 fragmentation needed (MTU 1400) -> Packet Too Big, MTU 1420",
      ptb.haslayer(ICMPv6PacketTooBig) and ptb[ICMPv6PacketTooBig].mtu == 1420 and icmp6_checksum_ok(ptb), ptb.summary())
check("4->6 time exceeded -> ICMPv6 3/0", p6[6].haslayer(ICMPv6TimeExceeded) and icmp6_checksum_ok(p6[6]))
fr = p6[7:7 + len(frags)]
check("4->6 fragments: Fragment headers with the IPv4 id, offsets and M flags",
      all(f.haslayer(IPv6ExtHdrFragment) and f[IPv6ExtHdrFragment].id == 0x4242 for f in fr)
      and [f[IPv6ExtHdrFragment].offset for f in fr] == [g.frag for g in frags]
      and [f[IPv6ExtHdrFragment].m for f in fr] == [1] * (len(frags) - 1) + [0], [f.summary() for f in fr])

# Back: 6 -> 4 restores the transport bytes (and makes valid IPv4 checksums).
back, st = translate([IPv6(b) for b in out6[:4]], "ProtocolTranslator64")
b4 = [IP(b) for b in back]
check("6->4 of the translated: 4 packets", len(b4) == 4, len(b4))
if len(b4) == 4:
    same = all(bytes(b4[i][1]) == bytes(IP(bytes(v4[i]))[1]) for i in (0, 1, 3))
    check("round trip: TCP, UDP and echo bytes (checksums included) as the originals", same)
    check("round trip: addresses, TOS, TTL; DF clear and an id below 1260 bytes",
          all(b.src == S4 and b.dst == D4 and b.flags == 0 and b.id != 0 for b in b4) and b4[0].tos == 0x28
          and b4[0].ttl == 33, [b.summary() for b in b4])
    check("6->4 checksums as scapy computes them", all(checksum_ok(b) for b in b4))
    check("the UDP checksum made for the no-checksum datagram is right in IPv4 too", checksum_ok(b4[2]) and b4[2][UDP].chksum != 0)

# 6 -> 4 on its own: ICMPv6 errors, extension headers, DF, what is refused.
M = lambda a: "::ffff:" + a  # noqa: E731
q6 = IPv6(src=M(D4), dst=M(S4), hlim=40) / UDP(sport=4000, dport=53) / Raw(b"z" * 20)
v6 = [
    IPv6(src=M(S4), dst=M(D4)) / ICMPv6PacketTooBig(mtu=1400) / Raw(bytes(q6)),
    IPv6(src=M(S4), dst=M(D4)) / ICMPv6DestUnreach(code=3) / Raw(bytes(q6)),
    IPv6(src=M(S4), dst=M(D4)) / ICMPv6ParamProblem(code=0, ptr=6) / Raw(bytes(q6)),
    IPv6(src=M(S4), dst=M(D4)) / IPv6ExtHdrRouting(segleft=0) / UDP(sport=5, dport=6) / Raw(b"r" * 40),
    IPv6(src=M(S4), dst=M(D4)) / UDP(sport=5, dport=6) / Raw(b"B" * 1300),
    IPv6(src="2001:db8::1", dst=M(D4)) / UDP(sport=5, dport=6),                  # not mapped
    IPv6(src=M(S4), dst=M(D4)) / ICMPv6ND_NS(tgt="::ffff:1.2.3.4"),              # neighbour discovery
    IPv6(src=M(S4), dst=M(D4)) / IPv6ExtHdrRouting(segleft=1, addresses=["::1"]) / UDP(),  # segments left
]
out4, st = translate(v6, "ProtocolTranslator64")
drops = st["drops"].get("t", {})
check("6->4: five out; unmapped, ND and a live routing header dropped by reason",
      len(out4) == 5 and drops.get("address-not-mapped") == 1 and drops.get("icmp-untranslatable") == 1
      and drops.get("routing-segments-left") == 1, (len(out4), drops))
if len(out4) == 5:
    o = [IP(b) for b in out4]
    check("6->4 Packet Too Big (1400) -> fragmentation needed, MTU 1380, the quoted packet IPv4",
          o[0][ICMP].type == 3 and o[0][ICMP].code == 4 and o[0][ICMP].nexthopmtu == 1380 and o[0].haslayer(IPerror)
          and o[0][IPerror].src == D4 and o[0][IPerror].proto == 17, o[0].summary())
    check("6->4 address unreachable -> 3/1", o[1][ICMP].type == 3 and o[1][ICMP].code == 1)
    check("6->4 parameter problem at the next header field (6) -> pointer 9",
          o[2][ICMP].type == 12 and o[2][ICMP].ptr == 9, o[2].summary())
    check("6->4 spent routing header skipped", o[3].proto == 17 and bytes(o[3][UDP].payload) == b"r" * 40)
    check("6->4 above 1260 bytes: DF set, id 0", o[4].flags == 2 and o[4].id == 0 and o[4].len == 20 + 8 + 1300)
    check("6->4 every checksum as scapy computes it", all(checksum_ok(x) for x in o))

# NAT64's well-known prefix.
out, _ = translate([v4[1]], "ProtocolTranslator46", "64:ff9b::/96")
check("PREFIX 64:ff9b::/96", len(out) == 1 and IPv6(out[0]).dst == "64:ff9b::c633:6407" and l4_checksum_ok6(IPv6(out[0])))
sys.exit(1 if fails else 0)

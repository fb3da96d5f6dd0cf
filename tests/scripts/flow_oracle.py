#!/usr/bin/python3
"""FlowIPManager + FlowLog against tshark's own connection tracking.

scapy makes TCP connections (handshake, data both ways, FIN or RST), UDP
exchanges (replied and one-way) and ICMP echoes, over IPv4 and IPv6, with
the connections' packets interleaved. tshark groups the packets into
connections by itself (tcp.stream, udp.stream; ICMP echoes by identifier),
and the first packet of each gives its originator. FlowLog's records, run
with 1 and with 2 worker threads (a connection must stay on one worker),
must give the same connections with the same packets and IP bytes each way.
Usage: flow_oracle.py SHOAL
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    from scapy.all import ICMP, IP, UDP, TCP, Ether, IPv6, ICMPv6EchoRequest, ICMPv6EchoReply, Raw, wrpcap
except ImportError:
    print("skipped: scapy is not installed")
    sys.exit(77)
if not shutil.which("tshark"):
    print("skipped: tshark is not installed")
    sys.exit(77)

SHOAL = sys.argv[1]
rng = random.Random(7)
E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def conversations():
    convs = []
    for i in range(120):
        v6 = i % 4 == 3
        c = "2001:db8::%x" % (i + 10) if v6 else "10.9.%d.%d" % (i // 100, i % 100 + 1)
        s = "2001:db8:ffff::%x" % (i % 7 + 1) if v6 else "192.0.2.%d" % (i % 7 + 1)
        L3 = IPv6 if v6 else IP
        kind = rng.choice(["tcp", "tcp", "udp", "udp1", "icmp"])
        cp = 30000 + i
        pk = []
        if kind == "tcp":
            a, b = rng.randint(0, 2**32 - 1), rng.randint(0, 2**32 - 1)
            pk.append(E / L3(src=c, dst=s) / TCP(sport=cp, dport=443, flags="S", seq=a))
            pk.append(E / L3(src=s, dst=c) / TCP(sport=443, dport=cp, flags="SA", seq=b, ack=a + 1))
            for _ in range(rng.randint(0, 6)):
                fwd = rng.random() < 0.5
                src, dst, sp, dp = (c, s, cp, 443) if fwd else (s, c, 443, cp)
                pk.append(E / L3(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags="PA") / Raw(os.urandom(rng.randint(1, 900))))
            pk.append(E / L3(src=c, dst=s) / TCP(sport=cp, dport=443, flags=rng.choice(["FA", "R"])))
        elif kind in ("udp", "udp1"):
            for _ in range(rng.randint(1, 5)):
                pk.append(E / L3(src=c, dst=s) / UDP(sport=cp, dport=53) / Raw(os.urandom(rng.randint(1, 300))))
                if kind == "udp":
                    pk.append(E / L3(src=s, dst=c) / UDP(sport=53, dport=cp) / Raw(os.urandom(rng.randint(1, 600))))
        else:
            for q in range(rng.randint(1, 3)):
                if v6:
                    pk.append(E / IPv6(src=c, dst=s) / ICMPv6EchoRequest(id=i, seq=q))
                    pk.append(E / IPv6(src=s, dst=c) / ICMPv6EchoReply(id=i, seq=q))
                else:
                    pk.append(E / IP(src=c, dst=s) / ICMP(type=8, id=i, seq=q))
                    pk.append(E / IP(src=s, dst=c) / ICMP(type=0, id=i, seq=q))
        convs.append(pk)
    # interleave, each conversation in its own order
    out = []
    while any(convs):
        cv = rng.choice([x for x in convs if x])
        out.append(cv.pop(0))
    return out


def tshark_connections(pcap):
    fields = ["ip.src", "ipv6.src", "ip.len", "ipv6.plen", "tcp.stream", "udp.stream", "icmp.ident", "icmpv6.echo.identifier",
              "ip.dst", "ipv6.dst"]
    args = ["tshark", "-r", pcap, "-T", "fields", "-E", "separator=|"]
    for f in fields:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    conns = {}
    for line in out.splitlines():
        v = line.split("|")
        src = v[0] or v[1]
        dst = v[8] or v[9]
        iplen = int(v[2]) if v[2] else 40 + int(v[3])
        if v[4]:
            key = ("tcp", v[4])
        elif v[5]:
            key = ("udp", v[5])
        else:
            ident = (v[6] or v[7]).split(",")[0]
            key = ("icmp", tuple(sorted([src, dst])), ident)
        c = conns.setdefault(key, {"orig": src, "pkts": [0, 0], "bytes": [0, 0]})
        d = 0 if src == c["orig"] else 1
        c["pkts"][d] += 1
        c["bytes"][d] += iplen
    return sorted((c["orig"], c["pkts"][0], c["bytes"][0], c["pkts"][1], c["bytes"][1]) for c in conns.values())


def shoal_connections(pcap, log, threads):
    cfg = "FromDump(%s, STOP true) -> FlowIPManager -> FlowLog(%s, FORMAT json) -> Discard;" % (pcap, log)
    res = subprocess.run([SHOAL, "run", "-q", "--threads", str(threads), "/dev/stdin"], input=cfg,
                         capture_output=True, text=True)
    if res.returncode != 0:
        print("FAIL: shoal exited %d: %s" % (res.returncode, res.stderr))
        sys.exit(1)
    rows = []
    for line in open(log):
        r = json.loads(line)
        rows.append((r["id.orig_h"], r["orig_pkts"], r["orig_ip_bytes"], r["resp_pkts"], r["resp_ip_bytes"]))
    return sorted(rows)


def main():
    tmp = tempfile.mkdtemp()
    try:
        pcap = os.path.join(tmp, "conns.pcap")
        pk = conversations()
        for i, p in enumerate(pk):
            p.time = 1700000000 + i * 0.001
        wrpcap(pcap, pk)
        want = tshark_connections(pcap)
        fails = 0
        for threads in (1, 2):
            got = shoal_connections(pcap, os.path.join(tmp, "conn%d.json" % threads), threads)
            if got != want:
                fails += 1
                print("FAIL with %d thread(s): %d connections, tshark %d" % (threads, len(got), len(want)))
                for a, b in zip(got, want):
                    if a != b:
                        print("  shoal %s\n  tshark %s" % (a, b))
                        break
        print("%d connections compared with tshark's, 1 and 2 threads: %d failures" % (len(want), fails))
        return 1 if fails else 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())

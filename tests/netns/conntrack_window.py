#!/usr/bin/env python3
"""TCP window tracking against the Linux kernel's conntrack.

  conntrack_window.py make PCAP
      TCP connections between 10.0.1.2 (a client in namespace H1) and
      192.0.2.2 (a server in H2), one between fd00:1::2 and fd00:2::2, with
      forged resets (before, inside and far
      from the window), data beyond the window, acknowledgements of data
      never sent, retransmissions of acknowledged data, window scaling,
      SACK, wrapping sequence numbers, a connection picked up midstream,
      segments the state table refuses, SYNs inside a connection and after
      its close (ignored and taken up again, or reopening it), and WALKS
      (default 12) seeded random walks around the windows (data, ACKs, FINs
      and resets a little or far behind or ahead). Every packet has its own
      IP id (IPv6: flow label). The walks also send SYNs and SYN-ACKs in
      random places (WALK_SYNS of their segments, default 0.03; with 120
      walks and 0.05, 15,100 packets, none differs). Two connections open
      simultaneously (conntrack's SYN_SENT2).
  conntrack_window.py inject PCAP NS1 IF1 MAC1 NS2 IF2 MAC2 OUT
      sends the packets in order, the client's from NS1's IF1 and the
      server's from NS2's IF2 (to the router's MAC1 / MAC2), and writes the
      ids of those that came out on the other side (one per line): what a
      router whose forward chain drops "ct state invalid" let through.
  conntrack_window.py make-timeouts PCAP
      connections each left in a state whose timeout conntrack shortens
      (data or a FIN unacknowledged, the same ACK again and again, a zero
      window, a reset in the window, midstream pick-ups with no reply yet)
      or does not.
  conntrack_window.py compare-timeouts PCAP KERNEL_TABLE SHOAL_FLOWS
      each connection's state and time left in the kernel's table
      (/proc/net/nf_conntrack) and in Shoal's (FlowIPManager's flows
      handler); exit 1 when one differs (by more than 3 s).
  conntrack_window.py compare PCAP KERNEL_IDS SHOAL_PCAP
      the packets each let through; exit 1 when they differ (each difference
      printed with its packet's label), or when the kernel dropped none.
"""
import ctypes
import os
import random
import socket
import sys
import time

C, S = "10.0.1.2", "192.0.2.2"
C6, S6 = "fd00:1::2", "fd00:2::2"
WALKS = int(os.environ.get("WALKS", "12"))
WALK_SYNS = float(os.environ.get("WALK_SYNS", "0.03"))


class Conn:
    """One TCP connection's segments, appended to pkts as (direction, frame, label)."""

    def __init__(self, pkts, name, sport, cisn, sisn, v6=False):
        self.pkts = pkts
        self.name, self.sport, self.v6 = name, sport, v6
        self.cs, self.ss = cisn, sisn  # next sequence number of each side

    def seg(self, d, flags="A", seq=None, ack=None, data=0, win=65535, opts=(), label="", advance=True):
        from scapy.all import IP, TCP, Ether, IPv6

        pkts = self.pkts
        own = self.ss if d else self.cs
        other = self.cs if d else self.ss
        seq = own if seq is None else seq & 0xFFFFFFFF
        ack = (other if "A" in flags else 0) if ack is None else ack & 0xFFFFFFFF
        if self.v6:  # (the flow label is the packet's id)
            ip = IPv6(src=S6, dst=C6, fl=len(pkts) + 1) if d else IPv6(src=C6, dst=S6, fl=len(pkts) + 1)
            ip.hlim = 64
        else:
            ip = IP(src=S, dst=C) if d else IP(src=C, dst=S)
            ip.ttl = 64
            ip.id = len(pkts) + 1
        tcp = TCP(sport=80 if d else self.sport, dport=self.sport if d else 80, flags=flags, seq=seq,
                  ack=ack, window=win, options=list(opts))
        frame = Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01") / ip / tcp / (b"x" * data)
        pkts.append((d, bytes(frame), f"{self.name}: {'S>C' if d else 'C>S'} {flags} seq {seq} ack {ack} "
                                      f"len {data} win {win} {label}".rstrip()))
        if advance and seq == own:
            n = data + (1 if "S" in flags else 0) + (1 if "F" in flags else 0)
            if d:
                self.ss = (self.ss + n) & 0xFFFFFFFF
            else:
                self.cs = (self.cs + n) & 0xFFFFFFFF

    def handshake(self, copts=(), sopts=()):
        self.seg(0, "S", opts=copts)
        self.seg(1, "SA", opts=sopts)
        self.seg(0, "A")

    def talk(self, n, size=1000):
        for _ in range(n):
            self.seg(0, "PA", data=size)
            self.seg(1, "PA", data=size)
            self.seg(0, "A")


def build():
    pkts = []  # (dir, frame, label)

    def conn(name, k, cisn=1000, sisn=5000, v6=False):
        return Conn(pkts, name, 20000 + k, cisn, sisn, v6)

    c = conn("normal", 1)
    c.handshake()
    c.talk(5)
    c.seg(0, "FA")
    c.seg(1, "FA")
    c.seg(0, "A")

    c = conn("blind resets", 2)
    c.handshake()
    c.talk(2, 500)
    c.seg(1, "R", seq=c.ss + 3_000_000_000, label="(far)")
    c.seg(1, "R", seq=c.ss - 1000, label="(before the acknowledged number)")
    c.seg(1, "R", seq=c.ss + 4000, label="(inside the window, not at the number)")
    c.talk(2, 500)
    c.seg(1, "RA", label="(at the number)")
    c.seg(0, "PA", data=100, label="(after the reset)")

    c = conn("beyond the window", 3)
    c.handshake()
    c.talk(1)
    c.seg(0, "PA", seq=c.cs + 200_000, data=100, label="(200 KB ahead)")
    c.seg(0, "PA", ack=c.ss + 5000, data=100, label="(acknowledges data never sent)", advance=False)
    c.seg(1, "FA", seq=c.ss + 300_000, label="(FIN far ahead)")
    c.talk(2)
    c.seg(0, "PA", seq=c.cs + 70_000, data=100, label="(ahead by less than a window)")
    c.talk(1)

    c = conn("retransmission", 4)
    c.handshake()
    first = c.cs
    for _ in range(60):
        c.seg(0, "PA", data=1400)
        c.seg(1, "A")
    c.seg(0, "PA", seq=first, data=1400, label="(84 KB old)")
    c.seg(0, "R", seq=first, label="(reset at the old number)")
    c.talk(1)

    for k, both in ((5, True), (6, False)):
        c = conn("window scale both" if both else "window scale client only", k)
        ws = [("WScale", 7), ("SAckOK", b"")]
        c.handshake(copts=ws, sopts=ws if both else [("SAckOK", b"")])
        c.seg(1, "A", win=4096)
        c.seg(0, "PA", seq=c.cs + 200_000, data=1000, label="(200 KB ahead: 512 KiB window when scaled)",
              advance=False)
        c.talk(1)

    c = conn("sack", 7)
    c.handshake(copts=[("SAckOK", b"")], sopts=[("SAckOK", b"")])
    base = c.cs
    c.seg(0, "PA", data=1400)
    c.seg(1, "A", ack=base, opts=[("SAck", (base + 500, base + 1400))], label="(SACK of sent data)")
    c.seg(1, "A", ack=base, opts=[("SAck", (base + 1000, base + 8000))], label="(SACK beyond what was sent)")
    c.talk(1)

    c = conn("wrap", 8, cisn=0xFFFFFF00, sisn=0xFFFFF000)
    c.handshake()
    c.talk(10)
    c.seg(1, "R", seq=c.ss - 100_000, label="(before)")
    c.seg(0, "PA", seq=c.cs + 300_000, data=10, label="(far ahead)")
    c.talk(1)

    c = conn("midstream", 9, cisn=70000, sisn=9000)
    c.seg(0, "PA", data=100)
    c.seg(1, "PA", data=100)
    c.seg(0, "PA", seq=c.cs + 500_000, data=100, label="(far ahead: liberal)")
    c.seg(0, "R", seq=c.cs - 10_000, label="(reset before the acknowledged number)")
    c.talk(1)

    c = conn("reset after data", 10)
    c.handshake()
    c.seg(1, "PA", data=19)
    c.seg(1, "RA", label="(right after the server's data)")

    # IPv6: the same checks behind its header's payload length
    c = conn("ipv6", 15, v6=True)
    c.handshake(copts=[("WScale", 5), ("SAckOK", b"")], sopts=[("WScale", 5), ("SAckOK", b"")])
    c.talk(3)
    c.seg(1, "R", seq=c.ss - 5000, label="(a blind reset)")
    c.seg(0, "PA", seq=c.cs + 3_000_000, data=100, label="(far ahead)")
    c.seg(0, "PA", ack=c.ss + 50_000, data=100, label="(acknowledges data never sent)", advance=False)
    c.talk(2)
    c.seg(1, "RA", label="(at the number)")

    c = conn("state table", 11)
    c.seg(0, "S")
    c.seg(0, "FA", ack=5001, label="(FIN before the SYN-ACK)", advance=False)
    c.seg(0, "A", ack=5001, label="(ACK before the SYN-ACK)")
    c.seg(1, "SA")
    c.seg(0, "A")
    c.seg(1, "S", label="(the server's SYN on an established connection)", advance=False)
    c.seg(0, "SA", label="(the client's SYN-ACK)", advance=False)
    c.talk(1)

    c = conn("syn inside", 12)
    c.handshake()
    c.talk(1)
    c.seg(0, "S", seq=777, label="(a SYN inside a live connection: ignored)", advance=False)
    c.talk(1)

    c = conn("restart after a reset", 13)
    c.handshake()
    c.talk(1)
    c.seg(1, "RA", label="(closes)")
    c.cs, c.ss = 900000, 123
    c.seg(0, "S", label="(ignored: the old connection stays)")
    c.seg(1, "SA", label="(answers it: taken up again)")
    c.seg(0, "A")
    c.talk(2)
    c.seg(0, "PA", seq=1001, ack=5001, data=10, label="(the old connection's numbers)", advance=False)

    # simultaneous open (conntrack's SYN_SENT2): each side's SYN, then
    # SYN-ACKs, then an ACK from either side
    c = conn("simultaneous open", 16)
    c.seg(0, "S")
    c.seg(1, "S", label="(the server's SYN: SYN_SENT2)")
    c.seg(1, "R", seq=c.ss + 9_000_000, ack=12345, label="(a reset far from the window in SYN_SENT2)")
    c.seg(0, "A", label="(the client's ACK in SYN_SENT2: invalid)", advance=False)
    c.seg(1, "FA", label="(the server's FIN in SYN_SENT2: invalid)", advance=False)
    c.seg(1, "A", label="(the server's ACK in SYN_SENT2: ignored)", advance=False)
    c.seg(1, "S", seq=c.ss - 1, label="(the server's SYN again)", advance=False)
    c.seg(0, "SA", seq=c.cs - 1, label="(the client's SYN-ACK)", advance=False)
    c.seg(1, "SA", seq=c.ss - 1, label="(the server's SYN-ACK)", advance=False)
    c.seg(1, "A", label="(the server's ACK completes it)")
    c.talk(2)
    c.seg(1, "R", seq=c.ss + 5000, label="(a blind reset)")
    c.talk(1)

    c = conn("simultaneous open, the client's ACK", 17)
    c.seg(0, "S", opts=[("WScale", 7), ("SAckOK", b"")])
    c.seg(1, "S", opts=[("WScale", 7), ("SAckOK", b"")])
    c.seg(1, "SA", seq=c.ss - 1, label="(the server's SYN-ACK first)", advance=False)
    c.seg(0, "SA", seq=c.cs - 1, label="(the client's SYN-ACK)", advance=False)
    c.seg(0, "A")
    c.talk(2)
    c.seg(0, "PA", seq=c.cs + 300_000, data=100, label="(far ahead)")
    c.seg(1, "RA", label="(at the number)")

    c = conn("reopen after FINs", 14)
    c.handshake()
    c.talk(1)
    c.seg(0, "FA")
    c.seg(1, "FA")
    c.seg(0, "A")
    c.cs, c.ss = 50, 7000
    c.handshake()
    c.talk(2)

    # Random walks around the windows: each segment's numbers at the next
    # byte, a little behind or ahead, or far; acks likewise.
    for k in range(WALKS):
        rng = random.Random(1000 + k)
        c = conn(f"random {k}", 20 + k, cisn=rng.randrange(1 << 32), sisn=rng.randrange(1 << 32))
        c.handshake(copts=[("WScale", rng.choice([0, 2, 7]))] if rng.random() < 0.5 else [],
                    sopts=[("WScale", rng.choice([0, 2, 7]))] if rng.random() < 0.5 else [])

        def off():
            r = rng.random()
            if r < 0.7:
                return 0
            if r < 0.85:
                return -rng.randrange(1, 3000)
            if r < 0.93:
                return rng.randrange(1, 3000)
            return rng.choice([-1, 1]) * rng.randrange(60_000, 400_000)

        for _ in range(120):
            d = rng.randrange(2)
            own = c.ss if d else c.cs
            other = c.cs if d else c.ss
            data = rng.choice([0, 0, 100, 1000, 1400])
            o = off()
            r = rng.random()
            if r < 0.04:
                c.seg(d, "R" if rng.random() < 0.5 else "RA", seq=own + o, ack=other, label="(random reset)")
                continue
            if r < 0.07:
                c.seg(d, "FA", seq=own + o, ack=other + off(), label="(random FIN)")
                continue
            if r < 0.07 + WALK_SYNS:
                if rng.random() < 0.5:
                    c.seg(d, "S", seq=own + o, label="(random SYN)", advance=False)
                else:
                    c.seg(d, "SA", seq=own + o, ack=other + off(), label="(random SYN-ACK)", advance=False)
                continue
            c.seg(d, "PA" if data else "A", seq=own + o, ack=other + off(), data=data,
                  win=rng.choice([65535, 65535, 8192, 512, 0]))

    return pkts


def build_timeouts():
    """Connections each left in a state whose timeout conntrack shortens, or
    not: the timeout each ends with is compared, not the packets let
    through."""
    pkts = []

    def conn(name, k, v6=False):
        return Conn(pkts, name, 21000 + k, 1000, 5000, v6)

    c = conn("all acknowledged", 1)
    c.handshake()
    c.talk(2)
    c = conn("data unacknowledged", 2)
    c.handshake()
    c.talk(1)
    c.seg(0, "PA", data=700)
    c = conn("a FIN unacknowledged", 3)  # (FIN_WAIT's own timeout is the shorter)
    c.handshake()
    c.talk(1)
    c.seg(0, "FA")
    c = conn("data acknowledged late", 4)
    c.handshake()
    c.seg(0, "PA", data=700)
    c.seg(0, "PA", data=700)
    c.seg(1, "A")
    c = conn("the same ACK four times", 5)
    c.handshake()
    c.talk(1)
    for _ in range(4):
        c.seg(0, "A", advance=False)
    c = conn("the same ACK three times", 6)
    c.handshake()
    c.talk(1)
    for _ in range(3):
        c.seg(0, "A", advance=False)
    c = conn("retransmissions, then a new ACK", 7)
    c.handshake()
    c.talk(1)
    for _ in range(4):
        c.seg(0, "A", advance=False)
    c.seg(1, "A")
    c = conn("a zero window", 8)
    c.handshake()
    c.talk(1)
    c.seg(0, "A", win=0)
    c = conn("a zero window opened", 9)
    c.handshake()
    c.talk(1)
    c.seg(0, "A", win=0)
    c.seg(0, "A", win=4000)
    c = conn("a reset in the window", 10)
    c.handshake()
    c.talk(1)
    c.seg(1, "R", seq=c.ss + 4000)
    c = conn("midstream, one side", 11)
    c.seg(0, "A")
    c.seg(0, "A")
    c = conn("midstream, the first reply", 12)
    c.seg(0, "A")
    c.seg(1, "A")
    c = conn("midstream, replied", 13)
    c.seg(0, "A")
    c.seg(1, "A")
    c.seg(0, "A")
    c = conn("closed", 14)
    c.handshake()
    c.talk(1)
    c.seg(0, "FA")
    c.seg(1, "FA")
    c.seg(0, "A")
    c = conn("a SYN alone", 15)
    c.seg(0, "S")
    c = conn("data beyond the window, ignored", 16)
    c.handshake()
    c.talk(1)
    c.seg(0, "PA", seq=c.cs - 100_000, data=500, advance=False)
    c = conn("IPv6, data unacknowledged", 17, v6=True)
    c.handshake()
    c.talk(1)
    c.seg(1, "PA", data=300)
    # a reset before any reply: conntrack removes the connection at once
    c = conn("a SYN refused by a reset", 18)
    c.seg(0, "S")
    c.seg(1, "RA", seq=0)
    c = conn("a SYN its sender resets", 19)
    c.seg(0, "S")
    c.seg(0, "R")
    c = conn("midstream, an invalid reply, then a reset", 20)  # (an invalid segment is no reply)
    c.seg(0, "A")
    c.seg(1, "S", advance=False)
    c.seg(1, "R")
    c = conn("midstream, a reset as the first reply", 21)
    c.seg(0, "A")
    c.seg(1, "R")
    c = conn("a reset after the reply", 22)  # (CLOSE's time)
    c.seg(0, "S")
    c.seg(1, "SA")
    c.seg(1, "R")
    # RFC 5961's challenge ACKs and the resets that answer segments conntrack
    # let through unchecked
    c = conn("a challenge ACK to a SYN, the client's reset", 23)  # (a server that kept the old connection)
    c.seg(0, "S")
    c.seg(1, "A", seq=777_000, ack=424_242)
    c.seg(0, "R", seq=424_242)
    c = conn("a SYN in a live connection, the server's reset", 24)
    c.handshake()
    c.talk(1)
    c.seg(0, "S", seq=900_000, advance=False)
    c.seg(1, "RA", seq=0, ack=900_001)
    c = conn("a SYN in LAST_ACK, the server's challenge ACK", 25)  # (not the ACK of the last FIN)
    c.handshake()
    c.talk(1)
    c.seg(0, "FA")
    c.seg(1, "FA")
    c.seg(0, "S", seq=900_000, advance=False)
    c.seg(1, "A")
    # simultaneous open: SYN_SENT2, then SYN_RECV, then ESTABLISHED at the
    # server's ACK (the state table alone would stay in SYN_RECV)
    c = conn("simultaneous open, both SYNs", 26)
    c.seg(0, "S")
    c.seg(1, "S")
    c = conn("simultaneous open, a SYN-ACK", 27)
    c.seg(0, "S")
    c.seg(1, "S")
    c.seg(0, "SA", seq=c.cs - 1, advance=False)
    c = conn("simultaneous open, the server's ACK", 28)
    c.seg(0, "S")
    c.seg(1, "S")
    c.seg(0, "SA", seq=c.cs - 1, advance=False)
    c.seg(1, "SA", seq=c.ss - 1, advance=False)
    c.seg(1, "A")
    return pkts


def make(path, kind="window"):
    from scapy.all import Ether, wrpcap

    pkts = build() if kind == "window" else build_timeouts()
    frames = [Ether(f) for _, f, _ in pkts]
    for i, f in enumerate(frames):
        f.time = 1_700_000_000 + i * 0.001
    wrpcap(path, frames)
    with open(path + ".labels", "w") as out:
        for d, f, label in pkts:
            out.write(label + "\n")
    print(f"{len(pkts)} packets")


def compare_timeouts(path, kernel_table, shoal_flows):
    """Each connection's state and the time its entry has left: the kernel's
    (/proc/net/nf_conntrack) against Shoal's (FlowIPManager's flows
    handler), within 3 s."""
    import re

    names = {}
    for line in open(path + ".labels").read().splitlines():
        name = line.split(":")[0]
        names.setdefault(name, len(names) + 1)
    kernel = {}
    for line in open(kernel_table).read().splitlines():
        f = line.split()
        if len(f) > 5 and f[2] == "tcp":
            port = int(re.search(r"sport=(\d+)", line).group(1))
            kernel[port] = (f[5], int(f[4]))
    shoal = {}
    for line in open(shoal_flows).read().splitlines():
        m = re.match(r"tcp \S+:(\d+) > \S+:(\d+) (\S+) .* expires ([\d.]+)", line)
        if m:
            port = int(m.group(1)) if int(m.group(2)) == 80 else int(m.group(2))
            shoal[port] = (m.group(3), float(m.group(4)))
    bad = 0
    for name, k in names.items():
        port = 21000 + k
        kk, ss = kernel.get(port), shoal.get(port)
        # (both without the connection: removed by a reset before any reply)
        same = (not kk and not ss) or (kk and ss and kk[0] == ss[0] and abs(kk[1] - ss[1]) <= 3)
        print(f"{'ok  ' if same else 'FAIL'} {name}: kernel {kk or 'none'}, Shoal {ss or 'none'}")
        bad += not same
    return 1 if bad else 0


def enter(ns):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), f"setns {ns}")
    os.close(fd)


def packet_socket(ns, ifname):
    enter(ns)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # (ETH_P_ALL)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((ifname, 0))
    s.setblocking(False)
    return s


def inject(path, ns1, if1, mac1, ns2, if2, mac2, out):
    from scapy.all import rdpcap

    frames = [bytes(p) for p in rdpcap(path)]
    # one CPU sends them all, so one backlog queue takes them in order
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    socks = [packet_socket(ns1, if1), packet_socket(ns2, if2)]
    macs = [bytes.fromhex(mac1.replace(":", "")), bytes.fromhex(mac2.replace(":", ""))]
    seen = set()

    def drain():
        for s in socks:
            while True:
                try:
                    data, addr = s.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == socket.PACKET_OUTGOING or len(data) < 54:
                    continue
                if data[12:14] == b"\x08\x00" and data[23] == 6:
                    seen.add(int.from_bytes(data[18:20], "big"))
                elif data[12:14] == b"\x86\xdd" and data[20] == 6:  # the flow label
                    seen.add(int.from_bytes(data[15:18], "big") & 0xFFFFF)

    for f in frames:
        # the server's packets leave from H2
        v6 = f[12:14] == b"\x86\xdd"
        d = 1 if (f[22:38] == socket.inet_pton(socket.AF_INET6, S6) if v6 else f[26:30] == socket.inet_aton(S)) else 0
        socks[d].send(macs[d] + socks[d].getsockname()[4] + f[12:])
        time.sleep(0.002)
        drain()
    quiet = 0
    while quiet < 3:  # until nothing more comes for 0.6 s
        n = len(seen)
        time.sleep(0.2)
        drain()
        quiet = quiet + 1 if len(seen) == n else 0
    with open(out, "w") as o:
        for i in sorted(seen):
            o.write(f"{i}\n")
    print(f"the kernel let {len(seen)} of {len(frames)} through")


def compare(path, kernel_ids, shoal_pcap):
    from scapy.all import IP, IPv6, rdpcap

    labels = open(path + ".labels").read().splitlines()
    kernel = {int(x) for x in open(kernel_ids).read().split()}
    shoal = {p[IP].id if IP in p else p[IPv6].fl for p in rdpcap(shoal_pcap) if IP in p or IPv6 in p}
    n = len(labels)
    diff = [i for i in range(1, n + 1) if (i in kernel) != (i in shoal)]
    print(f"{n} packets: the kernel dropped {n - len(kernel)}, Shoal {n - len(shoal)}; {len(diff)} differ")
    for i in diff:
        print(f"  #{i} {labels[i - 1]}: kernel {'passes' if i in kernel else 'drops'}, "
              f"Shoal {'passes' if i in shoal else 'drops'}")
    if n - len(kernel) < 10:
        print("FAIL: the kernel dropped almost nothing: is conntrack checking windows here?")
        return 1
    return 1 if diff else 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2])
    elif cmd == "make-timeouts":
        make(sys.argv[2], "timeouts")
    elif cmd == "compare-timeouts":
        sys.exit(compare_timeouts(*sys.argv[2:5]))
    elif cmd == "inject":
        inject(*sys.argv[2:10])
    elif cmd == "compare":
        sys.exit(compare(*sys.argv[2:5]))
    else:
        sys.exit(f"unknown command {cmd}")

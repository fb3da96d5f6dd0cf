#!/usr/bin/python3
"""TCP reassembly against an independent byte-level model, and against tshark.

Builds TCP connections with scapy: random payloads each way, cut into random
segments, then reordered, duplicated, overlapped with different bytes, lost,
with sequence numbers that wrap, and without handshakes. Runs them through
FlowIPManager -> TCPReassembler(POLICY ...) -> TCPStreamDump and checks
every direction's file byte for byte against the model (first and last,
each also with DEVICE true on the host device backend: the batch
reassembly, which must place segments itself and give the same files; and
Suricata's target-based bsd, linux, old-linux, solaris and vista, bsd also
with DEVICE true, whose directions go one by one):

  a byte is delivered once every byte before it has come (or, at the end,
  when the holes before it are given up: they stay zeros in the file); its
  value is, under "first", the first segment's that covered it, under "last",
  the last segment's to cover it before it was delivered; under a
  target-based policy, a later segment's where every earlier segment that
  covers the byte gives way (new_wins(): by where the two start and end).

The clean connections are also checked against `tshark -z follow,tcp,raw`.
Usage: reassembly_model.py SHOAL
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    from scapy.all import IP, IPv6, TCP, Ether, Raw, wrpcap
except ImportError:
    print("skipped: scapy is not installed")
    sys.exit(77)

SHOAL = sys.argv[1]
rng = random.Random(20261123)
E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def endpoint(addr, port):
    if ":" in addr:
        groups = addr.split(":")
        full = []
        for g in groups:
            if g == "":
                full += ["0"] * (8 - len([x for x in groups if x]))
            else:
                full.append(g)
        return ".".join("%04x" % int(g, 16) for g in full[:8]) + ".%05d" % port
    return ".".join("%03d" % int(x) for x in addr.split(".")) + ".%05d" % port


def cut(data, lo=1, hi=1400):
    segs, off = [], 0
    while off < len(data):
        n = rng.randint(lo, hi)
        segs.append((off, data[off:off + n]))
        off += n
    return segs


class Conn:
    def __init__(self, idx, kind):
        self.kind = kind
        v6 = idx % 5 == 4
        self.c = "2001:db8::%x" % (idx + 1) if v6 else "10.1.%d.%d" % (idx // 200, idx % 200 + 1)
        self.s = "2001:db8:1::1" if v6 else "10.2.0.1"
        self.cp, self.sp = 20000 + idx, 80
        self.data = [os.urandom(rng.randint(1, 20000)), os.urandom(rng.randint(0, 8000))]
        wrap = kind in ("wrap", "mixed")
        self.isn = [(0xFFFFFFFF - rng.randint(0, 15000)) if wrap else rng.randint(0, 2**32 - 1) for _ in range(2)]
        self.arrivals = [[], []]  # per direction: (offset, bytes) in arrival order

    def ip(self, d):
        src, dst = (self.c, self.s) if d == 0 else (self.s, self.c)
        return (IPv6 if ":" in src else IP)(src=src, dst=dst)

    def tcp(self, d, off, flags, data=b""):
        sp, dp = (self.cp, self.sp) if d == 0 else (self.sp, self.cp)
        seq = (self.isn[d] + 1 + off) % 2**32
        ack = (self.isn[1 - d] + 1) % 2**32
        p = E / self.ip(d) / TCP(sport=sp, dport=dp, flags=flags, seq=seq, ack=ack, window=65535)
        return p / Raw(data) if data else p

    def packets(self):
        pk = []
        if self.kind != "midstream":
            pk.append(E / self.ip(0) / TCP(sport=self.cp, dport=self.sp, flags="S", seq=self.isn[0]))
            pk.append(E / self.ip(1) / TCP(sport=self.sp, dport=self.cp, flags="SA", seq=self.isn[1],
                                           ack=(self.isn[0] + 1) % 2**32))
            pk.append(self.tcp(0, 0, "A"))
        body = []
        for d in (0, 1):
            segs = cut(self.data[d])
            if self.kind in ("dup", "mixed"):
                segs += [s for s in segs if rng.random() < 0.15]
            if self.kind in ("overlap", "mixed"):
                for _ in range(rng.randint(3, 12)):  # overlapping garbage
                    o = rng.randint(0, max(0, len(self.data[d]) - 1))
                    n = rng.randint(1, 1400)
                    n = min(n, len(self.data[d]) - o)
                    if n > 0:
                        segs.append((o, os.urandom(n)))
                    # and an overlap that re-cuts real data across two segments
                    o2 = rng.randint(0, max(0, len(self.data[d]) - 1))
                    segs.append((o2, self.data[d][o2:o2 + rng.randint(1, 3000)]))
            if self.kind in ("loss", "mixed"):
                segs = [s for s in segs if rng.random() > 0.05]
            if self.kind in ("overlap", "dup", "mixed"):
                rng.shuffle(segs)
            if self.kind in ("reorder", "loss", "wrap"):  # neighbours swapped
                for i in range(len(segs) - 1):
                    if rng.random() < 0.3:
                        segs[i], segs[i + 1] = segs[i + 1], segs[i]
            if self.kind == "midstream" and segs:  # the first segment must come first: it starts the stream
                first = min(segs, key=lambda s: s[0])
                segs.remove(first)
                segs.insert(0, first)
            body.append([(d, o, b) for o, b in segs if b])
        merged = []  # the two directions interleaved, each in its own order
        while body[0] or body[1]:
            d = 0 if not body[1] else 1 if not body[0] else rng.randint(0, 1)
            merged.append(body[d].pop(0))
        for d, o, b in merged:
            self.arrivals[d].append((o, b))
            pk.append(self.tcp(d, o, "PA", b))
        for d in (0, 1):
            pk.append(self.tcp(d, len(self.data[d]), "FA"))
        pk.append(self.tcp(0, len(self.data[0]) + 1, "A"))
        return pk

    def files(self):
        c, s = endpoint(self.c, self.cp), endpoint(self.s, self.sp)
        return [c + "-" + s, s + "-" + c]


def new_wins(policy, lo, hi, olo, ohi):
    """Whether a later segment [lo, hi) takes the bytes it shares with an
    earlier one [olo, ohi), as Suricata's stream engine decides (IDS mode)."""
    if policy in ("first", "vista"):
        return False
    if policy == "last":
        return True
    solaris = policy in ("solaris", "hpux11")
    if lo == olo:  # the same start: the new one must reach the old one's end
        return hi >= ohi and (solaris or policy == "old-linux" or (policy == "linux" and hi > ohi))
    if lo < olo:  # it starts before
        return hi >= ohi if solaris else True
    return solaris and hi > ohi  # it starts after


def model(arrivals, policy, midstream):
    pending, out, delivered = {}, bytearray(), 0
    earlier = set()  # the segments so far: a held byte takes the new data when all that cover it give way
    base = arrivals[0][0] if midstream and arrivals else 0  # picked up at the first segment that came
    for off, data in arrivals:
        off -= base
        lo, hi = off, off + len(data)
        for i, b in enumerate(data):
            p = off + i
            if p < delivered:
                continue
            if p not in pending or all(new_wins(policy, lo, hi, a, z) for a, z in earlier if a <= p < z):
                pending[p] = b
        earlier.add((max(lo, 0), hi))
        while delivered in pending:
            out.append(pending.pop(delivered))
            delivered += 1
    if pending:
        top = max(pending)
        out += bytes(pending.get(p, 0) for p in range(delivered, top + 1))
    return bytes(out)


def tshark_follow(pcap, n):
    args = ["tshark", "-r", pcap, "-q"]
    for i in range(n):
        args += ["-z", "follow,tcp,raw,%d" % i]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    streams, cur = [], None
    for line in out.splitlines():
        if line.startswith("Filter: tcp.stream eq"):
            cur = [bytearray(), bytearray()]
            streams.append((int(line.split()[-1]), cur))
        elif cur is not None and line and not line.startswith(("=", "Node", "Follow")):
            side = 1 if line.startswith("\t") else 0
            cur[side] += bytes.fromhex(line.strip())
    return dict(streams)


def main():
    kinds = ["clean"] * 6 + ["reorder"] * 5 + ["dup"] * 4 + ["overlap"] * 6 + ["loss"] * 4 + ["wrap"] * 4 + \
            ["mixed"] * 6 + ["midstream"] * 3
    conns = [Conn(i, k) for i, k in enumerate(kinds)]
    tmp = tempfile.mkdtemp()
    failures = 0
    try:
        pk, t = [], 1700000000.0
        for c in conns:
            for p in c.packets():
                t += 0.0001
                p.time = t
                pk.append(p)
        # the policies must disagree somewhere, or their runs test nothing
        for policy in ("last", "bsd", "linux", "old-linux", "solaris"):
            n = sum(model(c.arrivals[d], policy, c.kind == "midstream") !=
                    model(c.arrivals[d], "first", c.kind == "midstream") for c in conns for d in (0, 1))
            print("%s differs from first on %d directions" % (policy, n))
            if n == 0:
                failures += 1
                print("FAIL: the overlaps made do not tell %s from first" % policy)
        pcap = os.path.join(tmp, "tcp.pcap")
        wrpcap(pcap, pk)
        runs = (("first", False), ("last", False), ("first", True), ("last", True), ("bsd", False),
                ("linux", False), ("old-linux", False), ("solaris", False), ("vista", False), ("bsd", True))
        for policy, device in runs:
            out = os.path.join(tmp, policy + ("-device" if device else ""))
            os.mkdir(out)
            cfg = ("FromDump(%s, STOP true) -> m :: FlowIPManager -> r :: TCPReassembler(POLICY %s, DEVICE %s)"
                   " -> TCPStreamDump(%s) -> c :: Counter -> Discard;" % (pcap, policy, str(device).lower(), out))
            args = [SHOAL, "run", "--stats", "json"] + (["--device", "host"] if device else []) + ["/dev/stdin"]
            res = subprocess.run(args, input=cfg, capture_output=True, text=True)
            if res.returncode != 0:
                print("FAIL: shoal exited %d: %s" % (res.returncode, res.stderr))
                return 1
            r = json.loads(res.stdout)["elements"]["r"]
            print("POLICY %s DEVICE %s: %d segments, %d placed by the device, %d one by one" %
                  (policy, device, r["segments"], r["device_placed"], r["one_by_one"]))
            target = policy not in ("first", "last")  # (its directions go one by one: segment bounds decide)
            if device and (r["device_failures"] != 0 or (r["device_placed"] == 0) != target):
                failures += 1
                print("FAIL: the device failed, or placed segments where it should (not)")
            for c in conns:
                for d in (0, 1):
                    want = model(c.arrivals[d], policy, c.kind == "midstream")
                    path = os.path.join(out, c.files()[d])
                    got = open(path, "rb").read() if os.path.exists(path) else b""
                    if got != want:
                        failures += 1
                        first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                                     min(len(got), len(want)))
                        print("FAIL %s %s dir %d: %d bytes, model %d, first difference at %d" %
                              (policy, c.kind, d, len(got), len(want), first))
                        if os.environ.get("DEBUG"):
                            for o, b in c.arrivals[d]:
                                if o <= first < o + len(b):
                                    print("  covered by [%d,%d) %s" % (o, o + len(b), b[first - o] == got[first]))
        # tshark as a second, independent reassembler, on the clean connections
        follow = tshark_follow(pcap, len(conns)) if shutil.which("tshark") else {}
        if not follow:
            print("tshark not installed: its check is skipped")
        for i, c in enumerate(conns):
            if c.kind != "clean" or not follow:
                continue
            for d in (0, 1):
                got = open(os.path.join(tmp, "first", c.files()[d]), "rb").read() if c.data[d] else b""
                if bytes(follow[i][d]) != got or got != c.data[d]:
                    failures += 1
                    print("FAIL tshark connection %d dir %d: tshark %d bytes, shoal %d, sent %d" %
                          (i, d, len(follow[i][d]), len(got), len(c.data[d])))
    finally:
        shutil.rmtree(tmp)
    checked = len(conns) * 2 * len(runs)
    print("%d directions checked against the model (%d runs), %d clean ones against tshark: %d failures" %
          (checked, len(runs), kinds.count("clean") * 2, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

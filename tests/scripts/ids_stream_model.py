#!/usr/bin/python3
"""Stream rules (flow:only_stream, tcp-stream) against an independent model.

Random TCP connections carry random bytes with the rules' patterns planted
across segment boundaries; segments are cut at random, some retransmitted,
some pairs swapped. The model knows each direction's stream and which bytes
each packet delivers in order; a stream rule alerts on a packet when its
pattern is in the window (the STREAM_WINDOW bytes before the new ones, then
the new ones) and was not in the window's old part alone. Packet rules
(tcp-pkt) must only match inside one segment. Usage: ids_stream_model.py SHOAL
"""
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    from scapy.all import IP, TCP, Ether, Raw, wrpcap
except ImportError:
    print("scapy is missing: skipped")
    sys.exit(77)

WINDOW = 64
PATTERNS = [b"EVILPAYLOAD", b"x-attack", b"GET /etc/passwd", b"\x90\x90\x90\x90\xcc"]


MODES = ("arrival", "acked")


def found(d, win, old, at, out):
    """The stream rules' alerts of an inspection: a pattern in the window that was not in its old part."""
    for i, p in enumerate(PATTERNS):
        if p in win and p not in old:
            out.add((100 + i, at))
            if i == 0 and d == 0:
                out.add((300, at))


def model(plist, streams, mode):
    """The stream rules' alerts of one connection: (sid, packet number, or None at the flow's end)."""
    out = set()
    nxt, held, acked, done = [0, 0], [dict(), dict()], [0, 0], [0, 0]

    def inspect(d, upto, at):
        a, b = done[d], upto
        if b > a:
            ws = max(0, a - WINDOW)
            found(d, streams[d][ws:b], streams[d][ws:a], at, out)
            done[d] = b

    for num, d, off, data, ack in plist:
        acked[1 - d] = max(acked[1 - d], ack)
        if off is not None and off + len(data) > nxt[d]:
            held[d][off] = data
            while nxt[d] in held[d]:
                nxt[d] += len(held[d].pop(nxt[d]))
        if mode == "arrival":
            inspect(d, nxt[d], num)
        else:
            inspect(d, min(nxt[d], acked[d]), num)
    for d in (0, 1):  # the flow's end: what was delivered, then each run past a hole alone
        inspect(d, nxt[d], None)
        runs = []
        for off in sorted(held[d]):
            if runs and runs[-1][1] == off:
                runs[-1][1] += len(held[d][off])
            elif not runs or off > runs[-1][1]:
                runs.append([off, off + len(held[d][off])])
        for a, b in runs:
            found(d, streams[d][a:b], b"", None, out)
    return out


def main():
    shoal = sys.argv[1]
    seed = int(os.environ.get("SEED", "7"))
    rnd = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="shoal-ids-stream-")
    rules = []
    for i, p in enumerate(PATTERNS):
        hexs = "|" + " ".join(f"{b:02x}" for b in p) + "|"
        rules.append(f'alert tcp-stream any any -> any any (msg:"s{i}"; content:"{hexs}"; sid:{100 + i};)')
        rules.append(f'alert tcp-pkt any any -> any any (msg:"p{i}"; content:"{hexs}"; sid:{200 + i};)')
    rules.append('alert tcp any any -> any any (msg:"to server"; flow:only_stream,to_server; '
                 f'content:"{PATTERNS[0].decode()}"; sid:300;)')
    with open(os.path.join(tmp, "s.rules"), "w") as f:
        f.write("\n".join(rules) + "\n")

    pkts = []
    want_pkt = set()  # (sid, packet number) of the packet rules
    want = {m: set() for m in MODES}  # ... of the stream rules (number None: at the flow's end)

    def add(p):
        pkts.append(p)
        return len(pkts)

    for conn in range(40):
        cli, srv = f"10.1.{conn}.1", f"10.2.{conn}.2"
        sp, dp = 20000 + conn, 80
        isn = [rnd.randrange(1 << 32), rnd.randrange(1 << 32)]
        ends = [(cli, srv, sp, dp), (srv, cli, dp, sp)]

        def seg(d, flags, seq, ack, data=b""):
            s, t, a, b = ends[d]
            p = Ether() / IP(src=s, dst=t) / TCP(sport=a, dport=b, flags=flags, seq=seq & 0xFFFFFFFF,
                                                  ack=ack & 0xFFFFFFFF)
            return p / Raw(data) if data else p

        add(seg(0, "S", isn[0], 0))
        add(seg(1, "SA", isn[1], isn[0] + 1))
        add(seg(0, "A", isn[0] + 1, isn[1] + 1))
        streams = []
        for d in (0, 1):
            s = bytearray(rnd.randbytes(rnd.randrange(200, 1500)))
            for _ in range(rnd.randrange(0, 4)):
                pat = rnd.choice(PATTERNS)
                at = rnd.randrange(0, len(s) - len(pat))
                s[at:at + len(pat)] = pat
            streams.append(bytes(s))
        # each direction cut into segments; the two directions interleaved
        segs = []
        for d in (0, 1):
            at, lst = 0, []
            while at < len(streams[d]):
                n = rnd.randrange(1, 60)
                lst.append((d, at, streams[d][at:at + n]))
                at += n
            segs.append(lst)
        order = []
        while segs[0] or segs[1]:
            d = rnd.choice([x for x in (0, 1) if segs[x]])
            order.append(segs[d].pop(0))
        # some retransmissions and some swapped neighbours (same direction)
        out = []
        i = 0
        while i < len(order):
            if (i + 1 < len(order) and order[i][0] == order[i + 1][0] and rnd.random() < 0.1):
                out += [order[i + 1], order[i]]
                i += 2
                continue
            out.append(order[i])
            if rnd.random() < 0.05:
                out.append(order[i])
            i += 1
        # half the connections lose a segment: what follows it waits
        # for the flow's end, where each run between holes is inspected alone
        if rnd.random() < 0.5:
            d, off, _ = rnd.choice([x for x in out if x[1] > 0])
            out = [x for x in out if not (x[0] == d and x[1] == off)]
        # the packets: (number, direction, offset, data, offset the ACK acknowledges of the other direction)
        plist = []
        nxt = [0, 0]
        held = [dict(), dict()]

        def deliver(d, off, data):
            if off + len(data) > nxt[d]:
                held[d][off] = data
            while nxt[d] in held[d]:
                nxt[d] += len(held[d].pop(nxt[d]))

        for d, off, data in out:
            num = add(seg(d, "PA", isn[d] + 1 + off, isn[1 - d] + 1 + nxt[1 - d], data))
            plist.append((num, d, off, data, nxt[1 - d]))
            for i, p in enumerate(PATTERNS):
                if p in data:
                    want_pkt.add((200 + i, num))
            deliver(d, off, data)
        L = [len(streams[0]), len(streams[1])]
        for d, flags, seq, ack in ((0, "FA", L[0], L[1]), (1, "FA", L[1], L[0] + 1), (0, "A", L[0] + 1, L[1] + 1)):
            num = add(seg(d, flags, isn[d] + 1 + seq, isn[1 - d] + 1 + ack))
            plist.append((num, d, None, b"", ack))
        for mode in MODES:
            want[mode] |= model(plist, streams, mode)
    pcap = os.path.join(tmp, "s.pcap")
    wrpcap(pcap, pkts)
    # each mode on the CPU, then offloaded to the host device backend (the
    # device scans each segment with the stream automaton, GASPP §5; the host
    # scans the seams): the same alerts
    for mode, offload in [(m, o) for m in MODES for o in (False, True)]:
        eve = os.path.join(tmp, f"eve-{mode}-{offload}.json")
        conf = (f"FromDump({pcap}, STOP true) -> FlowIPManager -> "
                + ("OffloadBalancer(FRACTION 1) -> " if offload else "")
                + f"ids :: IDSMatcher(RULES {tmp}/s.rules, ENGINE builtin, "
                f"EVE {eve}, STREAM_WINDOW {WINDOW}, STREAM_INSPECT {mode}, QUIET true) -> Discard;\n"
                "DriverManager(wait, print ids.stream_device_scans, print ids.stream_host_scans, "
                "print ids.stream_matches)\n")
        cfile = os.path.join(tmp, "s.click")
        with open(cfile, "w") as f:
            f.write(conf)
        cmd = [shoal, "run", cfile] + (["--device", "host", "--device-delay-us", "20"] if offload else [])
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            sys.exit(1)
        device_scans, host_scans = (int(x) for x in r.stdout.split()[:2])
        if offload and device_scans < host_scans:
            print(f"offloaded, the device scanned only {device_scans} pieces (the host {host_scans})")
            sys.exit(1)
        if not offload and device_scans:
            print("not offloaded, yet device scans counted:", device_scans)
            sys.exit(1)
        got = set()
        with open(eve) as f:
            for line in f:
                j = json.loads(line)
                if j.get("event_type") == "alert":
                    if "pcap_cnt" not in j and j.get("pkt_src") != "stream (flow timeout)":
                        print("an alert without a packet that is not at a flow's end:", line)
                        sys.exit(1)
                    got.add((j["alert"]["signature_id"], j.get("pcap_cnt")))
        w = want[mode] | want_pkt
        at_end = len([x for x in want[mode] if x[1] is None])
        print(f"{mode}{' offloaded' if offload else ''}: {device_scans} pieces scanned on the device, {host_scans} "
              f"on the host; {len(pkts)} packets, {len(w)} alerts expected ({len(want[mode])} of stream rules, "
              f"{at_end} at flows' ends), {len(got)} raised")
        if got != w:
            print("missing:", sorted(w - got, key=str)[:20])
            print("unexpected:", sorted(got - w, key=str)[:20])
            sys.exit(1)
        if len(want[mode]) < 20 or at_end < 1 or int(r.stdout.split()[-1]) < len(want[mode]) - at_end:  # (ends come after the print)
            print("too few stream matches to mean anything:", r.stdout)
            sys.exit(1)
    if want["arrival"] == want["acked"]:
        print("the two modes' alerts do not differ: the test cannot tell them apart")
        sys.exit(1)
    print("ok")

main()

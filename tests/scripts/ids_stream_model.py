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
    want = set()  # (sid, packet number)

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
        nxt = [0, 0]
        held = [dict(), dict()]
        for d, off, data in out:
            num = add(seg(d, "PA", isn[d] + 1 + off, isn[1 - d] + 1 + nxt[1 - d], data))
            for sid_base, pat_idx in ((200, i) for i in range(len(PATTERNS))):
                if PATTERNS[pat_idx] in data:
                    want.add((sid_base + pat_idx, num))
            if off + len(data) <= nxt[d]:
                continue  # a retransmission: nothing new
            held[d][off] = data
            a = nxt[d]
            while nxt[d] in held[d]:
                nxt[d] += len(held[d].pop(nxt[d]))
            b = nxt[d]
            if b == a:
                continue
            ws = max(0, a - WINDOW)
            win, old = streams[d][ws:b], streams[d][ws:a]
            for i, p in enumerate(PATTERNS):
                if p in win and p not in old:
                    want.add((100 + i, num))
                    if i == 0 and d == 0:
                        want.add((300, num))
        for d in (0, 1):
            runs = []
            for off in sorted(held[d]):
                if runs and runs[-1][1] == off:
                    runs[-1][1] += len(held[d][off])
                else:
                    runs.append([off, off + len(held[d][off])])
            for a, b in runs:
                for i, p in enumerate(PATTERNS):
                    if p in streams[d][a:b]:
                        want.add((100 + i, None))
                        if i == 0 and d == 0:
                            want.add((300, None))
        add(seg(0, "FA", isn[0] + 1 + len(streams[0]), isn[1] + 1 + len(streams[1])))
        add(seg(1, "FA", isn[1] + 1 + len(streams[1]), isn[0] + 2 + len(streams[0])))
        add(seg(0, "A", isn[0] + 2 + len(streams[0]), isn[1] + 2 + len(streams[1])))
    pcap = os.path.join(tmp, "s.pcap")
    wrpcap(pcap, pkts)
    eve = os.path.join(tmp, "eve.json")
    conf = (f"FromDump({pcap}, STOP true) -> FlowIPManager -> ids :: IDSMatcher(RULES {tmp}/s.rules, EVE {eve}, "
            f"STREAM_WINDOW {WINDOW}, QUIET true) -> Discard;\n"
            "DriverManager(wait, print ids.stream_matches)\n")
    cfile = os.path.join(tmp, "s.click")
    with open(cfile, "w") as f:
        f.write(conf)
    r = subprocess.run([shoal, "run", cfile], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
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
    streams_want = len([w for w in want if w[0] < 200])
    at_end = len([w for w in want if w[1] is None])
    print(f"{len(pkts)} packets, {len(want)} alerts expected ({streams_want} of stream rules, {at_end} at flows' ends), {len(got)} raised")
    if got != want:
        print("missing:", sorted(want - got, key=str)[:20])
        print("unexpected:", sorted(got - want, key=str)[:20])
        sys.exit(1)
    if streams_want < 20 or at_end < 1 or int(r.stdout.split()[-1]) < streams_want:
        print("too few stream matches to mean anything:", r.stdout)
        sys.exit(1)
    print("ok")


main()

#!/usr/bin/env python3
"""Stream rules (tcp-stream) through `shoal ids`: many small segments, each
direction's data inspected as it is acknowledged, against a 2 KiB window.
With --plain the rules are plain `tcp` payload rules, run two ways side by
side: on the stream (the default, Suricata's inspection) and on packets
(`--set shoal.stream-payload=false`); the stream finds the patterns cut
across segments too, so it has more alerts.

Writes a capture (scapy) of CONNS connections of SEGS 60-byte segments each,
every data segment acknowledged, 5% of them holding one of 500 rules' 7-byte
patterns (some cut across two segments), then times `shoal ids` on it: with
--baseline another build (an older commit, say) runs the same capture in the
same session, back to back, and the alerts of the two are compared (rule,
packet, ports, payload). Prints a table; writes JSON with machine and commit.

    /usr/bin/python3 bench/ids_stream.py --shoal build/shoal [--baseline OLD/shoal] [--offload cuda] [--out F]
"""
import argparse
import gzip
import hashlib
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def make(d, conns, segs, proto="tcp-stream", capture=None):
    rnd = random.Random(1)
    pats = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7)) for _ in range(500)]
    with open(os.path.join(d, "stream.rules"), "w") as f:
        for i, p in enumerate(pats):
            f.write(f'alert {proto} any any -> any any (msg:"s{i}"; content:"{p}"; sid:{i + 1};)\n')
    if capture and os.path.exists(capture):  # made before by this script, with the same arguments
        with (gzip.open if capture.endswith(".gz") else open)(capture, "rb") as src, open(os.path.join(d, "streams.pcap"), "wb") as dst:
            shutil.copyfileobj(src, dst)
        return
    from scapy.all import IP, TCP, Ether, PcapWriter, Raw

    w = PcapWriter(os.path.join(d, "streams.pcap"), sync=False)
    t = [1700000000.0]
    alpha = b"abcdefghijklmnopqrstuvwxyz0123456789 /=&"

    def pkt(src, dst, sp, dp, seq, ack, flags, data=b""):
        t[0] += 0.00001
        p = Ether() / IP(src=src, dst=dst) / TCP(sport=sp, dport=dp, seq=seq, ack=ack, flags=flags, window=65535)
        p = p / Raw(data) if data else p
        p.time = t[0]
        w.write(p)

    for c in range(conns):
        cli, srv, sp, dp = f"10.0.{c // 250}.{c % 250 + 1}", "192.168.1.1", 10000 + c, 80
        cs, ss = 1000, 5000
        pkt(cli, srv, sp, dp, cs, 0, "S")
        pkt(srv, cli, dp, sp, ss, cs + 1, "SA")
        pkt(cli, srv, sp, dp, cs + 1, ss + 1, "A")
        cs += 1
        ss += 1
        carry = b""
        for _ in range(segs):
            data = bytearray(rnd.choice(alpha) for _ in range(60))
            if rnd.random() < 0.05:
                at = rnd.randrange(57)
                data[at : at + 7] = pats[rnd.randrange(500)].encode()
            if proto == "tcp":  # plain rules: some patterns cut across two segments
                data[: len(carry)] = carry
                carry = b""
                if rnd.random() < 0.05:
                    pat, k = pats[rnd.randrange(500)].encode(), rnd.randrange(1, 7)
                    data[len(data) - k :] = pat[:k]
                    carry = pat[k:]
            pkt(cli, srv, sp, dp, cs, ss, "PA", bytes(data))
            cs += len(data)
            pkt(srv, cli, dp, sp, ss, cs, "A")
        pkt(cli, srv, sp, dp, cs, ss, "FA")
        pkt(srv, cli, dp, sp, ss, cs + 1, "FA")
        pkt(cli, srv, sp, dp, cs + 1, ss + 1, "A")
    w.close()
    if capture:
        with open(os.path.join(d, "streams.pcap"), "rb") as src, (gzip.open if capture.endswith(".gz") else open)(capture, "wb") as dst:
            shutil.copyfileobj(src, dst)


def run(shoal, d, extra):
    log = tempfile.mkdtemp(dir=d)
    r = subprocess.run(
        [shoal, "ids", "-r", os.path.join(d, "streams.pcap"), "-S", os.path.join(d, "stream.rules"), "-l", log] + extra,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        sys.exit(f"ids_stream: {shoal} failed ({r.returncode}): {r.stderr[-2000:]}")
    m = re.search(r"shoal: ([0-9.]+)s, received (\d+)", r.stderr)
    if not m:
        sys.exit(f"ids_stream: no run time in {shoal}'s output: {r.stderr[-2000:]}")
    alerts = []
    with open(os.path.join(log, "eve.json")) as f:
        for line in f:
            e = json.loads(line)
            if e["event_type"] == "alert":
                alerts.append((e["alert"]["signature_id"], e.get("pcap_cnt"), e["src_port"], e["dest_port"], e.get("payload", "")))
    return float(m.group(1)), int(m.group(2)), sorted(alerts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shoal", default="build/shoal")
    ap.add_argument("--baseline", help="another shoal build, run on the same capture")
    ap.add_argument("--offload", help="also run this build with `shoal ids --offload DEVICE` (host, cuda): the "
                    "payload and stream scans on the device")
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--segs", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--plain", action="store_true", help="plain tcp payload rules, on the stream and on packets")
    ap.add_argument("--capture", help="the capture: read from this file (.pcap or .pcap.gz) when it exists, which "
                    "this script wrote before with the same --plain, --conns and --segs (so a machine without scapy "
                    "runs it), else written there too")
    ap.add_argument("--out", default="bench/results/ids-stream-latest.json")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="shoal-ids-stream-")
    try:
        return measure(a, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def measure(a, d):
    make(d, a.conns, a.segs, "tcp" if a.plain else "tcp-stream", a.capture)
    builds = [("this", a.shoal, [])]
    if a.plain:
        builds.append(("packets", a.shoal, ["--set", "shoal.stream-payload=false"]))
    if a.offload:
        builds.append((f"offload-{a.offload}", a.shoal, ["--offload", a.offload]))
    if a.baseline:
        builds.append(("baseline", a.baseline, []))
    times = {n: [] for n, _, _ in builds}
    alerts = {}
    for _ in range(a.reps):  # back to back, so drift hits both alike
        for n, b, extra in builds:
            secs, pkts, al = run(b, d, extra)
            times[n].append(secs)
            alerts[n] = al
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
    print(f"shoal ids, {a.conns} connections x {a.segs} segments of 60 bytes, 500 {'tcp' if a.plain else 'tcp-stream'} "
          f"rules, on {cpu}")
    print(f"{'build':<14} {'seconds':>8} {'ns/packet':>10} {'alerts':>7}  alerts digest")
    rows = []
    for n, b, _ in builds:
        s = statistics.median(times[n])
        dig = hashlib.md5(repr(alerts[n]).encode()).hexdigest()[:12]
        print(f"{n:<14} {s:>8.3f} {s * 1e9 / pkts:>10.1f} {len(alerts[n]):>7}  {dig}")
        rows.append({"build": n, "binary": b, "seconds": s, "ns_per_packet": s * 1e9 / pkts, "alerts": len(alerts[n]), "alerts_md5": dig})
    same = len({r["alerts_md5"] for r in rows if r["build"] != "packets"}) == 1
    if a.plain:
        on_stream, on_packets = len(alerts["this"]), len(alerts["packets"])
        print(f"on the stream: {statistics.median(times['packets']) / statistics.median(times['this']):.2f}x the "
              f"speed on packets; {on_stream} alerts against {on_packets} (the stream's include patterns cut across "
              f"segments)")
        same = same and on_stream >= on_packets
    if a.offload:
        print(f"offloaded ({a.offload}): {statistics.median(times['this']) / statistics.median(times['offload-' + a.offload]):.2f}x "
              f"the CPU's speed; alerts {'identical' if same else 'DIFFER'}")
    if a.baseline:
        print(f"speed-up {statistics.median(times['baseline']) / statistics.median(times['this']):.2f}x; alerts {'identical' if same else 'DIFFER'}")
    # the commit the measured build was made from, as it says
    v = subprocess.run([a.shoal, "version"], capture_output=True, text=True).stdout
    commit = re.search(r"\(commit ([0-9a-f]+)", v).group(1)[:7] if "(commit " in v else "unknown"
    j = {
        "benchmark": "ids-stream",
        "machine": {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release()},
        "commit": commit,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "packets": pkts,
        "connections": a.conns,
        "segments": a.segs,
        "repetitions": a.reps,
        "device": a.offload or "none",
        "rules": "tcp" if a.plain else "tcp-stream",
        "results": rows,
        "alerts_identical": same,
    }
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(j, f, indent=1)
    print(f"wrote {a.out}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

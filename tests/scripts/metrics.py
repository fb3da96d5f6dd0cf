#!/usr/bin/env python3
"""`shoal run --metrics`: /metrics parsed by Prometheus' own text-format parser
(python3-prometheus-client), its values checked against the run (the packets
in the capture, the accounting identity, handler values read through the
ControlSocket, the device latency histogram's shape, the device's busy time),
writes refused, and bad --metrics values refused with an error.

Usage: metrics.py SHOAL SOURCE_DIR"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

SHOAL, SRC = sys.argv[1], sys.argv[2]
PCAP = os.path.join(SRC, "examples/data/mixed.pcap")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def ctl(sock, *args):
    return subprocess.run([SHOAL, "ctl", "-u", sock, *args], capture_output=True, text=True).stdout.strip()


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        check(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), "Prometheus' content type")
        text = r.read().decode()
    samples = {}
    fams = {}
    for fam in text_string_to_metric_families(text):
        fams[fam.name] = fam.type
        for s in fam.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return fams, samples


npackets = int(subprocess.run(["tshark", "-r", PCAP], capture_output=True, text=True).stdout.count("\n"))

with tempfile.TemporaryDirectory() as tmp:
    sock = os.path.join(tmp, "ctl.sock")
    conf = os.path.join(tmp, "m.click")
    with open(conf, "w") as f:
        f.write(f"""
FromDump({PCAP}, STOP false)
  -> b :: OffloadBalancer(FRACTION 1)
  -> chk :: CheckIPHeader(14)
  -> rt :: DirectIPLookup(10.1.0.0/16 0, 10.2.0.0/16 10.2.0.254 1, 0.0.0.0/0 10.9.9.9 1);
rt[0] -> c0 :: Counter -> Discard;
rt[1] -> c1 :: Counter -> q :: Queue(100000) -> Idle;
ControlSocket(UNIX, {sock});
""")
    p = subprocess.Popen([SHOAL, "run", "--metrics", "0", "--device", "host", conf], stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, text=True)
    line = p.stderr.readline()
    check("metrics at http://127.0.0.1:" in line, f"the address is said: {line!r}")
    port = int(line.rsplit(":", 1)[1].split("/")[0])
    for _ in range(200):
        if os.path.exists(sock) and ctl(sock, "read", "c0.count") and \
                int(ctl(sock, "read", "c0.count")) + int(ctl(sock, "read", "c1.count")) + \
                int(ctl(sock, "read", "chk.drops")) >= npackets:
            break
        time.sleep(0.05)
    fams, s = scrape(port)
    check(fams.get("shoal_packets_received") == "counter", f"received is a counter: {fams.get('shoal_packets_received')}")
    check(s.get(("shoal_packets_received_total", ())) == npackets,
          f"received = the capture's {npackets} packets: {s.get(('shoal_packets_received_total', ()))}")
    rec = s[("shoal_packets_received_total", ())] + s[("shoal_packets_created_total", ())]
    out = s[("shoal_packets_sent_total", ())] + s[("shoal_packets_dropped_total", ())] + s[("shoal_packets_held", ())]
    check(rec == out, f"the accounting identity holds in the metrics: {rec} vs {out}")
    held = s.get(("shoal_element_length", (("class", "Queue"), ("element", "q"))))
    check(held == s[("shoal_packets_held", ())], "the queue's length is the packets held")
    for c in ("c0", "c1"):
        v = s.get(("shoal_element_count", (("class", "Counter"), ("element", c))))
        check(v == float(ctl(sock, "read", c + ".count")), f"{c}'s count matches its handler: {v}")
    def out(el, cls, port):
        return s.get(("shoal_element_output_packets_total", (("class", cls), ("element", el), ("port", str(port)))))
    check(out("rt", "DirectIPLookup", 0) == float(ctl(sock, "read", "c0.count")) and
          out("rt", "DirectIPLookup", 1) == float(ctl(sock, "read", "c1.count")) and
          out("c1", "Counter", 0) == out("rt", "DirectIPLookup", 1) and out("q", "Queue", 0) == 0 and
          # (the device ran chk and rt in one chain: chk's output counts what went on to rt)
          out("chk", "CheckIPHeader", 0) == out("rt", "DirectIPLookup", 0) + out("rt", "DirectIPLookup", 1) > 0,
          f"packets out by element and port: rt {out('rt', 'DirectIPLookup', 0)}, {out('rt', 'DirectIPLookup', 1)}")
    drops = sum(v for (n, _), v in s.items() if n == "shoal_drops_total")
    check(drops == s[("shoal_packets_dropped_total", ())], "drops by reason add up to the dropped packets")
    check(fams.get("shoal_offload_latency_seconds") == "histogram", "the device latency histogram is there")
    buckets = sorted(((float(dict(l)["le"]), v) for (n, l), v in s.items() if n == "shoal_offload_latency_seconds_bucket"))
    check(buckets and all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), "buckets are cumulative")
    check(buckets and buckets[-1][1] == s.get(("shoal_offload_latency_seconds_count", ())) > 0,
          "+Inf bucket = count > 0 (the host device did the work)")
    busy = s.get(("shoal_offload_device_busy_seconds_total", ()))
    up = s.get(("shoal_uptime_seconds", ()))
    check(fams.get("shoal_offload_device_busy_seconds") == "counter" and busy is not None and 0 < busy <= up,
          f"the device's busy time is a counter, above 0 and at most the uptime: {busy} of {up}")
    check(s.get(("shoal_offload_device_aggregates_in_flight", ())) is not None, "the aggregates in flight")
    info = [dict(l) for (n, l), v in s.items() if n == "shoal_info" and v == 1]
    check(len(info) == 1 and info[0].get("device") == "host", f"shoal_info names the device the balancer opened: {info}")
    check(s.get(("shoal_worker_packets_total", (("kind", "received"), ("worker", "0")))) == npackets,
          "per-worker counters")
    # no writes through the metrics endpoint
    try:
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/metrics", data=b"x", method="POST"),
                               timeout=5)
        check(False, "POST is refused")
    except urllib.error.HTTPError as e:
        check(e.code in (404, 405), f"POST is refused ({e.code})")
    # a busy port is an error
    busy = subprocess.run([SHOAL, "run", "-q", "--metrics", str(port), "/dev/stdin"], input="Idle -> Discard;",
                          capture_output=True, text=True, timeout=20)
    check(busy.returncode == 1 and "cannot listen" in busy.stderr, f"a busy port: {busy.stderr!r}")
    ctl(sock, "stop")
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "the run stops")
    check(p.returncode == 0, f"the run exits 0: {p.returncode}")

# Without an offloading element no device is opened (no CUDA initialized on
# a GPU machine): shoal_info says none, and no device metrics are there.
with tempfile.TemporaryDirectory() as tmp:
    sock = os.path.join(tmp, "ctl.sock")
    p = subprocess.Popen([SHOAL, "run", "--metrics", "0", "/dev/stdin"], stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, text=True)
    p.stdin.write(f"FromDump({PCAP}, STOP false) -> c :: Counter -> Discard; ControlSocket(UNIX, {sock});")
    p.stdin.close()
    line = p.stderr.readline()
    port = int(line.rsplit(":", 1)[1].split("/")[0]) if "metrics at" in line else 0
    check(port > 0, f"the plain run's metrics address: {line!r}")
    if port:
        fams, s = scrape(port)
        info = [dict(l) for (n, l), v in s.items() if n == "shoal_info" and v == 1]
        check(len(info) == 1 and info[0].get("device") == "none", f"no device opened, shoal_info says none: {info}")
        check(("shoal_offload_device_busy_seconds_total", ()) not in s, "no device busy time without a device")
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    ctl(sock, "stop")
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
    check(p.returncode == 0, f"the plain run exits 0: {p.returncode}")

bad = subprocess.run([SHOAL, "run", "-q", "--metrics", "70000", "/dev/stdin"], input="Idle -> Discard;",
                     capture_output=True, text=True, timeout=20)
check(bad.returncode == 1 and "bad port" in bad.stderr, f"a bad port: {bad.stderr!r}")

print(f"metrics: {'FAIL ' + str(len(failures)) if failures else 'ok'}")
sys.exit(1 if failures else 0)

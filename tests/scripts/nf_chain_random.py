#!/usr/bin/python3
"""The offloaded NF chain against the CPU chain on random, partly broken traffic.

examples/gpu-nf-chain.click (flow layer, flow log, then firewall -> load
balancer -> rate limiter as one device chain with per-flow state resident
on the device) runs on the host device backend with random device delays
and injected faults; the same configuration without its OffloadBalancer
runs on the CPU. Both read one capture of interleaved flows with TCP flag
soup and random sequence numbers and windows, replies, UDP, ICMP echoes and
errors quoting the flows, IPv6, fragments, truncated packets, flipped bits
and junk. The two runs must end cleanly with balanced accounting, write the
same packets byte for byte and the same flow records, and the device must
have done the work (device packets; overlapping aggregates reading state
resident on the device; with faults, aggregates redone on the host).
(NfChain.* in the unit tests checks the same on well-formed generated
traffic; this one is for what a capture can hold.)
Usage: nf_chain_random.py SHOAL
"""
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

try:
    from scapy.all import ICMP, IP, IPv6, TCP, UDP, Ether, fragment
except ImportError:
    print("skipped: scapy is not installed")
    sys.exit(77)

SHOAL = sys.argv[1]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def traffic(seed, n, path):
    """n random packets (more with fragments) as an Ethernet pcap."""
    rng = random.Random(seed)
    flows = []
    for _ in range(rng.choice([20, 200, 2000])):
        a = "10.9.%d.%d" % (rng.randrange(4), rng.randrange(1, 255))
        b = rng.choice(["10.1.0.1"] * 3 + ["10.1.%d.%d" % (rng.randrange(3), rng.randrange(1, 255)),
                                           "10.2.0.%d" % rng.randrange(1, 5), "192.0.2.7"])
        dport = rng.choice([5000, 5001, 5099, 5050, 5002, 80, 53, rng.randrange(1, 65536)])
        flows.append((a, b, rng.choice([6, 6, 17, 1, 41]), rng.randrange(1024, 65536), dport))
    out, t = [], 1700000000.0
    for k in range(n):
        a, b, proto, sp, dp = rng.choice(flows) if rng.random() < 0.9 else flows[0]
        if rng.random() < 0.4:
            a, b, sp, dp = b, a, dp, sp  # the reply direction
        pay = bytes(rng.randrange(256) for _ in range(rng.choice([0, 0, 10, 100, 600])))
        ip = IP(src=a, dst=b, ttl=rng.choice([1, 64, 255]), id=rng.randrange(65536))
        if proto == 6:
            flags = rng.choice(["S", "SA", "A", "PA", "FA", "R", "RA", "F", "", "SF", "SR", "A", "A", "PA"])
            p = ip / TCP(sport=sp, dport=dp, flags=flags, seq=rng.choice([0, 1000, rng.randrange(2**32)]),
                         ack=rng.choice([0, 1001, rng.randrange(2**32)]), window=rng.choice([0, 1024, 65535])) / pay
        elif proto == 17:
            p = ip / UDP(sport=sp, dport=dp) / pay
        elif proto == 41:
            p = IPv6(src="2001:db8::%x" % (sp & 0xfff), dst="2001:db8:1::1") / TCP(sport=sp, dport=dp, flags="S") / pay
        elif rng.random() < 0.5:
            p = ip / ICMP(type=8, id=sp, seq=k & 0xffff) / pay
        else:  # an error quoting the flow
            quoted = bytes(IP(src=b, dst=a) / TCP(sport=dp, dport=sp))[:rng.choice([8, 28, 40])]
            p = IP(src=rng.choice([b, "198.51.100.1"]), dst=a) / ICMP(type=3, code=rng.randrange(16)) / quoted
        r = rng.random()
        if r < 0.03 and proto != 41 and len(p) > 60:
            for f in fragment(p, fragsize=rng.choice([8, 16, 32])):
                out.append((t, bytes(ETH / f)))
            t += 0.0001
            continue
        raw = bytes(ETH / p)
        if r < 0.06:
            raw = raw[:rng.randrange(1, len(raw))]  # truncated
        elif r < 0.08:
            raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))  # junk
        elif r < 0.10:
            b_ = bytearray(raw)
            b_[rng.randrange(14, len(b_))] ^= 1 << rng.randrange(8)  # a flipped bit
            raw = bytes(b_)
        out.append((t, raw))
        t += rng.choice([0.00001, 0.0001, 0.001, 0.5])
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ts, raw in out:
            f.write(struct.pack("<IIII", int(ts), int(round((ts % 1) * 1e6)) % 1000000, len(raw), len(raw)) + raw)
    return len(out)


def run(conf, pcap, prefix, stats, extra):
    cmd = [SHOAL, "run", conf, "IN=" + pcap, "OUT=" + prefix, "--stats-out", stats] + extra
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    if r.returncode != 0 or not re.search(r": balanced", r.stderr):
        print("FAIL: %s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
        return None
    with open(stats) as f:
        return json.load(f)


# (seed, packets, device options): delays, faults, aggregate sizes, slots in flight
CASES = [
    (11, 2500, ["--offload-batches", "4", "--device-delay-us", "50"]),
    (12, 2500, ["--offload-batches", "8", "--device-faults", "0.15", "--device-delay-us", "20"]),
    (13, 2500, ["--offload-batches", "1", "--offload-inflight", "8", "--device-delay-us", "100",
                "--device-faults", "0.05"]),
]

with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(ROOT, "examples", "gpu-nf-chain.click")) as f:
        dev_text = f.read()
    # a rate that limits, so that each packet's verdict depends on the state
    # the flow's packets before it left (the example's 1 Gbps never does)
    if "BANDWIDTH 1Gbps" not in dev_text:
        sys.exit("FAIL: examples/gpu-nf-chain.click's rate limiter changed; update this test")
    dev_text = dev_text.replace("BANDWIDTH 1Gbps", "RATE 300, BURST 4")
    cpu_text = "\n".join(l for l in dev_text.splitlines() if "OffloadBalancer" not in l)
    if cpu_text == dev_text:
        sys.exit("FAIL: examples/gpu-nf-chain.click has no OffloadBalancer line to take out")
    dev_conf, cpu_conf = os.path.join(tmp, "dev.click"), os.path.join(tmp, "cpu.click")
    open(dev_conf, "w").write(dev_text)
    open(cpu_conf, "w").write(cpu_text)
    fails, overlapped, redone = 0, 0, 0
    for seed, n, opts in CASES:
        pcap = os.path.join(tmp, "in%d.pcap" % seed)
        total = traffic(seed, n, pcap)
        c = run(cpu_conf, pcap, os.path.join(tmp, "c%d-" % seed), os.path.join(tmp, "c%d.json" % seed), [])
        d = run(dev_conf, pcap, os.path.join(tmp, "d%d-" % seed), os.path.join(tmp, "d%d.json" % seed),
                ["--device", "host"] + opts)
        if c is None or d is None:
            fails += 1
            continue
        what = "seed %d (%d packets, %s)" % (seed, total, " ".join(opts))
        outs = [open(os.path.join(tmp, "%s%d-nf-out.pcap" % (x, seed)), "rb").read() for x in "cd"]
        logs = [sorted(open(os.path.join(tmp, "%s%d-nf-flows.log" % (x, seed))).read().splitlines()) for x in "cd"]
        fw = d["elements"]["fw"]
        dev_packets = int(fw.get("offload_device_packets", 0))
        problems = []
        if outs[0] != outs[1]:
            problems.append("the written packets differ (%d and %d bytes)" % (len(outs[0]), len(outs[1])))
        if logs[0] != logs[1]:
            problems.append("the flow records differ (%d and %d)" % (len(logs[0]), len(logs[1])))
        if len(outs[0]) <= 24 or not logs[0]:
            problems.append("nothing went through the chain")
        if not int(d["drops"].get("rl", {}).get("rate-limited", 0)):
            problems.append("the rate limiter limited nothing")
        if dev_packets == 0:
            problems.append("the device took no packet")
        if d["accounting"]["received"] != total or c["accounting"]["received"] != total:
            problems.append("received %s and %s of %d" % (c["accounting"]["received"], d["accounting"]["received"],
                                                           total))
        overlapped += int(fw.get("offload_flow_overlapped", 0)) and int(fw.get("offload_flow_resident", 0))
        redone += int(fw.get("offload_flow_redone", 0)) + int(fw.get("offload_cpu_fault", 0))
        if problems:
            fails += 1
            print("FAIL: %s: %s" % (what, "; ".join(problems)))
        else:
            print("ok: %s: %d device packets, %d bytes out, %d flow records" % (what, dev_packets, len(outs[0]),
                                                                              len(logs[0])))
    # The IDS offloaded in NBA's form (FlowIPManager -> OffloadBalancer ->
    # IDSMatcher) against the same configuration on the CPU: the same EVE
    # records (the flow records included: their packets and bytes each way,
    # their end and reason) and the same fast.log. The IDS inspects a
    # packet when its aggregate completes, batches after the flow layer
    # tracked it: a flow that ended meanwhile keeps its entry and its
    # record waits (flow::FlowTable::hold); before, a new flow could take
    # the entry and the late packets were counted in the new flow.
    with open(os.path.join(ROOT, "examples", "gpu-ids.click")) as f:
        ids_dev = f.read()
    ids_cpu = "\n".join(l for l in ids_dev.splitlines() if "OffloadBalancer" not in l)
    if ids_cpu == ids_dev:
        sys.exit("FAIL: examples/gpu-ids.click has no OffloadBalancer line to take out")
    open(os.path.join(tmp, "ids-dev.click"), "w").write(ids_dev)
    open(os.path.join(tmp, "ids-cpu.click"), "w").write(ids_cpu)

    def records(path):
        with open(path) as f:
            return sorted(re.sub(r'"flow_id":\d+,', "", l) for l in f.read().splitlines()
                          if '"event_type":"stats"' not in l)

    for seed, n, opts in CASES[:2]:
        pcap = os.path.join(tmp, "in%d.pcap" % seed)
        outs = []
        for name, conf, extra in (("ic", "ids-cpu.click", []), ("id", "ids-dev.click", ["--device", "host"] + opts)):
            log = os.path.join(tmp, "%s%d-" % (name, seed))
            cmd = [SHOAL, "run", os.path.join(tmp, conf), "IN=" + pcap, "LOG=" + log,
                   "--stats-out", log + "stats.json"] + extra
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
            if r.returncode != 0 or not re.search(r": balanced", r.stderr):
                print("FAIL: %s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
                outs = None
                break
            outs.append((records(log + "eve.json"), open(log + "fast.log").read()))
        ids_dev_packets = 0
        if outs is not None:
            with open(os.path.join(tmp, "id%d-stats.json" % seed)) as f:
                ids_dev_packets = int(json.load(f)["elements"]["ids"].get("offload_device_packets", 0))
        what = "IDS, seed %d (%s)" % (seed, " ".join(opts))
        if outs is None:
            fails += 1
        elif ids_dev_packets == 0:
            fails += 1
            print("FAIL: %s: the device took no packet" % what)
        elif not any('"event_type":"flow"' in l for l in outs[0][0]):
            fails += 1
            print("FAIL: %s: no flow records" % what)
        elif outs[0] != outs[1]:
            fails += 1
            a, b = set(outs[0][0]), set(outs[1][0])
            print("FAIL: %s: the EVE records differ (%d only on the CPU, %d only offloaded)%s" %
                  (what, len(a - b), len(b - a), "" if outs[0][1] == outs[1][1] else "; fast.log differs"))
            for l in sorted(a - b)[:2] + sorted(b - a)[:2]:
                print("  " + l[:300])
        else:
            print("ok: %s: %d EVE records alike, %d device packets" % (what, len(outs[0][0]), ids_dev_packets))
    # The IDS offloaded in Snap's form (Batcher -> FlowIPManager ->
    # HostToDevice ... CompletionQueue: examples/gpu-ids-router.click) with
    # timeouts short enough that flows time out inside batches: batches of
    # 1024 packets and of 7 give the same EVE records. An expiry pass comes
    # once a batch, at its first packet; a packet that finds its flow past
    # the timeout starts a new one whatever pass came, and at the stop the
    # flows past their timeout end as timed out. (Before, a flow went on
    # past its timeout until the next batch began: 296 of 1762 records
    # differed.)
    with open(os.path.join(ROOT, "examples", "gpu-ids-router.click")) as f:
        snap = f.read()
    short = ("FlowIPManager(UDP_TIMEOUT 1s, UDP_STREAM_TIMEOUT 1s, ICMP_TIMEOUT 1s, TCP_SYN_SENT_TIMEOUT 1s, "
             "TCP_ESTABLISHED_TIMEOUT 2s, TCP_CLOSE_TIMEOUT 1s, GENERIC_TIMEOUT 1s) ")
    for seed, n, _ in CASES[:2]:
        pcap = os.path.join(tmp, "in%d.pcap" % seed)
        outs = []
        for size in (1024, 7):
            conf = snap.replace("Batcher(1024, 100us)", "Batcher(%d, 100us)" % size).replace("-> FlowIPManager ", "-> " + short)
            if "Batcher(%d, 100us)" % size not in conf or short not in conf:
                sys.exit("FAIL: examples/gpu-ids-router.click no longer has its Batcher and FlowIPManager lines")
            path = os.path.join(tmp, "snap%d.click" % size)
            open(path, "w").write(conf)
            prefix = os.path.join(tmp, "s%d-%d-" % (seed, size))
            stats = run(path, pcap, prefix, prefix + "stats.json", ["--device", "host"])
            if stats is None:
                outs = None
                break
            scans = int(stats["elements"]["ids"].get("stream_device_scans", 0))
            outs.append((records(prefix + "eve.json"), open(prefix + "fast.log").read(), scans))
        what = "Snap-form IDS, seed %d" % seed
        if outs is None:
            fails += 1
            continue
        timeouts = sum('"reason":"timeout"' in l for l in outs[0][0])
        if not outs[0][2] or not outs[1][2]:
            fails += 1
            print("FAIL: %s: the device scanned no stream" % what)
        elif timeouts < 100:
            fails += 1
            print("FAIL: %s: only %d flows timed out" % (what, timeouts))
        elif outs[0][:2] != outs[1][:2]:
            fails += 1
            a, b = set(outs[0][0]), set(outs[1][0])
            print("FAIL: %s: batches of 1024 and of 7 give different EVE records (%d and %d apart)" %
                  (what, len(a - b), len(b - a)))
            for l in sorted(a - b)[:2] + sorted(b - a)[:2]:
                print("  " + l[:300])
        else:
            print("ok: %s: %d EVE records alike in batches of 1024 and 7, %d flows timed out" %
                  (what, len(outs[0][0]), timeouts))
    if not overlapped:
        fails += 1
        print("FAIL: no aggregate overlapped another reading flow state resident on the device")
    if not redone:
        fails += 1
        print("FAIL: no injected fault made an aggregate run again on the host")
    print("nf_chain_random: %d cases, %d failed" % (len(CASES) + 4, fails))
    sys.exit(1 if fails else 0)

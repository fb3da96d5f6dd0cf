#!/usr/bin/env bash
# shoal bench-snap, short, on the host backend (CI has no GPU): every
# application has its CPU and offloaded rows with sane numbers, no flow was
# reordered, and the chart is drawn where matplotlib is installed.
set -u
SHOAL=$1; SRC=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$SRC" || exit 1
"$SHOAL" bench-snap --device host --packets 3000 --sizes 64 1518 --batch 512 --check-packets 3000 \
  --out "$tmp/snap.json" --png "$tmp/snap.png" > "$tmp/log" 2>&1
rc=$?
cat "$tmp/log"
[ $rc = 0 ] || { echo "FAIL: bench-snap exited $rc"; exit 1; }
/usr/bin/python3 - "$tmp/snap.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["results"]
assert j["offload_device"] == "host", j["offload_device"]
for app in ("forward", "sdn-forwarder", "dpi-router", "ids-router"):
    for size in (64, 1518):
        modes = {r["mode"] for r in rows if r["app"] == app and r["size"] == size}
        want = {"cpu"} if app == "forward" else {"cpu", "offload", "offload-noslice"}
        assert modes == want, (app, size, modes)
for r in rows:
    assert r["mpps"] > 0 and abs(r["gbps"] - r["mpps"] * r["size"] * 8 / 1000) < 1e-6 * max(1, r["gbps"]), r
    if r["mode"] != "cpu":
        p50, p99, p999 = map(float, r["latency_us_p50_p99_p999"].split())
        assert 0 < p50 <= p99 <= p999, r
# slicing moves less than whole packets for the SDN forwarder (92 of 1518 bytes)
sl = {r["mode"]: r["h2d_bytes_per_packet"] for r in rows if r["app"] == "sdn-forwarder" and r["size"] == 1518 and r["mode"] != "cpu"}
assert sl["offload"] < sl["offload-noslice"] / 4, sl
assert j["reordered_total"] == 0 and len(j["order"]) == 7, j["order"]
assert all(o["packets"] > 2000 for o in j["order"]), j["order"]
print("bench-snap: ok")
PY
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  [ -s "$tmp/snap.png" ] || { echo "FAIL: no chart"; exit 1; }
fi

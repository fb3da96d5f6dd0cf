#!/usr/bin/env bash
# shoal bench-scale, short, on the host backend (CI has no GPU): the router,
# the IDS router and the large IDS with two workers, CPU and offloaded
# (the IDS with one device thread per packet and in chunks), every row with
# sane numbers, also after its first half second (--settle: the ratio to the
# CPU row of the same stretch); the IDS router's whole packets go over but
# only its written bytes come back. Then NBA's evaluation (--alb) for the
# router: two fixed splits and the adaptive balancer, which must report its
# share and how it compares with the better fixed one.
set -u
SHOAL=$1; SRC=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$SRC" || exit 1
"$SHOAL" bench-scale --device host --threads 2 --sizes 1518 --packets 3000 --app router ids-router ids \
  --ids-rules 300 --ids-chunk 0 128 --settle 0.5 --out "$tmp/scale.json" > "$tmp/log" 2>&1
rc=$?
cat "$tmp/log"
[ $rc = 0 ] || { echo "FAIL: bench-scale exited $rc"; exit 1; }
/usr/bin/python3 - "$tmp/scale.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["results"]
assert j["offload_device"] == "host", j["offload_device"]
modes = {(r["app"], r["mode"]) for r in rows}
cpu_settled = {r["app"]: r["mpps_settled"] for r in rows if r["mode"] == "cpu"}
want = {("router", "cpu"), ("router", "offload"), ("ids-router", "cpu"), ("ids-router", "offload"),
        ("ids", "cpu"), ("ids", "offload-c0"), ("ids", "offload-c128")}
assert modes == want, modes
for r in rows:
    assert r["workers"] == 2 and r["size"] == 1518, r
    assert r["mpps"] > 0 and abs(r["gbps"] - r["mpps"] * r["size"] * 8 / 1000) < 1e-6 * max(1, r["gbps"]), r
    assert 0.9 < r["replay_s"] < 5, r
    assert r["mpps_settled"] > 0, r
    if r["mode"] == "cpu":
        continue
    assert r["vs_cpu"] > 0 and 0 < r["device_share"] <= 1, r
    assert abs(r["vs_cpu_settled"] - r["mpps_settled"] / cpu_settled[r["app"]]) < 1e-9, r
    assert all(0 <= v <= 1 for v in r["stage_share"].values()), r
    assert r["h2d_bytes_per_packet"] > 0, r
ir = [r for r in rows if r["app"] == "ids-router" and r["mode"] == "offload"][0]
assert ir["h2d_bytes_per_packet"] > 1400 and ir["d2h_bytes_per_packet"] < 200, ir
print("bench-scale: ok")
PY
"$SHOAL" bench-scale --alb --device host --threads 1 --sizes 64 --packets 3000 --app router --fraction 0 1 \
  --alb-latency 5000 --out "$tmp/alb.json" > "$tmp/log" 2>&1
rc=$?
cat "$tmp/log"
[ $rc = 0 ] || { echo "FAIL: bench-scale --alb exited $rc"; exit 1; }
/usr/bin/python3 - "$tmp/alb.json" <<'PY' || exit 1
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert [r["mode"] for r in rows] == ["f0", "f1", "alb", "alb-p99<5000"], [r["mode"] for r in rows]
for r in rows:
    assert r["benchmark"] == "alb" and r["app"] == "router" and r["mpps"] > 0, r
    assert 0 <= r["final_fraction_worker0"] <= 1, r
for r in rows[2:]:
    assert r["best_fixed"] in ("f0", "f1") and r["vs_best_fixed"] > 0 and r["epochs"] > 10, r
    # the climber's sweeps (one at the start at least), those a change of traffic began, its noise band
    assert r["sweeps"] >= 1 and 0 <= r["changes"] <= r["sweeps"] and 0.02 <= r["band"] <= 0.1 + 1e-9, r
# the climber replayed on the fixed rows' curve (no noise, 1000 intervals) keeps 95% of its best
m = rows[2]["model_vs_best_fixed"]
assert 0.95 <= m["noise0_1000"] <= 1 + 1e-9 and 0 < m["noise0"] <= 1 + 1e-9 and 0 < m["noise5"] <= 1.1, m
print("bench-scale --alb: ok")
PY

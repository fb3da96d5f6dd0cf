#!/usr/bin/env bash
# shoal bench-flow runs (small: tables of 1,000 flows, a 20,000-SYN flood,
# 300,000 packets a router run, one run of each timed case, the host device table) and its record holds
# every case with positive rates: the table beside the bare one, reassembly,
# the router path with and without the flow layer (every packet counted, the
# bench checks), the floor from a bare batched lookup, window tracking's
# cost (no valid segment refused), the device table (also with window
# tracking), the batch reassembly
# and the flood (on the CPU table and the device table). Fails when the bench fails.
set -u
SHOAL=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$SHOAL" bench-flow --flows 1000 --flows 1000000 --flood 20000 --router-packets 300000 --reps 1 --device host \
  --window-flows 1000 --window-packets 200000 \
  --out "$tmp/flow.json" || { echo "FAIL: bench-flow exited $?"; exit 1; }
/usr/bin/python3 - "$tmp/flow.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["results"]
by = {}
for r in rows:
    by.setdefault(r["case"], []).append(r)
ok = True
def need(cond, what):
    global ok
    if not cond:
        ok = False
        print("FAIL:", what)
need(len(by.get("table", [])) == 2 and all(r["lookup_per_sec"] > 0 and r["bare_batch32_lookup_per_sec"] > 0
                                            for r in by["table"]), "table rows")
need(len(by.get("reassembly", [])) == 2 and all(r["gbit_per_sec"] > 0 for r in by["reassembly"]), "reassembly rows")
routers = by.get("router", [])
need(len(routers) == 3 and all(r["pps_with_flows"] > 0 and r["pps_without"] > 0 for r in routers), "router rows")
need(all((r["bare_lookup_floor_ns"] > 0) == (r["flows"] >= 1000000) for r in routers), "the floor at 1M flows")
need(all(all(k in r for k in ("steady_ns_without", "steady_ns_with", "steady_cost")) for r in routers),
     "the steady state's figures")
need(len(by.get("device_table", [])) == 1 and by["device_table"][0]["device"] == "host", "the host device table")
# and with window tracking (the bench fails when either table finds a valid
# segment invalid, or they hold different numbers of flows)
need(len(by.get("device_window", [])) == 1 and by["device_window"][0]["device"] == "host"
     and by["device_window"][0]["device_pps"] > 0 and by["device_window"][0]["cpu_pps"] > 0, "the device window row")
# the batch reassembly on the host device: every segment of these clean
# trains placed by the device, and in-batch reordering never held
br = by.get("batch_reassembly", [])
need(len(br) == 2 and all(r["device"] == "host" and r["device_gbit_per_sec"] > 0 and r["one_by_one"] == 0
                          and r["placed"] > 0 and r["buffered_peak"] == 0 for r in br), "batch reassembly rows")
# window tracking: the bench itself fails when a valid segment is found invalid
need(len(by.get("window", [])) == 1 and by["window"][0]["ns_per_packet_with"] > 0
     and by["window"][0]["ns_per_packet_without"] > 0, "the window tracking row")
need(len(by.get("synflood", [])) == 1 and by["synflood"][0]["established_kept"] == 1000, "the flood keeps the established")
# the flood on the host device table (a quarter of the flood's capacity): it
# evicts ahead of the aggregates, keeps the connections, no packet without room
df = by.get("device_synflood", [])
need(len(df) == 1 and df[0]["device"] == "host" and df[0]["established_kept"] == 1000 and df[0]["evicted"] > 0
     and df[0]["eviction_passes"] > 0 and df[0]["full_packets"] == 0, "the device flood row")
print(f"bench-flow: {len(rows)} rows: {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY

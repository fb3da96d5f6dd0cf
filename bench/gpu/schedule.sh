#!/usr/bin/env bash
# GASPP's packet scheduling, measured: IDSMatcher offloaded (NBA form, every
# batch to the device) over an IMIX capture of TCP, UDP and ICMP, with and
# without --offload-schedule, three runs each; prints packets per second
# and writes JSON. Usage: bench/gpu/schedule.sh SHOAL OUT.json [DEVICE]
set -u
SHOAL=$1; OUT=$2; DEVICE=${3:-cuda}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$SHOAL" gen --out "$tmp/imix.pcap" --count 400000 --flows 2000 --proto mix --imix >/dev/null || exit 1
cat >"$tmp/ids.click" <<C
FromDump($tmp/imix.pcap, STOP true) -> OffloadBalancer(1)
  -> i :: IDSMatcher(RULES examples/data/ids/web.rules, VARS examples/data/ids/vars.yaml, ENGINE builtin, QUIET true)
  -> c :: Counter -> Discard;
C
rates=()
for mode in off on; do
  best=0
  for rep in 1 2 3; do
    flag=; [ $mode = on ] && flag=--offload-schedule
    "$SHOAL" run -q "$tmp/ids.click" --device "$DEVICE" $flag --offload-batches 64 --stats-out "$tmp/s.json" || exit 1
    pps=$(/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(int(j["elements"]["c"]["count"]) / j["elapsed_s"])' "$tmp/s.json")
    best=$(/usr/bin/python3 -c "print(max($best, $pps))")
  done
  rates+=("$best")
  echo "schedule $mode: $(/usr/bin/python3 -c "print('%.3f' % ($best / 1e6))") Mpps"
done
/usr/bin/python3 - "$OUT" "${rates[0]}" "${rates[1]}" "$DEVICE" <<'PY'
import json, subprocess, sys
commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
json.dump({"bench": "schedule", "commit": commit, "device": sys.argv[4], "pps_unscheduled": float(sys.argv[2]),
           "pps_scheduled": float(sys.argv[3]), "ratio": float(sys.argv[3]) / float(sys.argv[2])},
          open(sys.argv[1], "w"), indent=2)
PY

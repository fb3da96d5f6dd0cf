#!/usr/bin/env bash
# make demo: generate traffic, run examples/demo.click on it, show the result.
set -euo pipefail
BUILD=${1:-build}
SHOAL=$BUILD/shoal
OUT=$BUILD/demo
mkdir -p "$OUT"
"$SHOAL" gen --out "$OUT/in.pcap" --count 20000 --imix --flows 256 --proto mix
echo
echo "== shoal run examples/demo.click IN=$OUT/in.pcap OUT=$OUT/ --stats-out $OUT/stats.json"
"$SHOAL" run examples/demo.click IN="$OUT/in.pcap" OUT="$OUT/" --stats-out "$OUT/stats.json"
echo
/usr/bin/python3 - "$OUT/stats.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"{'element':<10} {'class':<10} {'packets':>9} {'bytes':>11}")
for name, h in j["elements"].items():
    if h["class"] == "Counter":
        print(f"{name:<10} {h['class']:<10} {h['count']:>9} {h['byte_count']:>11}")
a = j["accounting"]
print(f"\naccounting: received {a['received']} = sent {a['sent']} + dropped {a['dropped']} + held {a['held']}"
      f"  ({'balanced' if a['balanced'] else 'UNBALANCED'}); full statistics in {sys.argv[1]}")
PY
echo
for f in tcp udp other; do
  printf "%-28s %s\n" "$OUT/$f.pcap" "$(tshark -r "$OUT/$f.pcap" 2>/dev/null | wc -l) packets (counted by tshark)"
done
echo "first TCP packets, as tshark reads them:"
tshark -r "$OUT/tcp.pcap" -c 3 2>/dev/null || true

#!/usr/bin/env bash
# make demo: generate traffic, run examples/demo.click on it, show the result.
set -euo pipefail
BUILD=${1:-build}
SHOAL=$BUILD/shoal
OUT=$BUILD/demo
mkdir -p "$OUT"
"$SHOAL" gen --out "$OUT/in.pcap" --count 20000 --imix --flows 256 --proto mix
echo
echo "== shoal run examples/demo.click IN=$OUT/in.pcap OUT=$OUT/"
"$SHOAL" run examples/demo.click IN="$OUT/in.pcap" OUT="$OUT/" --stats text
echo
for f in tcp udp other; do
  printf "%-28s %s\n" "$OUT/$f.pcap" "$(tshark -r "$OUT/$f.pcap" 2>/dev/null | wc -l) packets (counted by tshark)"
done
echo "first TCP packets, as tshark reads them:"
tshark -r "$OUT/tcp.pcap" -c 3 2>/dev/null || true

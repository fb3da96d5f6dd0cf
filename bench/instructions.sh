#!/usr/bin/env bash
# Instructions per packet under callgrind: a repeatable figure where wall
# clock is noisy (shared VMs) and hardware counters are missing. Start-up is
# subtracted: (instructions at LIMIT=N - instructions at LIMIT=0) / N.
#   bench/instructions.sh [build/shoal] [out.json]
set -euo pipefail
SHOAL=${1:-build/shoal}
OUT=${2:-bench/results/instructions-latest.json}
N=${N:-300000}
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
count() {  # config, limit, burst -> instructions
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$SHOAL" run -q "$1" LIMIT="$2" BURST="$3" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
  grep -oP 'refs:\s+\K[0-9,]+' "$tmp/err" | tr -d ,
}
rows=()
printf "%-26s %6s %12s\n" "configuration" "batch" "instr/packet"
for cfg in examples/forward.click examples/classify.click; do
  for b in 1 32 256; do
    base=$(count "$cfg" 0 "$b")
    full=$(count "$cfg" "$N" "$b")
    per=$(( (full - base) / N ))
    printf "%-26s %6s %12s\n" "$cfg" "$b" "$per"
    rows+=("{\"config\": \"$cfg\", \"batch\": $b, \"instructions_per_packet\": $per}")
  done
done
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
  echo "{\"benchmark\": \"instructions\", \"tool\": \"valgrind --tool=callgrind\", \"commit\": \"$commit\","
  echo " \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')\", \"packets\": $N, \"results\": ["
  (IFS=,; echo "  ${rows[*]}")
  echo "]}"
} >"$OUT"
echo "wrote $OUT"

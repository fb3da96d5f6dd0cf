#!/usr/bin/env bash
# Shoal against FastClick, side by side: the same Click configuration on
# both, whole processes pinned to one core, alternating, REPS runs each; the
# CPU seconds (user + system) of each run, the medians and their ratio.
# FastClick is built from ../shared/anchors/fastclick (about 5 minutes on 2
# cores, once, in $FASTCLICK_DIR); without it the script says so and exits
# 77 (skipped).
#
# Usage: bench/peers/run.sh [BUILD_DIR]   (default build)
#   PACKETS (default 4000000), REPS (5), CORE (1), CASES (all: see below),
#   OUT (bench/results/peers-<host>-<date>.json)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
shoal=$build/shoal
[ -x "$shoal" ] || { echo "peers: build Shoal first ($shoal)"; exit 1; }
anchor=../shared/anchors/fastclick/build.sh
fc_dir=${FASTCLICK_DIR:-/tmp/fastclick}
if [ ! -x "$fc_dir/bin/click" ]; then
  [ -x "$anchor" ] || { echo "peers: no FastClick ($anchor is missing): skipped"; exit 77; }
  echo "peers: building FastClick into $fc_dir (about 5 minutes)"
  bash "$anchor" "$fc_dir" >/dev/null
fi
click=$fc_dir/bin/click
packets=${PACKETS:-4000000}
reps=${REPS:-5}
core=${CORE:-1}
[ "$(nproc)" -gt "$core" ] || core=0
cases=${CASES:-"infinite fastudpflows fromdump fromdump-direct fromdump-radix replay-direct replay-radix ipfilter ipclassifier config-load"}
work=$(mktemp -d /tmp/shoal-peers.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Inputs: a capture of 64-byte UDP frames over 1024 flows (page-cached by a
# first read), 16,385 routes, 100 filter rules.
"$shoal" gen --out "$work/in.pcap" --count "$packets" --size 64 --flows 1024 >/dev/null 2>&1
cat "$work/in.pcap" >/dev/null
python3 - "$work" <<'PY'
import random, sys
w = sys.argv[1]
rng = random.Random(7)
routes = ["10.0.0.0/8 0", "0.0.0.0/0 1"]
while len(routes) < 16385:
    ln = rng.randint(8, 28)
    a = rng.getrandbits(32) & (0xffffffff << (32 - ln)) & 0xffffffff
    routes.append(f"{a >> 24}.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}/{ln} {rng.randint(0, 1)}")
open(f"{w}/routes.txt", "w").write(",\n".join(routes))
rules = []
for i in range(100):
    rules.append(f"deny src host 172.{i // 250}.{i % 250}.1 and udp dst port {1000 + i}")
open(f"{w}/filter.txt", "w").write(",\n".join(rules + ["allow all"]))
pats = [f"src host 172.{i // 250}.{i % 250}.1 and udp dst port {1000 + i}" for i in range(100)]
open(f"{w}/patterns.txt", "w").write(",\n".join(pats + ["-"]))
# A large router configuration: the 16,385 routes inline, Click style.
PY
routes=$(cat "$work/routes.txt")
filter=$(cat "$work/filter.txt")
patterns=$(cat "$work/patterns.txt")
npat=$(grep -c . "$work/patterns.txt")

conf() {  # the configuration of case $1
  local dump="FromDump($work/in.pcap, STOP true) -> Strip(14) -> CheckIPHeader"
  case $1 in
    infinite) echo "InfiniteSource(LENGTH 64, BURST 32, LIMIT $((packets * 10)), STOP true) -> c :: Counter -> Discard;" ;;
    fastudpflows) echo "FastUDPFlows(RATE 0, LIMIT $((packets * 10)), LENGTH 64, SRCETH 02:00:00:00:00:01, SRCIP 10.0.0.1, \
DSTETH 02:00:00:00:00:02, DSTIP 10.0.0.2, FLOWS 1024, FLOWSIZE 1, STOP true) -> c :: Counter -> Discard;" ;;
    fromdump) echo "$dump -> c :: Counter -> Discard;" ;;
    fromdump-direct | fromdump-radix | config-load)
      local el=DirectIPLookup
      [ "$1" = fromdump-radix ] && el=RadixIPLookup
      echo "$dump -> rt :: $el($routes); rt[0] -> DecIPTTL -> c :: Counter -> Discard; rt[1] -> Discard;" ;;
    replay-direct | replay-radix)  # FastClick's published form: the trace preloaded, replayed 3 times
      local el=DirectIPLookup
      [ "$1" = replay-radix ] && el=RadixIPLookup
      echo "FromDump($work/in.pcap, STOP false) -> ReplayUnqueue(STOP 3) -> Strip(14) -> CheckIPHeader \
-> rt :: $el($routes); rt[0] -> DecIPTTL -> c :: Counter -> Discard; rt[1] -> Discard;" ;;
    ipfilter) echo "$dump -> IPFilter($filter) -> c :: Counter -> Discard;" ;;
    ipclassifier)
      echo "$dump -> ipc :: IPClassifier($patterns); c :: Counter -> Discard;"
      for ((i = 0; i < npat; i++)); do echo "ipc[$i] -> c;"; done ;;
  esac
}

# CPU seconds of one run (user + system), from bash's own accounting.
cpu_of() {
  local t0 t1 me=$BASHPID  # this (sub)shell: its children's times count in its own
  t0=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$me/stat")
  "$@" >/dev/null 2>"$work/err" || { echo "peers: failed: $*" >&2; cat "$work/err" >&2; return 1; }
  t1=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$me/stat")
  awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (b - a) / hz }'
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

host=$(hostname -s 2>/dev/null || echo host)
out=${OUT:-bench/results/peers-$host-$(date +%F).json}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//')
printf '%-18s %12s %12s %10s\n' case "fastclick s" "shoal s" "shoal is"
rows=()
# The packets each side's Counter saw, to check both did the same work.
count_fastclick() { "$click" -h c.count "$1" 2>/dev/null | tail -n 1; }
count_shoal() {
  "$shoal" run --quiet --stats json "$1" 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["elements"]["c"]["count"])'
}
for c in $cases; do
  conf "$c" >"$work/$c.click"
  if [ "$c" != config-load ]; then
    nf=$(count_fastclick "$work/$c.click") ns=$(count_shoal "$work/$c.click")
    if [ "$nf" != "$ns" ] || [ -z "$nf" ]; then
      echo "peers: $c: FastClick counted '$nf' packets, Shoal '$ns'; the comparison would be unfair" >&2
      exit 1
    fi
  fi
  fc=() sh=()
  for ((r = 0; r < reps; r++)); do
    if [ "$c" = config-load ]; then  # parse, expand and configure only
      fc+=("$(cpu_of taskset -c "$core" "$click" -q -o /dev/null "$work/$c.click")")
      sh+=("$(cpu_of taskset -c "$core" "$shoal" check "$work/$c.click")")
    else
      fc+=("$(cpu_of taskset -c "$core" "$click" "$work/$c.click")")
      sh+=("$(cpu_of taskset -c "$core" "$shoal" run --quiet "$work/$c.click")")
    fi
  done
  mf=$(median "${fc[@]}") ms=$(median "${sh[@]}")
  ratio=$(awk -v f="$mf" -v s="$ms" 'BEGIN { if (s <= 0) s = 0.001; printf "%.2f", f / s }')
  verdict=$(awk -v r="$ratio" 'BEGIN { printf (r >= 1 ? "%.2fx faster" : "%.2fx slower"), (r >= 1 ? r : 1 / r) }')
  printf '%-18s %12s %12s %14s\n' "$c" "$mf" "$ms" "$verdict"
  rows+=("{\"case\": \"$c\", \"fastclick_cpu_s\": $mf, \"shoal_cpu_s\": $ms, \"speed_ratio\": $ratio, \
\"fastclick_runs\": [$(IFS=,; echo "${fc[*]}")], \"shoal_runs\": [$(IFS=,; echo "${sh[*]}")]}")
done
mkdir -p "$(dirname "$out")"
{
  echo "{\"benchmark\": \"peers\", \"machine\": {\"cpu\": \"$cpu\", \"cores\": $(nproc)}, \"device\": \"none\","
  echo " \"commit\": \"$commit\", \"date\": \"$(date -Is)\", \"packets\": $packets, \"reps\": $reps, \"core\": $core,"
  echo " \"results\": [$(IFS=,; echo "${rows[*]}")]}"
} >"$out"
echo "wrote $out"

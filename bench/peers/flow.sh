#!/usr/bin/env bash
# The flow layer against FastClick's, side by side: shoal bench's router path
# (FastUDPFlows -> Strip -> CheckIPHeader -> DirectIPLookup over 170,000
# prefixes -> DecIPTTL, three outputs) with and without a flow manager in
# front of the lookup: Shoal's FlowIPManager (both directions one flow, TCP
# states, counters, expiry) and FastClick's FlowIPManager_DPDK (DPDK's
# rte_hash, one table per thread, one direction per entry, TIMEOUT 30 s),
# both with room for 2M flows. Each run is a whole process pinned to one
# core; a configuration's cost per packet is the slope of its CPU seconds
# between PACKETS and 4 x PACKETS packets (the start-up, the tables'
# allocation and the 170,000 routes' parsing cancel out), median of REPS.
# FastClick with DPDK is built by bench/peers/fastclick-dpdk.sh (about 6
# minutes, once, in $FASTCLICK_DPDK_DIR); without it the script exits 77.
#
# Usage: bench/peers/flow.sh [BUILD_DIR]   (default build)
#   PACKETS (2000000), REPS (3), CORE (1), FLOWS ("1000 1000000"),
#   OUT (bench/results/peers-flow-<host>-<date>.json)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
shoal=$build/shoal
[ -x "$shoal" ] || { echo "peers-flow: build Shoal first ($shoal)"; exit 1; }
fc_dir=${FASTCLICK_DPDK_DIR:-/tmp/fastclick-dpdk}
click=$(bash bench/peers/fastclick-dpdk.sh "$fc_dir") || { rc=$?; echo "peers-flow: no FastClick with DPDK: skipped"; exit "$rc"; }
packets=${PACKETS:-2000000}
reps=${REPS:-3}
core=${CORE:-1}
[ "$(nproc)" -gt "$core" ] || core=0
flow_counts=${FLOWS:-"1000 1000000"}
work=$(mktemp -d /tmp/shoal-peers-flow.XXXXXX)
trap 'rm -rf "$work"' EXIT
# DPDK's memory: huge pages when 1 GiB of them is free, else plain pages.
free_huge=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
huge_kb=$(awk '/Hugepagesize/ {print $2}' /proc/meminfo)
if [ $((free_huge * huge_kb)) -ge 1048576 ]; then eal="--in-memory -m 1024" memory=hugepages; else eal="--no-huge -m 4096" memory=4k-pages; fi
eal="-l $core --no-pci --log-level=*:warning $eal"

python3 - "$work" <<'PY'
import random, sys
rng = random.Random(2024)
routes = ["0.0.0.0/0 0"]
for i in range(170000):
    ln = 16 + rng.randrange(9)
    a = rng.getrandbits(32) & (0xffffffff << (32 - ln)) & 0xffffffff
    routes.append(f"{a >> 24}.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}/{ln} {i % 3}")
open(f"{sys.argv[1]}/routes.txt", "w").write(",\n".join(routes))
PY
routes=$(cat "$work/routes.txt")

conf() {  # system flows packets with-manager
  local mgr=""
  if [ "$4" = 1 ]; then
    if [ "$1" = fastclick ]; then mgr="FlowIPManager_DPDK(CAPACITY 2000000, TIMEOUT 30) ->"; else mgr="FlowIPManager(CAPACITY 2000000) ->"; fi
  fi
  echo "FastUDPFlows(RATE 0, LIMIT $3, LENGTH 64, SRCETH 02:00:00:00:00:01, SRCIP 10.0.0.1, DSTETH 02:00:00:00:00:02, \
DSTIP 10.0.0.2, FLOWS $2, FLOWSIZE 8, STOP true) -> Strip(14) -> CheckIPHeader -> $mgr rt :: DirectIPLookup($routes);"
  for o in 0 1 2; do
    local n=""
    [ "$o" = 0 ] || n=$o
    echo "rt[$o] -> DecIPTTL -> c$n :: Counter -> Discard;"
  done
}

run() {  # system config-file
  if [ "$1" = fastclick ]; then
    # shellcheck disable=SC2086
    taskset -c "$core" "$click" --dpdk $eal -- "$2"
  else
    taskset -c "$core" "$shoal" run --quiet "$2"
  fi
}

cpu_of() {  # CPU seconds (user + system) of one run
  local t0 t1 me=$BASHPID
  t0=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$me/stat")
  run "$@" >/dev/null 2>"$work/err" || { echo "peers-flow: failed: $*" >&2; tail -n 5 "$work/err" >&2; return 1; }
  t1=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$me/stat")
  awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (b - a) / hz }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# Every packet through: the three counters add up to the packets sent.
count_all() {
  if [ "$1" = fastclick ]; then
    # shellcheck disable=SC2086
    taskset -c "$core" "$click" --dpdk $eal -- -h c.count -h c1.count -h c2.count "$2" 2>/dev/null |
      awk '/^[0-9]+$/ {s += $1} END {print s + 0}'
  else
    "$shoal" run --quiet --stats json "$2" 2>/dev/null | python3 -c 'import json, sys
e = json.load(sys.stdin)["elements"]
print(sum(int(e[n]["count"]) for n in ("c", "c1", "c2")))'
  fi
}

host=$(hostname -s 2>/dev/null || echo host)
out=${OUT:-bench/results/peers-flow-$host-$(date +%F).json}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=false
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=true
cpu=$(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//')
printf '%-10s %-10s %14s %14s %14s\n' flows system "path ns/pkt" "+manager" "manager ns"
rows=()
big=$((packets * 4))
for flows in $flow_counts; do
  declare -A layer=()
  for sys in fastclick shoal; do
    declare -A per=()
    for m in 0 1; do
      conf "$sys" "$flows" "$packets" "$m" >"$work/a.click"
      conf "$sys" "$flows" "$big" "$m" >"$work/b.click"
      n=$(count_all "$sys" "$work/a.click")
      [ "$n" = "$packets" ] || { echo "peers-flow: $sys ($flows flows, manager $m) counted $n of $packets packets" >&2; exit 1; }
      a=() b=()
      for ((r = 0; r < reps; r++)); do
        a+=("$(cpu_of "$sys" "$work/a.click")")
        b+=("$(cpu_of "$sys" "$work/b.click")")
      done
      per[$m]=$(awk -v a="$(median "${a[@]}")" -v b="$(median "${b[@]}")" -v n="$((big - packets))" \
        'BEGIN { printf "%.1f", (b - a) / n * 1e9 }')
    done
    layer[$sys]=$(awk -v x="${per[1]}" -v y="${per[0]}" 'BEGIN { printf "%.1f", x - y }')
    printf '%-10s %-10s %14s %14s %14s\n' "$flows" "$sys" "${per[0]}" "${per[1]}" "${layer[$sys]}"
    rows+=("{\"flows\": $flows, \"system\": \"$sys\", \"path_ns_per_packet\": ${per[0]}, \
\"with_manager_ns_per_packet\": ${per[1]}, \"manager_ns_per_packet\": ${layer[$sys]}}")
  done
  awk -v f="${layer[fastclick]}" -v s="${layer[shoal]}" -v n="$flows" \
    'BEGIN { if (s <= 0) s = 0.1; printf "%-10s the flow layer costs Shoal %.1fx less than FastClick\n", n, f / s }'
done
mkdir -p "$(dirname "$out")"
{
  echo "{\"benchmark\": \"peers-flow\", \"machine\": {\"cpu\": \"$cpu\", \"cores\": $(nproc)}, \"device\": \"none\","
  echo " \"commit\": \"$commit\", \"dirty\": $dirty, \"date\": \"$(date -Is)\", \"packets\": [$packets, $big], \"reps\": $reps,"
  echo " \"core\": $core, \"dpdk_memory\": \"$memory\", \"results\": [$(IFS=,; echo "${rows[*]}")]}"
} >"$out"
echo "wrote $out"

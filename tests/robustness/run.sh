#!/usr/bin/env bash
# Robustness, measured: every capture under tests/ and examples/data, and
# malformed captures made from them (malform.py), through every example
# configuration that reads a capture (routers, IDS, IPS, filter, SDN
# classifier, the offloaded ones on the host backend). Each run must end by
# itself with status 0 (1 only where the capture itself is cut, with the
# read error said), the accounting identity must hold, and on the
# ASan+UBSan build (ctest runs this there too) any sanitizer report aborts
# the run, which fails the check. With --no-golden (the sanitizer build's
# ctest), the golden tests' inputs are left out: the golden tests run them
# there through their own configurations, and the rest of the matrix (the
# example captures, the malformed and cut ones) keeps its sanitizer run in a
# third of the time.
set -u
SHOAL=$1; ROOT=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$ROOT" || exit 1
golden=(tests/golden/*/in.pcap tests/golden/*/in.pcapng)
[ "${2:-}" = --no-golden ] && golden=()
pass=0; fail=0
python3 tests/robustness/malform.py examples/data/mixed.pcap "$tmp" 4 malformed-mixed || { echo "FAIL: malform.py"; exit 1; }
python3 tests/robustness/malform.py examples/data/ids-traffic.pcap "$tmp" 2 malformed-ids || { echo "FAIL: malform.py"; exit 1; }
python3 tests/robustness/malform.py examples/data/sdn/acl1k-trace.pcap "$tmp" 1 malformed-sdn || { echo "FAIL: malform.py"; exit 1; }
python3 tests/robustness/malform.py examples/data/ipsec/gateway.pcap "$tmp" 2 malformed-ipsec || { echo "FAIL: malform.py"; exit 1; }
head -c 5000 examples/data/mixed.pcap >"$tmp/cut.pcap"
mapfile -t caps < <(ls "${golden[@]}" examples/data/*.pcap examples/data/*/*.pcap "$tmp"/*.pcap | sort -u)
mapfile -t confs < <(grep -l '\$IN' examples/*.click)
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
for conf in "${confs[@]}"; do
  for cap in "${caps[@]}"; do
    name="$(basename "$conf" .click) < $cap"
    rm -f "$tmp/j"
    timeout 60 "$SHOAL" run -q "$conf" IN="$cap" OUT="$tmp/o-" LOG="$tmp/l-" --device host --duration 20 \
      --stats-out "$tmp/j" >"$tmp/out" 2>&1
    rc=$?
    want=0
    case "$cap" in */cut.pcap) want=1 ;; esac
    if [ $rc != $want ]; then
      echo "FAIL $name: exit $rc (want $want)"; tail -20 "$tmp/out"; fail=$((fail+1)); continue
    fi
    if [ $want = 1 ] && ! grep -q "truncated dump file" "$tmp/out"; then
      echo "FAIL $name: the read error is not said"; fail=$((fail+1)); continue
    fi
    if grep -q '"balanced": true' "$tmp/j" 2>/dev/null && grep -q '"received": [1-9]' "$tmp/j"; then
      pass=$((pass+1))
    else
      echo "FAIL $name: accounting"; cat "$tmp/j" 2>/dev/null | head -30; fail=$((fail+1))
    fi
  done
done
echo "robustness: ${#confs[@]} configurations x ${#caps[@]} captures: $pass passed, $fail failed"
[ $fail = 0 ] && [ $pass -gt 0 ]

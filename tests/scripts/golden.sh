#!/usr/bin/env bash
# Golden tests: for each tests/golden/CASE: shoal run CASE/config.click with
# IN=CASE/in.pcap (or in.txt) and OUT=<tmp>/out.pcap (or out.txt); the output
# must equal CASE/expected.* byte for byte; where CASE/expected.drops exists,
# the run's drops by element and reason must equal it, and every run's
# accounting must balance. UPDATE=1 rewrites expectations.
set -u
SHOAL=$1; DIR=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for c in "$DIR"/*/; do
  name=$(basename "$c")
  in=$(ls "$c"in.* 2>/dev/null | head -n1)
  exp=$(ls "$c"expected.* 2>/dev/null | grep -v "\.drops$" | head -n1)
  ext=${exp##*.}
  out="$tmp/$name.$ext"
  if ! "$SHOAL" run -q "$c/config.click" IN="$in" OUT="$out" --stats-out "$tmp/$name.json" >"$tmp/$name.log" 2>&1; then
    echo "FAIL $name: shoal run failed"; cat "$tmp/$name.log"; fail=$((fail+1)); continue
  fi
  # Drops by element and reason, one per line; "unbalanced" if packets went missing.
  /usr/bin/python3 - "$tmp/$name.json" >"$tmp/$name.drops" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for e, reasons in sorted(j["drops"].items()):
    for r, n in sorted(reasons.items()):
        print(e, r, n)
if not j["accounting"]["balanced"]:
    print("unbalanced", j["accounting"])
PY
  if [ "${UPDATE:-0}" = 1 ]; then
    cp "$out" "$exp"; [ -f "$c/expected.drops" ] && cp "$tmp/$name.drops" "$c/expected.drops"
    echo "updated $name"; continue
  fi
  ok=1
  if ! cmp -s "$out" "$exp"; then
    echo "FAIL $name: output differs from $(basename "$exp")"; cmp "$out" "$exp" | head -n 3; ok=0
  fi
  if [ -f "$c/expected.drops" ] && ! diff -u "$c/expected.drops" "$tmp/$name.drops"; then
    echo "FAIL $name: drops differ from expected.drops"; ok=0
  fi
  if grep -q '^unbalanced' "$tmp/$name.drops"; then echo "FAIL $name: accounting does not balance"; ok=0; fi
  if [ $ok = 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); fi
done
echo "golden: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]

#!/usr/bin/env bash
# Golden tests: for each tests/golden/CASE: shoal run CASE/config.click with
# IN=CASE/in.pcap (or in.txt) and OUT=<tmp>/out.pcap (or out.txt); the output
# must equal CASE/expected.* byte for byte. UPDATE=1 rewrites expectations.
set -u
SHOAL=$1; DIR=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for c in "$DIR"/*/; do
  name=$(basename "$c")
  in=$(ls "$c"in.* 2>/dev/null | head -n1)
  exp=$(ls "$c"expected.* 2>/dev/null | head -n1)
  ext=${exp##*.}
  out="$tmp/$name.$ext"
  if ! "$SHOAL" run -q "$c/config.click" IN="$in" OUT="$out" >"$tmp/$name.log" 2>&1; then
    echo "FAIL $name: shoal run failed"; cat "$tmp/$name.log"; fail=$((fail+1)); continue
  fi
  if [ "${UPDATE:-0}" = 1 ]; then cp "$out" "$exp"; echo "updated $name"; continue; fi
  if cmp -s "$out" "$exp"; then pass=$((pass+1)); else
    echo "FAIL $name: output differs from $(basename "$exp")"; cmp "$out" "$exp" | head -n 3; fail=$((fail+1))
  fi
done
echo "golden: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]

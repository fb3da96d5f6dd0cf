#!/usr/bin/env bash
# Diagnostics tests: `shoal check tests/diag/X.click` must fail with exactly
# the text in tests/diag/X.err. UPDATE=1 rewrites expectations.
set -u
SHOAL=$1; DIR=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rel=$(realpath --relative-to="$PWD" "$DIR")
pass=0; fail=0
for f in "$rel"/*.click; do
  name=$(basename "$f" .click)
  if "$SHOAL" check "$f" >/dev/null 2>"$tmp/err"; then echo "FAIL $name: check succeeded"; fail=$((fail+1)); continue; fi
  if [ "${UPDATE:-0}" = 1 ]; then cp "$tmp/err" "$rel/$name.err"; continue; fi
  if diff -u "$rel/$name.err" "$tmp/err" >"$tmp/diff"; then pass=$((pass+1)); else
    echo "FAIL $name:"; cat "$tmp/diff"; fail=$((fail+1)); fi
done
echo "diagnostics: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]

#!/usr/bin/env bash
# check: every examples/*.click passes `shoal check`.
# run:   every example runs (2 s at most, 1 and 2 threads) and its accounting
#        balances: received + created = sent + dropped + held.
set -u
SHOAL=$1; DIR=$2; MODE=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for f in "$DIR"/*.click; do
  name=$(basename "$f" .click)
  if [ "$MODE" = check ]; then
    if "$SHOAL" check "$f" >"$tmp/o" 2>&1; then pass=$((pass+1)); else echo "FAIL $name"; cat "$tmp/o"; fail=$((fail+1)); fi
    continue
  fi
  for t in 1 2; do
    if ! "$SHOAL" run -q "$f" OUT="$tmp/$name-" --threads $t --duration 2 --stats-out "$tmp/j" >"$tmp/o" 2>"$tmp/e"; then
      echo "FAIL $name (threads $t): exit $?"; cat "$tmp/e"; fail=$((fail+1)); continue
    fi
    if /usr/bin/python3 - "$tmp/j" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
a = j["accounting"]
ok = a["balanced"] and a["received"] + a["created"] == a["sent"] + a["dropped"] + a["held"]
drops = sum(sum(v.values()) for v in j["drops"].values())
ok = ok and drops == a["dropped"]
print(f"  {a}  drops-by-reason={drops}")
sys.exit(0 if ok else 1)
PY
    then pass=$((pass+1)); else echo "FAIL $name (threads $t): accounting"; fail=$((fail+1)); fi
  done
done
echo "examples $MODE: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]

#!/usr/bin/env bash
# shoal bench-ipsec runs (small: 64-byte frames, 2,000 packets, one
# repetition) and its record holds every suite with positive rates, the
# engine each used, and the graph-to-bare ratios. Fails when the bench fails.
set -u
SHOAL=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$SHOAL" bench-ipsec --sizes 64 --packets 2000 --reps 1 --out "$tmp/ipsec.json" || { echo "FAIL: bench-ipsec exited $?"; exit 1; }
/usr/bin/python3 - "$tmp/ipsec.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["results"]
suites = {r["suite"] for r in rows}
ok = len(suites) == 5 and all(r["encrypt_pps"] > 0 and r["decrypt_pps"] > 0 and r["bare_encrypt_pps"] > 0
                               and r["crypto"] in ("ipsec-mb", "openssl") and r["encrypt_ratio"] > 0 for r in rows)
print(f"bench-ipsec: {len(rows)} rows, suites {sorted(suites)}: {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY

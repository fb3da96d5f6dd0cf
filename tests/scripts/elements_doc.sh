#!/usr/bin/env bash
# docs/elements.md is what `shoal elements --markdown` prints now.
# Usage: elements_doc.sh SHOAL DOCS_ELEMENTS_MD
set -euo pipefail
shoal=$1 doc=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$shoal" elements --markdown >"$out"
[ -s "$out" ] || { echo "FAIL: shoal elements --markdown printed nothing"; exit 1; }
if ! diff -u "$doc" "$out"; then
  echo "FAIL: $doc is stale; regenerate it with: build/shoal elements --markdown > docs/elements.md"
  exit 1
fi
echo "ok: $doc matches $(grep -c '^## ' "$out") element references"

#!/usr/bin/env bash
# Click's own regression suite (../shared/conformance/click-tests, with
# Click's runner) through `click` = shoal (build/click-bin). Fails when fewer
# tests pass than the committed baseline (tests/click-conformance.baseline);
# skipped (77) when the suite is not beside the project.
# Usage: click_conformance.sh BUILD_DIR [REPORT]   (REPORT: where the
# runner's output goes, default a temporary file)
set -u
build=$(cd "$1" && pwd); root=$(cd "$(dirname "$0")/../.." && pwd)
suite=$root/../shared/conformance/click-tests
[ -f "$suite/clicktest" ] || { echo "skipped: Click's test suite ($suite) is not here"; exit 77; }
command -v perl >/dev/null || { echo "skipped: perl is not installed (Click's runner is Perl)"; exit 77; }
[ -x "$build/click-bin/click" ] || { echo "FAIL: no $build/click-bin/click"; exit 1; }
report=${2:-$(mktemp)}
dirs=$(cd "$suite" && for d in */; do [ -n "$(ls "$d"*.clicktest 2>/dev/null)" ] && printf '%s ' "${d%/}"; done)
(cd "$suite" && PATH="$build/click-bin:$PATH" perl ./clicktest -j 2 $dirs) >"$report" 2>&1
summary=$(grep -E '^clicktest: [0-9]+ success' "$report" | tail -1)
[ -n "$summary" ] || { echo "FAIL: the runner printed no summary"; tail -20 "$report"; exit 1; }
passed=$(sed -E 's/^clicktest: ([0-9]+) success.*/\1/' <<<"$summary")
baseline=$(cat "$root/tests/click-conformance.baseline")
echo "Click's regression suite: $summary (baseline: $baseline passes)"
[ "$passed" -ge "$baseline" ] || { echo "FAIL: fewer passes than the baseline"; grep -E 'failure at|unexpected value' "$report" | head -40; exit 1; }

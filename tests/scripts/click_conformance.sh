#!/usr/bin/env bash
# Click's own regression suite (../shared/conformance/click-tests, with
# Click's runner) through `click` = shoal (build/click-bin). Fails when a
# test of the committed pass list (tests/click-conformance.pass) no longer
# passes; skipped (77) when the suite is not beside the project.
# A few of Click's tests race the clock (Script-signal-01 signals a process
# that lives 100 ms), so a listed test that fails is run once more, alone,
# before it counts as a failure; that it needed the retry is printed.
# The runner's scripts run under bash, not Debian's /bin/sh (dash): Click's
# tests write their pcap probes with printf '\xd4...', which dash's printf
# does not read, so tcpdump's requirement failed and the tests were skipped
# (where /bin/sh is bash, as on Click's own machines, they run).
# Usage: click_conformance.sh BUILD_DIR [REPORT]   (REPORT: where the
# runner's output goes, default a temporary file)
set -u
build=$(cd "$1" && pwd); root=$(cd "$(dirname "$0")/../.." && pwd)
suite=$root/../shared/conformance/click-tests
[ -f "$suite/clicktest" ] || { echo "skipped: Click's test suite ($suite) is not here"; exit 77; }
command -v perl >/dev/null || { echo "skipped: perl is not installed (Click's runner is Perl)"; exit 77; }
[ -x "$build/click-bin/click" ] || { echo "FAIL: no $build/click-bin/click"; exit 1; }
report=${2:-$(mktemp)}
expected=$root/tests/click-conformance.pass
runner_dir=$(mktemp -d)
trap 'rm -rf "$runner_dir"' EXIT
runner_copy=$runner_dir/clicktest  # (the runner names itself in its summary line)
sed 's|my($SHELL) = "/bin/sh";|my($SHELL) = "/bin/bash";|' "$suite/clicktest" >"$runner_copy"
grep -q 'my($SHELL) = "/bin/bash";' "$runner_copy" || { echo "FAIL: Click's runner no longer names /bin/sh as its shell"; exit 1; }
runner() { (cd "$suite" && PATH="$build/click-bin:$PATH" perl "$runner_copy" -V "$@"); }
passes() { sed -n 's/^\([^ :]*\.clicktest\): Success!$/\1/p' "$1" | sort -u; }

dirs=$(cd "$suite" && for d in */; do [ -n "$(ls "$d"*.clicktest 2>/dev/null)" ] && printf '%s ' "${d%/}"; done)
runner -j 2 $dirs >"$report" 2>&1
summary=$(grep -E '^clicktest: [0-9]+ success' "$report" | tail -1)
[ -n "$summary" ] || { echo "FAIL: the runner printed no summary"; tail -20 "$report"; exit 1; }
echo "Click's regression suite: $summary (listed as passing: $(wc -l <"$expected"))"

missing=$(comm -23 <(sort -u "$expected") <(passes "$report"))
added=$(comm -13 <(sort -u "$expected") <(passes "$report"))
[ -z "$added" ] || printf 'passing now, not yet listed in tests/click-conformance.pass:\n%s\n' "$added"
[ -z "$missing" ] && exit 0

retry=$(mktemp)
runner -j 1 $missing >"$retry" 2>&1
cat "$retry" >>"$report"
still=$(comm -23 <(printf '%s\n' $missing | sort -u) <(passes "$retry"))
flaky=$(comm -12 <(printf '%s\n' $missing | sort -u) <(passes "$retry"))
[ -z "$flaky" ] || printf 'passed only when run again, alone (timing-dependent):\n%s\n' "$flaky"
if [ -n "$still" ]; then
  printf 'FAIL: listed as passing, failed twice:\n%s\n' "$still"
  for t in $still; do grep -F "$t:" "$retry" | head -15; done
  rm -f "$retry"
  exit 1
fi
rm -f "$retry"

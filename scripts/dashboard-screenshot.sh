#!/usr/bin/env bash
# Takes docs/dashboard.png, the README's picture of `shoal run --web`: an
# IPv4 router whose header check and route lookup run on the device for 80%
# of the batches (NBA's form, on the host backend), fed by two synthetic UDP
# streams, one of whose ports is slower than its traffic. Needs chromium.
#   bash scripts/dashboard-screenshot.sh [SHOAL [OUT.png]]
set -euo pipefail
shoal=${1:-build-gpu/shoal}
out=${2:-docs/dashboard.png}
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "chromium is not installed" >&2; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || kill -INT "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
# two 60-byte frames (Ethernet, IPv4, UDP): to 10.1.2.3:80 and to 10.2.9.9:53
a='02000000000202000000000108004500002e00010000401164ba0a0000010a01020304d20050001aa857787878787878787878787878787878787878'
b='02000000000202000000000108004500002e0001000040115db30a0000010a02090904d20035001aa16b787878787878787878787878787878787878'
cat > "$tmp/dashboard.click" <<CONF
web :: RatedSource(DATA \\<$a>, RATE 30000) -> b;
dns :: RatedSource(DATA \\<$b>, RATE 12000) -> b;
b :: OffloadBalancer(FRACTION 0.8)
  -> CheckIPHeader(14)
  -> rt :: DirectIPLookup(10.1.0.0/16 0, 10.2.0.0/16 10.2.0.254 1, 0.0.0.0/0 10.9.9.9 1);
rt[0] -> DecIPTTL -> port0 :: Counter -> Discard;
rt[1] -> DecIPTTL -> link1 :: Queue(1000) -> RatedUnqueue(RATE 8000) -> port1 :: Counter -> Discard;
CONF
"$shoal" run --device host --web 0 "$tmp/dashboard.click" 2> "$tmp/err" &
pid=$!
for _ in $(seq 100); do grep -q "dashboard at" "$tmp/err" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$tmp/err" | head -1)
[ -n "$url" ] || { cat "$tmp/err" >&2; exit 1; }
sleep 3  # rates over a few seconds of traffic
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --user-data-dir="$tmp/chromium" \
  --window-size=2290,240 --force-device-scale-factor=1 --virtual-time-budget=4000 --screenshot="$out" "$url" \
  > "$tmp/chromium.log" 2>&1 || { cat "$tmp/chromium.log" >&2; exit 1; }
[ -s "$out" ] || { echo "no screenshot" >&2; exit 1; }
echo "$out"

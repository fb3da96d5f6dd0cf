#!/usr/bin/env bash
# Nothing lost silently, nothing hangs: write errors (a file-size limit and
# /dev/full are real OS failures), read errors, signals, cycles and what
# `shoal check` must report. Each check fails on a wrong exit status, a
# missing message or output, or accounting that does not add up.
set -u
SHOAL=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok()   { if "$@" >"$tmp/out" 2>&1; then pass=$((pass+1)); else echo "FAIL (expected success, got $?): $*"; cat "$tmp/out"; fail=$((fail+1)); fi; }
bad()  { if "$@" >"$tmp/out" 2>&1; then echo "FAIL (expected failure): $*"; cat "$tmp/out"; fail=$((fail+1)); else pass=$((pass+1)); fi; }
has()  { if grep -qF -- "$1" "$tmp/out"; then pass=$((pass+1)); else echo "FAIL: output lacks '$1'"; cat "$tmp/out"; fail=$((fail+1)); fi; }
check(){ if "$@"; then pass=$((pass+1)); else echo "FAIL: $*"; fail=$((fail+1)); fi; }
# Runs a command with a 1000 KiB file-size limit: writes past it fail (EFBIG).
limited() { (ulimit -f 1000; exec "$@"); }
command -v tshark >/dev/null || echo "skipped: tshark's reading of the pcaps written (tshark not installed); Shoal's own reader still checks them"
# Packets a pcap holds, read by Shoal (which fails on a cut record) and,
# when installed, by tshark.
count_pcap() {
  echo "FromDump($1, STOP true) -> c :: Counter -> Discard;" >"$tmp/count.click"
  "$SHOAL" run -q "$tmp/count.click" --stats json >"$tmp/count.json" 2>"$tmp/count.err" || { cat "$tmp/count.err" >&2; echo -1; return; }
  local n; n=$(python3 -c "import json; print(json.load(open('$tmp/count.json'))['elements']['c']['count'])")
  if command -v tshark >/dev/null; then
    local t; t=$(tshark -r "$1" 2>/dev/null | wc -l)
    [ "$t" = "$n" ] || { echo "tshark reads $t packets, Shoal $n" >&2; echo -2; return; }
  fi
  echo "$n"
}
# json FILE EXPR: a Python expression over the JSON in FILE (as j).
json() { python3 -c "import json,sys; j=json.load(open('$1')); sys.exit(0 if ($2) else 1)" || { echo "  ($2 on $1)"; cat "$1"; false; }; }

ok "$SHOAL" gen -o "$tmp/in.pcap" -n 20000 -s 200

# --- Writers: each write checked; lost packets are drops 'write-error' ------
echo "FromDump($tmp/in.pcap, STOP true) -> c :: Counter -> ToDump($tmp/o.pcap);" >"$tmp/todump.click"
bad limited "$SHOAL" run "$tmp/todump.click" --stats-out "$tmp/s.json"
has "ToDump@3 :: ToDump: $tmp/o.pcap: write failed: File too large"; has "the run failed"
check json "$tmp/s.json" "j['drops']['ToDump@3']['write-error'] > 0 and j['accounting']['balanced'] and j['accounting']['sent'] + j['drops']['ToDump@3']['write-error'] == 20000"
sent=$(python3 -c "import json; print(json.load(open('$tmp/s.json'))['accounting']['sent'])")
check [ "$(count_pcap "$tmp/o.pcap")" = "$sent" ]   # cut at the last whole packet, and every sent one is in it

echo "FromDump($tmp/in.pcap, STOP true) -> ToIPSummaryDump($tmp/o.txt, CONTENTS timestamp ip_src sport ip_dst dport ip_len ip_proto ip_ttl ip_id payload_len);" >"$tmp/sum.click"
bad limited "$SHOAL" run "$tmp/sum.click" --stats-out "$tmp/s.json"
has "$tmp/o.txt: write failed: File too large"
lines=$(grep -vc '^!' "$tmp/o.txt")
check json "$tmp/s.json" "j['elements']['ToIPSummaryDump@2']['count'] == $lines and j['accounting']['sent'] == $lines and j['drops']['ToIPSummaryDump@2']['write-error'] == 20000 - $lines"
check [ "$(tail -c1 "$tmp/o.txt" | od -An -c | tr -d ' ')" = '\n' ]   # whole lines only

printf 'alert udp any any -> any any (msg:"any udp"; sid:1; rev:1;)\n' >"$tmp/r.rules"
for log in FASTLOG EVE; do
  echo "FromDump($tmp/in.pcap, STOP true) -> ids :: IDSMatcher(RULES $tmp/r.rules, $log /dev/full, QUIET true) -> Discard;" >"$tmp/ids.click"
  bad "$SHOAL" run "$tmp/ids.click" --stats-out "$tmp/s.json"
  has "ids :: IDSMatcher: /dev/full: write failed: No space left on device"
  check json "$tmp/s.json" "j['elements']['ids']['log_lost'] == 20000 and j['accounting']['balanced']"
done

echo "FromDump($tmp/in.pcap, STOP true) -> Discard;" >"$tmp/plain.click"
bad "$SHOAL" run "$tmp/plain.click" --stats-out /dev/full; has "--stats-out: /dev/full: write failed: No space left on device"
bad limited "$SHOAL" gen -o "$tmp/g.pcap" -n 20000 -s 200; has "$tmp/g.pcap: write failed: File too large"; has "of 20000 packets written"
n=$(sed -n 's/.*(\([0-9]*\) of 20000 packets written.*/\1/p' "$tmp/out")
check [ "$(count_pcap "$tmp/g.pcap")" = "$n" ]
bad "$SHOAL" mkrouter -i eth0,10.0.0.1/24,mac=02:00:00:00:00:01 -o /dev/full; has "/dev/full: write failed: No space left on device"

# mkrouter writes nothing `shoal check` would reject: IPv6 links need 1280.
bad "$SHOAL" mkrouter -i eth0,10.0.0.1/24,fd00::1/64,mtu=576,mac=02:00:00:00:00:01; has "MTU 576 is below 1280"
ok "$SHOAL" mkrouter -i eth0,10.0.0.1/24,mtu=576,mac=02:00:00:00:00:01 -o "$tmp/r576.click"
ok "$SHOAL" check "$tmp/r576.click"

# --- Read errors: what could be read goes through, then the run fails -------
head -c 1000000 "$tmp/in.pcap" >"$tmp/cut.pcap"
echo "FromDump($tmp/cut.pcap, STOP true) -> c :: Counter -> Discard;" >"$tmp/cut.click"
bad "$SHOAL" run "$tmp/cut.click" --threads 2 --stats-out "$tmp/s.json"; has "truncated dump file"; has "packets before it)"
check [ "$(grep -c 'truncated dump file' "$tmp/out")" = 1 ]   # once, not once per worker
check json "$tmp/s.json" "j['elements']['c']['count'] == 4629"

# --- Signals ----------------------------------------------------------------
echo "InfiniteSource(LENGTH 60) -> c :: Counter -> ToDump($tmp/sig.pcap);" >"$tmp/sig.click"
for sig in HUP INT TERM USR1; do
  rm -f "$tmp/s.json"
  "$SHOAL" run "$tmp/sig.click" --stats-out "$tmp/s.json" >"$tmp/out" 2>&1 & pid=$!
  sleep 0.5
  kill -"$sig" $pid
  if [ $sig = USR1 ]; then
    sleep 0.3; check kill -0 $pid   # still running
    kill -USR2 $pid; sleep 0.3; kill -INT $pid
  elif [ $sig = HUP ]; then
    # SIGHUP reloads the file: the counter and the capture go on, then
    # SIGINT stops the run (every packet written is counted).
    sleep 0.3; check kill -0 $pid
    kill -INT $pid
  fi
  wait $pid; rc=$?
  check [ $rc = 0 ]
  if [ $sig = USR1 ]; then has "shoal: SIGUSR1: "; has "shoal: SIGUSR2: "; fi
  if [ $sig = HUP ]; then has "shoal: SIGHUP: reloading"; has "(reload 1)"; fi
  s=${sig/USR1/INT}
  has "SIG${s/HUP/INT}: stopping"
  check json "$tmp/s.json" "j['accounting']['balanced'] and j['elements']['c']['count'] > 0"
  c=$(python3 -c "import json; print(json.load(open('$tmp/s.json'))['elements']['c']['count'])")
  check [ "$(count_pcap "$tmp/sig.pcap")" = "$c" ]
done

# --- Hangs: cycles and loops end, with an error ------------------------------
echo "FromDump($tmp/in.pcap, STOP true) -> a :: Null -> b :: Null -> a;" >"$tmp/cyc.click"
bad "$SHOAL" check "$tmp/cyc.click"; has "cyc.click:1:"; has "push cycle with no Queue: a -> b -> a"
# A cycle an element on it can end (the TTL runs out) is a configuration's
# right, as Click's IP router's ICMPError -> route table cycle is.
echo "FromDump($tmp/in.pcap, STOP true) -> MarkIPHeader(14) -> a :: DecIPTTL -> b :: Null -> a;" >"$tmp/ttl.click"
ok "$SHOAL" check "$tmp/ttl.click"
ok "$SHOAL" run "$tmp/ttl.click" --stats-out "$tmp/s.json"
check json "$tmp/s.json" "j['drops']['a']['ttl-expired'] == 20000 and j['accounting']['balanced']"
echo "FromDump($tmp/in.pcap, STOP true) -> a :: Null -> b :: Classifier(12/0800, -) -> a; b[1] -> Discard;" >"$tmp/cyc2.click"
bad timeout 20 "$SHOAL" run "$tmp/cyc2.click" --stats-out "$tmp/s.json"; has "go round a cycle"
check json "$tmp/s.json" "sum(d.get('push-loop', 0) for d in j['drops'].values()) == 20000 and j['accounting']['balanced']"
echo 'Script(label a, goto a)' >"$tmp/loop.click"
ok timeout 20 "$SHOAL" run "$tmp/loop.click"; has "Script@1 :: Script: too many jumps, giving up"   # said, as Click does
# Ctrl-C ends any run within a second, whatever the configuration does.
cat >"$tmp/spin1.click" <<'C'
InfiniteSource(LIMIT 100, LENGTH 60) -> q :: Queue -> Unqueue -> Null -> q;
C
echo 'Script(wait 0, loop)' >"$tmp/spin2.click"
echo 'FastUDPFlows(LENGTH 60) -> t :: Tee(2); t[0] -> Discard; t[1] -> Discard;' >"$tmp/spin3.click"
echo "FromDump($tmp/in.pcap, STOP true) -> t :: Tee(2) -> t; t[1] -> Discard;" >"$tmp/spin4.click"
for f in spin1 spin2 spin3 spin4; do
  "$SHOAL" run -q "$tmp/$f.click" >"$tmp/out" 2>&1 & pid=$!
  sleep 0.5
  kill -INT $pid 2>/dev/null
  gone=no
  for _ in $(seq 20); do kill -0 $pid 2>/dev/null || { gone=yes; break; }; sleep 0.05; done
  check [ $gone = yes ] || { echo "  $f did not stop within a second of SIGINT"; kill -9 $pid; }
  wait $pid
done
# A Script of TYPE SIGNAL takes the signal (every such script runs, in
# order) instead of the default action; the same stopping signal twice in
# half a second stops the run all the same.
cat >"$tmp/sig.click" <<C
Script(TYPE SIGNAL INT, print >>$tmp/sig.out "one");
Script(TYPE SIGNAL INT USR1, print >>$tmp/sig.out "two");
InfiniteSource(LENGTH 60) -> Discard;
C
"$SHOAL" run -q "$tmp/sig.click" >"$tmp/out" 2>&1 & pid=$!
sleep 0.5; kill -INT $pid; sleep 0.7; kill -USR1 $pid; sleep 0.7
check kill -0 $pid   # still running: the scripts took both signals
check [ "$(cat "$tmp/sig.out" 2>/dev/null | tr '\n' ' ')" = "one two two " ]
kill -INT $pid; sleep 0.1; kill -INT $pid
gone=no
for _ in $(seq 20); do kill -0 $pid 2>/dev/null || { gone=yes; break; }; sleep 0.05; done
check [ $gone = yes ] || { echo "  a SIGINT a Script takes, sent twice, did not stop the run"; kill -9 $pid; }
wait $pid

# --- shoal check reports what a run would fail on ---------------------------
echo 'FromDump(/nonexistent/in.pcap) -> Discard;' >"$tmp/c1.click"
bad "$SHOAL" check "$tmp/c1.click"; has "c1.click:1:10: error: FromDump@1: FILENAME: cannot read '/nonexistent/in.pcap': No such file or directory"
echo 'Idle -> IDSMatcher(RULES /nonexistent.rules) -> Discard;' >"$tmp/c2.click"
bad "$SHOAL" check "$tmp/c2.click"; has "RULES: cannot read '/nonexistent.rules'"
printf 'FastUDPFlows(LIMIT 1)\n  -> ToDump(${OUT}x.pcap);\n' >"$tmp/c3.click"
bad "$SHOAL" check "$tmp/c3.click"; has "c3.click:2:13: error: undefined variable '\$OUT'"
ok "$SHOAL" check "$tmp/c3.click" OUT="$tmp/"
bad "$SHOAL" run "$tmp"; has "Is a directory"
echo "FromDump($tmp, STOP true) -> Discard;" >"$tmp/c4.click"
bad "$SHOAL" check "$tmp/c4.click"; has "is a directory"
# Script's own variables are not configuration variables.
echo 'Script(set x 1, print $x, stop)' >"$tmp/c5.click"
ok "$SHOAL" check "$tmp/c5.click"

echo "nothing_lost: $pass passed, $fail failed"
[ $fail = 0 ]

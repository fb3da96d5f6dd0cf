#!/bin/bash
# ok never fails, so "A && ok || bad" is an if-then-else here.
# shellcheck disable=SC2015
# Hot reload of `shoal run FILE` (`shoal ctl reload`, SIGHUP): the new
# configuration takes the old one's queued packets, counts, flow table and
# route tables;
# no packet is lost across the swap (the accounting balances over both
# configurations and every packet reaches the sink, in one pcap); a broken
# file is refused with file:line:col and the old configuration runs on.
#   [THREADS=N] tests/scripts/reload.sh SHOAL
set -u
SHOAL=$(realpath "$1")
/usr/bin/python3 -c "import scapy" 2>/dev/null || { echo "SKIP: python3-scapy is not installed"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
ctl() { "$SHOAL" ctl -u "$tmp/sock" "$@"; }
# until COND...: polls a condition for up to 10 s
until_() { for _ in $(seq 200); do "$@" && return 0; sleep 0.05; done; return 1; }
# reads HANDLER OP VALUE: the handler's value passes test's OP
reads() { local v; v=$(ctl read "$1" 2>/dev/null) || return 1; test "$v" "$2" "$3"; }

# 1. Queued packets move to the new queue; counts and the capture go on.
cat >"$tmp/a.click" <<C
ControlSocket(unix, $tmp/sock);
RatedSource(LENGTH 60, RATE 4000, LIMIT 1000) -> c :: Counter -> q :: Queue(5000)
  -> RatedUnqueue(100) -> out :: Counter -> d :: ToDump($tmp/out.pcap);
C
cat >"$tmp/b.click" <<C
ControlSocket(unix, $tmp/sock);
Idle -> c :: Counter -> q :: Queue(5000) -> Unqueue -> out :: Counter -> d :: ToDump($tmp/out.pcap);
C
cp "$tmp/a.click" "$tmp/run.click"
"$SHOAL" run --threads "${THREADS:-1}" "$tmp/run.click" --stats-out "$tmp/st.json" >"$tmp/log" 2>&1 &
pid=$!
until_ reads c.count = 1000 || bad "the source did not finish"
held=$(ctl read q.length)
[ "$held" -gt 500 ] && ok "before the reload: $held packets queued" || bad "only $held packets queued"

# 2. A broken file is refused, with where; the old configuration runs on.
printf 'ControlSocket(unix, %s/sock);\nIdle -> c :: Counter -> q :: Queue(5000) -> Nope -> Discard;\n' "$tmp" >"$tmp/run.click"
if ctl reload >"$tmp/ctl.out" 2>&1; then bad "a broken configuration was accepted"; cat "$tmp/ctl.out"
elif grep -q "run.click:2:45: error: unknown element class 'Nope'" "$tmp/ctl.out"; then ok "ctl reload of a broken file: refused with file:line:col"
else bad "ctl reload's error"; cat "$tmp/ctl.out"; fi
printf 'ControlSocket(unix, %s/sock);\nIdle -> q :: Queue(5000\n' "$tmp" >"$tmp/run.click"
kill -HUP "$pid"
until_ grep -q "not reloaded" "$tmp/log" && grep -q "run.click:2:" "$tmp/log" && ok "SIGHUP with a broken file: refused with file:line" ||
  { bad "SIGHUP's error"; cat "$tmp/log"; }
kill -0 "$pid" 2>/dev/null && reads q.length -gt 0 && ok "the old configuration runs on" || bad "the old configuration stopped"

# 3. A good file: swapped in, the queue drained by the new Unqueue.
cp "$tmp/b.click" "$tmp/run.click"
ctl reload && ok "ctl reload" || bad "ctl reload failed"
until_ reads out.count = 1000 && ok "every packet reached the sink after the swap" ||
  bad "out.count $(ctl read out.count) of 1000"
reads c.count = 1000 && ok "the counter went on" || bad "c.count $(ctl read c.count) after the swap"
ctl stop
wait "$pid"; rc=$?; pid=
[ "$rc" = 0 ] || { bad "exit status $rc"; cat "$tmp/log"; }
grep -q "running .*run.click (reload 1)" "$tmp/log" && ok "said it runs the reloaded file" || { bad "no reload line"; cat "$tmp/log"; }
/usr/bin/python3 - "$tmp/st.json" "$tmp/out.pcap" <<'PY' && ok "accounting over both configurations, and one capture of 1000 packets" || bad "accounting or capture"
import json, sys
from scapy.all import rdpcap
a = json.load(open(sys.argv[1]))["accounting"]
n = len(rdpcap(sys.argv[2]))
print(a, n, "packets in the capture")
sys.exit(0 if a["balanced"] and a["received"] + a["created"] == 1000 and a["held"] == 0 and n == 1000 else 1)
PY

# 4. The flow table is carried when it can be, and said when it cannot.
cat >"$tmp/f.click" <<C
ControlSocket(unix, $tmp/sock);
FastUDPFlows(RATE 4000, FLOWS 50, LENGTH 64) -> fm :: FlowIPManager(CAPACITY 1024)
  -> FlowIPLoadBalancer(DST 10.9.0.1, DST 10.9.0.2) -> c :: Counter -> Discard;
C
cp "$tmp/f.click" "$tmp/run.click"
"$SHOAL" run --threads "${THREADS:-1}" "$tmp/run.click" --stats-out "$tmp/st2.json" >"$tmp/log2" 2>&1 &
pid=$!
until_ reads fm.count = 50 || bad "50 flows were not tracked"
echo "// edited" >>"$tmp/run.click"
kill -HUP "$pid"
until_ grep -q "(reload 1)" "$tmp/log2" || bad "no reload"
before=$(ctl read c.count)
until_ reads c.count -gt $((before + 400)) || bad "no packets after the reload"
reads fm.inserts = 50 && ok "flows carried: no new inserts for the 50 flows" ||
  bad "fm.inserts $(ctl read fm.inserts) after the reload (flows not carried)"
sed -i 's/CAPACITY 1024/CAPACITY 2048/' "$tmp/run.click"
kill -HUP "$pid"
until_ grep -q "(reload 2)" "$tmp/log2" || bad "no second reload"
grep -q "fm: the flows are not carried over: its capacity changed (1024 flows, now 2048)" "$tmp/log2" &&
  ok "a table of another capacity is not carried, and that is said" || { bad "no word on the flows"; cat "$tmp/log2"; }
ctl stop
wait "$pid"; rc=$?; pid=
[ "$rc" = 0 ] || { bad "exit status $rc"; cat "$tmp/log2"; }
/usr/bin/python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["accounting"]; print(a); sys.exit(0 if a["balanced"] else 1)' \
  "$tmp/st2.json" && ok "balanced over three configurations" || bad "unbalanced"
# 5. A route table is carried with the routes added while it ran, unless the
# configuration's routes changed.
cat >"$tmp/run.click" <<C
ControlSocket(unix, $tmp/sock);
Idle -> rt :: RadixIPLookup(10.0.0.0/8 0, 0.0.0.0/0 1);
rt[0] -> Discard; rt[1] -> Discard;
C
rm -f "$tmp/sock"
"$SHOAL" run --threads "${THREADS:-1}" "$tmp/run.click" >"$tmp/log4" 2>&1 &
pid=$!
until_ test -S "$tmp/sock" || bad "no control socket"
until_ ctl write rt.add 192.168.0.0/16 1 || bad "rt.add"
echo "// edited" >>"$tmp/run.click"
ctl reload || bad "the reload failed"
until_ grep -q "(reload 1)" "$tmp/log4" || bad "no reload"
ctl read rt.table | grep -q "^192.168.0.0/16" && ok "a route added at run time is carried by a reload" ||
  { bad "rt.table after the reload"; ctl read rt.table; }
sed -i 's#10.0.0.0/8 0#172.16.0.0/12 0#' "$tmp/run.click"
ctl reload || bad "the second reload failed"
until_ grep -q "(reload 2)" "$tmp/log4" || bad "no second reload"
t=$(ctl read rt.table)
grep -q "^172.16.0.0/12" <<<"$t" && ! grep -q "^192.168.0.0/16\|^10.0.0.0/8" <<<"$t" &&
  ok "a configuration with other routes brings its own table" || { bad "rt.table after the second reload"; echo "$t"; }
ctl stop
wait "$pid"; rc=$?; pid=
[ "$rc" = 0 ] || { bad "exit status $rc"; cat "$tmp/log4"; }

# 6. An IDS rule set reloads Suricata-style: the new rules are loaded beside
# the running ones, the logs go on in the same files, one stats record at the
# end.
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -f "$tmp/sock"
cp "$src/examples/data/ids/local.rules" "$tmp/r.rules"
cat >"$tmp/run.click" <<C
ControlSocket(unix, $tmp/sock);
FromDump($src/examples/data/ids-traffic.pcap) -> FlowIPManager
  -> ids :: IDSMatcher(RULES $tmp/r.rules, VARS $src/examples/data/ids/vars.yaml, FASTLOG $tmp/fast.log, EVE $tmp/eve.json);
ids[0] -> Discard; ids[1] -> alerted :: Counter -> Discard;
C
"$SHOAL" run --threads "${THREADS:-1}" "$tmp/run.click" >"$tmp/log3" 2>&1 &
pid=$!
until_ reads alerted.count -gt 0 || bad "no alerts"
sleep 0.5
a1=$(ctl read alerted.count)
grep "^alert" "$src/examples/data/ids/local.rules" | head -2 >"$tmp/r.rules"
ctl reload || bad "the IDS reload failed"
until_ reads ids.rules = 2 && ok "the new rule set is in effect (2 rules)" || bad "ids.rules $(ctl read ids.rules)"
until_ reads alerted.count -gt "$a1" || bad "no alerts after the reload"
sleep 0.5
a2=$(ctl read alerted.count)
ctl stop
wait "$pid"; rc=$?; pid=
[ "$rc" = 0 ] || { bad "exit status $rc"; cat "$tmp/log3"; }
[ "$(wc -l <"$tmp/fast.log")" = "$a2" ] && ok "fast.log holds the alerts of both rule sets ($a2)" ||
  { bad "fast.log has $(wc -l <"$tmp/fast.log") lines for $a2 alerts"; cat "$tmp/log3"; }
[ "$(grep -c '"event_type":"stats"' "$tmp/eve.json")" = 1 ] && ok "one stats record, at the end" || bad "stats records"
[ "$fail" = 0 ] && echo "reload: all passed"
exit "$fail"

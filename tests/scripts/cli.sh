#!/usr/bin/env bash
# The shoal command as a user meets it.
set -u
SHOAL=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok()   { if "$@" >"$tmp/out" 2>&1; then pass=$((pass+1)); else echo "FAIL (expected success): $*"; cat "$tmp/out"; fail=$((fail+1)); fi; }
bad()  { if "$@" >"$tmp/out" 2>&1; then echo "FAIL (expected failure): $*"; fail=$((fail+1)); else pass=$((pass+1)); fi; }
has()  { if grep -qF -- "$1" "$tmp/out"; then pass=$((pass+1)); else echo "FAIL: output lacks '$1'"; cat "$tmp/out"; fail=$((fail+1)); fi; }

ok "$SHOAL" version;                has "CUDA backend:"
ok "$SHOAL" elements;               has "Classifier"
ok "$SHOAL" elements Counter;       has "Handlers:"; has "byte_count"; has "Example:"
bad "$SHOAL" elements NoSuchThing;  has "no element class 'NoSuchThing'"
# Every element documents itself.
for e in $("$SHOAL" elements | awk '{print $1}'); do
  ok "$SHOAL" elements "$e"; has "Ports:"
done
bad "$SHOAL" run /nonexistent.click; has "cannot open configuration"
bad "$SHOAL" gen --out "$tmp/x.pcap" --size 20; has "below the"
ok "$SHOAL" gen --out "$tmp/g.pcap" --count 100 --flows 7 --proto tcp --ipv6
ok "$SHOAL" gen --out "$tmp/imix.pcap" --count 120 --imix

# NAME=value sets $NAME; --stats json is valid JSON with the handler values.
cat >"$tmp/c.click" <<'C'
define($N 10)
FromDump($IN, STOP true) -> c :: Counter -> Discard;
FastUDPFlows(LIMIT $N) -> c2 :: Counter -> Discard;
C
ok "$SHOAL" run -q "$tmp/c.click" IN="$tmp/g.pcap" N=25 --stats json
/usr/bin/python3 -c "import json,sys; j=json.load(open('$tmp/out')); assert j['elements']['c']['count']==100, j; assert j['elements']['c2']['count']==25, j; assert j['accounting']['balanced']" \
  && pass=$((pass+1)) || { echo "FAIL: stats json"; cat "$tmp/out"; fail=$((fail+1)); }
ok "$SHOAL" run -q "$tmp/c.click" IN="$tmp/g.pcap" --threads 2 --stats text; has "c.count: 100"
bad "$SHOAL" run "$tmp/c.click" NOTADEFINE; has "is not NAME=value"
# --duration ends an endless run; interval stats print while running.
echo 'InfiniteSource(LENGTH 64, BURST 32) -> c :: Counter -> Discard;' >"$tmp/inf.click"
ok timeout 20 "$SHOAL" run "$tmp/inf.click" --duration 0.5 --stats json --stats-interval 0.2; has '"interim":true'; has "balanced"
# Statistics a user can read: periodic text too; deliberate discards apart
# from losses; offload handlers and the device line only where a device
# works; values of several lines kept on one line.
lacks() { if grep -qF -- "$1" "$tmp/out"; then echo "FAIL: output has '$1'"; cat "$tmp/out"; fail=$((fail+1)); else pass=$((pass+1)); fi; }
ok timeout 20 "$SHOAL" run "$tmp/inf.click" --duration 0.5 --stats-interval 0.2; has "# statistics at"; has "c.count: "; has "accounting: received"
ok "$SHOAL" run "$ROOT/examples/ipv4-fastpath.click" IN="$ROOT/examples/data/mixed.pcap" OUT="$tmp/fp-" --stats text
has "+ discarded "; has "+ lost 0 +"; lacks "offload_"; lacks "shoal: device"
[ "$(grep -c . "$tmp/out")" = "$(grep -c ': ' "$tmp/out")" ] && pass=$((pass+1)) || { echo "FAIL: a statistics line without 'name: value'"; cat "$tmp/out"; fail=$((fail+1)); }
ok "$SHOAL" run "$ROOT/examples/gpu-router-nba.click" IN="$ROOT/examples/data/mixed.pcap" OUT="$tmp/nba-" --device host --stats text
has "c.offload_aggregates: "; has "shoal: device host"; lacks "rt.offload_"

# check validates without running: it reports an output it could not
# create (and creates nothing).
echo 'FastUDPFlows(LIMIT 1) -> ToDump(/nonexistent-dir/out.pcap);' >"$tmp/w.click"
bad "$SHOAL" check "$tmp/w.click"; has "w.click:1:33: error: ToDump@2: FILENAME: cannot write '/nonexistent-dir/out.pcap'"
bad "$SHOAL" run -q "$tmp/w.click"; has "/nonexistent-dir/out.pcap"
echo "FastUDPFlows(LIMIT 1) -> ToDump($tmp/created.pcap);" >"$tmp/w2.click"
ok "$SHOAL" check "$tmp/w2.click"; has "ok ("
[ ! -e "$tmp/created.pcap" ] && pass=$((pass+1)) || { echo "FAIL: check created its output"; fail=$((fail+1)); }
ok "$SHOAL" run -q --device host "$tmp/inf.click" --duration 0.1
# On a terminal (script(1) gives it one) a live status line shows packets,
# rate, drops, time and the pcap progress; off a terminal there is none.
if command -v script >/dev/null; then
  ok "$SHOAL" gen --out "$tmp/slow.pcap" --count 100 --rate 150   # 0.66 s of traffic
  echo "FromDump($tmp/slow.pcap, STOP true, TIMING true) -> Discard;" >"$tmp/slow.click"
  ok script -qec "$SHOAL run $tmp/slow.click" /dev/null; has "pps"; has "FromDump@1:"
  ok "$SHOAL" run "$tmp/slow.click"
  if grep -q "pps" "$tmp/out"; then echo "FAIL: status line off a terminal"; fail=$((fail+1)); else pass=$((pass+1)); fi
else
  echo "skipped: the status line checks (script(1), from bsdutils, is not installed)"
fi
# shoal ids: Suricata's command line over a capture (the generated flows
# are TCP to port 80 from 10.0.0.0/8 addresses: $HOME_NET by default).
echo 'alert tcp any any -> any any (msg:"any tcp"; flow:to_server; sid:1; rev:1;)' >"$tmp/ids.rules"
mkdir -p "$tmp/ids-log"
ok "$SHOAL" ids -q -r "$tmp/g.pcap" -S "$tmp/ids.rules" -l "$tmp/ids-log" --set stream.midstream=true
grep -q '"event_type":"alert"' "$tmp/ids-log/eve.json" && grep -q '"event_type":"flow"' "$tmp/ids-log/eve.json" \
  && pass=$((pass+1)) || { echo "FAIL: shoal ids wrote no alert or flow record"; fail=$((fail+1)); }
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --dump-config; has "FlowIPManager(MIDSTREAM false, VLAN true)"; has "IDSMatcher(RULES"
# the printed configuration runs as it is, with Suricata's default variables
# ($HOME_NET, $HTTP_SERVERS, $HTTP_PORTS): the same alerts as shoal ids
ok "$SHOAL" gen --out "$tmp/g4.pcap" --count 100 --flows 7 --proto tcp   # 10.0.0.1 to 10.1.0.1, ports 40000 and up
echo 'alert tcp $HOME_NET any -> $HTTP_SERVERS !$HTTP_PORTS (msg:"home"; flow:to_server; sid:2; rev:1;)' >"$tmp/vars.rules"
mkdir -p "$tmp/vars-ids" "$tmp/vars-run"
ok "$SHOAL" ids -q -r "$tmp/g4.pcap" -S "$tmp/vars.rules" -l "$tmp/vars-ids" --set stream.midstream=true
"$SHOAL" ids -r "$tmp/g4.pcap" -S "$tmp/vars.rules" -l "$tmp/vars-run" --set stream.midstream=true --dump-config >"$tmp/vars.click"
ok "$SHOAL" run -q "$tmp/vars.click"
n_ids=$(grep -c '"signature_id":2' "$tmp/vars-ids/eve.json" || true)
n_run=$(grep -c '"signature_id":2' "$tmp/vars-run/eve.json" || true)
[ "${n_ids:-0}" -gt 0 ] && [ "$n_ids" = "$n_run" ] && pass=$((pass+1)) \
  || { echo "FAIL: shoal ids --dump-config run by shoal run: $n_run alerts, shoal ids $n_ids"; fail=$((fail+1)); }
# --offload: the scans on the host device backend, the same alerts and flows
mkdir -p "$tmp/ids-log-off"
ok "$SHOAL" ids -q -r "$tmp/g.pcap" -S "$tmp/ids.rules" -l "$tmp/ids-log-off" --set stream.midstream=true --offload host
cmp -s <(grep -c '"event_type":"alert"' "$tmp/ids-log/eve.json") <(grep -c '"event_type":"alert"' "$tmp/ids-log-off/eve.json") \
  && cmp -s <(grep -c '"event_type":"flow"' "$tmp/ids-log/eve.json") <(grep -c '"event_type":"flow"' "$tmp/ids-log-off/eve.json") \
  && pass=$((pass+1)) || { echo "FAIL: shoal ids --offload host: other alerts or flows than on the CPU"; fail=$((fail+1)); }
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --offload host --dump-config; has "OffloadBalancer(FRACTION 1)"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --offload gpu0
# a suricata.yaml's action-order and EVE alert options (read with libyaml)
cat >"$tmp/suricata.yaml" <<'YAML'
%YAML 1.1
---
vars:
  address-groups:
    HOME_NET: "[10.0.0.0/8]"
action-order:
  - drop
  - pass
  - reject
  - alert
outputs:
  - fast:
      enabled: yes
  - eve-log:
      enabled: yes
      ethernet: yes
      types:
        - alert:
            verdict: yes
            packet: yes
            tagged-packets: yes
            xff:
              enabled: yes
              mode: overwrite
              deployment: forward
        - dns:
            version: 2
        - flow:
            exception-policy: true
        - anomaly:
            types:
              stream: yes
              decode: yes
exception-policy: auto
stream:
  midstream: true
  async-oneside: yes
  drop-invalid: no
  reassembly:
    depth: 2mb
YAML
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/suricata.yaml" --dump-config
has 'ACTION_ORDER "drop pass reject alert"'; has "EVE_VERDICT true"; has "EVE_ETHERNET true"; has "EVE_PACKET true"
has "EVE_DNS_VERSION 2"; has 'XFF_MODE "overwrite", XFF_DEPLOYMENT "forward"'
has "MIDSTREAM_POLICY auto"; has "EVE_EXCEPTION_POLICY true"
has "FlowIPManager(MIDSTREAM true, ASYNC_ONESIDE true, VLAN true)"  # (flows keyed on VLANs: Suricata's default)
has "EVE_TAGGED_PACKETS true"; has "EVE_ANOMALY_STREAM true"; has "EVE_ANOMALY_DECODE true"; has "STREAM_DEPTH 2097152"
has "STREAM_DROP_INVALID false"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/suricata.yaml" --set stream.drop-invalid=yes --dump-config
lacks "STREAM_DROP_INVALID"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/suricata.yaml" --set stream.reassembly.depth=50 \
  --set outputs.1.eve-log.types.2.anomaly.types.stream=no --dump-config
has "STREAM_DEPTH 50"; lacks "EVE_ANOMALY_STREAM"
printf 'vlan:\n  use-for-tracking: false\n' >"$tmp/novlan.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/novlan.yaml" --dump-config; lacks "VLAN true"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/novlan.yaml" --set vlan.use-for-tracking=yes \
  --dump-config
has "VLAN true"
# stream.inline: auto (inline in IPS mode only), or forced either way
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --dump-config; has "STREAM_INSPECT acked"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --ips --dump-config; lacks "STREAM_INSPECT acked"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set stream.inline=true --dump-config; lacks "STREAM_INSPECT"
printf 'stream:\n  inline: no\n' >"$tmp/noinline.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/noinline.yaml" --ips --dump-config
has "STREAM_INSPECT acked"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set stream.inline=maybe; has "auto, true or false"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set stream.reassembly.depth=deep; has "a size"
# host-os-policy: each policy's ranges, as IDSMatcher's HOST_OS_POLICY; an unknown policy or address fails
printf 'host-os-policy:\n  windows: [0.0.0.0/0]\n  bsd: []\n  old-linux: [2.2.2.2, "2001:db8::/32"]\n' >"$tmp/hostos.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/hostos.yaml" --dump-config
has 'HOST_OS_POLICY "windows 0.0.0.0/0; old-linux 2.2.2.2 2001:db8::/32"'
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/hostos.yaml" -l "$tmp"
printf 'host-os-policy:\n  freebsd: [10.0.0.0/8]\n' >"$tmp/hostos-bad.yaml"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/hostos-bad.yaml" -l "$tmp"; has "'freebsd' is not a policy"
printf 'host-os-policy:\n  linux: [10.0.0.0/40]\n' >"$tmp/hostos-bad2.yaml"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/hostos-bad2.yaml" -l "$tmp"; has "longer than the address"
# packet-alert-max: suricata.yaml's (an invalid one leaves Suricata's 15), --set over it
printf 'packet-alert-max: 4\n' >"$tmp/amax.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/amax.yaml" --dump-config; has "PACKET_ALERT_MAX 4"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/amax.yaml" --set packet-alert-max=2 --dump-config
has "PACKET_ALERT_MAX 2"
printf 'packet-alert-max: 0\n' >"$tmp/amax0.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/amax0.yaml" --dump-config; lacks "PACKET_ALERT_MAX"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set packet-alert-max=300; has "1-255"
# flow records name the exception policy applied (Suricata 8's default), unless the flow output says no
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --dump-config; has "EVE_EXCEPTION_POLICY true"
printf 'outputs:\n  - eve-log:\n      types:\n        - flow:\n            exception-policy: no\n' >"$tmp/noexc.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/noexc.yaml" --dump-config
lacks "EVE_EXCEPTION_POLICY"
# detect.guess-applayer-tx and its stream-tx-log-limit: suricata.yaml's, --set over it
printf 'detect:\n  guess-applayer-tx: yes\n  stream-tx-log-limit: 2\n' >"$tmp/guess.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/guess.yaml" --dump-config
has "GUESS_APPLAYER_TX true, STREAM_TX_LOG_LIMIT 2"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/guess.yaml" --set detect.guess-applayer-tx=no \
  --dump-config
lacks "GUESS_APPLAYER_TX"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --dump-config; lacks "GUESS_APPLAYER_TX"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set detect.stream-tx-log-limit=0; has "1-255"
# an eve-log's pcap-file: records name the capture read
printf 'outputs:\n  - eve-log:\n      enabled: yes\n      pcap-file: true\n' >"$tmp/pcapfile.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/pcapfile.yaml" --dump-config
has "EVE_PCAP_FILENAME \"$tmp/g.pcap\""
# a suricata.yaml that does not parse is an error, with its line; Snort's var lines are no YAML, and fine
printf 'vars:\n  address-groups:\n    HOME_NET: "[10.0.0.0/8]"\n outputs:\n  - x\n' >"$tmp/broken.yaml"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/broken.yaml" --dump-config; has "broken.yaml:4:"
printf '# Snort variables\nipvar HOME_NET 10.0.0.0/8\n' >"$tmp/snort.vars"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/snort.vars" --dump-config
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/suricata.yaml" --set stream.async-oneside=false \
  --dump-config
has "FlowIPManager(MIDSTREAM true, VLAN true)"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/suricata.yaml" --set stream.midstream-policy=pass-flow \
  --dump-config
has "MIDSTREAM_POLICY pass-flow"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set stream.midstream-policy=drop; has "drop-flow"
# app-layer.error-policy: --set's, over suricata.yaml's, over the master switch (--set's, then the yaml's)
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set app-layer.error-policy=drop-packet --dump-config
has "APP_ERROR_POLICY drop-packet"
printf 'exception-policy: pass-flow\napp-layer:\n  error-policy: bypass\n' >"$tmp/ae.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/ae.yaml" --dump-config; has "APP_ERROR_POLICY bypass"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/ae.yaml" --set exception-policy=drop-flow --dump-config
has "APP_ERROR_POLICY bypass"
printf 'exception-policy: pass-flow\n' >"$tmp/ae2.yaml"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/ae2.yaml" --dump-config; has "APP_ERROR_POLICY pass-flow"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set app-layer.error-policy=drop; has "drop-packet"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set app-layer.protocols.ssh.encryption-handling=bypass \
  --dump-config
has "SSH_ENCRYPTION bypass"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set app-layer.protocols.ssh.encryption-handling=off
has "track-only, full or bypass"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" \
  --set app-layer.protocols.http.libhtp.default-config.response-body-limit=1mb --dump-config
has "HTTP_RESPONSE_BODY_LIMIT 1048576"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" \
  --set app-layer.protocols.http.libhtp.default-config.request-body-limit=1tb; has "a size up to 64mb"
ok env SURICATA_EVE_DNS_VERSION=3 "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -c "$tmp/suricata.yaml" --dump-config
has "EVE_DNS_VERSION 3"
bad env SURICATA_EVE_DNS_VERSION=7 "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules"; has "2 or 3"
ok "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set app-layer.protocols.dns.detection-ports.dp="[53, 5353]" --dump-config
has 'DNS_PORTS "53 5353"'
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" -l "$tmp/nonexistent-dir"; has "not a directory"
bad "$SHOAL" ids -r "$tmp/g.pcap" -S "$tmp/ids.rules" --set stream.midstream=perhaps; has "true or false"
bad "$SHOAL" ids -r "$tmp/g.pcap"; has "-S"
CLICK=$(dirname "$SHOAL")/click-bin/click
# Click's -o (Router::unparse): the declarations, a blank line, then the
# connections as Click chains them, a hop a line.
"$CLICK" -q -o - -e 'Idle -> Counter -> d1 :: Discard; is :: InfiniteSource -> ss :: StaticSwitch(1);
  ss[0] -> Discard; ss[1] -> q :: Queue -> rr :: RoundRobinSched; Idle -> [1]rr; rr -> u :: Unqueue -> d1;' >"$tmp/flat" 2>&1
printf '%s\n' 'Idle@1 :: Idle;' 'Counter@2 :: Counter;' 'd1 :: Discard;' 'is :: InfiniteSource;' 'ss :: StaticSwitch(1);' \
  'Discard@6 :: Discard;' 'q :: Queue;' 'rr :: RoundRobinSched;' 'Idle@9 :: Idle;' 'u :: Unqueue;' '' \
  'Idle@1 -> Counter@2' '    -> d1;' 'is -> ss' '    -> Discard@6;' 'ss [1] -> q' '    -> rr' '    -> u' '    -> d1;' \
  'Idle@9 -> [1] rr;' >"$tmp/flat.want"
if diff -u "$tmp/flat.want" "$tmp/flat"; then pass=$((pass+1)); else echo "FAIL: click -o"; fail=$((fail+1)); fi
# Click's --simtime: a 100-second wait takes no real time, and simulated
# time says 100 seconds passed; timewarp makes real time run faster.
if [ -x "$CLICK" ]; then
  start=$(date +%s%N)
  ok timeout 10 "$CLICK" --simtime -e 'Script(set a $(now), wait 100s, print $(sub $(now) $a), stop)'; has "100"
  [ $(( ($(date +%s%N) - start) / 1000000 )) -lt 5000 ] && pass=$((pass+1)) || { echo "FAIL: --simtime waited in real time"; fail=$((fail+1)); }
  # ... with two workers: time moves when both wait, each source on the
  # worker StaticThreadSched gives it, and RatedSource sleeps between packets.
  ok timeout 10 "$CLICK" --simtime -j 2 -e 'StaticThreadSched(a 0, b 1)
    a :: RatedSource(RATE 10, LIMIT 50) -> ca :: Counter -> Discard
    b :: RatedSource(RATE 10, LIMIT 30) -> cb :: Counter -> Discard
    Script(set t $(now), wait 4s, print $(sub $(now) $t) $(ca.count) $(cb.count) $(a.home_thread) $(b.home_thread),
           wait 6s, print $(ca.count) $(cb.count), stop)'
  has "4 40 30 0 1"; has "50 30"
  # Click's class overloading: '...' extends the earlier definition, and an
  # element uses the definition in force where it is declared.
  ok "$CLICK" -e 'elementclass Foo { $a | input -> Print(1) -> output || $a, $b | input -> Print(2) -> output }
    InfiniteSource(DATA "", LIMIT 1, STOP true) -> Foo(A) -> f :: Foo(A, B)
    elementclass Foo { $a, $b | input -> Print(3) -> output || ... }
    f -> Foo(A) -> Foo(A, B) -> Discard'
  [ "$(tr -d ' \n' < "$tmp/out")" = "1:02:01:03:0" ] && pass=$((pass+1)) || { echo "FAIL: overloads"; cat "$tmp/out"; fail=$((fail+1)); }
  # Hot swap (-R): writing hotconfig runs the new configuration in place of
  # the old, which stops there; a configuration that fails leaves the old
  # one running, and the write says why.
  ok timeout 10 "$CLICK" -R -e 'Script(write hotconfig Script(print 1111, write hotconfig Script(print 2222, stop)),
                                         wait 1s, print 3333)'
  [ "$(tr '\n' ' ' < "$tmp/out")" = "1111 2222 " ] && pass=$((pass+1)) ||
    { echo "FAIL: hot swaps, twice, the old configurations stopped"; cat "$tmp/out"; fail=$((fail+1)); }
  ok timeout 10 "$CLICK" -R -e 'Script(write hotconfig Idle -> Nope, write hotconfig Idle -> Print, print 4444, stop)'
  has "undeclared element 'Nope'"; has "'Print@2 :: Print' output 0 unused"; has "4444"
  ok timeout 10 "$CLICK" -e 'Script(write hotconfig Script(print 1111, stop), print 5555, stop)'
  has "no global write handler 'hotconfig'"; has "5555"
  # ... an ARPQuerier takes the old one's table, an ARPTable the old ARPTable's
  # (which queriers share with TABLE)
  ok timeout 10 "$CLICK" -R -e 'q :: ARPQuerier(10.0.0.1, 2:0:0:0:0:1); Idle -> q -> Discard; Idle -> [1]q;
    Script(write q.insert 10.0.0.2 2:0:0:0:0:2,
           write hotconfig q :: ARPQuerier(10.0.0.1, 2:0:0:0:0:1); Idle -> q -> Discard; Idle -> [1]q; Script(print q.table, stop))'
  has "10.0.0.2 1 02-00-00-00-00-02"
  ok timeout 10 "$CLICK" -R -e 't :: ARPTable(TIMEOUT 1min); a :: ARPQuerier(TABLE t, 10.0.0.1, 2:0:0:0:0:1)
    b :: ARPQuerier(TABLE t, 10.0.0.9, 2:0:0:0:0:9); Idle -> a -> Discard; Idle -> [1]a; Idle -> b -> Discard; Idle -> [1]b;
    Script(write t.insert 10.0.0.3 2:0:0:0:0:3, print b.table, write hotconfig t :: ARPTable; Script(print t.table, stop))'
  [ "$(grep -c '^10.0.0.3 1 02-00-00-00-00-03' "$tmp/out")" = 2 ] && pass=$((pass+1)) ||
    { echo "FAIL: an ARPTable shared by queriers, and hot-swapped"; cat "$tmp/out"; fail=$((fail+1)); }
  bad "$CLICK" -e 'a :: ARPQuerier(TABLE nope, 10.0.0.1, 2:0:0:0:0:1); Idle -> a -> Discard; Idle -> [1]a;'
  has "TABLE 'nope' is not an ARPTable element"
  # BlockThread stalls the thread that writes it, for that long
  ok timeout 10 "$CLICK" -e 'bt :: BlockThread; Script(set a $(now), write bt.block 50ms, print $(sub $(now) $a), stop)'
  awk '{ exit !($1 >= 0.05 && $1 < 5) }' "$tmp/out" && pass=$((pass+1)) || { echo "FAIL: BlockThread"; cat "$tmp/out"; fail=$((fail+1)); }
  ok "$CLICK" -e 'bt :: BlockThread; Script(write bt.block forever, stop)'; has "expected a time"
  # McastSocket: two routers on one group over loopback each hear the other
  # and, sending from 127.0.0.1, not themselves. Each sends for 4 s, so the
  # two overlap however far apart they start on a loaded machine (with 0.2 s
  # of sending, one started under ASan had finished before the other joined).
  mc() { timeout 20 "$CLICK" -e "RatedSource(\"$1 says hi.\", RATE 10, LIMIT 40, STOP true)
    -> McastSocket(233.252.0.77, 41977, 127.0.0.1) -> Print($1, CONTENTS ASCII) -> Discard"; }
  mc A 2>"$tmp/mca" & mc B 2>"$tmp/mcb"; rb=$?; wait $!; ra=$?
  if [ $ra = 0 ] && [ $rb = 0 ] && grep -q "B says" "$tmp/mca" && grep -q "A says" "$tmp/mcb" &&
     ! grep -q "A says" "$tmp/mca" && ! grep -q "B says" "$tmp/mcb"; then pass=$((pass+1)); else
    echo "FAIL: McastSocket"; cat "$tmp/mca" "$tmp/mcb"; fail=$((fail+1)); fi
  start=$(date +%s%N)
  ok timeout 10 "$CLICK" -e 'Script(write timewarp 10, set a $(now), wait 5s, print $(sub $(now) $a), stop)'; has "5"
  [ $(( ($(date +%s%N) - start) / 1000000 )) -lt 3000 ] && pass=$((pass+1)) || { echo "FAIL: timewarp 10 did not speed time up"; fail=$((fail+1)); }
fi
echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# Hot reload on a live interface: a host pings through a veth that Shoal
# reads with FromDevice while the configuration is reloaded again and again;
# the new FromDevice takes over the old one's socket (with the frames in its
# ring), so every echo request the host sent is counted, none lost in the
# swaps. FROM=FromXDPDevice: the same through an AF_XDP socket (ports are
# shared by interface and queue while a configuration holds them, so the new
# one takes the old one's). Exit 77 (skipped) where namespaces cannot be made.
NEEDS="ping" . "$(dirname "$0")/lib.sh"
in1 sysctl -qw net.ipv6.conf.v1h.disable_ipv6=1
inr sysctl -qw net.ipv6.conf.v1r.disable_ipv6=1
in1 ip addr add 10.0.7.1/24 dev v1h; in1 ip link set v1h up; inr ip link set v1r up
# No one answers 10.0.7.2: a static neighbour lets the echo requests out.
in1 ip neigh add 10.0.7.2 lladdr 02:00:00:00:07:02 dev v1h
cat >"$tmp/r.click" <<C
ControlSocket(unix, $tmp/sock);
${FROM:-FromDevice}(v1r) -> c :: Classifier(12/0800 23/01 34/08, -);
c[0] -> echo :: Counter -> Discard;
c[1] -> Discard;
C
start_shoal "$tmp/r.click" --threads "${THREADS:-1}"
n=800
in1 ping -q -c $n -i 0.002 -W 1 10.0.7.2 >"$tmp/ping.out" 2>&1 &
ping_pid=$!
reloads=0
while kill -0 $ping_pid 2>/dev/null; do
  echo "// reload $reloads" >>"$tmp/r.click"
  "$SHOAL" ctl -u "$tmp/sock" reload >/dev/null && reloads=$((reloads + 1))
  sleep 0.3
done
wait $ping_pid
grep -q "$n packets transmitted" "$tmp/ping.out" || { cat "$tmp/ping.out"; echo "FAIL: ping did not send $n"; exit 1; }
counted() { for _ in $(seq 50); do [ "$("$SHOAL" ctl -u "$tmp/sock" read echo.count)" = $n ] && return 0; sleep 0.1; done
  echo "echo.count $("$SHOAL" ctl -u "$tmp/sock" read echo.count) of $n after $reloads reloads"; return 1; }
check "reloaded $reloads times while $n echo requests came in: every one counted" counted
check "at least 5 reloads happened" test "$reloads" -ge 5
check "the kernel's ring lost nothing" test "$("$SHOAL" ctl -u "$tmp/sock" read v1r.kernel_drops 2>/dev/null || echo 0)" = 0
"$SHOAL" ctl -u "$tmp/sock" stop
wait "$pid"; rc=$?; pid=
check "exit status 0" test "$rc" = 0
check "balanced over every configuration" /usr/bin/python3 -c \
  'import json,sys; a=json.load(open(sys.argv[1]))["accounting"]; print(a); sys.exit(0 if a["balanced"] else 1)' "$tmp/stats.json"
echo "netns_reload: $pass passed, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# RawSocket against the Linux kernel: a host (H1) sends UDP datagrams to the
# Shoal side's address; Shoal reads them from a raw UDP socket (its PORT held
# by a bound socket, so the kernel does not answer them) and IPMirror sends
# them back through the raw socket byte for byte. ICMPPingSource's requests
# go out through a raw ICMP socket and the host's kernel answers them.
# THREADS=N: N workers. Exit 77 (skipped) where namespaces cannot be made.
NEEDS="ethtool" . "$(dirname "$0")/lib.sh"
inr ip addr add 10.1.0.1/24 dev v1r; inr ip link set v1r up; inr ip link set lo up
in1 ip addr add 10.1.0.2/24 dev v1h; in1 ip link set v1h up
# A veth leaves the UDP checksum to be filled in (as a NIC would), so the
# raw socket would read, and mirror, an unfinished one: H1 sends them whole.
in1 ethtool -K v1h tx off >/dev/null
cat >"$tmp/r.click" <<C
ControlSocket(unix, $tmp/sock);
r :: RawSocket(UDP, 7001) -> c :: IPClassifier(dst port 7001, -);
c[0] -> mirrored :: Counter -> IPMirror -> r;
c[1] -> other :: Counter -> Discard;
C
start_shoal "$tmp/r.click" --threads "${THREADS:-1}"
ctl() { "$SHOAL" ctl -u "$tmp/sock" "$@"; }
udp() { udp_echo in1 10.1.0.2 10.1.0.1 7001; }
check "UDP through a raw socket: 200 datagrams mirrored back intact" udp
check "mirrored.count is 200" test "$(ctl read mirrored.count)" = 200
check "r.packets counts what the socket read" test "$(ctl read r.packets)" -ge 200
held() { inr ss -uln | grep -q ':7001 '; }
check "PORT 7001 is held by a bound UDP socket" held
ctl stop
wait "$pid"; rc=$?; pid=
check "exit status 0" test "$rc" = 0
check "balanced" /usr/bin/python3 -c \
  'import json,sys; a=json.load(open(sys.argv[1]))["accounting"]; print(a); sys.exit(0 if a["balanced"] else 1)' "$tmp/stats.json"
pings() {  # ICMPPingSource through a raw ICMP socket; H1's kernel answers
  inr "$SHOAL" click -j "${THREADS:-1}" -e 'p :: ICMPPingSource(10.1.0.1, 10.1.0.2, INTERVAL 0.02, LIMIT 20, STOP true, VERBOSE false)
    -> r :: RawSocket(ICMP) -> p;' -h p.summary >"$tmp/ping" 2>&1
  local rc=$?; cat "$tmp/ping"; [ "$rc" = 0 ] && grep -q '^20 packets transmitted, 20 received, 0% packet loss$' "$tmp/ping"; }
check "ICMPPingSource through a raw ICMP socket: 20 requests, 20 replies from the host" pings
refused() {  # a bad TYPE stops the start with the reason
  ! inr "$SHOAL" click -q -e 'RawSocket(NOSUCH) -> Discard' >"$tmp/bad" 2>&1 || return 1
  cat "$tmp/bad"; grep -q 'NOSUCH' "$tmp/bad"; }
check "RawSocket(NOSUCH) is refused, naming it" refused
echo "netns_rawsocket: $pass passed, $fail failed"
[ "$fail" = 0 ]

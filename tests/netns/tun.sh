#!/usr/bin/env bash
# KernelTun and KernelTap against the Linux kernel's own stack: the kernel
# pings an address routed to a TUN device and Shoal answers (ICMPPingResponder),
# UDP datagrams come back mirrored byte for byte (IPMirror), and the same
# through a TAP device (ARP answered by ARPResponder, the ETHER address set),
# and through FromHost and ToHost (IPv4 frames come marked: no CheckIPHeader).
# A hot swap keeps the devices (same interface index, pings still answered);
# a second router asking for a device in use fails to start with the reason;
# the devices are gone when Shoal ends. ICMPPingSource pings the kernel
# through a TUN device and counts its replies. THREADS=N: N workers.
# Exit 77 (skipped) where namespaces or TUN devices cannot be made.
NEEDS="ping" . "$(dirname "$0")/lib.sh"
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
inr ip link set lo up
cat >"$tmp/t.click" <<C
ControlSocket(unix, $tmp/sock);
tun :: KernelTun(10.77.0.1/24, DEVNAME shtun0);
tun -> c :: IPClassifier(icmp type echo, udp dst port 7000, -);
c[0] -> ICMPPingResponder -> tun;
c[1] -> mirrored :: Counter -> IPMirror -> tun;
c[2] -> other :: Counter -> Discard;
tap :: KernelTap(10.78.0.1/24, DEVNAME shtap0, ETHER 2:0:0:0:0:1, MTU 1400);
tap -> e :: Classifier(12/0806 20/0001, 12/0800, -);
e[0] -> ARPResponder(10.78.0.2 2:0:0:0:0:2) -> tap;
e[1] -> CheckIPHeader(14) -> IPClassifier(icmp type echo) -> ICMPPingResponder -> EtherMirror -> tap;
e[2] -> Discard;
FromHost(shhost0, 10.80.0.1/24, DST6 fd00:80::1/64) -> h :: Classifier(12/0806 20/0001, 12/0800, -);
h[0] -> ARPResponder(10.80.0.2 2:0:0:0:0:4) -> ToHost(shhost0);
h[1] -> IPClassifier(icmp type echo) -> ICMPPingResponder -> EtherMirror -> ToHost(shhost0);
h[2] -> Discard;
C
start_shoal "$tmp/t.click" --threads "${THREADS:-1}"
ctl() { "$SHOAL" ctl -u "$tmp/sock" "$@"; }

check "the TUN device is up with 10.77.0.1/24" sh -c "ip netns exec $R ip -o addr show shtun0 | grep -q 'inet 10.77.0.1/24'"
check "ping through the TUN device, answered by Shoal" inr ping -c 5 -i 0.1 -W 2 10.77.0.2
udp() { udp_echo inr 10.77.0.1 10.77.0.9 7000; }
check "UDP through the TUN device: 200 datagrams mirrored back intact" udp
check "mirrored.count is 200" test "$(ctl read mirrored.count)" = 200
check "tun.dev_name is shtun0" test "$(ctl read tun.dev_name)" = shtun0
asleep() {  # while nothing comes, the reader's task sleeps on the device: no reads in a second
  local a b; a=$(ctl read tun.selected_calls); sleep 1; b=$(ctl read tun.selected_calls)
  echo "device reads in 1 s while idle: $((b - a))"; [ $((b - a)) -lt 50 ]; }
check "the idle reader sleeps on the device instead of polling it" asleep
check "the TAP device has ETHER 02:00:00:00:00:01 and MTU 1400" sh -c \
  "ip netns exec $R ip -o link show shtap0 | grep -q 'mtu 1400 .*link/ether 02:00:00:00:00:01'"
check "ping through the TAP device (ARP answered by Shoal)" inr ping -c 5 -i 0.1 -W 2 10.78.0.2
check "the kernel learnt 10.78.0.2 at 02:00:00:00:00:02" sh -c \
  "ip netns exec $R ip neigh show 10.78.0.2 dev shtap0 | grep -q 02:00:00:00:00:02"
check "FromHost's device has fd00:80::1/64 (DST6)" sh -c "ip netns exec $R ip -o addr show shhost0 | grep -q 'inet6 fd00:80::1/64'"
check "ping through FromHost and ToHost" inr ping -c 5 -i 0.1 -W 2 10.80.0.2

busy() {  # a second router cannot take a device in use: it does not start, and says why
  ! inr "$SHOAL" click -q -e 'KernelTun(10.79.0.1/24, DEVNAME shtun0) -> Discard' >"$tmp/busy" 2>&1 || return 1
  cat "$tmp/busy"; grep -q 'shtun0' "$tmp/busy"; }
check "a second KernelTun on shtun0 fails to start, naming the device" busy

index() { inr ip -o link show "$1" | cut -d: -f1; }
before=$(index shtun0)
echo "// swapped" >>"$tmp/t.click"
check "hot swap" ctl reload
check "the TUN device kept across the swap (index $before)" test "$(index shtun0)" = "$before"
check "ping through the TUN device after the swap" inr ping -c 3 -i 0.1 -W 2 10.77.0.2
check "ping through the TAP device after the swap" inr ping -c 3 -i 0.1 -W 2 10.78.0.2
check "ping through FromHost and ToHost after the swap" inr ping -c 3 -i 0.1 -W 2 10.80.0.2

ctl stop
wait "$pid"; rc=$?; pid=
check "exit status 0" test "$rc" = 0
check "the devices are gone" sh -c "! ip netns exec $R ip link show shtun0 2>/dev/null && ! ip netns exec $R ip link show shtap0 2>/dev/null && ! ip netns exec $R ip link show shhost0 2>/dev/null"
check "balanced" /usr/bin/python3 -c \
  'import json,sys; a=json.load(open(sys.argv[1]))["accounting"]; print(a); sys.exit(0 if a["balanced"] else 1)' "$tmp/stats.json"

pings() {  # ICMPPingSource's requests answered by the kernel through a TUN device
  inr "$SHOAL" click -e 'p :: ICMPPingSource(10.81.0.2, 10.81.0.1, INTERVAL 0.05, LIMIT 20, STOP true, DATA "0123456789abcdef", VERBOSE false)
    -> t :: KernelTun(10.81.0.1/24, DEVNAME shtun1); t -> p;' -h p.summary -h p.rtt_min -h p.rtt_max >"$tmp/ping" 2>&1
  local rc=$?; cat "$tmp/ping"; [ "$rc" = 0 ] || return 1
  grep -q '^20 packets transmitted, 20 received, 0% packet loss$' "$tmp/ping" || return 1
  # a measured RTT: not zero, and under a second
  sed -n '/^p.rtt_max:/{n;p}' "$tmp/ping" | grep -Eq '^([0-9]+us|0\.[0-9]*[1-9][0-9]*s)$'; }
check "ICMPPingSource: 20 requests through a TUN device, 20 replies from the kernel, RTTs measured" pings
busy() {  # a worker kept busy by a source still reads the device its reader sleeps on
  ip netns exec "$R" "$SHOAL" click -e 'InfiniteSource(LENGTH 64) -> Discard;
    t :: KernelTun(10.82.0.1/24, DEVNAME shtun2) -> IPClassifier(icmp type echo) -> ICMPPingResponder -> t;' &
  local bpid=$! ok=1
  sleep 1
  inr ping -c 5 -i 0.1 -W 2 10.82.0.2 && ok=0
  kill "$bpid"; wait "$bpid" 2>/dev/null
  return $ok; }
check "ping through a TUN device whose worker is busy with a source" busy
echo "netns_tun: $pass passed, $fail failed"
[ "$fail" = 0 ]

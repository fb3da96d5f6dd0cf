#!/usr/bin/env bash
# AF_XDP ports (FromXDPDevice, ToXDPDevice) on veths between Linux hosts in
# network namespaces, beyond the router test (netns_router_xdp): the errors
# an operator meets, a bridge in generic XDP mode that loses nothing, a
# sending-only port that leaves the interface's traffic to the kernel, and
# ring overflows counted by the kernel. Exit 77 (skipped) where namespaces
# cannot be made or the build has no AF_XDP.
NEEDS="ping ethtool" . "$(dirname "$0")/lib.sh"
"$SHOAL" version | grep -q "AF_XDP yes" || skip "this shoal was built without AF_XDP"
for i in v1r v2r; do inr sysctl -qw net.ipv6.conf.$i.disable_ipv6=1; inr ip link set $i up; done
# Checksums computed by the hosts (AF_XDP does not carry the offload note).
in1 ethtool -K v1h tx off >/dev/null; in2 ethtool -K v2h tx off >/dev/null
in1 sysctl -qw net.ipv6.conf.v1h.disable_ipv6=1; in2 sysctl -qw net.ipv6.conf.v2h.disable_ipv6=1
in1 ip addr add 10.0.3.1/24 dev v1h; in1 ip link set v1h up
in2 ip addr add 10.0.3.2/24 dev v2h; in2 ip link set v2h up
mac1=$(in1 cat /sys/class/net/v1h/address) mac2=$(in2 cat /sys/class/net/v2h/address)

# run_err CONFIG WANT [ARGS]: shoal refuses CONFIG (exit 1) saying WANT.
run_err() { local conf=$1 want=$2; shift 2
  printf '%s\n' "$conf" >"$tmp/e.click"
  if ip netns exec "$R" "$SHOAL" run -q "$tmp/e.click" --duration 0.2 "$@" >"$tmp/e.out" 2>&1; then
    echo "shoal accepted it"; return 1; fi
  cat "$tmp/e.out"; grep -q -- "$want" "$tmp/e.out"; }
check "a missing interface is a one-line error" \
  run_err 'FromXDPDevice(nosuch0) -> Discard;' "FromXDPDevice(nosuch0): no interface named 'nosuch0'"
check "two workers on a one-queue interface: says how to get queues" \
  run_err 'FromXDPDevice(v1r) -> Discard;' "v1r has 1 receive queue, so there is no queue 1 .*ethtool -L v1r" --threads 2
check "QUEUE past the interface's queues" \
  run_err 'FromXDPDevice(v1r, QUEUE 3) -> Discard;' "no queue 3"
check "a bad MODE names the argument and where it is" \
  run_err 'FromXDPDevice(v1r, MODE turbo) -> Discard;' "e.click:1:.*MODE must be auto, native or generic"
check "receive and send elements of one queue must agree" \
  run_err 'FromXDPDevice(v1r) -> Queue -> ToXDPDevice(v1r, RING_SIZE 64);' "already open here with other"

# A bridge h1 <-> h2 in generic XDP mode: everything h1 sends reaches h2.
cat >"$tmp/bridge.click" <<C
FromXDPDevice(v1r, MODE generic) -> q2 :: Queue(4096) -> ToXDPDevice(v2r, MODE generic);
FromXDPDevice(v2r, MODE generic) -> q1 :: Queue(4096) -> ToXDPDevice(v1r, MODE generic);
C
start_shoal "$tmp/bridge.click"
check "ping h1 -> h2 through the generic-mode bridge" in1 ping -c 3 -i 0.2 -W 2 10.0.3.2
in2 /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.0.3.2", 7000)); s.settimeout(2)
s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE: count losses in Shoal, not in this socket
n = 0
try:
    while True: s.recv(2000); n += 1
except socket.timeout: pass
print(n)' >"$tmp/udp.n" 2>"$tmp/udp.err" &
upid=$!
sleep 0.3
udp() { in1 /usr/bin/python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(2000):
    s.sendto(bytes(1000), ("10.0.3.2", 7000))
    if i % 100 == 99: time.sleep(0.005)' || return 1
  wait $upid; cat "$tmp/udp.err"; echo "h2 received $(cat "$tmp/udp.n") of 2000"
  [ "$(cat "$tmp/udp.n")" = 2000 ]; }
check "2000 UDP datagrams of 1000 bytes all arrive" udp
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
bridged() { /usr/bin/python3 - "$tmp/stats.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); h = j["elements"]; print(j["accounting"])
x = {k: v for k, v in h.items() if v.get("class", "").endswith("XDPDevice")}
for k, v in sorted(x.items()): print(k, v)
print(j["drops"])
ok = j["accounting"]["balanced"] and all(v["mode"].startswith("generic XDP") for v in x.values())
ok = ok and sum(int(v["count"]) for v in x.values() if v["class"] == "ToXDPDevice") >= 2000
sys.exit(0 if ok else 1)
PY
}
check "shoal exited cleanly ($rc); generic mode on every port, accounting balanced" bridged

# A port that only sends attaches no XDP program: R's kernel still answers
# h1 on v1r while Shoal sends 100 frames to h1 through it.
inr ip addr add 10.0.3.9/24 dev v1r
before=$(in1 cat /sys/class/net/v1h/statistics/rx_packets)
cat >"$tmp/tx.click" <<C
FastUDPFlows(RATE 100, LIMIT 100, LENGTH 120, SRCETH $(inr cat /sys/class/net/v1r/address), DSTETH $mac1,
             SRCIP 10.0.3.9, DSTIP 10.0.3.1) -> ToXDPDevice(v1r);
C
start_shoal "$tmp/tx.click"
check "the kernel still answers on an interface Shoal only sends on" in1 ping -c 3 -i 0.2 -W 2 10.0.3.9
sleep 1
kill -TERM "$pid" 2>/dev/null; wait "$pid"; pid=
got() { local after; after=$(in1 cat /sys/class/net/v1h/statistics/rx_packets)
        echo "h1 received $((after - before)) frames (100 from Shoal, the rest ping replies and ARP)"
        [ $((after - before)) -ge 103 ]; }
check "h1 received the 100 frames Shoal sent" got
inr ip addr del 10.0.3.9/24 dev v1r

# Nobody reads the ring (ACTIVE false): the kernel counts what it loses.
cat >"$tmp/full.click" <<C
FromXDPDevice(v1r, ACTIVE false, FRAMES 64, RING_SIZE 32) -> Discard;
Script(wait 30s);  // keeps the router up while no source is active
C
start_shoal "$tmp/full.click"
in1 ip neigh replace 10.0.3.2 lladdr "$mac2" dev v1h
in1 /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(300): s.sendto(bytes(100), ("10.0.3.2", 7001))'
sleep 0.3
kill -TERM "$pid" 2>/dev/null; wait "$pid"; pid=
overflow() { /usr/bin/python3 - "$tmp/stats.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); v = next(v for v in j["elements"].values() if v.get("class") == "FromXDPDevice")
print({k: v[k] for k in ("count", "kernel_drops", "rx_ring_full", "rx_fill_empty", "rx_dropped")})
sys.exit(0 if int(v["count"]) == 0 and int(v["kernel_drops"]) >= 300 - 32 else 1)
PY
}
check "a full ring's losses are counted (kernel_drops)" overflow
echo "netns xdp: $pass passed, $fail failed"
[ "$fail" = 0 ]

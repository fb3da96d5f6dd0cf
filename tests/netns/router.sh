#!/usr/bin/env bash
# End-to-end: two Linux hosts (network namespaces h1 and h2) joined by veth
# pairs to a third namespace where `shoal run` routes between them with the
# configuration `shoal mkrouter` writes. The kernel of the router namespace
# has no addresses and does not forward: every answer comes from Shoal.
# Exit 77 (skipped) where namespaces cannot be made. IO=xdp: the router
# reads and writes its interfaces through AF_XDP (mkrouter --io xdp).
NEEDS="ping traceroute iperf3" . "$(dirname "$0")/lib.sh"
[ -d /proc/sys/net/ipv6 ] || skip "this kernel has no IPv6"
for i in v1r v2r; do
  inr sysctl -qw net.ipv6.conf.$i.disable_ipv6=1
done
inr sysctl -qw net.ipv4.ip_forward=0
inr ip link set v2r mtu 1280
inr ip link set v1r up; inr ip link set v2r up; inr ip link set lo up
in1 ip addr add 10.0.1.2/24 dev v1h; in1 ip -6 addr add fd00:1::2/64 dev v1h nodad
in1 ip link set v1h up; in1 ip link set lo up
in1 ip route add default via 10.0.1.1; in1 ip -6 route add default via fd00:1::1
in2 ip link set v2h mtu 1280
in2 ip addr add 10.0.2.2/24 dev v2h; in2 ip -6 addr add fd00:2::2/64 dev v2h nodad
in2 ip link set v2h up; in2 ip link set lo up
in2 ip route add default via 10.0.2.1; in2 ip -6 route add default via fd00:2::1

if [ "${IO:-}" = xdp ]; then
  "$SHOAL" version | grep -q "AF_XDP yes" || skip "this shoal was built without AF_XDP"
  # AF_XDP hands over frames without the kernel's note that the sender left
  # its L4 checksum to offload (FromDevice finishes those): the hosts
  # compute their checksums, as frames from a real NIC have them.
  in1 ethtool -K v1h tx off >/dev/null; in2 ethtool -K v2h tx off >/dev/null
fi
inr "$SHOAL" mkrouter --io "${IO:-afpacket}" -i v1r,10.0.1.1/24,fd00:1::1/64 -i v2r,10.0.2.1/24,fd00:2::1/64 \
  -o "$tmp/router.click" || exit 1
start_shoal "$tmp/router.click" ${THREADS:+--threads $THREADS}

has() { grep -q -- "$1" "$tmp/out"; }

check "ping h1 -> h2 (IPv4)" in1 ping -c 3 -i 0.2 -W 2 10.0.2.2
check "ping h2 -> h1 (IPv4)" in2 ping -c 3 -i 0.2 -W 2 10.0.1.2
check "ping h1 -> h2 (IPv6)" in1 ping -6 -c 3 -i 0.2 -W 2 fd00:2::2
check "ping h2 -> h1 (IPv6)" in2 ping -6 -c 3 -i 0.2 -W 2 fd00:1::2
check "ping the router" in1 ping -c 2 -i 0.2 -W 2 10.0.1.1
# one probe at a time, two per hop: probes sent together reach h2 at once
# (with two workers, in either order) and its kernel may answer only one
trace() { in1 traceroute -n -N 1 -q 2 -w 2 -m 4 10.0.2.2 >"$tmp/tr" 2>&1; cat "$tmp/tr"
          awk '{for (i = 2; i <= NF; i++) {if ($1 == 1 && $i == "10.0.1.1") a = 1; if ($1 == 2 && $i == "10.0.2.2") b = 1}}
               END {exit !(a && b)}' "$tmp/tr"; }
check "traceroute shows the router (ICMP time exceeded)" trace
check "ping -s 2000 across the 1280-byte link (fragmented by Shoal)" in1 ping -c 2 -i 0.2 -W 2 -s 2000 10.0.2.2
dfping() { in1 ping -c 2 -i 0.2 -W 2 -M do -s 1400 10.0.2.2 >"$tmp/df" 2>&1; cat "$tmp/df"
           grep -Eqi "frag needed|mtu ?= ?1280" "$tmp/df"; }
check "ping -M do gets fragmentation needed (mtu 1280)" dfping
arp_learnt() { in1 ip neigh show 10.0.1.1 | tee /dev/stderr | grep -Eq "lladdr .*(REACHABLE|STALE|DELAY)" &&
               in2 ip -6 neigh show fd00:2::1 | grep -Eq "lladdr .*(REACHABLE|STALE|DELAY)"; }
check "ARP and neighbour discovery resolved (no static entries)" arp_learnt
in2 iperf3 -s -1 -p 5201 -J >"$tmp/ips.json" 2>&1 &
spid=$!
sleep 0.5
# iperf3 must finish with every byte sent; its receiver total stops counting
# at the end message (iperf3 3.12 leaves the last block unread), so the byte
# count is checked end to end by a second transfer that hashes what arrives.
iperf() { in1 iperf3 -c 10.0.2.2 -p 5201 -n 20M -J >"$tmp/ip.json" 2>&1 || { cat "$tmp/ip.json"; return 1; }
          wait $spid
          /usr/bin/python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]; r=json.load(open(sys.argv[2]))["end"]
s=e["sum_sent"]["bytes"]; print("iperf3: sent", s, "bytes, retransmits", e["sum_sent"].get("retransmits"), "; server counted", r["sum_received"]["bytes"])
sys.exit(0 if s>=20*1024*1024 else 1)' "$tmp/ip.json" "$tmp/ips.json"; }
check "iperf3 TCP transfer of 20 MiB completes" iperf
in2 /usr/bin/python3 -c '
import hashlib, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("10.0.2.2", 5202)); s.listen(1)
c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(1 << 16)
    if not b: break
    h.update(b); n += len(b)
print(n, h.hexdigest())' >"$tmp/rx" 2>&1 &
rpid=$!
sleep 0.5
xfer() { in1 /usr/bin/python3 -c '
import hashlib, os, socket
d = os.urandom(20 << 20); s = socket.create_connection(("10.0.2.2", 5202)); s.sendall(d); s.close()
print(len(d), hashlib.sha256(d).hexdigest())' >"$tmp/tx" || return 1
  wait $rpid; echo "sent: $(cat "$tmp/tx")"; echo "got:  $(cat "$tmp/rx")"; cmp -s "$tmp/tx" "$tmp/rx"; }
check "TCP transfer of 20 MiB arrives intact (byte count and SHA-256)" xfer

if [ "${IO:-}" = xdp ]; then
  # The kernel binds one AF_XDP socket per queue: a second Shoal is refused,
  # saying what holds the queue, and the first goes on forwarding.
  dup() { ! ip netns exec "$R" "$SHOAL" run -q "$tmp/router.click" --duration 0.3 >"$tmp/dup" 2>&1 || return 1
          cat "$tmp/dup"; grep -q "FromXDPDevice(v1r).*queue 0 of v1r.*another AF_XDP socket" "$tmp/dup" &&
          in1 ping -c 1 -W 2 10.0.2.2; }
  check "a second Shoal on the same queues is refused, saying why; the first goes on" dup
else
  # A second forwarder on the same interface is warned about (it would send
  # every packet again).
  dup() { ip netns exec "$R" "$SHOAL" run -q "$tmp/router.click" --duration 0.3 2>&1 | tee /dev/stderr |
          grep -q "other raw packet socket.* already read.* every frame of v1r"; }
  check "a second Shoal on the same interfaces is warned about" dup
fi

# Measured, not asserted (a benchmark, in the test's output): round-trip
# time and TCP throughput through Shoal, then through the kernel's own
# forwarding on the same veth set-up.
measure() {  # measure LABEL: ping RTT and iperf3 throughput h1 -> h2
  local rtt gbps
  rtt=$(in1 ping -c 40 -i 0.01 -q 10.0.2.2 2>/dev/null | awk -F/ '/rtt|round-trip/ {print $5}')
  in2 iperf3 -s -1 -p 5203 >/dev/null 2>&1 & local sp=$!
  sleep 0.3
  gbps=$(in1 iperf3 -c 10.0.2.2 -p 5203 -t 2 -J 2>/dev/null | /usr/bin/python3 -c \
    'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))' 2>/dev/null)
  wait $sp 2>/dev/null
  echo "measured: $1: ping RTT avg ${rtt:-?} ms, TCP ${gbps:-?} Gbit/s"
}
measure "through Shoal"

kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
acct() { /usr/bin/python3 - "$tmp/stats.json" "${IO:-afpacket}" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
a = j["accounting"]; print(a)
h = j["elements"]
frag = int(h.get("fr1", {}).get("fragments", 0)); err = sum(int(h.get(d, {}).get("expired", 0)) for d in ("dt0", "dt1"))
print("fragments made on the 1280 link:", frag, " TTL expiries:", err, " drops:", j["drops"])
ok = a["balanced"] and frag > 0 and err > 0
if sys.argv[2] == "xdp":  # every packet came and went through AF_XDP sockets
    xdp = {k: v for k, v in h.items() if v.get("class") in ("FromXDPDevice", "ToXDPDevice")}
    for k, v in sorted(xdp.items()): print(k, v.get("mode"), "count", v.get("count"), "kernel_drops", v.get("kernel_drops"))
    ok = ok and len(xdp) == 4 and all("XDP" in v.get("mode", "") and int(v["count"]) > 0 for v in xdp.values())
    ok = ok and not any(v.get("class") in ("FromDevice", "ToDevice") for v in h.values())
sys.exit(0 if ok else 1)
PY
}
check "shoal exited cleanly ($rc), accounting balanced, fragments and TTL expiries counted" acct
[ "$rc" = 0 ] || { echo "shoal exit $rc"; cat "$tmp/shoal.out"; fail=$((fail+1)); }
# The same hosts through the kernel's forwarding, for comparison.
inr ip addr add 10.0.1.1/24 dev v1r; inr ip addr add 10.0.2.1/24 dev v2r
inr sysctl -qw net.ipv4.ip_forward=1
measure "through the kernel"
echo "netns router: $pass passed, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# End-to-end NAT: host h1 (10.0.1.2, inside) reaches host h2 (192.0.2.2,
# outside, with no route back to 10.0.1.0/24) through `shoal mkrouter
# --nat`: ping, UDP, a TCP transfer, traceroute (ICMP errors translated
# back), and the port pool running out (counted drops, never a reused
# port). Then the kernel's own NAT (nftables masquerade, same ports) on the
# same traffic, and the two compared: h2 must see the same source address
# and ports from the same range. Exit 77 (skipped) without namespaces.
NEEDS="ping traceroute" . "$(dirname "$0")/lib.sh"
PORTS=40000-40009
inr sysctl -qw net.ipv4.ip_forward=0
for i in v1r v2r; do inr sysctl -qw net.ipv6.conf.$i.disable_ipv6=1 2>/dev/null; done
inr ip link set v1r up; inr ip link set v2r up; inr ip link set lo up
in1 ip addr add 10.0.1.2/24 dev v1h; in1 ip link set v1h up; in1 ip link set lo up
in1 ip route add default via 10.0.1.1
in2 ip addr add 192.0.2.2/24 dev v2h; in2 ip link set v2h up; in2 ip link set lo up  # no route to 10.0.1.0/24

inr "$SHOAL" mkrouter -i v1r,10.0.1.1/24 -i v2r,192.0.2.1/24 --nat "v2r,$PORTS" -o "$tmp/nat.click" || exit 1
start_shoal "$tmp/nat.click"


# h2's servers answer with the address and port they saw: TCP (after
# hashing what arrived) and UDP (each datagram echoed with it).
in2 /usr/bin/python3 -c '
import hashlib, socket, threading
def tcp():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("192.0.2.2", 7000)); s.listen(8)
    while True:
        c, peer = s.accept(); h = hashlib.sha256(); n = 0
        while True:
            b = c.recv(1 << 16)
            if not b or b.endswith(b"\n.\n"):
                h.update(b[:-3] if b else b""); n += len(b) - 3 if b else 0; break
            h.update(b); n += len(b)
        c.sendall(("%s %d %d %s\n" % (peer[0], peer[1], n, h.hexdigest())).encode()); c.close()
def udp():
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("192.0.2.2", 7001))
    while True:
        d, peer = u.recvfrom(2048); u.sendto(("%s %d " % peer).encode() + d, peer)
threading.Thread(target=tcp, daemon=True).start(); udp()' >"$tmp/servers.out" 2>&1 &
spid=$!
sleep 0.5

inrange() { [ "$1" -ge "${PORTS%-*}" ] && [ "$1" -le "${PORTS#*-}" ]; }
ping_ok() { in1 ping -c 3 -i 0.2 -W 2 192.0.2.2; }
tcp_ok() {  # 5 MiB through the NAT, intact; h2 saw the NAT's address and a port of the pool
  in1 /usr/bin/python3 -c '
import hashlib, os, socket, sys
d = os.urandom(5 << 20); s = socket.create_connection(("192.0.2.2", 7000), timeout=10)
s.sendall(d + b"\n.\n"); r = b""
while not r.endswith(b"\n"):
    b = s.recv(4096)
    if not b: break
    r += b
ip, port, n, h = r.decode().split()
print("h2 saw", ip, port, n, "bytes")
sys.exit(0 if ip == "192.0.2.1" and int(n) == len(d) and h == hashlib.sha256(d).hexdigest() else 1)' >"$tmp/tcp" || { cat "$tmp/tcp"; return 1; }
  cat "$tmp/tcp"; inrange "$(awk '{print $4}' "$tmp/tcp")"; }
udp_ok() {
  in1 /usr/bin/python3 -c '
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(2); u.sendto(b"hello", ("192.0.2.2", 7001))
d, peer = u.recvfrom(2048); print("reply from", peer, d.decode())
ip, port, msg = d.decode().split()
sys.exit(0 if peer == ("192.0.2.2", 7001) and ip == "192.0.2.1" and msg == "hello" else 1)' >"$tmp/udp" || { cat "$tmp/udp"; return 1; }
  cat "$tmp/udp"; inrange "$(awk '{print $6}' "$tmp/udp")"; }
trace_ok() {  # hop 2 is h2's port unreachable, translated back through the NAT
  in1 traceroute -n -q 1 -w 2 -m 4 192.0.2.2 >"$tmp/tr" 2>&1; cat "$tmp/tr"
  awk '$1==2 {b=$2} END {exit !(b=="192.0.2.2")}' "$tmp/tr"; }
exhaust() {  # 12 new UDP flows at once: at most the pool's 10 ports are ever given out
  in1 /usr/bin/python3 -c '
import socket, sys
socks = []
for i in range(12):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(1.5); u.sendto(b"x%d" % i, ("192.0.2.2", 7001)); socks.append(u)
ports = []
for u in socks:
    try:
        d, _ = u.recvfrom(2048); ports.append(int(d.split()[1]))
    except socket.timeout:
        pass
print("answered:", len(ports), "ports:", sorted(ports))
sys.exit(0 if 1 <= len(ports) <= 10 and len(set(ports)) == len(ports) and all(40000 <= p <= 40009 for p in ports) else 1)'; }

check "ping h1 -> h2 through the NAT" ping_ok
check "TCP 5 MiB through the NAT arrives intact from 192.0.2.1, a pool port" tcp_ok
check "UDP through the NAT: reply comes back, h2 saw 192.0.2.1" udp_ok
check "traceroute through the NAT (ICMP errors translated)" trace_ok
check "port pool exhausted: no port given twice, the rest refused" exhaust
shoal_tcp=$(awk '{print $3}' "$tmp/tcp" 2>/dev/null); shoal_udp=$(awk '{print $5}' "$tmp/udp" 2>/dev/null)

kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
acct() { /usr/bin/python3 - "$tmp/stats.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
a = j["accounting"]; print(a)
nat = j["drops"].get("nat", {})
print("nat drops:", nat)
sys.exit(0 if a["balanced"] and int(nat.get("rewriter-no-free-port", 0)) >= 2 else 1)
PY
}
check "shoal exited cleanly ($rc), accounting balanced, refusals counted (rewriter-no-free-port)" acct
[ "$rc" = 0 ] || { echo "shoal exit $rc"; cat "$tmp/shoal.out"; fail=$((fail+1)); }

# The kernel's NAT on the same hosts: the same observations expected.
if command -v nft >/dev/null; then
  inr ip addr add 10.0.1.1/24 dev v1r; inr ip addr add 192.0.2.1/24 dev v2r
  inr sysctl -qw net.ipv4.ip_forward=1
  inr nft -f - <<EOF2 || fail=$((fail+1))
table ip nat {
  chain post {
    type nat hook postrouting priority srcnat;
    oifname "v2r" meta l4proto { tcp, udp } masquerade to :$PORTS
    oifname "v2r" masquerade
  }
}
EOF2
  check "kernel NAT (nftables masquerade): ping" ping_ok
  check "kernel NAT: TCP 5 MiB intact from 192.0.2.1, a pool port" tcp_ok
  check "kernel NAT: UDP" udp_ok
  check "kernel NAT: traceroute" trace_ok
  check "kernel NAT: port pool exhausted the same way" exhaust
  same() { echo "h2 saw: shoal TCP $shoal_tcp UDP $shoal_udp, kernel TCP $(awk '{print $3}' "$tmp/tcp") UDP $(awk '{print $5}' "$tmp/udp")"
           [ "$shoal_tcp" = 192.0.2.1 ] && [ "$(awk '{print $3}' "$tmp/tcp")" = 192.0.2.1 ]; }
  check "the same source address seen by h2 through Shoal and the kernel" same
else
  echo "skip kernel comparison: nft is not installed"
fi
kill "$spid" 2>/dev/null
echo "netns nat: $pass passed, $fail failed"
[ "$fail" = 0 ]

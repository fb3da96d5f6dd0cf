#!/usr/bin/env bash
# DPDK ports without a NIC, through DPDK's own virtual devices: net_pcap
# reads and writes captures, so what FromDPDKDevice received and
# ToDPDKDevice sent is compared byte for byte with what went in (scapy
# reads both, an independent reader); two workers on two queues; the
# errors an operator meets; with root, a net_tap port answering the Linux
# kernel's pings, and a net_af_xdp port on a veth taking a stream whole,
# also while its configuration is reloaded.
# Skipped (77) when the build has no DPDK.
#   tests/scripts/dpdk.sh SHOAL
set -u
SHOAL=$(realpath "$1")
"$SHOAL" version | grep -q "DPDK yes" || { echo "SKIP: this shoal was built without DPDK"; exit 77; }
/usr/bin/python3 -c "import scapy" 2>/dev/null || { echo "SKIP: python3-scapy is not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { local name=$1; shift
  if "$@" >"$tmp/out" 2>&1; then echo "ok   $name"; pass=$((pass+1))
  else echo "FAIL $name"; sed 's/^/     /' "$tmp/out"; fail=$((fail+1)); fi; }
same() {  # same "IN..." "OUT...": the frames of the OUT captures are those of the IN ones (as multisets)
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys
from scapy.all import rdpcap
a = sorted(bytes(p) for f in sys.argv[1].split() for p in rdpcap(f))
b = sorted(bytes(p) for f in sys.argv[2].split() for p in rdpcap(f))
print(len(a), "frames in,", len(b), "out")
sys.exit(0 if a == b and a else 1)
PY
}
"$SHOAL" gen -o "$tmp/a.pcap" -n 700 -s 60 -f 30 2>/dev/null
"$SHOAL" gen -o "$tmp/b.pcap" -n 300 -s 1514 -f 7 --proto tcp 2>/dev/null
"$SHOAL" gen -o "$tmp/c.pcap" -n 400 -s 900 -f 11 -6 2>/dev/null

one() {
  echo "FromDPDKDevice(\"net_pcap0,rx_pcap=$tmp/a.pcap,tx_pcap=$tmp/o.pcap\", LIMIT 700, STOP true)
        -> c :: Counter -> ToDPDKDevice(net_pcap0);" >"$tmp/one.click"
  "$SHOAL" run "$tmp/one.click" --stats-out "$tmp/one.json" 2>&1 | tee "$tmp/one.err" | grep -q "received 700 .*sent 700 .*balanced" ||
    { cat "$tmp/one.err"; return 1; }
  same "$tmp/a.pcap" "$tmp/o.pcap"; }
check "net_pcap in and out: 700 frames, byte for byte, accounting balanced" one

two() {
  echo "FromDPDKDevice(\"net_pcap1,rx_pcap=$tmp/b.pcap,rx_pcap=$tmp/c.pcap,tx_pcap=$tmp/o1.pcap,tx_pcap=$tmp/o2.pcap\",
                       LIMIT 400, STOP true) -> Counter -> q :: Queue -> ToDPDKDevice(net_pcap1);" >"$tmp/two.click"
  # Worker 0 reads queue 0 (b, 300 frames), worker 1 queue 1 (c, 400): LIMIT
  # counts each worker's own packets, and a stop needs every copy, so the
  # run ends at --duration, with both files read.
  "$SHOAL" run "$tmp/two.click" --threads 2 --duration 3 --stats-out "$tmp/two.json" >"$tmp/two.err" 2>&1 ||
    { cat "$tmp/two.err"; return 1; }
  cat "$tmp/two.err"
  /usr/bin/python3 - "$tmp/two.json" <<'PY' || return 1
import json, sys
j = json.load(open(sys.argv[1])); e = j["elements"]
src = next(v for v in e.values() if v.get("class") == "FromDPDKDevice")
print(j["accounting"], src["count"], src["device"])
sys.exit(0 if j["accounting"]["balanced"] and int(src["count"]) == 700 else 1)
PY
  same "$tmp/b.pcap $tmp/c.pcap" "$tmp/o1.pcap $tmp/o2.pcap"; }
check "two workers on two queues: 700 frames of two captures out, byte for byte" two

# A live port with the Linux kernel as the peer: DPDK's net_tap makes an
# interface in a network namespace; the kernel pings an address that only
# Shoal answers (ARP and ICMP echo both go in and out through DPDK). Replies
# go back to the sender's address (ARPResponder, EtherMirror): the kernel
# side's address is not ours to set, since starting the port sets it back to
# the PMD's (rte_eth_dev_start restores the MAC), whenever that happens.
tap() {
  local ns=shoaldpdk$$
  ip netns add "$ns" || return 1
  cat >"$tmp/tap.click" <<C
FromDPDKDevice("net_tap0,iface=dtap0") -> c :: Classifier(12/0806 20/0001, 12/0800, -);
out :: Queue -> ToDPDKDevice(net_tap0);
c[0] -> ARPResponder(10.5.0.2 02:00:00:00:00:02) -> out;
c[1] -> Strip(14) -> CheckIPHeader -> ICMPPingResponder -> Unstrip(14) -> EtherMirror -> out;
c[2] -> Discard;
C
  ip netns exec "$ns" "$SHOAL" run -q "$tmp/tap.click" --stats-out "$tmp/tap.json" >"$tmp/tap.out" 2>&1 &
  local spid=$! ok=1
  for _ in $(seq 200); do ip -n "$ns" link show dtap0 >/dev/null 2>&1 && break; sleep 0.1; done
  ip -n "$ns" link set dtap0 up &&
    ip -n "$ns" addr add 10.5.0.1/24 dev dtap0 && ip netns exec "$ns" ping -c 3 -i 0.2 -w 10 10.5.0.2 &&
    ip -n "$ns" neigh show 10.5.0.2 | grep -q "lladdr 02:00:00:00:00:02" && ok=0
  kill -TERM $spid; wait $spid || ok=1
  ip netns del "$ns"
  cat "$tmp/tap.out"
  /usr/bin/python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["accounting"]; print(a); sys.exit(0 if a["balanced"] else 1)' \
    "$tmp/tap.json" || ok=1
  return $ok; }
if [ "$(id -u)" = 0 ] && [ -c /dev/net/tun ] && ip netns add shoaldpdkprobe$$ 2>/dev/null; then
  ip netns del shoaldpdkprobe$$
  check "net_tap: the kernel pings an address Shoal answers through DPDK (ARP and ICMP)" tap
else
  echo "skip net_tap: needs root, /dev/net/tun and network namespaces"
fi

# DPDK's net_af_xdp on a veth: every frame of a 30,000-frame stream comes in.
# (Its UMEM is the mbuf pool, registered from the pool's first memory chunk:
# a pool spread over several chunks, as without huge pages, lost all but the
# first few thousand frames.) With an argument N, the configuration is
# reloaded N times (SIGHUP) while the stream comes in: the new one takes the
# port over (and the Counter's count), still every frame.
afxdp() {
  local reloads=${1:-0} ns=shoaldpdkx$$
  ip netns add "$ns" || return 1
  # (no IPv6: the kernel's own neighbour discovery would add frames)
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 &&
    ip -n "$ns" link add vg type veth peer name vr && ip -n "$ns" link set vg up && ip -n "$ns" link set vr up &&
    ip -n "$ns" link set lo up || { ip netns del "$ns"; return 1; }
  echo 'src :: FromDPDKDevice("net_af_xdp0,iface=vr") -> c :: Counter -> Discard;' >"$tmp/x.click"
  ip netns exec "$ns" "$SHOAL" run "$tmp/x.click" --duration 4 --stats-out "$tmp/x.json" >"$tmp/x.out" 2>&1 &
  local spid=$!
  sleep 1.5
  echo "FastUDPFlows(RATE 30000, LIMIT 30000, LENGTH 64, FLOWS 64, SRCETH 02:00:00:00:00:01, SRCIP 10.6.0.1,
        DSTETH $(ip -n "$ns" link show vr | awk '/ether/ {print $2}'), DSTIP 10.6.0.2) -> ToDevice(vg);" >"$tmp/g.click"
  ip netns exec "$ns" "$SHOAL" run -q "$tmp/g.click" >/dev/null 2>&1 &
  local gpid=$!
  for _ in $(seq "$reloads"); do sleep 0.15; kill -HUP $spid; done
  wait $gpid
  wait $spid
  local rc=$?
  ip netns del "$ns"
  [ $rc = 0 ] || { cat "$tmp/x.out"; return 1; }
  if [ "$reloads" -gt 0 ] && ! grep -q "(reload $reloads)" "$tmp/x.out"; then
    echo "not reloaded $reloads times:"; cat "$tmp/x.out"; return 1
  fi
  /usr/bin/python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["elements"]; print(e["c"]["count"], "frames,",
    e["src"]["hw_dropped"], "missed"); sys.exit(0 if e["c"]["count"] == 30000 and e["src"]["hw_dropped"] == 0 else 1)' \
    "$tmp/x.json"; }
if [ "$(id -u)" = 0 ] && ip netns add shoaldpdkprobe$$ 2>/dev/null; then
  ip netns del shoaldpdkprobe$$
  check "net_af_xdp on a veth: 30,000 frames in, none missed" afxdp
  check "net_af_xdp on a veth, reloaded 5 times meanwhile: 30,000 frames in, none missed" afxdp 5
else
  echo "skip net_af_xdp: needs root and network namespaces"
fi

err() { local conf=$1 want=$2; shift 2
  echo "$conf" >"$tmp/e.click"
  if "$SHOAL" run "$tmp/e.click" --duration 0.2 "$@" >"$tmp/e.out" 2>&1; then echo "accepted"; cat "$tmp/e.out"; return 1; fi
  cat "$tmp/e.out"; grep -q -- "$want" "$tmp/e.out"; }
check "a port number DPDK does not have" err 'FromDPDKDevice(7) -> Discard;' "DPDK has no port 7"
check "a virtual device DPDK cannot probe" err 'FromDPDKDevice("net_nosuch0,x=1") -> Discard;' "DPDK cannot probe 'net_nosuch0,x=1'"
check "more workers than the port's queues" \
  err "FromDPDKDevice(\"net_pcap2,rx_pcap=$tmp/a.pcap,tx_pcap=$tmp/o3.pcap\") -> Discard;" "need one each" --threads 2
check "EAL arguments that do not parse: said, with where they come from" \
  err "FromDPDKDevice(\"net_pcap3,rx_pcap=$tmp/a.pcap\") -> Discard;" "EAL did not start with '--bogus-flag'" --dpdk "--bogus-flag"
echo "dpdk: $pass passed, $fail failed"
[ "$fail" = 0 ]

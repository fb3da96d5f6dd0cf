#!/usr/bin/env bash
# I/O paths side by side on a veth pair in network namespaces: packets a
# second one core receives (and sends) through each of Shoal's ports, in
# one run. A Shoal generator (FastUDPFlows, 64-byte UDP, many flows) on
# core 0 sends into veth g; the receiver on core 1 reads veth r with
# FromDevice (AF_PACKET TPACKET_V2 and V3) and FromXDPDevice (native and
# generic XDP) -> Counter -> Discard. Then the send side: a Shoal on core
# 1 sends through ToDevice / ToXDPDevice, counted by the peer's interface.
# On a veth the kernel's half of receiving (the XDP program, the copy into
# the ring or UMEM) runs in the sender's softirq, on the generator's core:
# a row whose port lost (almost) nothing was bound by that core, not by
# the port; the "bound" column says which.
# Needs root. Usage: bench/io.sh [build/shoal] [out.json]   (SECONDS=2)
set -euo pipefail
SHOAL=$(realpath "${1:-build/shoal}")
OUT=${2:-bench/results/io-latest.json}
SECS=${SECONDS_PER_ROW:-2}
[ "$(id -u)" = 0 ] || { echo "bench/io.sh needs root (network namespaces)"; exit 1; }
NS=shoalio$$
G=${NS}g R=${NS}r
tmp=$(mktemp -d)
gpid=
cleanup() { [ -n "$gpid" ] && kill "$gpid" 2>/dev/null; wait 2>/dev/null; ip netns del "$G" 2>/dev/null; ip netns del "$R" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
ip netns add "$G"; ip netns add "$R"
ip link add vg netns "$G" type veth peer name vr netns "$R"
for n in "$G" "$R"; do ip -n "$n" link set lo up; done
ip -n "$G" link set vg up; ip -n "$R" link set vr up
ip netns exec "$G" sysctl -qw net.ipv6.conf.vg.disable_ipv6=1
ip netns exec "$R" sysctl -qw net.ipv6.conf.vr.disable_ipv6=1
macr=$(ip netns exec "$R" cat /sys/class/net/vr/address)
macg=$(ip netns exec "$G" cat /sys/class/net/vg/address)
gen() {  # gen NS DEV PORT DSTMAC: a flood of 64-byte UDP frames
  echo "FastUDPFlows(LENGTH 64, FLOWS 1024, SRCETH $macg, DSTETH $4, SRCIP 10.9.0.1, DSTIP 10.9.0.2) -> c :: Counter -> $3($2);"
}
rows=()
printf "%-38s %10s %8s  %-22s %s\n" "path" "Mpps/core" "lost %" "bound" "mode"
# rx NAME ELEMENT: the receiver's rate while the generator floods.
rx() {
  local name=$1 elem=$2
  gen "$G" vg ToXDPDevice "$macr" >"$tmp/gen.click"
  ip netns exec "$G" taskset -c 0 "$SHOAL" run -q "$tmp/gen.click" --duration $((SECS + 3)) --stats-out "$tmp/gen.json" >/dev/null 2>&1 &
  gpid=$!
  sleep 0.5
  echo "src :: $elem -> c :: Counter -> Discard;" >"$tmp/rx.click"
  ip netns exec "$R" taskset -c 1 "$SHOAL" run -q "$tmp/rx.click" --duration "$SECS" --stats-out "$tmp/rx.json" >/dev/null 2>"$tmp/rx.err" ||
    { cat "$tmp/rx.err"; return 1; }
  wait "$gpid" || true; gpid=
  /usr/bin/python3 - "$name" "$tmp/rx.json" "$tmp/gen.json" <<'PY' >>"$tmp/rows"
import json, sys
name, r, g = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
e = r["elements"]; src = e["src"]
got, lost = int(e["c"]["count"]), int(src.get("kernel_drops", src.get("hw_dropped", 0)))
mpps = got / r["elapsed_s"] / 1e6
share = 100.0 * lost / max(1, got + lost)
print(json.dumps({"path": name, "direction": "rx", "mpps_per_core": round(mpps, 3), "kernel_drops": lost,
                  "lost_percent": round(share, 2), "bound": "the port's core" if share > 1 else "the sender's core",
                  "mode": src.get("mode", src.get("device", "AF_PACKET"))}))
PY
  tail -1 "$tmp/rows" | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print("%-38s %10.3f %8.2f  %-22s %s" % (r["path"], r["mpps_per_core"], r["lost_percent"], r["bound"], r["mode"]))'
}
# tx NAME ELEMENT-CLASS: frames a second handed to the link, counted by the peer.
tx() {
  local name=$1 cls=$2 port=${3:-vr} before after
  gen "$R" "$port" "$cls" "$macg" | sed 's/SRCETH [^,]*/SRCETH '"$macr"'/' >"$tmp/tx.click"
  before=$(ip netns exec "$G" cat /sys/class/net/vg/statistics/rx_packets)
  ip netns exec "$R" taskset -c 1 "$SHOAL" run -q "$tmp/tx.click" --duration "$SECS" --stats-out "$tmp/tx.json" >/dev/null 2>"$tmp/tx.err" ||
    { cat "$tmp/tx.err"; return 1; }
  after=$(ip netns exec "$G" cat /sys/class/net/vg/statistics/rx_packets)
  /usr/bin/python3 - "$name" "$tmp/tx.json" "$((after - before))" <<'PY' >>"$tmp/rows"
import json, sys
name, t, peer = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
e = t["elements"]; out = next(v for v in e.values() if v.get("class") in ("ToDevice", "ToXDPDevice", "ToDPDKDevice"))
mpps = peer / t["elapsed_s"] / 1e6
drops = sum(int(v.get("drops", 0)) for v in e.values())
print(json.dumps({"path": name, "direction": "tx", "mpps_per_core": round(mpps, 3), "kernel_drops": drops,
                  "lost_percent": round(100.0 * drops / max(1, drops + peer), 2), "bound": "the port's core",
                  "mode": out.get("mode", "DPDK" if out.get("class") == "ToDPDKDevice" else "AF_PACKET")}))
PY
  tail -1 "$tmp/rows" | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print("%-38s %10.3f %8.2f  %-22s %s" % (r["path"], r["mpps_per_core"], r["lost_percent"], r["bound"], r["mode"]))'
}
rx "rx AF_PACKET TPACKET_V2 (FromDevice)" "FromDevice(vr)"
rx "rx AF_PACKET TPACKET_V3 (FromDevice)" "FromDevice(vr, LOW_LATENCY false)"
rx "rx AF_XDP native (FromXDPDevice)" "FromXDPDevice(vr, MODE native)"
rx "rx AF_XDP generic (FromXDPDevice)" "FromXDPDevice(vr, MODE generic)"
if "$SHOAL" version | grep -q "DPDK yes"; then
  rx "rx DPDK net_af_xdp (FromDPDKDevice)" 'FromDPDKDevice("net_af_xdp0,iface=vr")'
  rx "rx DPDK net_af_packet (FromDPDKDevice)" 'FromDPDKDevice("net_af_packet0,iface=vr")'
fi
tx "tx AF_PACKET (ToDevice)" ToDevice
tx "tx AF_XDP (ToXDPDevice)" ToXDPDevice
if "$SHOAL" version | grep -q "DPDK yes"; then
  tx "tx DPDK net_af_packet (ToDPDKDevice)" ToDPDKDevice '"net_af_packet0,iface=vr"'
fi
commit=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$(dirname "$0")" status --porcelain 2>/dev/null | grep -qv '^??' && echo true || echo false)
/usr/bin/python3 - "$tmp/rows" "$OUT" "$commit" "$dirty" "$SECS" <<'PY'
import json, platform, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
json.dump({"benchmark": "io", "machine": platform.node(), "cpu": cpu, "kernel": platform.release(), "device": "none",
           "commit": sys.argv[3], "dirty": sys.argv[4] == "true", "seconds_per_row": float(sys.argv[5]),
           "link": "veth pair in network namespaces, 64-byte UDP, generator on core 0, measured port on core 1",
           "results": rows}, open(sys.argv[2], "w"), indent=1)
PY
echo "wrote $OUT"

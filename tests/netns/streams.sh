#!/usr/bin/env bash
# End-to-end: real TCP from Linux through the flow layer. Two hosts (network
# namespaces h1 and h2) on one subnet are joined by Shoal, which bridges
# their frames (by destination Ethernet address) through FlowIPManager ->
# TCPReassembler -> TCPStreamDump and FlowLog, and captures them with ToDump.
# h1 sends 3 MiB of random bytes to h2, h2 answers with 2 MiB; then:
#   - each direction's stream file equals the bytes sent (SHA-256), with no gap;
#   - tshark's own reassembly (follow,tcp,raw) of the capture gives the same bytes;
#   - FlowLog's record of the connection says SF, with both directions' payload bytes;
#   - the accounting balances.
# DEVICE=host: TCPReassembler(DEVICE true) on the host device backend (the
# batch reassembly), which must place segments itself and give the same files.
# Exit 77 (skipped) where namespaces cannot be made.
NEEDS="tshark" . "$(dirname "$0")/lib.sh"
for i in v1r v2r; do inr sysctl -qw net.ipv6.conf.$i.disable_ipv6=1; inr ip link set $i up; done
in1 sysctl -qw net.ipv6.conf.v1h.disable_ipv6=1; in2 sysctl -qw net.ipv6.conf.v2h.disable_ipv6=1
in1 ip link set v1h address 02:00:00:00:01:01; in2 ip link set v2h address 02:00:00:00:02:02
# no segmentation offloads: the frames Shoal sees are the segments on the wire
for h in "$H1 v1h" "$H2 v2h"; do set -- $h; ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1; done
in1 ip addr add 10.0.9.1/24 dev v1h; in1 ip link set v1h up; in1 ip link set lo up
in2 ip addr add 10.0.9.2/24 dev v2h; in2 ip link set v2h up; in2 ip link set lo up

on_device=false; [ -n "${DEVICE:-}" ] && on_device=true
cat >"$tmp/streams.click" <<C
// a bridge between v1r and v2r, by destination Ethernet address
in1 :: FromDevice(v1r); in2 :: FromDevice(v2r);
out1 :: Queue(4096) -> ToDevice(v1r); out2 :: Queue(4096) -> ToDevice(v2r);
in1 -> j :: Null; in2 -> j;
j -> FlowIPManager -> r :: TCPReassembler(DEVICE $on_device) -> TCPStreamDump($tmp/streams) -> FlowLog($tmp/conn.json, FORMAT json)
  -> t :: Tee(2);
t[1] -> ToDump($tmp/cap.pcap);
t[0] -> c :: Classifier(0/020000000101, 0/020000000202, -);
c[0] -> out1; c[1] -> out2; c[2] -> b :: Tee(2); b[0] -> out1; b[1] -> out2;
C
ip netns exec "$R" "$SHOAL" run -q ${DEVICE:+--device "$DEVICE"} "$tmp/streams.click" --stats-out "$tmp/stats.json" >"$tmp/shoal.out" 2>&1 &
pid=$!
sleep 1
kill -0 "$pid" 2>/dev/null || { echo "FAIL: shoal did not start"; cat "$tmp/shoal.out"; exit 1; }

# h2: receive everything, then answer with 2 MiB; both sides note what they sent and got
in2 /usr/bin/python3 -c '
import hashlib, os, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("10.0.9.2", 7070)); s.listen(1)
c, _ = s.accept(); got = b""
while True:
    b = c.recv(1 << 16)
    if not b: break
    got += b
d = os.urandom(2 << 20); c.sendall(d); c.close()
print(hashlib.sha256(got).hexdigest(), hashlib.sha256(d).hexdigest())' >"$tmp/h2" 2>&1 &
spid=$!
sleep 0.5
in1 /usr/bin/python3 -c '
import hashlib, os, socket
d = os.urandom(3 << 20); s = socket.create_connection(("10.0.9.2", 7070)); s.sendall(d); s.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = s.recv(1 << 16)
    if not b: break
    got += b
s.close()
print(hashlib.sha256(d).hexdigest(), hashlib.sha256(got).hexdigest())' >"$tmp/h1" 2>&1
wait $spid
sleep 0.5
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=

pass=0; fail=0
ok() { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1"; fail=$((fail+1)); }
read -r sent1 got1 <"$tmp/h1"; read -r got2 sent2 <"$tmp/h2"
[ "$sent1" = "$got2" ] && [ "$sent2" = "$got1" ] && ok "the hosts exchanged 3 MiB and 2 MiB intact" || bad "the transfer itself: $(cat "$tmp/h1" "$tmp/h2")"
[ "$rc" = 0 ] && ok "shoal exited cleanly" || { bad "shoal exit $rc"; cat "$tmp/shoal.out"; }
f12=$(ls "$tmp"/streams/010.000.009.001.*-010.000.009.002.07070 2>/dev/null | head -1)
f21=$(ls "$tmp"/streams/010.000.009.002.07070-010.000.009.001.* 2>/dev/null | head -1)
h() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }
[ -n "$f12" ] && [ "$(h "$f12")" = "$sent1" ] && ok "h1 -> h2 stream file equals the bytes sent ($(stat -c %s "$f12") bytes)" || bad "h1 -> h2 stream file ($f12)"
[ -n "$f21" ] && [ "$(h "$f21")" = "$sent2" ] && ok "h2 -> h1 stream file equals the bytes sent ($(stat -c %s "$f21") bytes)" || bad "h2 -> h1 stream file ($f21)"
# tshark reassembles the captured connection on its own
tshark -r "$tmp/cap.pcap" -q -z follow,tcp,raw,0 2>/dev/null | /usr/bin/python3 -c '
import sys
side = [bytearray(), bytearray()]
for line in sys.stdin:
    if line.startswith(("=", "Follow", "Filter", "Node")) or not line.strip(): continue
    side[1 if line.startswith("\t") else 0] += bytes.fromhex(line.strip())
open(sys.argv[1], "wb").write(side[0]); open(sys.argv[2], "wb").write(side[1])' "$tmp/ts12" "$tmp/ts21"
[ "$(h "$tmp/ts12")" = "$sent1" ] && [ "$(h "$tmp/ts21")" = "$sent2" ] && ok "tshark's reassembly of the capture agrees" || bad "tshark's reassembly: $(stat -c %s "$tmp/ts12" "$tmp/ts21" 2>&1 | tr '\n' ' ')"
/usr/bin/python3 - "$tmp/conn.json" "$tmp/stats.json" "${DEVICE:-}" <<'PY' && ok "FlowLog says SF with both payloads; accounting balanced; no gap${DEVICE:+; the device placed segments}" || bad "FlowLog / accounting"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
tcp = [r for r in recs if r["proto"] == "tcp" and r["id.resp_p"] == 7070]
print(tcp)
j = json.load(open(sys.argv[2]))
print(j["accounting"])
gaps = sum(int(v.get("gaps", 0)) for v in j["elements"].values() if isinstance(v, dict))
r = j["elements"]["r"]
print("segments", r["segments"], "placed by the device", r["device_placed"], "one by one", r["one_by_one"])
if sys.argv[3] and (r["device_placed"] == 0 or r["device_failures"]):
    sys.exit(1)
sys.exit(0 if len(tcp) == 1 and tcp[0]["conn_state"] == "SF" and tcp[0]["orig_bytes"] >= 3 << 20
         and tcp[0]["resp_bytes"] >= 2 << 20 and j["accounting"]["balanced"] and gaps == 0 else 1)
PY
echo "streams: $pass passed, $fail failed"
[ "$fail" = 0 ]

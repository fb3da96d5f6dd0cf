#!/usr/bin/env bash
# TCP window tracking against the Linux kernel: the same TCP segments, IPv4
# and IPv6 (see conntrack_window.py: forged resets, data beyond the window,
# acks of data never sent, retransmissions, window scaling, SACK,
# wrap-around, midstream pick-up, the state table's refusals, SYNs inside
# and after a connection, random walks) go through a Linux router whose
# forward chain drops "ct state invalid" (nftables), and through Shoal's
# FlowIPManager -> Firewall (every connection allowed) from a pcap; both
# must let the same packets through. Exit 77 (skipped) without namespaces
# or nft. WALKS=N sets the random walks; KEEP=DIR keeps the files.
NEEDS="nft" . "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
here=$(dirname "$0")
$py -c 'import scapy' 2>/dev/null || skip "scapy is not installed"
$py "$here/conntrack_window.py" make "$tmp/segs.pcap" || exit 1

inr ip addr add 10.0.1.1/24 dev v1r; inr ip addr add 192.0.2.1/24 dev v2r
inr ip -6 addr add fd00:1::1/64 dev v1r nodad; inr ip -6 addr add fd00:2::1/64 dev v2r nodad
inr ip link set v1r up; inr ip link set v2r up; inr ip link set lo up
inr sysctl -qw net.ipv4.ip_forward=1
inr sysctl -qw net.ipv6.conf.all.forwarding=1
in1 ip addr add 10.0.1.2/24 dev v1h; in1 ip link set v1h up
in2 ip addr add 192.0.2.2/24 dev v2h; in2 ip link set v2h up
mac() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }
inr ip neigh replace 10.0.1.2 lladdr "$(mac "$H1" v1h)" dev v1r nud permanent
inr ip neigh replace 192.0.2.2 lladdr "$(mac "$H2" v2h)" dev v2r nud permanent
inr ip -6 neigh replace fd00:1::2 lladdr "$(mac "$H1" v1h)" dev v1r nud permanent
inr ip -6 neigh replace fd00:2::2 lladdr "$(mac "$H2" v2h)" dev v2r nud permanent
# the hosts never answer (their capture sees what arrives before this)
for h in in1 in2; do
  $h nft -f - <<'NFT' || exit 1
table inet quiet {
  chain input_drop { type filter hook input priority 0; policy drop; }
  chain output_drop { type filter hook output priority 0; policy drop; }
}
NFT
done
inr sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=0 2>/dev/null
inr sysctl -qw net.netfilter.nf_conntrack_tcp_loose=1 2>/dev/null
inr nft -f - <<'NFT' || exit 1
table inet fw {
  chain check {
    type filter hook forward priority 0;
    ct state invalid counter drop
  }
}
NFT
$py "$here/conntrack_window.py" inject "$tmp/segs.pcap" "$H1" v1h "$(mac "$R" v1r)" "$H2" v2h "$(mac "$R" v2r)" \
  "$tmp/kernel.ids" || exit 1
inr nft list chain inet fw check | grep counter

cat >"$tmp/fw.click" <<CLICK
FromDump($tmp/segs.pcap, STOP true)
  -> FlowIPManager
  -> Firewall("allow @0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00", DEFAULT allow, MIDSTREAM true)
  -> ToDump($tmp/shoal.pcap);
CLICK
"$SHOAL" run -q "$tmp/fw.click" || { echo "FAIL: shoal run"; exit 1; }
[ -n "${KEEP:-}" ] && cp "$tmp"/segs.pcap* "$tmp/kernel.ids" "$tmp/shoal.pcap" "$KEEP"/
$py "$here/conntrack_window.py" compare "$tmp/segs.pcap" "$tmp/kernel.ids" "$tmp/shoal.pcap"

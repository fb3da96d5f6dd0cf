#!/usr/bin/env bash
# TCP window tracking against the Linux kernel: the same TCP segments, IPv4
# and IPv6 (see conntrack_window.py: forged resets, data beyond the window,
# acks of data never sent, retransmissions, window scaling, SACK,
# wrap-around, midstream pick-up, the state table's refusals, SYNs inside
# and after a connection, random walks) go through a Linux router whose
# forward chain drops "ct state invalid" (nftables), and through Shoal's
# FlowIPManager -> Firewall (every connection allowed) from a pcap; both
# must let the same packets through. Exit 77 (skipped) without namespaces
# or nft. WALKS=N sets the random walks, WALK_SYNS=F the share of their
# segments that are SYNs or SYN-ACKs; KEEP=DIR keeps the files.
NEEDS="nft" . "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
here=$(dirname "$0")
$py -c 'import scapy' 2>/dev/null || skip "scapy is not installed"
$py "$here/conntrack_window.py" make "$tmp/segs.pcap" || exit 1

. "$here/conntrack_lib.sh"
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

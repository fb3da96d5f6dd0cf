#!/usr/bin/env bash
# conntrack's TCP timeouts against the Linux kernel: connections left in
# states whose timeout conntrack shortens (data or a FIN not acknowledged,
# the same ACK segment again and again, a zero window, a reset inside the
# window, a midstream pick-up with no reply yet) or does not, and connections
# a reset ends before any reply, which conntrack removes at once (see
# conntrack_window.py make-timeouts), go through a Linux router (conntrack in
# its forward path; the unacknowledged and retransmission timeouts set apart,
# 250 and 200 s) and through Shoal's FlowIPManager -> Firewall with the same
# timeouts; each connection's state and time left must agree within 3 s, or
# both have removed it (the kernel's /proc/net/nf_conntrack, Shoal's flows
# handler). Exit 77 (skipped)
# without namespaces, nft or the kernel's table. KEEP=DIR keeps the files.
NEEDS="nft" . "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
here=$(dirname "$0")
$py -c 'import scapy' 2>/dev/null || skip "scapy is not installed"
$py "$here/conntrack_window.py" make-timeouts "$tmp/segs.pcap" || exit 1

. "$here/conntrack_lib.sh"
inr test -r /proc/net/nf_conntrack || skip "no /proc/net/nf_conntrack (CONFIG_NF_CONNTRACK_PROCFS)"
for s in tcp_be_liberal=0 tcp_loose=1 tcp_max_retrans=3 tcp_timeout_unacknowledged=250 tcp_timeout_max_retrans=200; do
  inr sysctl -qw "net.netfilter.nf_conntrack_$s" || skip "cannot set nf_conntrack_$s"
done
$py "$here/conntrack_window.py" inject "$tmp/segs.pcap" "$H1" v1h "$(mac "$R" v1r)" "$H2" v2h "$(mac "$R" v2r)" \
  "$tmp/kernel.ids" || exit 1
inr cat /proc/net/nf_conntrack >"$tmp/kernel.table"

cat >"$tmp/fw.click" <<CLICK
FromDump($tmp/segs.pcap, STOP false)
  -> fm :: FlowIPManager(TCP_UNACKNOWLEDGED_TIMEOUT 250s, TCP_MAX_RETRANS_TIMEOUT 200s)
  -> Firewall("allow @0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00", DEFAULT allow, MIDSTREAM true)
  -> Discard;
Script(wait 1s, print \$(fm.flows), stop)
CLICK
timeout 30 "$SHOAL" run -q "$tmp/fw.click" >"$tmp/shoal.flows" || { echo "FAIL: shoal run"; exit 1; }
[ -n "${KEEP:-}" ] && cp "$tmp"/segs.pcap* "$tmp/kernel.table" "$tmp/shoal.flows" "$KEEP"/
$py "$here/conntrack_window.py" compare-timeouts "$tmp/segs.pcap" "$tmp/kernel.table" "$tmp/shoal.flows"

#!/usr/bin/env bash
# tshark as an independent checker: our generator's frames dissect cleanly;
# Classifier's TCP/UDP split matches tshark's; ToIPSummaryDump's and
# ARPPrint's fields match tshark's; FromDump reads pcapng (written by editcap) like pcap;
# tshark reassembles IP6Fragmenter's fragments into the packets that went in;
# UDPIP6Encap's and FastTCPFlows' checksums are right; EtherVLANEncap's
# tags read right, and StripEtherVLANHeader undoes it; ICMPPingSource's
# requests are right; so are TCPIPSend's, DynamicUDPIPEncap's, RIPSend's,
# ARPFaker's and EtherPauseSource's packets.
set -u
SHOAL=$1
command -v tshark >/dev/null || { echo "skipped: tshark not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; pass=0
check() { if [ "$1" = "$2" ]; then pass=$((pass+1)); else echo "FAIL $3: '$1' != '$2'"; fail=$((fail+1)); fi; }
# Runs a command; a non-zero exit is a failure of this test.
run() { if ! "$@" 2>"$tmp/err"; then echo "FAIL (exit $?): $*"; cat "$tmp/err"; fail=$((fail+1)); fi; }
# tshark's packet count of a file (with a display filter), or "missing".
count() { local f=$1; shift; [ -s "$f" ] || { echo "missing $f"; return; }; tshark -r "$f" "$@" 2>/dev/null | wc -l; }

run "$SHOAL" gen --out "$tmp/in.pcap" --count 3000 --flows 50 --proto mix --imix
run "$SHOAL" gen --out "$tmp/in6.pcap" --count 500 --flows 9 --proto mix --ipv6
check "$(count "$tmp/in.pcap")" 3000 "generated packets"
check "$(count "$tmp/in6.pcap")" 500 "generated IPv6 packets"
for f in in in6; do
  check "$(count "$tmp/$f.pcap" -Y '_ws.malformed || _ws.expert.severity >= error')" 0 "$f malformed frames"
  check "$(count "$tmp/$f.pcap" -o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE -Y 'tcp.checksum.status == 2 || udp.checksum.status == 2 || icmp.checksum.status == 2 || icmpv6.checksum.status == 2 || ip.checksum.status == 2' -o ip.check_checksum:TRUE)" 0 "$f bad checksums"
done
cat >"$tmp/split.click" <<'C'
FromDump($IN, STOP true) -> c :: Classifier(12/0800 23/06, 12/0800 23/11, -);
c[0] -> ToDump(${OUT}tcp.pcap); c[1] -> ToDump(${OUT}udp.pcap); c[2] -> ToDump(${OUT}other.pcap);
C
run "$SHOAL" run -q "$tmp/split.click" IN="$tmp/in.pcap" OUT="$tmp/"
check "$(count "$tmp/tcp.pcap")" "$(count "$tmp/in.pcap" -Y 'ip.proto == 6')" "tcp split"
check "$(count "$tmp/udp.pcap")" "$(count "$tmp/in.pcap" -Y 'ip.proto == 17')" "udp split"
check "$(count "$tmp/other.pcap" -Y 'ip.proto == 6 || ip.proto == 17')" 0 "other split"
check $(( $(count "$tmp/tcp.pcap") + $(count "$tmp/udp.pcap") + $(count "$tmp/other.pcap") )) 3000 "split total"

echo "FromDump(\$IN, STOP true) -> ToIPSummaryDump(\$OUT, CONTENTS ip_src ip_dst ip_len ip_ttl, HEADER false);" >"$tmp/sum.click"
run "$SHOAL" run -q "$tmp/sum.click" IN="$tmp/in.pcap" OUT="$tmp/sum.txt"
tshark -r "$tmp/in.pcap" -T fields -e ip.src -e ip.dst -e ip.len -e ip.ttl -E separator=' ' 2>/dev/null >"$tmp/ts.txt"
check "$(wc -l <"$tmp/ts.txt")" 3000 "tshark summary lines"
if [ -s "$tmp/sum.txt" ] && cmp -s "$tmp/sum.txt" "$tmp/ts.txt"; then pass=$((pass+1)); else echo "FAIL summary vs tshark"; diff "$tmp/sum.txt" "$tmp/ts.txt" | head; fail=$((fail+1)); fi

# pcapng in, nanosecond timestamps kept.
run editcap -F pcapng "$tmp/in.pcap" "$tmp/in.pcapng"
echo "FromDump(\$IN, STOP true) -> ToDump(\$OUT);" >"$tmp/copy.click"
run "$SHOAL" run -q "$tmp/copy.click" IN="$tmp/in.pcapng" OUT="$tmp/fromng.pcap"
check "$(count "$tmp/fromng.pcap")" 3000 "pcapng packets"
check "$(tshark -r "$tmp/fromng.pcap" -T fields -e frame.time_epoch 2>/dev/null | md5sum)" \
      "$(tshark -r "$tmp/in.pcap" -T fields -e frame.time_epoch 2>/dev/null | md5sum)" "pcapng timestamps"
check "$(tshark -r "$tmp/fromng.pcap" -T fields -e frame.len 2>/dev/null | md5sum)" \
      "$(tshark -r "$tmp/in.pcap" -T fields -e frame.len 2>/dev/null | md5sum)" "pcapng lengths"
# A pcapng with an Ethernet and a raw IP interface (mergecap keeps both):
# every packet read with its own link type and timestamp, as tshark does.
run "$SHOAL" gen --out "$tmp/e2.pcap" --count 200 --start 1700000000.0000005 --proto udp
echo "FromDump(\$IN, STOP true) -> Strip(14) -> ToDump(\$OUT, ENCAP IP);" >"$tmp/strip.click"
run "$SHOAL" run -q "$tmp/strip.click" IN="$tmp/e2.pcap" OUT="$tmp/raw.pcap"
run mergecap -F pcapng -w "$tmp/mixed.pcapng" "$tmp/in.pcap" "$tmp/raw.pcap"
echo "FromDump(\$IN, STOP true) -> ToIPSummaryDump(\$OUT, CONTENTS timestamp ip_src ip_dst ip_len, HEADER false);" >"$tmp/ng.click"
run "$SHOAL" run -q "$tmp/ng.click" IN="$tmp/mixed.pcapng" OUT="$tmp/ng.txt"
tshark -r "$tmp/mixed.pcapng" -T fields -e frame.time_epoch -e ip.src -e ip.dst -e ip.len -E separator=' ' 2>/dev/null >"$tmp/ngts.txt"
check "$(wc -l <"$tmp/ngts.txt")" 3200 "tshark reads both interfaces"
check "$(python3 -c "
from decimal import Decimal
a = [l.split() for l in open('$tmp/ng.txt')]; b = [l.split() for l in open('$tmp/ngts.txt')]
print(len(a), sum(Decimal(x[0]) != Decimal(y[0]) or x[1:] != y[1:] for x, y in zip(a, b)))")" "3200 0" "mixed-link pcapng vs tshark"
# CheckIPHeader -> DecIPTTL: every packet out has a valid checksum (updated
# incrementally) and a TTL one below its input's.
run "$SHOAL" run -q tests/golden/ipv4-check/config.click IN=tests/golden/ipv4-check/in.pcap OUT="$tmp/ttl.pcap"
check "$(count "$tmp/ttl.pcap")" 3 "DecIPTTL packets"
check "$(count "$tmp/ttl.pcap" -o ip.check_checksum:TRUE -Y 'ip.checksum.status != 1')" 0 "DecIPTTL checksums"
check "$(tshark -r "$tmp/ttl.pcap" -T fields -e ip.ttl 2>/dev/null | tr '\n' ' ')" "63 63 8 " "DecIPTTL ttl"
# ARPPrint's lines against tshark's ARP fields, over the ARP golden's
# requests and replies (in and out).
echo "c :: Classifier(12/0806, -); FromDump(\$IN, STOP true) -> c; c[0] -> ARPPrint(TIMESTAMP false, ETHER true, OUTFILE \$OUT) -> Discard; c[1] -> Discard;" >"$tmp/arpp.click"
for f in in expected; do
  run "$SHOAL" run -q "$tmp/arpp.click" IN=tests/golden/arp/$f.pcap OUT="$tmp/arp-$f.txt"
  tshark -r tests/golden/arp/$f.pcap -Y arp -T fields -e eth.src -e eth.dst -e arp.opcode -e arp.src.hw_mac \
    -e arp.src.proto_ipv4 -e arp.dst.hw_mac -e arp.dst.proto_ipv4 -E separator=' ' 2>/dev/null | python3 -c "
import sys
E = lambda m: m.upper().replace(':', '-')
for l in sys.stdin:
    es, ed, op, sha, spa, tha, tpa = l.split()
    s = E(es) + ' > ' + E(ed) + ': '
    if op == '1':
        s += 'arp who-has ' + tpa + ('' if tha == '00:00:00:00:00:00' else ' (' + E(tha) + ')') + ' tell ' + spa
    elif op == '2':
        s += 'arp reply ' + spa + ' is-at ' + E(sha)
    else:
        s += 'arp-#' + op
    print(s)" >"$tmp/arp-$f.ts"
  check "$([ -s "$tmp/arp-$f.ts" ] && diff "$tmp/arp-$f.txt" "$tmp/arp-$f.ts" >&2 && echo same)" same "ARPPrint vs tshark ($f.pcap)"
done

# IP6Fragmenter (RFC 8200 fragmentation): tshark reassembles the fragments
# into the packets that went in, their TCP and UDP checksums right over the
# reassembled bytes, and no frame is over the MTU.
run "$SHOAL" gen --out "$tmp/big6.pcap" --count 400 --flows 9 --proto mix --ipv6 --imix
echo "FromDump(\$IN, STOP true) -> MarkIP6Header(14) -> f :: IP6Fragmenter(600) -> ToDump(\$OUT);" >"$tmp/frag6.click"
run "$SHOAL" run -q "$tmp/frag6.click" IN="$tmp/big6.pcap" OUT="$tmp/frag6.pcap"
upper='tcp || udp || icmpv6'
check "$([ "$(count "$tmp/big6.pcap" -Y 'frame.len > 614')" -gt 0 ] && echo yes)" yes "packets over the MTU to fragment"
check "$(count "$tmp/frag6.pcap" -Y "$upper")" "$(count "$tmp/big6.pcap" -Y "$upper")" "IPv6 packets after tshark's reassembly"
check "$(count "$tmp/frag6.pcap" -Y 'frame.len > 614')" 0 "fragments within the MTU"
check "$([ "$(count "$tmp/frag6.pcap" -Y 'ipv6.fraghdr.ident')" -gt 0 ] && echo yes)" yes "fragments made"
check "$(count "$tmp/frag6.pcap" -Y 'ipv6.fragment.error || ipv6.fragment.overlap || ipv6.fragment.multipletails')" 0 "fragments tshark finds wrong"
check "$(count "$tmp/frag6.pcap" -o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE -Y 'tcp.checksum.status != 1 && tcp || udp.checksum.status != 1 && udp || _ws.malformed')" 0 "reassembled checksums"
fields="-e ipv6.src -e ipv6.dst -e tcp.srcport -e tcp.seq_raw -e tcp.len -e udp.srcport -e udp.length -e icmpv6.type"
check "$(tshark -r "$tmp/frag6.pcap" -Y "$upper" -T fields $fields 2>/dev/null | md5sum)" "$(tshark -r "$tmp/big6.pcap" -Y "$upper" -T fields $fields 2>/dev/null | md5sum)" "reassembled packets' fields"
# UDPIP6Encap: tshark finds every datagram's UDP checksum right, the lengths
# what went in plus 8.
cat >"$tmp/u6.click" <<'C'
e :: UDPIP6Encap(2001:db8::1, 40000, 2001:db8::2, 40001) -> ToDump($OUT, ENCAP IP);
InfiniteSource(LENGTH 1, LIMIT 20) -> e; InfiniteSource(LENGTH 1001, LIMIT 20) -> e;
C
run "$SHOAL" run -q "$tmp/u6.click" OUT="$tmp/u6.pcap"
check "$(count "$tmp/u6.pcap" -o udp.check_checksum:TRUE -Y 'udp.checksum.status == 1 && ipv6.dst == 2001:db8::2 && udp.dstport == 40001')" 40 "UDPIP6Encap checksums"
check "$(count "$tmp/u6.pcap" -Y '_ws.malformed || udp.length != ipv6.plen')" 0 "UDPIP6Encap lengths"
# FastTCPFlows: each run of FLOWSIZE packets a SYN, data and a FIN, checksums right.
echo 'FastTCPFlows(0, 40, 80, FLOWS 4, FLOWSIZE 5) -> ToDump($OUT);' >"$tmp/tcpf.click"
run "$SHOAL" run -q "$tmp/tcpf.click" OUT="$tmp/tcpf.pcap"
check "$(count "$tmp/tcpf.pcap" -o tcp.check_checksum:TRUE -Y 'tcp.checksum.status == 1')" 40 "FastTCPFlows checksums"
check "$(count "$tmp/tcpf.pcap" -Y 'tcp.flags == 0x002')/$(count "$tmp/tcpf.pcap" -Y 'tcp.flags == 0x011')/$(count "$tmp/tcpf.pcap" -Y 'tcp.flags == 0x018')" 8/8/24 "FastTCPFlows SYN/FIN/data"
# EtherVLANEncap: tshark reads the 802.1Q tags (ID, priority) and the IP and
# UDP inside; the native VLAN goes untagged; StripEtherVLANHeader then
# EtherVLANEncap(ANNO) gives the same frames back byte for byte.
cat >"$tmp/vlan.click" <<'C'
FastUDPFlows(0, 30, 200, 2:0:0:0:0:1, 10.0.0.1, 2:0:0:0:0:2, 10.0.0.2, 5) -> Strip(14)
  -> s :: RoundRobinSwitch;
s[0] -> EtherVLANEncap(0x0800, 2:0:0:0:0:1, 2:0:0:0:0:2, VLAN_ID 42, VLAN_PCP 5) -> w :: ToDump($OUT);
s[1] -> EtherVLANEncap(0x0800, 2:0:0:0:0:1, 2:0:0:0:0:2, 0) -> w;
s[2] -> EtherVLANEncap(0x0800, 2:0:0:0:0:1, 2:0:0:0:0:2, 0x2007, NATIVE_VLAN -1) -> w;
C
run "$SHOAL" run -q "$tmp/vlan.click" OUT="$tmp/vlan.pcap"
check "$(count "$tmp/vlan.pcap" -Y 'vlan.id == 42 && vlan.priority == 5 && vlan.etype == 0x0800 && udp.length == 166')" 10 "EtherVLANEncap tags"
check "$(count "$tmp/vlan.pcap" -Y 'vlan.id == 7 && vlan.priority == 1 && udp')" 10 "EtherVLANEncap TCI"
check "$(count "$tmp/vlan.pcap" -Y '!vlan && eth.type == 0x0800 && udp')" 10 "EtherVLANEncap native VLAN untagged"
check "$(count "$tmp/vlan.pcap" -Y '_ws.malformed || ip.checksum.status == 2' -o ip.check_checksum:TRUE)" 0 "EtherVLANEncap frames whole"
echo 'FromDump($IN, STOP true) -> StripEtherVLANHeader -> EtherVLANEncap(0x0800, 2:0:0:0:0:1, 2:0:0:0:0:2, ANNO) -> ToDump($OUT);' >"$tmp/vlan2.click"
run "$SHOAL" run -q "$tmp/vlan2.click" IN="$tmp/vlan.pcap" OUT="$tmp/vlan2.pcap"
check "$(tshark -r "$tmp/vlan2.pcap" -T fields -e frame 2>/dev/null | md5sum)/$(count "$tmp/vlan2.pcap")" "$(tshark -r "$tmp/vlan.pcap" -T fields -e frame 2>/dev/null | md5sum)/30" "StripEtherVLANHeader then EtherVLANEncap(ANNO): the same frames"
check "$(cmp -s <(tail -c +25 "$tmp/vlan.pcap" | od -An -tx1 | md5sum) <(tail -c +25 "$tmp/vlan2.pcap" | od -An -tx1 | md5sum); echo $?)" 0 "StripEtherVLANHeader round trip, byte for byte"
# ICMPPingSource: echo requests whose checksums tshark finds right, sequence 1..5.
echo 'ICMPPingSource(10.0.0.1, 10.0.0.2, INTERVAL 0.001, LIMIT 5, STOP true, DATA "abcdefgh") -> ToDump($OUT, ENCAP IP);' >"$tmp/ping.click"
run "$SHOAL" run -q "$tmp/ping.click" OUT="$tmp/ping.pcap"
check "$(tshark -r "$tmp/ping.pcap" -o ip.check_checksum:TRUE -Y 'icmp.type == 8 && icmp.checksum.status == 1 && ip.checksum.status == 1 && ip.ttl == 200' -T fields -e icmp.seq 2>/dev/null | tr '\n' ' ')" "1 2 3 4 5 " "ICMPPingSource requests"
# Click's packet makers, decoded by tshark: TCPIPSend's segments (flags,
# ports, checksums), DynamicUDPIPEncap's ports stepping every 3 packets,
# RIPSend's RIPv2 entry, ARPFaker's reply, EtherPauseSource's PAUSE frames
# (pulled through an Unqueue).
cat >"$tmp/mk.click" <<'C'
t :: TCPIPSend -> ToDump(${OUT}tcp.pcap, ENCAP IP);
Script(write t.send 10.0.0.1 1234 10.0.0.2 80 1000 0 2 3, write t.send 10.0.0.2 80 10.0.0.1 1234 5000 1001 18);
InfiniteSource(LENGTH 10, LIMIT 7) -> DynamicUDPIPEncap(1.0.0.1, 1000, 2.0.0.2, 2000, true, 3) -> ToDump(${OUT}dyn.pcap, ENCAP IP);
RIPSend(18.26.4.24, 18.26.4.255, 10.0.0.0/8, 10, INTERVAL 0.001, LIMIT 2) -> ToDump(${OUT}rip.pcap, ENCAP IP);
ARPFaker(18.26.4.1, 0:e0:2b:b:1a:0, 18.26.4.99, 00:a0:c9:9c:fd:9c, INTERVAL 0.001, LIMIT 2) -> ToDump(${OUT}arp.pcap);
EtherPauseSource(00:1e:13:22:48:91, 390, LIMIT 2) -> Unqueue -> ToDump(${OUT}pause.pcap);
Script(wait 0.05, stop);
C
run "$SHOAL" click "$tmp/mk.click" OUT="$tmp/"
f() { local file=$1 filter=$2; shift 2; tshark -r "$file" -o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE -Y "$filter" -T fields "$@" 2>/dev/null | tr '\n' ' '; }
check "$(f "$tmp/tcp.pcap" 'tcp.checksum.status == 1 && ip.checksum.status == 1 && ip.flags.df == 1 && ip.ttl == 255 && tcp.window_size_value == 32120' -e tcp.srcport -e tcp.flags -e tcp.seq_raw -e tcp.ack_raw)" \
  "1234	0x0002	1000	0 1234	0x0002	1000	0 1234	0x0002	1000	0 80	0x0012	5000	1001 " "TCPIPSend segments"
check "$(f "$tmp/dyn.pcap" 'udp.checksum.status == 1 && ip.checksum.status == 1 && udp.length == 18' -e udp.srcport -e udp.dstport)" \
  "1000	2000 1000	2000 1000	2000 1001	2001 1001	2001 1001	2001 1002	2002 " "DynamicUDPIPEncap ports"
check "$(f "$tmp/rip.pcap" 'udp.checksum.status == 1 && ip.checksum.status == 1 && rip.version == 2 && rip.command == 2' -e rip.ip -e rip.netmask -e rip.next_hop -e rip.metric)" \
  "10.0.0.0	255.0.0.0	18.26.4.24	10 10.0.0.0	255.0.0.0	18.26.4.24	10 " "RIPSend advertisements"
check "$(f "$tmp/arp.pcap" 'arp.opcode == 2 && eth.dst == 00:e0:2b:0b:1a:00' -e arp.src.proto_ipv4 -e arp.src.hw_mac -e arp.dst.proto_ipv4)" \
  "18.26.4.99	00:a0:c9:9c:fd:9c	18.26.4.1 18.26.4.99	00:a0:c9:9c:fd:9c	18.26.4.1 " "ARPFaker replies"
check "$(f "$tmp/pause.pcap" 'macc.opcode == 1 && eth.dst == 01:80:c2:00:00:01 && eth.src == 00:1e:13:22:48:91' -e macc.pause_time)" "390 390 " "EtherPauseSource frames"
echo "tshark oracle: $pass passed, $fail failed"
[ "$fail" = 0 ]

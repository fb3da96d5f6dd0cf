# Sourced by the conntrack tests after lib.sh: R routes between the client
# (10.0.1.2, fd00:1::2 in H1) and the server (192.0.2.2, fd00:2::2 in H2)
# with conntrack in its forward path (nftables drops "ct state invalid"),
# window checking strict and midstream pick-up on; the hosts drop everything
# (they never answer: their captures see what arrives). mac NS IF prints an
# interface's address.
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

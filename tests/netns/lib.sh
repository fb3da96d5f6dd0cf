# Sourced by the netns tests: SHOAL from $1, skip(), three namespaces (the
# Shoal side R and hosts H1, H2) joined by veth pairs v1h-v1r and v2h-v2r,
# a temporary folder, and a cleanup that stops Shoal ($pid) and removes it
# all. Helpers inr/in1/in2 run a command in a namespace; start_shoal runs
# Shoal in R on a configuration ($pid); check NAME COMMAND... counts a
# check that passes when the command does. NEEDS lists the commands the test
# needs (skipped without them); QUEUES gives the veths several queues.
set -u
SHOAL=$(realpath "$1")
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to make network namespaces"
for t in ip ${NEEDS:-}; do command -v "$t" >/dev/null || skip "$t is not installed (scripts/install-deps.sh installs it)"; done
S=shoal$$
R=${S}r H1=${S}h1 H2=${S}h2
ip netns add "$R" 2>/dev/null || skip "cannot make network namespaces here"
ip netns add "$H1"; ip netns add "$H2"
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  ip netns del "$R" 2>/dev/null; ip netns del "$H1" 2>/dev/null; ip netns del "$H2" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
inr() { ip netns exec "$R" "$@"; }
in1() { ip netns exec "$H1" "$@"; }
in2() { ip netns exec "$H2" "$@"; }
# QUEUES=N: veths with N queues each way (a worker per queue for AF_XDP).
q=${QUEUES:+numtxqueues $QUEUES numrxqueues $QUEUES}
ip link add v1h netns "$H1" $q type veth peer name v1r netns "$R" $q || skip "cannot make veth pairs"
ip link add v2h netns "$H2" $q type veth peer name v2r netns "$R" $q
# start_shoal CONFIG [ARGS...]: shoal run in R, its statistics to $tmp/stats.json.
# (Not through inr: a backgrounded function runs in a subshell, and $! must be shoal itself.)
start_shoal() {
  local conf=$1; shift
  ip netns exec "$R" "$SHOAL" run -q "$conf" --stats-out "$tmp/stats.json" "$@" >"$tmp/shoal.out" 2>&1 &
  pid=$!
  sleep 1
  kill -0 "$pid" 2>/dev/null || { echo "FAIL: shoal did not start"; cat "$tmp/shoal.out"; exit 1; }
}
pass=0; fail=0
check() {  # check NAME COMMAND...: passes when the command succeeds
  local name=$1; shift
  if "$@" >"$tmp/out" 2>&1; then echo "ok   $name"; pass=$((pass+1))
  else echo "FAIL $name"; sed 's/^/     /' "$tmp/out"; fail=$((fail+1)); fi
}
# udp_echo RUN SRC DST PORT: from SRC, 200 datagrams of random sizes and bytes
# to DST:PORT, each expected back from there unchanged (RUN: inr, in1, in2).
udp_echo() {
  "$1" /usr/bin/python3 -c '
import os, random, socket, sys
src, dst, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((src, 0)); s.settimeout(2)
sent = [os.urandom(random.randint(0, 1400)) for _ in range(200)]
got = []
for d in sent:
    s.sendto(d, (dst, port))
    b, peer = s.recvfrom(2048)
    if peer != (dst, port): sys.exit("reply from %s" % (peer,))
    got.append(b)
print(len(got), "datagrams back")
sys.exit(0 if got == sent else 1)' "$2" "$3" "$4"; }

#!/usr/bin/env bash
# One call on the GPU machine: build for sm_90, run the GPU tests and the
# benchmarks, write everything under $OUT (run.log and the JSON files: at most
# 8 files come back). Carry .debs (bench/gpu/fetch-debs.sh).
#   device run: bash bench/gpu/run.sh        (carry: [".debs"])
# Or build here and carry the programs, so the lease is spent measuring
# (bench/gpu/prebuild.sh builds build-gpu/ for sm_90 and fetches the
# run-time libraries into .debs):
#   device run: PREBUILT=1 bash bench/gpu/run.sh
#     (carry: [".debs", "build-gpu/shoal", "build-gpu/tests/shoal_unit", "build-gpu/tests/shoal_gpu_test"])
# BENCHES picks the benchmarks (default: all), e.g. BENCHES="scale snap".
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/shoal-gpu-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
(. /etc/os-release; echo "$PRETTY_NAME"; ${CXX:-g++} --version | head -1; nvcc --version | tail -1; nproc)
SECONDS=0
stamp() { echo "== [$SECONDS s] $*"; }
SYS=/tmp/shoal-sysroot
LINKFLAGS=
if [ -d .debs ]; then
  mkdir -p $SYS
  for d in .debs/*.deb; do dpkg -x "$d" $SYS; done
  export CMAKE_PREFIX_PATH=$SYS/usr PKG_CONFIG_PATH=$SYS/usr/lib/x86_64-linux-gnu/pkgconfig:$SYS/usr/share/pkgconfig
  export LD_LIBRARY_PATH=$SYS/usr/lib/x86_64-linux-gnu:$SYS/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  export PATH=$SYS/usr/bin:$PATH
  LINKFLAGS="-Wl,-rpath-link,$SYS/usr/lib/x86_64-linux-gnu:$SYS/lib/x86_64-linux-gnu -Wl,-rpath,$SYS/usr/lib/x86_64-linux-gnu:$SYS/lib/x86_64-linux-gnu"
  # Debian's .pc files name /usr; point them at the sysroot.
  sed -i -E "s#=/usr(/|$)#=$SYS/usr\1#" $SYS/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc $SYS/usr/share/pkgconfig/*.pc 2>/dev/null || true
fi
export PATH=/usr/local/cuda/bin:$PATH
if [ "${PREBUILT:-0}" = 1 ]; then
  # The tests find their data under the folder they were built in.
  src=${SHOAL_BUILT_IN:-/work/main}
  if [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
  if ldd build-gpu/shoal build-gpu/tests/shoal_unit | grep 'not found'; then exit 1; fi
  ./build-gpu/shoal version || exit 1
  # the tests (quick) before the benchmarks
  prebuilt_tests() {
    stamp "GPU tests"
    timeout 120 ./build-gpu/tests/shoal_gpu_test
    stamp "offload tests on the CUDA backend (the same tests CI runs on the host backend)"
    SHOAL_TEST_DEVICE=cuda timeout ${TESTS_TIMEOUT:-240} ./build-gpu/tests/shoal_unit --gtest_brief=1 \
      --gtest_filter='Roi*:Offload*:Datablocks*:IDSOffload*:IdsStream.TheDevice*:SDNClassifier*:SnapApps*:SetIPDSCP*:IDSMatcher.*Offloaded:DeviceFlowTable*:NfChain*:DeviceCollectives*:BatchReassembly*' 2>&1 |
      grep -vE 'device failure|offloading stops'
  }
  prebuilt_tests
else
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSHOAL_FUZZ=OFF -DSHOAL_WERROR=OFF "-DCMAKE_EXE_LINKER_FLAGS=$LINKFLAGS" \
  -DCMAKE_INCLUDE_PATH=$SYS/usr/include -DCMAKE_LIBRARY_PATH=$SYS/usr/lib/x86_64-linux-gnu || exit 1
cmake --build build-gpu -j "$(nproc)" || exit 1
./build-gpu/shoal version
stamp "GPU tests"
ctest --test-dir build-gpu -L gpu --output-on-failure
stamp "offload tests on the CUDA backend (the same tests CI runs on the host backend)"
SHOAL_TEST_DEVICE=cuda ./build-gpu/tests/shoal_unit --gtest_filter='Roi*:Offload*:Datablocks*:IDSOffload*:IdsStream.TheDevice*:SDNClassifier*:SnapApps*:SetIPDSCP*:IDSMatcher.*Offloaded:DeviceFlowTable*:NfChain*:DeviceCollectives*:BatchReassembly*' 2>&1 | grep -vE 'device failure|offloading stops'
stamp "full test suite on the GPU machine"
ctest --test-dir build-gpu -j 8 --output-on-failure 2>&1 | grep -vE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*Passed"
fi
BENCHES=${BENCHES:-scale snap classify ids ids-regex ids-stream ids-stream-plain offload lpm core flow schedule nf ipsec}
want() { [[ " $BENCHES " == *" $1 "* ]]; }
# bench/ids_stream.py's captures made beforehand (IDS_STREAM_CAPTURES=DIR holding
# stream.pcap.gz and plain.pcap.gz, from its --capture), for a machine without scapy
capture() { local f=${IDS_STREAM_CAPTURES:-}/$1.pcap.gz; [ -n "${IDS_STREAM_CAPTURES:-}" ] && [ -f "$f" ] && echo "--capture $f"; }
if want scale; then
  stamp "bench-scale (workers x applications x sizes, CPU vs offloaded, from memory)"
  timeout ${SCALE_TIMEOUT:-400} ./build-gpu/shoal bench-scale --device cuda --threads ${SCALE_THREADS:-1 4 16} \
    --sizes ${SCALE_SIZES:-64 512 1518} --ids-chunk ${SCALE_CHUNKS:-0 64 128 256} --seconds ${SCALE_SECONDS:-2} \
    --out "$OUT/bench-scale.json"
fi
if want snap; then
  stamp "bench-snap"
  ./build-gpu/shoal bench-snap --device cuda --packets 300000 --mbytes 200 --out "$OUT/bench-snap.json" --png "$OUT/bench-snap.png"
fi
if want classify; then
  stamp "bench-classify"
  ./build-gpu/shoal bench-classify --out "$OUT/bench-classify.json" --seconds 0.3
fi
if want ids; then
  stamp "bench-ids"
  ./build-gpu/shoal bench-ids --out "$OUT/bench-ids.json" --seconds 0.3
fi
if want ids-regex; then
  stamp "ids-regex: every made-up rule with a yes/no pcre, offloaded: the pcres as DFAs on the device, then on the host"
  timeout 300 ./build-gpu/shoal bench-ids --device cuda --rules 2000 10000 --length 512 1500 --match 0.1 1 --pcre 1 \
    --seconds 0.3 --out "$OUT/bench-ids-regex.json"
fi
if want ids-stream; then
  stamp "ids-stream: shoal ids with 500 tcp-stream rules, on the CPU and with the stream scans on the device (GASPP §5)"
  if [ -n "$(capture stream)" ] || python3 -c 'import scapy' 2>/dev/null; then
    timeout 200 python3 bench/ids_stream.py --shoal ./build-gpu/shoal --offload cuda --reps 3 $(capture stream) \
      --out "$OUT/bench-ids-stream.json"
  else
    echo "scapy is missing on this machine and no capture was carried: ids-stream skipped"
  fi
fi
if want ids-stream-plain; then
  stamp "ids-stream-plain: 500 plain tcp rules on the stream (CPU, and the stream scans on the device) and on packets"
  if [ -n "$(capture plain)" ] || python3 -c 'import scapy' 2>/dev/null; then
    timeout 200 python3 bench/ids_stream.py --shoal ./build-gpu/shoal --plain --offload cuda --reps 3 $(capture plain) \
      --out "$OUT/bench-ids-stream-plain.json"
  else
    echo "scapy is missing on this machine and no capture was carried: ids-stream-plain skipped"
  fi
fi
if want nf; then
  stamp "bench-nf (the network functions on one core; GPUNFV's chain on the device by aggregate size and adaptive)"
  timeout ${NF_TIMEOUT:-300} ./build-gpu/shoal bench-nf --device cuda --out "$OUT/bench-nf.json"
fi
if want ipsec; then
  stamp "bench-ipsec: the CPU graph, the bare library and IPsecOutbound offloaded (the device's ESP kernels)"
  timeout ${IPSEC_TIMEOUT:-200} ./build-gpu/shoal bench-ipsec --device cuda --reps 3 \
    --suites aes128-gcm16 aes256-gcm16 aes128-ctr-hmac-sha1-96 --out "$OUT/bench-ipsec.json"
fi
if want ipsec-ab; then
  # IPsecOutbound's sealing split among threads (k::esp_seal_chunk) against
  # a thread per packet (SHOAL_ESP_SPLIT=0), in turn
  i=0
  for e in 0 1 0 1; do
    i=$((i + 1))
    stamp "bench-ipsec, SHOAL_ESP_SPLIT=$e"
    SHOAL_ESP_SPLIT=$e timeout ${IPSEC_TIMEOUT:-200} ./build-gpu/shoal bench-ipsec --device cuda --reps ${IPSEC_REPS:-3} \
      --suites ${IPSEC_SUITES:-aes128-gcm16 aes256-gcm16 aes128-ctr-hmac-sha1-96} ${IPSEC_ARGS:-} \
      --out "$OUT/bench-ipsec-split$e-$i.json" |
      grep -E '^(suite|aes| +device)'
  done
fi
if want esp-split; then
  # both gateways (IPsecOutbound, IPsecInbound) all on the device and all on
  # the CPU with many workers, the ESP transforms split among threads
  # (k::esp_seal_chunk, k::esp_open_chunk) against a thread per packet
  # (SHOAL_ESP_SPLIT=0), in turn
  i=0
  for e in 0 1 0 1; do
    i=$((i + 1))
    stamp "bench-scale --alb ipsec ipsec-in, SHOAL_ESP_SPLIT=$e"
    SHOAL_ESP_SPLIT=$e timeout ${ESP_SPLIT_TIMEOUT:-150} ./build-gpu/shoal bench-scale --alb --device cuda \
      --app ipsec ipsec-in --ipsec-suite ${ALB_IPSEC_SUITE:-gcm} --fraction 0 1 --threads ${ESP_SPLIT_THREADS:-16} \
      --sizes ${ESP_SPLIT_SIZES:-1400} --seconds 2 --out "$OUT/bench-esp-split$e-$i.json" | grep -E '^ipsec'
  done
fi
if want offload; then
  stamp "bench offload"
  ./build-gpu/shoal bench --out "$OUT/bench-offload.json" --reps 3 --threads 1 \
    --case router router6 router-snap router-snap-noslice router-nba --batch 64 256 1024 4096 16384
fi
if want lpm; then
  stamp "bench lpm-device"
  ./build-gpu/shoal bench --out "$OUT/bench-lpm-device.json" --case lpm-device --seconds 1 --lookup-chunk 1024 16384 262144 1048576
fi
if want core; then
  stamp "bench core"
  ./build-gpu/shoal bench --out "$OUT/bench-core.json" --reps 3 --threads 1 4 --case forward router router-snap
fi
if want flow; then
  stamp "bench-flow (the device flow table against the CPU table)"
  timeout 90 ./build-gpu/shoal bench-flow --device cuda --router false --out "$OUT/bench-flow.json"
fi
if want schedule; then
  stamp "GASPP packet scheduling: IDSMatcher offloaded over IMIX, with and without --offload-schedule"
  timeout 90 bench/gpu/schedule.sh ./build-gpu/shoal "$OUT/bench-schedule.json" cuda
fi
if want connections; then
  # the hardware work queues the CUDA driver spreads streams over (its default: 8)
  for c in ${CONNECTIONS:-8 32}; do
    stamp "bench-scale, 16 workers, CUDA_DEVICE_MAX_CONNECTIONS=$c"
    CUDA_DEVICE_MAX_CONNECTIONS=$c timeout 200 ./build-gpu/shoal bench-scale --device cuda --threads 16 \
      --sizes 512 1518 --app router ids-router ids --out "$OUT/bench-scale-conn$c.json"
  done
fi
if want zero-copy; then
  stamp "bench-scale: the router and the SDN forwarder copied and zero-copy (HostToDevice ZERO_COPY 256)"
  timeout 200 ./build-gpu/shoal bench-scale --device cuda --threads 1 16 --sizes 64 1518 \
    --app forward router sdn-forwarder --zero-copy 256 --out "$OUT/bench-scale-zc.json"
fi
if want persistent; then
  stamp "offload tests on CUDA with the persistent kernel (SHOAL_CUDA_PERSISTENT=1: every eligible aggregate on its ring)"
  SHOAL_CUDA_PERSISTENT=1 SHOAL_TEST_DEVICE=cuda timeout ${TESTS_TIMEOUT:-240} ./build-gpu/tests/shoal_unit --gtest_brief=1 \
    --gtest_filter='Roi*:Offload*:Datablocks*:IDSOffload*:SDNClassifier*:SnapApps*:SetIPDSCP*:IDSMatcher.*Offloaded:NfChain*' 2>&1 |
    grep -vE 'device failure|offloading stops'
  # aggregates issued by the driver and put on the persistent kernel's ring
  # (SHOAL_CUDA_PERSISTENT=blocks per multiprocessor), in turn, with the
  # runtime calls timed (the ring's own line: "ring"): the router and the
  # SDN forwarder zero-copy, the IDS router copied
  i=0
  for p in 0 ${PERSISTENT_BLOCKS:-1} 0 ${PERSISTENT_BLOCKS:-1}; do
    i=$((i + 1))
    stamp "bench-scale, SHOAL_CUDA_PERSISTENT=$p"
    SHOAL_CUDA_STATS=1 SHOAL_CUDA_PERSISTENT=$p timeout 200 ./build-gpu/shoal bench-scale --device cuda \
      --threads ${PERSISTENT_THREADS:-16} --sizes ${PERSISTENT_SIZES:-64 1518} \
      --app forward router sdn-forwarder ids-router --zero-copy 256 --seconds ${PERSISTENT_SECONDS:-2} \
      --out "$OUT/bench-scale-persistent$p-$i.json"
  done
fi
if want calls; then
  # where the workers' time goes in the CUDA runtime (SHOAL_CUDA_STATS=1: each
  # call's count, total and worst time, printed per row), and how much of a
  # short row is start-up
  for s in ${CALLS_SECONDS:-1 3}; do
    stamp "bench-scale with the CUDA runtime calls timed, $s s per row"
    SHOAL_CUDA_STATS=1 timeout 300 ./build-gpu/shoal bench-scale --device cuda --threads ${CALLS_THREADS:-1 16} \
      --sizes ${CALLS_SIZES:-64 1518} --app forward router ids-router ids --ids-chunk 128 --seconds "$s" \
      --out "$OUT/bench-scale-calls-$s.json"
  done
fi
if want fuse-split; then
  # the Snap DPI and IDS routers with their chunked scan launched apart
  # (SHOAL_CUDA_FUSE_SPLIT=0) and fused with the steps around it, in turn
  i=0
  for f in 0 1 0 1; do
    i=$((i + 1))
    stamp "bench-scale, SHOAL_CUDA_FUSE_SPLIT=$f"
    SHOAL_CUDA_FUSE_SPLIT=$f timeout 200 ./build-gpu/shoal bench-scale --device cuda --threads ${FUSE_THREADS:-1 16} \
      --sizes ${FUSE_SIZES:-512 1518} --app forward dpi-router ids-router --seconds ${FUSE_SECONDS:-2} \
      --out "$OUT/bench-scale-fuse$f-$i.json" | grep -E '^(forward|dpi-router|ids-router) '
  done
fi
if want alb; then
  # NBA's evaluation: fixed splits against the adaptive balancer (and its latency bound)
  stamp "bench-scale --alb"
  # (ALB_APPS: router sdn-forwarder ids ipsec ipsec-in; the IPsec gateways in NBA's suite, ALB_IPSEC_SUITE=gcm for GCM;
  # rows alb-own: a climber per worker, against the default's one for all, ALB_PER_WORKER= to leave them out)
  timeout ${ALB_TIMEOUT:-420} ./build-gpu/shoal bench-scale --alb --device cuda --threads ${ALB_THREADS:-16} \
    --app ${ALB_APPS:-router sdn-forwarder ids ipsec} --ipsec-suite ${ALB_IPSEC_SUITE:-ctr-sha1} \
    --sizes ${ALB_SIZES:-64 1518} --seconds ${ALB_SECONDS:-3} --alb-latency ${ALB_LATENCY:-500} \
    ${ALB_PER_WORKER---alb-per-worker} --out "$OUT/bench-alb.json"
fi
if want ab; then
  # the same rows from a baseline build (AB_BASE, e.g. the last commit's
  # program carried as build-gpu/base/shoal) and from this one, in turn, so
  # a change is measured against what it replaces on one machine
  i=0
  for side in base this base this; do
    i=$((i + 1))
    bin=./build-gpu/shoal
    [ "$side" = base ] && bin=${AB_BASE:-build-gpu/base/shoal}
    [ -x "$bin" ] || { echo "no $bin"; continue; }
    stamp "bench-scale, $side ($bin)"
    timeout ${AB_TIMEOUT:-120} "$bin" bench-scale --device cuda --threads ${AB_THREADS:-16} --sizes ${AB_SIZES:-64 1518} \
      --app ${AB_APPS:-router sdn-forwarder ids-router ids} --ids-chunk 64 --seconds ${AB_SECONDS:-1} \
      --out "$OUT/bench-scale-$side-$i.json" | grep -vE '^(app|shoal bench-scale) '
  done
fi
if want signal; then
  # zero-copy aggregates whose last kernel marks them done (no event, no
  # driver call to poll) against events (SHOAL_CUDA_SIGNAL=0), in turn
  i=0
  for sig in 0 1 0 1; do
    i=$((i + 1))
    stamp "bench-scale, zero-copy, SHOAL_CUDA_SIGNAL=$sig"
    SHOAL_CUDA_SIGNAL=$sig timeout ${SIGNAL_TIMEOUT:-90} ./build-gpu/shoal bench-scale --device cuda \
      --threads ${SIGNAL_THREADS:-16} --sizes ${SIGNAL_SIZES:-64 1518} --app ${SIGNAL_APPS:-router sdn-forwarder ids-router} \
      --zero-copy ${SIGNAL_ZC:-2048} --seconds ${SIGNAL_SECONDS:-1} --out "$OUT/bench-scale-signal$sig-$i.json" |
      grep -vE '^(app|shoal bench-scale) '
  done
fi
if want scale-batch; then
  stamp "bench-scale at aggregates of 4096 (the per-aggregate cost against the per-packet one)"
  timeout ${SCALE_TIMEOUT:-400} ./build-gpu/shoal bench-scale --device cuda --threads 16 --sizes 64 1518 \
    --app forward router ids-router ids --batch 4096 --out "$OUT/bench-scale-4096.json"
fi
stamp done

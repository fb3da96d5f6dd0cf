#!/usr/bin/env bash
# One call on the GPU machine: build for sm_90, run the GPU tests and the
# benchmarks, write everything under $OUT. Carry .debs (bench/gpu/fetch-debs.sh).
#   device run: bash bench/gpu/run.sh        (carry: [".debs"])
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/shoal-gpu-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
SYS=/tmp/shoal-sysroot
if [ -d .debs ]; then
  mkdir -p $SYS
  for d in .debs/*.deb; do dpkg -x "$d" $SYS; done
  export CMAKE_PREFIX_PATH=$SYS/usr PKG_CONFIG_PATH=$SYS/usr/lib/x86_64-linux-gnu/pkgconfig:$SYS/usr/share/pkgconfig
  export LD_LIBRARY_PATH=$SYS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  export PATH=$SYS/usr/bin:$PATH
  # Debian's .pc files name /usr; point them at the sysroot.
  sed -i "s|^prefix=/usr|prefix=$SYS/usr|" $SYS/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc 2>/dev/null || true
fi
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSHOAL_FUZZ=OFF \
  -DCMAKE_INCLUDE_PATH=$SYS/usr/include -DCMAKE_LIBRARY_PATH=$SYS/usr/lib/x86_64-linux-gnu || exit 1
cmake --build build-gpu -j "$(nproc)" || exit 1
./build-gpu/shoal version | tee "$OUT/version.txt"
echo "== GPU tests"
ctest --test-dir build-gpu -L gpu --output-on-failure | tee "$OUT/gpu-tests.txt"
echo "== offload tests on the CUDA backend (the same tests CI runs on the host backend)"
SHOAL_TEST_DEVICE=cuda ./build-gpu/tests/shoal_unit --gtest_filter='Roi*:Offload*:Datablocks*:IDSOffload*:SDNClassifier*' 2>&1 | tail -n 30 | tee "$OUT/offload-cuda-tests.txt"
echo "== full test suite on the GPU machine"
ctest --test-dir build-gpu -j 8 --output-on-failure -LE slow | tail -n 5 | tee "$OUT/tests.txt"
echo "== benchmarks"
./build-gpu/shoal bench --out "$OUT/bench-lpm-device.json" --case lpm-device --seconds 1 --lookup-chunk 1024 16384 262144 1048576
./build-gpu/shoal bench --out "$OUT/bench-offload.json" --reps 3 --threads 1 \
  --case router router6 router-snap router-snap-noslice router-nba --batch 64 256 1024 4096 16384
./build-gpu/shoal bench --out "$OUT/bench-core.json" --reps 5 --threads 1 2 4 8
./build-gpu/shoal bench-ids --out "$OUT/bench-ids.json" --seconds 0.3
./build-gpu/shoal bench-classify --out "$OUT/bench-classify.json" --seconds 0.3

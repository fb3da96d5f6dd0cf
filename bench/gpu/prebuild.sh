#!/usr/bin/env bash
# Run here: builds the programs for the GPU machine (sm_90, release) in
# build-gpu/ and fetches the Debian run-time libraries they need into .debs/
# (ignored by git), so a lease is spent measuring, not compiling:
#   bash bench/gpu/prebuild.sh
#   device run: PREBUILT=1 bash bench/gpu/run.sh
#     (SHOAL_BUILT_IN=$PWD of this checkout when it is not /work/main)
#     carry: [".debs", "build-gpu/shoal", "build-gpu/tests/shoal_unit", "build-gpu/tests/shoal_gpu_test"]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHOAL_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSHOAL_FUZZ=OFF >/dev/null
ninja -C build-gpu shoal shoal_unit shoal_gpu_test
strip build-gpu/shoal build-gpu/tests/shoal_unit build-gpu/tests/shoal_gpu_test
mkdir -p .debs
cd .debs
# the libraries build-gpu/shoal links (ldd), as Debian 12 ships them
apt-get download libpcap0.8 libhyperscan5 libpcre2-8-0 libhtp2 libfmt9 libyaml-0-2 libssl3 libdbus-1-3 zlib1g \
  libipsec-mb1 libcpp-httplib0.11 libbrotli1 libsystemd0 libcap2 libgcrypt20 liblzma5 libzstd1 liblz4-1 libgpg-error0 \
  libxdp1 libbpf1 libelf1 libbsd0 libmd0 libnuma1 libfdt1 librte-eal23 librte-ethdev23 librte-kvargs23 librte-mbuf23 \
  librte-mempool23 librte-meter23 librte-net23 librte-ring23 librte-telemetry23 2>&1 | { grep -v '^W:' || true; } | tail -n 1

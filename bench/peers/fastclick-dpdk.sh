#!/usr/bin/env bash
# Builds FastClick with DPDK (userlevel, batching, the flow subsystem) from
# the tarball in ../shared/anchors/fastclick, for the peer comparisons that
# need DPDK's elements (bench/peers/flow.sh: FlowIPManager_DPDK, whose table
# is DPDK's rte_hash). Debian's libdpdk-dev (22.11, scripts/install-deps.sh)
# is the DPDK. Three things FastClick's build does not do on Debian, done here:
#   - configure reads DPDK's version from rte_build_config.h beside
#     rte_version.h, where Debian's multiarch layout has no such file (it is
#     under /usr/include/<triplet>/dpdk), so the dpdk17/18/19 provisions its
#     flow managers require were missing: configure is pointed at it;
#   - FlowIPManager_CuckooPP needs a patched DPDK (rte_hash_bloom_*): its
#     sources are left out;
#   - DPDK's static link line names -lsystemd, whose development symlink
#     Debian puts in libsystemd-dev: a symlink to the runtime library in a
#     private folder stands in.
# Usage: fastclick-dpdk.sh [DEST]   (default /tmp/fastclick-dpdk); about 6
# minutes on 2 cores; prints the path of click.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
anchor=${FASTCLICK_ANCHOR:-$here/../../../shared/anchors/fastclick}
dest=${1:-/tmp/fastclick-dpdk}
if [ -x "$dest/userlevel/click" ]; then echo "$dest/userlevel/click"; exit 0; fi
tarball=$(find "$anchor" -maxdepth 1 -name "fastclick-*.tar.xz" 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "fastclick-dpdk: no FastClick tarball in $anchor" >&2; exit 77; }
pkg-config --exists libdpdk || { echo "fastclick-dpdk: DPDK is not installed (scripts/install-deps.sh)" >&2; exit 77; }
rm -rf "$dest" && mkdir -p "$dest/.libs"
tar -xJf "$tarball" -C "$dest" --strip-components=1
cd "$dest"
rm -f elements/flow/flowipmanager_cuckoopp.cc elements/flow/flowipmanager_cuckoopp.hh
cfg_h=$(find /usr/include "$(pkg-config --variable=includedir libdpdk)" -name rte_build_config.h 2>/dev/null | head -n 1)
[ -n "$cfg_h" ] || { echo "fastclick-dpdk: DPDK's rte_build_config.h is not installed" >&2; exit 77; }
sed -i "s|\"\$RTE_INCLUDE/rte_build_config.h\"|\"$cfg_h\"|g" configure
lib=$(find /lib /usr/lib -name libsystemd.so.0 2>/dev/null | head -n 1)
[ -n "$lib" ] && ln -sf "$lib" "$dest/.libs/libsystemd.so"
./configure CFLAGS=-O3 CXXFLAGS="-std=c++17 -O3" LDFLAGS="-L$dest/.libs" --enable-userlevel --disable-linuxmodule \
  --enable-batch --enable-flow --enable-dpdk --disable-dynamic-linking --enable-bound-port-transfer \
  --disable-task-stats --disable-cpu-load >"$dest/configure.out" 2>&1 || { tail -n 30 "$dest/configure.out" >&2; exit 1; }
grep -q "DPDK   Version: *[0-9]" configure.out || { echo "fastclick-dpdk: configure did not read DPDK's version" >&2; exit 1; }
make -j"$(nproc)" >"$dest/make.out" 2>&1 || { tail -n 30 "$dest/make.out" >&2; exit 1; }
grep -q FlowIPManager_DPDK userlevel/elements.conf || { echo "fastclick-dpdk: FlowIPManager_DPDK was not built" >&2; exit 1; }
echo "$dest/userlevel/click"

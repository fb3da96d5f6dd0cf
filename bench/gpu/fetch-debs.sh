#!/usr/bin/env bash
# Run here (not on the GPU machine): downloads the Debian packages the build
# needs into .debs/ (ignored by git), so `device run --carry .debs` brings them
# to the GPU machine, which has no package registry.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .debs
# .debs/ is in .gitignore
cd .debs
apt-get download libpcap0.8 libpcap0.8-dev libpcap-dev libdbus-1-3 libfmt9 libfmt-dev nlohmann-json3-dev libcli11-dev \
  libgtest-dev googletest ninja-build libhyperscan5 libhyperscan-dev libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 \
  libpcre2-posix3 pkgconf pkgconf-bin libpkgconf3 pkg-config libdbus-1-dev 2>&1 | tail -n 2
ls -1 | wc -l

#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test Shoal.
# Idempotent and quiet when everything is already there.
set -euo pipefail

PKGS=(g++ cmake ninja-build pkg-config make
      libpcap-dev zlib1g-dev libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev libbenchmark-dev
      libhyperscan-dev libpcre2-dev libhtp-dev libssl-dev libyaml-dev libipsec-mb-dev libcpp-httplib-dev libxdp-dev libbpf-dev libdpdk-dev
      clang libclang-rt-14-dev clang-format clang-tidy
      tshark tcpdump python3-scapy python3-cryptography python3-matplotlib python3-yaml python3-prometheus-client libndpi-bin netcat-openbsd
      dpkg-dev file chromium
      iproute2 iputils-ping traceroute iperf3 ethtool nftables)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "install-deps: missing packages: ${missing[*]}; run as root or install them" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: nvcc not found: the CUDA backend will not be built (everything else will)"
fi

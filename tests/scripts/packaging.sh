#!/usr/bin/env bash
# Packaging: `cmake --install` lays out the command, examples, docs and the
# systemd unit; the installed command reports its commit and features; the
# unit passes systemd-analyze; `cpack -G DEB` makes a .deb whose contents and
# dependencies are checked with dpkg-deb. Usage: packaging.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/usr" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
for f in usr/bin/shoal usr/lib/systemd/system/shoal@.service usr/share/doc/shoal/README.md \
         usr/share/doc/shoal/elements.md usr/share/shoal/examples/forward.click usr/share/shoal/service-example.click; do
  [ -e "$tmp/$f" ] || fail "cmake --install did not install $f"
done
"$tmp/usr/bin/shoal" version >"$tmp/version.txt" || fail "the installed shoal does not run"
grep -Eq '^shoal [0-9.]+ \(commit [0-9a-f]{7,}(-dirty)?\)$' "$tmp/version.txt" || { cat "$tmp/version.txt"; fail "shoal version names no commit"; }
grep -q '^built with: CUDA ' "$tmp/version.txt" || fail "shoal version does not say what is built in"
"$tmp/usr/bin/shoal" --version | grep -q "DPDK" || fail "shoal --version does not say what is built in"
"$tmp/usr/bin/shoal" check "$tmp/usr/share/shoal/service-example.click" >/dev/null 2>&1 ||
  "$tmp/usr/bin/shoal" check "$tmp/usr/share/shoal/service-example.click" 2>&1 | grep -q "eth0" ||
  fail "the sample configuration does not parse"

if command -v systemd-analyze >/dev/null; then
  sed "s|/usr/bin/shoal|$tmp/usr/bin/shoal|" "$tmp/usr/lib/systemd/system/shoal@.service" >"$tmp/shoal@.service"
  if ! out=$(systemd-analyze verify "$tmp/shoal@.service" 2>&1); then
    echo "$out"; fail "systemd-analyze verify"
  fi
  [ -z "$(echo "$out" | grep -v 'Failed to load\|skipping' || true)" ] || { echo "$out"; fail "systemd-analyze warns"; }
else
  echo "skipped: systemd-analyze is not installed (unit not verified)"
fi

if command -v dpkg-deb >/dev/null && command -v dpkg-shlibdeps >/dev/null; then
  (cd "$tmp" && cpack -G DEB -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip --config "$build/CPackConfig.cmake" \
     -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
  deb=$(ls "$tmp"/pkg/*.deb | head -1)
  [ -f "$deb" ] || fail "no .deb made"
  dpkg-deb -c "$deb" >"$tmp/contents.txt"
  for f in ./usr/bin/shoal ./usr/lib/systemd/system/shoal@.service ./usr/share/shoal/examples/forward.click; do
    grep -q " $f\$" "$tmp/contents.txt" || fail ".deb lacks $f"
  done
  deps=$(dpkg-deb -f "$deb" Depends)
  for lib in libpcap0.8 libhyperscan5 libcpp-httplib; do
    echo "$deps" | grep -q "$lib" || fail ".deb Depends lacks $lib: $deps"
  done
  echo "packaging: $(basename "$deb"), Depends: $deps"
else
  echo "skipped: dpkg-deb or dpkg-shlibdeps is not installed (.deb not built)"
fi
echo "packaging: ok"

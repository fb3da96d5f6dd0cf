#!/usr/bin/env bash
# Static checks: clang-format (the layout is the .clang-format one) and
# clang-tidy (.clang-tidy: bugprone and performance checks, warnings as
# errors). Usage: lint.sh BUILD_DIR [FILE...]; BUILD_DIR must hold
# compile_commands.json. With FILEs, each is checked on its own with
# BUILD_DIR's flags. With none, every .cc of src/ and tools/ is checked in
# unity translation units (BUILD_DIR-lint, configured here with
# -DCMAKE_UNITY_BUILD=ON, not built): the system and library headers that
# the checks' matchers walk are then walked once for a few sources instead
# of once a source, which takes clang-tidy over the tree from about 7
# minutes to 1 on 2 cores. Each source is checked the same (the header
# filter reports what is found in the included .cc files); a source that no
# unity unit includes is checked on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
shift
[ -f "$build/compile_commands.json" ] || { echo "lint: no $build/compile_commands.json (build first)" >&2; exit 1; }
mapfile -t fmt_files < <(git ls-files 'src/*.cc' 'src/*.hh' 'src/*.cu' 'src/*.cuh' 'tools/*.cc' 'tools/*.hh' \
  'tests/*.cc' 'tests/*.hh')
echo "== clang-format: ${#fmt_files[@]} files"
clang-format --dry-run --Werror "${fmt_files[@]}"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The sources' directories, as a header filter and as the units' contents.
filter="^$PWD/(src/shoal|tools)/"
# GCC's warning flags in the compile commands (-Wno-subobject-linkage) are
# not clang's.
tidy_args=(-quiet -extra-arg=-Wno-unknown-warning-option "-header-filter=$filter")
if [ $# -gt 0 ]; then
  db=$build
  files=("$@")
else
  db=$build-lint
  cmake -S . -B "$db" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DSHOAL_CUDA=OFF \
    -DSHOAL_TESTS=OFF >"$db.configure.log" 2>&1 || { cat "$db.configure.log"; exit 1; }
  # The headers the sources include that the build generates (each edge's
  # own command: building the targets would build their dependencies).
  for edge in CMakeFiles/shoal_commit generated/shoal_dashboard.hh; do
    sh -c "$(ninja -C "$db" -t commands -s "$edge")" >/dev/null
  done
  mapfile -t units < <(ls "$db"/CMakeFiles/*/Unity/unity_*_cxx.cxx)
  mapfile -t sources < <(git ls-files 'src/*.cc' 'tools/*.cc')
  files=("${units[@]}")
  included=$(cat "${units[@]}" | sed -n 's/^#include "\(.*\)"$/\1/p')
  for s in "${sources[@]}"; do
    grep -qxF "$PWD/$s" <<<"$included" || files+=("$PWD/$s")
  done
  # A unit's #include of .cc files is the point of it.
  tidy_args+=(-checks=-bugprone-suspicious-include)
fi
echo "== clang-tidy: ${#files[@]} units"
if ! run-clang-tidy -p "$db" -j "$(nproc)" "${tidy_args[@]}" "${files[@]}" >"$log" 2>&1; then
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '(warning|error): ' | sort -u || tail -n 40 "$log"
  echo "lint: clang-tidy found problems (see above)" >&2
  exit 1
fi
echo "lint: clean"

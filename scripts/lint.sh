#!/usr/bin/env bash
# Static checks: clang-format (the layout is the .clang-format one) and
# clang-tidy (.clang-tidy: bugprone and performance checks, warnings as
# errors). Usage: lint.sh BUILD_DIR [FILE...]; with no FILE every .cc of
# src/ and tools/ is checked (about 2 minutes on 2 cores). BUILD_DIR must
# hold compile_commands.json.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
shift
[ -f "$build/compile_commands.json" ] || { echo "lint: no $build/compile_commands.json (build first)" >&2; exit 1; }
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'src/*.cc' 'tools/*.cc')
fi
mapfile -t fmt_files < <(git ls-files 'src/*.cc' 'src/*.hh' 'src/*.cu' 'src/*.cuh' 'tools/*.cc' 'tools/*.hh' \
  'tests/*.cc' 'tests/*.hh')
echo "== clang-format: ${#fmt_files[@]} files"
clang-format --dry-run --Werror "${fmt_files[@]}"
echo "== clang-tidy: ${#files[@]} files"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! run-clang-tidy -p "$build" -j "$(nproc)" -quiet "${files[@]}" >"$log" 2>&1; then
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '(warning|error): ' | sort -u
  echo "lint: clang-tidy found problems (see above)" >&2
  exit 1
fi
echo "lint: clean"

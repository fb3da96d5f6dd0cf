#!/usr/bin/env bash
# Runs a GoogleTest binary as nproc shards at once (GTEST_TOTAL_SHARDS), one
# process a core; prints each shard's summary and, for a shard that fails,
# its whole log. Usage: gtest-shards.sh BINARY [GTEST ARGS...]
set -uo pipefail
bin=$1
shift
n=$(nproc)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pids=()
for ((i = 0; i < n; i++)); do
  GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i "$bin" "$@" >"$dir/$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < n; i++)); do
  if wait "${pids[$i]}"; then
    echo "shard $((i + 1))/$n: $(grep -E '^\[  PASSED  \]' "$dir/$i.log" || echo 'no summary')"
  else
    cat "$dir/$i.log"
    echo "shard $((i + 1))/$n failed"
    status=1
  fi
done
exit $status

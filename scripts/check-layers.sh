#!/usr/bin/env bash
# Lists each src/shoal/ folder's includes against the layers it may use.
# Usage: check-layers.sh TABLE SRC_SHOAL_DIR
# TABLE (written by CMake from CMakeLists.txt) has one line per layer:
#   "layer: seen-layer seen-layer ...". Exits 1 on an include of a layer the
# including file's layer may not see, or on a folder that is no layer.
set -euo pipefail
table=$1 src=$2
declare -A sees
while IFS=: read -r layer seen; do
  [ -n "$layer" ] && sees[$layer]=" $seen "
done <"$table"
bad=0
for dir in "$src"/*/; do
  layer=$(basename "$dir")
  if [ -z "${sees[$layer]:-}" ]; then
    echo "check-layers: src/shoal/$layer/ is not a layer (add it to SHOAL_LAYERS in CMakeLists.txt)" >&2
    bad=1
    continue
  fi
  while IFS= read -r hit; do
    file=${hit%%:*} rest=${hit#*:} line=${rest%%:*}
    target=$(sed -E 's/.*#include "shoal\/([a-z0-9_]+)\/.*/\1/' <<<"$rest")
    case "${sees[$layer]}" in
      *" $target "*) ;;
      *) echo "check-layers: ${file#"$src"/}:$line: layer '$layer' includes '$target' (it may use:${sees[$layer]% })" >&2
         bad=1 ;;
    esac
  done < <(grep -rnE '^\s*#\s*include "shoal/[a-z0-9_]+/' "$dir" || true)
done
if [ $bad -ne 0 ]; then
  echo "check-layers: an include goes up or sideways; move the code to the layer it belongs in" >&2
  exit 1
fi

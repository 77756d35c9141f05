#!/usr/bin/env bash
# Configures and builds dpgnn into $DPGNN_BUILD_DIR (default build/). Extra arguments go
# to `cmake --build` (e.g. --target dpgnn).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
jobs="$(nproc)"
if [ ! -f "$DPGNN_BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$DPGNN_BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$DPGNN_BUILD_DIR" -j"$jobs" "$@"

#!/usr/bin/env bash
# Configures and builds dpgnn into $DPGNN_BUILD_DIR (default build/). Extra arguments go
# to `cmake --build` (e.g. --target dpgnn).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
# The machine's processors (GNU nproc alone honours OMP_NUM_THREADS, which env.sh sets to 1),
# at most one job per 2 GB of memory (a LibTorch-heavy file takes about 1.5 GB to compile).
cores="$(nproc --all)"
mem_jobs="$(awk '/MemTotal/ {print int($2 / 2097152)}' /proc/meminfo)"
jobs="${DPGNN_BUILD_JOBS:-$(( cores < mem_jobs ? cores : mem_jobs ))}"
[ "$jobs" -ge 1 ] || jobs=1
if [ ! -f "$DPGNN_BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$DPGNN_BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$DPGNN_BUILD_DIR" -j"$jobs" "$@"

#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest: unit tests and the
# MPI tests (mpiexec -n 1/2/4). Tests that need a GPU skip with a message on CPU machines.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
source scripts/env.sh
scripts/build.sh
ctest --test-dir "$DPGNN_BUILD_DIR" --output-on-failure -j"$(nproc --all)" "$@"

#!/usr/bin/env bash
# The main job on the embedded default: generate a synthetic graph (`dpgnn synth`), check
# it (`dpgnn info`), partition it into 2 parts, and train DRW with differential privacy on
# 2 MPI ranks, printing the test accuracy and the privacy spent. Data go to data/, the run to
# runs/ (as for every config).
# Installs what is missing and builds first.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
source scripts/env.sh
scripts/build.sh --target dpgnn
DPGNN="$DPGNN_BUILD_DIR/src/cli/dpgnn"
RUN="${RUN_DIR:-runs/default-$(date +%Y%m%d-%H%M%S)}"
mkdir -p runs
# data.prepare of the config: the synthetic graph and its 2-part partition, skipped when they
# exist and verify.
"$DPGNN" prepare --config configs/default.yaml
"$DPGNN" info data/synth.h5

mpiexec -n 2 --oversubscribe "$DPGNN" train --config configs/default.yaml --out "$RUN"
echo
echo "summary ($RUN/summary.json):"
cat "$RUN/summary.json"

#!/usr/bin/env bash
# The main job on the embedded default: generate a synthetic graph (`dpgnn synth`), check
# it (`dpgnn info`), partition it into 2 parts, and train DRW with differential privacy on
# 2 MPI ranks, printing the test accuracy and the privacy spent. Outputs go to out/.
# Installs what is missing and builds first.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
source scripts/env.sh
scripts/build.sh --target dpgnn
DPGNN="$DPGNN_BUILD_DIR/src/cli/dpgnn"
DATA=out/data
RUN="${RUN_DIR:-out/runs/default-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$DATA" out/runs

if [ ! -f "$DATA/synth.h5" ]; then
  "$DPGNN" synth --nodes 20000 --avg-degree 20 --classes 8 --features 64 --homophily 0.8 --seed 1 \
    --out "$DATA/synth.h5"
fi
"$DPGNN" info "$DATA/synth.h5"
if [ ! -f "$DATA/synth.part2.h5" ]; then
  "$DPGNN" partition --dataset "$DATA/synth.h5" --parts 2 --method metis --seed 1 --out "$DATA/synth.part2.h5"
fi

mpiexec -n 2 --oversubscribe "$DPGNN" train --config configs/default.yaml --out "$RUN"
echo
echo "summary ($RUN/summary.json):"
cat "$RUN/summary.json"

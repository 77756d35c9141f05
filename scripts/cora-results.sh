#!/usr/bin/env bash
# Reproduces the random-walk paper's Cora rows (Ayle et al. 2022, Table 1): imports Cora
# (Planetoid split) from ../shared/data, partitions it into 2 parts, and trains the paper's
# setups, configs/cora/paper/<method>.yaml (DRW: width 512, batch 46, noise multiplier 4 until
# epsilon 8 at delta 1e-5; the non-private GCN), on 2 MPI ranks for several seeds, printing one
# line per run and the means (docs/results.md, "Cora, 2 ranks").
#   scripts/cora-results.sh [SEEDS...]     (default seeds: 1 2 3 4 5)
#   METHODS="drw drw-r drw-d dpgnn gcn mlp" scripts/cora-results.sh   (any of configs/cora/paper/)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
DPGNN="$DPGNN_BUILD_DIR/src/cli/dpgnn"
mkdir -p runs/cora-results
for method in ${METHODS:-drw gcn}; do
  [ -f "configs/cora/paper/$method.yaml" ] || { echo "cora-results.sh: no configs/cora/paper/$method.yaml" >&2; exit 2; }
  # data/cora-planetoid.h5 and its METIS (or, for dpgnn, random) partition; kept when they verify.
  "$DPGNN" prepare --config "configs/cora/paper/$method.yaml"
done
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4 5)
for method in ${METHODS:-drw gcn}; do
  accs=()
  for s in "${seeds[@]}"; do
    run="runs/cora-results/cora-$method-seed$s-$(date +%s)"
    mpiexec -n 2 --oversubscribe "$DPGNN" train --config "configs/cora/paper/$method.yaml" --set train.seed="$s" \
      --out "$run" > "$run.log" 2>&1
    line=$(/usr/bin/python3 -c "import json; d=json.load(open('$run/summary.json')); e=d['epsilon']; print(f\"{d['test_accuracy']:.4f} {'-' if e is None else format(e, '.3f')} {d['steps']}\")")
    echo "cora $method seed $s: test accuracy, epsilon, steps = $line"
    accs+=("${line%% *}")
  done
  /usr/bin/python3 -c "import sys, statistics as st; a=[float(x) for x in sys.argv[1:]]; print(f'cora $method: mean test accuracy {st.mean(a):.4f} (min {min(a):.4f}, max {max(a):.4f}, {len(a)} seeds)')" "${accs[@]}"
done

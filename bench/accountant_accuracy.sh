#!/usr/bin/env bash
# What the PLD accountant buys: DRW trained to the same epsilon under `privacy.accountant: pld`
# and `rdp`, on Cora, Cora-ML and Coauthor CS, at epsilon 1 and 8, three seeds each. The config
# holds only `method: drw`, `data` and `privacy.target_epsilon` (everything else is the method's
# default), so the accountant is the only difference between the paired runs: it sets the
# calibrated noise multiplier, and the accuracy follows from it.
# Prints one markdown row per (dataset, epsilon, accountant): the noise multiplier, the three
# test accuracies and their mean, and the epsilon `dpgnn privacy --ledger` rebuilds from each
# run's ledger (the largest of the three). Results: docs/results.md, "PLD against RDP".
#
#   bench/accountant_accuracy.sh [BUILD_DIR] [WORKDIR]
#     BUILD_DIR  default build (needs src/cli/dpgnn)
#     WORKDIR    imported datasets and runs; default /tmp/dpgnn-accountant-accuracy
#   Environment: DATASETS ["cora cora-ml coauthor-cs"], EPSILONS ["1 8"], SEEDS ["1 2 3"],
#   RANKS [2], SHARED [../shared/data relative to the repository].
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BUILD=$(realpath "${1:-$REPO/build}")
WORK=${2:-/tmp/dpgnn-accountant-accuracy}
BIN=${DPGNN_BIN:-$BUILD/src/cli/dpgnn}
SHARED=${SHARED:-$REPO/../shared/data}
DATASETS=${DATASETS:-cora cora-ml coauthor-cs}
EPSILONS=${EPSILONS:-1 8}
SEEDS=${SEEDS:-1 2 3}
RANKS=${RANKS:-2}
mkdir -p "$WORK/runs"
source "$REPO/scripts/env.sh"  # mpirun as root in containers, library paths
export OMP_NUM_THREADS=1

import() {  # dataset -> $WORK/<dataset>.h5 and its METIS partition
  local name=$1 h5="$WORK/$1.h5"
  if [[ ! -f $h5 ]]; then
    case $name in
      cora) "$BIN" import planetoid --dir "$SHARED/cora/planetoid" --name cora --out "$h5" ;;
      cora-ml) "$BIN" import npz --file "$SHARED/cora-ml/cora_ml.npz" --out "$h5" ;;
      coauthor-cs) "$BIN" import npz --file "$SHARED/coauthor-cs/coauthor_cs.npz" --out "$h5" ;;
      *) echo "accountant_accuracy.sh: no import rule for dataset '$name'" >&2; exit 2 ;;
    esac >/dev/null
  fi
  [[ -f "$WORK/$name.metis$RANKS.h5" ]] ||
    "$BIN" partition --dataset "$h5" --parts "$RANKS" --seed 1 --out "$WORK/$name.metis$RANKS.h5" >/dev/null
}

echo "| dataset | epsilon | accountant | noise multiplier | test accuracy (seeds ${SEEDS// /, }) | mean | epsilon by --ledger (max) |"
echo "|---|---|---|---|---|---|---|"
for ds in $DATASETS; do
  import "$ds"
  cfg="$WORK/$ds.drw.yaml"
  printf 'method: drw\ndata: {dataset: %s, partition: %s}\nprivacy: {target_epsilon: 8}\n' \
    "$WORK/$ds.h5" "$WORK/$ds.metis$RANKS.h5" > "$cfg"
  for eps in $EPSILONS; do
    for acc in pld rdp; do
      accs=() z="" worst=0
      for seed in $SEEDS; do
        run="$WORK/runs/$ds-e$eps-$acc-s$seed"
        rm -rf "$run"
        mpirun --oversubscribe -n "$RANKS" "$BIN" train --config "$cfg" \
          --set privacy.target_epsilon="$eps" --set privacy.accountant="$acc" \
          --set train.seed="$seed" --out "$run" > "$run.log" 2>&1 ||
          { echo "run $run failed; see $run.log" >&2; exit 1; }
        read -r z a < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(s["noise_multiplier"], s["test_accuracy"])' "$run/summary.json")
        accs+=("$(printf '%.3f' "$a")")
        e=$("$BIN" privacy --ledger "$run/ledger.jsonl" --json |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["epsilon"])')
        worst=$(python3 -c "print(max($worst, $e))")
      done
      mean=$(python3 -c "import sys; a=[float(x) for x in sys.argv[1:]]; print(f'{sum(a)/len(a):.3f}')" "${accs[@]}")
      printf '| %s | %s | %s | %.4g | %s | %s | %.4f |\n' "$ds" "$eps" "$acc" "$z" \
        "$(IFS=,; echo "${accs[*]}" | sed 's/,/, /g')" "$mean" "$worst"
    done
  done
done

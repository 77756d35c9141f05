#!/usr/bin/env bash
# Distributed partitioning at the users' scale (issue 23 items 1-2): Reddit- and
# ogbn-products-shaped graphs (bench/scale.sh's synth shapes), K = 8 parts, METIS on one
# process (P = 1) and PT-Scotch on P = 2 and 4 ranks. Per run: every rank's peak RSS (GNU time
# %M, one file per rank), wall time, and the edge cut recomputed independently (python3 +
# h5py) from the DATASET's CSR and the file's /partition/part_of (original id -> part), as a
# ratio to METIS's. Then DRW trains STEPS steps on 4 ranks on the PT-Scotch 4-rank file and
# must write summary.json. Results: docs/benchmarks.md ("Distributed partitioning").
#
#   bench/partition_scale.sh [DPGNN_BINARY] [WORKDIR] [reddit|products|all] [RANKS...]
#     DPGNN_BINARY  default build/src/cli/dpgnn
#     WORKDIR       datasets (made once, reused), partitions, runs; default /tmp/dpgnn-partition-scale
#     RANKS         default: 1 2 4 (1 = METIS; it also serves as the edge-cut reference and is
#                   reused when its file exists)
#   STEPS=10 (training steps; 0 skips training), TRAIN_RANKS=4, PYTHON=/usr/bin/python3 in the environment.
#
# Needs /usr/bin/time (package `time`), mpiexec, python3-h5py and python3-numpy
# (scripts/install-deps.sh). The load average is printed before and after each run: the
# machine may be shared.
set -euo pipefail

BIN=$(realpath "${1:-build/src/cli/dpgnn}")
WORK=${2:-/tmp/dpgnn-partition-scale}
WHICH=${3:-all}
shift $(( $# > 3 ? 3 : $# )) || true
RANKS=("$@")
[ ${#RANKS[@]} -eq 0 ] && RANKS=(1 2 4)
STEPS=${STEPS:-10}
# Debian's python3 has h5py (python3-h5py); a pyenv or venv python first on PATH may not.
PYTHON=${PYTHON:-/usr/bin/python3}
TRAIN_RANKS=${TRAIN_RANKS:-4}
HERE=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=bench/user_shapes.sh
source "$(dirname "$0")/user_shapes.sh"
require_tools partition_scale.sh "$BIN"
mkdir -p "$WORK"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 DPGNN_PROGRESS=0

mpi() {
  local p=$1
  local cmd=(mpiexec -n "$p")
  [ "$(id -u)" = 0 ] && cmd+=(--allow-run-as-root)
  cmd+=(--oversubscribe --bind-to none)
  echo "${cmd[@]}"
}

# Edge cut of FILE's part_of on DATASET's CSR: undirected pairs {u, v}, u != v, counted once.
edge_cut() {
  "$PYTHON" - "$1" "$2" <<'EOF'
import sys, h5py, numpy as np
ds, part = sys.argv[1], sys.argv[2]
with h5py.File(ds, "r") as f:
    indptr = f["/graph/indptr"][:]
    indices = f["/graph/indices"][:].astype(np.int64)
with h5py.File(part, "r") as f:
    part_of = f["/partition/part_of"][:]
rows = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
lo, hi = np.minimum(rows, indices), np.maximum(rows, indices)
keep = lo != hi
pairs = np.unique(lo[keep] * (len(indptr) - 1) + hi[keep])
u, v = pairs // (len(indptr) - 1), pairs % (len(indptr) - 1)
print(int(np.count_nonzero(part_of[u] != part_of[v])), len(pairs))
EOF
}

partition() {
  local name=$1 p=$2 ds="$WORK/$1.h5"
  local out="$WORK/$name.p$p.k8.h5" log="$WORK/partition-$name-p$p.log"
  [ "$p" = 1 ] && out="$WORK/$name.metis8.h5"
  if [ "$p" = 1 ] && [ -f "$out" ]; then
    echo "# $name P=1: reusing $out" >&2
  else
    rm -f "$log".rank*
    echo "# $name P=$p: load before $(cut -d' ' -f1-3 /proc/loadavg)"
    local start end
    start=$(date +%s.%N)
    # shellcheck disable=SC2046
    $(mpi "$p") sh -c '/usr/bin/time -o "$0.rank${OMPI_COMM_WORLD_RANK:-0}" -f "rank ${OMPI_COMM_WORLD_RANK:-0} peak_rss_kb %M wall_s %e" "$@"' \
      "$log" "$BIN" partition --dataset "$ds" --parts 8 --seed 1 --force --out "$out" >"$log" 2>&1 ||
      { echo "partition_scale.sh: partition $name on $p ranks failed, see $log" >&2; tail -5 "$log" >&2; return 1; }
    end=$(date +%s.%N)
    echo "# $name P=$p: load after $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$name P=$p wall=$(awk -v a="$start" -v b="$end" "BEGIN{printf \"%.1f\", b - a}") s"
    cat "$log".rank* | sort -n -k2 | awk -v n="$name" -v p="$p" \
      '{printf "%s P=%s rank=%s peak_rss=%.2f GiB wall=%s s\n", n, p, $2, $4/1048576, $6}'
    grep -E "edge cut|balance|time " "$log" | sed "s/^/$name P=$p /"
  fi
  read -r cut pairs < <(edge_cut "$ds" "$out")
  echo "$name P=$p edge_cut=$cut of $pairs ($(awk -v c="$cut" -v n="$pairs" 'BEGIN{printf "%.2f", 100 * c / n}')%)"
  eval "CUT_${name}_$p=$cut"
}

train() {
  local name=$1 part=$2 run="$WORK/run-$1-scotch" log="$WORK/run-$1-scotch.log"
  rm -rf "$run"
  rm -f "$log".rank*
  # shellcheck disable=SC2046
  $(mpi "$TRAIN_RANKS") sh -c '/usr/bin/time -o "$0.rank${OMPI_COMM_WORLD_RANK:-0}" -f "rank ${OMPI_COMM_WORLD_RANK:-0} peak_rss_kb %M" "$@"' \
    "$log" "$BIN" train --config "$HERE/../configs/default.yaml" \
    --set device=cpu --set data.dataset="$WORK/$name.h5" --set method=drw --set data.partition="$part" \
    --set model.arch=gcn --set model.layers=2 --set model.hidden=256 --set model.activation=relu \
    --set sampler.walk_length=2 --set train.batch_size=10000 --set train.optimizer=adam --set train.lr=0.01 \
    --set privacy.target_epsilon=8 --set train.ema=0 --set privacy.clip_norm=1 --set train.max_steps="$STEPS" \
    --set train.eval_every="$STEPS" --set privacy.delta=1e-7 --set train.threads=1 \
    --out "$run" >"$log" 2>&1 || { echo "partition_scale.sh: training on $part failed, see $log" >&2; tail -5 "$log" >&2; return 1; }
  [ -f "$run/summary.json" ] || { echo "partition_scale.sh: $run/summary.json missing" >&2; return 1; }
  echo "$name train ranks=$TRAIN_RANKS steps=$STEPS on $(basename "$part"): summary.json written;" \
    "$("$PYTHON" -c "import json,sys; s=json.load(open(sys.argv[1])); print({k: s.get(k) for k in ('steps','epsilon','test_accuracy')})" "$run/summary.json")"
  cat "$log".rank* | sort -n -k2 | awk -v n="$name" '{printf "%s train rank=%s peak_rss=%.2f GiB\n", n, $2, $4/1048576}'
}

names=()
case "$WHICH" in
  reddit|products) names=("$WHICH") ;;
  all) names=(products reddit) ;;
  *) echo "partition_scale.sh: unknown graph '$WHICH' (reddit, products or all)" >&2; exit 2 ;;
esac
for n in "${names[@]}"; do
  if [ ! -f "$WORK/$n.h5" ]; then
    # shellcheck disable=SC2086
    /usr/bin/time -f "# synth $n: %e s, peak %M KB" "$BIN" synth ${SYNTH[$n]} --out "$WORK/$n.h5"
  fi
  # METIS first: it is the reference of the cut ratio.
  partition "$n" 1
  for p in "${RANKS[@]}"; do
    [ "$p" = 1 ] && continue
    partition "$n" "$p"
    ref="CUT_${n}_1"
    this="CUT_${n}_$p"
    echo "$n P=$p edge_cut_ratio_vs_metis=$(awk -v a="${!this}" -v b="${!ref}" 'BEGIN{printf "%.3f", a / b}')"
  done
  if [ "$STEPS" -gt 0 ] && [ -f "$WORK/$n.p4.k8.h5" ]; then train "$n" "$WORK/$n.p4.k8.h5"; fi
done

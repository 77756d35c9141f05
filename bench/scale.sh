#!/usr/bin/env bash
# End-to-end scale benchmark: Reddit- and ogbn-products-shaped graphs, trained with DRW on
# 1, 2 and 4 ranks, evaluation included. Prints one line per rank count and per rank:
# peak RSS (GNU time %M, per rank), sampling time, training throughput (step time) and
# evaluation time (full-neighbourhood inference, trainer log). Results: docs/benchmarks.md
# ("Scale").
#
#   bench/scale.sh [DPGNN_BINARY] [WORKDIR] [reddit|products|all] [RANKS...]
#     DPGNN_BINARY  default build/src/cli/dpgnn
#     WORKDIR       datasets and partitions (made once, reused when present), runs; default /tmp/dpgnn-scale
#     RANKS         default: 1 2 4
#   STEPS=20 EVAL_EVERY=10 BATCH=10000 in the environment change the run.
#   METHOD=dpar trains DPAR instead (node-level: a random 8-part partition, made once; the
#   method's defaults: every example in every step, BATCH is ignored; epsilon 1);
#   GRAPH_SAMPLING=q sets dpar.graph_sampling_rate (default 1: the whole training graph).
#   LABELS=f with METHOD=dpar releases the training labels too (dpar.label_fraction f, epsilon 8
#   so that the release is made: configs/recommended.yaml's setting).
#   METHOD=split trains graph splits as configs/citeseer/split.yaml (random 8 parts; SPLITS=1600
#   splits, SPLIT_BATCH=0: the automatic batch, every split; BATCH is ignored; epsilon 2).
#
# The datasets (`dpgnn synth`, exactly the shapes of issue 12) take ~3-4 min and ~4-9 GB
# each to partition with METIS (k = 8); the products file is ~1.2 GB, Reddit ~1 GB.
# Needs /usr/bin/time (Debian package `time`, in scripts/install-deps.sh) and mpiexec.
set -euo pipefail

BIN=$(realpath "${1:-build/src/cli/dpgnn}")
WORK=${2:-/tmp/dpgnn-scale}
WHICH=${3:-all}
shift $(( $# > 3 ? 3 : $# )) || true
RANKS=("$@")
[ ${#RANKS[@]} -eq 0 ] && RANKS=(1 2 4)
STEPS=${STEPS:-20}
EVAL_EVERY=${EVAL_EVERY:-10}
BATCH=${BATCH:-10000}
METHOD=${METHOD:-drw}

# shellcheck source=bench/user_shapes.sh
source "$(dirname "$0")/user_shapes.sh"
require_tools scale.sh "$BIN"
mkdir -p "$WORK"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 DPGNN_PROGRESS=0

prepare() {
  local name=$1 ds="$WORK/$1.h5" part="$WORK/$1.metis8.h5"
  if [ ! -f "$ds" ]; then
    echo "# synth $name" >&2
    # shellcheck disable=SC2086
    /usr/bin/time -f "# synth $name: %e s, peak %M KB" "$BIN" synth ${SYNTH[$name]} --out "$ds"
  fi
  if [ "$METHOD" = drw ] && [ ! -f "$part" ]; then
    echo "# partition $name" >&2
    /usr/bin/time -f "# partition $name: %e s, peak %M KB" "$BIN" partition --dataset "$ds" --parts 8 --seed 1 --out "$part"
  fi
  if [ "$METHOD" != drw ] && [ ! -f "$WORK/$name.random8.h5" ]; then
    echo "# random partition $name" >&2
    /usr/bin/time -f "# random partition $name: %e s, peak %M KB" "$BIN" partition --dataset "$ds" --parts 8 \
      --method random --seed 1 --out "$WORK/$name.random8.h5"
  fi
}

# The method's settings: DRW as in issue 12, or DPAR with its defaults.
method_args() {
  local name=$1
  if [ "$METHOD" = dpar ]; then
    echo "--set method=dpar --set data.partition=$WORK/$name.random8.h5" \
      "--set train.batch_size=0 --set dpar.graph_sampling_rate=${GRAPH_SAMPLING:-1}" \
      "${LABELS:+--set dpar.label_fraction=$LABELS --set dpar.label_min_epsilon=0} --set privacy.target_epsilon=$([ -n "${LABELS:-}" ] && echo 8 || echo 1)"
  elif [ "$METHOD" = split ]; then
    echo "--set method=split --set data.partition=$WORK/$name.random8.h5 --set sampler.splits=${SPLITS:-1600}" \
      "--set model.arch=gcn --set model.layers=2 --set model.hidden=128 --set model.activation=relu" \
      "--set train.optimizer=adam --set train.lr=0.1 --set train.ema=0.9 --set privacy.target_epsilon=2" \
      "--set train.batch_size=${SPLIT_BATCH:-0}"
  else
    echo "--set method=drw --set data.partition=$WORK/$name.metis8.h5 --set model.arch=gcn --set model.layers=2" \
      "--set model.hidden=256 --set model.activation=relu --set sampler.walk_length=2 --set train.batch_size=$BATCH" \
      "--set train.optimizer=adam --set train.lr=0.01 --set privacy.target_epsilon=8 --set train.ema=0"
  fi
}

train() {
  local name=$1 p=$2 tag="$METHOD${GRAPH_SAMPLING:+-q$GRAPH_SAMPLING}${LABELS:+-labels$LABELS}"
  local run="$WORK/run-$tag-$1-$2" log="$WORK/run-$tag-$1-$2.log"
  rm -rf "$run"
  local mpi=(mpiexec -n "$p")
  [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
  mpi+=(--oversubscribe --bind-to none)
  rm -f "$log".rank*
  # Each rank's GNU time line goes to its own file: lines written to one stream interleave.
  "${mpi[@]}" sh -c '/usr/bin/time -o "$0.rank${OMPI_COMM_WORLD_RANK:-0}" -f "rank ${OMPI_COMM_WORLD_RANK:-0} peak_rss_kb %M" "$@"' \
    "$log" \
    "$BIN" train --config "$(dirname "$0")/../configs/default.yaml" \
    --set device=cpu --set data.dataset="$WORK/$name.h5" $(method_args "$name") \
    --set privacy.clip_norm=1 --set train.max_steps="$STEPS" --set train.eval_every="$EVAL_EVERY" \
    --set privacy.delta=1e-7 --set train.threads=1 \
    --out "$run" >"$log" 2>&1 || { echo "scale.sh: $name on $p ranks failed, see $log" >&2; tail -5 "$log" >&2; return 1; }
  local sample steps evals acc
  sample=$(grep -oE 'subgraphs over [0-9]+ part\(s\) in [0-9.]+ s' "$log" | grep -oE '[0-9.]+ s$' | head -1)
  steps=$(grep -oE '\([0-9.]+ steps/s\)' "$log" | tail -1 | tr -d '()')
  evals=$(grep -oE 'evaluation [0-9.]+ s' "$log" | awk '{print $2}' | paste -sd, -)
  acc=$(grep -oE 'test accuracy [0-9.]+' "$log" | tail -1 | awk '{print $3}')
  echo "$METHOD $name ranks=$p sampling=${sample} throughput=${steps} evaluations_s=${evals} test_accuracy=${acc}"
  cat "$log".rank* | grep -E '^rank [0-9]+ peak_rss_kb' | sort -n -k2 | awk -v n="$name" -v p="$p" \
    '{printf "%s ranks=%s rank=%s peak_rss=%.2f GiB\n", n, p, $2, $4/1048576}'
}

names=()
case "$WHICH" in
  reddit|products) names=("$WHICH") ;;
  all) names=(reddit products) ;;
  *) echo "scale.sh: unknown graph '$WHICH' (reddit, products or all)" >&2; exit 2 ;;
esac
for n in "${names[@]}"; do
  prepare "$n"
  for p in "${RANKS[@]}"; do train "$n" "$p"; done
done

#!/usr/bin/env bash
# The cost of privacy: DRW against the non-private GCN on the same data, sampler (disjoint
# random walks), batch and model, trained by `dpgnn train` with bench/cost-of-privacy/{drw,gcn}.yaml.
# The two runs alternate (gcn, drw, gcn, drw, ...) so that both see the same machine load;
# each round prints both step rates (summary.json's steps_per_second, measured over the step
# loop alone: sampling, set-up and the final evaluation are not in it; and the rate after the
# first step, which on a GPU carries the CUDA start-up) and the load average,
# and the last line gives the best of the rounds for each and the ratio GCN / DRW (the cost of
# privacy: 1.0 = free). It then times the exact discrete Gaussian noise for the model's
# parameter count (bench_noise, on the run's threads), the part of a DRW step that rank 0
# spends on the noise, so that the clipping share can be read apart from it.
# Results: docs/benchmarks.md, "Cost of privacy".
#
#   bench/cost_of_privacy.sh [BUILD_DIR] [WORKDIR]
#     BUILD_DIR  default build (needs src/cli/dpgnn and bench/bench_noise)
#     WORKDIR    the dataset (made once, reused) and the runs; default /tmp/dpgnn-cost-of-privacy
#   Environment (defaults in brackets): WIDTH [256] model.hidden, BATCH [2000] train.batch_size,
#   STEPS [15] train.max_steps, WALK [16] sampler.walk_length, THREADS [2] train.threads,
#   ROUNDS [2] alternating pairs, NOISE [1] 0 skips the noise timing, DEBUG [0] 1 keeps the
#   stage timings of every step (DPGNN_LOG_LEVEL=debug: the step's stages, the batch assembly's
#   parts, the gradient's stages) and prints their medians per method,
#   EXTRA ["" ] more --set overrides for both runs (e.g. "--set device=cuda"),
#   DATASET [the 60,000-node graph below, made once in WORKDIR] an existing dataset file instead,
#   CPUTIME [0] 1 also gives CPU milliseconds per step, for a loaded machine: each method runs
#   with STEPS and with SHORT [5] steps and the difference of the process's user + system CPU
#   time is divided by STEPS - SHORT (set-up, sampling and the final evaluation cancel). With
#   THREADS=1 it does not depend on the load (wall time does); with more threads it counts the
#   OpenMP/BLAS threads' spinning too.
#
# The dataset: a 60,000-node Reddit-shaped graph (`dpgnn synth`, the shape of bench/scale.sh's
# reddit with fewer nodes: 602 features, 41 classes, average degree 490, homophily 0.8,
# inductive, 66% training nodes); ~8 s and 0.27 GB to make.
set -euo pipefail

BUILD=$(realpath "${1:-build}")
WORK=${2:-/tmp/dpgnn-cost-of-privacy}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN="$BUILD/src/cli/dpgnn"
WIDTH=${WIDTH:-256}
BATCH=${BATCH:-2000}
STEPS=${STEPS:-15}
WALK=${WALK:-16}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}
NOISE=${NOISE:-1}
DEBUG=${DEBUG:-0}
EXTRA=${EXTRA:-}
CPUTIME=${CPUTIME:-0}
SHORT=${SHORT:-5}

[ -x "$BIN" ] || { echo "cost_of_privacy.sh: no dpgnn binary at $BIN" >&2; exit 2; }
mkdir -p "$WORK"
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS DPGNN_PROGRESS=0
DATA="${DATASET:-$WORK/reddit60k.h5}"
if [ -n "${DATASET:-}" ]; then
  [ -f "$DATA" ] || { echo "cost_of_privacy.sh: DATASET '$DATA' is not a file" >&2; exit 2; }
elif [ ! -f "$DATA" ]; then
  # shellcheck source=bench/user_shapes.sh
  source "$HERE/user_shapes.sh"
  # shellcheck disable=SC2086
  "$BIN" synth ${SYNTH[reddit60k]} --out "$DATA" >&2
fi

SETS=(--set "data.dataset=$DATA" --set "model.hidden=$WIDTH" --set "train.batch_size=$BATCH"
      --set "train.max_steps=$STEPS" --set "sampler.walk_length=$WALK" --set "train.threads=$THREADS")
# shellcheck disable=SC2206
[ -n "$EXTRA" ] && SETS+=($EXTRA)

load() { cut -d' ' -f1 /proc/loadavg; }
rate() { sed -n 's/.*"steps_per_second": *\([0-9.eE+-]*\).*/\1/p' "$1/summary.json"; }
# The rate after the first step: (N - 1) / (t_N - t_1), with t_k = k / (the steps_per_second of
# metrics.jsonl's line for step k, measured from the loop's start). On a GPU the first step
# carries the one-time CUDA start (context, cuBLAS and cuSPARSE handles, kernels loaded on first
# use: 0.3-0.4 s on an H200), which a 15-step run spreads over every step.
after_first() {
  awk -F'[:,}]' '/"steps_per_second"/ {
      for (i = 1; i < NF; i++) { if ($i ~ /"step"$/) k = $(i + 1) + 0; if ($i ~ /"steps_per_second"$/) r = $(i + 1) + 0 }
      if (r > 0) { t = k / r; if (n == 0) { k1 = k; t1 = t } kn = k; tn = t; n++ } }
    END { if (n > 1 && tn > t1) printf "%.3f", (kn - k1) / (tn - t1); else printf "0" }' "$1/metrics.jsonl"
}

run() {  # run NAME ROUND -> prints steps/s and the rate after the first step
  local name=$1 round=$2 dir="$WORK/run-$1-$2"
  rm -rf "$dir"
  if [ "$DEBUG" = 1 ]; then
    DPGNN_LOG_LEVEL=debug "$BIN" train --config "$HERE/cost-of-privacy/$name.yaml" "${SETS[@]}" --out "$dir" \
      > "$WORK/$name-$round.log" 2>&1
  else
    "$BIN" train --config "$HERE/cost-of-privacy/$name.yaml" "${SETS[@]}" --out "$dir" > "$WORK/$name-$round.log" 2>&1
  fi
  echo "$(rate "$dir") $(after_first "$dir")"
}

# Arithmetic through awk, which every system has (bc is not on every image; a lent GPU
# machine had none).
calc() { awk "BEGIN { print $1 }"; }
maxof() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
rm -f "$WORK"/gcn-*.log "$WORK"/drw-*.log  # the stage medians read this invocation's logs only
echo "# width $WIDTH, batch $BATCH, walk $WALK, $STEPS steps, $THREADS threads, $ROUNDS rounds; $(date -u +%FT%TZ)"
best_gcn=0 best_drw=0 best_gcn1=0 best_drw1=0
for r in $(seq 1 "$ROUNDS"); do
  l0=$(load); read -r g g1 < <(run gcn "$r"); l1=$(load); read -r d d1 < <(run drw "$r"); l2=$(load)
  printf 'round %d: gcn %.3f steps/s (load %s), drw %.3f steps/s (load %s), ratio %.3f; after the first step: gcn %.3f, drw %.3f, ratio %.3f\n' \
    "$r" "$g" "$l0-$l1" "$d" "$l1-$l2" "$(calc "$g / $d")" "$g1" "$d1" "$(calc "($d1 > 0 ? $g1 / $d1 : 0)")"
  best_gcn=$(maxof "$g" "$best_gcn")
  best_drw=$(maxof "$d" "$best_drw")
  best_gcn1=$(maxof "$g1" "$best_gcn1")
  best_drw1=$(maxof "$d1" "$best_drw1")
done
printf 'best: gcn %.3f steps/s (%.1f ms/step), drw %.3f steps/s (%.1f ms/step), cost of privacy gcn/drw %.3f; after the first step: gcn %.3f, drw %.3f steps/s, cost of privacy %.3f\n' \
  "$best_gcn" "$(calc "1000 / $best_gcn")" "$best_drw" "$(calc "1000 / $best_drw")" \
  "$(calc "$best_gcn / $best_drw")" "$best_gcn1" "$best_drw1" "$(calc "($best_drw1 > 0 ? $best_gcn1 / $best_drw1 : 0)")"

if [ "$CPUTIME" = 1 ]; then
  cpu() {  # cpu NAME STEPS -> user + system CPU seconds of one run
    local dir="$WORK/run-$1-cpu"
    rm -rf "$dir"
    local TIMEFORMAT='%U %S'
    { time "$BIN" train --config "$HERE/cost-of-privacy/$1.yaml" "${SETS[@]}" --set "train.max_steps=$2" \
        --out "$dir" > /dev/null 2>&1; } 2>&1 | awk '{ print $1 + $2 }'
  }
  for r in $(seq 1 "$ROUNDS"); do
    l0=$(load)
    gl=$(cpu gcn "$STEPS"); gs=$(cpu gcn "$SHORT"); dl=$(cpu drw "$STEPS"); ds=$(cpu drw "$SHORT")
    g=$(calc "1000 * ($gl - $gs) / ($STEPS - $SHORT)"); d=$(calc "1000 * ($dl - $ds) / ($STEPS - $SHORT)")
    printf 'cpu round %d: gcn %.1f CPU ms/step, drw %.1f CPU ms/step, ratio %.3f (load %s-%s)\n' \
      "$r" "$g" "$d" "$(calc "$d / $g")" "$l0" "$(load)"
  done
fi

if [ "$DEBUG" = 1 ]; then
  # Medians over each method's steps of the step's stages (train/step_loop.cpp: the whole step
  # in parts), of the batch assembly's parts (train/batch_builder.cpp) and of the DP step's
  # gradient stages (model/clipping.cpp; the non-private run's forward and backward).
  median() {  # median NAME PATTERN LOGS... (sed pattern with one group: the milliseconds)
    local name=$1 pat=$2; shift 2
    { grep -h "$pat" "$@" 2>/dev/null || true; } | sed -n "s/.*$pat.*/\1/p" | sort -g |
      awk -v s="$name" '{ v[NR] = $1 } END { if (NR) printf "%s: median %.1f ms over %d steps\n", s, v[int((NR + 1) / 2)], NR }'
  }
  for m in gcn drw; do
    for stage in "batch choice" "batch assembly" batch gradient "grid and noise" all-reduce optimizer; do
      median "$m stage $stage" "stages:.* $stage \([0-9.]*\) ms" "$WORK"/$m-*.log
    done
    for part in structure "feature gather" "tensors and checks"; do
      median "$m batch $part" "debug batch:.* $part \([0-9.]*\) ms" "$WORK"/$m-*.log
    done
  done
  for part in forward backward; do
    median "gcn gradient $part" "gradient sum:.* $part \([0-9.]*\) ms" "$WORK"/gcn-*.log
  done
  for stage in layout forward "output gradients" "per-subgraph norms" "clipped sum"; do
    median "drw gradient $stage" "debug clipping:.* $stage \([0-9.]*\) ms" "$WORK"/drw-*.log
  done
fi

if [ "$NOISE" = 1 ] && [ -x "$BUILD/bench/bench_noise" ]; then
  P=$(( 602 * WIDTH + WIDTH + WIDTH * 41 + 41 ))  # 2-layer GCN 602 -> WIDTH -> 41, with biases
  "$BUILD/bench/bench_noise" --params "$P" --steps 3 --threads "$THREADS" | tail -1 |
    sed "s/^/noise ($P parameters, load $(load)): /"
fi

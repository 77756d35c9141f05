#!/usr/bin/env bash
# Disk use and read speed of the dataset and partition files (issue 25 item 5; results in
# docs/benchmarks.md, "Disk"): the same imports and partitions written by two dpgnn builds,
# BEFORE (uncompressed features, e.g. a build of main before the change) and AFTER (this
# tree), then read by bench_disk (of the AFTER build, which reads both layouts):
#
#   bench/disk.sh BEFORE_DPGNN AFTER_BUILD_DIR WORK_DIR [DATASETS...]
#
# DATASETS: cora cora-ml twitch-de (imported as bench/utility.sh's spec() does, 2-part METIS
# partitions) and products (`dpgnn synth` at ogbn-products' shape, docs/synth.md, with a
# 4-part random partition: METIS at that size takes longer than the rest together).
# Default: cora cora-ml twitch-de products. Prints one line per file (bytes) and the
# bench_disk lines (shard loads of every rank, single-row reads with and without the block
# cache). Files are written once into WORK_DIR/{before,after}/ and reused; delete them to
# redo. Set DPGNN_SHARED when ../shared is elsewhere; DPGNN_DISK_ROWS (2000) and
# DPGNN_DISK_ROUNDS (3) set bench_disk's single-row reads and rounds.
set -euo pipefail
before="${1:?usage: bench/disk.sh BEFORE_DPGNN AFTER_BUILD_DIR WORK_DIR [DATASETS...]}"
after_build="$(cd "${2:?usage: bench/disk.sh BEFORE_DPGNN AFTER_BUILD_DIR WORK_DIR}" && pwd)"
work="${3:?usage: bench/disk.sh BEFORE_DPGNN AFTER_BUILD_DIR WORK_DIR}"
shift 3
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(cora cora-ml twitch-de products)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
D="${DPGNN_SHARED:-$here/../shared}/data"
after="$after_build/src/cli/dpgnn"
bench="$after_build/bench/bench_disk"
for x in "$before" "$after" "$bench"; do [ -x "$x" ] || { echo "disk.sh: $x is not built" >&2; exit 2; }; done
mkdir -p "$work/before" "$work/after"

import_args() {  # as bench/utility.sh's spec() and prepare()
  case "$1" in
    cora) echo "npz --file $D/cora/gnn-benchmark/cora.npz --train-fraction 0.55 --val-fraction 0.15" ;;
    cora-ml) echo "npz --file $D/cora-ml/cora_ml.npz --train-fraction 0.55 --val-fraction 0.15" ;;
    twitch-de) echo "musae --edges $D/twitch-de/DE_edges.csv --target $D/twitch-de/DE_target.csv --features $D/twitch-de/DE.json --id-column new_id --label-column mature --num-features 3170 --train-fraction 0.5 --val-fraction 0.1" ;;
    *) echo "disk.sh: unknown dataset '$1'" >&2; return 2 ;;
  esac
}

prepare() {  # which(before|after) dataset -> WORK/which/ds.h5 and its partition
  local which="$1" ds="$2" bin h5 part
  if [ "$which" = before ]; then bin="$before"; else bin="$after"; fi
  exec 3>&2 2>>"$work/prepare.log"  # dpgnn's progress lines go to the log
  h5="$work/$which/$ds.h5"
  if [ "$ds" = products ]; then
    part="$work/$which/$ds.random4.h5"
    [ -f "$h5" ] || "$bin" synth --nodes 2449029 --avg-degree 50.5 --classes 47 --features 100 --homophily 0.8 \
      --seed 1 --name products-size --out "$h5" >/dev/null
    [ -f "$part" ] || "$bin" partition --dataset "$h5" --parts 4 --method random --seed 0 --out "$part" >/dev/null
  else
    part="$work/$which/$ds.metis2.h5"
    # shellcheck disable=SC2046
    [ -f "$h5" ] || "$bin" import $(import_args "$ds") --seed 1 --out "$h5" >/dev/null
    [ -f "$part" ] || "$bin" partition --dataset "$h5" --parts 2 --method metis --seed 1 --out "$part" >/dev/null
  fi
  exec 2>&3 3>&-
}

for ds in "${sets[@]}"; do
  for which in before after; do
    t0=$(date +%s.%N)
    prepare "$which" "$ds"
    echo "prepared $which/$ds in $(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }') s"
  done
done
echo "== sizes (bytes)"
for ds in "${sets[@]}"; do
  for f in "$work/before/$ds".*h5 "$work/after/$ds".*h5; do
    case "$f" in */"$ds".h5 | */"$ds".metis2.h5 | */"$ds".random4.h5) printf '%12d  %s\n' "$(stat -c %s "$f")" "${f#"$work"/}" ;; esac
  done
done
rows="${DPGNN_DISK_ROWS:-2000}" rounds="${DPGNN_DISK_ROUNDS:-3}"
echo "== reads (bench_disk, $rows rows, best of $rounds; before and after alternate)"
for ds in "${sets[@]}"; do
  if [ "$ds" = products ]; then p=random4 w=4; else p=metis2 w=2; fi
  for which in before after before after; do
    echo "-- $which/$ds.$p.h5"
    "$bench" "$work/$which/$ds.$p.h5" "$w" "$rows" "$rounds" | sed 's/^/   /'
  done
done

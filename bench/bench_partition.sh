#!/usr/bin/env bash
# Partition time and peak memory of `dpgnn partition` at Reddit and ogbn-products scale.
#
# Generates the graphs with `dpgnn synth` (skipped when the file exists), partitions each
# with METIS k-way (k = 8, one thread) and with the random method, and prints one line per
# run: wall time (from /usr/bin/time -v), the assignment time `dpgnn partition` reports,
# peak RSS, edge cut and balance. Results go to docs/benchmarks.md ("Partitioning").
#
# Usage: bench/bench_partition.sh DPGNN_BINARY WORKDIR [reddit|products|all] [--keep]
#   WORKDIR needs ~2 GB (Reddit size) / ~3.5 GB (products size) per dataset + partition;
#   the files are deleted at the end unless --keep.
set -euo pipefail

bin=${1:?usage: bench_partition.sh DPGNN_BINARY WORKDIR [reddit|products|all] [--keep]}
work=${2:?usage: bench_partition.sh DPGNN_BINARY WORKDIR [reddit|products|all] [--keep]}
which=${3:-all}
keep=${4:-}
parts=8
mkdir -p "$work"

# name nodes avg_degree classes features homophily
declare -A spec=(
  [reddit]="reddit-size 232965 490 41 602 0.75"
  [products]="products-size 2449029 50.5 47 100 0.8"
)

run_one() {
  local key=$1 method=$2
  read -r name nodes degree classes features homophily <<<"${spec[$key]}"
  local ds="$work/$name.h5" out="$work/$name.$method$parts.h5" log="$work/$name.$method$parts.log"
  if [[ ! -f $ds ]]; then
    echo "# generating $ds" >&2
    "$bin" synth --nodes "$nodes" --avg-degree "$degree" --classes "$classes" --features "$features" \
      --homophily "$homophily" --seed 1 --name "$name" --out "$ds" >&2
  fi
  /usr/bin/time -v "$bin" partition --dataset "$ds" --parts "$parts" --method "$method" \
    --seed 0 --force --out "$out" >"$log" 2>&1
  local wall rss assign cut bal
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.2f GB", $2 / 1048576}' "$log")
  assign=$(sed -n 's/.*assign \([0-9.]*\) s.*/\1 s/p' "$log")
  cut=$(sed -n 's/.*edge cut .*(\(.*\)).*/\1/p' "$log")
  bal=$(sed -n 's/.*balance *training nodes \([0-9.]*\), edges \([0-9.]*\), nodes \([0-9.]*\).*/train \1, edges \2, nodes \3/p' "$log")
  printf '%-14s %-7s k=%d  wall %-9s assign %-9s peak RSS %-8s cut %-7s balance %s\n' \
    "$name" "$method" "$parts" "$wall" "$assign" "$rss" "$cut" "$bal"
  [[ $keep == --keep ]] || rm -f "$out"
}

for key in reddit products; do
  [[ $which == all || $which == "$key" ]] || continue
  run_one "$key" metis
  run_one "$key" random
  [[ $keep == --keep ]] || rm -f "$work/${spec[$key]%% *}.h5"
done

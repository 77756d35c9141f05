# The users' graph shapes as `dpgnn synth` arguments (issue 12): Reddit (232,965 nodes,
# 114M CSR entries) and ogbn-products (2,449,029 nodes, 124M entries). Sourced by
# bench/scale.sh, bench/partition_scale.sh, bench/cost_of_privacy.sh and bench/fixed_cost.sh, so
# that they measure the same graphs.
# shellcheck shell=bash disable=SC2034
declare -A SYNTH=(
  [reddit]="--nodes 232965 --avg-degree 490 --classes 41 --features 602 --homophily 0.8 --seed 1 --inductive --train-frac 0.66 --val-frac 0.1"
  [products]="--nodes 2449029 --avg-degree 50.5 --classes 47 --features 100 --homophily 0.8 --seed 1 --train-frac 0.08 --val-frac 0.02"
  # Reddit's shape at 60,000 nodes: the step benchmarks' graph (bench/cost_of_privacy.sh,
  # bench/fixed_cost.sh), ~8 s and 0.27 GB to make.
  [reddit60k]="--nodes 60000 --avg-degree 490 --classes 41 --features 602 --homophily 0.8 --seed 1 --inductive --train-frac 0.66 --val-frac 0.1 --name reddit60k"
)

# Refuses to go on without the dpgnn binary or GNU time (exit 2, naming the script).
require_tools() {
  local script=$1 bin=$2
  [ -x "$bin" ] || { echo "$script: no dpgnn binary at $bin" >&2; exit 2; }
  [ -x /usr/bin/time ] || { echo "$script: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
}

#!/usr/bin/env bash
# Times `dpgnn synth` at the scale of the real benchmarks it stands in for, and reports
# wall time and peak resident memory (GNU time's "Maximum resident set size"). Results
# go to docs/benchmarks.md, section "Synthetic graphs (`dpgnn synth`)".
#
#   bench/bench_synth.sh [DPGNN_BINARY] [SCRATCH_DIR] [SCALE...]
#     DPGNN_BINARY   default build/src/cli/dpgnn
#     SCRATCH_DIR    where the (large) files are written, and deleted after: default /tmp
#     SCALE          products | reddit | small (default: products reddit)
#
# products: ogbn-products' shape (2,449,029 nodes, ~123.7M CSR entries, 100 features,
#           47 classes); reddit: Reddit's (232,965 nodes, ~114M CSR entries, 602
#           features, 41 classes). Needs /usr/bin/time (Debian package `time`) and ~1.2 GB of
#           scratch disk for products, ~1.0 GB for reddit.
set -euo pipefail

BIN=${1:-build/src/cli/dpgnn}
DIR=${2:-/tmp}
shift $(( $# > 2 ? 2 : $# )) || true
SCALES=("$@")
[ ${#SCALES[@]} -eq 0 ] && SCALES=(products reddit)

if [ ! -x "$BIN" ]; then
  echo "bench_synth: no dpgnn binary at $BIN (build it, or pass its path)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench_synth: /usr/bin/time is missing (apt-get install time)" >&2
  exit 2
fi

args_for() {
  case "$1" in
    products) echo "--nodes 2449029 --avg-degree 50.5 --classes 47 --features 100 --homophily 0.8 --seed 1" ;;
    reddit)   echo "--nodes 232965 --avg-degree 490 --classes 41 --features 602 --homophily 0.8 --seed 1" ;;
    small)    echo "--nodes 100000 --avg-degree 20 --classes 10 --features 32 --homophily 0.8 --seed 1" ;;
    *) echo "bench_synth: unknown scale '$1' (products, reddit, small)" >&2; exit 2 ;;
  esac
}

printf '%-9s %9s %14s %9s %12s  %s\n' scale nodes csr_entries wall_s peak_rss_GB "threads/cores"
for scale in "${SCALES[@]}"; do
  out="$DIR/bench_synth_${scale}_$$.h5"
  log="$DIR/bench_synth_${scale}_$$.log"
  # shellcheck disable=SC2046
  /usr/bin/time -v "$BIN" synth $(args_for "$scale") --out "$out" >"$log" 2>&1 || {
    cat "$log" >&2
    rm -f "$out" "$log"
    exit 1
  }
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + t[i]; print s}' "$log")
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  entries=$(sed -n 's/.*(\([0-9]*\) CSR entries), average degree.*/\1/p' "$log" | tail -1)
  nodes=$(sed -n 's/.*wrote [^:]*: \([0-9]*\) nodes.*/\1/p' "$log" | tail -1)
  threads=$(sed -n 's/.*seed [0-9]*, \([0-9]*\) thread(s).*/\1/p' "$log" | head -1)
  printf '%-9s %9s %14s %9.1f %12.2f  %s/%s\n' "$scale" "$nodes" "$entries" "$wall" \
    "$(echo "$rss_kb" | awk '{print $1 / 1048576}')" "$threads" "$(nproc)"
  grep -E "synth: (graph of|wrote)" "$log" | sed 's/^/    /'
  rm -f "$out" "$log"
done

#!/usr/bin/env bash
# The noise each shipped private config gets under `privacy.accountant: pld` and `rdp`, by
# `dpgnn train --dry-run` (the trainer's own calibration: subgraphs sampled, the method's
# mechanism, any pre-training release's share). For each config, two questions:
#   - as shipped (its fixed noise multiplier z, training until the target epsilon): how many
#     steps fit the target under each accountant (at most train.max_steps);
#   - with privacy.noise_multiplier=null (calibrated to the target over train.max_steps): the
#     noise multiplier under each accountant, and their ratio rdp / pld.
# Data: `dpgnn prepare --config` runs each config's data.prepare in WORKDIR/root (where
# ../shared is a link to the real one, so the configs' relative paths work unchanged) for the
# datasets in ../shared/data; configs whose data needs a download (SRC) are listed as not
# measured. Prints a markdown table; results: docs/privacy.md, section 3a.
#
#   bench/noise_multipliers.sh [BUILD_DIR] [WORKDIR]
#     BUILD_DIR  default build (needs src/cli/dpgnn)
#     WORKDIR    default /tmp/dpgnn-noise-multipliers
#   Environment: CONFIGS [configs/*/*.yaml, private methods only], DPGNN_BIN [BUILD_DIR/src/cli/dpgnn].
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BUILD=$(realpath "${1:-$REPO/build}")
WORK=$(realpath -m "${2:-/tmp/dpgnn-noise-multipliers}")
BIN=${DPGNN_BIN:-$BUILD/src/cli/dpgnn}
mkdir -p "$WORK/root"
ln -sfn "$(realpath "$REPO/../shared")" "$WORK/shared"
source "$REPO/scripts/env.sh"
export OMP_NUM_THREADS=1

prepare() {  # config -> its data files under WORKDIR/root/data (1 when they need SRC)
  grep -q 'SRC/' "$1" && return 1
  (cd "$WORK/root" && "$BIN" prepare --config "$REPO/$1" > "$WORK/prepare.log" 2>&1) ||
    { echo "noise_multipliers.sh: dpgnn prepare --config $1 failed; see $WORK/prepare.log" >&2; exit 1; }
}

dry() {  # config, accountant, extra --set... -> "z steps" (steps "not-private" for a run that is not)
  local cfg=$1 acc=$2; shift 2
  (cd "$WORK/root" && "$BIN" train --dry-run --config "$REPO/$cfg" --set privacy.accountant="$acc" "$@" \
    2>"$WORK/dry.log") |
    sed -nE -e 's/.*noise multiplier ([0-9.e+-]+),.* ([0-9]+) steps within epsilon.*/\1 \2/p;t' \
      -e 's/^dry run:.*noise multiplier ([0-9.e+-]+),.*/\1 not-private/p'
}

cd "$REPO"
echo "| config | target epsilon | as shipped: z | steps within target, pld / rdp | calibrated z for max_steps, pld / rdp | rdp / pld |"
echo "|---|---|---|---|---|---|"
skipped=()
for cfg in ${CONFIGS:-configs/*/*.yaml}; do
  [[ $cfg == configs/sweeps/* ]] && continue  # sweep specs, not configs
  method=$(sed -nE 's/^method: *([a-z-]+).*/\1/p' "$cfg")
  case $method in gcn|mlp|sage|"") continue ;; esac
  if ! prepare "$cfg"; then skipped+=("$cfg"); continue; fi
  target=$(sed -nE 's/^  target_epsilon: *([0-9.e+-]+).*/\1/p' "$cfg")
  extra=() name=${cfg#configs/}
  read -r z steps_pld < <(dry "$cfg" pld) || { echo "dry run of $cfg failed:" >&2; cat "$WORK/dry.log" >&2; exit 1; }
  if [[ $steps_pld == not-private ]]; then
    # DP-GNN's configs keep the paper's degree bound, outside its proof (docs/privacy.md): the
    # private variant is sampler.degree_bound=require.
    [[ $method == dpgnn ]] || { echo "| $name | $target | $z | not private as shipped | | |"; continue; }
    extra=(--set sampler.degree_bound=require) name="$name with sampler.degree_bound=require"
    if ! read -r z steps_pld < <(dry "$cfg" pld "${extra[@]}"); then
      echo "| ${cfg#configs/} | $target | $z | not private as shipped (degree_bound: paper); with degree_bound: require the graph is refused (training in-degrees above K) | | |"
      continue
    fi
  fi
  read -r _ steps_rdp < <(dry "$cfg" rdp "${extra[@]}")
  read -r z_pld max_steps < <(dry "$cfg" pld "${extra[@]}" --set privacy.noise_multiplier=null)
  read -r z_rdp _ < <(dry "$cfg" rdp "${extra[@]}" --set privacy.noise_multiplier=null)
  printf '| %s | %s | %s | %s / %s | %.4g / %.4g (%s steps) | %.3f |\n' "$name" "$target" "$z" \
    "$steps_pld" "$steps_rdp" "$z_pld" "$z_rdp" "$max_steps" "$(python3 -c "print($z_rdp / $z_pld)")"
done
if ((${#skipped[@]})); then
  echo
  echo "Not measured (their data needs a download, SRC in the config's header): ${skipped[*]#configs/}"
fi

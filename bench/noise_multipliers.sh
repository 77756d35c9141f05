#!/usr/bin/env bash
# The noise each shipped private config gets under `privacy.accountant: pld` and `rdp`, by
# `dpgnn train --dry-run` (the trainer's own calibration: subgraphs sampled, the method's
# mechanism, any pre-training release's share). For each config, two questions:
#   - as shipped (its fixed noise multiplier z, training until the target epsilon): how many
#     steps fit the target under each accountant (at most train.max_steps);
#   - with privacy.noise_multiplier=null (calibrated to the target over train.max_steps): the
#     noise multiplier under each accountant, and their ratio rdp / pld.
# Data: each config's import and partition commands (its header comment) are run once into
# WORKDIR/data for the datasets in ../shared/data; configs whose data needs a SRC download are
# listed as not measured. Prints a markdown table; results: docs/privacy.md, section 3a.
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
mkdir -p "$WORK/data"
source "$REPO/scripts/env.sh"
export OMP_NUM_THREADS=1
cd "$REPO"  # the configs' commands name ../shared/data relative to the repository

# The config's header commands (`#   dpgnn import ...`, `#   dpgnn partition ...`) with data/
# moved into WORKDIR; run unless their output exists.
prepare() {
  local cfg=$1 line out
  while IFS= read -r line; do
    line=${line#\#   }
    [[ $line == *SRC* ]] && return 1
    line=${line// data\// $WORK/data/}
    out=${line##* --out }
    [[ -f $out ]] || eval "$BIN ${line#dpgnn }" > "$WORK/prepare.log" 2>&1 ||
      { echo "noise_multipliers.sh: '$line' failed; see $WORK/prepare.log" >&2; exit 1; }
  done < <(grep -E '^#   dpgnn (import|partition) ' "$cfg")
}

dry() {  # config, accountant, extra --set... -> "z steps"
  local cfg=$1 acc=$2; shift 2
  local dataset partition
  dataset=$WORK/$(grep -E '^  dataset:' "$cfg" | awk '{print $2}')
  partition=$WORK/$(grep -E '^  partition:' "$cfg" | awk '{print $2}')
  "$BIN" train --dry-run --config "$cfg" --set data.dataset="$dataset" --set data.partition="$partition" \
    --set privacy.accountant="$acc" "$@" 2>"$WORK/dry.log" |
    sed -nE -e 's/.*noise multiplier ([0-9.e+-]+),.* ([0-9]+) steps within epsilon.*/\1 \2/p;t' \
      -e 's/^dry run:.*noise multiplier ([0-9.e+-]+),.*/\1 not-private/p'
}

echo "| config | target epsilon | as shipped: z | steps within target, pld / rdp | calibrated z for max_steps, pld / rdp | rdp / pld |"
echo "|---|---|---|---|---|---|"
skipped=()
for cfg in ${CONFIGS:-configs/*/*.yaml}; do
  method=$(sed -nE 's/^method: *([a-z-]+).*/\1/p' "$cfg")
  case $method in gcn|mlp|sage|"") continue ;; esac
  if ! prepare "$cfg"; then skipped+=("$cfg"); continue; fi
  target=$(sed -nE 's/^  target_epsilon: *([0-9.e+-]+).*/\1/p' "$cfg")
  read -r z steps_pld < <(dry "$cfg" pld) || { echo "dry run of $cfg failed:" >&2; cat "$WORK/dry.log" >&2; exit 1; }
  if [[ $steps_pld == not-private ]]; then
    echo "| ${cfg#configs/} | $target | $z | not private as shipped (see its dry run's warning) | | |"
    continue
  fi
  read -r _ steps_rdp < <(dry "$cfg" rdp)
  read -r z_pld max_steps < <(dry "$cfg" pld --set privacy.noise_multiplier=null)
  read -r z_rdp _ < <(dry "$cfg" rdp --set privacy.noise_multiplier=null)
  printf '| %s | %s | %s | %s / %s | %.4g / %.4g (%s steps) | %.3f |\n' "${cfg#configs/}" "$target" "$z" \
    "$steps_pld" "$steps_rdp" "$z_pld" "$z_rdp" "$max_steps" "$(python3 -c "print($z_rdp / $z_pld)")"
done
if ((${#skipped[@]})); then
  echo
  echo "Not measured (their data needs a download, SRC in the config's header): ${skipped[*]#configs/}"
fi

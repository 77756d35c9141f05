#!/usr/bin/env bash
# The results matrix (issue 25 item 3): test accuracy of the private methods at several
# epsilons beside the non-private GCN and MLP and the majority class, on the shared datasets,
# each method with its best known setup, over several seeds: its defaults (the config holds
# only `method`, `data`, `privacy` and the seed, as a user would start), except the methods in
# CATALOGUE (graph splits, DP-GNN), which take the settings of configs/<dataset>/<method>.yaml, and
# `recommended`, which is configs/recommended.yaml.
#
#   bench/utility.sh BUILD_DIR WORK_DIR
#
# Environment (defaults in brackets):
#   DATASETS  [cora-ml cora coauthor-cs amazon-photo facebook-page-page twitch-de twitch-fr]
#             which graphs (spec() below knows how to import each)
#   METHODS   [recommended dp-mlp gcn dpar drw mlp]  gcn and mlp run once per seed (non-private);
#             recommended = configs/recommended.yaml completed with data and privacy
#   EPS       [1 4 8]     target epsilons (delta 1e-5)
#   SEEDS     [1 2 3]     train.seed
#   RANKS     [2]         MPI ranks (the partitions have 2 parts)
#   CATALOGUE [split dpgnn] methods trained with the settings of configs/<dataset>/<method>.yaml
#             (their best known setup; the others run on their defaults, which are theirs)
#
# Splits: random, transductive; citation and co-purchase/co-author graphs 55% / 15% / 30%,
# social graphs 50% / 10% / 40% (the splits issue 25's acceptance uses). Node-level methods
# (dpar, dpgnn, recommended) get a random 2-part partition, the others METIS's.
# DP-MLP runs as the acceptance's baseline: its default model, a full batch, 100 steps.
#
# Output (WORK_DIR): utility.csv, one line per run (dataset, method, epsilon, seed, test and
# validation accuracy, epsilon spent, seconds) plus one `majority` line per dataset;
# utility.md, the mean and range over the seeds, a row per method and epsilon, a column per dataset;
# utility-recommended.md, configs/recommended.yaml against the majority class, the GCN and
# DP-MLP (the lines of issue 25's acceptance); utility.png,
# test accuracy against epsilon, one panel per dataset, one line per private method, the
# majority class, GCN and MLP as horizontal lines (python3-matplotlib). A run that
# fails is recorded with its exit code and the script goes on. The data is prepared once in
# WORK_DIR/data and reused.
set -euo pipefail
build="$(cd "${1:?usage: bench/utility.sh BUILD_DIR WORK_DIR}" && pwd)"
work="${2:?usage: bench/utility.sh BUILD_DIR WORK_DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${DPGNN_SHARED:-$here/../shared}"
dpgnn="$build/src/cli/dpgnn"
[ -x "$dpgnn" ] || { echo "utility.sh: $dpgnn is not built" >&2; exit 2; }
[ -d "$shared/data" ] || { echo "utility.sh: $shared/data not found (set DPGNN_SHARED)" >&2; exit 2; }
source "$here/scripts/env.sh"
mkdir -p "$work/data" "$work/runs" "$work/configs"
work="$(cd "$work" && pwd)"
DATASETS="${DATASETS:-cora-ml cora coauthor-cs amazon-photo facebook-page-page twitch-de twitch-fr}"
METHODS="${METHODS:-recommended dp-mlp gcn dpar drw mlp}"
EPS="${EPS:-1 4 8}"
SEEDS="${SEEDS:-1 2 3}"
RANKS="${RANKS:-2}"
CATALOGUE="${CATALOGUE:-split dpgnn}"
D="$shared/data"
# Debian's interpreter (python3-matplotlib, python3-yaml); a pyenv python3 first in PATH lacks them.
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# name -> "kind|import arguments" (without the split and --out)
spec() {
  case "$1" in
    cora) echo "citation|npz --file $D/cora/gnn-benchmark/cora.npz" ;;
    cora-ml) echo "citation|npz --file $D/cora-ml/cora_ml.npz" ;;
    coauthor-cs) echo "citation|npz --file $D/coauthor-cs/coauthor_cs.npz" ;;
    coauthor-physics) echo "citation|npz --file $D/coauthor-physics/coauthor_phy.npz" ;;
    amazon-photo) echo "citation|npz --file $D/amazon-photo/amazon_photo.npz" ;;
    amazon-computers) echo "citation|npz --file $D/amazon-computers/amazon_cs.npz" ;;
    blogcatalog) echo "social|npz --file $D/blogcatalog/blogcatalog.npz" ;;
    flickr-lane) echo "social|npz --file $D/flickr-lane/flickr.npz" ;;
    facebook-page-page) echo "social|musae --edges $D/facebook-page-page/facebook_edges.csv --target $D/facebook-page-page/facebook_target.csv --features $D/facebook-page-page/facebook.json --id-column id --label-column page_type" ;;
    twitch-*)
      local c; c="$(echo "${1#twitch-}" | tr a-z A-Z)"
      echo "social|musae --edges $D/$1/${c}_edges.csv --target $D/$1/${c}_target.csv --features $D/$1/${c}.json --id-column new_id --label-column mature --num-features 3170" ;;
    *) echo "utility.sh: no import for dataset '$1' (see spec() in the script)" >&2; return 2 ;;
  esac
}

csv="$work/utility.csv"
[ -f "$csv" ] || echo "dataset,method,epsilon,seed,test_accuracy,val_accuracy,epsilon_spent,seconds,exit" >"$csv"

prepare() {  # dataset -> data/<ds>.h5, .metis2.h5, .random2.h5
  local ds="$1" s kind args train val
  s="$(spec "$ds")"; kind="${s%%|*}"; args="${s#*|}"
  if [ "$kind" = social ]; then train=0.5 val=0.1; else train=0.55 val=0.15; fi
  local h5="$work/data/$ds.h5"
  if [ ! -f "$h5" ]; then
    # shellcheck disable=SC2086
    "$dpgnn" import $args --train-fraction $train --val-fraction $val --seed 1 --out "$h5" >/dev/null
  fi
  [ -f "$work/data/$ds.metis2.h5" ] || "$dpgnn" partition --dataset "$h5" --parts 2 --method metis --seed 1 \
    --out "$work/data/$ds.metis2.h5" >/dev/null
  [ -f "$work/data/$ds.random2.h5" ] || "$dpgnn" partition --dataset "$h5" --parts 2 --method random --seed 1 \
    --out "$work/data/$ds.random2.h5" >/dev/null
  if ! grep -q "^$ds,majority," "$csv"; then
    "$dpgnn" info --json "$h5" | "$py" -c '
import json, sys
m = json.load(sys.stdin)["majority"]
print("%s,majority,,,%.4f,%.4f,,,0" % (sys.argv[1], m["test_accuracy"], m["val_accuracy"]))' "$ds" >>"$csv"
  fi
}

# The method settings of configs/<dataset>/<method>.yaml (every section but data, privacy and
# device; train.seed left to the matrix) as --set overrides in seed_set, for the methods in
# CATALOGUE: those whose best known setup is not their defaults.
catalogue_settings() {  # dataset method
  local file="$here/configs/$1/$2.yaml" line
  [ -f "$file" ] || { echo "utility.sh: no $file for the catalogue's settings of $2" >&2; return 2; }
  while IFS= read -r line; do seed_set+=(--set "$line"); done < <("$py" -c '
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
for section, values in c.items():
    if section in ("method", "data", "privacy", "device") or not isinstance(values, dict):
        continue
    for k, v in values.items():
        if (section, k) != ("train", "seed"):
            print("%s.%s=%s" % (section, k, v))' "$file")
}

run() {  # dataset method epsilon seed
  local ds="$1" method="$2" eps="$3" seed="$4" part=metis2
  case "$method" in dpar | dpgnn | recommended) part=random2 ;; esac
  local tag="$ds-$method-e${eps:-none}-s$seed" cfg out
  cfg="$work/configs/$tag.yaml"; out="$work/runs/$tag"
  if grep -q "^$ds,$method,$eps,$seed," "$csv"; then return 0; fi
  local seed_set=()
  if [ "$method" = recommended ]; then
    # configs/recommended.yaml as a user completes it: its settings, plus data and privacy.
    { grep -v '^#' "$here/configs/recommended.yaml"
      echo "data: {dataset: $work/data/$ds.h5, partition: $work/data/$ds.$part.h5}"
      echo "privacy: {target_epsilon: $eps, delta: 1.0e-5}"
    } >"$cfg"
    seed_set=(--set "train.seed=$seed")
  else
    {
      echo "method: $method"
      echo "data: {dataset: $work/data/$ds.h5, partition: $work/data/$ds.$part.h5}"
      if [ "$method" = dp-mlp ]; then echo "train: {seed: $seed, batch_size: 0, max_steps: 100}"; else echo "train: {seed: $seed}"; fi
      [ -z "$eps" ] || echo "privacy: {target_epsilon: $eps, delta: 1.0e-5}"
    } >"$cfg"
    case " $CATALOGUE " in
      *" $method "*) catalogue_settings "$ds" "$method" ;;
    esac
  fi
  rm -rf "$out"
  local t0 rc=0
  t0=$(date +%s)
  mpiexec -n "$RANKS" "$dpgnn" train --config "$cfg" "${seed_set[@]}" --out "$out" >"$work/runs/$tag.log" 2>&1 || rc=$?
  local secs=$(($(date +%s) - t0))
  if [ $rc -eq 0 ] && [ -f "$out/summary.json" ]; then
    "$py" - "$out/summary.json" "$ds" "$method" "$eps" "$seed" "$secs" >>"$csv" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
ds, method, eps, seed, secs = sys.argv[2:7]
spent = s.get("epsilon")
print("%s,%s,%s,%s,%.4f,%.4f,%s,%s,0" % (ds, method, eps, seed, s["test_accuracy"], s["val_accuracy"],
                                         "" if spent is None else "%.4f" % spent, secs))
EOF
  else
    echo "$ds,$method,$eps,$seed,,,,$secs,$rc" >>"$csv"
    echo "utility.sh: $tag failed (exit $rc), see $work/runs/$tag.log" >&2
  fi
  echo "[$(date -u +%H:%M:%S)] $tag: $(tail -1 "$csv")"
}

for ds in $DATASETS; do
  prepare "$ds"
  for method in $METHODS; do
    for seed in $SEEDS; do
      case "$method" in
        gcn | mlp) run "$ds" "$method" "" "$seed" ;;
        *) for eps in $EPS; do run "$ds" "$method" "$eps" "$seed"; done ;;
      esac
    done
  done
done

# The table: mean (min - max) over the seeds.
"$py" - "$csv" >"$work/utility.md" <<'EOF'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
acc = defaultdict(list)
failed = defaultdict(int)
for r in rows:
    key = (r["dataset"], r["method"], r["epsilon"])
    if r["test_accuracy"]:
        acc[key].append(float(r["test_accuracy"]))
    else:
        failed[key] += 1
datasets = list(dict.fromkeys(r["dataset"] for r in rows))
# One row per method and epsilon (the baselines first), one column per dataset.
private = sorted({(m, e) for (_, m, e) in list(acc) + list(failed) if m not in ("majority", "gcn", "mlp")},
                 key=lambda c: (c[0], float(c[1]) if c[1] else -1.0))  # '' = an earlier non-private baseline (gcn-v1)
lines = [("majority class", "majority", ""), ("GCN (non-private)", "gcn", ""), ("MLP (non-private)", "mlp", "")]
lines += [("%s eps %s" % (m, e) if e else m, m, e) for (m, e) in private]
print("| method | " + " | ".join(datasets) + " |")
print("|" + "---|" * (len(datasets) + 1))
def cell(key):
    v = acc.get(key)
    if not v:
        return "failed (%d)" % failed[key] if failed.get(key) else ""
    s = "%.3f" % (sum(v) / len(v))
    if len(v) > 1:
        s += " (%.3f-%.3f, n=%d)" % (min(v), max(v), len(v))
    return s + (" + %d failed" % failed[key] if failed.get(key) else "")
for label, m, e in lines:
    print("| " + " | ".join([label] + [cell((ds, m, e)) for ds in datasets]) + " |")
EOF
cat "$work/utility.md"

# The recommended config against the lines issue 25 draws for it: above the majority class at
# every epsilon; at epsilon 8 within 10 points of the non-private GCN; at epsilon 1 above DP-MLP.
"$py" - "$csv" >"$work/utility-recommended.md" <<'EOF'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
acc = defaultdict(list)
for r in rows:
    if r["test_accuracy"]:
        acc[(r["dataset"], r["method"], r["epsilon"])].append(float(r["test_accuracy"]))
mean = lambda k: sum(acc[k]) / len(acc[k]) if acc.get(k) else None
fmt = lambda v: "" if v is None else "%.3f" % v
print("| dataset | majority | GCN | DP-MLP eps 1 | recommended eps 1 | recommended eps 8 | eps 8: GCN - recommended | eps 1: recommended - DP-MLP |")
print("|---|---|---|---|---|---|---|---|")
for ds in dict.fromkeys(r["dataset"] for r in rows):
    maj, gcn = mean((ds, "majority", "")), mean((ds, "gcn", ""))
    mlp1, r1, r8 = mean((ds, "dp-mlp", "1")), mean((ds, "recommended", "1")), mean((ds, "recommended", "8"))
    gap = "%.1f points" % (100 * (gcn - r8)) if gcn is not None and r8 is not None else ""
    lead = "%+.1f points" % (100 * (r1 - mlp1)) if mlp1 is not None and r1 is not None else ""
    print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (ds, fmt(maj), fmt(gcn), fmt(mlp1), fmt(r1), fmt(r8), gap, lead))
EOF
cat "$work/utility-recommended.md"

# The figure: test accuracy against epsilon, one panel per dataset.
"$py" - "$csv" "$work/utility.png" <<'EOF' || echo "utility.sh: no figure (python3-matplotlib missing?)" >&2
import csv, sys
from collections import defaultdict
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
acc = defaultdict(list)
for r in rows:
    if r["test_accuracy"]:
        acc[(r["dataset"], r["method"], r["epsilon"])].append(float(r["test_accuracy"]))
datasets = list(dict.fromkeys(r["dataset"] for r in rows))
fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 3.6), squeeze=False)
# One colour per method across the panels (a panel may lack some methods).
colour = {m: "C%d" % i for i, m in enumerate(sorted({m for (_, m, e) in acc if e}))}
for ax, ds in zip(axes[0], datasets):
    for m in sorted({m for (d, m, e) in acc if d == ds and e}):
        keys = sorted((k for k in acc if k[0] == ds and k[1] == m and k[2]), key=lambda k: float(k[2]))
        ax.plot([float(k[2]) for k in keys], [sum(acc[k]) / len(acc[k]) for k in keys], marker="o", label=m,
                color=colour[m])
    for m, style in (("gcn", "--"), ("mlp", ":"), ("majority", "-.")):
        v = acc.get((ds, m, ""))
        if v:
            ax.axhline(sum(v) / len(v), linestyle=style, color="gray",
                       label=m if m == "majority" else m + " (non-private)")
    ax.set_title(ds)
    ax.set_xlabel("epsilon (delta 1e-5)")
    ax.set_ylabel("test accuracy (mean over seeds)")
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
EOF

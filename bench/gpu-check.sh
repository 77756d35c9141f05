#!/usr/bin/env bash
# gpu-check.sh: what to run on a machine with a GPU, in one go, with one summary at the end
# (issue 23 item 4). Stages:
#   1. build    configure and build the CUDA build (-DDPGNN_WITH_CUDA=ON -DDPGNN_WITH_NCCL=ON,
#               Torch_DIR from $TORCH_DIR or the python3 torch's cmake prefix)
#   2. tests    the GPU tests through ctest (NCCL communicator, CUDA device binding, the
#               GPU training that must match the CPU one)
#   3. nccl-1   a 1-rank training run with device: cuda (the all-reduce over NCCL)
#   4. share-2  2 ranks sharing one GPU: over NCCL where NCCL allows it; where it refuses
#               (it does, "Duplicate GPU detected"), again with DPGNN_GPU_COLLECTIVES=mpi:
#               the gradients staged through host memory over MPI. The summary says which.
#   5. clip     bench_clipping --mode pair --device cuda: the DP step over the non-private one
#   6. cost     bench/cost_of_privacy.sh on the GPU: DRW vs the non-private GCN, same batch, at
#               the 60,000-node Reddit-like setup (width 256, batch 2,000, walk 16): steps/s
#               private and non-private, over the whole run and after its first step (which
#               carries the process's one-time CUDA start, 0.3-0.4 s on an H200), and (DEBUG=1) the medians of every step stage
#               (batch, gradient and its parts, grid and noise, all-reduce, optimizer), recorded
#               in the summary as the `stages` line (issue 38)
#   7. host-gather  the same DRW/GCN pair with train.features_on_device: never (the batch's rows
#               gathered on the host into pinned buffers) against stage 6's default (kept on the
#               GPU and gathered there): what device-resident features give (issue 38)
#   8. products the pair at the ogbn-products shape (bench/user_shapes.sh: 2,449,029 nodes,
#               124M CSR entries, made by `dpgnn synth`, ~1 min), 1 rank, with stage medians;
#               PRODUCTS=0 skips it
# --dry-run runs the same stages on the CPU at tiny sizes with the existing CPU build (no
# configure; stage 4 runs 2 CPU ranks), so the script itself is tested where there is no GPU
# (ctest gpu_check_dry_run). Exit status: 0 when no stage failed, 1 otherwise, 2 usage.
#
#   bench/gpu-check.sh [--dry-run] [--build-dir DIR] [--work DIR] [--no-build] [--jobs J]
set -euo pipefail

prog=gpu-check.sh
repo="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
usage() {
  cat <<EOF
Usage: bench/$prog [--dry-run] [--build-dir DIR] [--work DIR] [--no-build] [--jobs J]
Builds dpgnn for CUDA, runs the GPU tests, NCCL training on 1 rank and on 2 ranks sharing a
GPU, the clipping benchmark and the cost of privacy on the GPU, and prints one summary.

  --dry-run        the same stages on the CPU at tiny sizes, with the existing build
                   (default \$DPGNN_BUILD_DIR or build/); nothing is configured
  --build-dir DIR  the CUDA build directory (default build-cuda)
  --no-build       use DIR as it is (configured and built before)
  --work DIR       data and runs (default: a new directory under /tmp, removed at the end)
  --jobs J         build jobs (default: nproc)
Environment: TORCH_DIR (a CUDA LibTorch's share/cmake/Torch), NCCL_ROOT, CUDAToolkit_ROOT.
EOF
}
die() { echo "$prog: error: $1" >&2; exit 2; }

dry=0 build_dir="" work="" no_build=0 jobs="$(nproc --all)"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1; shift ;;
    --build-dir) [ $# -ge 2 ] || die "--build-dir needs a value"; build_dir="$2"; shift 2 ;;
    --work) [ $# -ge 2 ] || die "--work needs a value"; work="$2"; shift 2 ;;
    --no-build) no_build=1; shift ;;
    --jobs) [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a positive integer"; jobs="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
if [ "$dry" = 1 ]; then
  build_dir="${build_dir:-${DPGNN_BUILD_DIR:-build}}"
else
  build_dir="${build_dir:-build-cuda}"
fi
case "$build_dir" in /*) ;; *) build_dir="$repo/$build_dir" ;; esac
source "$repo/scripts/env.sh"
export DPGNN_PROGRESS=0

keep_work=1
if [ -z "$work" ]; then work="$(mktemp -d /tmp/dpgnn-gpu-check.XXXXXX)"; keep_work=0; fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
trap '[ "$keep_work" = 1 ] || rm -rf "$work"' EXIT

t_all=$(date +%s)
summary=() failed=0
record() {  # record STAGE STATUS DETAIL
  summary+=("$(printf '%-8s %-5s %s' "$1" "$2" "$3")")
  [ "$2" != FAIL ] || failed=1
  echo "[$(date -u +%H:%M:%S)] $1: $2 $3"
}
device=cuda
[ "$dry" = 0 ] || device=cpu

# ---- 1. build ------------------------------------------------------------------------------
t0=$(date +%s)
if [ "$dry" = 0 ]; then
  command -v nvidia-smi >/dev/null 2>&1 && gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)" || gpus=0
  [ "$gpus" -ge 1 ] || die "no GPU visible (nvidia-smi -L lists none): run bench/$prog --dry-run for the CPU rehearsal"
  if [ "$no_build" = 0 ]; then
    torch_dir="${TORCH_DIR:-}"
    if [ -z "$torch_dir" ] && command -v python3 >/dev/null 2>&1; then
      prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)"
      [ -z "$prefix" ] || torch_dir="$prefix/Torch"
    fi
    cfg=(cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPGNN_WITH_CUDA=ON -DDPGNN_WITH_NCCL=ON)
    [ -z "$torch_dir" ] || cfg+=("-DTorch_DIR=$torch_dir")
    echo "$prog: ${cfg[*]}"
    "${cfg[@]}" >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log"; die "configuring the CUDA build failed (log above; TORCH_DIR, NCCL_ROOT, CUDAToolkit_ROOT)"; }
    cmake --build "$build_dir" -j"$jobs" >"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log"; die "the CUDA build failed (log above)"; }
  fi
  grep -q '^DPGNN_WITH_NCCL:BOOL=ON' "$build_dir/CMakeCache.txt" 2>/dev/null ||
    die "$build_dir is not a CUDA + NCCL build (DPGNN_WITH_NCCL is not ON in its CMakeCache.txt)"
  build_note="CUDA + NCCL build in $build_dir, $gpus GPU(s): $(nvidia-smi -L | head -n1)"
else
  build_note="dry run: the existing build $build_dir (DPGNN_WITH_CUDA=$(sed -n 's/^DPGNN_WITH_CUDA:BOOL=//p' "$build_dir/CMakeCache.txt" 2>/dev/null)); not configured: cmake ... -DDPGNN_WITH_CUDA=ON -DDPGNN_WITH_NCCL=ON"
fi
bin="$build_dir/src/cli/dpgnn"
clip="$build_dir/bench/bench_clipping"
[ -x "$bin" ] || die "no dpgnn at $bin (build it: scripts/build.sh, or without --no-build)"
[ -x "$clip" ] || die "no bench_clipping at $clip (cmake --build $build_dir --target bench_clipping)"
record build ok "$build_note ($(($(date +%s) - t0)) s)"

# ---- 2. the GPU tests ------------------------------------------------------------------------
t0=$(date +%s)
gpu_tests='nccl|Nccl|Cuda|OnAGpu'
if [ "$dry" = 0 ]; then
  if ctest --test-dir "$build_dir" -R "$gpu_tests" --output-on-failure >"$work/ctest.log" 2>&1; then st=ok; else st=FAIL; fi
  counts="$(grep -E 'tests passed' "$work/ctest.log" | tail -n1)"
  skipped="$(grep -cE '\*\*\*Skipped|Not Run' "$work/ctest.log" || true)"
  [ -n "$counts" ] || { st=FAIL; counts="ctest found no test matching '$gpu_tests'"; }
else
  # The same tests' commands, run here rather than through ctest: the dry run is itself a
  # ctest test, and a ctest inside ctest would write over the outer one's Testing/ logs.
  if counts="$(ctest --test-dir "$build_dir" -R "$gpu_tests" --show-only=json-v1 2>/dev/null | python3 -c '
import json, subprocess, sys
tests = json.load(sys.stdin)["tests"]
passed = failed = skipped = 0
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    r = subprocess.run(t["command"], cwd=props.get("WORKING_DIRECTORY"), capture_output=True, text=True)
    if r.returncode == 0 and "[  SKIPPED ]" in r.stdout: skipped += 1
    elif r.returncode == 0: passed += 1
    elif str(r.returncode) == str(props.get("SKIP_RETURN_CODE")): skipped += 1
    else:
        failed += 1
        print(t["name"], "failed:", r.stdout[-2000:], r.stderr[-2000:], file=sys.stderr)
print(f"{passed} passed, {skipped} skipped, {failed} failed of {len(tests)}")
sys.exit(1 if failed or not tests else 0)
' 2>"$work/ctest.log")"; then st=ok; else st=FAIL; fi
  skipped=""
fi
record tests "$st" "tests matching '$gpu_tests': $counts${skipped:+, $skipped skipped} ($(($(date +%s) - t0)) s)"
[ "$st" = ok ] || tail -n 40 "$work/ctest.log"

# ---- data: a synthetic graph in 2 parts ------------------------------------------------------
if [ "$dry" = 0 ]; then
  nodes=20000 feats=128 hidden=256 batch=512 steps=100 clip_args=()
else
  nodes=1000 feats=16 hidden=16 batch=32 steps=10 clip_args=(--subgraphs 200 --features 32 --hidden 16 --classes 4 --repeats 3 --threads 1)
fi
"$bin" synth --nodes "$nodes" --avg-degree 10 --classes 4 --features "$feats" --homophily 0.8 --seed 1 \
  --out "$work/graph.h5" >"$work/synth.log" 2>&1 || die "dpgnn synth failed: $(tail -n 5 "$work/synth.log")"
"$bin" partition --dataset "$work/graph.h5" --parts 2 --seed 1 --out "$work/graph.part2.h5" \
  >"$work/partition.log" 2>&1 || die "dpgnn partition failed: $(tail -n 5 "$work/partition.log")"
cat >"$work/config.yaml" <<EOF
# gpu-check.sh: DRW with the noise pinned, so that the 1- and 2-rank runs can be compared.
method: drw
device: $device
data: {dataset: $work/graph.h5, partition: $work/graph.part2.h5}
model: {hidden: $hidden}
train: {batch_size: $batch, max_steps: $steps, seed: 1, eval_every: 0, checkpoint_every: 0, threads: 1}
privacy: {noise_multiplier: 1.5, noise_seed: 7, delta: 1.0e-5}
EOF
summary_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# ---- 3. one rank over NCCL ---------------------------------------------------------------------
t0=$(date +%s)
want=nccl
[ "$dry" = 0 ] || want=mpi
if mpiexec -n 1 "$bin" train --config "$work/config.yaml" --out "$work/run1" >"$work/run1.log" 2>&1 &&
   grep -q "gradients all-reduced over $want" "$work/run1.log"; then
  record nccl-1 ok "1 rank on $device, all-reduce over $want: $(summary_field "$work/run1/summary.json" steps) steps, $(printf '%.1f' "$(summary_field "$work/run1/summary.json" steps_per_second)") steps/s ($(($(date +%s) - t0)) s)"
else
  record nccl-1 FAIL "1 rank on $device: $(grep -E 'error|all-reduced over' "$work/run1.log" | tail -n 2 | tr '\n' ' ')"
fi

# ---- 4. two ranks sharing one GPU ---------------------------------------------------------------
t0=$(date +%s)
two() {  # two NAME [VAR=VALUE...]: 2 ranks, each seeing the same (first) GPU only
  local name="$1" x=()
  shift
  [ -z "$first_gpu" ] || x=(-x "CUDA_VISIBLE_DEVICES=$first_gpu")
  env "$@" mpiexec -n 2 --oversubscribe "${x[@]}" \
    "$bin" train --config "$work/config.yaml" --out "$work/$name" >"$work/$name.log" 2>&1
}
first_gpu="$(cut -d, -f1 <<<"${CUDA_VISIBLE_DEVICES:-0}")"
[ "$dry" = 0 ] || first_gpu=""
same_as_1() {  # the 2-rank run's epsilon and steps against the 1-rank run's
  [ -f "$work/run1/summary.json" ] && [ -f "$work/$1/summary.json" ] &&
    [ "$(summary_field "$work/run1/summary.json" epsilon)" = "$(summary_field "$work/$1/summary.json" epsilon)" ] &&
    [ "$(summary_field "$work/run1/summary.json" steps)" = "$(summary_field "$work/$1/summary.json" steps)" ]
}
if two run2; then
  via="$(sed -n 's/.*gradients all-reduced over \([a-z]*\).*/\1/p' "$work/run2.log" | head -n1)"
  if same_as_1 run2; then st=ok; else st=FAIL; fi
  if [ "$dry" = 1 ]; then how="dry run: 2 CPU ranks"; else how="NCCL allowed it"; fi
  record share-2 "$st" "2 ranks on one $device device, all-reduce over ${via:-?} ($how); epsilon and steps as 1 rank: $([ "$st" = ok ] && echo yes || echo NO) ($(($(date +%s) - t0)) s)"
else
  why="$(grep -m1 -oE 'Duplicate GPU[^"]*|NCCL[^"]{0,80}' "$work/run2.log" || tail -n1 "$work/run2.log")"
  if two run2mpi DPGNN_GPU_COLLECTIVES=mpi && grep -q "gradients all-reduced over mpi" "$work/run2mpi.log"; then
    if same_as_1 run2mpi; then st=ok; else st=FAIL; fi
    record share-2 "$st" "NCCL refused 2 ranks on one GPU ($why); ran through the MPI backend on CUDA buffers (DPGNN_GPU_COLLECTIVES=mpi, staged through host memory); epsilon and steps as 1 rank: $([ "$st" = ok ] && echo yes || echo NO) ($(($(date +%s) - t0)) s)"
  else
    record share-2 FAIL "NCCL refused 2 ranks on one GPU ($why), and over MPI: $(grep -E 'error' "$work/run2mpi.log" | tail -n 1)"
  fi
fi

# ---- 5. the clipping benchmark -------------------------------------------------------------------
t0=$(date +%s)
if line="$("$clip" --mode pair --device "$device" "${clip_args[@]}" 2>"$work/clip.log" | grep '^mode=pair')"; then
  ratio="$(sed -n 's/.*ratio_best=\([0-9.]*\).*/\1/p' <<<"$line")"
  dp="$(sed -n 's/.* dp_best=\([0-9.]*\).*/\1/p' <<<"$line")"
  np="$(sed -n 's/.*nonprivate_best=\([0-9.]*\).*/\1/p' <<<"$line")"
  record clip ok "bench_clipping --mode pair --device $device: dp step ${dp} s, non-private ${np} s, ratio $ratio ($(($(date +%s) - t0)) s)"
else
  record clip FAIL "bench_clipping --device $device: $(tail -n 3 "$work/clip.log" | tr '\n' ' ')"
fi

# ---- 6. the cost of privacy ------------------------------------------------------------------------
t0=$(date +%s)
if [ "$dry" = 0 ]; then
  cop_env_extra="--set device=cuda"
  cop_env=(EXTRA="$cop_env_extra" ROUNDS=1 NOISE=0 THREADS=2 DEBUG=1)
else
  cop_env_extra="--set device=cpu"
  cop_env=(DATASET="$work/graph.h5" EXTRA="$cop_env_extra" WIDTH=16 BATCH=32 STEPS=4 WALK=2 THREADS=1 ROUNDS=1 NOISE=0
           DEBUG=1)
fi
if env "${cop_env[@]}" "$repo/bench/cost_of_privacy.sh" "$build_dir" "$work/cost" >"$work/cost.log" 2>&1 &&
   best="$(grep '^best:' "$work/cost.log")"; then
  record cost ok "${best#best: } ($(($(date +%s) - t0)) s)"
  # The per-stage medians (ms) of both methods' steps, one line: "gcn batch 1.2, gradient ...".
  stages="$(sed -n 's/^\(gcn\|drw\) \(stage\|gradient\|batch\) \(.*\): median \([0-9.]*\) ms.*/\1 \3 \4/p' "$work/cost.log" |
    awk '{ m = $1; $1 = ""; v = $NF; $NF = ""; sub(/^ /, ""); sub(/ $/, ""); line[m] = line[m] (line[m] ? ", " : "") $0 " " v }
         END { printf "ms per step (medians): gcn: %s; drw: %s", line["gcn"], line["drw"] }')"
  if grep -q '^drw stage gradient' "$work/cost.log"; then st=ok; else st=FAIL; stages="no stage timings in the runs' debug logs"; fi
  record stages "$st" "$stages"
else
  record cost FAIL "bench/cost_of_privacy.sh: $(tail -n 3 "$work/cost.log" | tr '\n' ' ')"
fi

# ---- 7. the batch's rows gathered on the host (the A/B of device-resident features) ----------
t0=$(date +%s)
if env "${cop_env[@]}" EXTRA="${cop_env_extra:-} --set train.features_on_device=never" DEBUG=0 \
     "$repo/bench/cost_of_privacy.sh" "$build_dir" "$work/cost-host" >"$work/cost-host.log" 2>&1 &&
   best="$(grep '^best:' "$work/cost-host.log")"; then
  record host-gather ok "${best#best: } ($(($(date +%s) - t0)) s)"
else
  record host-gather FAIL "bench/cost_of_privacy.sh (features_on_device never): $(tail -n 3 "$work/cost-host.log" | tr '\n' ' ')"
fi

# ---- 8. the products shape -------------------------------------------------------------------------
if [ "${PRODUCTS:-1}" = 1 ]; then
  t0=$(date +%s)
  if [ "$dry" = 0 ]; then
    # shellcheck source=bench/user_shapes.sh
    source "$repo/bench/user_shapes.sh"
    # shellcheck disable=SC2086
    "$bin" synth ${SYNTH[products]} --out "$work/products.h5" >"$work/products-synth.log" 2>&1 || true
  else
    cp "$work/graph.h5" "$work/products.h5"
  fi
  if [ -f "$work/products.h5" ] &&
     env "${cop_env[@]}" DATASET="$work/products.h5" "$repo/bench/cost_of_privacy.sh" "$build_dir" "$work/cost-products" \
       >"$work/cost-products.log" 2>&1 && best="$(grep '^best:' "$work/cost-products.log")"; then
    stages="$(sed -n 's/^\(gcn\|drw\) \(stage\|gradient\|batch\) \(.*\): median \([0-9.]*\) ms.*/\1 \3 \4/p' "$work/cost-products.log" |
      awk '{ m = $1; $1 = ""; v = $NF; $NF = ""; sub(/^ /, ""); sub(/ $/, ""); line[m] = line[m] (line[m] ? ", " : "") $0 " " v }
           END { printf "gcn: %s; drw: %s", line["gcn"], line["drw"] }')"
    record products ok "${best#best: }; ms per step (medians): $stages ($(($(date +%s) - t0)) s)"
  else
    record products FAIL "products shape: $(tail -n 3 "$work/products-synth.log" "$work/cost-products.log" 2>/dev/null | tr '\n' ' ')"
  fi
fi

echo
if [ "$dry" = 1 ]; then where="DRY RUN on the CPU"; else where="$(nvidia-smi -L | head -n1)"; fi
echo "==== gpu-check summary ($where; $(($(date +%s) - t_all)) s) ===="
printf '%s\n' "${summary[@]}"
[ "$keep_work" = 0 ] || echo "logs and runs: $work"
exit "$failed"

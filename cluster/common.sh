# shellcheck shell=bash
# cluster/common.sh: what every dpgnn SLURM batch script does, sourced by them so that the
# requeue logic exists once (cluster/single-node.sbatch, multi-node-srun.sbatch,
# multi-node-mpirun.sbatch, and any job-array script).
#
# Why the scripts are built this way (docs/cluster.md has the user's view):
#   - A job can be preempted, requeued (`scontrol requeue`, node failure) or resubmitted at
#     any moment. The run directory is the job's whole state: its ledger records every step
#     before the step's noisy gradient is used (fsync'ed), checkpoint.h5 holds the parameters
#     every train.checkpoint_every steps, and `dpgnn train --resume` rebuilds the accountant
#     from the ledger and replays the steps after the checkpoint with the same batches and
#     the same noise (src/train/trainer.cpp, docs/outputs.md). So each attempt only has to
#     decide, from the run directory, which of three things to do:
#       summary.json exists      -> the run has finished: say so and exit 0,
#       config.yaml exists       -> an earlier attempt started it: `train --resume`
#                                   (unless it stopped before run.json and any step: afresh),
#       otherwise                -> a fresh `train`.
#     Killing a rank at any point is therefore safe, and no spent privacy budget is lost or
#     spent twice (the replayed steps release the same noisy gradients again).
#   - sbatch runs a copy of the batch script from the spool directory, so a script cannot
#     find the repository from its own path. The caller locates it (DPGNN_HOME, else the
#     submit directory) before sourcing this file, and dpgnn itself is DPGNN_BIN, else
#     <repo>/$DPGNN_BUILD_DIR/src/cli/dpgnn (default build/), else `dpgnn` on PATH.
#   - The launcher runs in the background and the shell waits for it, so that a SIGTERM
#     sent to the batch shell alone (`scancel --batch`, some preemption setups) is forwarded
#     to the ranks instead of waiting for the launcher to finish (bash runs traps only between
#     commands).
#
# Use (DPGNN_HOME set; the caller's positional arguments are CONFIG RUN_DIR):
#   source "$DPGNN_HOME/cluster/common.sh"
#   dpgnn_job_prepare "$@"            # validates, logs, exits 0 when the run is finished
#   dpgnn_job_run LAUNCHER ARGS...    # runs LAUNCHER ARGS... train --config ... and exits
#                                     # (ARGS end with "$DPGNN_BIN", or "--dpgnn BIN --")
# After dpgnn_job_prepare: DPGNN_CONFIG, DPGNN_RUN_DIR (absolute), DPGNN_BIN, DPGNN_MODE
# (fresh|resume), DPGNN_TRAIN_ARGS (the train command line after the binary),
# DPGNN_TASKS_PER_NODE and OMP_NUM_THREADS/OPENBLAS_NUM_THREADS (threads per rank).

dpgnn_log() { echo "[$(date -u +%Y-%m-%dT%H:%M:%SZ)] dpgnn-job: $*"; }
dpgnn_die() {  # usage errors exit 2, like dpgnn's
  echo "[$(date -u +%Y-%m-%dT%H:%M:%SZ)] dpgnn-job: error: $*" >&2
  exit "${2:-2}"
}

# dpgnn_job_prepare CONFIG RUN_DIR [EXTRA TRAIN ARGS...]: checks the arguments and the
# environment, prints the job's header, and decides fresh/resume (exit 0 when finished).
dpgnn_job_prepare() {
  if [ $# -lt 2 ]; then
    dpgnn_die "usage: sbatch [options] ${DPGNN_SCRIPT_NAME:-SCRIPT} CONFIG RUN_DIR [--set key=value ...]
  CONFIG   the experiment YAML (docs/configs.md)
  RUN_DIR  the run directory (one per job; a requeued or resubmitted job resumes it)
Relative paths are relative to the job's working directory (the submit directory unless
sbatch --chdir says otherwise). See docs/cluster.md."
  fi
  [ -n "${SLURM_JOB_ID:-}" ] ||
    dpgnn_die "not inside a SLURM job (SLURM_JOB_ID is unset): submit this script with sbatch, or run launch/dpgnn-mpirun directly"
  local config="$1" run_dir="$2"
  shift 2
  if [ -z "$config" ] || [ -z "$run_dir" ]; then
    dpgnn_die "CONFIG (argument 1) and RUN_DIR (argument 2) must not be empty"
  fi
  DPGNN_EXTRA_ARGS=("$@")
  case "$config" in /*) ;; *) config="$PWD/$config" ;; esac
  case "$run_dir" in /*) ;; *) run_dir="$PWD/$run_dir" ;; esac
  [ -f "$config" ] || dpgnn_die "CONFIG '$config' is not a file (argument 1; relative to $PWD)"
  [ -r "$config" ] || dpgnn_die "CONFIG '$config' cannot be read"
  DPGNN_CONFIG="$config"
  DPGNN_RUN_DIR="$run_dir"

  # The dpgnn binary (see the top of this file).
  if [ -z "${DPGNN_BIN:-}" ]; then
    if [ -x "$DPGNN_HOME/${DPGNN_BUILD_DIR:-build}/src/cli/dpgnn" ]; then
      DPGNN_BIN="$DPGNN_HOME/${DPGNN_BUILD_DIR:-build}/src/cli/dpgnn"
    elif command -v dpgnn >/dev/null 2>&1; then
      DPGNN_BIN="$(command -v dpgnn)"
    else
      dpgnn_die "cannot find the dpgnn binary: build it (scripts/build.sh in $DPGNN_HOME) or set DPGNN_BIN"
    fi
  fi
  [ -x "$DPGNN_BIN" ] || dpgnn_die "DPGNN_BIN '$DPGNN_BIN' is not an executable file"
  export DPGNN_BIN DPGNN_HOME

  # Ranks per node and compute threads per rank: cores of the node / ranks on it, unless
  # DPGNN_THREADS or sbatch --cpus-per-task says otherwise (ranks x threads <= cores).
  local nodes="${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}"
  local ntasks="${SLURM_NTASKS:-1}"
  DPGNN_TASKS_PER_NODE="${SLURM_NTASKS_PER_NODE:-$(((ntasks + nodes - 1) / nodes))}"
  [[ "$DPGNN_TASKS_PER_NODE" =~ ^[0-9]+$ ]] || DPGNN_TASKS_PER_NODE=$(((ntasks + nodes - 1) / nodes))
  local threads="${DPGNN_THREADS:-${SLURM_CPUS_PER_TASK:-}}"
  if [ -z "$threads" ]; then
    local cores="${SLURM_CPUS_ON_NODE:-$(nproc)}"
    threads=$((cores / DPGNN_TASKS_PER_NODE))
    [ "$threads" -ge 1 ] || threads=1
  fi
  [[ "$threads" =~ ^[1-9][0-9]*$ ]] || dpgnn_die "threads per rank must be a positive integer, got '$threads' (DPGNN_THREADS / --cpus-per-task)"
  export OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads"
  # OpenMPI refuses to run as root unless told (containers and test clusters run as root).
  if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

  local gpus="${SLURM_GPUS_ON_NODE:-}"
  dpgnn_log "job ${SLURM_JOB_ID}${SLURM_ARRAY_TASK_ID:+ (array ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID})}" \
    "attempt $((${SLURM_RESTART_COUNT:-0} + 1)) (SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-0})" \
    "on ${SLURM_JOB_NODELIST:-$(hostname)}: $ntasks rank(s), $nodes node(s), $DPGNN_TASKS_PER_NODE per node," \
    "$threads thread(s) per rank, GPUs per node: ${gpus:-none requested}"
  if [ -n "$gpus" ] && [[ "$gpus" =~ ^[0-9]+$ ]] && [ "$gpus" != "$DPGNN_TASKS_PER_NODE" ]; then
    dpgnn_log "warning: $DPGNN_TASKS_PER_NODE rank(s) per node but $gpus GPU(s) per node: use one rank per GPU (--ntasks-per-node = --gpus-per-node)"
  fi
  dpgnn_log "config $DPGNN_CONFIG, run directory $DPGNN_RUN_DIR, binary $DPGNN_BIN"

  # The cases (top of this file).
  if [ -f "$DPGNN_RUN_DIR/summary.json" ]; then
    dpgnn_log "the run has finished already ($DPGNN_RUN_DIR/summary.json exists): nothing to do"
    exit 0
  fi
  DPGNN_TRAIN_ARGS=(train --config "$DPGNN_CONFIG" --out "$DPGNN_RUN_DIR")
  if [ -f "$DPGNN_RUN_DIR/config.yaml" ] && [ ! -f "$DPGNN_RUN_DIR/run.json" ] && [ ! -f "$DPGNN_RUN_DIR/ledger.jsonl" ]; then
    # dpgnn writes config.yaml, then run.json, and only then opens the ledger and trains: an
    # attempt killed between the first two trained nothing, and --resume would fail on the
    # missing run.json. Start afresh over it (--force never overwrites a ledger).
    DPGNN_MODE=fresh
    DPGNN_TRAIN_ARGS+=(--force)
    dpgnn_log "an earlier attempt stopped before training (config.yaml but no run.json, no ledger): starting afresh in $DPGNN_RUN_DIR (--force)"
  elif [ -f "$DPGNN_RUN_DIR/config.yaml" ]; then
    DPGNN_MODE=resume
    DPGNN_TRAIN_ARGS+=(--resume)
    local recorded=0
    [ ! -f "$DPGNN_RUN_DIR/ledger.jsonl" ] || recorded=$(grep -c '"step":' "$DPGNN_RUN_DIR/ledger.jsonl" || true)
    dpgnn_log "an earlier attempt left $DPGNN_RUN_DIR ($recorded step(s) in its ledger): resuming it from its last checkpoint"
  else
    DPGNN_MODE=fresh
    dpgnn_log "starting a fresh run in $DPGNN_RUN_DIR"
    # `sbatch -o RUN_DIR/slurm-%j.out` puts the job's log there before the job starts, and
    # dpgnn refuses a non-empty run directory. Logs alone (*.out, *.err files) are no earlier
    # run: train there with --force, which still refuses a directory holding a ledger.
    if [ -d "$DPGNN_RUN_DIR" ] && [ -n "$(ls -A "$DPGNN_RUN_DIR")" ] &&
      [ -z "$(find "$DPGNN_RUN_DIR" -mindepth 1 -maxdepth 1 ! \( -type f \( -name '*.out' -o -name '*.err' \) \) -print -quit)" ]; then
      dpgnn_log "$DPGNN_RUN_DIR holds only job logs (*.out, *.err): training there (--force)"
      DPGNN_TRAIN_ARGS+=(--force)
    fi
  fi
  DPGNN_TRAIN_ARGS+=("${DPGNN_EXTRA_ARGS[@]+"${DPGNN_EXTRA_ARGS[@]}"}")
}

# dpgnn_job_run LAUNCHER [ARGS...]: runs `LAUNCHER ARGS... train --config ... --out ...`
# (the launcher's arguments name the binary), forwards SIGTERM/SIGINT to it, and exits with
# its status.
DPGNN_LAUNCHER_PID=0
dpgnn_on_signal() {
  dpgnn_log "received SIG$1 (preemption, requeue, cancel or time limit): stopping the ranks;" \
    "the run directory keeps every step taken, and the next attempt resumes it"
  [ "$DPGNN_LAUNCHER_PID" = 0 ] || kill -TERM "$DPGNN_LAUNCHER_PID" 2>/dev/null || true
}
dpgnn_job_run() {
  local status=0
  trap 'dpgnn_on_signal TERM' TERM
  trap 'dpgnn_on_signal INT' INT
  dpgnn_log "running: $* ${DPGNN_TRAIN_ARGS[*]}"
  "$@" "${DPGNN_TRAIN_ARGS[@]}" &
  DPGNN_LAUNCHER_PID=$!
  # wait returns early (status > 128) when a trapped signal arrives: wait again for the end.
  while :; do
    status=0
    wait "$DPGNN_LAUNCHER_PID" || status=$?
    kill -0 "$DPGNN_LAUNCHER_PID" 2>/dev/null || break
  done
  trap - TERM INT
  if [ "$status" = 0 ]; then
    dpgnn_log "finished: $DPGNN_RUN_DIR/summary.json"
  else
    dpgnn_log "dpgnn exited with status $status ($DPGNN_MODE run in $DPGNN_RUN_DIR)"
  fi
  exit "$status"
}

#!/usr/bin/env bash
# A real SLURM test of the cluster/ batch scripts (issue 7): starts a private one-node SLURM
# on this machine (its own munged, slurmctld and slurmd, every file in a temporary
# directory, ports that are free), then
#   1. submits the batch script without arguments: the job fails with the usage message;
#   2. submits `sbatch -N1 --ntasks=2 cluster/single-node.sbatch CONFIG RUN_A` on a small
#      synthetic graph partitioned in 2 and checks the job COMPLETED, summary.json exists and
#      2 ranks trained;
#   3. submits the same to RUN_B, requeues it (`scontrol requeue`) once its ledger holds some
#      steps but fewer than train.max_steps, waits for the second attempt, and checks that it
#      resumed (restart count 1, the log of both attempts, "resuming"), that it ended with the
#      same steps and the same epsilon as RUN_A, and that its ledger holds every step exactly
#      once (no step lost, none recorded twice);
#   4. resubmits RUN_A from the checkout without DPGNN_HOME, with --chdir: "finished already";
#   5. runs cluster/multi-node-srun.sbatch (srun --mpi=pmix) and multi-node-mpirun.sbatch on
#      the one node with 2 ranks (the latter over a config.yaml left without run.json);
#   6. runs multi-node-srun.sbatch with an srun that lacks PMIx: exit status 2, a message;
#   7. sends SIGTERM to the batch shell alone (scancel --batch) of a third run, then
#      resubmits it (a wider model, so that the run outlasts the signal's way): the shell
#      stopped the ranks, and the run resumes to RUN_A's epsilon.
# Why the setup looks like this:
#   - The daemons of a system SLURM/munge (if any) are never touched: munged gets its own key,
#     socket and pid file, and every client command gets SLURM_CONF pointing at the generated
#     slurm.conf (never exported to this shell, so that the clean-up can find exactly the
#     processes of this test's cluster by that variable in /proc/PID/environ).
#   - No cgroups, no accounting, no systemd: proctrack/linuxproc and task/none work in a
#     container; slurmd runs with config_overrides so a 1-core machine still has 2 CPUs.
#   - A requeued job may start again only after the job credential lifetime
#     (AuthInfo cred_expire, default 120 s: slurm.conf(5)); 10 s keeps the test short, and
#     sched_interval=1 lets the scheduler notice the job as soon as it is eligible.
# Skips (exit 77) when the SLURM/munge programs are missing (scripts/install-deps.sh installs
# them as optional packages) or when not run as root (slurmd must start jobs).
#   slurm_single_node_test.sh SOURCE_DIR DPGNN_BINARY
set -euo pipefail

src="$(cd "${1:?usage: slurm_single_node_test.sh SOURCE_DIR DPGNN_BINARY}" && pwd)"
dpgnn="$(readlink -f "${2:?usage: slurm_single_node_test.sh SOURCE_DIR DPGNN_BINARY}")"
export PATH="$PATH:/usr/sbin:/sbin"
t0=$(date +%s)
say() { echo "[$(date -u +%H:%M:%S) +$(($(date +%s) - t0))s] $*"; }
# shellcheck source=tests/cluster/slurm_lib.sh
source "$src/tests/cluster/slurm_lib.sh"

slurm_skip_unless_programs "the SLURM test" munged munge slurmctld slurmd sbatch squeue scontrol sinfo mpirun
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the SLURM test starts slurmd, which must run as root to start jobs (running as $(id -un))"
  exit 77
fi
[ -x "$dpgnn" ] || { echo "FAIL: dpgnn binary '$dpgnn' is not executable"; exit 1; }
# A test started inside a SLURM job must not hand that job's variables to its own cluster.
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep '^SLURM_' || true)

tmp="$(mktemp -d /tmp/dpgnn-slurm.XXXXXX)"
chmod 755 "$tmp"  # munged wants every directory above its socket searchable by all
conf="$tmp/slurm.conf"
munged_pid="" slurmctld_pid="" slurmd_pid="" watchdog_pid=""
cleanup() {
  local rc=$?
  set +e
  slurm_stop_watchdog
  slurm_cancel_jobs
  # The daemons first (so nothing starts anew), then whatever they left behind.
  stop_pids $slurmd_pid $slurmctld_pid
  slurm_stop_rest
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
# The test's own limit (DPGNN_SLURM_TEST_LIMIT_S, default 330 s), well inside ctest's TIMEOUT (400 s): a SIGTERM from the watchdog (or
# anyone) fails the test with the logs, and the EXIT trap still stops every daemon.
limit_s="${DPGNN_SLURM_TEST_LIMIT_S:-330}"
trap 'fail "stopped by SIGTERM (the test gives up after $limit_s s)"' TERM
(sleep "$limit_s" && kill -TERM $$) &
watchdog_pid=$!

fail() {
  echo "FAIL: $*"
  for f in "$tmp"/work/*.out "$tmp"/work/runs/B/*.out; do
    [ -f "$f" ] || continue
    echo "---- job log $f"
    cat "$f"
  done
  for f in "$tmp"/log/*.log; do
    echo "---- last lines of $f"
    tail -n 40 "$f"
  done
  exit 1
}

# ---- munge ------------------------------------------------------------------------------
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/run" "$tmp/log" "$tmp/work/data"
start_munged
say "munged running (pid $munged_pid)"

# ---- slurm.conf: a block of 20 unused ports, the node with at least 2 CPUs ---------------
# The block avoids the ports in use and the ephemeral range (pick_port_block, slurm_lib.sh), and
# the daemons start again on another block if a bind fails anyway (a port taken meanwhile).
host="$(hostname -s)"
# Job ids name files outside the spool (PMIx's spmix_appdir_<uid>_<job>.<step> under TmpFS):
# TmpFS inside the test's directory, and job ids unlike another cluster's on this machine.
mkdir -p "$tmp/tmpfs"
first_job_id=$((1000 + RANDOM * 16))
cpus=$(nproc)
[ "$cpus" -ge 2 ] || cpus=2
write_conf() {
cat >"$conf" <<EOF
# Generated by tests/cluster/slurm_single_node_test.sh: a one-node SLURM for one test.
ClusterName=dpgnntest
SlurmctldHost=$host(127.0.0.1)
EOF
slurm_conf_common "$tmp/spool" "$tmp/run/slurmd.pid" "$tmp/log/slurmd.log" >>"$conf"
cat >>"$conf" <<EOF
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}
: >"$tmp/plugstack.conf"

# ---- the daemons --------------------------------------------------------------------------
bind_failed() { grep -qs "Address already in use" "$tmp"/log/slurm*.log "$tmp"/log/slurm*.out; }
start_daemons() {  # returns 1 when a daemon could not bind its port; fails the test otherwise
  local i state=""
  if ! start_slurmctld_and_wait; then
    bind_failed && return 1
    fail "slurmctld (pid $slurmctld_pid) does not answer on port $base"
  fi
  sl slurmd -D -f "$conf" -N "$host" >"$tmp/log/slurmd.out" 2>&1 &
  slurmd_pid=$!
  for ((i = 0; i < 150; i++)); do
    state="$(sl sinfo -h -n "$host" -o %T 2>/dev/null || true)"
    [ "$state" = idle ] && return 0
    if ! kill -0 "$slurmd_pid" 2>/dev/null; then
      bind_failed && return 1
      fail "slurmd exited: $(cat "$tmp/log/slurmd.out")"
    fi
    sleep 0.2
  done
  fail "node $host is '$state', not idle, after 30 s"
}
for ((attempt = 1; ; attempt++)); do
  base="$(pick_port_block)" || fail "no block of 20 unused TCP ports found"
  write_conf
  start_daemons && break
  [ "$attempt" -lt 5 ] || fail "the daemons could not bind their ports in 5 blocks (last $base-$((base + 19)))"
  say "a port in $base-$((base + 19)) was taken (Address already in use): another block"
  stop_pids $slurmd_pid $slurmctld_pid
  slurmd_pid="" slurmctld_pid=""
  mkdir -p "$tmp/log/attempt$attempt" "$tmp/state.attempt$attempt"
  mv "$tmp"/log/slurm*.log "$tmp"/log/slurm*.out "$tmp/log/attempt$attempt/" 2>/dev/null || true
  mv "$tmp"/state/* "$tmp/state.attempt$attempt/" 2>/dev/null || true
done
say "slurmctld (pid $slurmctld_pid) and slurmd (pid $slurmd_pid) running on ports $base-$((base + 19)); node $host idle with $cpus CPUs"

# ---- data and config ----------------------------------------------------------------------
cd "$tmp/work"
"$dpgnn" synth --nodes 8000 --avg-degree 10 --classes 4 --features 64 --homophily 0.8 --seed 1 \
  --out data/graph.h5 >data/synth.log 2>&1 || fail "dpgnn synth: $(cat data/synth.log)"
"$dpgnn" partition --dataset data/graph.h5 --parts 2 --seed 1 --out data/graph.part2.h5 \
  >data/partition.log 2>&1 || fail "dpgnn partition: $(cat data/partition.log)"
max_steps=300
cat >config.yaml <<EOF
# The SLURM test's run: DRW on a small synthetic graph, noise calibrated to epsilon 4 over
# $max_steps steps, a checkpoint every 20 steps.
method: drw
data:
  dataset: data/graph.h5
  partition: data/graph.part2.h5
model:
  arch: gcn
  layers: 2
  hidden: 128
train:
  batch_size: 256
  lr: 0.05
  max_steps: $max_steps
  seed: 1
  eval_every: 0
  checkpoint_every: 20
privacy:
  target_epsilon: 4.0
  delta: 1.0e-5
  clip_norm: 1.0
sampler:
  walk_length: 4
EOF
say "dataset (8000 nodes, 2 parts) and config ready in $tmp/work"

# Every job of the test: the repository and the binary travel in the environment (sbatch
# exports it), as docs/cluster.md tells users to do.
export DPGNN_HOME="$src" DPGNN_BIN="$dpgnn"
log_of() { if [ "$1" = run-b ]; then echo "$tmp/work/runs/B/run-b.out"; else echo "$tmp/work/$1.out"; fi; }
script="$src/cluster/single-node.sbatch"

# ---- 1. no arguments: a usage error ----------------------------------------------------------
id=$(submit usage -N1 --ntasks=1 "$script")
st=$(wait_done "$id" 60)
[ "$st" = FAILED ] || fail "job $id without arguments: state $st, expected FAILED"
[ "$(job_field "$id" ExitCode)" = "2:0" ] || fail "job $id without arguments: exit code $(job_field "$id" ExitCode), expected 2:0"
grep -q "usage: sbatch" usage.out || fail "job $id without arguments: no usage message in its log"
say "1. job $id without arguments failed with exit code 2 and the usage message"

# ---- 2. an uninterrupted run ---------------------------------------------------------------------
id_a=$(submit run-a -N1 --ntasks=2 "$script" config.yaml runs/A)
say "2. submitted job $id_a: 2 ranks, config.yaml -> runs/A"
st=$(wait_done "$id_a" 150)
[ "$st" = COMPLETED ] || fail "job $id_a: state $st, expected COMPLETED"
[ -f runs/A/summary.json ] || fail "job $id_a: runs/A/summary.json missing"
[ "$(json runs/A/summary.json ranks)" = 2 ] || fail "runs/A/summary.json: ranks $(json runs/A/summary.json ranks), expected 2"
[ "$(json runs/A/run.json ranks)" = 2 ] || fail "runs/A/run.json: ranks $(json runs/A/run.json ranks), expected 2"
steps_a=$(json runs/A/summary.json steps)
eps_a=$(json runs/A/summary.json epsilon)
[ "$steps_a" -gt 50 ] || fail "runs/A: only $steps_a steps (expected the budget to allow most of $max_steps)"
say "2. job $id_a COMPLETED: 2 ranks, $steps_a steps, epsilon $eps_a"

# ---- 3. a run requeued in the middle -------------------------------------------------------------
# Its log goes into its run directory (docs/cluster.md: sbatch does not create the directory).
mkdir -p runs/B
id_b=$(submit run-b -N1 --ntasks=2 "$script" config.yaml runs/B)
say "3. submitted job $id_b: 2 ranks, config.yaml -> runs/B, log runs/B/run-b.out; requeueing it once its ledger has 30 steps"
wait_ledger_steps runs/B 30 "$id_b"
sl scontrol requeue "$id_b" || fail "scontrol requeue $id_b failed"
say "3. requeued job $id_b with $recorded steps in runs/B/ledger.jsonl"
st=$(wait_done "$id_b" 150)
[ "$st" = COMPLETED ] || fail "job $id_b after the requeue: state $st, expected COMPLETED"
[ "$(job_field "$id_b" Restarts)" = 1 ] || fail "job $id_b: Restarts=$(job_field "$id_b" Restarts), expected 1"
[ "$(grep -c 'dpgnn-job: job .* attempt' runs/B/run-b.out)" = 2 ] || fail "run-b.out does not hold the headers of 2 attempts"
grep -q "attempt 2 (SLURM_RESTART_COUNT=1)" runs/B/run-b.out || fail "run-b.out: no second attempt with SLURM_RESTART_COUNT=1"
grep -q "holds only job logs" runs/B/run-b.out || fail "run-b.out: the first attempt did not train beside its log (--force)"
grep -q "resuming it from its last checkpoint" runs/B/run-b.out || fail "run-b.out: the second attempt did not resume"
grep -q "resuming after step" runs/B/run-b.out || fail "run-b.out: dpgnn did not report resuming from a checkpoint"
[ -f runs/B/summary.json ] || fail "job $id_b: runs/B/summary.json missing"
# What the first attempt left: the second attempt's header counts the ledger's steps.
stopped_at=$(sed -n 's/.*an earlier attempt left .* (\([0-9]*\) step(s) in its ledger).*/\1/p' runs/B/run-b.out | head -n1)
[ -n "$stopped_at" ] || fail "run-b.out: the second attempt does not say how many steps the first one left"
steps_b=$(json runs/B/summary.json steps)
eps_b=$(json runs/B/summary.json epsilon)
[ "$stopped_at" -lt "$steps_b" ] || fail "the first attempt of job $id_b recorded $stopped_at of $steps_b steps: it was not interrupted"
[ "$steps_b" = "$steps_a" ] || fail "runs/B: $steps_b steps, runs/A: $steps_a (a resumed run must take the same steps)"
"$py" - "$eps_a" "$eps_b" <<'EOF' || fail "runs/B: epsilon $eps_b differs from runs/A's $eps_a"
import sys
a, b = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if abs(a - b) <= 1e-9 * abs(a) else 1)
EOF
"$py" - runs/B/ledger.jsonl "$steps_b" <<'EOF' || fail "runs/B/ledger.jsonl does not hold every step exactly once"
import json, sys
steps = [j["step"] for j in map(json.loads, open(sys.argv[1])) if "step" in j]
want = list(range(1, int(sys.argv[2]) + 1))  # ledger format 3 numbers the steps from 1
if steps != want:
    print(f"ledger steps: {len(steps)} lines, first {steps[:3]}, last {steps[-3:]}; expected 1..{len(want)}")
    sys.exit(1)
EOF
say "3. job $id_b COMPLETED after a requeue at step $stopped_at: $steps_b steps, epsilon $eps_b (uninterrupted: $eps_a), ledger complete"

# ---- 4. resubmitting a finished run changes nothing ------------------------------------------
# Submitted from the checkout without DPGNN_HOME (the script finds the repository as the
# submit directory) with --chdir to this work directory (CONFIG and RUN_DIR relative to it).
sum_before=$(cksum <runs/A/summary.json)
id=$(cd "$src" && env -u DPGNN_HOME SLURM_CONF="$conf" sbatch --parsable -J again-a -o "$tmp/work/again-a.out" \
  --chdir "$tmp/work" -N1 --ntasks=2 cluster/single-node.sbatch config.yaml runs/A | cut -d';' -f1)
st=$(wait_done "$id" 60)
[ "$st" = COMPLETED ] || fail "job $id (runs/A again): state $st, expected COMPLETED"
grep -q "the run has finished already ($tmp/work/runs/A/summary.json" again-a.out ||
  fail "again-a.out: no 'finished already' message for $tmp/work/runs/A"
[ "$(cksum <runs/A/summary.json)" = "$sum_before" ] || fail "resubmitting runs/A changed its summary.json"
say "4. job $id on the finished runs/A (submitted from the checkout, --chdir here): nothing to do, summary unchanged"

# ---- 5. the multi-node scripts on this one node: srun --mpi=pmix, and mpirun in the allocation --
# The mpirun job finds what an attempt killed between dpgnn's first two files leaves (a
# config.yaml, no run.json, no ledger): it must start afresh, not fail on --resume.
short=(--set train.max_steps=20)
mkdir -p runs/mpirun
echo "# an attempt killed before run.json" >runs/mpirun/config.yaml
for kind in srun mpirun; do
  id=$(submit "multi-$kind" -N1 --ntasks=2 "$src/cluster/multi-node-$kind.sbatch" config.yaml "runs/$kind" "${short[@]}")
  st=$(wait_done "$id" 90)
  [ "$st" = COMPLETED ] || fail "job $id (multi-node-$kind.sbatch): state $st, expected COMPLETED"
  [ "$(json "runs/$kind/summary.json" ranks)" = 2 ] || fail "runs/$kind/summary.json: not 2 ranks"
  [ "$(json "runs/$kind/summary.json" steps)" = 20 ] || fail "runs/$kind/summary.json: not the 20 steps of --set train.max_steps=20"
  if [ "$kind" = mpirun ]; then
    grep -q "an earlier attempt stopped before training" multi-mpirun.out ||
      fail "multi-mpirun.out: the config.yaml without run.json was not started afresh"
  fi
  say "5. job $id (multi-node-$kind.sbatch) COMPLETED: 2 ranks, 20 steps"
done

# ---- 6. multi-node-srun.sbatch where Slurm has no PMIx: a clear error -------------------------
# An srun whose plugin list lacks pmix, first on the job's PATH (sbatch exports PATH).
mkdir -p "$tmp/nopmix"
cat >"$tmp/nopmix/srun" <<'EOF_SRUN'
#!/bin/sh
[ "$1" = --mpi=list ] && printf 'MPI plugin types are...\n\tnone\n\tpmi2\n' && exit 0
echo "fake srun: only --mpi=list" >&2
exit 1
EOF_SRUN
chmod +x "$tmp/nopmix/srun"
id=$(PATH="$tmp/nopmix:$PATH" submit nopmix -N1 --ntasks=2 "$src/cluster/multi-node-srun.sbatch" config.yaml runs/nopmix)
st=$(wait_done "$id" 60)
[ "$st" = FAILED ] || fail "job $id (no PMIx): state $st, expected FAILED"
[ "$(job_field "$id" ExitCode)" = "2:0" ] || fail "job $id (no PMIx): exit code $(job_field "$id" ExitCode), expected 2:0"
grep -q "this Slurm has no PMIx plugin" nopmix.out || fail "nopmix.out: no message about the missing PMIx plugin"
[ ! -e runs/nopmix ] || fail "job $id (no PMIx) created runs/nopmix"
say "6. job $id (multi-node-srun.sbatch without PMIx) failed with exit code 2 and the message"
# ---- 7. SIGTERM to the batch shell alone, then a resubmission by hand ------------------------
# `scancel --batch --signal=TERM` signals only the batch script: it must stop the ranks itself
# (cluster/common.sh forwards the signal), and the same sbatch command must then continue the
# run to the same end as an uninterrupted one.
# The signal takes a second or two to reach the ranks through slurmctld, slurmstepd, the
# shell and mpirun: a wider model (4x the compute per step) keeps the run going meanwhile.
# The epsilon does not depend on the model (same steps, batches and noise multiplier).
wide=(--set model.hidden=512)
id=$(submit run-c -N1 --ntasks=2 "$script" config.yaml runs/C "${wide[@]}")
recorded=0
for ((i = 0; i < 2400; i++)); do
  [ ! -f runs/C/ledger.jsonl ] || recorded=$(grep -c '"step":' runs/C/ledger.jsonl || true)
  [ "$recorded" -lt 10 ] || break
  sleep 0.05
done
[ "$recorded" -ge 10 ] || fail "job $id: its ledger has $recorded steps after 120 s"
sl scancel --batch --signal=TERM "$id" || fail "scancel --batch --signal=TERM $id failed"
st=$(wait_done "$id" 60)
[ "$st" = FAILED ] || [ "$st" = CANCELLED ] || fail "job $id after SIGTERM to its batch shell: state $st"
grep -q "received SIGTERM" run-c.out || fail "run-c.out: the batch shell did not report the SIGTERM"
[ ! -f runs/C/summary.json ] || fail "job $id wrote runs/C/summary.json although it was stopped"
stopped_c=$(grep -c '"step":' runs/C/ledger.jsonl || true)
[ "$stopped_c" -lt "$steps_a" ] || fail "job $id: the SIGTERM came too late ($stopped_c of $steps_a steps)"
id2=$(submit run-c -N1 --ntasks=2 "$script" config.yaml runs/C "${wide[@]}")
st2=$(wait_done "$id2" 150)
[ "$st2" = COMPLETED ] || fail "job $id2 (resubmitted runs/C): state $st2, expected COMPLETED"
grep -q "an earlier attempt left .* ($stopped_c step(s) in its ledger)" run-c.out ||
  fail "run-c.out: the resubmitted job did not resume the $stopped_c steps"
[ "$(json runs/C/summary.json steps)" = "$steps_a" ] || fail "runs/C: not the $steps_a steps of runs/A"
"$py" - "$eps_a" "$(json runs/C/summary.json epsilon)" <<'EOF' || fail "runs/C: epsilon differs from runs/A's $eps_a"
import sys
a, b = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if abs(a - b) <= 1e-9 * abs(a) else 1)
EOF
say "7. job $id stopped by SIGTERM to its batch shell at step $stopped_c ($st); job $id2 resumed runs/C to $steps_a steps, the same epsilon"
say "PASS"

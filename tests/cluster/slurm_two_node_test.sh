#!/usr/bin/env bash
# A two-node SLURM on two simulated hosts (issue 23): cluster/simulated-hosts.sh makes two
# network namespaces with their own hostnames; one slurmd runs on each (slurmd -N HOST inside
# the host), slurmctld and munged in this machine's own namespace (the bridge's address).
# Then, with `sbatch -N2 --ntasks-per-node=2` (4 ranks, 2 per node, DRW with the noise pinned):
#   1. cluster/multi-node-mpirun.sbatch (mpirun in the allocation, its daemon on node 2
#      started with srun) completes; run.json names node 1 for ranks 0-1 and node 2 for 2-3;
#   2. cluster/multi-node-srun.sbatch (srun --mpi=pmix) completes with the same hosts, and
#      its ledger.jsonl and parameters are identical to those of job 1;
#   3. multi-node-mpirun.sbatch again, requeued (`scontrol requeue`) once its ledger holds
#      some steps: the second attempt resumes (restart count 1, "resuming after step"), and
#      the run ends with job 1's steps (each recorded once) and job 1's parameters.
# The daemon set-up follows tests/cluster/slurm_single_node_test.sh (its own munged, key,
# ports, state; SLURM_CONF never exported; clean-up by pid); what differs: two NodeName lines
# whose NodeAddr are the hosts' addresses, SlurmdSpoolDir/PidFile/LogFile per node (%n), and
# slurmctld reached at the bridge's address.
# Skips (77) without the SLURM/munge/MPI programs, without root, or where namespaces cannot be
# made.
#   slurm_two_node_test.sh SOURCE_DIR DPGNN_BINARY MODEL_DIGEST_BINARY
set -euo pipefail

src="$(cd "${1:?usage: slurm_two_node_test.sh SOURCE_DIR DPGNN_BINARY MODEL_DIGEST}" && pwd)"
dpgnn="$(readlink -f "${2:?usage: slurm_two_node_test.sh SOURCE_DIR DPGNN_BINARY MODEL_DIGEST}")"
digest="$(readlink -f "${3:?usage: slurm_two_node_test.sh SOURCE_DIR DPGNN_BINARY MODEL_DIGEST}")"
export PATH="$PATH:/usr/sbin:/sbin"
t0=$(date +%s)
say() { echo "[$(date -u +%H:%M:%S) +$(($(date +%s) - t0))s] $*"; }
# shellcheck source=tests/cluster/simulated_hosts_lib.sh
source "$src/tests/cluster/simulated_hosts_lib.sh"

missing=()
for p in munged munge slurmctld slurmd sbatch squeue scontrol sinfo srun mpirun; do
  command -v "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "SKIP: the two-node SLURM test needs ${missing[*]} (Debian: apt-get install slurmctld slurmd slurm-client munge openmpi-bin; scripts/install-deps.sh tries)"
  exit 77
fi
sim_hosts_skip_unless_possible
[ -x "$dpgnn" ] || { echo "FAIL: dpgnn binary '$dpgnn' is not executable"; exit 1; }
[ -x "$digest" ] || { echo "FAIL: model_digest '$digest' is not executable"; exit 1; }
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM_|OMPI_MCA_)' || true)

tmp="$(mktemp -d /tmp/dpgnn-slurm2.XXXXXX)"
chmod 755 "$tmp"  # munged wants every directory above its socket searchable by all
conf="$tmp/slurm.conf"
munged_pid="" slurmctld_pid="" watchdog_pid=""
sl() { SLURM_CONF="$conf" "$@"; }
sim="$src/cluster/simulated-hosts.sh"

cluster_pids() {  # every process of this test's cluster (SLURM_CONF=$conf in its environment)
  local d pid
  for d in /proc/[0-9]*; do
    pid="${d#/proc/}"
    [ "$pid" != $$ ] || continue
    { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$conf" && echo "$pid"
  done
  return 0
}
stop_pids() {  # TERM, up to 10 s, then KILL
  local pids=("$@") left i
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    left=()
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
    [ ${#left[@]} -gt 0 ] || return 0
    sleep 0.2
  done
  kill -KILL "${left[@]}" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  set +e
  local jobs=() left=()
  [ -z "$watchdog_pid" ] || kill "$watchdog_pid" $(pgrep -P "$watchdog_pid") 2>/dev/null
  if [ -n "$slurmctld_pid" ]; then
    mapfile -t jobs < <(sl squeue -h -o %A 2>/dev/null)
    if [ ${#jobs[@]} -gt 0 ]; then
      sl scancel --full --quiet "${jobs[@]}" >/dev/null 2>&1
      sleep 1
    fi
  fi
  # The hosts (slurmd, job steps and ranks on them), then slurmctld, then what is left.
  sim_hosts_down
  stop_pids $slurmctld_pid
  mapfile -t left < <(cluster_pids)
  stop_pids "${left[@]+"${left[@]}"}"
  stop_pids $munged_pid
  if [ -n "${KEEP_SLURM_TEST_DIR:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
limit_s="${DPGNN_SLURM_TEST_LIMIT_S:-300}"
trap 'fail "stopped by SIGTERM (the test gives up after $limit_s s)"' TERM
(sleep "$limit_s" && kill -TERM $$) >/dev/null 2>&1 &
watchdog_pid=$!

fail() {
  echo "FAIL: $*"
  for f in "$tmp"/work/*.out "$tmp"/work/runs/*/*.out; do
    [ -f "$f" ] || continue
    echo "---- job log $f"
    cat "$f"
  done
  for f in "$tmp"/log/*.log; do
    [ -f "$f" ] || continue
    echo "---- last lines of $f"
    tail -n 40 "$f"
  done
  exit 1
}

# ---- the hosts ---------------------------------------------------------------------------------
sim_hosts_up 2
h1="${SIM_HOSTS[0]}" h2="${SIM_HOSTS[1]}"
say "hosts $h1 ($SIM_SUBNET.11) and $h2 ($SIM_SUBNET.12) up; this machine is $SIM_SUBNET.1 on their bridge"

# ---- munge ---------------------------------------------------------------------------------------
# A file-system socket: the hosts' processes reach it (network namespaces do not scope it).
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/run" "$tmp/log" "$tmp/tmpfs" "$tmp/work"
chmod 755 "$tmp/munge"
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 600 "$tmp/munge/munge.key"
munged --foreground --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.socket" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/seed" \
  >"$tmp/log/munged.out" 2>&1 &
munged_pid=$!
for ((i = 0; i < 50; i++)); do [ -S "$tmp/munge/munge.socket" ] && break; sleep 0.1; done
munge -n -S "$tmp/munge/munge.socket" | unmunge -S "$tmp/munge/munge.socket" >/dev/null ||
  fail "munged (pid $munged_pid) does not answer: $(cat "$tmp/log/munged.out")"

# ---- slurm.conf -----------------------------------------------------------------------------------
# slurmctld binds its port on this machine (every address): a port no socket here holds, out
# of the ephemeral range (as in slurm_single_node_test.sh). slurmd and srun bind inside the
# hosts' own network namespaces, where nothing else runs.
ports_in_use() {
  local f addr
  for f in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$f" ] || continue
    while read -r _ addr _; do [[ "$addr" == *:* ]] && echo $((16#${addr##*:})); done <"$f"
  done
  return 0
}
pick_port_block() {
  local lo=10000 hi=$((65535 - 20)) eph_lo=32768 eph_hi=60999 b p try
  read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  if [ "$eph_lo" -ge $((lo + 2000)) ]; then hi=$((eph_lo - 20))
  elif [ "$eph_hi" -le $((hi - 2000)) ]; then lo=$((eph_hi + 1))
  fi
  local -A used=()
  while read -r p; do used[$p]=1; done < <(ports_in_use)
  for ((try = 0; try < 200; try++)); do
    b=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo)))
    for ((p = b; p < b + 20; p++)); do [ -z "${used[$p]:-}" ] || continue 2; done
    echo "$b"
    return 0
  done
  return 1
}
ctl_host="$(hostname -s)"
first_job_id=$((1000 + RANDOM * 16))
write_conf() {
cat >"$conf" <<EOF
# Generated by tests/cluster/slurm_two_node_test.sh: a two-node SLURM on simulated hosts.
ClusterName=dpgnntest2
SlurmctldHost=$ctl_host($SIM_SUBNET.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SrunPortRange=$((base + 2))-$((base + 19))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket,cred_expire=10
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
TmpFS=$tmp/tmpfs
FirstJobId=$first_job_id
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.%n.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$tmp/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
JobRequeue=1
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
MinJobAge=600
InactiveLimit=0
NodeName=$h1 NodeAddr=$SIM_SUBNET.11 CPUs=2 State=UNKNOWN
NodeName=$h2 NodeAddr=$SIM_SUBNET.12 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$h1,$h2 Default=YES MaxTime=INFINITE State=UP
EOF
}
: >"$tmp/plugstack.conf"
mkdir -p "$tmp/spool/$h1" "$tmp/spool/$h2"

# ---- the daemons: slurmctld here, one slurmd on each host --------------------------------------------
bind_failed() { grep -qs "Address already in use" "$tmp"/log/slurmctld.log "$tmp"/log/slurmctld.out; }
start_slurmctld() {  # 1 when its port was taken meanwhile
  local i
  sl slurmctld -D -i -f "$conf" >"$tmp/log/slurmctld.out" 2>&1 &
  slurmctld_pid=$!
  for ((i = 0; i < 100; i++)); do
    sl scontrol ping 2>/dev/null | grep -q UP && return 0
    kill -0 "$slurmctld_pid" 2>/dev/null || break
    sleep 0.2
  done
  bind_failed && return 1
  fail "slurmctld (pid $slurmctld_pid) does not answer on $SIM_SUBNET.1:$base"
}
for ((attempt = 1; ; attempt++)); do
  base="$(pick_port_block)" || fail "no block of 20 unused TCP ports found"
  write_conf
  start_slurmctld && break
  [ "$attempt" -lt 5 ] || fail "slurmctld could not bind its port in 5 tries (last $base)"
  stop_pids $slurmctld_pid
  slurmctld_pid=""
  rm -rf "$tmp/state" && mkdir -p "$tmp/state"
  mv "$tmp/log/slurmctld.log" "$tmp/log/slurmctld.attempt$attempt.log" 2>/dev/null || true
done
for h in "$h1" "$h2"; do
  # On the host: its network (NodeAddr), its hostname (slurmd -N must be it), its /etc/hosts.
  # TmpFS must differ between nodes (PMIx makes spmix_appdir_<uid>_<job>.<step> there, on
  # each node) and slurm.conf has one: each slurmd sees its own directory at that path,
  # bind-mounted in the mount namespace `exec` gives it.
  mkdir -p "$tmp/tmpfs.$h"
  SLURM_CONF="$conf" "$sim" exec "$h" /bin/sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
    "$tmp/tmpfs.$h" "$tmp/tmpfs" slurmd -D -f "$conf" -N "$h" >"$tmp/log/slurmd.$h.out" 2>&1 &
done
for ((i = 0; i < 150; i++)); do
  idle="$(sl sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | paste -sd, || true)"
  [ "$idle" = "$h1,$h2" ] && break
  sleep 0.2
done
[ "$idle" = "$h1,$h2" ] || fail "the nodes are not both idle after 30 s: $(sl sinfo -N -h -o '%N %T' 2>&1 | paste -sd';')"
say "slurmctld (pid $slurmctld_pid, port $base) and slurmd on $h1 and $h2: both nodes idle"

# ---- data and config -------------------------------------------------------------------------------
cd "$tmp/work"
mkdir -p data
"$dpgnn" synth --nodes 4000 --avg-degree 8 --classes 4 --features 32 --homophily 0.8 --seed 1 \
  --out data/graph.h5 >data/synth.log 2>&1 || fail "dpgnn synth: $(cat data/synth.log)"
"$dpgnn" partition --dataset data/graph.h5 --parts 4 --seed 1 --out data/graph.part4.h5 \
  >data/partition.log 2>&1 || fail "dpgnn partition: $(cat data/partition.log)"
max_steps=120
cat >config.yaml <<EOF
# DRW on 4 ranks (2 per node), noise and batches pinned (privacy.noise_seed): every job of
# the test must end with the same ledger and parameters.
method: drw
data: {dataset: data/graph.h5, partition: data/graph.part4.h5}
model: {hidden: 64}
train: {batch_size: 128, max_steps: $max_steps, seed: 3, eval_every: 0, checkpoint_every: 10, threads: 1}
privacy: {noise_multiplier: 1.5, noise_seed: 7, delta: 1.0e-5}
EOF

export DPGNN_HOME="$src" DPGNN_BIN="$dpgnn" DPGNN_PROGRESS=0
submit() {  # submit NAME ARGS...: prints the job id (log NAME.out)
  local name="$1"
  shift
  sl sbatch --parsable -J "$name" -o "$tmp/work/$name.out" "$@" | cut -d';' -f1
}
job_field() { sl scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
wait_done() {  # wait_done JOBID TIMEOUT_S: prints the final state
  local id="$1" limit="$2" s="" i
  for ((i = 0; i < limit * 5; i++)); do
    s="$(job_field "$id" JobState)"
    case "$s" in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
        echo "$s"
        return 0
        ;;
    esac
    sleep 0.2
  done
  echo "TIMEOUT_WAITING($s)"
}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
json() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$1" "$2"; }
hosts_of() { "$py" -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["starts"][int(sys.argv[2])]["hosts"]))' "$1" "$2"; }
want_hosts="$h1,$h1,$h2,$h2"
shape=(-N2 --ntasks-per-node=2)

# ---- 1. multi-node-mpirun.sbatch on 2 nodes ----------------------------------------------------------
id=$(submit mpirun -N2 --ntasks-per-node=2 "$src/cluster/multi-node-mpirun.sbatch" config.yaml runs/M)
st=$(wait_done "$id" 120)
[ "$st" = COMPLETED ] || fail "job $id (multi-node-mpirun.sbatch -N2): state $st, expected COMPLETED"
[ "$(job_field "$id" NumNodes)" = 2 ] || fail "job $id ran on $(job_field "$id" NumNodes) node(s), expected 2"
[ "$(json runs/M/summary.json ranks)" = 4 ] || fail "runs/M/summary.json: not 4 ranks"
steps_m="$(json runs/M/summary.json steps)"
[ "$steps_m" = "$max_steps" ] || fail "runs/M: $steps_m steps, expected $max_steps"
[ "$(hosts_of runs/M/run.json 0)" = "$want_hosts" ] || fail "runs/M/run.json: hosts $(hosts_of runs/M/run.json 0), expected $want_hosts"
"$digest" runs/M/model.h5 >M.params || fail "model_digest runs/M/model.h5"
say "1. job $id (multi-node-mpirun.sbatch ${shape[*]}) COMPLETED: $steps_m steps, ranks on $want_hosts"

# ---- 2. multi-node-srun.sbatch (srun --mpi=pmix) on 2 nodes --------------------------------------------
id=$(submit srun "${shape[@]}" "$src/cluster/multi-node-srun.sbatch" config.yaml runs/S)
st=$(wait_done "$id" 120)
[ "$st" = COMPLETED ] || fail "job $id (multi-node-srun.sbatch -N2): state $st, expected COMPLETED"
[ "$(hosts_of runs/S/run.json 0)" = "$want_hosts" ] || fail "runs/S/run.json: hosts $(hosts_of runs/S/run.json 0), expected $want_hosts"
cmp -s runs/M/ledger.jsonl runs/S/ledger.jsonl || fail "runs/S/ledger.jsonl differs from runs/M's: $(diff runs/M/ledger.jsonl runs/S/ledger.jsonl | head -n 6)"
"$digest" runs/S/model.h5 >S.params || fail "model_digest runs/S/model.h5"
cmp -s M.params S.params || fail "runs/S's parameters differ from runs/M's: $(diff M.params S.params | head -n 6)"
say "2. job $id (multi-node-srun.sbatch ${shape[*]}) COMPLETED: ranks on $want_hosts, ledger and parameters identical to job 1's"

# ---- 3. a requeue on 2 nodes resumes --------------------------------------------------------------------
id=$(submit requeue "${shape[@]}" "$src/cluster/multi-node-mpirun.sbatch" config.yaml runs/B)
recorded=0
for ((i = 0; i < 2400; i++)); do
  [ ! -f runs/B/ledger.jsonl ] || recorded=$(grep -c '"step":' runs/B/ledger.jsonl || true)
  [ "$recorded" -lt 15 ] || break
  if [ $((i % 20)) = 0 ]; then
    st=$(job_field "$id" JobState)
    [ "$st" = PENDING ] || [ "$st" = RUNNING ] || fail "job $id ended ($st) before it could be requeued"
  fi
  sleep 0.05
done
[ "$recorded" -ge 15 ] || fail "job $id: its ledger has $recorded steps after 120 s"
sl scontrol requeue "$id" || fail "scontrol requeue $id failed"
say "3. requeued job $id with $recorded steps in runs/B/ledger.jsonl"
st=$(wait_done "$id" 150)
[ "$st" = COMPLETED ] || fail "job $id after the requeue: state $st, expected COMPLETED"
[ "$(job_field "$id" Restarts)" = 1 ] || fail "job $id: Restarts=$(job_field "$id" Restarts), expected 1"
grep -q "attempt 2 (SLURM_RESTART_COUNT=1)" requeue.out || fail "requeue.out: no second attempt"
grep -q "resuming it from its last checkpoint" requeue.out || fail "requeue.out: the second attempt did not resume"
grep -q "resuming after step" requeue.out || fail "requeue.out: dpgnn did not report resuming from a checkpoint"
stopped_at=$(sed -n 's/.*an earlier attempt left .* (\([0-9]*\) step(s) in its ledger).*/\1/p' requeue.out | head -n1)
[ -n "$stopped_at" ] && [ "$stopped_at" -lt "$steps_m" ] || fail "the first attempt of job $id was not interrupted (${stopped_at:-?} steps)"
[ "$(json runs/B/summary.json steps)" = "$steps_m" ] || fail "runs/B: not the $steps_m steps of runs/M"
[ "$(hosts_of runs/B/run.json 1)" = "$want_hosts" ] || fail "runs/B/run.json: the resumed start's hosts are $(hosts_of runs/B/run.json 1)"
"$py" - runs/M/ledger.jsonl runs/B/ledger.jsonl <<'EOF' || fail "runs/B's ledger steps differ from runs/M's"
import json, sys
def steps(p):
    return [j for j in map(json.loads, open(p)) if "step" in j]
m, b = steps(sys.argv[1]), steps(sys.argv[2])
if m != b:
    print(f"runs/M: {len(m)} step records, runs/B: {len(b)} (steps {[j['step'] for j in b][:3]}...{[j['step'] for j in b][-3:]})")
    sys.exit(1)
EOF
"$digest" runs/B/model.h5 >B.params || fail "model_digest runs/B/model.h5"
cmp -s M.params B.params || fail "runs/B's parameters differ from runs/M's: $(diff M.params B.params | head -n 6)"
say "3. job $id COMPLETED after a requeue at step $stopped_at: every step once, the ledger's steps and the parameters of job 1"
say "PASS"

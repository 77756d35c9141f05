# shellcheck shell=bash disable=SC2154  # $conf, $tmp, $base, ... are the sourcing test's
# Sourced by the SLURM tests (slurm_single_node_test.sh, slurm_two_node_test.sh): what their
# private SLURM clusters share. Each test keeps its own slurm.conf node lines, daemon start-up
# order, fail() (which logs to print) and checks.
#   slurm_skip_unless_programs WHAT PROG...  exit 77 naming the missing programs
#   sl CMD...                    a SLURM client command against this test's cluster ($conf)
#   cluster_pids                 the pids with SLURM_CONF=$conf in their environment
#   stop_pids PID...             TERM, up to 10 s, then KILL
#   slurm_stop_watchdog          the watchdog ($watchdog_pid) and its sleep
#   slurm_cancel_jobs            scancel every job of the cluster (when slurmctld was started)
#   slurm_stop_rest              what is left of the cluster, then munged; removes $tmp
#                                (unless KEEP_SLURM_TEST_DIR)
#   start_munged                 munged with its own key and socket in $tmp/munge; fails the test
#                                when it does not answer
#   pick_port_block              the first port of 20 unused ones, out of the ephemeral range
#   slurm_conf_common SPOOL SLURMD_PIDFILE SLURMD_LOGFILE  slurm.conf's lines from SlurmctldPort
#                                to InactiveLimit (uses $base, $tmp, $first_job_id)
#   start_slurmctld_and_wait     starts slurmctld (sets slurmctld_pid); 0 once it answers, 1
#                                when it exits or 20 s pass without an answer
#   submit NAME ARGS...          sbatch -J NAME, log $(log_of NAME); prints the job id
#   job_field JOBID FIELD, wait_done JOBID TIMEOUT_S, json FILE KEY, $py
#   wait_ledger_steps RUN_DIR N JOBID  until RUN_DIR/ledger.jsonl holds N steps (sets recorded);
#                                fails the test when the job ends first or after 120 s
# Needs: $conf, $tmp, munged_pid/slurmctld_pid/watchdog_pid, and fail() and log_of() from the test.

slurm_skip_unless_programs() {  # slurm_skip_unless_programs WHAT PROG...
  local what="$1" p missing=()
  shift
  for p in "$@"; do
    command -v "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "SKIP: $what needs ${missing[*]} (Debian: apt-get install slurmctld slurmd slurm-client munge openmpi-bin; scripts/install-deps.sh tries)"
    exit 77
  fi
}

sl() { SLURM_CONF="$conf" "$@"; }  # a SLURM client command against this test's cluster

# The processes of this test's cluster: the daemons and everything they started (job steps
# and ranks inherit SLURM_CONF=$conf). By pid, never by name.
cluster_pids() {
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

# ---- the clean-up's pieces (the EXIT trap of each test, with `set +e`) ------------------------
slurm_stop_watchdog() {  # the watchdog and its sleep (which would hold ctest's output pipe open)
  local children=()
  [ -n "$watchdog_pid" ] || return 0
  mapfile -t children < <(pgrep -P "$watchdog_pid")
  kill "$watchdog_pid" "${children[@]+"${children[@]}"}" 2>/dev/null
}
slurm_cancel_jobs() {
  local jobs=()
  [ -n "$slurmctld_pid" ] || return 0
  mapfile -t jobs < <(sl squeue -h -o %A 2>/dev/null)
  if [ ${#jobs[@]} -gt 0 ]; then
    sl scancel --full --quiet "${jobs[@]}" >/dev/null 2>&1
    sleep 1
  fi
}
slurm_stop_rest() {  # after the daemons: whatever they left behind, then munged, then $tmp
  local left=()
  mapfile -t left < <(cluster_pids)
  stop_pids "${left[@]+"${left[@]}"}"
  stop_pids $munged_pid
  if [ -n "${KEEP_SLURM_TEST_DIR:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}

# ---- munge: its own key, socket, pid file and log in $tmp ------------------------------------
start_munged() {
  local i
  mkdir -p "$tmp/munge" "$tmp/log"
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
}

# ---- ports -------------------------------------------------------------------------------------
# A connect() probe to 127.0.0.1 is not enough (a CI run failed so): slurmctld binds every
# address, so a listener on another address, or a client socket whose ephemeral local port
# falls in the block, still makes its bind fail with EADDRINUSE. The block therefore avoids
# every local port in /proc/net/tcp{,6} (any state) and the kernel's ephemeral range, and
# the tests start the daemons again on another block if a bind fails anyway.
ports_in_use() {
  local f addr
  for f in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$f" ] || continue
    while read -r _ addr _; do
      [[ "$addr" == *:* ]] && echo $((16#${addr##*:}))
    done <"$f"
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

# ---- slurm.conf ----------------------------------------------------------------------------------
# No cgroups, no accounting, no systemd (proctrack/linuxproc, task/none); cred_expire=10 and
# sched_interval=1 let a requeued job start again within seconds.
slurm_conf_common() {  # slurm_conf_common SLURMD_SPOOL_DIR SLURMD_PID_FILE SLURMD_LOG_FILE
cat <<EOF
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SrunPortRange=$((base + 2))-$((base + 19))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket,cred_expire=10
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$1
TmpFS=$tmp/tmpfs
FirstJobId=$first_job_id
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$2
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$3
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
EOF
}

# ---- slurmctld ----------------------------------------------------------------------------------
start_slurmctld_and_wait() {
  local i
  sl slurmctld -D -i -f "$conf" >"$tmp/log/slurmctld.out" 2>&1 &
  slurmctld_pid=$!
  for ((i = 0; i < 100; i++)); do
    sl scontrol ping 2>/dev/null | grep -q UP && return 0
    kill -0 "$slurmctld_pid" 2>/dev/null || break
    sleep 0.2
  done
  sl scontrol ping 2>/dev/null | grep -q UP
}

# ---- jobs ----------------------------------------------------------------------------------------
submit() {  # submit NAME ARGS...: prints the job id (log: log_of NAME, from the test)
  local name="$1"
  shift
  sl sbatch --parsable -J "$name" -o "$(log_of "$name")" "$@" | cut -d';' -f1
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
# The ledger is polled every 0.05 s (the job's state every second), so that a requeue lands
# early in the run even on a machine much faster than this one.
wait_ledger_steps() {  # wait_ledger_steps RUN_DIR N JOBID: sets recorded
  local dir="$1" n="$2" id="$3" i st
  recorded=0
  for ((i = 0; i < 2400; i++)); do
    [ ! -f "$dir/ledger.jsonl" ] || recorded=$(grep -c '"step":' "$dir/ledger.jsonl" || true)
    [ "$recorded" -lt "$n" ] || break
    if [ $((i % 20)) = 0 ]; then
      st=$(job_field "$id" JobState)
      [ "$st" = PENDING ] || [ "$st" = RUNNING ] || fail "job $id ended ($st) before it could be requeued"
    fi
    sleep 0.05
  done
  [ "$recorded" -ge "$n" ] || fail "job $id: its ledger has $recorded steps after 120 s"
}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
json() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$1" "$2"; }

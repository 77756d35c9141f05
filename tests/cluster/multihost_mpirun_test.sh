#!/usr/bin/env bash
# Two simulated hosts (cluster/simulated-hosts.sh: network namespaces with their own
# hostnames, OpenMPI over TCP through cluster/simulated-rsh) train like one host (issue 23):
#   1. the script's usage errors exit 2 with a message naming the problem;
#   2. `launch/dpgnn-mpirun -n 4 --oversubscribe` trains DRW (a pinned privacy.noise_seed) on
#      this machine as one host;
#   3. `launch/dpgnn-mpirun -n 4 -N 2 --hostfile HOSTFILE`, started on host 1, trains the
#      same on 2 hosts x 2 ranks; its ledger.jsonl is byte-identical to the one-host run's, its
#      parameters are bit-identical (model_digest), and its run.json names the host of each
#      rank (host 1 twice, host 2 twice);
#   4. `down` removes every namespace, interface and file that `up` made.
# Skips (77) without root or where namespaces cannot be made.
#   multihost_mpirun_test.sh SOURCE_DIR DPGNN_BINARY MODEL_DIGEST_BINARY
set -euo pipefail

src="$(cd "${1:?usage: multihost_mpirun_test.sh SOURCE_DIR DPGNN_BINARY MODEL_DIGEST}" && pwd)"
dpgnn="$(readlink -f "${2:?usage: multihost_mpirun_test.sh SOURCE_DIR DPGNN_BINARY MODEL_DIGEST}")"
digest="$(readlink -f "${3:?usage: multihost_mpirun_test.sh SOURCE_DIR DPGNN_BINARY MODEL_DIGEST}")"
export PATH="$PATH:/usr/sbin:/sbin"
t0=$(date +%s)
say() { echo "[$(date -u +%H:%M:%S) +$(($(date +%s) - t0))s] $*"; }
# shellcheck source=tests/cluster/simulated_hosts_lib.sh
source "$src/tests/cluster/simulated_hosts_lib.sh"

command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun not found (Debian: openmpi-bin)"; exit 77; }
sim_hosts_skip_unless_possible
[ -x "$dpgnn" ] || { echo "FAIL: dpgnn binary '$dpgnn' is not executable"; exit 1; }
[ -x "$digest" ] || { echo "FAIL: model_digest '$digest' is not executable"; exit 1; }
# The test's environment, not an allocation's or a user's simulated hosts'.
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM_|OMPI_MCA_)' || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 DPGNN_PROGRESS=0

tmp="$(mktemp -d /tmp/dpgnn-multihost.XXXXXX)"
watchdog_pid=""
cleanup() {
  local rc=$?
  set +e
  # The watchdog and its sleep (which would hold ctest's output pipe open until it ends).
  [ -z "$watchdog_pid" ] || kill "$watchdog_pid" $(pgrep -P "$watchdog_pid") 2>/dev/null
  sim_hosts_down  # stops what still runs on the hosts too
  if [ -n "${KEEP_MULTIHOST_TEST_DIR:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
# Inside ctest's TIMEOUT, so that the EXIT trap (not a SIGKILL) ends a hung run.
limit_s="${DPGNN_MULTIHOST_TEST_LIMIT_S:-150}"
trap 'echo "FAIL: stopped after $limit_s s"; exit 1' TERM
(sleep "$limit_s" && kill -TERM $$) >/dev/null 2>&1 &
watchdog_pid=$!
fail() { echo "FAIL: $*"; exit 1; }
sim="$src/cluster/simulated-hosts.sh"

# ---- 1. usage errors ------------------------------------------------------------------------
expect_usage_error() {  # expect_usage_error PATTERN ARGS...
  local pattern="$1" out rc=0
  shift
  out="$("$sim" "$@" 2>&1)" || rc=$?
  [ "$rc" = 2 ] || fail "simulated-hosts.sh $*: exit $rc, expected 2 ($out)"
  grep -q -- "$pattern" <<<"$out" || fail "simulated-hosts.sh $*: no message matching '$pattern' ($out)"
}
expect_usage_error "N must be an integer from 1 to 200" up 0
expect_usage_error "--prefix must start with 'dpgnn'" up 2 --prefix eth
expect_usage_error "--subnet must be three octets" up 2 --prefix dpgnnx --subnet 10.300.1
expect_usage_error "--subnet must be private" up 2 --prefix dpgnnx --subnet 8.8.8
expect_usage_error "unknown command 'sideways'" sideways
expect_usage_error "no simulated host 'dpgnn-nohost'" exec dpgnn-nohost true
rc=0
out="$("$src/cluster/simulated-rsh" 2>&1)" || rc=$?
[ "$rc" = 2 ] && grep -q "usage: simulated-rsh HOST COMMAND" <<<"$out" || fail "simulated-rsh without arguments: exit $rc ($out)"
say "1. usage errors exit 2 with their messages"

# ---- data: a synthetic graph in 4 parts, DRW with the noise pinned -----------------------------
cd "$tmp"
"$dpgnn" synth --nodes 2000 --avg-degree 8 --classes 4 --features 32 --homophily 0.8 --seed 1 \
  --out graph.h5 >synth.log 2>&1 || fail "dpgnn synth: $(cat synth.log)"
"$dpgnn" partition --dataset graph.h5 --parts 4 --seed 1 --out graph.part4.h5 >partition.log 2>&1 ||
  fail "dpgnn partition: $(cat partition.log)"
cat >config.yaml <<EOF
# DRW on 4 ranks, noise and batches pinned (privacy.noise_seed): runs on 1 and 2 hosts must agree bit for bit.
method: drw
data: {dataset: $tmp/graph.h5, partition: $tmp/graph.part4.h5}
model: {hidden: 16}
train: {batch_size: 64, max_steps: 20, seed: 3, eval_every: 10, checkpoint_every: 10, threads: 1}
privacy: {noise_multiplier: 1.5, noise_seed: 7, delta: 1.0e-5}
EOF

# ---- 2. one host ---------------------------------------------------------------------------------
"$src/launch/dpgnn-mpirun" -n 4 --oversubscribe -t 1 --gpus none --dpgnn "$dpgnn" \
  train --config config.yaml --out one >one.log 2>&1 || fail "the one-host run failed: $(tail -n 30 one.log)"
say "2. one host: 4 ranks trained ($(grep -c '"step":' one/ledger.jsonl) ledger steps)"

# ---- 3. two hosts x 2 ranks ------------------------------------------------------------------------
sim_hosts_up 2
h1="${SIM_HOSTS[0]}" h2="${SIM_HOSTS[1]}"
[ "$("$sim" exec "$h1" hostname)" = "$h1" ] || fail "hostname on $h1 is not $h1"
eval "$("$sim" env --prefix "$SIM_PREFIX")"
[ "$OMPI_MCA_plm_rsh_agent" = "$src/cluster/simulated-rsh" ] || fail "env: the rsh agent is '$OMPI_MCA_plm_rsh_agent'"
say "3. hosts $h1, $h2 up on $SIM_SUBNET.0/24; mpirun on $h1 with --hostfile $SIM_HOSTFILE"
"$sim" exec "$h1" "$src/launch/dpgnn-mpirun" -n 4 -N 2 -t 1 --gpus none --hostfile "$SIM_HOSTFILE" --dpgnn "$dpgnn" \
  train --config config.yaml --out two >two.log 2>&1 || fail "the two-host run failed: $(tail -n 30 two.log)"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
hosts="$("$py" -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["starts"][0]["hosts"]))' two/run.json)"
[ "$hosts" = "$h1,$h1,$h2,$h2" ] || fail "two/run.json: starts[0].hosts is '$hosts', expected '$h1,$h1,$h2,$h2'"
cmp -s one/ledger.jsonl two/ledger.jsonl ||
  fail "the ledgers differ: $(diff one/ledger.jsonl two/ledger.jsonl | head -n 6)"
"$digest" one/model.h5 >one.params || fail "model_digest one/model.h5"
"$digest" two/model.h5 >two.params || fail "model_digest two/model.h5"
cmp -s one.params two.params || fail "the parameters differ: $(diff one.params two.params | head -n 6)"
say "3. two hosts: run.json hosts $hosts; ledger.jsonl ($(wc -l <two/ledger.jsonl) lines) and the $(wc -l <two.params) parameter tensors identical to one host's"

# ---- 4. down removes everything -----------------------------------------------------------------------
prefix="$SIM_PREFIX"
"$sim" down --prefix "$prefix" >/dev/null || fail "simulated-hosts.sh down --prefix $prefix failed"
SIM_PREFIX=""
sim_hosts_gone "$prefix" || fail "down did not remove everything of $prefix"
say "4. down removed the namespaces, interfaces and files of $prefix"
say "PASS"

# shellcheck shell=bash
# Sourced by the `multihost` tests: simulated hosts (cluster/simulated-hosts.sh) of the test's
# own, removed on exit whatever happens.
#   sim_hosts_skip_unless_possible     exit 77 with the reason when namespaces cannot be made
#   sim_hosts_up N                     sets SIM_PREFIX, SIM_SUBNET, SIM_HOSTS (array), SIM_HOSTFILE
#   sim_hosts_down                     (also run by the EXIT trap the caller installs)
# Needs: $src (the checkout). Each test gets a random prefix (dpgnnt + 4 hex digits) and a
# free 10.231.X.0/24, X in 100..199, so that it never meets a user's `up` (dpgnn-h,
# 10.231.47) or another test. A test killed outright (SIGKILL) leaves its hosts behind;
# the next test removes them: the prefix's state records the pid that made them.

sim_script() { echo "$src/cluster/simulated-hosts.sh"; }

sim_hosts_skip_unless_possible() {
  local missing=() p probe out
  for p in ip unshare nsenter mount umount timeout; do command -v "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "SKIP: simulated hosts need ${missing[*]} (Debian: iproute2, util-linux)"
    exit 77
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: simulated hosts need root (network namespaces, interfaces; running as $(id -un))"
    exit 77
  fi
  # What `up` does, once, on names no one else uses: a namespace, a bridge, a UTS namespace.
  probe="dpgnnp$$"
  probe="${probe:0:12}"
  if ! out="$( { ip netns add "$probe" && ip link add "${probe}b" type bridge && unshare --uts true; } 2>&1)"; then
    ip link del "${probe}b" 2>/dev/null || true
    ip netns del "$probe" 2>/dev/null || true
    echo "SKIP: network namespaces, bridges or UTS namespaces cannot be made here: $out"
    exit 77
  fi
  ip link del "${probe}b" 2>/dev/null || true
  ip netns del "$probe" 2>/dev/null || true
}

# Hosts that an earlier test run left (killed before its trap ran): their owner is gone.
sim_hosts_sweep_orphans() {
  local d owner
  for d in /run/dpgnn-hosts/dpgnnt*; do
    [ -d "$d" ] || continue
    owner="$(cat "$d/test-owner" 2>/dev/null || true)"
    # No owner yet: another test may be between its `up` and writing the owner; only a
    # minute-old one is an orphan.
    if [ -z "$owner" ] && [ -z "$(find "$d" -maxdepth 0 -mmin +1)" ]; then continue; fi
    if [ -z "$owner" ] || ! kill -0 "$owner" 2>/dev/null; then
      echo "removing simulated hosts left by an earlier test (owner ${owner:-unknown} is gone): $d"
      "$(sim_script)" down --prefix "$(basename "$d")" || true
    fi
  done
}

SIM_PREFIX="" SIM_SUBNET="" SIM_HOSTS=() SIM_HOSTFILE=""
sim_hosts_up() {
  local n="$1" x try used
  sim_hosts_sweep_orphans
  SIM_PREFIX="dpgnnt$(printf '%04x' $((RANDOM % 65536)))"
  used="$(ip -4 -o addr show | awk '{print $4}')"
  for ((try = 0; try < 100; try++)); do
    x=$((100 + RANDOM % 100))
    grep -q "^10\.231\.$x\." <<<"$used" || break
  done
  SIM_SUBNET="10.231.$x"
  "$(sim_script)" up "$n" --prefix "$SIM_PREFIX" --subnet "$SIM_SUBNET" --slots 2 ||
    { echo "FAIL: cluster/simulated-hosts.sh up $n --prefix $SIM_PREFIX --subnet $SIM_SUBNET"; exit 1; }
  echo $$ >"/run/dpgnn-hosts/$SIM_PREFIX/test-owner"
  SIM_HOSTS=()
  for ((x = 1; x <= n; x++)); do SIM_HOSTS+=("$SIM_PREFIX$x"); done
  SIM_HOSTFILE="/run/dpgnn-hosts/$SIM_PREFIX/hostfile"
}

sim_hosts_down() {
  [ -n "$SIM_PREFIX" ] || return 0
  "$(sim_script)" down --prefix "$SIM_PREFIX" >/dev/null 2>&1 || true
  SIM_PREFIX=""
}

# sim_hosts_gone PREFIX: fails when anything of PREFIX is left (namespaces, links, files).
sim_hosts_gone() {
  local p="$1" left=""
  left+="$(ip netns list | grep "^$p" || true)"
  left+="$(ip -o link show | grep -o "$p[a-z0-9]*" || true)"
  [ ! -e "/run/dpgnn-hosts/$p" ] || left+=" /run/dpgnn-hosts/$p"
  compgen -G "/etc/netns/$p*" >/dev/null && left+=" $(echo /etc/netns/"$p"*)"
  [ -z "$left" ] || { echo "left behind by down: $left"; return 1; }
}

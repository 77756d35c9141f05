#!/usr/bin/env bash
# simulated-hosts.sh: N "hosts" on one Linux machine, for testing dpgnn's multi-node paths
# (mpirun over TCP, a two-node SLURM) without a cluster. Each host is
#   - a network namespace (ip netns) with loopback and eth0 = one end of a veth pair whose
#     other end sits on a bridge in the root namespace (a private /24; the bridge has .1,
#     host i has .(10+i)),
#   - a UTS namespace of its own, so `hostname` there prints the host's name (dpgnn records
#     each rank's hostname in run.json; MPI decides which ranks share a node by it),
#   - /etc/netns/<host>/hosts, which `exec` bind-mounts over /etc/hosts (as `ip netns exec`
#     does), so every host resolves every other host's name.
# The file system is shared (like a cluster's shared file system), and so are the processes'
# view of /proc and the users. cluster/simulated-rsh is the "remote shell" OpenMPI's rsh
# launcher uses (plm_rsh_agent) to start its daemons on a host. docs/cluster.md, "Simulated
# hosts", shows how to run mpirun and SLURM on them.
#
# Everything it makes is named with the prefix (which must start with "dpgnn") and recorded
# under /run/dpgnn-hosts/<prefix>/, so `down` removes exactly what `up` made. Needs root.
set -euo pipefail

prog=simulated-hosts.sh
here="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
state_root=/run/dpgnn-hosts

usage() {
  cat <<EOF
Usage: $prog up N [--prefix P] [--subnet A.B.C] [--slots S]
       $prog down [--prefix P]
       $prog exec HOST COMMAND [ARGS...]
       $prog list [--prefix P]
       $prog env [--prefix P]
Simulated hosts on this machine: network namespaces on a bridge, each with its own hostname
and /etc/hosts (needs root).

  up N        make hosts P1..PN (default P: dpgnn-h, so dpgnn-h1, dpgnn-h2, ...) on the
              subnet A.B.C.0/24 (default 10.231.47): bridge Pbr = A.B.C.1, host i = A.B.C.(10+i).
              Writes an OpenMPI hostfile with S slots per host (default 2) and prints its path
  down        stop every process still running on the hosts of prefix P, and remove the
              namespaces, interfaces and files that \`up\` made (nothing else)
  exec        run COMMAND on HOST (its network, hostname and /etc/hosts)
  list        the hosts of prefix P, their addresses, the hostfile
  env         shell lines for OpenMPI on these hosts (eval "\$($prog env)"): the rsh agent
              (cluster/simulated-rsh), TCP between hosts and shared memory within one,
              both restricted to the subnet

Options:
  --prefix P    name prefix of hosts and interfaces: must start with "dpgnn", lower-case
                letters, digits and '-', at most 10 characters (interface names fit in 15)
  --subnet A.B.C  the first three octets of a private (RFC 1918) /24 not used on this machine
  --slots S     slots per host in the hostfile

Example:
  $prog up 2
  eval "\$($prog env)"
  $prog exec dpgnn-h1 launch/dpgnn-mpirun -n 4 -N 2 --hostfile $state_root/dpgnn-h/hostfile train --config X.yaml
  $prog down
EOF
}

die() {
  echo "$prog: error: $1" >&2
  exit "${2:-2}"
}
need_value() { [ $# -ge 2 ] || die "option $1 needs a value (see --help)"; }

[ $# -gt 0 ] || { usage >&2; exit 2; }
cmd="$1"
shift
case "$cmd" in -h|--help|help) usage; exit 0 ;; esac

# ---- the agent's path: exec HOST COMMAND ---------------------------------------------------
# Kept first and short: OpenMPI calls it once per daemon it starts.
uts_file_of() {  # the bind-mounted UTS namespace of HOST, or nothing
  local f
  for f in "$state_root"/*/"$1.uts"; do [ -e "$f" ] && echo "$f" && return 0; done
  return 1
}
if [ "$cmd" = exec ]; then
  [ $# -ge 2 ] || die "exec needs HOST and a COMMAND (see --help)"
  host="$1"
  shift
  uts="$(uts_file_of "$host")" ||
    die "no simulated host '$host' (no $state_root/*/$host.uts; \`$prog list\` shows the hosts, \`$prog up N\` makes them)"
  [ -e "/run/netns/$host" ] || die "simulated host '$host' has no network namespace (/run/netns/$host): run \`$prog down\` and \`up\` again"
  [ -f "/etc/netns/$host/hosts" ] || die "simulated host '$host' has no /etc/netns/$host/hosts: run \`$prog down\` and \`up\` again"
  # The host's network and UTS (hostname) namespaces, then a mount namespace of the command's
  # own with /etc/netns/HOST/hosts over /etc/hosts (what `ip netns exec` does, but keeping
  # this machine's /sys: ip netns exec mounts a fresh sysfs without /sys/fs/cgroup, where
  # slurmd fails). Slave propagation: namespaces and hosts made later are seen there too.
  exec nsenter --net="/run/netns/$host" --uts="$uts" -- \
    unshare --mount --propagation slave -- \
    /bin/sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "/etc/netns/$host/hosts" "$@"
fi

prefix="dpgnn-h" subnet="10.231.47" slots=2 count=""
if [ "$cmd" = up ]; then
  [ $# -ge 1 ] || die "up needs the number of hosts N (see --help)"
  count="$1"
  shift
  [[ "$count" =~ ^[1-9][0-9]*$ ]] && [ "$count" -le 200 ] || die "N must be an integer from 1 to 200, got '$count'"
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) need_value "$@"; prefix="$2"; shift 2 ;;
    --subnet) need_value "$@"; subnet="$2"; shift 2 ;;
    --slots) need_value "$@"; slots="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' for $cmd (see --help)" ;;
  esac
done
case "$cmd" in up|down|list|env) ;; *) die "unknown command '$cmd' (up, down, exec, list, env; see --help)" ;; esac
# "dpgnn" first: down never removes an interface or namespace that is not ours.
[[ "$prefix" =~ ^dpgnn[a-z0-9-]{0,5}$ ]] ||
  die "--prefix must start with 'dpgnn' and have at most 10 lower-case letters, digits or '-', got '$prefix'"
[[ "$subnet" =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] &&
  [ "${BASH_REMATCH[1]}" -le 255 ] && [ "${BASH_REMATCH[2]}" -le 255 ] && [ "${BASH_REMATCH[3]}" -le 255 ] ||
  die "--subnet must be three octets A.B.C (the /24 A.B.C.0/24), got '$subnet'"
# A private range only (RFC 1918): the hosts must never take a routable address.
[[ "$subnet" =~ ^10\. || "$subnet" =~ ^192\.168\. || "$subnet" =~ ^172\.(1[6-9]|2[0-9]|3[01])\. ]] ||
  die "--subnet must be private (10.x.y, 172.16-31.y, 192.168.y; RFC 1918), got '$subnet'"
[[ "$slots" =~ ^[1-9][0-9]*$ ]] || die "--slots must be a positive integer, got '$slots'"
state="$state_root/$prefix"
bridge="${prefix}br"

read_state() {  # hosts, subnet of an `up` of this prefix
  [ -f "$state/subnet" ] || die "nothing is up for prefix '$prefix' ($state/subnet missing): run \`$prog up N${prefix:+ --prefix $prefix}\`" 1
  subnet="$(cat "$state/subnet")"
  mapfile -t hosts < <(cat "$state/hosts.list" 2>/dev/null)
}

case "$cmd" in
  list)
    read_state
    echo "prefix $prefix: subnet $subnet.0/24, bridge $bridge ($subnet.1), hostfile $state/hostfile"
    for h in "${hosts[@]}"; do
      addr="$(ip -n "$h" -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}')"
      echo "$h ${addr:-(no namespace)}"
    done
    exit 0
    ;;
  env)
    read_state
    # btl: TCP between hosts, vader (shared memory) between ranks of one host, self.
    cat <<EOF
export OMPI_MCA_plm_rsh_agent=$here/simulated-rsh
export OMPI_MCA_btl=tcp,vader,self
export OMPI_MCA_btl_tcp_if_include=$subnet.0/24
export OMPI_MCA_oob_tcp_if_include=$subnet.0/24
export DPGNN_SIM_HOSTFILE=$state/hostfile
EOF
    exit 0
    ;;
esac

[ "$(id -u)" -eq 0 ] || die "$cmd needs root (network namespaces, interfaces, /etc/netns), running as $(id -un)" 1
for p in ip unshare nsenter mount umount; do command -v "$p" >/dev/null 2>&1 || die "$p not found (Debian: iproute2, util-linux, mount)" 1; done

# ---- down -----------------------------------------------------------------------------------
teardown() {  # removes what the records in $state say exists; quiet about what is gone
  local h pids i left
  mapfile -t hosts < <(cat "$state/hosts.list" 2>/dev/null)
  # Processes still on the hosts (daemons, ranks): TERM, up to 5 s, then KILL; a namespace
  # with processes in it would outlive `ip netns del`.
  for h in "${hosts[@]}"; do
    [ -e "/run/netns/$h" ] || continue
    mapfile -t pids < <(ip netns pids "$h" 2>/dev/null)
    [ ${#pids[@]} -gt 0 ] || continue
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for ((i = 0; i < 25; i++)); do
      mapfile -t left < <(ip netns pids "$h" 2>/dev/null)
      [ ${#left[@]} -gt 0 ] || break
      sleep 0.2
    done
    [ ${#left[@]} -eq 0 ] || kill -KILL "${left[@]}" 2>/dev/null || true
  done
  for h in "${hosts[@]}"; do
    if [ -e "$state/$h.uts" ]; then
      umount "$state/$h.uts" 2>/dev/null || true
      rm -f "$state/$h.uts"
    fi
    [ ! -e "/run/netns/$h" ] || ip netns del "$h" 2>/dev/null || true
    ip link del "${h}v" 2>/dev/null || true  # usually gone with the namespace (its peer)
    rm -rf "/etc/netns/$h"
  done
  [ ! -f "$state/bridge" ] || ip link del "$bridge" 2>/dev/null || true
  rm -rf "$state"
  rmdir "$state_root" 2>/dev/null || true
  rmdir /etc/netns 2>/dev/null || true  # only when empty (up may have made it)
}
if [ "$cmd" = down ]; then
  if [ ! -d "$state" ]; then
    echo "$prog: nothing is up for prefix '$prefix' (no $state)"
    exit 0
  fi
  teardown
  echo "$prog: removed the hosts of prefix '$prefix'"
  exit 0
fi

# ---- up ---------------------------------------------------------------------------------------
[ ! -e "$state" ] || die "prefix '$prefix' is up already ($state exists): \`$prog down${prefix:+ --prefix $prefix}\` first" 1
hosts=()
for ((i = 1; i <= count; i++)); do hosts+=("$prefix$i"); done
for h in "${hosts[@]}"; do
  [ ! -e "/run/netns/$h" ] || die "a network namespace '$h' exists already (ip netns list), not made by this script's prefix '$prefix' state: remove it or choose another --prefix" 1
  ! ip link show "${h}v" >/dev/null 2>&1 || die "an interface '${h}v' exists already: choose another --prefix" 1
done
! ip link show "$bridge" >/dev/null 2>&1 || die "an interface '$bridge' exists already: choose another --prefix" 1
if ip -4 -o addr show | awk '{print $4}' | grep -q "^${subnet//./\\.}\."; then
  die "the subnet $subnet.0/24 is in use on this machine ($(ip -4 -o addr show | awk -v s="$subnet." 'index($4, s) == 1 {print $2 " " $4}' | head -n1)): choose another --subnet" 1
fi

# From here on a failure removes whatever was made (the records say what).
mkdir -p "$state"
trap 'rc=$?; if [ "$rc" != 0 ]; then echo "$prog: up failed (exit $rc); removing what it made" >&2; teardown; fi' EXIT
echo "$subnet" >"$state/subnet"
printf '%s\n' "${hosts[@]}" >"$state/hosts.list"

: >"$state/bridge"
ip link add "$bridge" type bridge
ip addr add "$subnet.1/24" dev "$bridge"
ip link set "$bridge" up

{
  echo "# Generated by cluster/$prog for the simulated hosts of prefix $prefix."
  echo "127.0.0.1 localhost"
  echo "::1 localhost ip6-localhost ip6-loopback"
  echo "$subnet.1 ${prefix}gw"
  for ((i = 1; i <= count; i++)); do echo "$subnet.$((10 + i)) $prefix$i"; done
} >"$state/etc-hosts"
: >"$state/hostfile"
for ((i = 1; i <= count; i++)); do
  h="$prefix$i"
  ip netns add "$h"
  ip link add "${h}v" type veth peer name "${h}p"
  ip link set "${h}p" netns "$h"
  ip -n "$h" link set "${h}p" name eth0
  ip -n "$h" addr add "$subnet.$((10 + i))/24" dev eth0
  ip -n "$h" link set lo up  # MPI and SLURM talk to themselves over loopback too
  ip -n "$h" link set eth0 up
  ip -n "$h" route add default via "$subnet.1" 2>/dev/null || true
  ip link set "${h}v" master "$bridge"
  ip link set "${h}v" up
  # A UTS namespace that outlives this command: bind-mounted on a file (unshare --uts=FILE).
  : >"$state/$h.uts"
  unshare --uts="$state/$h.uts" hostname "$h"
  mkdir -p "/etc/netns/$h"
  cp "$state/etc-hosts" "/etc/netns/$h/hosts"
  echo "$h slots=$slots" >>"$state/hostfile"
done

# Every host must reach every other one (a bridge filtered by the machine's firewall would
# not): a TCP connection to a closed port is refused at once when the address is reachable,
# and times out when it is not.
reach() {  # reach FROM ADDRESS
  local out
  out="$(timeout 3 ip netns exec "$1" bash -c "exec 3<>/dev/tcp/$2/9" 2>&1)" && return 0
  [[ "$out" == *"refused"* ]]
}
for ((i = 1; i <= count; i++)); do
  for ((j = 1; j <= count; j++)); do
    [ "$i" != "$j" ] || [ "$count" = 1 ] || continue
    reach "$prefix$i" "$subnet.$((10 + j))" ||
      die "host $prefix$i cannot reach $prefix$j ($subnet.$((10 + j))) over the bridge $bridge: is bridged traffic filtered (net.bridge.bridge-nf-call-iptables and a FORWARD rule)?" 1
  done
done
[ "$(nsenter --uts="$state/${prefix}1.uts" hostname)" = "${prefix}1" ] || die "the UTS namespace of ${prefix}1 does not hold its hostname" 1
trap - EXIT

echo "$prog: $count host(s) up on $subnet.0/24 (bridge $bridge = $subnet.1):"
for ((i = 1; i <= count; i++)); do echo "  $prefix$i $subnet.$((10 + i))"; done
echo "hostfile: $state/hostfile ($slots slots per host)"
echo "OpenMPI: eval \"\$($here/$prog env${prefix:+ --prefix $prefix})\"; run mpirun on a host: $here/$prog exec ${prefix}1 COMMAND"

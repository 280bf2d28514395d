#!/usr/bin/env bash
# Emulates hosts of a cluster on this machine, for tests: each host is a network namespace with its own IPC and
# UTS namespace (so MPI's UCX uses shared memory within a host and TCP between hosts, as on a real cluster),
# joined by veth pairs to a bridge in a switch namespace; mpiexec runs in a control namespace on the same
# network. Needs root. Traffic stays between the namespaces made here.
#
#   scripts/emulate_hosts.sh up N [PREFIX]     hosts PREFIX-h0 .. PREFIX-h{N-1} at 10.77.0.10+i, control 10.77.0.1
#   scripts/emulate_hosts.sh down [PREFIX]     removes every namespace and interface of PREFIX (idempotent)
#   scripts/emulate_hosts.sh -x HOST CMD...    hydra's launcher (-launcher-exec this script): runs CMD in HOST's
#                                              namespaces, as ssh would run it on HOST
#   scripts/emulate_hosts.sh ctl [PREFIX] CMD... runs CMD in the control namespace (mpiexec goes there)
#   scripts/emulate_hosts.sh bytes [PREFIX]    bytes sent and received by each host's interface: "HOST TX RX"
#   scripts/emulate_hosts.sh limit RATE [PREFIX] caps each host's link at RATE each way (tc's units: 1gbit,
#                                              10gbit), as a host's network card would; "none" lifts the cap
#
# A run: up 2; ctl mpiexec -launcher ssh -launcher-exec "$PWD/scripts/emulate_hosts.sh" \
#          -localhost 10.77.0.1 -hosts fedavg-h0,fedavg-h1 ... ; down.
set -euo pipefail
PREFIX_DEFAULT=fedavg
NET=10.77.0

ns_list() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$1-(h[0-9]+|sw|ctl)$" || true; }

up() {
  local n=$1 prefix=${2:-$PREFIX_DEFAULT}
  down "$prefix"
  ip netns add "$prefix-sw"
  ip -n "$prefix-sw" link add br0 type bridge
  ip -n "$prefix-sw" link set br0 up
  ip -n "$prefix-sw" link set lo up
  # The control namespace (mpiexec) and the hosts, each on a veth pair whose other end is on the bridge.
  local names=("$prefix-ctl") addrs=("$NET.1") i
  for ((i = 0; i < n; i++)); do names+=("$prefix-h$i"); addrs+=("$NET.$((10 + i))"); done
  for i in "${!names[@]}"; do
    local ns=${names[$i]} port="p$i"
    ip netns add "$ns"
    ip link add "$port" netns "$prefix-sw" type veth peer name eth0 netns "$ns"
    ip -n "$prefix-sw" link set "$port" master br0 up
    ip -n "$ns" addr add "${addrs[$i]}/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
}

down() {
  local prefix=${1:-$PREFIX_DEFAULT} ns
  for ns in $(ns_list "$prefix"); do
    # Processes left in a namespace (a killed job's ranks) would keep it alive.
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns delete "$ns" 2>/dev/null || true
  done
}

launch() {
  [ "${1:-}" = "-x" ] && shift
  local host=$1
  shift
  # Its own IPC namespace (UCX's shared memory stays inside the host) and hostname; hydra's proxy and every
  # rank it starts live in them. Like ssh, the command arrives as words of one shell command line.
  exec ip netns exec "$host" unshare --ipc --uts sh -c 'hostname "$1" && eval "$2"' sh "$host" "$*"
}

ctl() {
  local prefix=$PREFIX_DEFAULT
  if [ "$#" -gt 0 ] && ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$1-ctl"; then prefix=$1; shift; fi
  exec ip netns exec "$prefix-ctl" "$@"
}

bytes() {
  local prefix=${1:-$PREFIX_DEFAULT} ns
  for ns in $(ns_list "$prefix"); do
    case $ns in *-h*) ;; *) continue ;; esac
    echo "$ns $(ip netns exec "$ns" cat /sys/class/net/eth0/statistics/tx_bytes) $(ip netns exec "$ns" cat /sys/class/net/eth0/statistics/rx_bytes)"
  done
}

# A token bucket of RATE on DEV in namespace NS ("none": none); it holds a few of veth's 64 KB segments, or tbf
# would drop them.
shape() {
  tc -n "$1" qdisc del dev "$2" root 2>/dev/null || true
  [ "$3" = none ] || tc -n "$1" qdisc add dev "$2" root tbf rate "$3" burst 1mb latency 100ms
}

limit() {
  local rate=${1:?limit RATE [PREFIX]} prefix=${2:-$PREFIX_DEFAULT} ns i
  for ns in $(ns_list "$prefix"); do
    case $ns in *-h*) ;; *) continue ;; esac
    i=${ns##*-h}
    shape "$ns" eth0 "$rate"                       # what the host sends
    shape "$prefix-sw" "p$((i + 1))" "$rate"       # what it receives: its bridge port (up: p0 is the control's)
  done
}

cmd=${1:?usage: emulate_hosts.sh up N [PREFIX] | down [PREFIX] | -x HOST CMD... | ctl [PREFIX] CMD... | bytes [PREFIX] | limit RATE [PREFIX]}
[ "$cmd" = "-x" ] && launch "$@"
shift
case $cmd in
  up) up "$@" ;;
  down) down "$@" ;;
  ctl) ctl "$@" ;;
  bytes) bytes "$@" ;;
  limit) limit "$@" ;;
  *) echo "emulate_hosts.sh: unknown command $cmd" >&2; exit 2 ;;
esac

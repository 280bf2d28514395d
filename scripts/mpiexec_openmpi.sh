#!/usr/bin/env bash
# mpiexec for a machine whose MPI is Open MPI (4.x): takes the options of MPICH's hydra that the benches and
# docs/running.md give for emulated hosts (scripts/emulate_hosts.sh) and runs Open MPI's mpirun with the same
# placement. Without -hosts it is a plain `mpirun -n N`.
#
#   scripts/mpiexec_openmpi.sh [-launcher ssh] [-launcher-exec EMULATE_HOSTS] [-localhost IP] [-hosts H0:N0,H1:N1,...]
#                              -n N PROGRAM ARGS...
#   FEDAVG_MPIEXEC=$PWD/scripts/mpiexec_openmpi.sh /usr/bin/python3 bench/hosts_wall_time.py ...
#
# With -hosts, mpirun runs in the first host's namespaces, as on a cluster's first node, and starts its daemon on
# each other host through this script as its remote shell (Open MPI's daemons do not start from a namespace
# that holds no ranks). Ranks are not bound to cores (every emulated host sees all of them); between hosts they
# talk TCP on the emulated network, within a host shared memory. MPIEXEC_TIMEOUT becomes --timeout.
set -euo pipefail

# Called by mpirun as its remote shell: HOST COMMAND..., to run as ssh would, without mpirun's own variables.
if [ -n "${FEDAVG_OPENMPI_HOSTS:-}" ] && [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  for v in $(env | grep -oE '^(PMIX|OMPI|ORTE|OPAL)[A-Za-z0-9_]*=' || true); do unset "${v%=}"; done
  exec bash "$FEDAVG_OPENMPI_HOSTS" -x "$@"
fi

emulate='' hosts='' n=''
while [ $# -gt 0 ]; do
  case $1 in
    -launcher | -localhost) shift 2 ;;
    -launcher-exec) emulate=$2; shift 2 ;;
    -hosts) hosts=$2; shift 2 ;;
    -n | -np) n=$2; shift 2 ;;
    *) break ;;
  esac
done
if [ -z "$n" ] || [ $# -eq 0 ]; then
  echo "mpiexec_openmpi.sh: usage: [-launcher-exec EMULATE_HOSTS -hosts H:N,...] -n N PROGRAM ARGS..." >&2
  exit 2
fi
args=(--oversubscribe --bind-to none -n "$n")
[ "$(id -u)" -eq 0 ] && args+=(--allow-run-as-root)
[ -n "${MPIEXEC_TIMEOUT:-}" ] && args+=(--timeout "$MPIEXEC_TIMEOUT")
# Variables the ranks need that a remote shell would not pass on.
for v in PATH PYTHONPATH LD_LIBRARY_PATH FEDAVG_BENCH_TAG FEDAVG_RANK_WATCH OMP_NUM_THREADS; do
  [ -n "${!v:-}" ] && args+=(-x "$v")
done
[ -z "$hosts" ] && exec mpirun "${args[@]}" "$@"

[ -n "$emulate" ] || { echo "mpiexec_openmpi.sh: -hosts needs -launcher-exec (scripts/emulate_hosts.sh)" >&2; exit 2; }
unset OMPI_MCA_plm  # a machine's default (such as "isolated") would forbid the daemons on the other hosts
export FEDAVG_OPENMPI_HOSTS=$emulate
net=10.77.0.0/24  # scripts/emulate_hosts.sh's network
# shellcheck disable=SC2054  # the host list is one argument
args+=(--host "$hosts" --mca plm rsh --mca plm_rsh_agent "$(readlink -f "$0")" --mca plm_rsh_no_tree_spawn 1
       --mca oob_tcp_if_include "$net" --mca btl_tcp_if_include "$net" --mca pml ob1 --mca btl self,vader,tcp)
exec bash "$emulate" -x "${hosts%%[:,]*}" mpirun "${args[@]}" "$@"

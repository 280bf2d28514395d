#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for tests: munged, slurmctld and slurmd (Debian's Slurm 22.05)
# run as root with every file in one private folder; the system's /etc/slurm and /etc/munge are not touched.
# Needs root. Works without systemd and without cgroups (proctrack/linuxproc, task/none).
#
#   scripts/slurm_local.sh up      installs the missing packages (slurmctld slurmd slurm-client munge), writes
#                                  DIR/slurm.conf and a munge key, starts the daemons, waits until the node is
#                                  idle; prints the line to source: export SLURM_CONF=DIR/slurm.conf
#   scripts/slurm_local.sh down    cancels the jobs, stops the daemons it started, removes DIR
#   scripts/slurm_local.sh env     prints that export line (DIR/env holds it too)
#
# Both are idempotent: up with the daemons running and the node idle does nothing; up after a partial start
# cleans up first. Environment: FEDAVG_SLURM_DIR (default /tmp/fedavg-slurm), FEDAVG_SLURM_PORT (slurmctld's
# port, default 16817; slurmd uses the next one), FEDAVG_SLURM_TIMEOUT (seconds up waits for the idle node,
# default 60). The node is this host as `slurmd -C` sees it (its real cores): ask for more tasks than cores
# with --overcommit. The packages stay installed after down.
set -euo pipefail

DIR=${FEDAVG_SLURM_DIR:-/tmp/fedavg-slurm}
PORT=${FEDAVG_SLURM_PORT:-16817}
TIMEOUT=${FEDAVG_SLURM_TIMEOUT:-60}
CONF=$DIR/slurm.conf
SOCKET=$DIR/munge/munge.socket
PACKAGES=(slurmctld slurmd slurm-client munge)

log() { echo "slurm_local: $*" >&2; }
die() { log "$*"; exit 1; }

need_root() { [ "$(id -u)" -eq 0 ] || die "must run as root (the daemons run as root)"; }

install_missing() {
  local p missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]}"
  # The packages' postinst scripts would start the system's services; a policy-rc.d that refuses (as in
  # Docker images) keeps them stopped, and without one they fail harmlessly for want of a config.
  apt-get update -q >&2 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

# pid of a daemon from its pid file if that process is alive and is that daemon (not a reused pid).
live_pid() {
  local file=$1 name=$2 pid
  [ -s "$file" ] || return 1
  pid=$(tr -dc 0-9 <"$file")
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$name" ] || return 1
  echo "$pid"
}

node_state() { SLURM_CONF=$CONF timeout 10 sinfo -h -N -o %t 2>/dev/null | head -n1; }

running() {
  [ -f "$CONF" ] && live_pid "$DIR/munge/munged.pid" munged >/dev/null &&
    live_pid "$DIR/slurmctld.pid" slurmctld >/dev/null && live_pid "$DIR/slurmd.pid" slurmd >/dev/null
}

write_files() {
  local host node
  host=$(hostname -s)
  # "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105"
  node=$(slurmd -C | head -n1)
  [[ $node == NodeName=* ]] || die "slurmd -C printed no node line: $node"
  mkdir -p "$DIR"/{munge,ctld,slurmd,log}
  # munged wants its socket's folders searchable by all and its key private.
  chmod 755 "$DIR" "$DIR/munge"
  chmod 700 "$DIR/ctld" "$DIR/slurmd"
  [ -s "$DIR/munge/munge.key" ] || mungekey --create --keyfile="$DIR/munge/munge.key"
  chmod 600 "$DIR/munge/munge.key"
  : >"$DIR/plugstack.conf"  # no SPANK plugins (the system's plugstack.conf is not read)
  cat >"$CONF.tmp" <<EOF
# Written by scripts/slurm_local.sh: a single-node cluster, everything under $DIR.
ClusterName=fedavg
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/slurmd
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$DIR/plugstack.conf
# No systemd, no cgroups: track job processes through /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.tmp" "$CONF"
  echo "export SLURM_CONF=$CONF" >"$DIR/env"
}

wait_idle() {
  local deadline=$((SECONDS + TIMEOUT)) state=
  while ((SECONDS < deadline)); do
    state=$(node_state || true)
    [ "$state" = idle ] && return 0
    sleep 1
  done
  log "the node is not idle after ${TIMEOUT}s (state: ${state:-no answer}); the daemons' last log lines:"
  tail -n 5 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 2>/dev/null || true
  return 1
}

up() {
  need_root
  install_missing
  if running && [ "$(node_state || true)" = idle ]; then
    log "already up"
    cat "$DIR/env"
    return 0
  fi
  down quiet  # a partial start: begin again from nothing
  write_files
  munged --key-file="$DIR/munge/munge.key" --socket="$SOCKET" --pid-file="$DIR/munge/munged.pid" \
    --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed" ||
    die "munged did not start: $(tail -n 3 "$DIR/munge/munged.log" 2>/dev/null)"
  # SLURM_CONF in the daemons' environment also marks the job steps they start (see stop_steps).
  SLURM_CONF=$CONF slurmctld -f "$CONF" || die "slurmctld did not start: $(tail -n 3 "$DIR/log/slurmctld.log")"
  SLURM_CONF=$CONF slurmd -f "$CONF" || die "slurmd did not start: $(tail -n 3 "$DIR/log/slurmd.log")"
  if ! wait_idle; then
    down quiet
    exit 1
  fi
  log "up: node $(hostname -s) idle"
  cat "$DIR/env"
}

# Sends TERM to pid, waits up to 10 s, then KILL.
stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# Job steps (slurmstepd) of this instance still alive after the jobs were cancelled: they carry our SLURM_CONF.
stop_steps() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$CONF" || continue
    stop_pid "${p#/proc/}"
  done
}

down() {
  need_root
  local pid i
  if [ -f "$CONF" ] && live_pid "$DIR/slurmctld.pid" slurmctld >/dev/null; then
    SLURM_CONF=$CONF timeout 10 scancel --full --quiet --partition=debug 2>/dev/null || true
    for ((i = 0; i < 30; i++)); do  # Slurm ends the jobs' processes itself
      [ -z "$(SLURM_CONF=$CONF timeout 10 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  [ -f "$CONF" ] && stop_steps
  pid=$(live_pid "$DIR/slurmd.pid" slurmd) && stop_pid "$pid"
  pid=$(live_pid "$DIR/slurmctld.pid" slurmctld) && stop_pid "$pid"
  pid=$(live_pid "$DIR/munge/munged.pid" munged) && stop_pid "$pid"
  rm -rf "$DIR"
  [ "${1:-}" = quiet ] || log "down"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  env) if [ -f "$DIR/env" ]; then cat "$DIR/env"; else die "not up"; fi ;;
  *) die "usage: slurm_local.sh up|down|env" ;;
esac

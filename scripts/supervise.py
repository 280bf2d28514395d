#!/usr/bin/env python3
"""Runs a fedavg_mpi job and, when it fails, starts it again from its last checkpoint, with no human step.

Usage:
    /usr/bin/python3 scripts/supervise.py [--restarts K] [--drop-failed-hosts] -- \\
        mpiexec [mpiexec options] .../fedavg_mpi [options] corpus.txt ...

MPICH cannot keep a job alive once a rank dies, so recovery is a restart: when the job exits with a failure, the
same command runs again with --resume (or, if the job died before its first checkpoint, with --overwrite), at
most K times (default 3). Each restart passes the reason (the failing rank's "[fedavg] rank N (Role): ..." line)
with --restarted, so the run's checkpoint, metrics (column restarts) and statistics (restart lines) keep it. At
most the round in progress when the job died is lost (checkpoint_every 1, the default).

--drop-failed-hosts: when the failing rank is a learner on a host given with mpiexec's -hosts HOST:N,...
and that host runs learners only, the restart leaves it out (N fewer learners; each remaining learner goes on
with its checkpointed state).

A job stopped by SIGINT or SIGTERM (exit status 130 or 143) is not restarted, nor is one whose failure is an
input error (it would fail again the same way). --inject-fault plans a failure for the first run only.
Exits with the last run's status.
"""

import argparse
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

FAILURE = re.compile(r"\[fedavg\] rank (\d+) \((\w+)\): (.*)")
# Hydra's report of a process that died without a word (killed): its host and exit code.
DIED = re.compile(r"RUNNING AT (\S+)|EXIT CODE: (\d+)")
# Program flags that take no value; every other --flag does, unless written --flag=value.
BARE_FLAGS = {"--resume", "--overwrite", "--stopwords", "--help", "-h", "--version"}
STOPPED = {128 + signal.SIGINT, 128 + signal.SIGTERM}


def program_index(cmd):
    for i, word in enumerate(cmd):
        if Path(word).name == "fedavg_mpi":
            return i
    sys.exit("supervise: the command runs no fedavg_mpi")


def program_args(args):
    """(flags as (name, value or None) in order, corpora) of fedavg_mpi's arguments."""
    flags, corpora, i = [], [], 0
    while i < len(args):
        word = args[i]
        if word.startswith("-") and len(word) > 1:
            if "=" in word or word in BARE_FLAGS:
                flags.append((word, None))
            else:
                flags.append((word, args[i + 1] if i + 1 < len(args) else ""))
                i += 1
        else:
            corpora.append(word)
        i += 1
    return flags, corpora


def out_dir(flags):
    for name, value in flags:
        if name == "--out":
            return Path(value)
        if name.startswith("--out="):
            return Path(name.split("=", 1)[1])
    return Path("trained")


def restart_args(args, reason, has_checkpoint):
    """fedavg_mpi's arguments for a restart: no --overwrite, --inject-fault or earlier --restarted; --resume when
    there is a checkpoint to continue, else --overwrite (nothing finished to lose); the reason."""
    flags, corpora = program_args(args)
    out = []
    for name, value in flags:
        base = name.split("=", 1)[0]
        if base in ("--overwrite", "--inject-fault", "--restarted", "--resume"):
            continue
        out += [name] if value is None else [name, value]
    out += ["--resume" if has_checkpoint else "--overwrite", "--restarted", reason]
    return out + corpora


def drop_host(mpiexec_args, failed, first_learner):
    """mpiexec's arguments without the host that ran the failed process (a rank number, or a host name), if it
    ran learners only; else None."""
    if "-hosts" not in mpiexec_args:
        return None
    at = mpiexec_args.index("-hosts")
    hosts = []
    for item in mpiexec_args[at + 1].split(","):
        name, _, count = item.partition(":")
        hosts.append((name, int(count) if count else 1))
    start = 0
    for k, (name, count) in enumerate(hosts):
        if (start <= failed < start + count) if isinstance(failed, int) else name == failed:
            if start < first_learner or len(hosts) == 1:
                return None  # the Dispatcher or a pipeline ran there: nothing can replace it
            kept = hosts[:k] + hosts[k + 1:]
            new = list(mpiexec_args)
            new[at + 1] = ",".join(f"{h}:{c}" for h, c in kept)
            if "-n" in new:
                new[new.index("-n") + 1] = str(int(new[new.index("-n") + 1]) - count)
            return new
        start += count
    return None


def run(cmd):
    """Runs cmd, passing its output through; returns (status, the first failure line or None, the host and exit
    code hydra names for a process that died)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    failure, died = [], {}

    def watch(stream, to):
        for line in stream:
            to.write(line)
            to.flush()
            m = FAILURE.search(line)
            if m and " WARNING: " not in line:
                failure.append(m)
            for d in DIED.finditer(line):
                died.setdefault("host" if d.group(1) else "code", d.group(1) or d.group(2))

    readers = [threading.Thread(target=watch, args=(proc.stdout, sys.stdout), daemon=True),
               threading.Thread(target=watch, args=(proc.stderr, sys.stderr), daemon=True)]
    for r in readers:
        r.start()
    try:
        status = proc.wait()
    except KeyboardInterrupt:
        status = proc.wait()
    for r in readers:
        r.join(timeout=10)
    return status, (failure[0] if failure else None), died


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--drop-failed-hosts", action="store_true")
    opts = ap.parse_args(argv[:split])
    cmd = argv[split + 1:]
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())  # mpiexec gets it too (same process group) and stops the job

    restarts = 0
    while True:
        status, failure, died = run(cmd)
        if status == 0 or status in STOPPED or stop.is_set():
            return status
        if failure and ("command line:" in failure.group(3) or ".json:" in failure.group(3)):
            print("supervise: not restarting: the job's input is wrong", file=sys.stderr)
            return status
        if restarts >= opts.restarts:
            print(f"supervise: the job failed again (status {status}) and {opts.restarts} restarts are used up",
                  file=sys.stderr)
            return status
        restarts += 1
        if failure:
            reason = f"rank {failure.group(1)} ({failure.group(2)}): {failure.group(3).strip()}"
        elif died:
            reason = (f"a process on {died.get('host', '?')} died (exit code {died.get('code', '?')}), "
                      f"mpiexec exited with status {status}")
        else:
            reason = f"mpiexec exited with status {status}"
        p = program_index(cmd)
        mpiexec, program, args = cmd[:p], cmd[p], cmd[p + 1:]
        flags, corpora = program_args(args)
        has_checkpoint = any(out_dir(flags).glob("*.h5"))
        failed = int(failure.group(1)) if failure else died.get("host")
        if opts.drop_failed_hosts and failed is not None:
            fewer = drop_host(mpiexec, failed, 1 + 3 * len(corpora))
            if fewer is not None:
                mpiexec = fewer
                reason += " (its host left out)"
        cmd = mpiexec + [program] + restart_args(args, reason, has_checkpoint)
        print(f"supervise: the job failed: {reason}; restart {restarts} of {opts.restarts}: {' '.join(cmd)}",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs a fedavg_mpi job and, when it fails, starts it again from its last checkpoint, with no human step.

Usage:
    /usr/bin/python3 scripts/supervise.py [--restarts K] [--drop-failed-hosts] -- \\
        mpiexec [mpiexec options] .../fedavg_mpi [options] corpus.txt ...

MPICH cannot keep a job alive once a rank dies, so recovery is a restart: when the job exits with a failure, the
same command runs again with --resume (or, if the job died before its first checkpoint, as it was given), at
most K times (default 3). It never adds --overwrite and never deletes anything: a restart that finds an earlier
run it would have to replace is refused by the program, and then the supervisor stops. Each restart passes the
reason (the failing rank's "[fedavg] rank N (Role): ..." line) with --restarted, so the run's checkpoint, metrics
(column restarts) and statistics (restart lines) keep it. What
is lost is the training since the last checkpoint: at most checkpoint_seconds of it and the round in progress (10 s
by default; checkpoint_every 1 loses at most that round).

The failed ranks are the learners the failure line names as not having reported ("... on learner rank(s) 4, 5"),
or else the rank that printed it: a rank that waits on a stalled peer reports the peer. A peer named in a
collective ("the weights of learner rank 4") may itself be waiting on another, so it is not taken as failed.

--drop-failed-hosts: when the failed ranks are learners on one host given with mpiexec's -hosts HOST:N,...
and that host runs learners only, the restart leaves it out (N fewer learners; each remaining learner goes on
with its checkpointed state), if every pipeline keeps a learner. Which rank plays which role on which host is read
from the rank map the job wrote at start-up (OUT/NAME_ranks.json); the host of a -hosts entry is the one whose
name the map gives (or its short name), else the entry's place in -hosts. With no map written under the same
mpiexec arguments (the job died before writing it), no host is left out, and the supervisor says so.

--start-seconds S (default 300): a restart that does not reach round 0 within S seconds (its launch hangs: a host
that cannot be reached) is ended and counts as a failure; the host the launcher says it cannot connect to is
then left out with --drop-failed-hosts. A restart that dies before round 0 is seen at once, not after S seconds.

A job stopped by SIGINT or SIGTERM (exit status 130 or 143) is not restarted, nor is one whose failure would
repeat: bad input (exit status 2: the command line, the config, a corpus, library.py, an output folder that
holds an earlier run), weights that diverged, a checkpoint that is damaged or does not match the run.
--inject-fault plans a failure for the first run only. Exits with the last run's status.
"""

import argparse
import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

FAILURE = re.compile(r"\[fedavg\] rank (\d+) \((\w+)\): (.*)")
# The ranks a failure line names as stalled: where the rank that failed asked the ranks it waited on what they
# wait on, and followed the chain of waits, the ones at its end ("... stalled at rank(s) 5"); else the learners
# that did not report ("... on learner rank(s) 4, 5"): each reports to the Dispatcher directly. A rank named as the
# peer of a collective ("the weights of learner rank 4", the root of the learner tree) may itself wait on another,
# and does not count.
STALLED = re.compile(r"\bstalled at rank\(s\) (\d+(?:, \d+)*)")
NAMED = re.compile(r"\bon learner rank\(s\) (\d+(?:, \d+)*)")
# Failures that the same command would meet again: bad input, divergence, a checkpoint that is damaged or is not
# this run's.
REPEATS = ("command line:", ".json:", "the weights diverged", ".h5: dataset ", ".h5: parameter ",
           ".h5: the test loss of its weights", ".h5 was written from", ".h5: written ")
# Round 0 (or the round a resume starts from) reached: the launch is over.
STARTED = re.compile(r"^round +\d+ |resuming from round ")
# The launcher's word on a host it cannot reach: hydra's proxy there, or ssh.
UNREACHABLE = re.compile(r"\[proxy:[^@\]]*@([^\]]+)\].*unable to connect|ssh: connect to host (\S+)")
# Hydra's report of a process that died without a word (killed): its host and exit code.
DIED = re.compile(r"RUNNING AT (\S+)|EXIT CODE: (\d+)")
# Program flags that take no value; every other --flag does, unless written --flag=value.
BARE_FLAGS = {"--resume", "--overwrite", "--stopwords", "--help", "-h", "--version"}
STOPPED = {128 + signal.SIGINT, 128 + signal.SIGTERM}
# fedavg_mpi's exit status for bad input: the same command would fail the same way.
BAD_INPUT = 2


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
    """fedavg_mpi's arguments for a restart: no --inject-fault or earlier --restarted; --resume instead of the
    user's --overwrite when there is a checkpoint to continue, else the user's own flags (the program removes what
    a run that never reached a checkpoint left); the reason. Never an --overwrite the user did not give."""
    flags, corpora = program_args(args)
    out = []
    for name, value in flags:
        base = name.split("=", 1)[0]
        if base in ("--inject-fault", "--restarted") or (has_checkpoint and base in ("--overwrite", "--resume")):
            continue
        out += [name] if value is None else [name, value]
    if has_checkpoint:
        out.append("--resume")
    out += ["--restarted", reason]
    return out + corpora


def failed_ranks(failure):
    """The ranks a failure line names as stalled, else the learners it names, else the rank that printed it."""
    for pattern in (STALLED, NAMED):
        named = [int(r) for m in pattern.finditer(failure.group(3)) for r in m.group(1).split(", ")]
        if named:
            return named
    return [int(failure.group(1))]


def rank_map_files(cmd):
    """The identity (inode, mtime) of each rank map (NAME_ranks.json) in the command's output folder."""
    if not any(Path(word).name == "fedavg_mpi" for word in cmd):
        return {}
    flags, _ = program_args(cmd[program_index(cmd) + 1:])
    found = {}
    for path in out_dir(flags).glob("*_ranks.json"):
        try:
            st = path.stat()
        except OSError:
            continue
        found[path] = (st.st_ino, st.st_mtime_ns)
    return found


def new_rank_map(cmd, before):
    """[(role, host), ...] by rank, from the one rank map in the command's output folder that is not one of
    `before` (rank_map_files before the run): the map this run wrote (written atomically: a new file); None if it
    wrote none, or it cannot be read."""
    fresh = [path for path, identity in rank_map_files(cmd).items() if before.get(path) != identity]
    if len(fresh) != 1:
        return None
    try:
        return [(str(r["role"]), str(r["host"])) for r in json.loads(fresh[0].read_text())["ranks"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def same_host(a, b):
    """Whether two host names name the same host (one may be the other's fully qualified name)."""
    return a == b or a.split(".")[0] == b.split(".")[0]


def drop_host(mpiexec_args, failed, ranks):
    """(mpiexec's arguments without the one -hosts host that ran the failed processes (rank numbers, or a host
    name), and with -n less the ranks it ran; None) if it ran learners only and every pipeline keeps a learner
    without it; else (None, why not).
    `ranks`: [(role, host), ...] by rank, the job's rank map (None: none known)."""
    if "-hosts" not in mpiexec_args:
        return None, "mpiexec was given no -hosts"
    at = mpiexec_args.index("-hosts")
    hosts = []
    for item in mpiexec_args[at + 1].split(","):
        name, _, count = item.partition(":")
        hosts.append((name, int(count) if count else 1))
    if len(hosts) == 1:
        return None, "the job runs on one host"
    if ranks is None:
        return None, "the job wrote no rank map (OUT/NAME_ranks.json) under these mpiexec arguments"
    starts = [sum(c for _, c in hosts[:k]) for k in range(len(hosts))]
    if isinstance(failed, str):
        named = {failed}
    else:
        named = {ranks[r][1] for r in failed if 0 <= r < len(ranks)}
    ran = {k for k, (name, _) in enumerate(hosts) if any(same_host(name, n) for n in named)}
    on = {k: [r for r, (_, host) in enumerate(ranks) if same_host(host, hosts[k][0])] for k in ran}
    if not ran and not isinstance(failed, str):
        # The map's host names are not the -hosts names: the entry is found by its place in -hosts.
        ran = {k for r in failed for k, (_, count) in enumerate(hosts) if starts[k] <= r < starts[k] + count}
        on = {k: [r for r in range(starts[k], min(starts[k] + hosts[k][1], len(ranks)))] for k in ran}
    if len(ran) != 1:
        return None, f"the failed processes ran on {len(ran) or 'no'} host(s) of -hosts, not one"
    k = ran.pop()
    others = sorted({ranks[r][0] for r in on[k]} - {"Learner"})
    if others:
        return None, f"host {hosts[k][0]} runs the {', '.join(others)} too, which no other host takes over"
    learners = sum(role == "Learner" for role, _ in ranks) - len(on[k])
    pipelines = sum(role == "Tokenizer" for role, _ in ranks)
    if learners < pipelines:
        return None, f"without host {hosts[k][0]}, {learners} learner(s) would be left for {pipelines} pipelines"
    new = list(mpiexec_args)
    new[at + 1] = ",".join(f"{h}:{c}" for j, (h, c) in enumerate(hosts) if j != k)
    if "-n" in new:
        new[new.index("-n") + 1] = str(int(new[new.index("-n") + 1]) - len(on[k]))
    return new, None


class Run:
    """One run of the command, its output passed through and read: the first failure line, what hydra says of a
    process that died, whether round 0 was reached, and a host the launcher could not reach."""

    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     errors="replace")
        self.failures, self.died, self.unreachable = [], {}, None
        self.started = threading.Event()
        self.readers = [threading.Thread(target=self.watch, args=(self.proc.stdout, sys.stdout), daemon=True),
                        threading.Thread(target=self.watch, args=(self.proc.stderr, sys.stderr), daemon=True)]
        for r in self.readers:
            r.start()

    def watch(self, stream, to):
        for line in stream:
            to.write(line)
            to.flush()
            m = FAILURE.search(line)
            if m and " WARNING: " not in line:
                self.failures.append(m)
            for d in DIED.finditer(line):
                self.died.setdefault("host" if d.group(1) else "code", d.group(1) or d.group(2))
            if STARTED.search(line):
                self.started.set()
            u = UNREACHABLE.search(line)
            if u and self.unreachable is None:
                self.unreachable = u.group(1) or u.group(2)

    def wait(self, start_seconds=None):
        """The exit status; with `start_seconds`, a run that has not reached round 0 by then is ended (-1)."""
        try:
            if start_seconds is not None and not self.reached_round_0(start_seconds):
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                self.proc.wait()
                self.join()
                return -1
            status = self.proc.wait()
        except KeyboardInterrupt:
            status = self.proc.wait()
        self.join()
        return status

    def reached_round_0(self, seconds):
        """Whether round 0 is reached within `seconds`, or the run ended before: False only for a run still going
        without having reached it."""
        deadline = time.monotonic() + seconds
        while not self.started.wait(min(0.2, max(0.0, deadline - time.monotonic()))):
            if self.proc.poll() is not None or time.monotonic() >= deadline:
                return self.proc.poll() is not None
        return True

    def join(self):
        for r in self.readers:
            r.join(timeout=10)

    @property
    def failure(self):
        return self.failures[0] if self.failures else None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--drop-failed-hosts", action="store_true")
    ap.add_argument("--start-seconds", type=float, default=300)
    opts = ap.parse_args(argv[:split])
    cmd = argv[split + 1:]
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())  # mpiexec gets it too (same process group) and stops the job

    restarts, reason = 0, ""
    layout = None  # (mpiexec's arguments, rank map) of the last run that wrote its rank map
    while True:
        maps_before = rank_map_files(cmd)
        run = Run(cmd)
        status = run.wait(opts.start_seconds if restarts else None)
        ranks = new_rank_map(cmd, maps_before)
        if ranks is not None:
            layout = (cmd[:program_index(cmd)], ranks)
        failure, died = run.failure, run.died
        if status == 0 or status in STOPPED or stop.is_set():
            return status
        if status == BAD_INPUT:
            print("supervise: not restarting: the program reported bad input (exit status 2); the same command "
                  "would fail the same way", file=sys.stderr)
            return status
        if failure and any(r in failure.group(3) for r in REPEATS):
            print("supervise: not restarting: the job would fail the same way again", file=sys.stderr)
            return status
        if restarts >= opts.restarts:
            print(f"supervise: the job failed again (status {status}) and {opts.restarts} restarts are used up",
                  file=sys.stderr)
            return 1 if status < 0 else status
        restarts += 1
        if status < 0:
            # The run never started, so it recorded nothing: the reason it was started for goes on.
            reason = f"{reason}; then the launch did not reach round 0 within {opts.start_seconds:g} s"
            if run.unreachable:
                reason += f" (host {run.unreachable} cannot be reached)"
        elif failure:
            reason = f"rank {failure.group(1)} ({failure.group(2)}): {failure.group(3).strip()}"
        elif died:
            reason = (f"a process on {died.get('host', '?')} died (exit code {died.get('code', '?')}), "
                      f"mpiexec exited with status {status}")
        else:
            reason = f"mpiexec exited with status {status}"
        p = program_index(cmd)
        mpiexec, program, args = cmd[:p], cmd[p], cmd[p + 1:]
        flags, _ = program_args(args)
        has_checkpoint = any(out_dir(flags).glob("*.h5"))
        if status < 0 or (not failure and run.unreachable):
            failed = run.unreachable
        else:
            failed = failed_ranks(failure) if failure else died.get("host")
        if opts.drop_failed_hosts and failed is not None:
            fewer, why = drop_host(mpiexec, failed, layout[1] if layout and layout[0] == mpiexec else None)
            if fewer is not None:
                mpiexec = fewer
                reason += " (its host left out)"
            else:
                print(f"supervise: not leaving out a host: {why}", file=sys.stderr, flush=True)
        cmd = mpiexec + [program] + restart_args(args, reason, has_checkpoint)
        print(f"supervise: the job failed: {reason}; restart {restarts} of {opts.restarts}: {' '.join(cmd)}",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())

"""Shared helpers for the benchmarks: build paths, a prepared Bible config, an mpiexec launcher that samples every
rank's CPU time and memory from /proc while the job runs (ranks are told apart by PMI_RANK, or by Open MPI's
OMPI_COMM_WORLD_RANK), the mpiexec command for emulated hosts, and the job runner of the benches that run one job
per folder and reuse a finished one (bench/study.py, bench/learner_speedup.py)."""

import argparse
import json
import math
import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("FEDAVG_BUILD_DIR", ROOT / "build"))
APP = (BUILD if BUILD.is_absolute() else ROOT / BUILD) / "src" / "fedavg_mpi"
PYTHON = os.environ.get("FEDAVG_BENCH_PYTHON", "/usr/bin/python3")  # a Python with NumPy, for the helper scripts
# MPICH's mpiexec, or a program that takes its options (scripts/mpiexec_openmpi.sh where the MPI is Open MPI)
MPIEXEC = os.environ.get("FEDAVG_MPIEXEC", "mpiexec")
# python/prepare.py's command line: the script, the model size and the stop rule these benchmarks were measured with
# (its own defaults are dim 100 and the one-command path's 5 passes).
PREPARE = [PYTHON, str(ROOT / "python" / "prepare.py"), "--dim", "32", "--epoch", "0", "--target", "2.5",
           "--max-rounds", "200", "--max-seconds", "600"]
TICKS = os.sysconf("SC_CLK_TCK")
GRACE = 120  # seconds past a job's time limit before mpiexec kills it; as many again before the runner kills mpiexec
TIMEOUT_RC = 124  # the exit status recorded for a job the runner killed
EMULATE_HOSTS = ROOT / "scripts" / "emulate_hosts.sh"  # hosts as network namespaces of this machine (needs root)


def role_of(rank, pipelines):
    if rank == 0:
        return "Dispatcher"
    if rank <= 3 * pipelines:
        return ("Tokenizer", "Filter", "Batcher")[(rank - 1) % 3]
    return "Learner"


def bible_corpus():
    """data/kjv.txt, made with scripts/kjv_corpus.sh if missing."""
    path = ROOT / "data" / "kjv.txt"
    subprocess.run(["bash", str(ROOT / "scripts" / "kjv_corpus.sh"), str(path)], check=True)
    return path


def bible_config(workdir, **settings):
    """A copy of the shipped Bible config in workdir/config, with cfg.json keys overridden."""
    cfg_dir = Path(workdir) / "config"
    shutil.copytree(ROOT / "config", cfg_dir, dirs_exist_ok=True)
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update(settings)
    (cfg_dir / "cfg.json").write_text(json.dumps(cfg, indent=2))
    return cfg_dir


def _sample(pid):
    """(cpu seconds, rss MiB, peak rss MiB) of one process."""
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(stat[11]) + int(stat[12])) / TICKS
    rss = hwm = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) / 1024
    return cpu, rss, hwm


def run(n, corpora, cfg_dir, out_dir, window=None, timeout=600, sample_every=0.5):
    """Runs the job; returns (metrics rows, {rank: list of (t, cpu, rss, hwm)}, stdout).

    `window` = (start, end) in seconds after the first round line: CPU use is measured between those times.
    """
    tag = str(os.getpid()) + str(time.monotonic_ns())
    env = {**os.environ, "FEDAVG_BENCH_TAG": tag, "MPIEXEC_TIMEOUT": str(timeout)}
    cmd = [MPIEXEC, "-n", str(n), str(APP), "--config", str(cfg_dir), "--out", str(out_dir)]
    cmd += [str(c) for c in corpora]
    # Output goes to files: a pipe nobody reads fills up and blocks the job's writes.
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    out_path, err_path = Path(out_dir) / "job.stdout", Path(out_dir) / "job.stderr"
    with open(out_path, "w") as out_f, open(err_path, "w") as err_f:
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, text=True, env=env)
    samples = {}
    pids = {}
    t0 = time.monotonic()
    while proc.poll() is None and time.monotonic() - t0 < timeout:
        if len(pids) < n:
            pids = find_tagged(tag)
        now = time.monotonic() - t0
        for rank, pid in pids.items():
            try:
                samples.setdefault(rank, []).append((now, *_sample(pid)))
            except (OSError, IndexError):
                pass
        time.sleep(sample_every)
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=60)
    out, err = out_path.read_text(), err_path.read_text()
    if proc.returncode != 0:
        raise RuntimeError(f"job failed ({proc.returncode}):\n{err[-3000:]}")
    name = json.loads((Path(cfg_dir) / "cfg.json").read_text())["data_name"]
    rows = (Path(out_dir) / f"{name}_metrics.csv").read_text().strip().splitlines()
    header = rows[0].split(",")
    metrics = [dict(zip(header, map(float, r.split(",")))) for r in rows[1:]]
    return metrics, samples, out


def find_tagged(tag):
    """{rank: pid} of the job's ranks. Each rank runs under a watcher, a process with the same environment
    (src/core/rank_watch.hpp): the rank is the one whose parent has the same rank."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if ("FEDAVG_BENCH_TAG=" + tag).encode() not in env:
            continue
        for e in env:
            if e.startswith((b"PMI_RANK=", b"OMPI_COMM_WORLD_RANK=")):
                found.setdefault(int(e.split(b"=")[1]), []).append(int(entry.name))
                break
    watched = os.environ.get("FEDAVG_RANK_WATCH") != "0"
    ranks = {rank: _innermost(pids) if watched else pids[0] for rank, pids in found.items()}
    return {rank: pid for rank, pid in ranks.items() if pid is not None}


def _innermost(pids):
    """Of the processes of one rank, the one whose parent is among them (the rank under its watcher); None while
    the watcher has not started it."""
    for pid in pids:
        try:
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent in pids:
            return pid
    return None


def cpu_share(series, start, end):
    """Fraction of one core a process used between times start and end (seconds since launch)."""
    pts = [s for s in series if start <= s[0] <= end]
    if len(pts) < 2:
        return float("nan")
    return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])


def emulated_mpiexec(prefix, ranks_per_host):
    """mpiexec and its options for ranks_per_host[h] ranks on emulated host h (EMULATE_HOSTS, the hosts named
    prefix-h0, prefix-h1, ...), the ranks placed host by host in order."""
    layout = ",".join(f"{prefix}-h{h}:{n}" for h, n in enumerate(ranks_per_host))
    return ["bash", str(EMULATE_HOSTS), "ctl", prefix, MPIEXEC, "-launcher", "ssh", "-launcher-exec",
            str(EMULATE_HOSTS), "-localhost", "10.77.0.1", "-hosts", layout, "-n", str(sum(ranks_per_host))]


def comma_list(convert):
    """argparse type of a comma-separated list: "1,2,4" -> [convert("1"), convert("2"), convert("4")]."""
    return lambda text: [convert(item) for item in text.split(",") if item]


def finished(run_dir, spec):
    """Did this exact job (spec.json equal to spec) already end in run_dir with status 0 and write its stats?"""
    try:
        same = json.loads((run_dir / "spec.json").read_text()) == spec
        rc = int((run_dir / "job.rc").read_text())
    except (OSError, ValueError):
        return False
    return same and rc == 0 and any(run_dir.glob("*_stats.txt"))


def launch(cmd, run_dir, time_limit, env=None):
    """Runs the job with its output in run_dir/job.{stdout,stderr} and at most GRACE seconds past time_limit
    (mpiexec's MPIEXEC_TIMEOUT, then this process kills it), with `env` added to the environment; writes its exit
    status to run_dir/job.rc and returns it."""
    env = {**os.environ, **(env or {}), "MPIEXEC_TIMEOUT": str(math.ceil(time_limit + GRACE))}
    # Output goes to files: a pipe nobody reads fills up and blocks the job's writes.
    with open(run_dir / "job.stdout", "w") as out, open(run_dir / "job.stderr", "w") as err:
        try:
            rc = subprocess.run(cmd, stdout=out, stderr=err, env=env, timeout=time_limit + 2 * GRACE).returncode
        except subprocess.TimeoutExpired:
            rc = TIMEOUT_RC
    (run_dir / "job.rc").write_text(f"{rc}\n")
    return rc


def run_in(run_dir, config_dir, cfg, cmd, spec, time_limit, fresh=False, env=None):
    """Runs the job cmd in run_dir, with a copy of config_dir whose cfg.json is cfg, unless a finished job of the
    same spec is there (finished; fresh: run it anyway); `env` is added to its environment. Returns (exit status,
    reused)."""
    if not fresh and finished(run_dir, spec):
        return 0, True
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.copytree(config_dir, run_dir / "config")
    (run_dir / "config" / "cfg.json").write_text(json.dumps(cfg, indent=2) + "\n")
    (run_dir / "spec.json").write_text(json.dumps(spec, indent=2) + "\n")
    return launch(cmd, run_dir, time_limit, env), False


def error_line(run_dir):
    """The job's reason for failing: its last "[fedavg] rank N (Role): reason" line, else its last stderr line
    (mpiexec's own abort and timeout messages come after the reason); "" if stderr is empty."""
    lines = [ln.strip() for ln in (run_dir / "job.stderr").read_text(errors="replace").splitlines() if ln.strip()]
    reasons = [ln for ln in lines if ln.startswith("[fedavg]")]
    return (reasons or lines or [""])[-1]


def read_stats(path):
    """A job's final line (its *_stats.txt: key=value pairs) as a dict of numbers and strings."""
    stats = {}
    for item in path.read_text().split():
        key, sep, value = item.partition("=")
        if not sep:
            continue
        try:
            stats[key] = float(value)
        except ValueError:
            stats[key] = value
    return stats


def parse_set(item):
    """"key=value" -> (key, value); the value is JSON, or a plain string when it is not JSON (argparse type of the
    benchmarks' --set)."""
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--set wants key=value, got {item!r}")
    try:
        return key, json.loads(text)
    except json.JSONDecodeError:
        return key, text


def table(rows, header):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)

"""Helpers for end-to-end tests: a generated toy corpus, its config, and a time-limited mpiexec launcher."""

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FEDAVG_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
APP = BUILD / "src" / "fedavg_mpi"
PYTHON = "/usr/bin/python3"

# Every job gets this wall-clock limit; mpiexec itself kills the job a little earlier.
JOB_TIMEOUT = 90


def load_factor():
    """How many times over the machine's cores are asked for now (the 1-minute load average per core), at least 1
    and at most 10: a bound on how long something takes stretches by it, so that a test that checks promptness
    holds on a busy machine and stays as strict as written on an idle one."""
    return min(10.0, max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)))


def within(seconds):
    """A time bound of `seconds` on an idle machine, stretched by the load now (load_factor)."""
    return seconds * load_factor()


ADJ = "big small red old young dark bright quiet".split()
NOUN = "dog cat bird horse fish king queen child".split()
VERB = "sees finds likes follows hears calls".split()


def toy_lines(n_lines, seed):
    """Sentences from a tiny grammar: the next word is predictable, so the loss must fall."""
    rng = random.Random(seed)
    lines = []
    for _ in range(n_lines):
        words = ["the", rng.choice(ADJ), rng.choice(NOUN), rng.choice(VERB), "the", rng.choice(ADJ),
                 rng.choice(NOUN), "and", "then", "it", "sleeps"]
        lines.append(" ".join(words).capitalize() + ".")
    return lines


def write_corpus(path, n_lines=3000, seed=0):
    path.write_text("\n".join(toy_lines(n_lines, seed)) + "\n")
    return path


class Job:
    def __init__(self, proc, out_dir, name):
        self.proc = proc
        self.out = out_dir
        self.name = name

    @property
    def rc(self):
        return self.proc.returncode

    @property
    def stdout(self):
        return self.proc.stdout

    @property
    def stderr(self):
        return self.proc.stderr

    def metrics(self):
        rows = (self.out / f"{self.name}_metrics.csv").read_text().strip().splitlines()
        header = rows[0].split(",")
        return [dict(zip(header, map(float, r.split(",")))) for r in rows[1:]]

    def stats(self):
        line = (self.out / f"{self.name}_stats.txt").read_text().splitlines()[0].strip()
        assert line.startswith("final: "), line
        return dict(kv.split("=", 1) for kv in line[len("final: "):].split())


@pytest.fixture(scope="session")
def app():
    assert APP.exists(), f"{APP} is not built: run scripts/setup.sh"
    return APP


def prepare_toy(d):
    """Writes a toy corpus into folder d and the config python/prepare.py makes for it (d/config, d/train.txt), at
    dim 32: small and quick. Its checkpoints come every round (checkpoint_every 1), not every checkpoint_seconds:
    the tests of crashes, resumes and restarts count in rounds."""
    corpus = write_corpus(d / "toy.txt")
    subprocess.run([PYTHON, str(ROOT / "python" / "prepare.py"), str(corpus), "--out", str(d / "config"),
                    "--train-out", str(d / "train.txt"), "--data-name", "toy", "--min-count", "1",
                    "--test-windows", "200", "--seed", "3", "--dim", "32",
                    "--epoch", "0", "--target", "2.5", "--max-rounds", "200", "--max-seconds", "600"],
                   check=True, capture_output=True, text=True,
                   timeout=60)
    cfg_path = d / "config" / "cfg.json"
    cfg_path.write_text(json.dumps({**json.loads(cfg_path.read_text()), "checkpoint_every": 1}, indent=2))
    return d


@pytest.fixture(scope="session")
def toy_config(tmp_path_factory):
    """The toy corpus and config (prepare_toy), shared and read-only."""
    return prepare_toy(tmp_path_factory.mktemp("toy"))


# What run_job sets over the toy config: short rounds, no stop but max_rounds, and a shuffle pool of 32768 windows
# (the default, 262144, costs every job's pipeline about a second of CPU to fill before the first batch; the tests
# of the shuffle itself set their own).
JOB_SETTINGS = {"bpe": 10, "bs": 64, "target": 0.0, "max_rounds": 4, "liveness_seconds": 20, "progress_seconds": 0,
                "shuffle_windows": 32768}


def job_config(config_dir, toy_config, cfg=None):
    """Writes the toy config into `config_dir` (copied there first if missing) with JOB_SETTINGS and `cfg`."""
    if not config_dir.exists():
        shutil.copytree(toy_config / "config", config_dir)
    settings = json.loads((config_dir / "cfg.json").read_text())
    settings.update(JOB_SETTINGS)
    settings.update(cfg or {})
    (config_dir / "cfg.json").write_text(json.dumps(settings, indent=2))
    return config_dir


def launch(app, n, config_dir, out, corpora, cwd, python_dir=None, extra=(), timeout=JOB_TIMEOUT):
    """One job under mpiexec with a hard time limit (mpiexec itself kills it a little earlier) -> Job."""
    cmd = ["mpiexec", "-n", str(n), str(app), "--config", str(config_dir), "--out", str(out)]
    if python_dir:
        cmd += ["--python", str(python_dir)]
    cmd += list(extra) + [str(c) for c in corpora]
    # A hang is a failure however busy the machine is, but a slow job on a busy one is not: the limit stretches
    # with the load, up to 3 times.
    timeout = round(timeout * min(3.0, load_factor()))
    env = {**os.environ, "MPIEXEC_TIMEOUT": str(timeout - 5)}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    try:
        name = json.loads((config_dir / "cfg.json").read_text()).get("data_name", "toy")
    except ValueError:  # a test of malformed cfg.json
        name = "toy"
    return Job(proc, out, name)


@pytest.fixture
def run_job(app, toy_config, tmp_path):
    """run_job(n, corpora=None, cfg=None, python_dir=None, extra=(), config_dir=None, out=None, timeout=JOB_TIMEOUT)
    -> Job, with a hard time limit. Each job writes into a fresh output folder, except one that continues or
    replaces the last (--resume, --overwrite) or is given `out`; the first job's folder is tmp_path / "out"."""
    outs = []

    def run(n, corpora=None, cfg=None, python_dir=None, extra=(), config_dir=None, out=None, timeout=JOB_TIMEOUT):
        if config_dir is None:
            config_dir = job_config(tmp_path / "config", toy_config, cfg)
        if corpora is None:
            corpora = [toy_config / "train.txt"]
        if out is None:
            if outs and ("--resume" in extra or "--overwrite" in extra):
                out = outs[-1]
            else:
                out = tmp_path / ("out" if not outs else f"out{len(outs) + 1}")
        outs.append(out)
        return launch(app, n, config_dir, out, corpora, tmp_path, python_dir, extra, timeout)

    return run


@pytest.fixture(scope="session")
def finished_run(app, toy_config, tmp_path_factory):
    """One finished run that many tests read or start from, trained once: run_job(6, cfg={"max_rounds": 2}) (two
    learners, one pipeline). Read-only: a test that changes it, or continues it, takes finished_copy."""
    d = tmp_path_factory.mktemp("finished")
    config_dir = job_config(d / "config", toy_config, {"max_rounds": 2})
    job = launch(app, 6, config_dir, d / "out", [toy_config / "train.txt"], d)
    assert job.rc == 0, job.stderr
    return job


@pytest.fixture
def finished_copy(finished_run, toy_config, tmp_path):
    """A copy of finished_run in tmp_path / "out", the folder of run_job's first job, so that run_job's --resume and
    --overwrite find it, and its config in tmp_path / "config", where run_job writes its config."""
    job_config(tmp_path / "config", toy_config, {"max_rounds": 2})
    shutil.copytree(finished_run.out, tmp_path / "out")
    return Job(finished_run.proc, tmp_path / "out", finished_run.name)


@pytest.fixture
def broken_python(tmp_path):
    """broken_python(code, module="library.py") -> a copy of python/ with `code` appended to `module` (to inject
    faults, or to edit the model)."""

    def make(code, module="library.py"):
        d = tmp_path / "python_broken"
        if not d.exists():
            shutil.copytree(ROOT / "python", d, ignore=shutil.ignore_patterns("__pycache__"))
        with open(d / module, "a") as f:
            f.write("\n" + code + "\n")
        return d

    return make


def parent_of(pid):
    """The parent pid of `pid`, or None if it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descends_from(pid, ancestor):
    while pid and pid > 1:
        if pid == ancestor:
            return True
        pid = parent_of(pid)
    return False


def rank_process(rank, under):
    """The pid of rank `rank` (the process its watcher forked) among the descendants of process `under` (the
    test's mpiexec or supervisor: other jobs on the machine have ranks of the same number), or None."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
            parent = parent_of(proc.name)
            parent_comm = Path(f"/proc/{parent}/comm").read_text().strip()
            comm = (proc / "comm").read_text().strip()
        except (OSError, ValueError, IndexError):
            continue
        if (comm == "fedavg_mpi" and parent_comm == "fedavg_mpi" and f"PMI_RANK={rank}".encode() in environ
                and descends_from(int(proc.name), under)):
            return int(proc.name)
    return None

"""The demo job submitted to a single-node Slurm cluster (scripts/slurm_local.sh) with sbatch.

Needs root (the daemons run as root); skipped otherwise, and when Slurm cannot be brought up. Inside the
allocation the job is started as users would start it: plain `mpiexec -n 6` (MPICH's hydra finds the allocation
and starts its proxies with srun) and `srun --mpi=pmi2 -n 6`. The node has this machine's real cores, so the
batch script asks for 6 tasks with --overcommit.
"""

import os
import re
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FEDAVG_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
APP = BUILD / "src" / "fedavg_mpi"
SCRIPT = ROOT / "scripts" / "slurm_local.sh"
CORPUS = ROOT / "data" / "kjv.txt"

UP_TIMEOUT = 600  # includes installing the packages with apt-get the first time
JOB_MINUTES = 5  # sbatch --time: Slurm kills the job after this
JOB_TIMEOUT = 240  # the test gives up (cancels the job and fails) after this many seconds
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
            "BOOT_FAIL", "DEADLINE"}

LAUNCHERS = {
    "mpiexec": "mpiexec -n 6",
    "srun": "srun --mpi=pmi2 -n 6",
}

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="Slurm's daemons run as root: run the test as root")


def free_port_pair():
    """Two consecutive free TCP ports (slurmctld's and slurmd's), away from a system Slurm's 6817/6818."""
    for port in range(16900, 17900, 2):
        try:
            for p in (port, port + 1):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue
    raise RuntimeError("no two free consecutive ports in 16900-17899")


@pytest.fixture(scope="module")
def slurm():
    """A private single-node cluster for this module; its environment for Slurm's commands. Always torn down."""
    # Not under pytest's tmp_path: munged wants its socket's folders searchable by everyone.
    folder = tempfile.mkdtemp(prefix="fedavg-slurm-test-", dir="/tmp")
    env = {**os.environ, "FEDAVG_SLURM_DIR": folder, "FEDAVG_SLURM_PORT": str(free_port_pair()),
           "SLURM_CONF": f"{folder}/slurm.conf"}
    try:
        up = subprocess.run(["bash", str(SCRIPT), "up"], env=env, capture_output=True, text=True,
                            timeout=UP_TIMEOUT)
        if up.returncode != 0:
            pytest.skip(f"Slurm could not be brought up here (scripts/slurm_local.sh up exited {up.returncode}):\n"
                        f"{up.stderr[-2000:]}")
        yield env
    finally:
        subprocess.run(["bash", str(SCRIPT), "down"], env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def corpus():
    assert APP.exists(), f"{APP} is not built: run scripts/setup.sh"
    subprocess.run(["bash", str(ROOT / "scripts" / "kjv_corpus.sh"), str(CORPUS)], check=True, timeout=300)
    return CORPUS


def job_fields(job_id, env):
    out = subprocess.run(["scontrol", "show", "job", "-o", job_id], env=env, capture_output=True, text=True,
                         timeout=30).stdout
    return dict(re.findall(r"(\w+)=(\S*)", out))


def wait_for_job(job_id, env, output):
    """The job's final fields; cancels the job and fails the test if it does not end within JOB_TIMEOUT."""
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        fields = job_fields(job_id, env)
        if fields.get("JobState") in TERMINAL:
            return fields
        time.sleep(1)
    subprocess.run(["scancel", job_id], env=env, timeout=30)
    tail = output.read_text()[-3000:] if output.exists() else "(no output)"
    pytest.fail(f"job {job_id} did not end within {JOB_TIMEOUT} s; its output:\n{tail}")


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_sbatch_trains_the_demo(slurm, corpus, tmp_path, launcher):
    out = tmp_path / "trained"
    output = tmp_path / "job.out"
    run = LAUNCHERS[launcher]
    batch = tmp_path / "job.sh"
    batch.write_text(f"""#!/bin/bash
#SBATCH --job-name=fedavg-{launcher}
#SBATCH --ntasks=6
#SBATCH --overcommit
#SBATCH --time={JOB_MINUTES}
set -euo pipefail
# The ranks run in a Slurm job step (not forked by the batch script): each prints the step id it is in.
{run} sh -c 'echo "probe: step=${{SLURM_STEP_ID:-none}}"'
{run} {APP} --out {out} --overwrite --vocab-size 5000 {corpus}
""")
    submit = subprocess.run(["sbatch", "--parsable", f"--chdir={ROOT}", f"--output={output}", str(batch)],
                            env=slurm, capture_output=True, text=True, timeout=30)
    assert submit.returncode == 0, submit.stderr
    job_id = submit.stdout.strip().split(";")[0]

    fields = wait_for_job(job_id, slurm, output)
    log = output.read_text()
    assert fields["JobState"] == "COMPLETED" and fields["ExitCode"] == "0:0", f"{fields}\n{log[-3000:]}"

    probes = re.findall(r"^probe: step=(\S+)$", log, re.M)
    assert len(probes) == 6 and "none" not in probes, log[-3000:]

    stats = (out / "kjv_stats.txt").read_text().strip()
    assert stats.startswith("final: ") and "stopped=max_epochs" in stats, stats
    assert "learners=2 pipelines=1" in stats, stats  # 6 ranks: Dispatcher, one pipeline of 3, 2 learners
    lines = (out / "kjv.w2v.txt").read_text().splitlines()
    words, dim = map(int, lines[0].split())
    assert words == 5000 and len(lines) == words + 1, lines[0]
    assert len(lines[1].split()) == dim + 1

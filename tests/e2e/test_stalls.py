"""A rank stopped by a signal (SIGSTOP) is named by its watcher once half of liveness_seconds has passed, whatever
its role, and the job ends: its peers, which only see a silent rank, would otherwise blame whoever they wait on.
A rank whose watcher is killed names itself as it ends. A rank that is busy, answering nobody (a slow disk), is
blamed only by the ranks that wait on it directly, within their own limits: a rank that waits on a rank that waits
does not blame it, and the failure names the busy rank as stalled."""

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import JOB_TIMEOUT, rank_process, within

LIVENESS = 6
MARGIN = 4  # the watcher polls every 0.1 s; the job's end and mpiexec's teardown take the rest


def start_training(app, toy_config, tmp_path):
    """A job that trains for up to a minute, started in the background once it is training."""
    cfg_dir = tmp_path / "config"
    shutil.copytree(toy_config / "config", cfg_dir)
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"bpe": 10, "bs": 64, "target": 0.0, "max_rounds": 100000, "max_seconds": 60,
                "liveness_seconds": LIVENESS, "progress_seconds": 0})
    (cfg_dir / "cfg.json").write_text(json.dumps(cfg))
    out = tmp_path / "out"
    proc = subprocess.Popen(["mpiexec", "-n", "6", str(app), "--config", str(cfg_dir), "--out", str(out),
                             str(toy_config / "train.txt")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "MPIEXEC_TIMEOUT": str(JOB_TIMEOUT - 5)})
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline and not (out / "toy.h5").exists() and proc.poll() is None:
        time.sleep(0.2)  # until training is under way
    return proc


def signal_and_wait(proc, target, rank, signo):
    """Sends `signo` to target(pid of rank `rank`) and waits for the job to end; (its failure lines, the seconds
    from the signal to the end). The job must fail."""
    try:
        pid = rank_process(rank, proc.pid)
        assert pid, "rank process not found"
        os.kill(target(pid), signo)
        t0 = time.monotonic()
        _, stderr = proc.communicate(timeout=JOB_TIMEOUT)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0, stderr
    return [line for line in stderr.splitlines() if line.startswith("[fedavg] rank ")], took


@pytest.mark.parametrize("rank,role", [(5, "Learner"), (0, "Dispatcher"), (2, "Filter")])
def test_a_stopped_rank_is_named_within_half_its_liveness_limit(rank, role, app, toy_config, tmp_path):
    proc = start_training(app, toy_config, tmp_path)
    lines, took = signal_and_wait(proc, lambda pid: pid, rank, signal.SIGSTOP)
    assert lines and lines[0].startswith(f"[fedavg] rank {rank} ({role}): stopped by signal 19 (SIGSTOP)"), lines
    assert took < LIVENESS / 2 + MARGIN, (took, lines)


def test_a_rank_stopped_before_reading_its_settings_is_named_in_half_its_liveness(app, toy_config, tmp_path):
    """Before a rank has read its settings, its watcher already knows the liveness_seconds the command line or
    cfg.json gives, and ends a rank stopped by a signal after half of it."""
    cfg_dir = tmp_path / "config"
    shutil.copytree(toy_config / "config", cfg_dir)
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"bpe": 10, "bs": 64, "max_rounds": 2, "liveness_seconds": LIVENESS})
    (cfg_dir / "cfg.json").write_text(json.dumps(cfg))
    # Rank 4 stops itself as its interpreter starts: it has joined MPI (a rank stopped before that holds up
    # mpiexec's start-up, which has no limit) and has not read its settings.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text('import os\nimport signal\nif os.environ.get("PMI_RANK") == "4":\n'
                                           '    os.kill(os.getpid(), signal.SIGSTOP)\n')
    t0 = time.monotonic()
    job = subprocess.run(["mpiexec", "-n", "5", str(app), "--config", str(cfg_dir), "--out", str(tmp_path / "out"),
                          str(toy_config / "train.txt")], capture_output=True, text=True, timeout=JOB_TIMEOUT + 30,
                         env={**os.environ, "PYTHONPATH": str(site), "MPIEXEC_TIMEOUT": str(JOB_TIMEOUT + 25)})
    took = time.monotonic() - t0
    assert job.returncode != 0, job.stderr
    lines = [line for line in job.stderr.splitlines() if line.startswith("[fedavg] rank ")]
    assert lines and lines[0].startswith("[fedavg] rank 4 (Unassigned): stopped by signal 19 (SIGSTOP)"), lines
    assert f" for {LIVENESS // 2} s (half of liveness_seconds): ended" in lines[0], lines
    assert took < within(LIVENESS / 2 + 3 * MARGIN), (took, lines)


def test_a_rank_whose_watcher_is_killed_names_itself(app, toy_config, tmp_path):
    proc = start_training(app, toy_config, tmp_path)
    killed = []

    def watcher_of(pid):
        killed.append(int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]))
        return killed[0]

    lines, _ = signal_and_wait(proc, watcher_of, 4, signal.SIGKILL)
    # Lines of different ranks reach mpiexec through different pipes, so another rank's line about its own end
    # (a peer that loses rank 4 mid-message may abort) can come first; rank 4's is its only one.
    assert [line for line in lines if line.startswith("[fedavg] rank 4 ")] == [
        f"[fedavg] rank 4 (Learner): its watcher, process {killed[0]} (the process mpiexec started), was killed; "
        "the rank ends with it"], lines


def resume_paused(run_job, finished_copy, fault, liveness):
    """Resumes finished_copy (2 rounds) for 2 more, the Dispatcher meeting `fault` as it reads the checkpoint."""
    return run_job(6, cfg={"max_rounds": 4, "liveness_seconds": liveness},
                   extra=["--resume", "--inject-fault", f"0:2:{fault}"])


def test_a_dispatcher_slow_to_read_its_checkpoint_is_waited_for(run_job, finished_copy):
    """The Tokenizer waits for its read position twice liveness_seconds; the Filter, which waits for the
    Tokenizer's first tokens for liveness_seconds, asks it first and waits on while it waits in turn. (A shorter
    liveness limit than the other tests': the pause is 1.5 times it, and only the resumed run meets it.)"""
    liveness = 4
    job = resume_paused(run_job, finished_copy, f"pause={liveness * 1.5}", liveness)
    assert job.rc == 0, job.stderr
    assert "resuming from round 2" in job.stdout
    assert "liveness limit" not in job.stderr, job.stderr


def test_a_dispatcher_stuck_reading_its_checkpoint_is_the_one_named(run_job, finished_copy):
    t0 = time.monotonic()
    job = resume_paused(run_job, finished_copy, "hang", LIVENESS / 2)
    assert job.rc != 0
    lines = [line for line in job.stderr.splitlines() if "liveness limit" in line]
    assert lines, job.stderr
    # Whoever reports it, the stalled rank named is the Dispatcher (scripts/supervise.py reads "stalled at").
    for line in lines:
        assert "stalled at rank(s) 0, which does not answer what it waits on" in line, job.stderr
    assert time.monotonic() - t0 < within(LIVENESS + 30)

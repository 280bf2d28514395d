"""Faults at run time: every role's exception, kill and hang, and a crash, end the job quickly and name the
rank; a killed run resumes from its checkpoint; a kill during a checkpoint write leaves the previous one; SIGTERM
stops cleanly (fedavg and hogwild); the same seed gives bit-identical embeddings."""

import csv
import json
import os
import shutil
import signal
import subprocess
import time

import h5py
import pytest

from conftest import JOB_TIMEOUT, PYTHON, ROOT, within

ROLES = {0: "Dispatcher", 1: "Tokenizer", 2: "Filter", 3: "Batcher", 4: "Learner"}


@pytest.mark.parametrize("rank", sorted(ROLES))
def test_injected_exception_names_rank_and_role(rank, run_job):
    t0 = time.monotonic()
    job = run_job(6, cfg={"max_rounds": 20}, extra=["--inject-fault", f"{rank}:2:exception"])
    assert job.rc != 0
    assert f"rank {rank} ({ROLES[rank]}): injected fault: exception" in job.stderr, job.stderr
    assert time.monotonic() - t0 < within(30)


@pytest.mark.parametrize("rank", sorted(ROLES))
def test_killed_rank_ends_the_job(rank, run_job):
    t0 = time.monotonic()
    job = run_job(6, cfg={"max_rounds": 20}, extra=["--inject-fault", f"{rank}:2:kill"])
    assert job.rc != 0
    # The rank cannot say so itself: its watcher does.
    assert f"[fedavg] rank {rank} ({ROLES[rank]}): killed by signal 9 (SIGKILL) on host" in job.stderr, job.stderr
    assert time.monotonic() - t0 < within(30)


@pytest.mark.parametrize("rank", [2, 4])
def test_a_crashed_rank_is_named_and_ends_the_job(rank, run_job):
    t0 = time.monotonic()
    job = run_job(6, cfg={"max_rounds": 20}, extra=["--inject-fault", f"{rank}:2:crash"])
    assert job.rc != 0
    # The rank dies of its SIGSEGV at once (no library's handler in between, which could deadlock), and its
    # watcher names it.
    assert f"[fedavg] rank {rank} ({ROLES[rank]}): killed by signal 11 (SIGSEGV) on host" in job.stderr, job.stderr
    assert "Caught signal" not in job.stderr, job.stderr
    assert time.monotonic() - t0 < within(30)


# The first rank to report must name the hung peer (which neighbour notices first depends on buffering).
@pytest.mark.parametrize("rank,blamed", [
    (5, "rank 0 (Dispatcher): liveness limit: the start of round 2 on learner rank(s) 5"),
    (3, "Batcher rank 3"),
    (2, "Filter rank 2"),
    (0, "(Learner): liveness limit: broadcast from rank 0"),
])
def test_hung_rank_is_named_by_its_peer(rank, blamed, run_job):
    t0 = time.monotonic()
    job = run_job(6, cfg={"max_rounds": 50, "liveness_seconds": 2}, extra=["--inject-fault", f"{rank}:2:hang"])
    assert job.rc != 0
    first = [ln for ln in job.stderr.splitlines() if "liveness limit" in ln][0]
    assert blamed in first, job.stderr
    assert time.monotonic() - t0 < within(40)


def test_a_resume_on_another_corpus_is_refused_and_a_copy_is_not(run_job, toy_config, tmp_path):
    text = (toy_config / "train.txt").read_text()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text)
    job = run_job(6, corpora=[corpus], cfg={"max_rounds": 2})
    assert job.rc == 0, job.stderr
    checkpoint = (job.out / "toy.h5").read_bytes()
    # The same size, one word changed.
    changed = text.replace(" the ", " big ", 1)
    assert len(changed) == len(text) and changed != text
    corpus.write_text(changed)
    job = run_job(6, corpora=[corpus], cfg={"max_rounds": 4}, extra=["--resume"])
    assert job.rc != 0
    lines = [ln for ln in job.stderr.splitlines() if ln.startswith("[fedavg] rank ")]
    assert len(lines) == 1 and lines[0].startswith(f"[fedavg] rank 0 (Dispatcher): corpus {corpus}: not the file "), \
        job.stderr
    assert "(its first or last MiB differ); resume with the same corpora" in lines[0]
    assert (job.out / "toy.h5").read_bytes() == checkpoint
    # A copy under another name, written later, is the same corpus.
    copy = tmp_path / "copy.txt"
    copy.write_text(text)
    job = run_job(6, corpora=[copy], cfg={"max_rounds": 4}, extra=["--resume"])
    assert job.rc == 0, job.stderr
    assert "resuming from round 2" in job.stdout


def test_kill_then_resume_continues_and_the_loss_keeps_falling(run_job):
    # Four batches a round: rounds 4 to 8 are the loss's steep fall, well clear of the noise of the plateau it
    # reaches later; a resume that lost the weights would start again at the first loss.
    job = run_job(6, cfg={"max_rounds": 8, "bpe": 4}, extra=["--inject-fault", "4:5:kill"])
    assert job.rc != 0
    with h5py.File(job.out / "toy.h5", "r") as f:
        saved = int(f.attrs["round"])
        assert saved == 4  # the kill came during round 5: at most one round lost
    metrics_file = job.out / "toy_metrics.csv"
    before = metrics_file.read_text().splitlines()
    job = run_job(6, cfg={"max_rounds": 8, "bpe": 4}, extra=["--resume"])
    assert job.rc == 0, job.stderr
    assert "resuming from round 4" in job.stdout
    rows = job.metrics()
    assert [r["round"] for r in rows] == list(range(9))
    # The header and rounds 0-4 are kept as they were written (compared as text: unscored columns are nan).
    assert metrics_file.read_text().splitlines()[:6] == before[:6]
    losses = [r["test_loss"] for r in rows]
    assert losses[5] < losses[4] < losses[0], losses
    assert losses[8] < losses[4], losses
    assert job.stats()["rounds"] == "8"


@pytest.mark.parametrize("strategy", ["fedavg", "hogwild"])
def test_checkpoints_follow_training_time_by_default(strategy, run_job):
    # checkpoint_every 0 is the default: a checkpoint once checkpoint_seconds of training have passed since the
    # last one. A round of the toy takes milliseconds, so 0.001 s asks for one nearly every round and an hour for
    # none before the end; the learner killed in round 6 shows which were written.
    by_time = {"strategy": strategy, "max_rounds": 40, "checkpoint_every": 0}
    job = run_job(6, cfg={**by_time, "checkpoint_seconds": 3600}, extra=["--inject-fault", "4:6:kill"])
    assert job.rc != 0
    assert not (job.out / "toy.h5").exists()
    assert "no checkpoint was written" in job.stderr or "rank 4 (Learner)" in job.stderr, job.stderr
    job = run_job(6, cfg={**by_time, "checkpoint_seconds": 0.001}, extra=["--inject-fault", "4:6:kill", "--overwrite"])
    assert job.rc != 0
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert 2 <= int(f.attrs["round"]) < 40  # written before the kill (hogwild's rounds may run ahead of it)
        assert len(f["learner_state"]) == 2


@pytest.mark.parametrize("background", ["never", "always"])
def test_kill_during_checkpoint_write_keeps_the_previous_checkpoint(background, run_job):
    job = run_job(6, cfg={"max_rounds": 8, "checkpoint_background": background},
                  extra=["--inject-fault", "0:3:kill_in_checkpoint"])
    assert job.rc != 0
    with h5py.File(job.out / "toy.h5", "r") as f:  # readable, and the one from round 2
        assert int(f.attrs["round"]) == 2
        assert f["embedding"].shape[1] == 32
    job = run_job(6, cfg={"max_rounds": 4, "checkpoint_background": background}, extra=["--resume"])
    assert job.rc == 0, job.stderr
    assert "resuming from round 2" in job.stdout
    with h5py.File(job.out / "toy.h5", "r") as f:  # the last checkpoint is whole before the job ends
        assert int(f.attrs["round"]) == 4


@pytest.mark.parametrize("strategy,ranks", [("fedavg", 5), ("hogwild", 6)])
def test_sigterm_stops_at_a_round_boundary_with_outputs(app, toy_config, tmp_path, run_job, strategy, ranks):
    import json
    import shutil
    cfg_dir = tmp_path / "config"
    shutil.copytree(toy_config / "config", cfg_dir)
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"bpe": 10, "bs": 64, "target": 0.0, "max_rounds": 100000, "max_seconds": 60, "strategy": strategy})
    (cfg_dir / "cfg.json").write_text(json.dumps(cfg))
    out = tmp_path / "out"
    proc = subprocess.Popen(["mpiexec", "-n", str(ranks), str(app), "--config", str(cfg_dir), "--out", str(out),
                             str(toy_config / "train.txt")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "MPIEXEC_TIMEOUT": "80"})
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and not (out / "toy.h5").exists():
            time.sleep(0.2)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - t0 < within(15)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "stopped by SIGTERM" in stdout
    stats = (out / "toy_stats.txt").read_text()
    assert "stopped=SIGTERM" in stats
    rounds = int(stats.split("rounds=")[1].split()[0])
    with h5py.File(out / "toy.h5", "r") as f:
        assert int(f.attrs["round"]) == rounds
    assert (out / "toy.w2v.txt").exists()


@pytest.mark.parametrize("layout", ["pipeline per learner", "shared pipeline, fixed order"])
def test_same_seed_gives_bit_identical_embeddings(layout, run_job, toy_config, tmp_path):
    if layout == "pipeline per learner":
        kwargs = dict(n=9, corpora=[toy_config / "train.txt"] * 2,
                      cfg={"max_rounds": 4, "share_host": False, "pipeline_per_file": True})
    else:
        kwargs = dict(n=6, cfg={"max_rounds": 4, "fixed_batch_order": True, "share_host": False})
    first = run_job(**kwargs)
    assert first.rc == 0, first.stderr
    a = (first.out / "toy.w2v.txt").read_bytes()
    second = run_job(**kwargs)
    assert second.rc == 0, second.stderr
    assert (second.out / "toy.w2v.txt").read_bytes() == a


def test_the_supervisor_restarts_a_failed_job_from_its_checkpoint(app, toy_config, tmp_path):
    """scripts/supervise.py: a learner killed in round 3 costs that round; the job goes on from round 2's
    checkpoint with no human step, and the restart and its reason are in the metrics and the statistics."""
    cfg_dir = tmp_path / "config"
    shutil.copytree(toy_config / "config", cfg_dir)
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"bpe": 10, "bs": 64, "target": 0, "max_rounds": 5, "liveness_seconds": 20})
    (cfg_dir / "cfg.json").write_text(json.dumps(cfg))
    out = tmp_path / "out"
    cmd = [PYTHON, str(ROOT / "scripts" / "supervise.py"), "--restarts", "1", "--", "mpiexec", "-n", "6", str(app),
           "--config", str(cfg_dir), "--out", str(out), "--inject-fault", "5:3:exception",
           str(toy_config / "train.txt")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=JOB_TIMEOUT,
                          env={**os.environ, "MPIEXEC_TIMEOUT": str(JOB_TIMEOUT - 10)})
    assert proc.returncode == 0, proc.stderr
    assert "resuming from round 2" in proc.stdout
    lines = (out / "toy_stats.txt").read_text().splitlines()
    assert "restarts=1" in lines[0] and "rounds=5" in lines[0]
    assert lines[1] == "restart 1: round 2: rank 5 (Learner): injected fault: exception at round 3 (--inject-fault)"
    with open(out / "toy_metrics.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["round"] + ":" + r["restarts"] for r in rows] == ["0:0", "1:0", "2:0", "3:1", "4:1", "5:1"]


def test_the_supervisor_does_not_restart_a_job_with_bad_input(app, toy_config, tmp_path):
    cmd = [PYTHON, str(ROOT / "scripts" / "supervise.py"), "--restarts", "3", "--", "mpiexec", "-n", "5", str(app),
           "--config", str(toy_config / "config"), "--out", str(tmp_path / "out"), "--dim", "zero",
           str(toy_config / "train.txt")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MPIEXEC_TIMEOUT": "50"})
    assert proc.returncode == 2, proc.stderr  # the program's status for bad input, passed on
    assert "not restarting" in proc.stderr and "restart 1" not in proc.stderr


def test_the_supervisor_never_replaces_an_earlier_run(app, finished_copy, toy_config, tmp_path):
    """A finished run whose checkpoint is gone: the program refuses to touch its outputs, and the supervisor stops
    there, with no --overwrite that would replace them."""
    (finished_copy.out / "toy.h5").unlink()
    vectors = (finished_copy.out / "toy.w2v.txt").read_bytes()
    cmd = [PYTHON, str(ROOT / "scripts" / "supervise.py"), "--restarts", "3", "--", "mpiexec", "-n", "6", str(app),
           "--config", str(tmp_path / "config"), "--out", str(finished_copy.out), "--set", "seed=99",
           str(toy_config / "train.txt")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env={**os.environ, "MPIEXEC_TIMEOUT": "50"})
    assert proc.returncode == 2, proc.stderr
    assert "holds an earlier run" in proc.stderr and "not restarting" in proc.stderr, proc.stderr
    assert "restart 1" not in proc.stderr
    assert (finished_copy.out / "toy.w2v.txt").read_bytes() == vectors
    assert not (finished_copy.out / ".previous").exists()


def test_the_supervisor_sees_a_restart_that_dies_before_round_0_at_once(tmp_path):
    """A restart that fails at start-up is restarted (or given up) as soon as it exits, not after --start-seconds."""
    program = tmp_path / "fedavg_mpi"
    program.write_text("#!/bin/sh\necho started >> \"$(dirname \"$0\")/runs\"\nexit 1\n")
    program.chmod(0o755)
    cmd = [PYTHON, str(ROOT / "scripts" / "supervise.py"), "--restarts", "2", "--start-seconds", "300", "--",
           str(program), "--out", str(tmp_path / "out"), "corpus.txt"]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "2 restarts are used up" in proc.stderr, proc.stderr
    assert (tmp_path / "runs").read_text().count("started") == 3
    assert time.monotonic() - t0 < 100  # each restart is seen to end at once, not after 300 s


def rank_map(layout, pipelines, named="{}"):
    """The rank map fedavg_mpi writes (OUT/NAME_ranks.json) for `pipelines` pipelines over -hosts `layout`
    [(host, ranks), ...], ranks given out in order; `named`: the name each host gives itself, from its -hosts name."""
    hosts = [named.format(host) for host, n in layout for _ in range(n)]
    stages = ["Tokenizer", "Filter", "Batcher"]
    roles = ["Dispatcher"] + [stages[(r - 1) % 3] if r <= 3 * pipelines else "Learner" for r in range(1, len(hosts))]
    return {"world_size": len(hosts), "pipelines": pipelines,
            "ranks": [{"rank": r, "role": role, "host": host} for r, (role, host) in enumerate(zip(roles, hosts))]}


# -hosts layout, --pipelines, the rank that fails, the -hosts and -n of the restart, the hosts' own names.
DROPS = {
    "a pipeline host stays": ([("h0", 4), ("h1", 3), ("h2", 2)], 2, 5, "h0:4,h1:3,h2:2", "9", "{}"),
    "a learner host goes": ([("h0", 7), ("h1", 2), ("h2", 2)], 2, 9, "h0:7,h1:2", "9", "{}"),
    "a host named in full goes": ([("h0", 7), ("h1", 2), ("h2", 2)], 2, 9, "h0:7,h1:2", "9", "{}.example.org"),
    "a host named otherwise goes by its place": ([("h0", 7), ("h1", 2), ("h2", 2)], 2, 10, "h0:7,h1:2", "9",
                                                 "node-{}"),
    "a host named otherwise that runs a pipeline stays": ([("h0", 4), ("h1", 3), ("h2", 2)], 2, 4,
                                                          "h0:4,h1:3,h2:2", "9", "node-{}"),
    "the last learners of a pipeline stay": ([("h0", 7), ("h1", 2)], 2, 8, "h0:7,h1:2", "9", "{}"),
    "no map, no host left out": ([("h0", 4), ("h1", 1), ("h2", 1)], 1, 5, "h0:4,h1:1,h2:1", "6", "{}"),
}


@pytest.mark.parametrize("case", sorted(DROPS))
def test_the_supervisor_leaves_out_only_a_host_of_learners_as_the_rank_map_says(case, tmp_path):
    """--drop-failed-hosts maps the failed rank to its role and host with the rank map the job wrote, not with
    -hosts arithmetic: a host that runs a pipeline's ranks stays, as does one whose loss would leave a pipeline
    without a learner; a -hosts entry is the map's host of that name or short name, else the one at the rank's
    place; with no map the supervisor leaves out no host and says why."""
    layout, pipelines, failed, kept, n, named = DROPS[case]
    out = tmp_path / "out"
    mapped = tmp_path / "map.json"
    if case != "no map, no host left out":
        mapped.write_text(json.dumps(rank_map(layout, pipelines, named)))
    role = rank_map(layout, pipelines)["ranks"][failed]["role"]
    # mpiexec stand-in: the first run writes the map and fails as rank `failed` would; the restart succeeds.
    launcher = tmp_path / "mpiexec"
    launcher.write_text(f"""#!/bin/sh
echo "$*" >> {tmp_path}/runs
[ "$(wc -l < {tmp_path}/runs)" -gt 1 ] && exit 0
mkdir -p {out}; [ -f {mapped} ] && cp {mapped} {out}/toy_ranks.json
echo "[fedavg] rank {failed} ({role}): killed by signal 9 (SIGKILL) on host x" >&2
exit 1
""")
    launcher.chmod(0o755)
    hosts = ",".join(f"{h}:{c}" for h, c in layout)
    size = str(sum(c for _, c in layout))
    cmd = [PYTHON, str(ROOT / "scripts" / "supervise.py"), "--restarts", "1", "--drop-failed-hosts", "--",
           str(launcher), "-hosts", hosts, "-n", size, str(tmp_path / "fedavg_mpi"), "--pipelines", str(pipelines),
           "--out", str(out), "corpus.txt"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    restart = (tmp_path / "runs").read_text().splitlines()[1].split()
    assert restart[:4] == ["-hosts", kept, "-n", n], (restart, proc.stderr)
    if kept != hosts:
        assert "(its host left out)" in proc.stderr, proc.stderr
    else:
        assert "supervise: not leaving out a host: " in proc.stderr, proc.stderr
    if case == "no map, no host left out":
        assert "wrote no rank map" in proc.stderr, proc.stderr

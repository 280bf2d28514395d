"""bench/jobs.py: the job runner of the benches that run one job per folder. No mpiexec is started: a shell
command that exits at once stands in for it, and jobs.launch bounds each run (its subprocess timeout,
time_limit + 2 * GRACE), so a hang fails the test."""

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import jobs  # noqa: E402


def test_comma_list_converts_and_skips_empty_items():
    assert jobs.comma_list(int)("1,2,,4,") == [1, 2, 4]
    assert jobs.comma_list(str)("fedavg") == ["fedavg"]


def job(run_dir, rc=0):
    """A job that counts its launches in run_dir/../launches, writes its stats and exits with rc."""
    script = (f"echo run >> {run_dir.parent / 'launches'}; echo stopped=target rounds=3 > {run_dir / 'x_stats.txt'}; "
              f"echo '[fedavg] rank 1 (Learner) FATAL: broke' >&2; echo 'mpiexec: abort' >&2; exit {rc}")
    return ["sh", "-c", script]


def test_run_in_reuses_a_finished_job_of_the_same_spec(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "vocab.txt").write_text("a\n")
    run_dir = tmp_path / "runs" / "fedavg_L1"
    cmd = job(run_dir)
    assert jobs.run_in(run_dir, config, {"lr": 0.1}, cmd, {"lr": 0.1}, 10) == (0, False)
    assert (run_dir / "config" / "vocab.txt").read_text() == "a\n"
    assert (run_dir / "config" / "cfg.json").read_text() == '{\n  "lr": 0.1\n}\n'
    assert jobs.read_stats(run_dir / "x_stats.txt") == {"stopped": "target", "rounds": 3.0}
    assert jobs.run_in(run_dir, config, {"lr": 0.1}, cmd, {"lr": 0.1}, 10) == (0, True)
    assert jobs.run_in(run_dir, config, {"lr": 0.2}, cmd, {"lr": 0.2}, 10) == (0, False)
    assert jobs.run_in(run_dir, config, {"lr": 0.2}, cmd, {"lr": 0.2}, 10, fresh=True) == (0, False)
    assert (tmp_path / "runs" / "launches").read_text().count("run") == 3


def test_a_failed_job_runs_again_and_names_its_reason(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    run_dir = tmp_path / "runs" / "bsp_L2"
    assert jobs.run_in(run_dir, config, {}, job(run_dir, rc=3), {}, 10) == (3, False)
    assert (run_dir / "job.rc").read_text() == "3\n"
    assert jobs.error_line(run_dir) == "[fedavg] rank 1 (Learner) FATAL: broke"
    assert jobs.run_in(run_dir, config, {}, job(run_dir, rc=3), {}, 10) == (3, False)


def test_emulated_mpiexec_places_the_ranks_host_by_host():
    script = str(jobs.EMULATE_HOSTS)
    assert jobs.emulated_mpiexec("fedavgs", [5, 1]) == [
        "bash", script, "ctl", "fedavgs", "mpiexec", "-launcher", "ssh", "-launcher-exec", script,
        "-localhost", "10.77.0.1", "-hosts", "fedavgs-h0:5,fedavgs-h1:1", "-n", "6"]

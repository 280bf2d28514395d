"""bench/wall_time.py: the alternated study's commands and its figures (no MPI job is started)."""

import csv
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import study  # noqa: E402
import wall_time  # noqa: E402

FIELDS = ["strategy", "pipelines", "learners", "repeat", "stopped", "windows_to_target", "seconds_to_target"]


def write_side(folder, learners, runs):
    """runs: {repeat: (windows, seconds) or None for a run stopped by its time limit}."""
    folder.mkdir(parents=True)
    with open(folder / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        if learners == 2:  # a study with --reference may list the reference's rows too
            w.writerow({"strategy": "fedavg", "pipelines": "shared", "learners": 1, "repeat": 0,
                        "stopped": "target", "windows_to_target": 1, "seconds_to_target": 1})
        for k, r in runs.items():
            w.writerow({"strategy": "fedavg", "pipelines": "shared", "learners": learners, "repeat": k,
                        "stopped": "target" if r else "max_seconds",
                        "windows_to_target": r[0] if r else "", "seconds_to_target": r[1] if r else ""})


def test_each_seed_runs_the_single_learner_then_the_pair_with_the_same_seed(tmp_path):
    args = wall_time.parse_args(["--out", str(tmp_path), "--seed", "101", "--set", "dim=16"])
    single, pair = wall_time.study_argvs(args, 3)
    s, p = study.parse_args(single), study.parse_args(pair)
    assert (s.learners, p.learners) == ([1], [2])
    assert s.repeat == p.repeat == 3  # repeat 2, seed 101 + 2, after the two reused ones
    assert s.out == tmp_path / "single" and p.out == tmp_path / "pair"
    assert p.reference == [tmp_path / "single"]
    common = {"model": "softmax", "bs": 256, "bpe": 50, "seed": 101, "dim": 16}
    assert dict(s.set) == {**common, "lr": 0.005}
    assert dict(p.set) == {**common, "lr": 0.01, "balance_rounds": True}
    assert s.target == p.target == 5.0 and s.strategies == p.strategies == ["fedavg"]


def test_figures_pair_runs_by_seed_and_leave_out_a_missed_target(tmp_path):
    write_side(tmp_path / "single", 1, {0: (2000e3, 40.0), 1: (1500e3, 30.0), 2: (1800e3, 36.0)})
    write_side(tmp_path / "pair", 2, {0: (1000e3, 20.0), 1: (900e3, 20.0), 2: None})
    seeds = wall_time.read_seeds(tmp_path)
    assert [s.name for s in seeds] == [f"{tmp_path.name}/r{k}" for k in range(3)]
    f = wall_time.summary(seeds)
    assert f["seeds"] == 2 and f["missed"] == [f"{tmp_path.name}/r2"]
    assert f["time_ratio"] == pytest.approx(70 / 40)
    assert f["data_ratio"] == pytest.approx(3500 / 1900)
    assert f["speed_ratio"] == pytest.approx((1900 / 40) / (3500 / 70))
    assert f["mean_of_ratios"] == pytest.approx((2.0 + 1.5) / 2)
    assert f["at_goal"] == 1  # 2.0x yes, 1.5x no
    assert f["interval"][0] <= f["time_ratio"] <= f["interval"][1]
    text = wall_time.report(seeds)
    assert "not reached" in text and f"left out (a side missed the target): {tmp_path.name}/r2" in text
    assert "time 1.750x less" in text and "1 of 2 seeds at or above 1.7x" in text


def test_the_paired_interval_is_exact_when_every_seed_has_the_same_ratio(tmp_path):
    seconds = [30.0, 40.0, 50.0, 60.0]
    write_side(tmp_path / "single", 1, {k: (1e6, 2 * t) for k, t in enumerate(seconds)})
    write_side(tmp_path / "pair", 2, {k: (5e5, t) for k, t in enumerate(seconds)})
    f = wall_time.summary(wall_time.read_seeds(tmp_path))
    assert f["paired_interval"] == pytest.approx((2.0, 2.0))
    assert f["interval"][0] < 2.0 < f["interval"][1]  # over unpaired runs the seeds' spread shows


def test_nothing_reached_says_so(tmp_path):
    write_side(tmp_path / "single", 1, {0: None})
    write_side(tmp_path / "pair", 2, {0: (5e5, 10.0)})
    assert wall_time.summary(wall_time.read_seeds(tmp_path))["seeds"] == 0
    assert "no seed reached the target on both sides" in wall_time.report(wall_time.read_seeds(tmp_path))

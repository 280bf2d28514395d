"""bench/wall_time.py: the alternated study's commands and its figures (no MPI job is started)."""

import csv
import json
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import study  # noqa: E402
import wall_time  # noqa: E402

FIELDS = ["strategy", "pipelines", "learners", "repeat", "stopped", "windows_to_target", "seconds_to_target",
          "windows_per_learner", "seconds", "run"]
LIMIT = (3e6, 75.0)  # where a run that misses the target stops


def write_side(folder, learners, runs, seed=1):
    """runs: {repeat: (windows, seconds) to the target, or None for a run stopped at LIMIT}; repeat k has seed
    `seed` + k, as bench/study.py gives it."""
    folder.mkdir(parents=True)
    for k in runs:
        (folder / "runs" / f"r{k}" / "config").mkdir(parents=True)
        (folder / "runs" / f"r{k}" / "config" / "cfg.json").write_text(json.dumps({"seed": seed + k}))
    with open(folder / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        if learners == 2:  # a study with --reference may list the reference's rows too
            w.writerow({"strategy": "fedavg", "pipelines": "shared", "learners": 1, "repeat": 0,
                        "stopped": "target", "windows_to_target": 1, "seconds_to_target": 1,
                        "windows_per_learner": 1, "seconds": 1, "run": "runs/reference"})
        for k, r in runs.items():
            w.writerow({"strategy": "fedavg", "pipelines": "shared", "learners": learners, "repeat": k,
                        "stopped": "target" if r else "max_seconds",
                        "windows_to_target": r[0] if r else "", "seconds_to_target": r[1] if r else "",
                        "windows_per_learner": (r or LIMIT)[0], "seconds": (r or LIMIT)[1], "run": f"runs/r{k}"})


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


def test_figures_pair_runs_by_seed_and_leave_out_a_pair_that_missed(tmp_path):
    write_side(tmp_path / "single", 1, {0: (2000e3, 40.0), 1: (1500e3, 30.0), 2: (1800e3, 36.0), 3: None})
    write_side(tmp_path / "pair", 2, {0: (1000e3, 20.0), 1: (900e3, 20.0), 2: None, 3: (800e3, 25.0)})
    seeds = wall_time.read_seeds(tmp_path)
    assert [s.name for s in seeds] == ["seed 1", "seed 2", "seed 3", "seed 4"]
    f = wall_time.summary(seeds)
    assert f["missed"] == ["seed 3", "seed 4"]
    assert f["bounded"] is None  # a pair that missed bounds nothing
    r = f["reached"]
    assert r["seeds"] == 2
    assert r["time_ratio"] == pytest.approx(70 / 40)
    assert r["data_ratio"] == pytest.approx(3500 / 1900)
    assert r["speed_ratio"] == pytest.approx((1900 / 40) / (3500 / 70))
    assert r["mean_of_ratios"] == pytest.approx((2.0 + 1.5) / 2)
    assert r["at_goal"] == 1  # 2.0x yes, 1.5x no
    assert r["interval"][0] <= r["time_ratio"] <= r["interval"][1]
    text = wall_time.report(seeds)
    assert "missed in 75 s" in text and "a side missed the target: seed 3, seed 4" in text
    assert "time 1.750x less" in text and "1 of 2 seeds at or above 1.7x" in text
    assert ">3.00x" in text  # r3: 75 s against 25 s, a lower bound
    assert "lower bounds" not in text


def test_a_single_learner_that_missed_counts_at_its_stop_as_a_lower_bound(tmp_path):
    write_side(tmp_path / "single", 1, {0: (2000e3, 40.0), 1: None})
    write_side(tmp_path / "pair", 2, {0: (1000e3, 25.0), 1: (1500e3, 30.0)})
    f = wall_time.summary(wall_time.read_seeds(tmp_path))
    assert f["reached"]["seeds"] == 1 and f["reached"]["time_ratio"] == pytest.approx(1.6)
    b = f["bounded"]
    assert b["seeds"] == 2
    assert b["time_ratio"] == pytest.approx((40 + 75) / (25 + 30))
    assert b["data_ratio"] == pytest.approx((2000e3 + 3e6) / (1000e3 + 1500e3))
    assert b["at_goal"] == 1  # 75 / 30 = 2.5x at least; 1.6x not
    text = wall_time.report(wall_time.read_seeds(tmp_path))
    assert "all 2 seeds, a single learner that missed counted at its stop (lower bounds):" in text
    assert f"time >={(40 + 75) / (25 + 30):.3f}x less" in text


def test_the_paired_interval_is_exact_when_every_seed_has_the_same_ratio(tmp_path):
    seconds = [30.0, 40.0, 50.0, 60.0]
    write_side(tmp_path / "single", 1, {k: (1e6, 2 * t) for k, t in enumerate(seconds)})
    write_side(tmp_path / "pair", 2, {k: (5e5, t) for k, t in enumerate(seconds)})
    f = wall_time.summary(wall_time.read_seeds(tmp_path))["reached"]
    assert f["paired_interval"] == pytest.approx((2.0, 2.0))
    assert f["interval"][0] < 2.0 < f["interval"][1]  # over unpaired runs the seeds' spread shows


def test_nothing_reached_says_so(tmp_path):
    write_side(tmp_path / "single", 1, {0: (1e6, 10.0)})
    write_side(tmp_path / "pair", 2, {0: None})
    f = wall_time.summary(wall_time.read_seeds(tmp_path))
    assert f["reached"] is None and f["bounded"] is None
    assert "no seed reached the target on both sides" in wall_time.report(wall_time.read_seeds(tmp_path))


def test_a_rerun_in_a_later_folder_replaces_the_same_seed(tmp_path):
    first, rerun = tmp_path / "first", tmp_path / "rerun"
    write_side(first / "single", 1, {0: (2000e3, 40.0), 1: None}, seed=201)
    write_side(first / "pair", 2, {0: (1000e3, 20.0), 1: (900e3, 20.0)}, seed=201)
    write_side(rerun / "single", 1, {0: (3000e3, 90.0)}, seed=202)  # seed 202 again, with a longer limit
    write_side(rerun / "pair", 2, {0: (950e3, 22.5)}, seed=202)
    seeds = wall_time.pooled([first, rerun])
    assert [(s.name, s.single.reached, s.time_ratio) for s in seeds] == [("seed 201", True, 2.0),
                                                                         ("seed 202", True, 4.0)]
    assert wall_time.summary(seeds)["missed"] == []

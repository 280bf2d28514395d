"""bench/study.py: the plan, the per-run config, shards and speedups (no MPI job is started)."""

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import study  # noqa: E402


def args_for(*extra):
    return study.parse_args(["--corpus", "bible", "--out", "/tmp/unused", *extra])


def test_plan_runs_one_learner_once_and_always_has_the_reference():
    combos = study.plan(args_for("--learners", "1,2", "--strategies", "bsp"))
    assert combos[0] == study.Combo("fedavg", "shared", 1, 0)
    names = [c.run_name for c in combos]
    assert names == ["fedavg_L1", "bsp_L1", "bsp_L1", "bsp_L2_shared", "bsp_L2_per-learner"]
    assert [c.ranks for c in combos[3:]] == [1 + 3 + 2, 1 + 6 + 2]


def test_run_config_maps_strategies_and_applies_overrides_last():
    args = args_for("--time-limit", "30", "--target", "2.1", "--slow-learners", "3", "--slow-factor", "2",
                    "--set", "lr=0.2", "--set", "model=softmax", "--set", "target=1.9")
    base = {"data_name": "bible", "target": 2.5, "max_rounds": 200}
    diloco = study.run_config(base, study.Combo("diloco", "shared", 4, 0), args)
    assert diloco == {"data_name": "bible", "target": 1.9, "max_rounds": 100000, "max_seconds": 30.0,
                      "strategy": "bmuf", "block_lr": 1.0, "block_momentum": 0.3, "nesterov": True,
                      "slow_learners": 3, "slow_factor": 2.0, "lr": 0.2, "model": "softmax"}
    bmuf = study.run_config(base, study.Combo("bmuf", "shared", 4, 0), args)
    assert bmuf["block_momentum"] == 0.3 and bmuf["block_lr"] == 1.0 and "nesterov" not in bmuf
    assert bmuf["slow_learners"] == 3
    classic = args_for("--classic")
    assert study.run_config(base, study.Combo("bmuf", "shared", 4, 0), classic)["block_momentum"] == 0.75
    assert study.run_config(base, study.Combo("bmuf", "shared", 1, 0), classic)["block_momentum"] == 0.0
    assert study.run_config(base, study.Combo("diloco", "shared", 4, 0), classic)["block_momentum"] == 0.9
    assert study.run_config(base, study.Combo("easgd", "shared", 2, 0), args)["slow_learners"] == 2
    assert "seed" not in diloco
    assert study.run_config({**base, "seed": 5}, study.Combo("fedavg", "shared", 2, 2), args)["seed"] == 7


def test_shards_split_lines_round_robin_and_are_cached(tmp_path):
    (tmp_path / "train.txt").write_bytes(b"a\nb\nc\nd\ne\n")
    assert study.shards(tmp_path, 1) == [tmp_path / "train.txt"]
    paths = study.shards(tmp_path, 2)
    assert [p.read_bytes() for p in paths] == [b"a\nc\ne\n", b"b\nd\n"]
    paths[0].write_bytes(b"cached\n")
    assert study.shards(tmp_path, 2)[0].read_bytes() == b"cached\n"


def test_speedups_are_against_the_one_learner_fedavg_runs():
    def row(strategy, mode, learners, windows, seconds):
        return dict(strategy=strategy, pipelines=mode, learners=learners,
                    windows_to_target=windows, seconds_to_target=seconds)
    rows = [row("fedavg", "shared", 1, 800.0, 4.0), row("fedavg", "per-learner", 1, 800.0, 4.0),
            row("bsp", "shared", 4, 400.0, 1.0), row("bmuf", "shared", 4, None, None)]
    study.add_speedups(rows)
    assert [r["speedup"] for r in rows] == [1.0, 1.0, 2.0, None]
    assert [r["time_speedup"] for r in rows] == [1.0, 1.0, 4.0, None]


def test_set_values_are_json_or_strings():
    assert study.parse_set("nesterov=true") == ("nesterov", True)
    assert study.parse_set("model=neg") == ("model", "neg")
    with pytest.raises(study.argparse.ArgumentTypeError):
        study.parse_set("novalue")


def test_grid_shows_means_over_repeats_and_runs_that_missed_the_target():
    def row(strategy, mode, learners, repeat, windows, seconds):
        return dict(strategy=strategy, pipelines=mode, learners=learners, repeat=repeat,
                    windows_to_target=windows, seconds_to_target=seconds)
    rows = [row("fedavg", "shared", 1, 0, 300e3, 0.6), row("fedavg", "shared", 1, 1, 500e3, 1.0),
            row("fedavg", "shared", 2, 0, 200e3, 0.4), row("fedavg", "shared", 2, 1, 200e3, 0.4),
            row("easgd", "shared", 2, 0, 400e3, 0.8), row("easgd", "shared", 2, 1, None, None),
            row("diloco", "shared", 2, 0, None, None)]
    study.add_speedups(rows)
    lines = study.grids(rows).splitlines()
    assert lines[0] == "One shared pipeline:"
    assert lines[2] == "| strategy | 1 learner | 2 learners |"
    assert lines[4] == "| fedavg | 400k, 1.0×; 0.8 s, 1.0× | 200k, 2.0×; 0.4 s, 2.0× |"
    assert lines[5] == "| easgd |  | 400k, 1.0×; 0.8 s, 1.0× (1 of 2) |"
    assert lines[6] == "| diloco |  | not reached |"
    assert "per learner" not in study.grids(rows)  # no per-learner runs: no second table

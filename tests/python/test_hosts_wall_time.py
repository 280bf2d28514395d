"""bench/hosts_wall_time.py: the figures of a run from its metrics rows, the table row of a layout and the cfg.json of
a job (no MPI job is started)."""

import math
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import hosts_wall_time  # noqa: E402


def rows(*rounds):
    """Metrics rows from (seconds, windows per learner, test loss) per round, round 0 first."""
    return [{"seconds": str(s), "windows_per_learner": str(w), "test_loss": str(loss), "sync_seconds": "0.5"}
            for s, w, loss in rounds]


def test_the_crossing_lies_between_the_round_before_the_target_and_the_round_that_reached_it():
    metrics = rows((0, 0, 4.0), (2, 100, 2.5), (6, 500, 2.3), (12, 1100, 2.0), (14, 1300, 1.9))
    seconds, windows = hosts_wall_time.crossing(metrics, 2.1)
    # 2.3 -> 2.0 over rounds 2-3: 2.1 lies two thirds of the way
    assert seconds == pytest.approx(10.0)
    assert windows == pytest.approx(900.0)
    f = hosts_wall_time.figures(metrics, 2.1, learners=8, wall=20.0, sent=0, bs=1)
    assert f["to_target"] == 12.0 and f["windows_learner"] == 1100.0
    assert (f["cross_s"], f["cross_windows"]) == pytest.approx((10.0, 900.0))


def test_a_round_that_lands_on_the_target_is_its_own_crossing_and_a_run_that_misses_it_has_none():
    assert hosts_wall_time.crossing(rows((0, 0, 4.0), (3, 300, 2.1)), 2.1) == pytest.approx((3.0, 300.0))
    missed = rows((0, 0, 4.0), (3, 300, 2.4), (6, 600, 2.2))
    assert all(math.isnan(x) for x in hosts_wall_time.crossing(missed, 2.1))
    f = hosts_wall_time.figures(missed, 2.1, learners=8, wall=8.0, sent=0, bs=1)
    assert math.isnan(f["to_target"]) and math.isnan(f["cross_s"]) and math.isnan(f["cross_windows"])


def test_the_share_trained_through_the_exchange_counts_every_round_and_is_zero_for_an_older_build():
    metrics = rows((0, 0, 4.0), (2, 100, 2.5), (4, 400, 2.0))
    for r, through in zip(metrics, (0, 0, 100)):
        r["through_windows"] = str(through)
    assert hosts_wall_time.figures(metrics, 2.1, learners=8, wall=6.0, sent=0, bs=1)["through"] == 0.25
    older = rows((0, 0, 4.0), (2, 100, 2.5), (4, 400, 2.0))
    assert hosts_wall_time.figures(older, 2.1, learners=8, wall=6.0, sent=0, bs=1)["through"] == 0.0
    row = hosts_wall_time.layout_row("2 hosts, 1gbit", {1: {**finished(10.0, 400), "through": 0.25}}, {1: 5.0}, [])
    assert row[hosts_wall_time.HEAD.index("trained through")] == "25 %"


def test_the_learners_idle_share_counts_every_round_and_is_unknown_for_an_older_build():
    metrics = rows((0, 0, 4.0), (2, 100, 2.5), (4, 400, 2.0))
    for r, idle in zip(metrics, (0, 0.5, 0.5)):
        r["idle_seconds"] = str(idle)
    assert hosts_wall_time.figures(metrics, 2.1, learners=8, wall=6.0, sent=0, bs=1)["idle"] == 0.25  # 1 s of 4
    older = rows((0, 0, 4.0), (2, 100, 2.5), (4, 400, 2.0))
    assert math.isnan(hosts_wall_time.figures(older, 2.1, learners=8, wall=6.0, sent=0, bs=1)["idle"])
    row = hosts_wall_time.layout_row("2 hosts, 1gbit", {1: finished(10.0, 400)}, {1: 5.0}, [])
    assert row[-1] == "-"
    row = hosts_wall_time.layout_row("2 hosts, 1gbit", {1: {**finished(10.0, 400), "idle": 0.25}}, {1: 5.0}, [])
    assert row[-1] == "25 %"


def finished(to_target, windows):
    """The figures of a finished run, as hosts_wall_time.run gives them."""
    metrics = rows((0, 0, 4.0), (to_target / 2, windows / 2, 2.5), (to_target, windows, 2.0))
    return {**hosts_wall_time.figures(metrics, 2.1, learners=8, wall=to_target + 5, sent=0, bs=1),
            "host_mib": 500.0, "other_mib": 300.0}


def test_a_layout_whose_job_failed_for_a_seed_is_named_and_takes_the_medians_of_the_seeds_that_finished():
    one = {1: 5.0, 2: 6.0, 3: 4.0}
    row = hosts_wall_time.layout_row("2 hosts, 1gbit", {1: finished(10.0, 400), 3: finished(12.0, 500)}, one, [2])
    assert row[0] == "2 hosts, 1gbit (failed: seed 2)"
    assert row[1] == "11.0"  # the median of seeds 1 and 3
    assert row[3] == "2.50"  # 10/5 and 12/4, each against its own seed's one host
    assert row[7] == "450"


def test_a_layout_whose_every_job_failed_is_a_row_of_dashes_and_a_failed_one_host_leaves_no_ratio():
    row = hosts_wall_time.layout_row("4 hosts, 100mbit", {}, {1: 5.0}, [1, 2])
    assert row[0] == "4 hosts, 100mbit (failed: seeds 1,2)" and set(row[1:]) == {"-"}
    assert len(row) == len(hosts_wall_time.HEAD) == 13
    row = hosts_wall_time.layout_row("2 hosts, 1gbit", {1: finished(10.0, 400)}, {}, [])
    assert row[0] == "2 hosts, 1gbit" and row[1] == "10.0" and row[3] == "-"


def test_hosts_set_keys_reach_the_runs_across_hosts_alone_after_set():
    args = hosts_wall_time.parse_args(["--set", "lr=0.15", "--set", "dim=8", "--hosts-set", "lr=0.2",
                                       "--hosts-set", 'combine="add"'])
    prepared = {"bpe": 200, "lr": 0.1, "dim": 300}
    one = hosts_wall_time.job_config(args, prepared, 1, 3)
    assert (one["lr"], one["dim"], one["seed"], one["bpe"]) == (0.15, 8, 3, 200) and "combine" not in one
    two = hosts_wall_time.job_config(args, prepared, 2, 3)
    assert (two["lr"], two["dim"], two["combine"]) == (0.2, 8, "add")
    assert prepared == {"bpe": 200, "lr": 0.1, "dim": 300}

"""bench/hosts_wall_time.py: the figures of one run from its metrics rows (no MPI job is started)."""

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

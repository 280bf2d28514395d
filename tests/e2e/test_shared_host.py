"""Learners on one host share one copy of the weights (share_host, the default; docs/strategies.md): a host's
round is bpe batches however many learners train it, so each of L learners needs about 1/L of the data one
learner needs; a lock-step strategy then has one member per host in its exchange. Training on through the
exchange (overlap) and a fixed rotation of the batches exclude each other."""

import pytest

from conftest import JOB_TIMEOUT


def test_two_learners_sharing_a_host_each_need_half_the_data(run_job):
    one = run_job(5, cfg={"max_rounds": 8, "fixed_batch_order": True}, timeout=JOB_TIMEOUT)
    assert one.rc == 0, one.stderr
    losses = [r["test_loss"] for r in one.metrics()]
    target = losses[6]  # what one learner reached after 6 rounds of 10 batches
    two = run_job(6, cfg={"max_rounds": 16, "fixed_batch_order": True, "target": target}, timeout=JOB_TIMEOUT)
    assert two.rc == 0, two.stderr
    stats = two.stats()
    # The two train one copy, so they reach what one learner reached. How many rounds that takes depends on how
    # their steps interleave, which timing and load decide: bench/ reports the count as a median over seeds.
    assert stats["stopped"] == "target", (target, [r["test_loss"] for r in two.metrics()])
    rounds = int(stats["rounds"])
    # A host's round is 10 batches however many learners train it: each of the two trains 5 of them, half of
    # what one learner trains in a round.
    assert float(stats["windows_per_learner"]) == rounds * 5 * 64
    assert float(one.stats()["windows_per_learner"]) == 8 * 10 * 64


@pytest.mark.parametrize("strategy", ["bsp", "diloco"])
def test_other_lockstep_strategies_train_a_shared_host_copy(run_job, strategy):
    job = run_job(7, cfg={"max_rounds": 4, "strategy": strategy}, timeout=JOB_TIMEOUT)
    assert job.rc == 0, job.stderr
    rows = job.metrics()
    assert rows[-1]["test_loss"] < rows[0]["test_loss"] - 0.2, rows
    # Three learners share a host's round of 10 batches: 4 each (rounded up).
    assert rows[-1]["windows_per_learner"] == 4 * 4 * 64


def test_training_through_the_exchange_is_refused_with_a_fixed_batch_order(run_job):
    # A fixed rotation serves every learner in turn, so learners that train on through their leader's exchange
    # would wait for the leader's next request: the job names the two keys at once rather than stall.
    job = run_job(5, cfg={"overlap": True, "fixed_batch_order": True}, timeout=JOB_TIMEOUT)
    assert job.rc != 0
    assert '"overlap": true and "fixed_batch_order": true exclude each other' in job.stderr, job.stderr
    assert "cfg.json:" in job.stderr, job.stderr

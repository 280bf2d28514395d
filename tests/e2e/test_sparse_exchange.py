"""The sparse weight exchange under mpiexec (time-limited by run_job): with exact settings it trains the same
model as the dense exchange for every lock-step strategy, and the Dispatcher receives one delta a round; a learner
names the rows its steps wrote once a round, or after every step where a host's learners share their weights; lossy
settings (a fraction of the rows, 16-bit values, a periodic full round) send fewer bytes and still train;
the final weights and every checkpoint hold every change lossy settings kept back; diloco resumes from a
checkpoint with its momentum; the defaults train; easgd and hogwild refuse it with a clear message."""

import h5py
import numpy as np
import pytest

from conftest import JOB_TIMEOUT

EXACT = {"exchange": "sparse", "sparse_rows": 1, "sparse_values": "float32", "sparse_weighting": "windows"}

# Every learner in the exchange, with its own copy of the weights (learners that share a host's copy send one
# change per host); fedavg averages, the dense model the exact settings reproduce.
LOCKSTEP = {
    "fedavg": {"strategy": "fedavg", "combine": "average", "share_host": False},
    "bsp": {"strategy": "bsp", "share_host": False},
    "diloco": {"strategy": "diloco", "share_host": False},
}


def embedding(job):
    with h5py.File(job.out / "toy.h5", "r") as f:
        return f["embedding"][...]


@pytest.mark.parametrize("name", sorted(LOCKSTEP))
def test_exact_sparse_exchange_trains_the_dense_model(name, run_job):
    cfg = {"max_rounds": 5, "fixed_batch_order": True, **LOCKSTEP[name]}
    dense = run_job(7, cfg={**cfg, "exchange": "dense"}, timeout=JOB_TIMEOUT)
    assert dense.rc == 0, dense.stderr
    sparse = run_job(7, cfg={**cfg, **EXACT}, timeout=JOB_TIMEOUT)
    assert sparse.rc == 0, sparse.stderr
    # Float sums in another order (along the learner tree, row by row): equal to rounding.
    np.testing.assert_allclose(embedding(sparse), embedding(dense), atol=1e-4)
    d, s = dense.metrics(), sparse.metrics()
    np.testing.assert_allclose([r["test_loss"] for r in s], [r["test_loss"] for r in d], rtol=1e-4)
    assert s[-1]["test_loss"] < s[0]["test_loss"] - 0.3
    # Three learners, one message into the Dispatcher a round.
    stats = sparse.stats()
    assert float(stats["inbound_bytes"]) > 0
    assert float(stats["inbound_bytes"]) < float(stats["sync_bytes"]) / 3


def test_lossy_sparse_exchange_sends_fewer_bytes_and_still_trains(run_job):
    # A checkpoint only at the end: a round that ends in one sends every change kept back.
    cfg = {"max_rounds": 6, "fixed_batch_order": True, "strategy": "fedavg", "checkpoint_every": 0}
    dense = run_job(6, cfg={**cfg, "exchange": "dense"}, timeout=JOB_TIMEOUT)
    assert dense.rc == 0, dense.stderr
    lossy = run_job(6, cfg={**cfg, **EXACT, "sparse_rows": 0.3, "sparse_values": "float16",
                            "full_sync_every": 3}, timeout=JOB_TIMEOUT)
    assert lossy.rc == 0, lossy.stderr
    # 30 % of the rows in 16 bits up the tree; the rows that changed globally in float32 down; two full rounds.
    assert float(lossy.stats()["sync_bytes"]) < 0.75 * float(dense.stats()["sync_bytes"])
    losses = [r["test_loss"] for r in lossy.metrics()]
    assert losses[-1] < losses[0] - 0.3, losses
    assert losses[-1] < 1.05 * dense.metrics()[-1]["test_loss"]


def calls_per_learner(run_job, broken_python, tmp_path, n, cfg):
    """Runs a job of `n` ranks whose engine logs each train_step and written_rows call: per learner process, its
    calls in order, "step", "rows", or "none" (written_rows named no rows)."""
    log = tmp_path / "calls.txt"
    code = f"""
import os as _os
_plain_train_step, _plain_written_rows = train_step, written_rows
def _note(what):
    with open({str(log)!r}, "a") as f:
        f.write(f"{{_os.getpid()}} {{what}}\\n")
def train_step(model, windows):
    _note("step")
    return _plain_train_step(model, windows)
def written_rows(model):
    rows = _plain_written_rows(model)
    _note("none" if rows is None or any(r is None for r in rows) else "rows")
    return rows
"""
    job = run_job(n, cfg=cfg, python_dir=broken_python(code, module="engine.py"), timeout=JOB_TIMEOUT)
    assert job.rc == 0, job.stderr
    calls = {}
    for pid, what in (line.split() for line in log.read_text().splitlines()):
        calls.setdefault(pid, []).append(what)
    return calls


def test_every_round_names_the_rows_its_steps_wrote(run_job, broken_python, tmp_path):
    """A learner starts engine.written_rows's count before its first round's steps, so that even the first
    round reads only the rows its steps wrote (python_interface.md#written_rowsmodel---list-optional)."""
    # A copy each (learners that share a host's weights name the rows of every step: the next test).
    calls = calls_per_learner(run_job, broken_python, tmp_path, 6, {"max_rounds": 3, "share_host": False, **EXACT})
    assert len(calls) == 2, calls  # the two learners
    for seq in calls.values():
        assert seq[0] == "none", seq  # the count starts before any step
        assert "step" in seq and [w for w in seq[1:] if w != "step"] == ["rows"] * 3, seq  # one call a round


@pytest.mark.parametrize("overlap", [False, True])
def test_learners_that_share_a_host_name_the_rows_of_every_step(overlap, run_job, broken_python, tmp_path):
    """Learners that share their host's weights each name the rows of every step (for the rows their host's
    leader reads, python_interface.md#written_rowsmodel---list-optional), from before their first step."""
    calls = calls_per_learner(run_job, broken_python, tmp_path, 7,
                              {"max_rounds": 3, "share_host": True, "overlap": overlap, **EXACT})
    assert len(calls) == 3, calls  # the three learners of the one host
    for seq in calls.values():
        assert seq[0] == "none", seq  # the count starts before any step
        assert "step" in seq, seq
        after_steps = [seq[i + 1] if i + 1 < len(seq) else "end" for i, w in enumerate(seq) if w == "step"]
        assert set(after_steps) == {"rows"}, seq


@pytest.mark.parametrize("name", ["fedavg", "bsp"])
def test_final_weights_hold_every_change_a_lossy_exchange_kept_back(name, run_job):
    # One round of the same windows: the top 20 % of the rows in float16 leave most of the round's changes in the
    # learners' own weights and the rounding in the owners' residuals; the flush after Stop sends them all, so the
    # final weights are the dense round's.
    cfg = {"max_rounds": 1, "fixed_batch_order": True, **LOCKSTEP[name]}
    dense = run_job(6, cfg={**cfg, "exchange": "dense"}, timeout=JOB_TIMEOUT)
    assert dense.rc == 0, dense.stderr
    lossy = run_job(6, cfg={**cfg, **EXACT, "sparse_rows": 0.2, "sparse_values": "float16"}, timeout=JOB_TIMEOUT)
    assert lossy.rc == 0, lossy.stderr
    np.testing.assert_allclose(embedding(lossy), embedding(dense), atol=1e-4)
    # The final loss is the flushed weights'.
    assert float(lossy.stats()["final_loss"]) == pytest.approx(float(dense.stats()["final_loss"]), rel=1e-4)


@pytest.mark.parametrize("name", ["fedavg", "bsp"])
def test_a_checkpoint_holds_every_change_a_lossy_exchange_kept_back(name, run_job):
    # A round that ends in a checkpoint sends every change kept back (a whole round; only what 16-bit values lose
    # to rounding waits), so a restart loses nothing the learners kept back: the checkpoint of round 1, left by a
    # job that fails in round 2, holds the dense round's weights.
    cfg = {"fixed_batch_order": True, "max_rounds": 3, **LOCKSTEP[name]}
    fault = ["--inject-fault", "0:2:exception"]
    dense = run_job(6, cfg={**cfg, "exchange": "dense"}, extra=fault, timeout=JOB_TIMEOUT)
    lossy = run_job(6, cfg={**cfg, **EXACT, "sparse_rows": 0.2, "sparse_values": "float16"}, extra=fault,
                    timeout=JOB_TIMEOUT)
    for job in (dense, lossy):
        assert job.rc != 0
        with h5py.File(job.out / "toy.h5", "r") as f:
            assert int(f.attrs["round"]) == 1
    np.testing.assert_allclose(embedding(lossy), embedding(dense), atol=1e-4)


def test_sparse_diloco_resumes_from_its_checkpoint(run_job):
    # Every changed row, in bfloat16: what learners keep back (their rounding) and the Dispatcher's rounding are in
    # play, with every row of the toy's 30-row tables in each round's step.
    cfg = {"max_rounds": 6, "strategy": "diloco", "exchange": "sparse", "sparse_rows": 1, "sparse_values": "bfloat16"}
    job = run_job(6, cfg=cfg, extra=["--inject-fault", "0:4:exception"], timeout=JOB_TIMEOUT)
    assert job.rc != 0
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert int(f.attrs["round"]) == 3
        assert np.abs(f["strategy_state"][...]).max() > 0
    job = run_job(6, cfg=cfg, extra=["--resume"], timeout=JOB_TIMEOUT)
    assert job.rc == 0, job.stderr
    losses = [r["test_loss"] for r in job.metrics()]
    assert len(losses) == 7 and losses[6] < losses[3], losses


@pytest.mark.parametrize("combine,rounds,values", [("average", 6, "float16"), ("add", 60, "float16"),
                                                   ("add", 60, "int8")])
def test_default_sparse_settings_train(run_job, combine, rounds, values):
    # combine add (one batch per learner a round) through the sparse exchange: the mean change of a row's k
    # learners times k^add_power; int8 values round every row to 255 steps of its own scale.
    cfg = {"max_rounds": rounds, "strategy": "fedavg", "exchange": "sparse", "combine": combine,
           "sparse_values": values}
    job = run_job(6, cfg=cfg, timeout=JOB_TIMEOUT)
    assert job.rc == 0, job.stderr
    losses = [r["test_loss"] for r in job.metrics()]
    assert losses[-1] < losses[0] - 0.3, losses


@pytest.mark.parametrize("strategy", ["easgd", "hogwild"])
def test_sparse_exchange_is_refused_where_it_does_not_apply(run_job, strategy):
    job = run_job(5, cfg={"strategy": strategy, "exchange": "sparse"}, timeout=JOB_TIMEOUT)
    assert job.rc != 0
    assert '"exchange": "sparse" applies to fedavg, bsp, bmuf and diloco' in job.stderr
    assert "cfg.json:" in job.stderr

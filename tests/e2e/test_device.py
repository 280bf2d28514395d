"""A model that trains a copy of the weights, as it does on a GPU (cfg "device"), under mpiexec (time-limited by
run_job): the learners and the Dispatcher move the weights between the buffer and the copy at the right points,
so every lock-step strategy, easgd, the sparse exchange and a resume end with the same bits as the model that
trains the buffer itself. On a machine without a GPU the copy is made on the CPU (engine._COPY_ON_CPU)."""

import h5py
import pytest

from conftest import JOB_TIMEOUT

# (ranks, cfg). easgd with one learner: with several, the Dispatcher takes their pushes in the order they come.
RUNS = {
    # A copy of the weights per learner (share_host false): learners that share one do not replay bit for bit;
    # fedavg averages, so that 4 rounds are 40 batches (adding: 4).
    "fedavg": (6, {"strategy": "fedavg", "exchange": "dense", "share_host": False, "combine": "average"}),
    "bsp": (6, {"strategy": "bsp", "exchange": "dense", "share_host": False}),
    "bmuf": (6, {"strategy": "bmuf", "block_momentum": 0.5, "exchange": "dense", "share_host": False}),
    "easgd": (5, {"strategy": "easgd"}),
    "fedavg, sparse top half in float16": (6, {"strategy": "fedavg", "exchange": "sparse", "sparse_rows": 0.5,
                                               "sparse_values": "float16", "share_host": False,
                                               "combine": "average"}),
}


def weights(job):
    with h5py.File(job.out / "toy.h5", "r") as f:
        return {name: f[name][...] for name in ("embedding", "out_vectors")}


def assert_same_run(copied, direct):
    assert copied.rc == 0, copied.stderr
    assert direct.rc == 0, direct.stderr
    a, b = weights(copied), weights(direct)
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name
    losses = [r["test_loss"] for r in copied.metrics()]
    assert losses == [r["test_loss"] for r in direct.metrics()]
    assert losses[-1] < losses[0] - 0.2, losses


@pytest.fixture
def copying_python(broken_python):
    return broken_python("\n_COPY_ON_CPU = True\n", module="engine.py")


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_model_on_a_copy_ends_with_the_same_weights(name, run_job, copying_python):
    ranks, settings = RUNS[name]
    # A constant rate: the loss must fall by 0.2 in 4 rounds, which a decay over them (the default) does not give.
    cfg = {"max_rounds": 4, "fixed_batch_order": True, "model_args": {"lr_schedule": "constant"}, **settings}
    assert_same_run(run_job(ranks, cfg=cfg, python_dir=copying_python, timeout=JOB_TIMEOUT),
                    run_job(ranks, cfg=cfg, timeout=JOB_TIMEOUT))


def test_a_model_on_a_copy_resumes_with_the_same_weights(run_job, copying_python):
    cfg = {"max_rounds": 5, "fixed_batch_order": True, "strategy": "fedavg", "share_host": False,
           "combine": "average"}
    runs = []
    for python_dir in (copying_python, None):
        failed = run_job(6, cfg=cfg, python_dir=python_dir, extra=["--inject-fault", "4:3:exception"],
                         timeout=JOB_TIMEOUT)
        assert failed.rc != 0 and "rank 4 (Learner): injected fault" in failed.stderr
        runs.append(run_job(6, cfg=cfg, python_dir=python_dir, extra=["--resume"], timeout=JOB_TIMEOUT))
    assert_same_run(*runs)
    assert [int(r["round"]) for r in runs[0].metrics()] == list(range(6))

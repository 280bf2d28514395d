"""Each strategy under mpiexec (time-limited: run_job passes a timeout and MPIEXEC_TIMEOUT): the loss falls, the outputs load, checkpoints resume with the strategy's
state; bsp keeps every replica bit-identical (the run checks it each round and fails otherwise)."""

import h5py
import numpy as np
import pytest

STRATEGIES = {
    "fedavg": {"strategy": "fedavg"},
    "bsp": {"strategy": "bsp"},
    "bmuf": {"strategy": "bmuf", "block_momentum": 0.5, "block_lr": 1.0},
    "diloco": {"strategy": "bmuf", "block_momentum": 0.9, "block_lr": 0.7, "nesterov": True},
}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_strategy_trains_and_writes_outputs(name, run_job, toy_config):
    job = run_job(6, cfg={"max_rounds": 6, **STRATEGIES[name]})
    assert job.rc == 0, job.stderr
    losses = [r["test_loss"] for r in job.metrics()]
    assert losses[-1] < losses[0] - 0.3, losses
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert f["embedding"].shape[1] == 32
        momentum = f["strategy_state"][...]
    if name in ("bmuf", "diloco"):
        assert momentum.size > 0 and np.abs(momentum).max() > 0
    emb = np.loadtxt(job.out / "toy_embeddings.txt")
    assert np.isfinite(emb).all()


def test_bsp_with_two_pipelines(run_job, toy_config):
    job = run_job(10, corpora=[toy_config / "train.txt"] * 2, cfg={"max_rounds": 4, "strategy": "bsp"})
    assert job.rc == 0, job.stderr
    assert "replicas" not in job.stderr


def test_bmuf_resumes_with_its_momentum(run_job):
    cfg = {"max_rounds": 6, **STRATEGIES["diloco"]}
    job = run_job(6, cfg=cfg, extra=["--inject-fault", "0:4:exception"])
    assert job.rc != 0
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert int(f.attrs["round"]) == 3
        assert np.abs(f["strategy_state"][...]).max() > 0
    job = run_job(6, cfg=cfg, extra=["--resume"])
    assert job.rc == 0, job.stderr
    losses = [r["test_loss"] for r in job.metrics()]
    assert losses[6] < losses[3]


def test_unknown_strategy_is_rejected(run_job):
    job = run_job(5, cfg={"strategy": "gossip"})
    assert job.rc != 0
    assert '"strategy" must be one of fedavg, bsp, bmuf' in job.stderr

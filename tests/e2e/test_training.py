"""End to end under mpiexec: the happy paths, the stop conditions and the outputs users load."""

import math
import os
import re
import shutil
import subprocess
import time

import h5py
import numpy as np
import pytest
from conftest import PYTHON, ROOT, toy_lines, within


@pytest.mark.smoke
def test_one_pipeline_two_learners_trains_and_writes_outputs(run_job):
    job = run_job(6, cfg={"max_rounds": 6})
    assert job.rc == 0, job.stderr
    rows = job.metrics()
    assert [r["round"] for r in rows] == list(range(7))
    losses = [r["test_loss"] for r in rows]
    assert losses[-1] < losses[0] - 0.5, losses
    # The two learners share their host's weights and its round's 10 batches: 5 each.
    assert rows[-1]["windows_per_learner"] == 6 * 5 * 64
    # One progress line per round, then the final statistics line.
    assert len(re.findall(r"^round +\d+ ", job.stdout, re.M)) == 7
    stats = job.stats()
    assert stats["rounds"] == "6" and stats["stopped"] == "max_rounds"
    assert float(stats["final_loss"]) == pytest.approx(losses[-1], abs=1e-3)
    assert float(stats["first_loss"]) == pytest.approx(losses[0], abs=1e-3)
    assert "final: rounds=6" in job.stdout

    with h5py.File(job.out / "toy.h5", "r") as f:
        emb = f["embedding"][...]
        assert f.attrs["round"] == 6
        assert f.attrs["test_loss"] == pytest.approx(losses[-1], abs=1e-4)
    assert not list(job.out.glob("*.tmp"))
    report = np.loadtxt(job.out / "toy_embeddings.txt", dtype=np.float32)
    assert report.shape == emb.shape
    np.testing.assert_allclose(report, emb, rtol=1e-5, atol=1e-6)


def test_word2vec_output_loads_in_gensim(finished_run, toy_config):
    gensim_models = pytest.importorskip("gensim.models")
    job = finished_run  # run_job(6, cfg={"max_rounds": 2})
    kv = gensim_models.KeyedVectors.load_word2vec_format(str(job.out / "toy.w2v.txt"), binary=False)
    vocab = (toy_config / "config" / "vocab.txt").read_text().split("\n")
    first_word = vocab[0].split()[0]
    assert kv.index_to_key[0] == first_word
    assert kv.vector_size == 32


def test_two_pipelines(run_job, toy_config, tmp_path):
    second = tmp_path / "second.txt"
    second.write_text((toy_config / "train.txt").read_text())
    job = run_job(10, corpora=[toy_config / "train.txt", second], cfg={"max_rounds": 3})
    assert job.rc == 0, job.stderr
    assert "2 pipeline(s), 3 learner(s)" in job.stdout
    assert "parameters, model neg (FusedNegCBOW in " in job.stdout
    # device "auto" on a machine without a GPU; the program finds the fused step it built (src/kernels/)
    assert "fused_neg.py) on cpu (fused step)\n" in job.stdout
    losses = [r["test_loss"] for r in job.metrics()]
    assert losses[-1] < losses[0]


def test_stops_at_the_target(run_job):
    job = run_job(5, cfg={"target": 3.2, "max_rounds": 200})
    assert job.rc == 0, job.stderr
    stats = job.stats()
    assert stats["stopped"] == "target"
    assert float(stats["final_loss"]) <= 3.2
    assert 0 < int(stats["rounds"]) < 200
    assert "stopped at the" not in job.stdout


def test_stops_at_max_seconds_and_says_so(run_job):
    job = run_job(5, cfg={"max_rounds": 100000, "max_seconds": 1, "target": 0.01})  # a target it cannot reach
    assert job.rc == 0, job.stderr
    assert job.stats()["stopped"] == "max_seconds"
    assert "stopped at the max_seconds limit" in job.stdout


def test_runs_from_any_directory_with_relative_paths(app, toy_config, tmp_path):
    import os
    import shutil
    import subprocess
    shutil.copytree(toy_config / "config", tmp_path / "cfgdir")
    shutil.copy(toy_config / "train.txt", tmp_path / "corpus.txt")
    text = (tmp_path / "cfgdir" / "cfg.json").read_text().replace('"max_rounds": 200', '"max_rounds": 1')
    (tmp_path / "cfgdir" / "cfg.json").write_text(text)
    proc = subprocess.run(["mpiexec", "-n", "5", str(app), "--config", "cfgdir", "--out", "results", "corpus.txt"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=90,
                          env={**os.environ, "MPIEXEC_TIMEOUT": "85"})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "results" / "toy.w2v.txt").exists()


def test_report_softmax_model_is_one_switch_away(run_job):
    job = run_job(6, cfg={"model": "softmax", "max_rounds": 6})
    assert job.rc == 0, job.stderr
    losses = [r["test_loss"] for r in job.metrics()]
    assert losses[0] == pytest.approx(np.log(len(open(job.out.parent / "config" / "vocab.txt").read().split("\n")) - 1),
                                      abs=0.3)  # uniform softmax at the start: about ln V
    assert losses[-1] < losses[0] - 0.5, losses
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert set(f.keys()) >= {"embedding", "out_weight", "out_bias"}


# Appended to engine.py: every model the job builds prints how many threads its BLAS library now uses, in one
# write (print() writes its parts one by one, and mpiexec may then interleave two ranks' lines).
REPORT_BLAS_THREADS = """
import ctypes
import sys

_create = create


def create(cfg, weights, init):
    model = _create(cfg, weights, init)
    blas = [line.split()[-1] for line in open("/proc/self/maps") if "libopenblas" in line]
    threads = ctypes.CDLL(blas[0]).openblas_get_num_threads() if blas else "none"
    sys.stdout.write(f"BLAS threads {threads}\\n")
    sys.stdout.flush()
    return model
"""


@pytest.mark.parametrize("torch_threads,env,expected", [(1, None, "1"), (2, None, "2"), (2, "1", "1")])
def test_blas_threads_follow_torch_threads(run_job, broken_python, monkeypatch, torch_threads, env, expected):
    """OpenBLAS would start a thread per core in every rank that loads it, spinning between calls; the Dispatcher
    and the learners get torch_threads of them, unless OPENBLAS_NUM_THREADS is set by the user."""
    if env is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", env)
    job = run_job(6, cfg={"model": "softmax", "max_rounds": 1, "torch_threads": torch_threads},
                  python_dir=broken_python(REPORT_BLAS_THREADS, module="engine.py"))
    assert job.rc == 0, job.stderr
    seen = re.findall(r"BLAS threads (\S+)", job.stdout)
    assert len(seen) == 3, job.stdout  # the Dispatcher and 2 learners
    assert set(seen) == {str(min(int(expected), os.cpu_count()))}, seen  # OpenBLAS uses at most one per core


def _config_with(tmp_path, toy_config, files):
    """The toy config folder (where run_job will find it) plus extra files."""
    config = tmp_path / "config"
    shutil.copytree(toy_config / "config", config)
    for name, text in files.items():
        (config / name).write_text(text)
    return config


SIMILARITY = "word1\tword2\tscore\ndog\tcat\t8\nking\tqueen\t9\ndog\tsees\t2\nbig\tsmall\t5\nred\tdark\t4\n"
ANALOGIES = ": toy\nking queen dog cat\nbig small red old\nthe and then it\n"


def test_eval_every_scores_similarity_and_analogies_in_the_metrics(run_job, tmp_path, toy_config):
    _config_with(tmp_path, toy_config, {"similarity.tsv": SIMILARITY, "analogies.txt": ANALOGIES})
    job = run_job(6, cfg={"max_rounds": 4, "eval_every": 2})
    assert job.rc == 0, job.stderr
    rows = job.metrics()
    for r in rows:
        scored = int(r["round"]) % 2 == 0
        assert math.isnan(r["similarity"]) != scored, r
        assert math.isnan(r["analogy"]) != scored, r
        if scored:
            assert -1.0 <= r["similarity"] <= 1.0 and 0.0 <= r["analogy"] <= 1.0, r
    assert "similarity " in job.stdout and "analogies " in job.stdout
    # Round 0's scoring counts in seconds, the learners' set-up does not: the clock never goes backwards.
    seconds = [r["seconds"] for r in rows]
    assert seconds == sorted(seconds), seconds


def test_eval_every_needs_an_evaluation_file(run_job):
    t0 = time.monotonic()
    job = run_job(6, cfg={"eval_every": 1})
    assert job.rc != 0
    assert '"eval_every" needs similarity.tsv or analogies.txt' in job.stderr
    assert time.monotonic() - t0 < within(20)


def test_bad_similarity_file_names_its_line(run_job, tmp_path, toy_config):
    _config_with(tmp_path, toy_config, {"similarity.tsv": "dog cat 8\nking queen\n"})
    job = run_job(6, cfg={"eval_every": 1})
    assert job.rc != 0
    assert "similarity.tsv:2: expected 'word1 word2 score'" in job.stderr


def test_shuffled_batches_learn_both_halves_of_a_two_topic_corpus(run_job, tmp_path):
    # Two halves with disjoint words, one after the other; the test windows come from both. A learner fed in
    # text order spends the first rounds on the first half only; drawn from the shuffle pool it sees both.
    # No subsampling, so 12 rounds of 640 windows stay inside the first half. One learner and one pipeline make
    # both runs deterministic: this compares two fixed numbers (measured: 2.79 in text order, 1.22 shuffled).
    first = toy_lines(3000, seed=1)
    second = [" ".join(w + "o" for w in line.lower().rstrip(".").split()) for line in toy_lines(3000, seed=2)]
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("\n".join(a + "\n" + b for a, b in zip(first, second)) + "\n")
    subprocess.run([PYTHON, str(ROOT / "python" / "prepare.py"), str(mixed), "--out", str(tmp_path / "config"),
                    "--train-out", str(tmp_path / "train.txt"), "--data-name", "toy", "--min-count", "1",
                    "--test-windows", "200", "--seed", "3", "--dim", "32",
                    "--epoch", "0", "--target", "2.5", "--max-rounds", "200", "--max-seconds", "600"],
                   check=True, capture_output=True, text=True,
                   timeout=60)
    lines = (tmp_path / "train.txt").read_text().splitlines()
    in_order = tmp_path / "halves.txt"
    in_order.write_text("\n".join(sorted(lines, key=lambda line: line.endswith("o"))) + "\n")
    final = {}
    for shuffle in (0, 1 << 18):
        job = run_job(5, corpora=[in_order], cfg={"max_rounds": 12, "sample": 0, "shuffle_windows": shuffle})
        assert job.rc == 0, job.stderr
        final[shuffle] = job.metrics()[-1]["test_loss"]
        shutil.rmtree(job.out)
    assert final[1 << 18] < final[0] - 0.3, final


def test_a_round_whose_exchange_dwarfs_its_training_is_warned_of(run_job, finished_run):
    """bs 1: each round trains a few windows and exchanges every weight; the run says so once, at the start.
    The tests' usual rounds (bpe 10, bs 64) are not warned of."""
    job = run_job(6, cfg={"bpe": 1, "bs": 1, "max_rounds": 2})
    assert job.rc == 0, job.stderr
    warnings = [line for line in job.stderr.splitlines() if "the exchange will take most of every round" in line]
    assert len(warnings) == 1 and warnings[0].startswith("[fedavg] rank 0 (Dispatcher) WARNING: each round "), \
        job.stderr
    assert "its 1 windows (bpe x bs) touch about 160:" in warnings[0]
    assert "the exchange will take most of every round" not in finished_run.stderr  # run_job(6, cfg={"max_rounds": 2})


@pytest.mark.parametrize("cut", ["edge_windows", "reduced_windows"])
def test_windows_cut_short_train_lines_shorter_than_a_window(cut, run_job, toy_config, tmp_path):
    """Lines of three words: no whole window of 5 fits in one, so with whole windows the Filter refuses the corpus;
    with edge_windows (or reduced_windows, the default) every word of it is a target once a pass, its window cut
    short at the line's ends."""
    words = (toy_config / "train.txt").read_text().split()[:3000]
    corpus = tmp_path / "short.txt"
    corpus.write_text("".join(" ".join(words[i:i + 3]) + "\n" for i in range(0, len(words), 3)))
    cfg = {"sample": 0, "max_rounds": 0, "max_epochs": 1, "bpe": 5, "bs": 64, "edge_windows": False,
           "reduced_windows": False}
    if cut == "edge_windows":
        job = run_job(6, corpora=[corpus], cfg=cfg, timeout=60)
        assert job.rc != 0 and "no window in the whole file of 5 consecutive vocabulary words" in job.stderr, \
            job.stderr
    job = run_job(6, corpora=[corpus], cfg={**cfg, cut: True}, extra=["--overwrite"])
    assert job.rc == 0, job.stderr
    stats = job.stats()
    assert stats["stopped"] == "max_epochs"
    trained = 2 * float(stats["windows_per_learner"])
    assert len(words) <= trained < len(words) + 2 * 64, (trained, len(words))  # a pass, to within a batch each
    rows = job.metrics()
    assert rows[-1]["test_loss"] < rows[0]["test_loss"]

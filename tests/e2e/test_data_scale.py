"""Large corpora, under mpiexec (time-limited: every job has a timeout and MPIEXEC_TIMEOUT): the on-disk token
cache (a later run on the same corpus replays it and never tokenizes in Python, with the same results as a run
without it), and shards (one file feeds many pipelines; an epoch reads every line once, across a resume with
another number of pipelines too), and the rank map a job writes (which rank plays which role on which host)."""

import json
import re
import socket

import h5py
import pytest

from conftest import job_config, launch


def token_blocks(stdout):
    """(tokenized, replayed) summed over the Tokenizers' final lines."""
    found = re.findall(r"token blocks: (\d+) tokenized, (\d+) replayed", stdout)
    assert found, stdout
    return sum(int(t) for t, _ in found), sum(int(r) for _, r in found)


def test_a_later_run_replays_the_token_cache_and_matches_a_run_without_it(run_job, tmp_path):
    cache = tmp_path / "cache"
    # Several passes over the toy corpus, small blocks: many blocks a pass. A small shuffle pool: the first batch
    # does not wait for many passes of small blocks (slow on a loaded machine).
    cfg = {"token_cache_dir": str(cache), "text_block_bytes": 4096, "bs": 512, "max_rounds": 12,
           "fixed_batch_order": True, "shuffle_windows": 8192}
    first = run_job(5, cfg=cfg)
    assert first.rc == 0, first.stderr
    tokenized, replayed = token_blocks(first.stdout)
    assert tokenized > 1 and replayed > 0, first.stdout  # the first pass tokenized, later passes replayed
    files = list(cache.glob("*.ids"))
    assert len(files) == 1 and not list(cache.glob("*.tmp*"))

    second = run_job(5, cfg=cfg)
    assert second.rc == 0, second.stderr
    assert f"Tokenizer rank 1: replaying token cache {files[0]}" in second.stdout
    tokenized, replayed = token_blocks(second.stdout)
    assert tokenized == 0 and replayed > 0, second.stdout

    off = run_job(5, cfg={**cfg, "token_cache": False})
    assert off.rc == 0, off.stderr
    assert token_blocks(off.stdout)[1] == 0
    assert (off.out / "toy.w2v.txt").read_bytes() == (second.out / "toy.w2v.txt").read_bytes()
    assert (first.out / "toy.w2v.txt").read_bytes() == (second.out / "toy.w2v.txt").read_bytes()


def test_the_token_cache_goes_into_the_output_folder_by_default(run_job):
    job = run_job(5, cfg={"text_block_bytes": 4096, "bs": 512, "max_rounds": 8, "shuffle_windows": 8192})
    assert job.rc == 0, job.stderr
    assert len(list((job.out / "cache").glob("*.ids"))) == 1


# Shards: small ones, text order and little buffering, so that a checkpoint falls in the middle of an epoch.
SHARDS = {"shard_mb": 0.005, "sample": 0, "shuffle_windows": 0, "credits": 1, "window_block": 256, "bs": 64,
          "bpe": 10}


def epochs_read(stdout):
    """[(epoch, shards, windows)] from the Dispatcher's "epoch N read: S shards, W windows" lines."""
    return [tuple(map(int, m)) for m in re.findall(r"epoch (\d+) read: (\d+) shards, (\d+) windows", stdout)]


@pytest.fixture(scope="module")
def windows_per_pass(app, toy_config, tmp_path_factory):
    """Windows in a pass over the toy corpus without shards (no subsampling: the same every pass), counted once."""
    d = tmp_path_factory.mktemp("pass")
    config_dir = job_config(d / "config", toy_config, {"sample": 0, "bs": 512, "max_rounds": 0, "max_epochs": 1.2})
    job = launch(app, 5, config_dir, d / "out", [toy_config / "train.txt"], d)
    assert job.rc == 0, job.stderr
    with h5py.File(job.out / "toy.h5", "r") as f:
        return int(f["pipeline_progress"][0][1])


def test_one_file_feeds_two_pipelines_through_shards_until_max_epochs(run_job, windows_per_pass):
    job = run_job(9, cfg={**SHARDS, "pipelines": 2, "max_rounds": 0, "max_epochs": 2, "bs": 256})
    assert job.rc == 0, job.stderr
    s = job.stats()
    assert s["stopped"] == "max_epochs" and s["pipelines"] == "2", s
    assert 2.0 <= float(s["epochs"]) < 2.5, s
    read = epochs_read(job.stdout)
    assert [e for e, _, _ in read][:2] == [1, 2], job.stdout
    shards = read[0][1]
    assert shards > 20  # the one file was cut into many shards
    assert all(n == shards and w == windows_per_pass for _, n, w in read), (read, windows_per_pass)
    # Both pipelines read shards.
    per_tokenizer = re.findall(r"Tokenizer rank (\d+): token blocks: (\d+) tokenized, (\d+) replayed", job.stdout)
    assert len(per_tokenizer) == 2 and all(int(t) + int(r) > 0 for _, t, r in per_tokenizer), job.stdout
    assert "pass " in job.stdout and "passes " not in job.stdout  # one global epoch on the progress line


def test_a_resume_with_another_pipeline_count_reads_every_line_once_per_epoch(run_job, windows_per_pass):
    first = run_job(9, cfg={**SHARDS, "pipelines": 2, "max_rounds": 3})
    assert first.rc == 0, first.stderr
    with h5py.File(first.out / "toy.h5", "r") as f:
        finished = f["shards"][:, 3]
    assert 0 < (finished > 0).sum() < len(finished), finished  # stopped in the middle of the first epoch

    resumed = run_job(5, cfg={**SHARDS, "pipelines": 1, "max_rounds": 0, "max_epochs": 3}, extra=["--resume"])
    assert resumed.rc == 0, resumed.stderr
    assert resumed.stats()["stopped"] == "max_epochs" and resumed.stats()["pipelines"] == "1"
    read = epochs_read(resumed.stdout)
    assert [e for e, _, _ in read][:3] == [1, 2, 3], resumed.stdout
    # Every epoch, the one that spans both runs included, read each shard once: all its windows, no more.
    assert all(n == len(finished) and w == windows_per_pass for _, n, w in read), (read, windows_per_pass)
    with h5py.File(resumed.out / "toy.h5", "r") as f:
        finished = f["shards"][:, 3]
    assert finished.min() >= 3 and finished.max() - finished.min() <= 1, finished


def test_a_corpus_of_one_line_feeds_two_pipelines_through_shards(run_job, toy_config, tmp_path):
    # text8's shape: one line, longer than max_line_bytes, so shards are cut at spaces inside it.
    corpus = tmp_path / "oneline.txt"
    corpus.write_text(" ".join((toy_config / "train.txt").read_text().split()))
    whole = run_job(5, corpora=[corpus], cfg={"sample": 0, "bs": 512, "max_rounds": 0, "max_epochs": 1.2,
                                              "max_line_bytes": 1024})
    assert whole.rc == 0, whole.stderr
    with h5py.File(whole.out / "toy.h5", "r") as f:
        per_pass = int(f["pipeline_progress"][0][1])
    job = run_job(9, corpora=[corpus], cfg={**SHARDS, "pipelines": 2, "max_rounds": 0, "max_epochs": 2, "bs": 256,
                                            "max_line_bytes": 1024})
    assert job.rc == 0, job.stderr
    read = epochs_read(job.stdout)
    assert [e for e, _, _ in read][:2] == [1, 2], job.stdout
    assert read[0][1] > 20  # the one line was cut into many shards
    # Every epoch reads every shard once: every word is a target once, where a shard ends inside the line too (its
    # window cut short there), as in the run without shards.
    assert all(n == read[0][1] and w == read[0][2] for _, n, w in read), read
    assert read[0][2] == per_pass, (read, per_pass)
    per_tokenizer = re.findall(r"Tokenizer rank (\d+): token blocks: (\d+) tokenized", job.stdout)
    assert len(per_tokenizer) == 2 and all(int(t) > 0 for _, t in per_tokenizer), job.stdout


def test_shards_and_the_token_cache_work_together(run_job, tmp_path):
    cfg = {**SHARDS, "pipelines": 2, "max_rounds": 0, "max_epochs": 2, "bs": 256,
           "token_cache_dir": str(tmp_path / "cache")}
    first = run_job(9, cfg=cfg)
    assert first.rc == 0, first.stderr
    shards = epochs_read(first.stdout)[0][1]
    assert len(list((tmp_path / "cache").glob("*.ids"))) == shards  # one cache per shard, by byte range
    second = run_job(9, cfg=cfg)
    assert second.rc == 0, second.stderr
    assert token_blocks(second.stdout)[0] == 0, second.stderr  # no shard tokenized again, whichever pipeline


def test_more_pipelines_than_files_need_enough_ranks(run_job):
    job = run_job(5, cfg={**SHARDS, "pipelines": 2}, timeout=60)
    assert job.rc != 0
    assert "at least -n 9" in job.stderr


def test_shards_of_a_corpus_without_vocabulary_words_fail_instead_of_spinning(run_job, tmp_path):
    corpus = tmp_path / "foreign.txt"
    corpus.write_text("lorem ipsum dolor sit amet\n" * 2000)
    job = run_job(9, corpora=[corpus], cfg={**SHARDS, "pipelines": 2}, timeout=60)
    assert job.rc != 0
    assert ("rank 0 (Dispatcher): no window in a whole epoch over the corpora of 2 consecutive vocabulary words"
            in job.stderr), job.stderr


def test_the_job_writes_which_rank_plays_which_role_on_which_host(run_job):
    """OUT/NAME_ranks.json, written at start-up: with --pipelines 2, ranks 1-3 and 4-6 are the two pipelines and
    the learners after them read pipeline l mod 2; every rank ran on this host."""
    job = run_job(10, cfg={**SHARDS, "max_rounds": 1}, extra=["--pipelines", "2"])
    assert job.rc == 0, job.stderr
    ranks = json.loads((job.out / f"{job.name}_ranks.json").read_text())
    assert ranks["world_size"] == 10 and ranks["pipelines"] == 2, ranks
    stages = [{"role": role, "pipeline": p} for p in range(2) for role in ("Tokenizer", "Filter", "Batcher")]
    learners = [{"role": "Learner", "learner": i, "pipeline": i % 2} for i in range(3)]
    for r, want in enumerate([{"role": "Dispatcher"}] + stages + learners):
        assert ranks["ranks"][r] == {"rank": r, **want, "host": socket.gethostname()}, ranks
    assert not list(job.out.glob("*.tmp")), list(job.out.iterdir())

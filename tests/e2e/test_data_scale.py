"""Large corpora, under mpiexec (time-limited: every job has a timeout and MPIEXEC_TIMEOUT): the on-disk token
cache (a later run on the same corpus replays it and never tokenizes in Python, with the same results as a run
without it)."""

import re


def token_blocks(stderr):
    """(tokenized, replayed) summed over the Tokenizers' final lines."""
    found = re.findall(r"token blocks: (\d+) tokenized, (\d+) replayed", stderr)
    assert found, stderr
    return sum(int(t) for t, _ in found), sum(int(r) for _, r in found)


def test_a_later_run_replays_the_token_cache_and_matches_a_run_without_it(run_job, tmp_path):
    cache = tmp_path / "cache"
    # Several passes over the toy corpus, small blocks: many blocks a pass.
    cfg = {"token_cache_dir": str(cache), "text_block_bytes": 4096, "bs": 512, "max_rounds": 12,
           "fixed_batch_order": True}
    first = run_job(5, cfg=cfg)
    assert first.rc == 0, first.stderr
    tokenized, replayed = token_blocks(first.stderr)
    assert tokenized > 1 and replayed > 0, first.stderr  # the first pass tokenized, later passes replayed
    files = list(cache.glob("*.ids"))
    assert len(files) == 1 and not list(cache.glob("*.tmp*"))

    second = run_job(5, cfg=cfg)
    assert second.rc == 0, second.stderr
    assert f"replaying token cache {files[0]}" in second.stderr
    tokenized, replayed = token_blocks(second.stderr)
    assert tokenized == 0 and replayed > 0, second.stderr

    off = run_job(5, cfg={**cfg, "token_cache": False})
    assert off.rc == 0, off.stderr
    assert token_blocks(off.stderr)[1] == 0
    assert (off.out / "toy.w2v.txt").read_bytes() == (second.out / "toy.w2v.txt").read_bytes()
    assert (first.out / "toy.w2v.txt").read_bytes() == (second.out / "toy.w2v.txt").read_bytes()


def test_the_token_cache_goes_into_the_output_folder_by_default(run_job):
    job = run_job(5, cfg={"text_block_bytes": 4096, "bs": 512, "max_rounds": 8})
    assert job.rc == 0, job.stderr
    assert len(list((job.out / "cache").glob("*.ids"))) == 1

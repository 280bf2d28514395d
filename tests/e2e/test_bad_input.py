"""Bad input of every kind: a non-zero exit within seconds and one clear line naming the file, the line and
the problem (issue: reliability). Each case builds a config folder or corpus with one defect."""

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from conftest import within

LIMIT = 10  # seconds from launch to a non-zero exit


def make_config(toy_config, tmp_path, cfg_text=None, vocab=None, test=None, remove=None):
    d = tmp_path / "cfg"
    shutil.copytree(toy_config / "config", d)
    cfg = json.loads((d / "cfg.json").read_text())
    cfg.update({"bpe": 2, "bs": 16, "max_rounds": 2, "liveness_seconds": 20})
    (d / "cfg.json").write_text(cfg_text if cfg_text is not None else json.dumps(cfg, indent=2))
    if vocab is not None:
        (d / "vocab.txt").write_text(vocab)
    if test is not None:
        (d / "test.txt").write_text(test)
    if remove is not None:
        (d / remove).unlink()
    return d


GOOD_CFG = '{\n  "data_name": "toy",\n  "bpe": 2,\n  "bs": 16,\n  "target": 1.0\n}\n'

CONFIG_CASES = {
    "cfg not json": (dict(cfg_text='{\n  "data_name": "toy",\n  "bpe": 2\n  "bs": 16\n}\n'),
                     ["cfg.json:4:", "not valid JSON"]),
    "cfg missing key": (dict(cfg_text='{"data_name": "toy", "bpe": 2, "bs": 16}'),
                        ["cfg.json:1:", 'missing required key "target"']),
    "cfg unknown key": (dict(cfg_text=GOOD_CFG.replace('"target": 1.0', '"target": 1.0,\n  "learning_rate": 3')),
                        ["cfg.json:6:", 'unknown key "learning_rate"']),
    "cfg wrong type": (dict(cfg_text=GOOD_CFG.replace('"bs": 16', '"bs": "16"')),
                       ["cfg.json:4:", '"bs" must be an integer']),
    "cfg out of range": (dict(cfg_text=GOOD_CFG.replace('"bpe": 2', '"bpe": -3')),
                         ["cfg.json:3:", '"bpe" must be between']),
    # 200 levels: past the bound, and still within what Python's json (this harness) reads back.
    "cfg nested too deep": (dict(cfg_text=GOOD_CFG.replace(
        '"target": 1.0', '"target": 1.0,\n  "model_args": ' + '{"a": ' * 200 + "1" + "}" * 200)),
        ["cfg.json:6:", "nested deeper than 64 objects or arrays"]),
    "cfg bad device": (dict(cfg_text=GOOD_CFG.replace('"target": 1.0', '"target": 1.0,\n  "device": "gpu"')),
                       ["cfg.json:6:", '"device" must be "auto", "cpu", "cuda" or "cuda:N", got "gpu"']),
    # Refused by the model (engine.ConfigError), named where cfg.json sets the key.
    "cfg unknown model": (dict(cfg_text=GOOD_CFG.replace('"target": 1.0', '"target": 1.0,\n  "model": "nosuch"')),
                          ["cfg.json:6:", "unknown model 'nosuch'; valid models: neg,"]),
    "cfg bad model_args": (dict(cfg_text=GOOD_CFG.replace('"target": 1.0',
                                                          '"target": 1.0,\n  "model_args": {"negatives": -3}')),
                           ["cfg.json:6:", "model_args.negatives must be an integer >= 1, got -3"]),
    "cfg unknown model_args key": (dict(cfg_text=GOOD_CFG.replace('"target": 1.0',
                                                                  '"target": 1.0,\n  "model_args": {"bogus": 1}')),
                                   ["cfg.json:6:", "model_args: unknown key 'bogus' for model 'neg'"]),
    "vocab duplicate": (dict(vocab="the 10\ndog 5\ncat 4\ndog 3\n"), ["vocab.txt:4:", "dog"]),
    "vocab bad word": (dict(vocab="the\ndog\nCat\n"), ["vocab.txt:3:", "Cat"]),
    "vocab empty": (dict(vocab="\n\n"), ["vocab.txt", "empty"]),
    "test wrong width": (dict(test="the big dog sees the\nthe big dog\n"), ["test.txt:2:", "expected 5 words"]),
    "test unknown word": (dict(test="the big zebra sees the\n"), ["test.txt:1:", "zebra"]),
    "test empty": (dict(test=""), ["test.txt", "no"]),
    "vocab missing": (dict(remove="vocab.txt"), ["vocab.txt: No such file or directory"]),
    "test missing": (dict(remove="test.txt"), ["test.txt: No such file or directory"]),
}


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_bad_config_folder(case, app, toy_config, tmp_path, run_job):
    kwargs, expected = CONFIG_CASES[case]
    cfg_dir = make_config(toy_config, tmp_path, **kwargs)
    t0 = time.monotonic()
    job = run_job(5, config_dir=cfg_dir, timeout=60)
    took = time.monotonic() - t0
    assert job.rc == 2, job.stderr  # bad input: the status that tells a supervisor not to restart
    lines = [ln for ln in job.stderr.splitlines() if ln.startswith("[fedavg] rank ") and " WARNING: " not in ln]
    assert len(lines) == 1, job.stderr  # reported once, on one line
    for part in expected:
        assert part in lines[0], lines[0]
    assert lines[0].startswith("[fedavg] rank 0 ("), lines[0]
    assert took < within(LIMIT), f"took {took:.1f} s"


def test_library_that_does_not_parse(broken_python, run_job):
    """A syntax error in the model file: one line, from rank 0, naming the file, the line and the code."""
    python_dir = broken_python("def broken(:")
    line = (python_dir / "library.py").read_text().splitlines().index("def broken(:") + 1
    t0 = time.monotonic()
    job = run_job(5, python_dir=python_dir, timeout=60)
    took = time.monotonic() - t0
    assert job.rc == 2, job.stderr
    lines = [ln for ln in job.stderr.splitlines() if ln.startswith("[fedavg] ")]
    assert lines == [f"[fedavg] rank 0 (Dispatcher): {python_dir / 'library.py'}:{line}: SyntaxError: invalid "
                     f"syntax: def broken(:"], job.stderr
    assert took < within(LIMIT), f"took {took:.1f} s"


def physical_memory():
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


# Sizes whose buffers alone need more than the machine's memory: refused before anything is allocated, naming the
# key, instead of a bare std::bad_alloc or the out-of-memory killer.
MEMORY_CASES = {
    # 10^12 windows a round of 5 ids, kept for prefetch_rounds (2) rounds and one more: 55 TiB.
    "bs x bpe": (["--bs", "1000000", "--bpe", "1000000"], 0,
                 'command line: --bs 1000000: "bs" (1000000) x the batches a learner trains a round (bpe or add_bpe: '
                 "1000000), 1000000000000 windows of 5 ids that the Batcher keeps ready for 2 rounds (prefetch_rounds) "
                 "and the learner holds for one, needs 54.6 TiB of memory, more than this machine has ("),
    # The largest pool shuffle_windows allows, of the widest windows: 101 GiB.
    "shuffle pool": (["--set", "shuffle_windows=268435456", "--set", "window=50"], 101 << 30,
                     'command line: --set shuffle_windows=268435456: "shuffle_windows" (268435456 windows of 101 ids '
                     "in a Batcher's shuffle pool) needs 101.0 GiB of memory, more than this machine has ("),
    # A test-loss chunk's 4096 windows of 10^9 int64 noise words each: 30 TiB (the model's own check, in Python).
    "negatives": (["--set", "model_args.negatives=1000000000"], 0,
                  "command line: --set model_args.negatives=1000000000: model_args.negatives 1000000000: the noise "
                  "words of 4096 windows (a batch of bs 64, or a test-loss chunk of up to 4096) need 29.8 TiB of "
                  "memory, more than this machine has ("),
}


@pytest.mark.parametrize("case", sorted(MEMORY_CASES))
def test_a_size_beyond_the_machines_memory_is_refused_naming_its_key(case, run_job):
    extra, needs, expected = MEMORY_CASES[case]
    if needs and physical_memory() >= needs:
        pytest.skip(f"this machine holds the {case} ({physical_memory() >> 30} GiB)")
    t0 = time.monotonic()
    job = run_job(5, extra=extra, timeout=60)
    took = time.monotonic() - t0
    assert job.rc == 2, job.stderr
    lines = [ln for ln in job.stderr.splitlines() if ln.startswith("[fedavg] rank ") and " WARNING: " not in ln]
    assert len(lines) == 1 and lines[0].startswith(f"[fedavg] rank 0 (Dispatcher): {expected}"), job.stderr
    assert took < within(LIMIT), f"took {took:.1f} s"


def corpus_case(tmp_path, name):
    p = tmp_path / f"{name}.txt"
    if name == "missing":
        return p, [f"{p}: cannot open"]
    if name == "directory":
        p.mkdir()
        return p, [f"{p}: is a directory"]
    if name == "fifo":
        os.mkfifo(p)  # opening it would block until a writer comes: it is refused unopened
        return p, [f"corpus {p}: not a regular file (a FIFO (named pipe), which can be read only once): give a "
                   "regular file"]
    if name == "char_device":
        return Path("/dev/zero"), ["corpus /dev/zero: not a regular file (a character device): give a regular file"]
    if name == "empty":
        p.write_text("")
        return p, [f"{p}: the file is empty"]
    if name == "no_vocabulary_word":
        p.write_text("lorem ipsum dolor\n" * 50)
        return p, ["not one word of the file is in the vocabulary"]
    if name == "binary":
        p.write_bytes(b"the big dog sees the cat\n\x00\x01\x02binary\n")
        return p, [f"{p}:2: binary content"]
    if name == "enormous_word":
        # A line longer than max_line_bytes is read in pieces cut at spaces; a word as long cannot be cut.
        p.write_text("the dog\n" + "the big dog " * 20 + "x" * 1500 + " the dog\n")
        return p, [f"{p}:2: a word longer than max_line_bytes (1024): no space or other ASCII non-letter in the "
                   "1024 bytes from byte 248 to cut this long line at"]
    raise AssertionError(name)


@pytest.mark.parametrize("name", ["missing", "directory", "fifo", "char_device", "empty", "no_vocabulary_word",
                                  "binary", "enormous_word"])
def test_bad_corpus(name, toy_config, tmp_path, run_job):
    corpus, expected = corpus_case(tmp_path, name)
    t0 = time.monotonic()
    job = run_job(5, corpora=[corpus], cfg={"max_line_bytes": 1024, "text_block_bytes": 1024}, timeout=60)
    took = time.monotonic() - t0
    assert job.rc == 2, job.stderr  # bad input: found by the Tokenizer, reported by it at once
    assert "rank 1 (Tokenizer)" in job.stderr, job.stderr
    for part in expected:
        assert part in job.stderr, job.stderr
    assert took < within(LIMIT), f"took {took:.1f} s"


def test_a_corpus_that_subsampling_empties_names_sample(toy_config, tmp_path, run_job):
    """A few lines of frequent words: subsampling drops nearly all of them, and the error says so."""
    corpus = tmp_path / "five.txt"
    corpus.write_text("".join((toy_config / "train.txt").read_text().splitlines(keepends=True)[:5]))
    job = run_job(5, corpora=[corpus], cfg={"reduced_windows": False}, timeout=60)
    assert job.rc != 0
    assert (f"rank 2 (Filter): corpus {corpus}: no window in the whole file of 5 consecutive vocabulary words "
            "within one line, after subsampling (sample 0.001") in job.stderr, job.stderr
    assert "(see edge_windows / cross_lines / cross_oov / sample in cfg.json)" in job.stderr
    assert run_job(5, corpora=[corpus], cfg={"sample": 0, "reduced_windows": False}, timeout=60).rc == 0


@pytest.mark.parametrize("token_cache", [False, True])
def test_a_corpus_that_shrinks_during_the_run_ends_it(token_cache, toy_config, tmp_path, run_job):
    """A corpus truncated while the job trains on it: the Tokenizer finds it changed (at the latest when its pass
    ends, whether it reads the file or replays its token cache) and the job ends with the bad-input status, naming
    the file and what changed, instead of training on what is left."""
    corpus = tmp_path / "shrinking.txt"
    shutil.copy(toy_config / "train.txt", corpus)
    size = corpus.stat().st_size
    metrics = tmp_path / "out" / "toy_metrics.csv"
    shrunk = []

    def shrink_once_training():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if metrics.exists() and len(metrics.read_text().splitlines()) >= 2:
                os.truncate(corpus, 1000)
                shrunk.append(time.monotonic())
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=shrink_once_training)
    watcher.start()
    # A small shuffle pool, so that passes follow each other quickly; only max_seconds would stop the run.
    job = run_job(5, corpora=[corpus], cfg={"token_cache": token_cache, "shuffle_windows": 1024, "max_rounds": 0,
                                            "max_seconds": 60}, timeout=90)
    watcher.join()
    assert shrunk, "the job wrote no metrics row"
    took = time.monotonic() - shrunk[0]
    assert job.rc == 2, job.stderr
    assert (f"[fedavg] rank 1 (Tokenizer): corpus {corpus}: changed while the job reads it: it now has 1000 bytes, "
            f"{size} when the job opened it; a corpus must stay as it is until the job ends") in job.stderr, job.stderr
    assert took < within(LIMIT), f"took {took:.1f} s"


def test_a_corpus_given_twice_is_read_twice_with_a_warning(toy_config, run_job):
    corpus = toy_config / "train.txt"
    job = run_job(9, corpora=[corpus, corpus], cfg={"max_rounds": 1}, timeout=90)
    assert job.rc == 0, job.stderr
    assert f"[fedavg] rank 0 (Dispatcher) WARNING: corpus {corpus} is given more than once" in job.stderr, job.stderr
    assert job.stderr.count("is given more than once") == 1


def test_invalid_utf8_is_read_with_a_warning(toy_config, tmp_path, run_job):
    corpus = tmp_path / "latin1.txt"
    text = (toy_config / "train.txt").read_bytes()
    corpus.write_bytes(text[:2000] + b"caf\xe9 the big dog\n" + text[2000:])
    job = run_job(5, corpora=[corpus], cfg={"max_rounds": 2})
    assert job.rc == 0, job.stderr
    assert "WARNING" in job.stderr and "invalid UTF-8" in job.stderr
    assert f"{corpus}:" in job.stderr


def test_unknown_option_and_bad_fault_spec(run_job):
    job = run_job(5, extra=["--bogus"])
    assert job.rc == 2 and "unknown option --bogus" in job.stderr
    job = run_job(5, extra=["--inject-fault", "1:x:boom"])
    assert job.rc == 2 and "--inject-fault 1:x:boom" in job.stderr

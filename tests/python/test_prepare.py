"""Config-folder builder (python/prepare.py)."""

import collections
import json
import os
import random
import subprocess
import sys

import pytest

import prepare
import textpipe
from conftest import PYTHON_DIR

# 60 letter-only words; the Zipf draw makes the tail rare.
WORDS = [a + b for a in "bcdfghjklm" for b in "aeioux"]


def make_corpus(path, lines=400, seed=0):
    """Unique lines of 8-20 words, Zipf-distributed, with mixed case,
    punctuation, digits and stop words, one line without a final newline."""
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(WORDS))]
    out = []
    for i in range(lines):
        words = rng.choices(WORDS, weights, k=rng.randint(8, 20))
        words[rng.randrange(len(words))] = rng.choice(["the", "and", "of"])
        words[0] = words[0].capitalize()
        out.append(" ".join(words) + f", {i}.")
    path.write_text("\n".join(out))  # no newline at the very end
    return path


def run(tmp_path, corpora, *extra, out="cfg"):
    argv = [str(c) for c in corpora] + ["--out", str(tmp_path / out)]
    assert prepare.main(argv + [str(a) for a in extra]) == 0
    return tmp_path / out


def corpus_counts(*paths):
    counts = collections.Counter()
    for p in paths:
        counts.update(textpipe.tokenize_words(p.read_text()))
    return counts


@pytest.fixture
def corpus(tmp_path):
    return make_corpus(tmp_path / "toy.txt")


def test_writes_loadable_config(tmp_path, corpus):
    out = run(tmp_path, [corpus], "--test-windows", 50, "--bs", 64)
    words, counts = textpipe.load_vocab(out / "vocab.txt")
    windows = textpipe.load_test(out / "test.txt", words, 2)
    assert windows.shape == (50, 5)
    cfg = json.loads((out / "cfg.json").read_text())
    # The one-command path's stop rule: 5 passes over the text.
    assert cfg == {"data_name": "toy", "bpe": 200, "bs": 64, "target": 0.0,
                   "window": 2, "cross_oov": True, "dim": 100, "model": "neg",
                   "seed": 1, "max_epochs": 5.0, "max_rounds": 0,
                   "max_seconds": 0.0}
    soft = run(tmp_path / "s", [corpus], "--test-windows", 50, "--model", "softmax", "--lr", 0.02,
               "--target", 6, "--epoch", 0)
    cfg = json.loads((soft / "cfg.json").read_text())
    assert (cfg["model"], cfg["bs"], cfg["bpe"], cfg["target"], cfg["lr"], cfg["max_epochs"]) == \
        ("softmax", 256, 50, 6.0, 0.02, 0.0)
    # Counts are the true corpus counts, most frequent first, ties by word.
    true = corpus_counts(corpus)
    assert counts == [true[w] for w in words]
    assert sorted(zip(counts, words), key=lambda cw: (-cw[0], cw[1])) == \
        list(zip(counts, words))


def test_test_windows_drop_words_outside_the_vocabulary_as_training_does():
    vocab = {"a", "b", "c", "d", "e"}
    line = ["a", "b", "rare", "c", "d", "e"]
    # As word2vec and the Filter (cross_oov, the default): the word outside
    # the vocabulary is dropped, and windows close over it.
    assert prepare.line_windows(line, vocab, 2) == [["a", "b", "c", "d", "e"]]
    # cross_oov false: it ends a run, and no run of 5 words is left.
    assert prepare.line_windows(line, vocab, 2, cross_oov=False) == []


def test_vocab_size_and_min_count(tmp_path, corpus):
    true = corpus_counts(corpus)
    out = run(tmp_path, [corpus], "--vocab-size", 12, "--min-count", 1)
    words, counts = textpipe.load_vocab(out / "vocab.txt")
    assert len(words) == 12
    assert min(counts) >= max(c for w, c in true.items() if w not in words)

    min_count = 40
    out = run(tmp_path, [corpus], "--min-count", min_count, out="mc")
    words, counts = textpipe.load_vocab(out / "vocab.txt")
    assert set(words) == {w for w, c in true.items() if c >= min_count}
    assert 0 < len(words) < len(true)


def test_min_count_alone_decides_the_vocabulary(tmp_path):
    # 10,500 words, each 5 times: more than any fixed cap of 10,000 would
    # keep; none is left out unless --vocab-size asks for it.
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [a + b + c for a in letters for b in letters for c in letters][:10500]
    path = tmp_path / "many.txt"
    path.write_text(("\n".join(" ".join(words[i:i + 20]) for i in range(0, len(words), 20)) + "\n") * 5)
    kept, _ = textpipe.load_vocab(run(tmp_path, [path], "--test-windows", 10) / "vocab.txt")
    assert len(kept) == len(words)
    capped, _ = textpipe.load_vocab(run(tmp_path, [path], "--test-windows", 10, "--vocab-size", 10000,
                                        out="capped") / "vocab.txt")
    assert len(capped) == 10000
    # The one command's options: no vocab_size unless the command line gives one.
    prepare.prepare_job([path], tmp_path / "job", {"min_count": 5, "test_windows": 10})
    job, _ = textpipe.load_vocab(tmp_path / "job" / "vocab.txt")
    assert len(job) == len(words)


def test_stopwords(tmp_path, corpus):
    plain, _ = textpipe.load_vocab(run(tmp_path, [corpus]) / "vocab.txt")
    assert {"the", "and", "of"} <= set(plain)
    out = run(tmp_path, [corpus], "--stopwords", out="stop")
    words, _ = textpipe.load_vocab(out / "vocab.txt")
    assert not set(words) & prepare.STOPWORDS
    assert set(words) == set(plain) - prepare.STOPWORDS


def test_test_windows_are_held_out_of_train_output(tmp_path):
    # Uniform words: a 5-word window is then (all but) unique to its line.
    rng = random.Random(3)
    lines = [" ".join(rng.choices(WORDS, k=rng.randint(6, 15)))
             for _ in range(300)]
    corpus = tmp_path / "uniform.txt"
    corpus.write_text("\n".join(lines) + "\n")
    train = tmp_path / "train.txt"
    out = run(tmp_path, [corpus], "--test-windows", 80, "--train-out", train)
    windows = [tuple(line.split()) for line in
               (out / "test.txt").read_text().splitlines()]
    assert len(windows) == 80 and all(len(w) == 5 for w in windows)

    kept = train.read_text().splitlines()
    assert set(kept) < set(lines) and len(kept) < len(lines)
    assert [line for line in lines if line in set(kept)] == kept  # in order
    removed = [line for line in lines if line not in set(kept)]

    def five_grams(text_lines):
        grams = set()
        for line in text_lines:
            w = line.split()
            grams.update(zip(w, w[1:], w[2:], w[3:], w[4:]))
        return grams

    assert set(windows) <= five_grams(removed)
    assert not set(windows) & five_grams(kept)


def test_windows_close_over_oov_and_stay_in_line(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("aa bb cc dd zz ee aa bb\n" * 5 + "cc dd\nee aa\n" * 5)
    out = run(tmp_path, [path], "--min-count", 6, "--test-windows", 100,
              "--window", 1)
    windows = {line for line in (out / "test.txt").read_text().splitlines()}
    assert windows == {"aa bb cc", "bb cc dd", "cc dd ee", "dd ee aa",
                       "ee aa bb"}
    out = run(tmp_path, [path], "--min-count", 6, "--test-windows", 100,
              "--window", 1, "--cross-oov", "false", out="no_cross")
    windows = {line for line in (out / "test.txt").read_text().splitlines()}
    assert windows == {"aa bb cc", "bb cc dd", "ee aa bb"}


def test_same_seed_same_output_other_seed_differs(tmp_path, corpus):
    outs = [run(tmp_path, [corpus], "--seed", seed, "--test-windows", 30,
                out=f"s{i}") for i, seed in enumerate([5, 5, 6])]
    files = [{n: (o / n).read_bytes() for n in ("vocab.txt", "test.txt")}
             for o in outs]
    assert files[0] == files[1]
    assert files[0]["vocab.txt"] == files[2]["vocab.txt"]
    assert files[0]["test.txt"] != files[2]["test.txt"]


def test_several_corpora_are_concatenated(tmp_path):
    a = make_corpus(tmp_path / "a.txt", lines=50, seed=1)
    b = make_corpus(tmp_path / "b.txt", lines=50, seed=2)
    train = tmp_path / "train.txt"
    out = run(tmp_path, [a, b], "--min-count", 1, "--test-windows", 5,
              "--train-out", train, "--data-name", "ab")
    words, counts = textpipe.load_vocab(out / "vocab.txt")
    both = corpus_counts(a, b)
    assert dict(zip(words, counts)) == {w: both[w] for w in words}
    assert json.loads((out / "cfg.json").read_text())["data_name"] == "ab"
    lines = train.read_text().splitlines()
    originals = a.read_text().splitlines() + b.read_text().splitlines()
    assert len(lines) < 100 and set(lines) <= set(originals)
    assert len(lines) == len(set(lines))  # a.txt's last line did not merge


@pytest.mark.parametrize("content, extra, fragment", [
    (None, [], "no such file"),
    ("<dir>", [], "is a directory"),
    ("<fifo>", [], "not a regular file (a FIFO (named pipe), which can be "
                   "read only once): give a regular file"),
    ("123 456 ...\n", [], "no words"),
    ("aa bb cc dd ee\n", ["--min-count", "2"], "no vocabulary words"),
    ("the and of\nthe and of\n", ["--stopwords", "--min-count", "1"],
     "no vocabulary words"),
    ("aa bb\ncc dd\n", ["--min-count", "1"], "cannot build test windows"),
    ("我们今天去公园散步然后回家吃饭。\n他们明天早上坐火车去北京看朋友。\n",
     ["--min-count", "2"], "must be segmented into words first"),
    ("aa bb cc dd ee\x00\n", ["--min-count", "1"], "binary content"),
])
def test_errors_exit_2_with_one_line(tmp_path, capsys, content, extra,
                                     fragment):
    path = tmp_path / "corpus.txt"
    if content == "<dir>":
        path.mkdir()
    elif content == "<fifo>":
        os.mkfifo(path)
    elif content is not None:
        path.write_text(content)
    code = prepare.main([str(path), "--out", str(tmp_path / "o")] + extra)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"prepare: {path}:") and fragment in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("kind, command", [("gzip", "gunzip -k"),
                                           ("bzip2", "bunzip2 -k")])
def test_a_compressed_corpus_is_refused_with_what_to_run(tmp_path, capsys,
                                                         kind, command):
    import bz2
    import gzip
    path = tmp_path / "corpus.txt.gz"
    text = b"the cat sees the dog\n" * 50
    path.write_bytes(gzip.compress(text) if kind == "gzip"
                     else bz2.compress(text))
    code = prepare.main([str(path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"prepare: {path}: a {kind}-compressed file: decompress "
                   f"it first ({command} {path}); a corpus must be UTF-8 "
                   "text\n")
    assert not (tmp_path / "o").exists()


def test_a_device_as_corpus_is_named_as_such(tmp_path, capsys):
    code = prepare.main(["/dev/zero", "--out", str(tmp_path / "o")])
    assert code == 2
    assert capsys.readouterr().err == ("prepare: /dev/zero: not a regular file (a character device): give a "
                                       "regular file\n")


def test_cli_runs_as_a_script(tmp_path, corpus):
    script = PYTHON_DIR / "prepare.py"
    ok = subprocess.run([sys.executable, str(script), str(corpus), "--out",
                         str(tmp_path / "cli"), "--test-windows", "10"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "10 test windows" in ok.stdout
    assert (tmp_path / "cli" / "cfg.json").is_file()
    bad = subprocess.run([sys.executable, str(script),
                          str(tmp_path / "missing.txt"), "--out",
                          str(tmp_path / "x")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr == f"prepare: {tmp_path / 'missing.txt'}: no such file\n"


def test_a_corpus_of_one_line_is_held_out_in_pieces(tmp_path):
    # text8's shape: one long line, no newline at the end.
    rng = random.Random(4)
    words = rng.choices(WORDS, k=6000)
    corpus = tmp_path / "one_line.txt"
    corpus.write_text(" ".join(words))
    train = tmp_path / "train.txt"
    out = run(tmp_path, [corpus], "--min-count", 1, "--test-windows", 100,
              "--train-out", train)
    windows = (out / "test.txt").read_text().splitlines()
    assert len(windows) == 100
    kept = train.read_text().splitlines()
    # The held-out pieces became line ends; most of the text is left, no
    # word is cut, and no test window is in what is left.
    assert 1 < len(kept) and sum(len(k.split()) for k in kept) > 0.9 * 6000
    assert set(" ".join(kept).split()) <= set(WORDS)
    assert not any(w in line for w in windows for line in kept)
    # Without --train-out, heldout.json names the same text as byte spans.
    out = run(tmp_path, [corpus], "--min-count", 1, "--test-windows", 100,
              out="spans")
    entry = json.loads((out / "heldout.json").read_text())["corpora"][0]
    assert entry["offsets"] == [] and entry["spans"]
    text = corpus.read_bytes()
    for start, end in entry["spans"]:
        assert text[start - 1:start] in (b"", b" ") and \
            text[end:end + 1] in (b"", b" ")


def test_nothing_left_to_train_on_is_said_in_words(tmp_path, capsys):
    path = tmp_path / "tiny.txt"
    path.write_text("aa bb cc dd ee\naa bb cc dd ee\n")
    code = prepare.main([str(path), "--out", str(tmp_path / "o"),
                         "--min-count", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "nothing left to train on" in err, err
    assert not (tmp_path / "o").exists()  # nothing written


def test_evaluation_files_are_checked_and_copied(tmp_path, corpus):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("word1\tword2\tscore\nba be 7.5\nca ce 2.0\n")
    questions = tmp_path / "q.txt"
    questions.write_text(": sec\nba be ca ce\n")
    out = run(tmp_path, [corpus], "--similarity", pairs, "--analogies",
              questions)
    assert (out / "similarity.tsv").read_text() == pairs.read_text()
    assert (out / "analogies.txt").read_text() == questions.read_text()
    questions.write_text(": sec\nba be ca\n")
    code = prepare.main([str(corpus), "--out", str(tmp_path / "bad"),
                         "--analogies", str(questions)])
    assert code == 2 and not (tmp_path / "bad").exists()


def test_a_line_over_max_line_bytes_is_read_in_parts_as_fedavg_mpi_does(
        tmp_path):
    # One line of 5399 bytes, over a max_line_bytes of 1024: read in parts.
    path = tmp_path / "long.txt"
    path.write_text(" ".join(["ba be bi"] * 600) + "\n")
    options = {"max_line_bytes": 1024, "min_count": 1, "test_windows": 10}
    summary = prepare.prepare_job([path], tmp_path / "o", options)
    assert "10 test windows" in summary


def one_long_line(path, words=12000, seed=7):
    """text8's shape, with punctuation: one line of about 70 KB."""
    rng = random.Random(seed)
    text = " ".join(rng.choices(WORDS, k=words))
    text = text.replace(" ba ", ", ba ").replace(" ke ", " ke. ")
    path.write_text(text)
    return path


def test_a_line_many_times_max_line_bytes_comes_in_bounded_parts(tmp_path):
    path = one_long_line(tmp_path / "one.txt")
    text = path.read_bytes()
    with open(path, "rb") as f:
        parts = list(prepare._line_parts(f, path, 1024))
    assert b"".join(p for _, p, _ in parts) == text  # every byte once
    assert len(parts) > len(text) // 1024
    assert all(n == 1 for n, _, _ in parts)
    assert [e for _, _, e in parts] == [False] * (len(parts) - 1) + [True]
    for _, part, _ in parts[:-1]:
        assert len(part) <= 1024 and not part[-1:].isalpha()
    # Every word once, in order: the cuts are at word boundaries.
    words = [w for _, p, _ in parts for w in prepare._words(p)]
    assert words == prepare._words(text)
    counts, units = prepare.count_words([path], 1024)
    assert counts == collections.Counter(prepare._words(text))
    assert units == len(list(prepare._units(path, 0, 1 << 20)))


def test_a_long_line_is_held_out_alike_whatever_max_line_bytes(tmp_path):
    # The held-out pieces, the vocabulary and the test windows do not depend
    # on the parts the line is read in; the spans lie at word boundaries.
    path = one_long_line(tmp_path / "one.txt")
    outs = [run(tmp_path, [path], "--min-count", 1, "--test-windows", 1000,
                "--max-line-bytes", limit, out=f"o{limit}")
            for limit in (1024, 5000, prepare.MAX_LINE_BYTES)]
    for name in ("vocab.txt", "test.txt", "heldout.json"):
        assert len({(o / name).read_text() for o in outs}) == 1, name
    entry = json.loads((outs[0] / "heldout.json").read_text())["corpora"][0]
    assert entry["offsets"] == [] and len(entry["spans"]) > 3
    text = path.read_bytes()
    for start, end in entry["spans"]:
        assert not text[start - 1:start].isalpha()
        assert not text[end:end + 1].isalpha()
    # --train-out leaves a line end for each piece, reading in parts too.
    trains = []
    for limit in (1024, prepare.MAX_LINE_BYTES):
        train = tmp_path / f"train{limit}.txt"
        run(tmp_path, [path], "--min-count", 1, "--test-windows", 1000,
            "--max-line-bytes", limit, "--train-out", train, out="t")
        trains.append(train.read_bytes())
    assert trains[0] == trains[1]
    kept = trains[0]
    for start, end in reversed(entry["spans"]):
        text = text[:start] + b"\n" + text[end:]
    assert kept == text + b"\n"


def test_a_word_longer_than_max_line_bytes_is_refused_naming_its_line(
        tmp_path):
    path = tmp_path / "blob.txt"
    path.write_text("ba be bi\n" + "ba " * 100 + "x" * 1500 + " ba be\n")
    with pytest.raises(prepare.PrepareError) as e:
        prepare.prepare_job([path], tmp_path / "o",
                            {"max_line_bytes": 1024, "min_count": 1})
    assert str(e.value) == (
        f"{path}:2: a word longer than max_line_bytes (1024): no space or "
        "other ASCII non-letter in the 1024 bytes from byte 309 to cut this "
        "long line at; is this text? (--max-line-bytes)")
    assert not (tmp_path / "o").exists()
    # A line that is one such word, or ends in one, is read whole or as its
    # last part.
    path.write_text("ba be bi ba be bi\n" + "x" * 1024 + "\n" + "ba " * 400
                    + "y" * 1024)
    assert prepare.count_words([path], 1024)[0]["y" * 1024] == 1


def test_binary_content_far_into_a_long_line_names_the_line(tmp_path):
    path = tmp_path / "bin.txt"
    path.write_bytes(b"ba be\n" + b"ba be bi " * 1000 + b"\0 ba\n")
    with pytest.raises(prepare.PrepareError,
                       match=r"bin.txt:2: binary content \(NUL byte\)"):
        prepare.count_words([path], 1024)

"""python/evaluate.py: loading, Spearman, analogies, neighbours, CLI."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import evaluate
from conftest import PYTHON_DIR


def write_w2v(path, words, vectors):
    with open(path, "w") as f:
        f.write(f"{len(words)} {len(vectors[0])}\n")
        for w, v in zip(words, vectors):
            f.write(w + " " + " ".join(repr(float(x)) for x in v) + "\n")
    return path


def test_spearman_with_ties_matches_hand_value():
    # ranks x: 1 2.5 2.5 4; ranks y: 1 3 2 4 -> rho = 4.5 / sqrt(4.5 * 5)
    assert evaluate.spearman([1, 2, 2, 3], [1, 3, 2, 4]) == \
        pytest.approx(3 / math.sqrt(10))
    assert evaluate.spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1)
    assert list(evaluate.rank_average([10, 30, 20, 30])) == [1, 3.5, 2, 3.5]


def test_spearman_agrees_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, 40), rng.normal(size=40)
    assert evaluate.spearman(x, y) == \
        pytest.approx(stats.spearmanr(x, y).correlation)


def test_similarity_on_tiny_file_with_oov(tmp_path):
    # Unit vectors at angles 0, 30, 60, 90 degrees: cos(a,b)=.866,
    # cos(a,c)=.5, cos(a,d)=0.
    ang = np.radians([0, 30, 60, 90])
    emb = write_w2v(tmp_path / "e.txt", ["a", "b", "c", "d"],
                    np.c_[np.cos(ang), np.sin(ang)])
    pairs = tmp_path / "p.tsv"
    pairs.write_text("# comment\nWord 1\tWord 2\tHuman (mean)\n"
                     "A\tb\t9.0\na\tc\t5.0\na\td\t6.0\na\tzzz\t1.0\n")
    words, vectors = evaluate.load_word2vec(emb)
    r = evaluate.similarity(words, vectors, pairs)
    assert (r["pairs"], r["total"]) == (3, 4)
    assert r["coverage"] == pytest.approx(0.75)
    # cos ranks 3 2 1 vs human ranks 3 1 2: rho = 1 - 6*2/(3*8) = 0.5
    assert r["rho"] == pytest.approx(0.5)


def analogy_embedding(tmp_path):
    royal, male, female, other = np.eye(4)
    words = ["king", "queen", "man", "woman", "prince", "apple"]
    vectors = [royal + male, royal + female, male, female,
               royal + 0.9 * male + 0.1 * other, other]
    return write_w2v(tmp_path / "a.txt", words, vectors)


def test_analogies_3cosadd_with_coverage(tmp_path):
    emb = analogy_embedding(tmp_path)
    q = tmp_path / "q.txt"
    q.write_text(": royalty\nMan King Woman Queen\nman woman king queen\n"
                 "man king woman unicorn\n: gram-plural\n"
                 "king queen man apple\n")
    words, vectors = evaluate.load_word2vec(emb)
    r = evaluate.analogies(words, vectors, q)
    assert (r["questions"], r["total"]) == (3, 4)
    assert r["coverage"] == pytest.approx(0.75)
    # king - man + woman = queen; woman - man + king = queen; the third
    # (queen - king + man = woman, not apple) is wrong.
    assert r["correct"] == 2
    assert r["sections"]["royalty"] == {"accuracy": 1.0, "correct": 2,
                                        "questions": 2}
    assert r["syntactic"]["questions"] == 1
    assert r["syntactic"]["accuracy"] == 0.0


def test_analogy_excludes_question_words(tmp_path):
    # b - a + c is nearest to c itself; the answer must come from the rest.
    emb = write_w2v(tmp_path / "e.txt", ["a", "b", "c", "d"],
                    [[1, 0, 0], [1, 0.01, 0], [0, 1, 0], [0, 1, 0.3]])
    q = tmp_path / "q.txt"
    q.write_text(": s\na b c d\n")
    r = evaluate.analogies(*evaluate.load_word2vec(emb), q)
    assert r["correct"] == 1


def test_neighbours(tmp_path):
    words, vectors = evaluate.load_word2vec(analogy_embedding(tmp_path))
    near = evaluate.neighbours(words, vectors, "King", k=2)
    assert [w for w, _ in near] == ["prince", "man"]
    assert near[1][1] == pytest.approx(1 / math.sqrt(2))
    assert evaluate.neighbours(words, vectors, "nope") is None
    assert len(evaluate.neighbours(words, vectors, "king")) == 5


def test_load_errors_and_bare_matrix(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("the 1 2\n")
    with pytest.raises(ValueError, match="header"):
        evaluate.load_word2vec(bad)
    short = tmp_path / "short.txt"
    short.write_text("2 3\na 1 2 3\nb 1 2\n")
    with pytest.raises(ValueError, match="short.txt:3: expected 3"):
        evaluate.load_word2vec(short)
    matrix, vocab = tmp_path / "m.txt", tmp_path / "vocab.txt"
    matrix.write_text("1 0\n0 1\n")
    vocab.write_text("the 10\nof 5\n")
    words, vectors = evaluate.load_matrix(matrix, vocab)
    assert words == ["the", "of"] and vectors.tolist() == [[1, 0], [0, 1]]


def test_binary_word2vec_reads_as_the_text_one(tmp_path):
    """What fedavg_mpi writes as NAME.w2v.bin: "V D\n", then per word its
    bytes, a space, D float32 and a newline."""
    words = ["the", "água", "king"]
    vectors = np.array([[0.5, -1.25], [3.0, 1e-7], [-2.0, 0.0]], np.float32)
    binary = tmp_path / "run.w2v.bin"
    binary.write_bytes(b"3 2\n" + b"".join(
        w.encode() + b" " + v.astype("<f4").tobytes() + b"\n"
        for w, v in zip(words, vectors)))
    got_words, got = evaluate.load_word2vec(binary)
    assert got_words == words and np.array_equal(got, vectors)
    text_words, text = evaluate.load_word2vec(write_w2v(tmp_path / "run.w2v.txt", words, vectors))
    assert text_words == words and np.array_equal(text, vectors)
    binary.write_bytes(binary.read_bytes()[:-6])
    with pytest.raises(ValueError, match="ends at word 3 of the 3"):
        evaluate.load_word2vec(binary)


def test_cli_json(tmp_path):
    emb = analogy_embedding(tmp_path)
    pairs = tmp_path / "p.tsv"
    pairs.write_text("king queen 8\nking apple 1\nman woman 7\n")
    q = tmp_path / "q.txt"
    q.write_text(": x\nman king woman queen\n")
    out = subprocess.run(
        [sys.executable, str(PYTHON_DIR / "evaluate.py"), str(emb),
         "--similarity", str(pairs), "--analogies", str(q),
         "--neighbours", "king", "zzz", "--json"],
        capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    assert r["words"] == 6 and r["dim"] == 4
    assert r["similarity"]["pairs"] == 3
    assert r["analogies"]["accuracy"] == 1.0
    assert r["neighbours"]["king"][0][0] == "prince"
    assert r["neighbours"]["zzz"] is None
    text = subprocess.run(
        [sys.executable, str(PYTHON_DIR / "evaluate.py"), str(emb),
         "--similarity", str(pairs)], capture_output=True, text=True,
        check=True).stdout
    assert "Spearman rho" in text and "3/3 pairs" in text
    missing = subprocess.run(
        [sys.executable, str(PYTHON_DIR / "evaluate.py"),
         str(tmp_path / "none.txt")], capture_output=True, text=True)
    assert missing.returncode == 2 and "none.txt" in missing.stderr


def test_scorer_checks_its_files_up_front_and_scores_a_matrix(tmp_path):
    words = ["king", "queen", "man", "woman"]
    sim = tmp_path / "sim.tsv"
    sim.write_text("king queen 9\nman woman 8\nking woman 3\n")
    questions = tmp_path / "q.txt"
    questions.write_text(": family\nking queen man woman\n")
    vectors = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1]], dtype=np.float32)
    rho, acc = evaluate.Scorer(words, str(sim), str(questions))(vectors)
    assert -1.0 <= rho <= 1.0
    assert acc == 1.0  # queen - king + man = woman exactly
    rho, acc = evaluate.Scorer(words, str(sim), None)(vectors)
    assert np.isnan(acc) and not np.isnan(rho)
    bad = tmp_path / "bad.tsv"
    bad.write_text("king queen 9\nman woman\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2:"):
        evaluate.Scorer(words, str(bad), None)

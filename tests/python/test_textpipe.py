"""Tokenizer and input-file parsing (python/textpipe.py)."""

import random
import subprocess
import sys

import numpy as np
import pytest

import textpipe
from conftest import PYTHON_DIR
from textpipe import BREAK, OOV, Tokenizer, load_test, load_vocab

VOCAB = ["the", "cat", "sat", "don", "t", "café", "naïve", "école", "abc",
         "def", "a", "b", "σ", "ς", "i"]
ID = {w: i for i, w in enumerate(VOCAB)}


def tok(data):
    out = Tokenizer(VOCAB).tokenize(data)
    assert out.dtype == np.int32 and out.ndim == 1
    return out.tolist()


def ids(*words):
    return [BREAK if w == "\n" else ID.get(w, OOV) for w in words]


# -- tokenization ----------------------------------------------------------

def test_tokenize_words_rule():
    assert textpipe.tokenize_words("The CAT, sat-on don't 42x_y é2É") == [
        "the", "cat", "sat", "on", "don", "t", "x", "y", "é", "é"]
    assert textpipe.tokenize_words("") == []
    assert textpipe.tokenize_words(" 123 ... _ ") == []


def test_case_is_folded():
    assert tok(b"The THE tHe\n") == ids("the", "the", "the", "\n")


def test_punctuation_digits_underscores_split_words():
    assert tok(b"cat,sat!the\n") == ids("cat", "sat", "the", "\n")
    assert tok(b"abc123def 2019 a_b\n") == ids("abc", "def", "a", "b", "\n")


def test_apostrophes_split_words():
    assert tok(b"don't\n") == ids("don", "t", "\n")


def test_unicode_letters_are_letters():
    assert tok("Café NAÏVE École\n".encode()) == ids("café", "naïve", "école",
                                                     "\n")


def test_non_ascii_non_letters_split_words():
    text = "naïve—café “cat” a…b\n".encode()
    assert tok(text) == ids("naïve", "café", "cat", "a", "b", "\n")
    assert tok("abc٣def é٣\n".encode()) == ids("abc", "def", "é", "\n")


def test_unknown_words_are_oov():
    assert tok(b"the dog sat\n") == [ID["the"], OOV, ID["sat"], BREAK]
    assert tok("the chien naïf\n".encode()) == [ID["the"], OOV, OOV, BREAK]


def test_empty_and_blank_input():
    assert tok(b"") == []
    assert tok(b"\n") == [BREAK]
    assert tok(b"\n\n  \n") == [BREAK, BREAK, BREAK]
    assert tok(b"... 42\n") == [BREAK]


def test_break_after_every_line_and_unterminated_last_line():
    assert tok(b"the cat\nsat\n") == ids("the", "cat", "\n", "sat", "\n")
    assert tok(b"the cat\nsat") == ids("the", "cat", "\n", "sat", "\n")
    assert tok(b"the") == ids("the", "\n")
    assert tok("café".encode()) == ids("café", "\n")


def test_crlf_line_ends():
    assert tok(b"the cat\r\nsat\r\n") == ids("the", "cat", "\n", "sat", "\n")
    assert tok(b"the\r\n\r\n") == ids("the", "\n", "\n")


def test_invalid_utf8_is_replaced_not_fatal():
    assert tok(b"cat\xffsat\n") == ids("cat", "sat", "\n")
    assert tok(b"the \xc3\n\xe2\x82cat") == ids("the", "\n", "cat", "\n")


def test_accepts_any_bytes_like_object():
    data = b"The cat\nsat\n"
    want = tok(data)
    assert tok(memoryview(data)) == want
    assert tok(bytearray(data)) == want
    assert tok(np.frombuffer(data, dtype=np.uint8)) == want
    assert tok(memoryview(b"xxThe cat\nsat\nyy")[2:-2]) == want


def test_duplicate_vocabulary_rejected():
    with pytest.raises(ValueError, match="duplicate"):
        Tokenizer(["a", "b", "a"])


def _reference(data: bytes, vocab):
    """Line-by-line tokenize_words: the definition the fast paths must meet."""
    index = {w: i for i, w in enumerate(vocab)}
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    out = []
    for line in lines:
        out += [index.get(w, OOV) for w in textpipe.tokenize_words(line)]
        out.append(BREAK)
    return out


def test_fast_paths_match_reference_on_random_text():
    pieces = list("abcXYZ '.,-\n\r\t0_9") + [
        "é", "É", "Σ", "ς", "İ", "ß", "—", "“", "\u0301", "\u212a", "日本",
        "\ufffd", "²", "٣", "the", "Cat", "naïve"]
    vocab = ["a", "b", "ab", "abc", "é", "xyz", "σ", "ς", "i", "k", "ß",
             "日本", "c", "the", "cat", "naïve"]
    tokenizer = Tokenizer(vocab)
    rng = random.Random(7)
    for _ in range(3000):
        data = "".join(rng.choice(pieces)
                       for _ in range(rng.randint(0, 25))).encode()
        if rng.random() < 0.2:
            data += bytes([rng.randint(0x80, 0xFF)]) + data
        assert tokenizer.tokenize(data).tolist() == _reference(data, vocab), \
            data


def test_ascii_words_follow_the_rule():
    pieces = list("abcXYZ '.,-\n\r\t\x0b\x7f0_9@[`{") + ["the", "Cat"]
    rng = random.Random(11)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert [w.decode() for w in textpipe.ascii_words(text.encode())] == \
            textpipe.tokenize_words(text), text


def test_textpipe_does_not_import_torch():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import textpipe; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code, str(PYTHON_DIR)],
                   check=True, timeout=60)


# -- load_vocab ------------------------------------------------------------

def write(tmp_path, text, name="f.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_load_vocab_plain_whitespace(tmp_path):
    path = write(tmp_path, "the of\n\n  and\tto\ncafé\n")
    assert load_vocab(path) == (["the", "of", "and", "to", "café"], None)


def test_load_vocab_with_counts(tmp_path):
    path = write(tmp_path, "the 6400\nof 3000\nand 12 to 7\n")
    assert load_vocab(path) == (["the", "of", "and", "to"],
                                [6400, 3000, 12, 7])


@pytest.mark.parametrize("text, line, fragment", [
    ("", 1, "no words"),
    ("\n  \n\n", 1, "no words"),
    ("the\nof\nand\nof\n", 4, "duplicate word 'of' (first at line 2)"),
    ("the\nThe\n", 2, "invalid word 'The'"),
    ("the\nabc1\n", 2, "invalid word 'abc1'"),
    ("the\nof\ndon't\n", 3, "invalid word \"don't\""),
    ("a_b\n", 1, "invalid word 'a_b'"),
    ("12 the\n", 1, "count 12 without a preceding word"),
    ("the 5\nof 4 3\n", 2, "count 3 without a preceding word"),
    ("the 5\nof 4\nand\n", 3, "word 'and' has no count"),
    ("the\nof\nand 7\n", 3, "word 'and' has count"),
])
def test_load_vocab_errors_name_path_and_line(tmp_path, text, line, fragment):
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as err:
        load_vocab(path)
    message = str(err.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message
    assert "\n" not in message


def test_load_vocab_invalid_utf8_reported_with_line(tmp_path):
    path = write(tmp_path, b"the\nca\xfft\n")
    with pytest.raises(ValueError, match=rf"^{path}:2: invalid word"):
        load_vocab(path)


def test_load_vocab_missing_file_names_path(tmp_path):
    path = tmp_path / "missing_vocab.txt"
    with pytest.raises(FileNotFoundError, match="missing_vocab.txt"):
        load_vocab(path)


# -- load_test -------------------------------------------------------------

TEST_VOCAB = ["the", "cat", "sat", "on", "mat", "a"]


def test_load_test_shape_order_and_target(tmp_path):
    path = write(tmp_path, "the cat sat on the\n\n  a cat mat on sat \n")
    got = load_test(path, TEST_VOCAB, 2)
    assert got.dtype == np.int32 and got.flags.c_contiguous
    assert got.tolist() == [[0, 1, 2, 3, 0], [5, 1, 4, 3, 2]]
    assert got[:, 2].tolist() == [2, 4]  # column `window` is the target


def test_load_test_other_window(tmp_path):
    path = write(tmp_path, "the cat sat\non mat a\n")
    assert load_test(path, TEST_VOCAB, 1).tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("text, line, fragment", [
    ("the cat sat on the\nthe cat sat on\n", 2,
     "expected 5 words (window 2), got 4"),
    ("the cat sat on the mat\n", 1, "expected 5 words (window 2), got 6"),
    ("the cat sat\n", 1, "expected 5 words (window 2), got 3 (a test set made for window 1: prepare the config "
                         "again with --window 2)"),
    ("the cat sat on the\n\nthe dog sat on the\n", 3,
     "word 'dog' is not in the vocabulary"),
    ("the cat Sat on the\n", 1, "word 'Sat' is not in the vocabulary"),
    ("", 1, "no context windows"),
    ("\n\n", 1, "no context windows"),
])
def test_load_test_errors_name_path_and_line(tmp_path, text, line, fragment):
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as err:
        load_test(path, TEST_VOCAB, 2)
    message = str(err.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message


def test_load_test_missing_file_names_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_test.txt"):
        load_test(tmp_path / "no_test.txt", TEST_VOCAB, 2)

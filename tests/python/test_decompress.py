"""runtime/decompress.py: the plain copy a job reads in place of a compressed corpus."""

import bz2
import gzip
import lzma
import os

import pytest

from runtime import decompress

TEXT = b"the cat sees the dog\nthe dog sees the cat\n" * 200


@pytest.mark.parametrize("suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)])
def test_a_compressed_corpus_gets_a_plain_copy_named_after_its_text(tmp_path, suffix, compress):
    packed = tmp_path / f"kjv.txt{suffix}"
    packed.write_bytes(compress(TEXT))
    plain = decompress.ensure_plain(str(packed), str(tmp_path / "cache"))
    assert plain == decompress.plain_path(str(packed), str(tmp_path / "cache"))
    assert os.path.basename(plain) == "kjv.txt" and plain.startswith(str(tmp_path / "cache" / "plain"))
    assert open(plain, "rb").read() == TEXT
    # Kept: a second call finds it and does not write it again.
    before = os.stat(plain).st_mtime_ns
    assert decompress.ensure_plain(str(packed), str(tmp_path / "cache")) == plain
    assert os.stat(plain).st_mtime_ns == before
    assert not [p for p in os.listdir(os.path.dirname(plain)) if p.endswith(".tmp")]


def test_plain_text_needs_no_copy(tmp_path):
    text = tmp_path / "kjv.txt"
    text.write_bytes(TEXT)
    assert decompress.plain_path(str(text), str(tmp_path / "cache")) is None
    assert decompress.ensure_plain(str(text), str(tmp_path / "cache")) is None
    assert decompress.plain_path(str(tmp_path / "missing.gz"), str(tmp_path / "cache")) is None
    fifo = tmp_path / "fifo.gz"
    os.mkfifo(fifo)
    assert decompress.plain_path(str(fifo), str(tmp_path / "cache")) is None  # not opened: that would block


def test_a_changed_file_gets_another_copy_and_a_copy_elsewhere_the_same(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "text.gz").write_bytes(gzip.compress(TEXT, mtime=0))
    (b / "text.gz").write_bytes(gzip.compress(TEXT, mtime=0))  # the same file on another host
    cache = str(tmp_path / "cache")
    assert decompress.plain_path(str(a / "text.gz"), cache) == decompress.plain_path(str(b / "text.gz"), cache)
    (b / "text.gz").write_bytes(gzip.compress(TEXT + b"one more line\n", mtime=0))
    assert decompress.plain_path(str(a / "text.gz"), cache) != decompress.plain_path(str(b / "text.gz"), cache)


def test_a_file_that_does_not_decompress_names_itself_and_leaves_nothing(tmp_path):
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(gzip.compress(TEXT)[:20])
    with pytest.raises(ValueError, match=f"^{broken}: a gzip-compressed file that does not decompress"):
        decompress.ensure_plain(str(broken), str(tmp_path / "cache"))
    folder = os.path.dirname(decompress.plain_path(str(broken), str(tmp_path / "cache")))
    assert sorted(os.listdir(folder)) == [".lock"]

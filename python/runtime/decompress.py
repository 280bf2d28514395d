"""Compressed corpora (gzip, bzip2, xz): the plain copy a job reads in their place.

A job reads its corpora at byte offsets (held-out lines, shards, read positions for --resume), so a compressed
file is decompressed once, streaming, into a plain copy in the cache folder, and the job reads that.  The copy's
folder is named by a hash of the compressed file's name, size and first and last MiB, so a changed file gets a new
copy, and the same file (or a copy of it on another host) keeps its copy across runs and resumes.  Ranks of one
host that need the copy at once take turns on a lock: one writes it (to a temporary file, renamed when whole), the
others find it there.
Standard library only: the pipeline ranks import it, and they never import torch.  The decompressors are imported
only to decompress: most jobs read plain text, and every pipeline rank imports this module.
"""

import fcntl
import hashlib
import importlib
import os
import shutil
import stat
from pathlib import Path

# The first bytes of each kind this module reads, the module that reads it, and the suffixes its files end in.
KINDS = [(b"\x1f\x8b", "gzip", (".gz", ".gzip")), (b"BZh", "bz2", (".bz2", ".bzip2")),
         (b"\xfd7zXZ\x00", "lzma", (".xz",))]
CHUNK = 1 << 20


def _kind(path):
    with open(path, "rb") as f:
        head = f.read(6)
    for magic, module, suffixes in KINDS:
        if head.startswith(magic):
            return module, suffixes
    return None


def plain_path(path, cache_dir):
    """Where the plain copy of the corpus ``path`` is (whether or not it is written yet), or None when ``path``
    is not a compressed file this module reads (or cannot be read: the job reports that as for any corpus)."""
    try:
        st = os.stat(path)
        # Only a regular file is read here: opening a FIFO would block (the job refuses anything else by its kind).
        kind = _kind(path) if stat.S_ISREG(st.st_mode) else None
    except OSError:
        return None
    if kind is None:
        return None
    _, suffixes = kind
    name = Path(path).name
    for s in suffixes:
        if name.lower().endswith(s) and len(name) > len(s):
            name = name[:-len(s)]
            break
    key = hashlib.sha256(f"{name}\0{st.st_size}\0".encode())
    with open(path, "rb") as f:  # its first and last MiB: the same on every host that holds a copy of the file
        key.update(f.read(1 << 20))
        f.seek(max(st.st_size - (1 << 20), 0))
        key.update(f.read(1 << 20))
    return str(Path(cache_dir) / "plain" / key.hexdigest()[:16] / name)


def ensure_plain(path, cache_dir):
    """Writes the plain copy of ``path`` (plain_path) unless it is there; returns its path, or None when ``path``
    is not compressed.  Raises ValueError naming ``path`` when it does not decompress."""
    plain = plain_path(path, cache_dir)
    if plain is None or os.path.isfile(plain):
        return plain
    folder = Path(plain).parent
    folder.mkdir(parents=True, exist_ok=True)
    module = importlib.import_module(_kind(path)[0])
    lzma_error = importlib.import_module("lzma").LZMAError  # what a damaged xz file raises
    with open(folder / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(plain):
            return plain  # another rank wrote it while this one waited
        tmp = f"{plain}.{os.getpid()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with module.open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
                shutil.copyfileobj(src, dst, CHUNK)
            os.replace(tmp, plain)
        except (OSError, EOFError, lzma_error) as e:
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise ValueError(f"{path}: a {module.__name__}-compressed file that does not decompress: {e}") from None
    return plain

"""Edits a checkpoint as someone forging it would: sets a dataset's checksum (attribute xxh3) to match its values,
and the file's checksum of its attributes and structure (the root's xxh3, src/core/checkpoint.cpp's
structure_checksum) to match the file, so that only the reader's other checks are left to find the edit."""

import ctypes
import struct

import h5py
import numpy as np

_XXHASH = ctypes.CDLL("libxxhash.so.0")
_XXHASH.XXH3_64bits.restype = ctypes.c_uint64
_XXHASH.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]

# HDF5's type classes (H5T_class_t).
_INTEGER, _FLOAT, _STRING = 0, 1, 3


def xxh3(data: bytes) -> int:
    return _XXHASH.XXH3_64bits(data, len(data))


def put_dataset(f, name, values):
    """Replaces (or adds) dataset `name` of the open file `f` with `values` (a NumPy array) and their checksum."""
    if name in f:
        del f[name]
    f[name] = values
    f[name].attrs["xxh3"] = np.uint64(xxh3(np.ascontiguousarray(values).tobytes()))


def _attribute_record(name, value):
    if isinstance(value, (str, bytes)):
        text = value.encode("utf-8") if isinstance(value, str) else value
        return bytes([_STRING]) + text
    value = np.asarray(value)
    kind = _FLOAT if value.dtype.kind == "f" else _INTEGER
    return bytes([kind]) + value.astype(value.dtype.newbyteorder("=")).tobytes()


def _object_record(obj):
    if isinstance(obj, h5py.Group):
        return b"g"
    dims = b"".join(struct.pack("=Q", d) for d in obj.shape)
    return b"d" + dims + struct.pack("=Q", int(obj.attrs.get("xxh3", 0)))


def seal(path):
    """Sets the root's xxh3 of the checkpoint at `path` to the checksum of its attributes and structure."""
    with h5py.File(path, "r+") as f:
        records = [b"@" + name.encode() + b"\0" + _attribute_record(name, f.attrs[name])
                   for name in f.attrs if name != "xxh3"]
        f.visititems(lambda name, obj: records.append(b"/" + name.encode() + b"\0" + _object_record(obj)))
        data = b"".join(struct.pack("=Q", len(r)) + r for r in sorted(records))
        f.attrs["xxh3"] = np.uint64(xxh3(data))

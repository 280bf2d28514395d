"""A learner's state (optimizer, step counter, RNGs) as bytes for a checkpoint, and back: plain arrays and JSON,
never code.

The bytes are a safetensors file (an 8-byte little-endian header length, a JSON header, then the arrays' raw
little-endian bytes): each tensor or NumPy array of the state is one entry "t<i>" of the header, with its dtype,
shape and byte range, and the rest of the state (dicts, lists, tuples, numbers, strings, None) is a JSON skeleton in
the header's "__metadata__" under "fedavg_state", with {"__array__": i} where array i stood ("fedavg_kinds" says
whether each was a tensor or a NumPy array). Decoding reads JSON and
copies bytes; anything else (a pickle, a damaged header, an array out of range, JSON nested too deep) raises
StateFormatError, and nothing else.
"""

import json
import math
import struct
import sys

import numpy as np

_KEY = "fedavg_state"
_KINDS = "fedavg_kinds"
_DTYPES = {  # safetensors' names
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
    "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_,
}
_NAMES = {np.dtype(t): name for name, t in _DTYPES.items()}


class StateFormatError(ValueError):
    """Bytes that are not a learner state in this format."""


def encode(state) -> bytes:
    """``state`` (nested dicts, lists and tuples of tensors, arrays, numbers, strings, None) as bytes."""
    arrays: list = []
    skeleton = json.dumps(_to_json(state, arrays))
    kinds = json.dumps([kind for kind, _ in arrays])
    header: dict = {"__metadata__": {_KEY: skeleton, _KINDS: kinds}}
    blobs, offset = [], 0
    for i, (kind, a) in enumerate(arrays):
        data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        name = "BF16" if kind == "bf16" else _NAMES[a.dtype]
        header[f"t{i}"] = {"dtype": name, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header).encode("utf-8")
    head += b" " * (-len(head) % 8)  # the arrays start 8-byte aligned
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def decode(data: bytes):
    """The state ``encode`` made of ``data``; raises StateFormatError for anything else."""
    data = bytes(data)
    if len(data) < 8:
        raise StateFormatError("too short to be a learner state")
    (length,) = struct.unpack("<Q", data[:8])
    if length > len(data) - 8:
        raise StateFormatError("its header runs past its end (not a learner state; a pickle?)")
    try:
        header = json.loads(data[8:8 + length].decode("utf-8"))
        skeleton = json.loads(header["__metadata__"][_KEY])
        kinds = json.loads(header["__metadata__"][_KINDS])
        entries = [(header[f"t{i}"], kind) for i, kind in enumerate(kinds)]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as e:
        raise StateFormatError(f"its header is not a learner state's ({type(e).__name__}: {e})") from None
    body = memoryview(data)[8 + length:]
    arrays = [_array(entry, kind, body, i) for i, (entry, kind) in enumerate(entries)]
    try:
        return _from_json(skeleton, arrays)
    except (ValueError, KeyError, TypeError, RecursionError) as e:
        if isinstance(e, StateFormatError):
            raise
        raise StateFormatError(f"its state is not one this version writes ({type(e).__name__}: {e})") from None


def steps(state, name="step"):
    """``state[name]``, a count of steps: an int, 0 or more; raises StateFormatError naming it otherwise."""
    value = state[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StateFormatError(f"{name} is {value!r}: not a count of steps (an integer, 0 or more)")
    return value


def _array(entry, kind, body, i):
    try:
        dtype, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        np_type = np.int16 if dtype == "BF16" else _DTYPES[dtype]
        if not all(isinstance(n, int) and 0 <= n < 2**40 for n in [*shape, begin, end]):
            raise ValueError("its shape and byte range must be integers, 0 or more")
        count = math.prod(shape)
    except (KeyError, TypeError, ValueError) as e:
        raise StateFormatError(f"array {i}: bad entry ({e})") from None
    if not 0 <= begin <= end <= len(body) or end - begin != count * np.dtype(np_type).itemsize:
        raise StateFormatError(f"array {i}: its bytes do not match its shape {shape} and type {dtype}")
    a = np.frombuffer(body[begin:end], dtype=np.dtype(np_type).newbyteorder("<")).astype(np_type).reshape(shape)
    if kind in ("bf16", "tensor"):
        import torch  # only a state that held tensors (an autograd model's) needs it
        t = torch.from_numpy(a.copy())
        return t.view(torch.bfloat16) if kind == "bf16" else t
    if kind == "numpy":
        return a.copy()
    raise StateFormatError(f"array {i}: unknown kind {kind!r}")


def _to_json(value, arrays):
    torch = sys.modules.get("torch")  # no tensor without it
    if torch is not None and torch.is_tensor(value):
        t = value.detach().cpu()
        if t.dtype == torch.bfloat16:
            arrays.append(("bf16", t.view(torch.int16).numpy()))
        else:
            arrays.append(("tensor", t.numpy()))
        return {"__array__": len(arrays) - 1}
    if isinstance(value, np.ndarray):
        arrays.append(("numpy", value))
        return {"__array__": len(arrays) - 1}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {"__dict__": [[_to_json(k, arrays), _to_json(v, arrays)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"__tuple__": [_to_json(v, arrays) for v in value]}
    if isinstance(value, list):
        return [_to_json(v, arrays) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"a learner state holds a {type(value).__name__}: only tensors, arrays, dicts, lists, tuples, "
                    "numbers, strings and None can be checkpointed")


def _from_json(value, arrays):
    if isinstance(value, list):
        return [_from_json(v, arrays) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"__array__"}:
        i = value["__array__"]
        if not isinstance(i, int) or not 0 <= i < len(arrays):
            raise StateFormatError(f"it names array {i!r}, which it does not hold")
        return arrays[i]
    if set(value) == {"__tuple__"}:
        return tuple(_from_json(v, arrays) for v in value["__tuple__"])
    if set(value) == {"__dict__"}:
        return {_from_json(k, arrays): _from_json(v, arrays) for k, v in value["__dict__"]}
    raise StateFormatError(f"unknown entry {sorted(value)!r}")

"""The learner-state decoder (runtime/state_codec.py) and the noise sampler's load_state on a few hundred mutated
states, from a fixed seed: flipped and cut bytes, a wrong header length, and forged headers (bad dtypes, shapes,
byte ranges, array references, JSON nested too deep). Each is refused with StateFormatError (ValueError naming the
field, for the sampler) or decodes to a state; nothing else is raised, and nothing hangs."""

import json
import random
import struct

import numpy as np
import pytest
import torch

from runtime import state_codec
from runtime.noise import NoiseSampler

SEED = 20261127
CASES = 300
VOCAB = 50


def _state():
    sampler = NoiseSampler(np.arange(1, VOCAB + 1), VOCAB, 0.75, 7, 0)
    sampler.next(10)
    return {"step": 12, **sampler.state(), "moments": torch.ones(3, 2), "lr": (0.5, [1, None, "x"])}


def _header(data):
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length]), data[8 + length:]


def _with_header(header, body):
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + body


def _forged(rng, data):
    header, body = _header(data)
    entry = header["t0"]
    forgeries = [
        lambda: entry.update(dtype=rng.choice(["F99", 7, None, ["F32"], "BF16"])),
        lambda: entry.update(shape=rng.choice([[-1], [2**62, 2**62], "12", [1.5], [], [0, -1], None])),
        lambda: entry.update(data_offsets=rng.choice([[0], [5, 2], [0, 10**12], [-8, 0], [0.5, 8], "ab"])),
        lambda: header["__metadata__"].update(fedavg_state=json.dumps({"__array__": rng.choice([-1, 99, "0", 1.0])})),
        lambda: header["__metadata__"].update(fedavg_kinds=rng.choice(["[\"pickle\"]", "7", "\"numpy\"", "{"])),
        lambda: header["__metadata__"].update(fedavg_state="[" * 100000 + "]" * 100000),
        lambda: header["__metadata__"].update(fedavg_state=json.dumps({"__dict__": rng.choice([7, [[1]], [[[], 1]]])})),
        lambda: header["__metadata__"].update(fedavg_state=json.dumps({"__tuple__": 5, "x": 1})),
        lambda: header.pop("__metadata__"),
    ]
    rng.choice(forgeries)()
    return _with_header(header, body)


def _mutated(rng, data):
    kind = rng.randrange(4)
    out = bytearray(data)
    if kind == 0:
        for _ in range(rng.randint(1, 6)):
            out[rng.randrange(len(out))] ^= rng.randint(1, 255)
    elif kind == 1:
        del out[rng.randrange(len(out)):]
    elif kind == 2:
        out[:8] = struct.pack("<Q", rng.choice([0, 1, len(data), 2**63, rng.randrange(len(data))]))
    else:
        return _forged(rng, data)
    return bytes(out)


def test_every_mutated_state_is_refused_or_decodes():
    rng = random.Random(SEED)
    data = state_codec.encode(_state())
    outcomes = {"refused": 0, "decoded": 0}
    for case in range(CASES):
        mutated = _mutated(rng, data)
        try:
            state = state_codec.decode(mutated)
        except state_codec.StateFormatError:
            outcomes["refused"] += 1
            continue
        except Exception as e:  # noqa: BLE001 - any other error is the failure this test looks for
            pytest.fail(f"case {case} (seed {SEED}): {type(e).__name__}: {e}")
        outcomes["decoded"] += 1
        _load_or_refuse(state, case)
    assert outcomes["refused"] > CASES // 3, outcomes


def _load_or_refuse(state, case):
    """A decoded state is loaded, or refused with a ValueError (StateFormatError) that names its field."""
    sampler = NoiseSampler(np.arange(1, VOCAB + 1), VOCAB, 0.75, 7, 0)
    try:
        if not isinstance(state, dict):
            return
        state_codec.steps(state)
        sampler.load_state(state)
    except (ValueError, KeyError, TypeError):  # engine.set_state reports each as StateFormatError
        return
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"case {case} (seed {SEED}): load_state raised {type(e).__name__}: {e}")
    assert ((sampler.next(100) >= 0) & (sampler.next(100) < VOCAB)).all()


@pytest.mark.parametrize("field, value, message", [
    ("step", -10**9, "step is -1000000000: not a count of steps"),
    ("step", float("nan"), "step is nan: not a count of steps"),
    ("step", True, "step is True: not a count of steps"),
    ("pool", np.array([3, VOCAB]), f"noise pool: word id {VOCAB} is outside the vocabulary (0 to {VOCAB - 1})"),
    ("pool", np.array([-1]), "noise pool: word id -1 is outside the vocabulary"),
    ("pool", np.array([1.5]), "noise pool: not a list of word ids"),
])
def test_a_forged_field_is_refused_naming_it(field, value, message):
    state = state_codec.decode(state_codec.encode({**_state(), field: value}))
    sampler = NoiseSampler(np.arange(1, VOCAB + 1), VOCAB, 0.75, 7, 0)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        state_codec.steps(state)
        sampler.load_state(state)

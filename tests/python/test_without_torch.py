"""A CPU run of the built-in "neg" never imports torch nor library.py (each import of torch costs a learner about a
second and 200 MB): the whole contract C++ calls, in a fresh interpreter; and what selecting a model of library.py
still imports."""

import json
import subprocess
import sys

import pytest

from conftest import KERNELS_DIR, PYTHON_DIR

# Every engine call a learner and the Dispatcher make, as C++ makes them, then the modules the interpreter holds.
RUN = """
import json, sys
import numpy as np
import engine
cfg = json.loads(sys.argv[1])
shapes = engine.param_shapes(cfg)
weights = np.zeros(sum(int(np.prod(s)) for _, s in shapes), np.float32)
model = engine.create(cfg, weights, True)
engine.written_rows(model)
windows = (np.arange(64)[:, None] + np.arange(5)) % cfg["vocab_size"]
engine.load_weights(model)
loss = engine.train_step(model, windows.astype(np.int32))
engine.store_weights(model)
state = engine.get_state(model)
engine.set_state(model, state)
origin = engine.model_origin(cfg, sys.argv[2])
print(json.dumps({"loss": loss, "test": engine.test_loss(model, windows.astype(np.int32)),
                  "rows": [len(r) for r in engine.written_rows(model)], "device": engine.device(model),
                  "lr": engine.current_lr(model), "embeddings": engine.embeddings(model).shape,
                  "origin": origin, "torch": "torch" in sys.modules, "library": "library" in sys.modules}))
"""

CFG = {"vocab_size": 30, "dim": 8, "window": 2, "seed": 1, "bs": 64, "device": "auto",
       "counts": [100 - i for i in range(30)]}


def run(cfg, python_dir=PYTHON_DIR):
    proc = subprocess.run([sys.executable, "-c", RUN, json.dumps(cfg), str(PYTHON_DIR)], capture_output=True,
                          text=True, timeout=120,
                          env={"PYTHONPATH": f"{python_dir}:{KERNELS_DIR}", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(not any(KERNELS_DIR.glob("fedavg_kernels*.so")),
                    reason="fedavg_kernels is not built (build the program first)")
def test_a_cpu_run_of_neg_imports_neither_torch_nor_library():
    out = run(CFG)
    assert not out["torch"] and not out["library"]
    assert out["device"] == "cpu (fused step)"
    assert out["loss"] > 0 and out["test"] > 0 and out["lr"] == pytest.approx(0.1)
    assert out["rows"][0] > 0 and out["rows"][1] > 0 and out["embeddings"] == [30, 8]
    assert out["origin"][0].startswith("neg (FusedNegCBOW in ") and out["origin"][1] == ""


def test_a_model_of_library_py_imports_both():
    out = run({**CFG, "model": "neg_autograd"})
    assert out["torch"] and out["library"]
    assert out["origin"][0].startswith("neg_autograd (NegCBOW in ")


def test_a_library_py_that_maps_neg_to_its_own_model_is_warned_of(tmp_path):
    """"neg" is built in: a MODELS["neg"] of an edited library.py is not what the run trains, and the Dispatcher's
    start-up warning says so."""
    python_dir = tmp_path / "python"
    subprocess.run(["cp", "-r", str(PYTHON_DIR), str(python_dir)], check=True, timeout=60)
    with open(python_dir / "library.py", "a") as f:
        f.write("\nclass Mine(NegCBOW):\n    negatives = 3\n\n\nMODELS['neg'] = Mine\n")
    out = run(CFG, python_dir)
    assert out["origin"][0].startswith("neg (FusedNegCBOW in ")
    assert f"{python_dir / 'library.py'} maps MODELS['neg'] to Mine, which this run does not train" \
        in out["origin"][1]

"""The learner's model step on the CPU and on a GPU (cfg "device").

    /usr/bin/python3 bench/device_step.py [--vocab 71000] [--dim 300]
        [--bs 1024 4096 16384] [--models neg neg_autograd]
        [--devices cpu cuda] [--seconds 2] [--json]

Ours, through engine.py as the C++ learner calls it: train_step on windows
of 2w+1 = 5 ids drawn from a Zipf law over the vocabulary (a stand-in for
text: p(rank r) ~ 1 / (r + 1)), one torch thread on the CPU.  For each
model, device and batch size: windows/s over about --seconds after a
warm-up, and the test loss of held-out windows after the same number of
windows on every device (the models must learn alike).  Also the time of
a period's two weight copies on a GPU (engine.load_weights before the
period, engine.store_weights after it), which a CPU does not make, beside
the same copies from and to memory that is not page-locked.
Devices torch does not see are left out.  Prints markdown tables.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))


def zipf_windows(vocab, n, seed, window=2):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1)
    stream = rng.choice(vocab, size=n + 2 * window, p=p / p.sum())
    stream = stream.astype(np.int32)
    idx = np.arange(n)[:, None] + np.arange(2 * window + 1)
    counts = np.bincount(stream, minlength=vocab)
    return stream[idx], counts


class Run:
    def __init__(self, engine, model, device, bs, vocab, dim, counts):
        self.engine, self.bs = engine, bs
        cfg = {"vocab_size": vocab, "dim": dim, "window": 2, "seed": 1,
               "model": model, "bs": bs, "lr": 0.05, "device": device,
               "counts": counts.tolist()}
        size = sum(math.prod(s) for _, s in engine.param_shapes(cfg))
        self.weights = np.zeros(size, np.float32)
        self.model = engine.create(cfg, self.weights, True)

    def steps(self, windows, count, start=0):
        e, bs = self.engine, self.bs
        batches = windows.shape[0] // bs
        for s in range(start, start + count):
            b = s % batches
            e.train_step(self.model, windows[b * bs:(b + 1) * bs])

    def rate(self, windows, seconds):
        """windows/s of steps for about ``seconds`` (each step ends with
        the loss on the host, so the GPU has finished its work)."""
        done, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            self.steps(windows, 4, done)
            done += 4
        return done * self.bs / (time.perf_counter() - t0)

    def copies(self, repeats=5):
        """Seconds of one load_weights + store_weights, and of the same two
        copies from and to a buffer that is not page-locked (the best of
        ``repeats`` each)."""
        import torch
        host = torch.from_numpy(self.weights.copy())
        device = host.to(self.model.placement.device)
        best = [math.inf, math.inf]
        for _ in range(repeats):
            t0 = time.perf_counter()
            self.engine.load_weights(self.model)
            self.engine.store_weights(self.model)
            t1 = time.perf_counter()
            device.copy_(host)
            host.copy_(device)
            t2 = time.perf_counter()
            best = [min(best[0], t1 - t0), min(best[1], t2 - t1)]
        return best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vocab", type=int, default=71000)
    p.add_argument("--dim", type=int, default=300)
    p.add_argument("--bs", type=int, nargs="+", default=[1024, 4096, 16384])
    p.add_argument("--models", nargs="+", default=["neg", "neg_autograd"])
    p.add_argument("--devices", nargs="+", default=["cpu", "cuda"])
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--quality-windows", type=int, default=1 << 19)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)

    import torch
    import engine
    torch.set_num_threads(1)
    devices = [d for d in a.devices
               if not d.startswith("cuda") or torch.cuda.is_available()]
    windows, counts = zipf_windows(a.vocab, max(a.bs) * 64, 1)
    test, _ = zipf_windows(a.vocab, 20000, 2)
    rows, copies = [], {}
    for model in a.models:
        for device in devices:
            for bs in a.bs:
                run = Run(engine, model, device, bs, a.vocab, a.dim, counts)
                run.rate(windows, min(0.5, a.seconds))           # warm-up
                rate = run.rate(windows, a.seconds)
                fresh = Run(engine, model, device, bs, a.vocab, a.dim,
                            counts)
                fresh.steps(windows, a.quality_windows // bs)
                engine.store_weights(fresh.model)
                loss = engine.test_loss(fresh.model, test)
                rows.append({"model": model, "device": device, "bs": bs,
                             "rate": rate, "loss": loss})
                if device != "cpu" and model not in copies:
                    copies[model] = run.copies()
    name = torch.cuda.get_device_name() if torch.cuda.is_available() \
        else None
    cpu_name = next((line.split(":", 1)[1].strip() for line in
                     Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name")), "?")
    result = {"vocab": a.vocab, "dim": a.dim, "gpu": name, "rows": rows,
              "cpu": cpu_name, "torch": torch.__version__,
              "copies": copies, "params": 2 * a.vocab * a.dim,
              "quality_windows": a.quality_windows}
    if a.json:
        print(json.dumps(result))
        return 0
    cpu = {(r["model"], r["bs"]): r["rate"] for r in rows
           if r["device"] == "cpu"}
    print(f"{a.vocab:,} words x {a.dim}, Zipf windows, 5 negatives; CPU: "
          f"{cpu_name}, 1 torch thread; GPU: {name or 'none'}; torch "
          f"{torch.__version__}")
    print()
    print("| model | device | batch | windows/s | vs CPU, same batch | "
          f"test loss after {a.quality_windows:,} windows |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        ref = cpu.get((r["model"], r["bs"]))
        vs = f"{r['rate'] / ref:.1f}x" if ref else "-"
        print(f"| {r['model']} | {r['device']} | {r['bs']} | "
              f"{r['rate']:,.0f} | {vs} | {r['loss']:.4f} |")
    for model, (pinned, plain) in copies.items():
        mb = result["params"] * 4 / 1e6
        print()
        print(f"{model}: a period's two weight copies ({mb:,.0f} MB each "
              f"way): {pinned * 1e3:.1f} ms (the same copies from and to "
              f"memory that is not page-locked: {plain * 1e3:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

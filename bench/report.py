#!/usr/bin/env python3
"""Runs every benchmark in bench/ and writes docs/performance.md from what they print.

Usage: /usr/bin/python3 bench/report.py [--quick] [--only SCRIPT ...]
(30 to 45 minutes, by the machine; --quick: about half; --only: those benchmarks, the other sections and the
header kept, every section in its place)
Each benchmark can also be run on its own; see its docstring.
"""

import argparse
import datetime
import os
import platform
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PYTHON = "/usr/bin/python3"


# What the figures of a section depend on, for the reader; no measured figure goes here (they would go stale).
NOTES = {
    "Checkpoint write and read":
        "The write and the read go through the program's own core::write_checkpoint and core::read_checkpoint. "
        "Every dataset carries its XXH3 checksum, taken on another thread while HDF5 writes the values; a read "
        "checks each one and looks at every weight for NaN. The file lands in the page cache (a temporary folder "
        "under /tmp): the times are the program's work, not the disk's.",
    "Many hosts":
        "The two hosts are network namespaces of this machine (scripts/emulate_hosts.sh): they share its cores, so "
        "the TCP stack's work on the batches and weights is done by the cores the learners train on, as it would "
        "not be on separate machines. The exchange is sync_seconds, measured once every learner is in it.",
    "The weight exchange at a large vocabulary":
        "Every setting trains on the same windows (fixed_batch_order). Compare figures within a table.\n\n"
        "**The exchange column** is sync_seconds on the Dispatcher: from the last RoundDone to the end of the "
        "exchange, plus its wait for every learner to be Ready for the next round. It includes the learners' work "
        "of finding and packing their changed rows and of applying the global ones, which on 2 cores competes "
        "with the other ranks.\n\n"
        "**That work is bound by memory bandwidth.** Each learner reads, in both of its copies of the weights (its "
        "own and the global ones, 2 x 194 MB), the rows its steps wrote and the rows it kept back, and adds the "
        "global change to both, while this machine moves about 12 GB/s (a 194 MB memcpy) for all ranks "
        "together.\n\n"
        "- At this vocabulary a round's noise words write nearly every output vector, and with `sparse_rows` "
        "below 1 the rare words' small changes wait from round to round, so the learners still read nearly "
        "every row.\n"
        "- With every changed row sent (the defaults), a row a round did not write is not read.\n"
        "- Even the dense exchange, which only copies, takes more than 5 % of a round here.\n\n"
        "**The dense exchange by strategy.** bsp's dense exchange is a ring allreduce among the learners (one "
        "learner per host across hosts; in the same bytes as fedavg's tree; it also hashes every replica each "
        "round); the other strategies' dense exchange copies along the learner tree.\n\n"
        "- Across hosts the ring sends 1.5 copies of the weights out of each learner's host a round, where "
        "fedavg's tree sends 2 out of learner 1's (the sum up and the new weights down).\n"
        "- With two learners on each of two hosts, bsp's learners sum on their host first and its ring holds one "
        "learner per host, so each host receives one copy a round, as from fedavg's tree.\n"
        "- With two learners per host the sparse exchange sends each owner's global change into each other host "
        "once, through that host's lowest learner, which passes it on; each learner still sends the rows that "
        "the other host's learners own straight to them.\n\n"
        "**Bytes** count payloads as docs/strategies.md#communication says. Round 1, which starts with a "
        "broadcast of the full weights, and the final flush of the lossy settings (a full exchange after the "
        "last round) are left out of the per-round figures, but for the bytes the hosts received across hosts, "
        "which count everything that crossed the emulated network (batches, the first broadcast, the final "
        "flush, TCP's headers).\n\n"
        "**Checkpoints.** A checkpoint written in the background costs the Dispatcher a copy of the weights; the "
        "write itself needs a core that is not training, which 2 learners on 2 cores do not leave.\n\n"
        "**Across hosts**, compare the round column: the Dispatcher's span ends when its sends are out, while the "
        "learners still receive.\n\n"
        "- An uncapped link between two namespaces moved about 12 Gbit/s with one TCP stream, and its TCP work "
        "runs on the cores the learners train on.\n"
        "- A capped link (`scripts/emulate_hosts.sh limit 1gbit`: a token bucket on both ends of each host's "
        "link) stands for a host's 1 Gbit/s network card, where the exchange waits on the wire and its bytes set "
        "the round.\n\n"
        "**The vocabularies.**\n\n"
        "- The smaller table keeps the same text's 15,000 and 30,000 most frequent words, where `exchange: auto` "
        "still makes the exchange sparse across hosts (8 M parameters and more).\n"
        "- At 300,000 words (made-up words of letters, sampled with `bench/large_corpus.py`'s Zipf sampler) the "
        "learners hold 720 MB of weights each: within one host the dense exchange is still the shortest, and "
        "`sparse_rows: 0.2` sends 7x fewer bytes for a test loss 0.1 % below dense's.\n"
        "- The million-word table samples a million made-up words into 20 M tokens; the 914,607 that occur are "
        "the vocabulary.\n\n"
        "**The million-word run.**\n\n"
        "- Its learner holds three copies of the weights (its own, the global ones, and the rounding residual of "
        "the rows it owns, here all of them), and at the final flush, for a moment, the rows it sends twice (as "
        "a delta and encoded): its peak.\n"
        "- A message of more than 2^31 bytes is sent as one (MPI 4 counts).\n"
        "- The outputs are the two text files and the binary one, written from the final checkpoint on: each "
        "value is formatted once for both text files and written 8 MB at a time.",
    "Hosts on a capped link":
        "On this machine one host's time to the target moves by up to half from pass to pass, and every layout's "
        "by up to twice from one day to another (the hosts' most: the network namespaces' work is the kernel's): "
        "compare the layouts of one table, and their seconds as well as their ratios. "
        "The hosts add their changes over rounds of 8 batches per learner over the hosts, send their largest 5 % "
        "of rows in int8, and train on through their leaders' exchange (`overlap`), so \"exchange\" (the "
        "Dispatcher's time in it) is not time the learners wait: they train the next round's batches meanwhile, "
        "nearly all of them (\"trained through\"), and then wait for the exchange to end. \"learners idle\" is "
        "what the exchange costs them; compare \"windows/learner\" with one host's for what the hosts' rounds "
        "cost in data. One host's learners train on the same way while their leader sends the round's weights to "
        "the Dispatcher and it evaluates them; the weights it evaluates already hold some of the next round's "
        "batches, which count with that round, so one host's \"windows/learner\" may read up to a round's "
        "windows per learner low.",
    "A corpus larger than memory: the token cache":
        "Python's tokenizer bounds the first pass; replaying the cache removes it, and the Filter and Batcher bound "
        "the later passes. The Tokenizer's memory does not follow the corpus (the replayed pages are given back); a "
        "later run never imports `textpipe` in its Tokenizer. The Batcher's memory follows the round size "
        "(`bpe * bs`, `prefetch_rounds`) and `shuffle_windows`, not the corpus.",
    "The sparse exchange on a many-core host":
        "Measured where the host has at least 8 cores, which is not the machine of the other sections (the "
        "heading names the cores); bench/report.py keeps this section as it is elsewhere. The learners train on "
        "the CPU (device=cpu), one torch thread each. The work on rows (finding the changed rows, packing them, "
        "merging the parts received, adding the global change to both copies of the weights) is memory-bound; its "
        "threads share the rows, and each row's result does not depend on them, so every setting of "
        "exchange_threads gives the same bits. "
        "The lent machine is a virtual machine (Ubuntu 24.04, its Open MPI 4.1.6, torch 2.11), shared with other "
        "work: the round time of the same windows moves between runs; compare the exchange time column.",
    "The learner step on a GPU":
        "Measured where torch sees a GPU, which is not the machine of the other sections (the line above the table "
        "names it); bench/report.py keeps this section as it is elsewhere. One learner's model step alone, through "
        "engine.py, with its copies of the weights: a round adds the exchange, on the CPU. The same windows give "
        "the same test loss on both devices; a larger batch takes fewer, larger steps, and learns less from the "
        "same windows.",
    "Learner throughput per core, against gensim":
        "`neg` is the hand-written model (the default), whose step on a CPU is the fused kernel of `src/kernels/`; "
        "\"neg, step as torch ops\" is the same step as torch ops (what `neg` runs on a GPU, or where the kernel "
        "is not built); "
        "`neg_autograd` is library.py's `NegCBOW`, the same loss written with autograd on the building blocks of "
        "blocks.py (kernels of `src/kernels/table_blocks.cpp` on the rows in place, their row gradients added by "
        "trainer.py's SGD step), the model the recipes of models.md edit. The \"vs neg\" column compares "
        "each with `neg` at the same dim and batch; the quality table trains all three on the same windows.",
    "Pipeline, waiting ranks, memory, averaging":
        "The Batcher draws every batch at random from a pool of `shuffle_windows` windows (default 262 144, "
        "docs/architecture.md), which is most of its CPU. The weight exchange is point to point along the "
        "learner tree, `Weights` down and `Average` up, not `MPI_Ibcast` and `MPI_Reduce`, which Debian's "
        "MPICH 4.0 runs slower between local ranks (next section).",
    "MPI: the weight exchange between local ranks":
        "The program's waits sleep between polls, and a collective advances only when its members poll, stage by "
        "stage; a point-to-point message that a poll has found is received in one go. The gap grows with the "
        "message size.",
    "Time to quality on the text8 prefix":
        "Both wall times include start-up: gensim's from the launch of its Python process (import gensim, reading "
        "the text, build_vocab) to the end of its training; fedavg_mpi's from the launch of mpiexec (preparing the "
        "config, each rank's interpreter and model, MPI) to the metrics row of the round whose in-run score "
        "(eval_every) first reaches gensim's final figure. On 2 cores gensim's wall time varies by up to 2x from "
        "run to run, so compare ratios within one run. At equal data over seeds, windows and corpora: the section "
        "above.",
}


# Sections measured only where torch sees a GPU; elsewhere they are kept as they are.
GPU_ONLY = {"device_step.py"}
# Sections measured only on a host of at least this many cores; elsewhere they are kept as they are.
MANY_CORES = 8
MANY_CORES_ONLY = {"exchange_threads.py"}


def section_body(command, out):
    """A benchmark's printed markdown under its command; its own headings go one level down."""
    lines = [("#" + ln if ln.startswith("## ") else ln) for ln in out.strip().splitlines()]
    return f"`{command}`\n\n" + "\n".join(lines) + "\n"


def run(script, *args):
    cmd = [PYTHON, str(HERE / script), *args]
    print("running", " ".join(cmd[1:]), flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return section_body(" ".join(["/usr/bin/python3", f"bench/{script}", *args]), out)


def existing_sections():
    """(header, {title: body}) of docs/performance.md as it is now: the lines before its first section (None
    without one), and its sections in their order."""
    path = ROOT / "docs" / "performance.md"
    header, found, title = [], {}, None
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("## "):
            title = line[3:].strip()
            found[title] = []
        elif title is not None:
            found[title].append(line)
        else:
            header.append(line)
    bodies = {t: "\n".join(body).strip() + "\n" for t, body in found.items()}
    return ("\n".join(header).strip() + "\n" if found else None), bodies


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="+", metavar="SCRIPT",
                    help="run only these benchmarks (e.g. vocab_exchange.py) and keep the other sections as they are")
    args = ap.parse_args()
    quick = args.quick
    plan = [
        ("Learner throughput per core, against gensim", "learner_throughput.py", []),
        ("Pipeline, waiting ranks, memory, averaging", "pipeline.py", ["--seconds", "10" if quick else "20"]),
        ("A corpus larger than memory: the token cache", "large_corpus.py",
         ["--tokens", "20e6"] if quick else []),
        ("MPI: the weight exchange between local ranks", "mpi_exchange.py", []),
        ("Vectors against gensim: equal data and equal training time", "vectors_vs_gensim.py",
         ["--corpora", "text8", "--seeds", "1"] if quick
         else ["--corpora", "text8,bible", "--windows", "2,5", "--seeds", "1,2,3", "--equal-time"]),
        ("Time to quality on the text8 prefix", "time_to_quality.py", ["--in-run-analogies"]),
        ("Soak", "soak.py", ["--rounds", "300" if quick else "2000"]),
        ("Checkpoint write and read", "checkpoint.py", ["--reps", "3" if quick else "9"]),
        ("Many hosts", "multihost.py", ["--pairs", "3" if quick else "5"]),
        ("Hosts on a capped link", "hosts_wall_time.py",
         ["--seeds", "1", "--hosts", "2", "--links", "1gbit"] if quick else []),
        ("The weight exchange at a large vocabulary", "vocab_exchange.py",
         ["--rounds", "8", "--learners", "2", "4"] if quick else []),
        ("The sparse exchange on a many-core host", "exchange_threads.py",
         ["--rounds", "8", "--set", "device=cpu"] if quick else ["--set", "device=cpu"]),
        ("The learner step on a GPU", "device_step.py", []),
    ]
    gpu = subprocess.run([PYTHON, "-c", "import sys, torch; sys.exit(not torch.cuda.is_available())"],
                         capture_output=True).returncode == 0
    cores = len(os.sched_getaffinity(0))
    lacking = {script: "torch sees no GPU here" for script in GPU_ONLY if not gpu}
    lacking.update({script: f"this host has {cores} cores, fewer than {MANY_CORES}"
                    for script in MANY_CORES_ONLY if cores < MANY_CORES})
    header, kept = existing_sections()
    measured = {}
    for title, script, script_args in plan:
        if (args.only and script not in args.only) or script in lacking:
            if script in lacking and (not args.only or script in args.only):
                print(f"not running {script}: {lacking[script]}; its section stays as it is", flush=True)
        else:
            measured[title] = run(script, *script_args)
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    if args.only and header is not None:
        lines = [header]  # say in it when the section was regenerated, by hand
    else:
        lines = ["# Performance", "",
                 f"Measured on {cpu} (last regenerated {datetime.date.today()}), 2 cores, Debian 12, "
                 "python3-torch 1.13 with OpenBLAS, "
                 "MPICH 4.0 (ch4:ucx). Regenerate with `/usr/bin/python3 bench/report.py` (30 to 45 minutes), or "
                 "one section with `--only SCRIPT`.",
                 "Figures move by ±20 % between runs on this shared machine; peers (gensim) are measured in the "
                 "same run as ours.", ""]
    # Every section stays where the file has it: those measured now in place of their old text, the others (not
    # run, or hand-written, e.g. the neg model's design measurements) as they are. Measured sections the file
    # lacks follow, in the plan's order.
    titles = list(kept) + [title for title, _, _ in plan if title in measured and title not in kept]
    for title in titles:
        body = measured.get(title, kept.get(title))
        if body is None:
            continue
        note = NOTES.get(title)
        # A kept body holds its note already (rewrapped, perhaps): it is not added twice.
        holds_note = note is not None and " ".join(note.split()) in " ".join(body.split())
        lines += [f"## {title}", "", body] + ([note, ""] if note and not holds_note else [])
    (ROOT / "docs" / "performance.md").write_text("\n".join(lines))
    print("wrote docs/performance.md")


if __name__ == "__main__":
    main()

"""From raw text to vectors in one command, under mpiexec (time-limited: every job has a timeout and
MPIEXEC_TIMEOUT): without --config the job prepares its config from the corpus itself, keeps it in OUT/config,
skips the held-out test lines, stops after max_epochs passes, and takes any setting from the command line; a bad
one names its flag; --version and --help say what users look for."""

import json
import os
import re
import shutil
import subprocess

import h5py
import numpy as np
import pytest

from conftest import JOB_TIMEOUT, ROOT, job_config, write_corpus


def mpiexec(app, n, args, cwd, timeout=JOB_TIMEOUT):
    env = {**os.environ, "MPIEXEC_TIMEOUT": str(timeout - 5)}
    return subprocess.run(["mpiexec", "-n", str(n), str(app), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


def stats(out, name):
    line = (out / f"{name}_stats.txt").read_text().splitlines()[0].strip()
    return dict(kv.split("=", 1) for kv in line[len("final: "):].split())


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path / "mytext.txt", n_lines=2000, seed=5)


@pytest.mark.smoke
def test_raw_text_to_vectors_in_one_command(app, corpus, tmp_path):
    proc = mpiexec(app, 6, ["--out", tmp_path / "out", "--bpe", 10, "--bs", 64, "--set", "dim=16",
                            "--lr=0.2", "--min-count", 1, "--negative", 3, corpus], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    config = out / "config"
    # The config the job prepared, with the command line's settings in it: the folder alone reproduces the run.
    cfg = json.loads((config / "cfg.json").read_text())
    assert cfg["data_name"] == "mytext" and cfg["dim"] == 16 and cfg["bpe"] == 10 and cfg["lr"] == 0.2
    assert cfg["max_epochs"] == 5 and cfg["model_args"] == {"negatives": 3}  # gensim's --negative
    vocab = [line.split()[0] for line in (config / "vocab.txt").read_text().splitlines()]
    assert "sleeps" in vocab
    held = json.loads((config / "heldout.json").read_text())["corpora"]
    assert len(held) == 1 and held[0]["bytes"] == corpus.stat().st_size and held[0]["offsets"]
    lines = corpus.read_bytes().split(b"\n")
    starts = np.cumsum([0] + [len(ln) + 1 for ln in lines])[:-1]
    assert set(held[0]["offsets"]) <= set(starts.tolist())  # every offset is a line start
    assert len((config / "test.txt").read_text().splitlines()) > 100
    # Vectors, and the run stopped after its passes over the text.
    s = stats(out, "mytext")
    assert s["stopped"] == "max_epochs" and float(s["epochs"]) >= 5
    kv = np.loadtxt(out / "mytext_embeddings.txt")
    assert kv.shape == (len(vocab), 16) and np.isfinite(kv).all()
    assert "prepared the config in" in proc.stdout
    assert f"model neg (FusedNegCBOW in {ROOT / 'python' / 'runtime' / 'fused_neg.py'})" in proc.stdout
    warm_start_on_new_text(app, out / "mytext.h5", tmp_path)


def rates(stdout):
    """The lr of each progress line."""
    return [float(x) for x in re.findall(r"  lr ([0-9.e+-]+)  ", stdout)]


def test_the_rate_decays_over_a_run_of_known_length_unless_told(app, corpus, tmp_path):
    # One pass, no subsampling (which leaves the made-up text a few hundred windows a pass): about 20 rounds.
    common = ["--bpe", 10, "--bs", 64, "--set", "dim=16", "--min-count", 1, "--set", "progress_seconds=0",
              "--set", "sample=0", "--epoch", 1]
    # The one command's run has a known length (5 passes, no target): the rate decays to zero over it.
    proc = mpiexec(app, 6, ["--out", tmp_path / "auto", *common, corpus], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lr = rates(proc.stdout)
    assert len(lr) > 3 and lr[0] < 0.1 and lr[-1] < 0.01 and lr == sorted(lr, reverse=True), lr
    # --lr-schedule constant keeps it, as a run that stops at its target does.
    proc = mpiexec(app, 6, ["--out", tmp_path / "constant", *common, "--lr-schedule", "constant", corpus], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert set(rates(proc.stdout)) == {0.1}, proc.stdout
    cfg = json.loads((tmp_path / "constant" / "config" / "cfg.json").read_text())
    assert cfg["model_args"] == {"lr_schedule": "constant"}


def warm_start_on_new_text(app, old_h5, tmp_path):
    """A new run on new text from a finished run's checkpoint: the words both vocabularies hold keep their
    vectors (untrained here: train false), the new words start afresh."""
    new_text = write_corpus(tmp_path / "newtext.txt", n_lines=600, seed=9)
    with open(new_text, "a") as f:
        f.write("A zebra and a lion sleep by the river.\n" * 40)
    # Another dim is refused before anything is prepared or written.
    other = mpiexec(app, 6, ["--out", tmp_path / "warm", "--init-from", old_h5, "--dim", 8, new_text], tmp_path,
                    timeout=60)
    assert other.returncode == 2, other.stderr
    assert f"{old_h5}: its embedding has dim 16, this run's dim is 8" in other.stderr, other.stderr
    assert not (tmp_path / "warm").exists()
    proc = mpiexec(app, 6, ["--out", tmp_path / "warm", "--init-from", old_h5, "--dim", 16, "--negative", 3,
                            "--min-count", 1, "--set", "train=false", "--max-rounds", 1, "--bpe", 4, "--bs", 64,
                            new_text], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"warm start from {old_h5}: " in proc.stdout and "new words start afresh" in proc.stdout
    with h5py.File(old_h5, "r") as f:
        old = dict(zip([w.decode() for w in f["vocabulary"][...]], f["embedding"][...]))
    with h5py.File(tmp_path / "warm" / "newtext.h5", "r") as f:
        new = dict(zip([w.decode() for w in f["vocabulary"][...]], f["embedding"][...]))
    shared = sorted(set(old) & set(new))
    assert len(shared) > 20 and {"zebra", "lion", "river"} <= set(new) - set(old)
    for word in shared:
        np.testing.assert_array_equal(new[word], old[word], err_msg=word)
    assert not any(np.array_equal(new["zebra"], v) for v in old.values())


@pytest.mark.parametrize("max_line_bytes", [None, 1024])
def test_a_corpus_of_one_line_trains_and_stops_within_a_batch_of_its_passes(app, tmp_path, max_line_bytes):
    # text8's shape: the whole corpus is one line. No subsampling: a pass is every window of the text (less the
    # held-out pieces), about 20 000; a round of the default bpe (200 batches of 64 per learner) is 25 600. With a
    # max_line_bytes of 1024 the line (about 100 KB) is prepared and read in pieces, as the whole of text8 is.
    corpus = tmp_path / "oneline.txt"
    corpus.write_text(" ".join(write_corpus(tmp_path / "lines.txt", n_lines=2000, seed=5).read_text().split()))
    limit = [] if max_line_bytes is None else ["--max-line-bytes", max_line_bytes]
    proc = mpiexec(app, 6, ["--out", tmp_path / "out", "--bs", 64, "--epoch", 1, "--min-count", 1,
                            "--set", "progress_seconds=0", "--sample", 0, *limit, corpus], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    # The test windows come from pieces of the line, which the Tokenizer skips.
    held = json.loads((out / "config" / "heldout.json").read_text())["corpora"][0]
    assert held["offsets"] == [] and len(held["spans"]) > 5
    assert len((out / "config" / "test.txt").read_text().splitlines()) == 1000
    s = stats(out, "oneline")
    assert s["stopped"] == "max_epochs"
    epochs = float(s["epochs"])
    rows = (out / "oneline_metrics.csv").read_text().strip().splitlines()[1:]
    windows = [float(r.split(",")[1]) * 2 for r in rows]  # both learners read the one pipeline
    per_pass = windows[-1] / epochs
    assert per_pass < 2 * 200 * 64  # a whole round would have overshot
    # The last round was cut: the run ends within one batch per learner of one pass.
    assert 1.0 <= epochs < 1.0 + 2 * 64 / per_pass + 1e-9, (epochs, per_pass)
    assert float(s["rounds"]) == len(rows) - 1
    # The progress line says which pass the run is on, and how far it is towards its end.
    assert "pass 1.0" in proc.stdout and "100%" in proc.stdout


def test_a_bad_setting_names_its_flag_and_writes_nothing(app, corpus, tmp_path):
    proc = mpiexec(app, 6, ["--out", tmp_path / "out", "--dim", "abc", corpus], tmp_path, timeout=30)
    assert proc.returncode != 0
    assert 'command line: --dim abc: "dim" must be an integer, got "abc"' in proc.stderr
    assert not (tmp_path / "out").exists()
    proc = mpiexec(app, 6, ["--out", tmp_path / "out", "--set", "stratgy=bsp", corpus], tmp_path, timeout=30)
    assert proc.returncode != 0
    assert 'command line: --set stratgy=bsp: unknown key "stratgy"' in proc.stderr
    proc = mpiexec(app, 6, ["--out", tmp_path / "out", "--negative", "abc", corpus], tmp_path, timeout=30)
    assert proc.returncode != 0
    assert "command line: --negative abc: must be a whole number" in proc.stderr, proc.stderr
    proc = mpiexec(app, 6, ["--out", tmp_path / "out", "--epoc", 3, corpus], tmp_path, timeout=30)
    assert proc.returncode != 0 and "unknown option --epoc: did you mean --epoch?" in proc.stderr
    proc = mpiexec(app, 6, ["--out", tmp_path / "out", "--eval-every", 1, corpus], tmp_path, timeout=30)
    assert proc.returncode != 0
    assert "give --similarity F" in proc.stderr and proc.stderr.count("eval_every") == 1, proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_failed_set_up_does_not_block_the_same_command(app, corpus, tmp_path):
    # The model "mine" is not in the copy of python/ yet: the job fails after it prepared OUT/config.
    python = tmp_path / "py"
    shutil.copytree(ROOT / "python", python, ignore=shutil.ignore_patterns("__pycache__"))
    command = ["--out", tmp_path / "out", "--python", python, "--model", "mine", "--bs", 64, "--epoch", 1,
               "--min-count", 1, corpus]
    failed = mpiexec(app, 6, command, tmp_path, timeout=60)
    assert failed.returncode != 0 and "unknown model 'mine'" in failed.stderr, failed.stderr
    assert (tmp_path / "out" / "config" / "cfg.json").exists()
    resumed = mpiexec(app, 6, command + ["--resume"], tmp_path, timeout=30)
    assert resumed.returncode != 0
    assert "no checkpoint" in resumed.stderr and "without --resume" in resumed.stderr, resumed.stderr
    # The user adds the model and runs the same command again: it starts afresh, and says what it replaced.
    with open(python / "library.py", "a") as f:
        f.write("\nMODELS['mine'] = MODELS['neg_autograd']\n")
    again = mpiexec(app, 6, command, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "replaced config" in again.stdout
    assert stats(tmp_path / "out", "mytext")["stopped"] == "max_epochs"


def test_evaluation_files_and_a_linear_schedule_on_the_one_command_line(app, corpus, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("dog cat 8\nking queen 9\ndog sees 2\nbig small 5\n")
    questions = tmp_path / "questions.txt"
    questions.write_text(": toy\nking queen dog cat\nbig small red old\n")
    proc = mpiexec(app, 6, ["--out", tmp_path / "out", "--bpe", 10, "--bs", 64, "--epoch", 1, "--min-count", 1,
                            "--sample", 0, "--eval-every", 4, "--similarity", pairs, "--analogies", questions, "--set",
                            'model_args={"lr_schedule": "linear"}', "--set", "progress_seconds=0", corpus], tmp_path)
    assert proc.returncode == 0, proc.stderr
    config = tmp_path / "out" / "config"
    assert (config / "similarity.tsv").read_text() == pairs.read_text()
    assert (config / "analogies.txt").read_text() == questions.read_text()
    rows = (tmp_path / "out" / "mytext_metrics.csv").read_text().strip().splitlines()
    header = rows[0].split(",")
    scored = [dict(zip(header, r.split(","))) for r in rows[1:]][::4]
    assert len(scored) >= 2 and all(r["similarity"] != "nan" and r["analogy"] != "nan" for r in scored)
    # The rate decays over the planned passes: from 0.1 towards 0 at the end.
    rates = [float(r) for r in re.findall(r" lr (\S+)", proc.stdout)]
    assert rates[0] > 0.05 and rates[-1] < 0.3 * rates[0], rates


def test_a_resume_that_moves_the_stop_rule_records_it_and_names_what_was_trained(app, corpus, tmp_path):
    command = ["--out", tmp_path / "out", "--bpe", 10, "--bs", 64, "--min-count", 1, corpus]
    first = mpiexec(app, 6, command + ["--epoch", 0.05], tmp_path)
    assert first.returncode == 0, first.stderr
    cfg_json = tmp_path / "out" / "config" / "cfg.json"
    longer = mpiexec(app, 6, command + ["--resume", "--epoch", 0.1], tmp_path)
    assert longer.returncode == 0, longer.stderr
    # The folder still says how the run was made: the next --resume goes on from 0.1 passes, not 0.05.
    assert json.loads(cfg_json.read_text())["max_epochs"] == 0.1
    trained = float(stats(tmp_path / "out", "mytext")["epochs"])
    assert trained >= 0.1
    again = mpiexec(app, 6, command + ["--resume"], tmp_path, timeout=30)
    assert again.returncode == 0, again.stderr
    assert f"--resume --epoch N, with N above {trained:.2f}" in again.stdout, again.stdout


def test_a_corpus_smaller_than_a_step_says_it_trained_past_its_passes(app, tmp_path):
    three = tmp_path / "three.txt"
    three.write_text("the cat sat on the mat and the dog sat on the log\n"
                     "the bird flew over the tree and the fish swam in the lake\n"
                     "the sun rose over the hill and the moon set behind the sea\n")
    proc = mpiexec(app, 5, ["--out", tmp_path / "out", "--epoch", 5, "--min-count", 1, "--test-windows", 3,
                            "--sample", 0, three], tmp_path)
    assert proc.returncode == 0, proc.stderr
    trained = float(stats(tmp_path / "out", "three")["epochs"])
    assert trained > 10
    said = re.search(r"WARNING: trained (\S+) passes over the corpus, past max_epochs 5: one step \(bs, 1024 windows "
                     r"per learner\) holds more than the passes asked for; lower --bs to stop nearer", proc.stderr)
    assert said and abs(float(said.group(1)) - trained) < 0.06, proc.stderr


def test_more_learners_than_cores_are_warned_of(app, toy_config, tmp_path):
    # One core for the job (taskset): its two learners share it.
    config = job_config(tmp_path / "config", toy_config, {"max_rounds": 1, "bpe": 1})
    proc = subprocess.run(["taskset", "-c", "0", "mpiexec", "-n", "6", str(app), "--config", str(config), "--out",
                           str(tmp_path / "out"), str(toy_config / "train.txt")],
                          capture_output=True, text=True, timeout=JOB_TIMEOUT, cwd=tmp_path,
                          env={**os.environ, "MPIEXEC_TIMEOUT": str(JOB_TIMEOUT - 5)})
    assert proc.returncode == 0, proc.stderr
    assert ("[fedavg] rank 4 (Learner) WARNING: this host runs 2 learners on the 1 core it gives the job: learners "
            "beyond the cores share them and slow the job (one learner per core: on one host -n cores + 4)"
            ) in proc.stderr, proc.stderr
    assert proc.stderr.count("learners on the") == 1  # once per host


def test_compressed_corpora_train_in_one_command_with_the_plain_files_vocabulary(app, corpus, tmp_path):
    import bz2
    import gzip
    import sys
    sys.path.insert(0, str(ROOT / "python"))
    import prepare  # the config the job prepares from the same text, plain
    prepare.prepare_job([str(corpus), str(corpus)], str(tmp_path / "plain"), {"min_count": 1})
    packed = [tmp_path / (corpus.name + ".gz"), tmp_path / (corpus.name + ".bz2")]
    packed[0].write_bytes(gzip.compress(corpus.read_bytes()))
    packed[1].write_bytes(bz2.compress(corpus.read_bytes()))
    out = tmp_path / "out"
    job = mpiexec(app, 9, ["--out", out, "--max-rounds", 1, "--bpe", 2, "--bs", 64, "--min-count", 1, *packed],
                  tmp_path)
    assert job.returncode == 0, job.stderr
    for p in packed:
        assert f"corpus {p} is read through its plain copy {out}/cache/plain/" in job.stdout
    assert (out / "config" / "vocab.txt").read_text() == (tmp_path / "plain" / "vocab.txt").read_text()
    assert (out / "mytext.h5").exists()  # named after the text, not the compressed file
    # A file that does not decompress is bad input, named in one line.
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(gzip.compress(corpus.read_bytes())[:200])
    job = mpiexec(app, 6, ["--out", tmp_path / "broken", "--min-count", 1, broken], tmp_path, timeout=60)
    assert job.returncode == 2, job.stderr
    assert f"[fedavg] rank 0 (Dispatcher): {broken}: a gzip-compressed file that does not decompress" in job.stderr


def test_overrides_apply_to_a_given_config(run_job):
    job = run_job(6, extra=["--set", "dim=8", "--max-rounds", "2", "--strategy", "diloco"])
    assert job.rc == 0, job.stderr
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert f["embedding"].shape[1] == 8
        assert f.attrs["strategy"] == "diloco" and f.attrs["round"] == 2


@pytest.mark.smoke
def test_version_and_help(app, tmp_path):
    proc = mpiexec(app, 1, ["--version"], tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for part in ("fedavg_mpi ", "MPICH", "Python 3", "torch ", "HDF5 "):
        assert part in proc.stdout
    proc = mpiexec(app, 1, ["--help"], tmp_path, timeout=30)
    assert proc.returncode == 0
    for part in ("--set KEY=VALUE", "--overwrite", "max_epochs", "wait_profile", "embedding dimension"):
        assert part in proc.stdout
    # docs/running.md's table covers every key --help lists.
    keys = proc.stdout.split("cfg.json keys", 1)[1].splitlines()[2:]
    keys = [line.split()[0] for line in keys if line.startswith("  ") and line.split()]
    assert len(keys) > 30
    table = (ROOT / "docs" / "running.md").read_text()
    assert [k for k in keys if f"`{k}`" not in table] == []

"""A checkpoint's counters are checked data too: an attribute edited, or a dataset taken from another run, no longer
matches the file's checksum of its attributes and structure (the root's xxh3), and a counter forged with checksums
that match is refused when it is out of its range, as is a vocabulary other than the run's, a learner state that
holds a field out of its range (read by its learner), and a checkpoint written before the file carried its
checksum. Each is refused on --resume with one line naming the checkpoint and the field, exit status 2, and the
output folder is left as it was."""

import sys

import h5py
import numpy as np
import pytest

from checkpoint_seal import put_dataset, seal, xxh3
from conftest import ROOT

sys.path.insert(0, str(ROOT / "python"))
from runtime import state_codec  # noqa: E402

ABORT_SECONDS = 30  # a refused resume ends well within this


def refused(run_job, checkpoint, text):
    """Resumes; asserts it is refused with one line naming `checkpoint` that holds `text`, nothing changed."""
    folder = checkpoint.parent
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    job = run_job(6, cfg={"max_rounds": 4}, extra=["--resume"], timeout=ABORT_SECONDS + 30)
    assert job.rc == 2  # bad input: a supervisor does not restart it
    lines = [line for line in job.stderr.splitlines() if line.startswith("[fedavg] rank ")]
    assert lines and lines[0].startswith(f"[fedavg] rank 0 (Dispatcher): {checkpoint}: "), job.stderr
    assert text in lines[0], lines[0]
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != ".lock"}
    assert after == {k: v for k, v in before.items() if k != ".lock"}
    return lines[0]


EDITED = "its attributes or the set of its datasets were edited: they do not match the file's checksum"


# Every attribute is covered by one checksum, and the C++ fuzz test (tests/cpp/test_checkpoint_fuzz.cpp) edits
# each; here, through the whole job, an edit within range (round 2 -> 1 would rewrite rows of the metrics) and one
# that would turn a check off.
@pytest.mark.parametrize("name, value", [("round", 1), ("first_loss", float("nan"))])
def test_an_edited_attribute_is_refused(run_job, finished_copy, name, value):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r+") as f:
        f.attrs[name] = np.asarray(value, dtype=f.attrs[name].dtype)
    refused(run_job, checkpoint, EDITED)


@pytest.mark.parametrize("name, value, shown", [("round", 10**15, "1000000000000000"),
                                                ("test_loss", float("inf"), "inf")])
def test_a_forged_attribute_out_of_its_range_is_refused(run_job, finished_copy, name, value, shown):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r+") as f:
        f.attrs[name] = np.asarray(value, dtype=f.attrs[name].dtype)
    seal(checkpoint)
    line = refused(run_job, checkpoint, f"attribute {name} is {shown}, outside its range")
    assert "diverged" not in line


def test_a_learner_state_of_another_run_is_refused(run_job, finished_copy):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r+") as f:
        other = np.array(f["learner_state/1"])  # a valid state, and its valid checksum: not this file's
        put_dataset(f, "learner_state/0", other)
    refused(run_job, checkpoint, EDITED)


def test_a_vocabulary_of_another_run_is_refused(run_job, finished_copy):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r+") as f:
        words = [w.decode() if isinstance(w, bytes) else w for w in f["vocabulary"][()]]
        words[0], words[1] = words[1], words[0]
        del f["vocabulary"]
        f.create_dataset("vocabulary", data=words, dtype=h5py.string_dtype())
        f["vocabulary"].attrs["xxh3"] = np.uint64(_text_checksum(words))
    seal(checkpoint)
    refused(run_job, checkpoint, f"dataset vocabulary ({len(words)} words) differs from this run's vocabulary")


@pytest.mark.parametrize("value, shown", [(-1e9, "-1000000000")])
def test_forged_pipeline_progress_is_refused(run_job, finished_copy, value, shown):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r+") as f:
        progress = np.array(f["pipeline_progress"])
        progress[0, 0] = value
        put_dataset(f, "pipeline_progress", progress)
    seal(checkpoint)
    refused(run_job, checkpoint, f"dataset pipeline_progress row 0 trained is {shown}, outside its range")


@pytest.mark.parametrize("field, text", [
    ("pool", "noise pool: word id 1000000000 is outside the vocabulary"),
    ("step", "step is -1000000000: not a count of steps")])
def test_a_forged_learner_state_field_is_refused_naming_it(run_job, finished_copy, field, text):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r+") as f:
        state = state_codec.decode(np.array(f["learner_state/0"]).tobytes())
        if field == "pool":
            state["pool"][0] = 10**9
        else:
            state["step"] = -10**9
        put_dataset(f, "learner_state/0", np.frombuffer(state_codec.encode(state), dtype=np.uint8))
    seal(checkpoint)
    before = checkpoint.read_bytes()
    job = run_job(6, cfg={"max_rounds": 4}, extra=["--resume"], timeout=ABORT_SECONDS + 30)
    assert job.rc == 2, job.stderr
    lines = [line for line in job.stderr.splitlines() if line.startswith("[fedavg] rank ")]
    assert lines and f"(Learner): {checkpoint}: dataset learner_state/0: {text}" in lines[0], job.stderr
    assert "windows:" not in job.stderr
    assert checkpoint.read_bytes() == before


def test_a_checkpoint_without_the_checksum_of_its_attributes_is_refused_as_older(run_job, finished_copy):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r+") as f:
        del f.attrs["xxh3"]
    refused(run_job, checkpoint, "a checkpoint of an older version")


def _text_checksum(words):
    data = b"".join(len(w.encode()).to_bytes(8, "little") + w.encode() for w in words)
    return xxh3(data)

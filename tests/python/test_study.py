"""bench/study.py: the plan, the per-run config, shards and speedups (no MPI job is started)."""

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import jobs  # noqa: E402
import study  # noqa: E402


def args_for(*extra):
    return study.parse_args(["--corpus", "bible", "--out", "/tmp/unused", *extra])


def test_plan_runs_one_learner_once_and_always_has_the_reference():
    combos = study.plan(args_for("--learners", "1,2", "--strategies", "bsp"))
    assert combos[0] == study.Combo("fedavg", "shared", 1, 0)
    names = [c.run_name for c in combos]
    assert names == ["fedavg_L1", "bsp_L1", "bsp_L1", "bsp_L2_shared", "bsp_L2_per-learner"]
    assert [c.ranks for c in combos[3:]] == [1 + 3 + 2, 1 + 6 + 2]


def test_plan_leaves_out_the_single_learner_when_a_reference_study_holds_it():
    combos = study.plan(args_for("--learners", "12", "--strategies", "fedavg", "--reference", "/tmp/ref"))
    assert [c.run_name for c in combos] == ["fedavg_L12_shared", "fedavg_L12_per-learner"]
    with_one = study.plan(args_for("--learners", "1,12", "--strategies", "fedavg", "--reference", "/tmp/ref"))
    assert with_one[0] == study.Combo("fedavg", "shared", 1, 0)


def test_run_config_maps_strategies_and_applies_overrides_last():
    args = args_for("--time-limit", "30", "--target", "2.1", "--slow-learners", "3", "--slow-factor", "2",
                    "--set", "lr=0.2", "--set", "model=softmax", "--set", "target=1.9")
    base = {"data_name": "bible", "target": 2.5, "max_rounds": 200}
    diloco = study.run_config(base, study.Combo("diloco", "shared", 4, 0), args)
    assert diloco == {"data_name": "bible", "target": 1.9, "max_rounds": 100000, "max_seconds": 30.0,
                      "strategy": "bmuf", "block_lr": 1.0, "block_momentum": 0.3, "nesterov": True,
                      "slow_learners": 3, "slow_factor": 2.0, "lr": 0.2, "model": "softmax"}
    bmuf = study.run_config(base, study.Combo("bmuf", "shared", 4, 0), args)
    assert bmuf["block_momentum"] == 0.3 and bmuf["block_lr"] == 1.0 and "nesterov" not in bmuf
    assert bmuf["slow_learners"] == 3
    classic = args_for("--classic")
    assert study.run_config(base, study.Combo("bmuf", "shared", 4, 0), classic)["block_momentum"] == 0.75
    assert study.run_config(base, study.Combo("bmuf", "shared", 1, 0), classic)["block_momentum"] == 0.0
    assert study.run_config(base, study.Combo("diloco", "shared", 4, 0), classic)["block_momentum"] == 0.9
    assert study.run_config(base, study.Combo("easgd", "shared", 2, 0), args)["slow_learners"] == 2
    assert "seed" not in diloco
    assert study.run_config({**base, "seed": 5}, study.Combo("fedavg", "shared", 2, 2), args)["seed"] == 7


def test_shards_split_lines_round_robin_and_are_cached(tmp_path):
    (tmp_path / "train.txt").write_bytes(b"a\nb\nc\nd\ne\n")
    assert study.shards(tmp_path, 1) == [tmp_path / "train.txt"]
    paths = study.shards(tmp_path, 2)
    assert [p.read_bytes() for p in paths] == [b"a\nc\ne\n", b"b\nd\n"]
    paths[0].write_bytes(b"cached\n")
    assert study.shards(tmp_path, 2)[0].read_bytes() == b"cached\n"


def test_speedups_are_against_the_one_learner_fedavg_runs():
    def row(strategy, mode, learners, windows, seconds):
        return dict(strategy=strategy, pipelines=mode, learners=learners,
                    windows_to_target=windows, seconds_to_target=seconds)
    rows = [row("fedavg", "shared", 1, 800.0, 4.0), row("fedavg", "per-learner", 1, 800.0, 4.0),
            row("bsp", "shared", 4, 400.0, 1.0), row("bmuf", "shared", 4, None, None)]
    study.add_speedups(rows)
    assert [r["speedup"] for r in rows] == [1.0, 1.0, 2.0, None]
    assert [r["time_speedup"] for r in rows] == [1.0, 1.0, 4.0, None]


def test_set_values_are_json_or_strings():
    assert jobs.parse_set("nesterov=true") == ("nesterov", True)
    assert jobs.parse_set("model=neg") == ("model", "neg")
    with pytest.raises(jobs.argparse.ArgumentTypeError):
        jobs.parse_set("novalue")


def test_grid_shows_means_over_repeats_and_runs_that_missed_the_target():
    def row(strategy, mode, learners, repeat, windows, seconds):
        return dict(strategy=strategy, pipelines=mode, learners=learners, repeat=repeat,
                    windows_to_target=windows, seconds_to_target=seconds)
    rows = [row("fedavg", "shared", 1, 0, 300e3, 0.6), row("fedavg", "shared", 1, 1, 500e3, 1.0),
            row("fedavg", "shared", 2, 0, 200e3, 0.4), row("fedavg", "shared", 2, 1, 200e3, 0.4),
            row("easgd", "shared", 2, 0, 400e3, 0.8), row("easgd", "shared", 2, 1, None, None),
            row("diloco", "shared", 2, 0, None, None)]
    study.add_speedups(rows)
    lines = study.grids(rows).splitlines()
    assert lines[0] == "One shared pipeline:"
    assert lines[2] == "| strategy | 1 learner | 2 learners |"
    assert lines[4] == "| fedavg | 400k, 1.0×; 0.8 s, 1.0× | 200k, 2.0×; 0.4 s, 2.0× |"
    assert lines[5] == "| easgd |  | 400k, 1.0×; 0.8 s, 1.0× (1 of 2) |"
    assert lines[6] == "| diloco |  | not reached |"
    assert "per learner" not in study.grids(rows)  # no per-learner runs: no second table


def test_grid_without_a_reference_that_reached_shows_the_figures_without_speedups():
    rows = [dict(strategy="fedavg", pipelines="shared", learners=1, repeat=0,
                 windows_to_target=None, seconds_to_target=None),
            dict(strategy="fedavg", pipelines="shared", learners=4, repeat=0,
                 windows_to_target=290e3, seconds_to_target=1.0)]
    study.add_speedups(rows)
    assert [r["speedup"] for r in rows] == [None, None]
    lines = study.grids(rows).splitlines()
    assert lines[4] == "| fedavg | not reached | 290k; 1.0 s |"


def write_metrics_run(directory, losses, round_seconds=0.5):
    """A run folder as fedavg_mpi writes it: rounds of 1000 windows and round_seconds."""
    directory.mkdir(parents=True)
    rows = [f"{i},{1000 * i},{round_seconds * i},{loss}" for i, loss in enumerate(losses)]
    (directory / "kjv_metrics.csv").write_text("round,windows_per_learner,seconds,test_loss\n" + "\n".join(rows) + "\n")
    (directory / "kjv_stats.txt").write_text("final: rounds=3 seconds=1.5 final_loss=2.0 stopped=target\n")


def write_reference_study(folder, test_windows=b"1 2 3 4 5\n"):
    """A finished study with one 1-learner fedavg run (loss 3.0 after 2000 windows, 2.0 after 3000) and a
    4-learner run that is no reference."""
    (folder / "data" / "config").mkdir(parents=True)
    (folder / "data" / "config" / "test.txt").write_bytes(test_windows)
    write_metrics_run(folder / "runs" / "fedavg_L1", [4.0, 3.5, 3.0, 2.0])
    with open(folder / "results.csv", "w", newline="") as f:
        writer = study.csv.DictWriter(f, fieldnames=study.COLUMNS)
        writer.writeheader()
        writer.writerow({"strategy": "fedavg", "pipelines": "shared", "learners": 1, "run": "runs/fedavg_L1"})
        writer.writerow({"strategy": "fedavg", "pipelines": "shared", "learners": 4, "run": "runs/fedavg_L4_shared"})


def test_a_reference_study_is_read_again_at_this_studys_targets(tmp_path):
    ours = tmp_path / "ours"
    (ours / "data" / "config").mkdir(parents=True)
    (ours / "data" / "config" / "test.txt").write_bytes(b"1 2 3 4 5\n")
    write_metrics_run(ours / "runs" / "fedavg_L2_shared", [4.0, 2.5, 2.0])
    write_reference_study(tmp_path / "ref")
    reference = study.load_reference(tmp_path / "ref", ours / "data")
    assert [r["run"] for r in reference] == ["runs/fedavg_L1"]
    # at 2.5 the reference is half way from 3.0 (2000 windows) to 2.0 (3000): 2500 windows, 1.25 s
    ref_at = study.at_target(reference, tmp_path / "ref", 2.5)
    assert (ref_at[0]["windows_to_target"], ref_at[0]["seconds_to_target"]) == (2500.0, 1.25)
    rows = [dict(strategy="fedavg", pipelines="shared", learners=2, repeat=0, run="runs/fedavg_L2_shared",
                 windows_to_target=1000.0, seconds_to_target=0.5)]
    study.add_speedups(rows, ref_at)
    assert rows[0]["speedup"] == 2.5 and rows[0]["time_speedup"] == 2.5
    extra, used = study.speedups_at(rows, ours, [3.0], [(tmp_path / "ref", reference)])
    # at 3.0: ours half way from 4.0 (0) to 2.5 (1000) is 666.7 windows, the reference 2000
    assert extra[3.0][0]["speedup"] == pytest.approx(3.0)
    folder, ref_rows = used[3.0]["windows_to_target"]
    assert folder == tmp_path / "ref" and ref_rows[0]["windows_to_target"] == 2000.0
    assert used[3.0]["seconds_to_target"][0] == tmp_path / "ref"


def test_of_several_references_each_target_takes_the_best_that_always_reached_it(tmp_path):
    write_reference_study(tmp_path / "steady")            # 2000 windows to 3.0, 3000 to 2.0
    fast = tmp_path / "fast"
    write_reference_study(fast)
    (fast / "runs" / "fedavg_L1").rename(fast / "runs" / "keep")
    write_metrics_run(fast / "runs" / "fedavg_L1", [4.0, 3.0, 2.8, 2.6])  # 1000 to 3.0, never 2.0
    with open(fast / "results.csv", "a", newline="") as f:   # a second repeat that reached 3.0 later
        study.csv.DictWriter(f, fieldnames=study.COLUMNS).writerow(
            {"strategy": "fedavg", "pipelines": "shared", "learners": 1, "repeat": 1, "run": "runs/keep"})
    references = [(tmp_path / "steady", study.load_reference(tmp_path / "steady", tmp_path / "steady" / "data")),
                  (fast, study.load_reference(fast, tmp_path / "steady" / "data"))]

    def best(target):
        return study.reference_at(references, target)["windows_to_target"]
    folder, rows = best(3.0)                                  # fast: mean of 1000 and 2000 < 2000
    assert folder == fast and [r["windows_to_target"] for r in rows] == [1000.0, 2000.0]
    folder, rows = best(2.5)                                  # fast's first repeat never got there
    assert folder == tmp_path / "steady" and rows[0]["windows_to_target"] == 2500.0
    assert best(1.0) == (None, [])
    extra, used = study.speedups_at([], tmp_path, [3.0, 2.5, 1.0], references)
    assert {t: choice["windows_to_target"][0] for t, choice in used.items()} == {
        3.0: fast, 2.5: tmp_path / "steady", 1.0: None}


def test_the_time_speedup_divides_the_fastest_reference_and_results_md_names_both(tmp_path):
    lean = tmp_path / "lean"   # 2000 windows to 3.0, but 2 s a round of 1000: 4 s
    (lean / "data" / "config").mkdir(parents=True)
    (lean / "data" / "config" / "test.txt").write_bytes(b"1 2 3 4 5\n")
    write_metrics_run(lean / "runs" / "fedavg_L1", [4.0, 3.5, 3.0], round_seconds=2.0)
    with open(lean / "results.csv", "w", newline="") as f:
        writer = study.csv.DictWriter(f, fieldnames=study.COLUMNS)
        writer.writeheader()
        writer.writerow({"strategy": "fedavg", "pipelines": "shared", "learners": 1, "run": "runs/fedavg_L1"})
    quick = tmp_path / "quick"  # 3000 windows to 3.0 in 0.1 s a round: 0.3 s
    write_reference_study(quick)
    (quick / "runs" / "fedavg_L1").rename(quick / "runs" / "old")
    write_metrics_run(quick / "runs" / "fedavg_L1", [4.0, 3.6, 3.3, 3.0], round_seconds=0.1)
    data = lean / "data"
    references = [(lean, study.load_reference(lean, data)), (quick, study.load_reference(quick, data))]
    rows = [{**dict.fromkeys(study.COLUMNS), "strategy": "fedavg", "pipelines": "shared", "learners": 2,
             "repeat": 0, "run": "runs/none", "windows_to_target": 500.0, "seconds_to_target": 0.1}]
    choice = study.reference_at(references, 3.0)
    assert choice["windows_to_target"][0] == lean and choice["seconds_to_target"][0] == quick
    study.add_speedups(rows, study.reference_rows(choice))
    assert rows[0]["speedup"] == 4.0 and rows[0]["time_speedup"] == pytest.approx(3.0)
    args = args_for("--target", "3.0", "--reference", str(lean), "--reference", str(quick))
    study.write_markdown(rows, tmp_path / "results.md", args, 3.0, {}, {3.0: choice})
    assert f"Speedups are against the 1-learner fedavg runs of {lean} (in seconds: of {quick}, the fastest)." in \
        (tmp_path / "results.md").read_text()


def test_a_reference_with_other_test_windows_or_no_single_learner_is_refused(tmp_path):
    ours = tmp_path / "ours" / "data"
    (ours / "config").mkdir(parents=True)
    (ours / "config" / "test.txt").write_bytes(b"1 2 3 4 5\n")
    write_reference_study(tmp_path / "other", test_windows=b"9 9 9 9 9\n")
    with pytest.raises(SystemExit, match="test windows differ"):
        study.load_reference(tmp_path / "other", ours)
    with pytest.raises(SystemExit, match="no results.csv"):
        study.load_reference(tmp_path / "ours", ours)
    write_reference_study(tmp_path / "multi")
    rows = (tmp_path / "multi" / "results.csv").read_text().splitlines()
    (tmp_path / "multi" / "results.csv").write_text("\n".join(r for r in rows if ",1," not in r) + "\n")
    with pytest.raises(SystemExit, match="no 1-learner fedavg run"):
        study.load_reference(tmp_path / "multi", ours)


def test_results_md_has_a_grid_for_every_other_target_and_names_its_reference(tmp_path):
    def row(learners, windows, repeat=0):
        return {**dict.fromkeys(study.COLUMNS), "strategy": "fedavg", "pipelines": "shared", "learners": learners,
                "repeat": repeat, "run": f"runs/L{learners}", "windows_to_target": windows,
                "seconds_to_target": None if windows is None else windows / 1e6}
    rows = [row(1, None), row(4, 300e3)]            # at the main target 2.0 the single learner missed
    at_25 = [row(1, 800e3), row(4, 200e3)]
    args = args_for("--target", "2.0", "--also-targets", "2.5", "--reference", str(tmp_path / "ref"))
    study.add_speedups(rows, [])
    study.add_speedups(at_25, [row(1, 600e3)])
    study.write_markdown(rows, tmp_path / "results.md", args, 2.0, {2.5: at_25},
                         {2.0: dict.fromkeys(study.MEASURES, (None, [])),
                          2.5: dict.fromkeys(study.MEASURES, (tmp_path / "ref", [row(1, 600e3)]))})
    text = (tmp_path / "results.md").read_text()
    assert "none of which reached 2" in text and "No speedups at 2:" in text
    assert "| fedavg | not reached | 300k; 0.3 s |" in text
    at = text[text.index("### Test loss 2.5"):]
    assert f"Against the 1-learner fedavg runs of {tmp_path / 'ref'}." in at
    assert "| fedavg | 800k, 0.8×; 0.8 s, 0.7× | 200k, 3.0×; 0.2 s, 3.0× |" in at

"""bench/plots.py: reading run folders, reached(), and the figure files."""

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import plots  # noqa: E402

HEADER = "round,windows_per_learner,seconds,test_loss,train_loss,sync_seconds"
LOSSES = [4.1, 3.0, 2.4, 2.6, 1.9]


def write_run(directory, losses=LOSSES, sync_bytes=True, stats_extra=""):
    """A fake fedavg_mpi --out folder: metrics (rounds of 1000 windows, 0.5 s
    each) and a stats line with target 2.5."""
    directory.mkdir(parents=True)
    header = HEADER + (",sync_bytes" if sync_bytes else "")
    rows = [f"{i},{1000 * i},{0.5 * i},{loss},{loss + 0.1},0.01"
            + (f",{4096 * i}" if sync_bytes else "")
            for i, loss in enumerate(losses)]
    (directory / "kjv_metrics.csv").write_text("\n".join([header, *rows]) + "\n")
    (directory / "kjv_stats.txt").write_text(
        f"final: rounds={len(losses) - 1} seconds=2.0 windows_per_learner=4000 "
        f"first_loss=4.1 final_loss=1.9 target=2.5 stopped=target{stats_extra}\n")
    return directory


def assert_figures(stem):
    png, pdf = stem.with_suffix(".png"), stem.with_suffix(".pdf")
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_reached_interpolates_the_first_crossing_or_gives_none(tmp_path):
    run = plots.load_run(write_run(tmp_path / "a"))
    # 3.0 at 1000 windows, 2.4 at 2000: 2.5 is 5/6 of the way.
    assert plots.reached(run.metrics, 2.5) == pytest.approx((1000 + 1000 * 5 / 6, 0.5 + 0.5 * 5 / 6))
    # The first crossing counts, even though the loss rises again (2.6) before the last row.
    assert plots.reached(run.metrics, 2.4) == pytest.approx((2000.0, 1.0))
    assert plots.reached(run.metrics, 1.9) == pytest.approx((4000.0, 2.0))
    assert plots.reached(run.metrics[:1], 4.2) == (0.0, 0.0)
    assert plots.reached(run.metrics, 1.0) is None
    assert plots.reached([], 2.5) is None


def test_stats_and_labels(tmp_path):
    plain = plots.load_run(write_run(tmp_path / "plain"))
    assert plain.stats["target"] == 2.5 and plain.stats["stopped"] == "target"
    assert plain.label == "plain: kjv"
    full = write_run(tmp_path / "full", stats_extra=" strategy=bmuf learners=4 pipelines=1")
    (full / "kjv.w2v.txt").write_text("3 100\n")
    assert plots.load_run(full).label == "full: kjv, dim 100, bmuf, 4 learners, 1 pipeline"
    assert plots.load_run(tmp_path / "full", "mine").label == "mine"


def test_legends_tell_runs_apart_by_what_differs(tmp_path):
    labels = ["a: kjv, dim 32, fedavg, 2 learners, 1 pipeline",
              "b: kjv, dim 100, fedavg, 2 learners, 1 pipeline",
              "c: kjv, dim 32, fedavg, 2 learners, 1 pipeline"]
    assert plots.distinct_labels(labels) == ["a: dim 32", "b: dim 100", "c: dim 32"]
    assert plots.distinct_labels(labels[:1]) == labels[:1]


def test_no_target_line_for_runs_without_a_target(tmp_path):
    import matplotlib.pyplot as plt
    none = plots.load_run(write_run(tmp_path / "none"))
    none.stats["target"] = 0.0
    fig, ax = plt.subplots()
    plots._draw_targets(ax, [none])
    assert not ax.lines
    plots._draw_targets(ax, [plots.load_run(write_run(tmp_path / "some"))])
    assert [line.get_ydata()[0] for line in ax.lines] == [2.5]
    plt.close(fig)


def test_missing_sync_bytes_column_is_tolerated(tmp_path):
    old = plots.load_run(write_run(tmp_path / "old", sync_bytes=False))
    new = plots.load_run(write_run(tmp_path / "new"))
    assert "sync_bytes" not in old.metrics[-1]
    assert new.metrics[-1]["sync_bytes"] == 4096 * 4
    plots.plot_loss_vs_windows([old, new], tmp_path / "fig" / "w")
    assert_figures(tmp_path / "fig" / "w")


def test_cli_writes_both_loss_figures(tmp_path, capsys):
    a = write_run(tmp_path / "a")
    b = write_run(tmp_path / "b", losses=[4.1, 3.5, 3.1])
    out = tmp_path / "figs"
    assert plots.main(["--out", str(out), str(a), str(b),
                       "--labels", "one,two"]) == 0
    assert_figures(out / "loss_vs_windows")
    assert_figures(out / "loss_vs_seconds")
    assert "loss_vs_seconds.pdf" in capsys.readouterr().out


def test_cli_rejects_a_folder_without_outputs(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert plots.main(["--out", str(tmp_path / "f"), str(tmp_path / "empty")]) == 2
    assert "expected one *_metrics.csv" in capsys.readouterr().err


def test_cli_checks_the_label_count(tmp_path):
    with pytest.raises(SystemExit):
        plots.main(["--out", str(tmp_path), str(tmp_path), "--labels", "a,b"])


def test_speedup_figure_skips_unreached_and_averages_repeats(tmp_path):
    rows = [{"strategy": "fedavg", "pipelines": "shared", "learners": 1, "speedup": 1.0},
            {"strategy": "fedavg", "pipelines": "shared", "learners": 2, "speedup": 1.6},
            {"strategy": "fedavg", "pipelines": "shared", "learners": 2, "speedup": 1.8},
            {"strategy": "bmuf", "pipelines": "per-learner", "learners": 4, "speedup": None}]
    # 1.6x and 1.8x: the reference over the mean of the two runs' windows, 2 / (1/1.6 + 1/1.8)
    assert plots._mean_by_learners(rows, "speedup") == {1: 1.0, 2: pytest.approx(2 / (1 / 1.6 + 1 / 1.8))}
    plots.plot_speedup(rows, tmp_path / "speedup")
    assert_figures(tmp_path / "speedup")


def test_speedup_against_target_has_a_line_per_multi_learner_combination(tmp_path):
    def row(learners, speedup, strategy="fedavg"):
        return {"strategy": strategy, "pipelines": "shared", "learners": learners, "speedup": speedup}
    per_target = {2.2: [row(1, 1.0), row(12, 3.0), row(12, 6.0), row(12, 2.0, "diloco")],
                  2.1: [row(1, 1.0), row(12, 6.0), row(12, None), row(12, None, "diloco")]}
    lines = plots.speedups_by_target(per_target)
    assert lines == {("fedavg", "shared", 12): {2.2: 4.0, 2.1: 6.0}, ("diloco", "shared", 12): {2.2: 2.0}}
    assert list(lines[("fedavg", "shared", 12)]) == [2.2, 2.1]   # loosest target first
    plots.plot_speedup_vs_target(per_target, tmp_path / "speedup_vs_target")
    assert_figures(tmp_path / "speedup_vs_target")

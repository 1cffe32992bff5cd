"""Models that share their folder's name (two runs' `checkpoint-500`) are told apart wherever
models are shown: each by the shortest tail of its path no other model ends with (issue 55)."""

from __future__ import annotations

import shutil

from conftest import invoke

from workbench.core.names import shortest_names


def test_the_shortest_tail_that_tells_models_apart():
    assert shortest_names(["/x/runA/checkpoint-500", "/x/runB/checkpoint-500", "org/bert", "gpt2"]) == {
        "/x/runA/checkpoint-500": "runA/checkpoint-500",
        "/x/runB/checkpoint-500": "runB/checkpoint-500",
        "org/bert": "bert",
        "gpt2": "gpt2",
    }
    # one name the tail of another: all of it, never with the leading slash
    assert shortest_names(["/a/m", "/b/a/m"]) == {"/a/m": "a/m", "/b/a/m": "b/a/m"}
    assert shortest_names(["/srv/x/model/", "/srv/y/model"]) == {"/srv/x/model/": "x/model", "/srv/y/model": "y/model"}


def test_same_named_checkpoints_are_told_apart_in_tables_charts_and_file_names(
    fixture_models, project, runner, monkeypatch
):
    from workbench.evaluation import declared_report
    from workbench.kinds.crows_pairs.example import write_example

    runs = [project.parent / "runs" / run / "checkpoint-500" for run in ("runA", "runB")]
    for run in runs:
        shutil.copytree(fixture_models["mlm-bert"], run)
    charts = []
    real = declared_report.save_chart

    def keep(fig, path, **kw):  # what the chart shows (its legend, its title), then saved as ever
        legend = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
        charts.append((legend, fig._suptitle.get_text()))
        return real(fig, path, **kw)

    monkeypatch.setattr(declared_report, "save_chart", keep)
    src = write_example(project / "data")
    args = ["evaluate", str(src), "--model", str(runs[0]), "--model", str(runs[1]), "--plots", "plots"]
    result = invoke(runner, *args, "--json", "c.json", terminal_width=250)
    assert result.exit_code == 0, result.output + repr(result.exception)
    table = " ".join(result.output.split())
    assert "runA/checkpoint-500" in table and "runB/checkpoint-500" in table
    ((legend, title),) = charts
    assert {"runA/checkpoint-500", "runB/checkpoint-500"} <= set(legend)
    assert "runA/checkpoint-500, runB/checkpoint-500" in " ".join(title.split())  # its caption, wrapped
    # --predictions-out with several models: one file each, not the second written over the first
    named = {declared_report.scores_path(project / "s.json", str(run), [str(r) for r in runs]).name for run in runs}
    assert named == {"s.runA--checkpoint-500.json", "s.runB--checkpoint-500.json"}

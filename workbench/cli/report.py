"""`workbench report`: result files of `workbench evaluate --json` as one static HTML page."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import console, example


def register(app: typer.Typer) -> None:
    app.command(
        "report",
        epilog=example(
            "workbench report results.json --out report               # report/index.html",
            "workbench report bert.json gpt2.json --out report        # several runs side by side",
            "workbench report compared.json compared.*.json --out report  # versions and each one's figures",
        ),
    )(report)


def report(
    results: list[Path] = typer.Argument(
        ...,
        metavar="RESULT.json",
        help="Result files written by `workbench evaluate --json` (a run's, or a comparison of versions); "
        "files of one kind are shown side by side.",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write index.html into (made if missing)."),
) -> None:
    """Write a static HTML page of evaluation results: every model's figures with their
    intervals, overall and per group, in sortable tables and charts, the curves a kind gives,
    the models' paired comparisons and the warnings. The page needs no server and loads
    nothing from the network (its styles, script and charts are inside it); paths of this
    machine appear only by their last component, so it can be shared."""
    from ..core.errors import display_path
    from ..evaluation.html_report import write_report

    path = write_report(list(results), out)
    console.print(f"wrote {display_path(path)}", markup=False)

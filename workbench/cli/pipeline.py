"""Pipeline commands: validate, expand, status, stats."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ..core.errors import display_path
from .common import console, err_console, example, get_config, get_pipeline, print_problems


def register(app: typer.Typer) -> None:
    app.command("validate", epilog=example("workbench validate", "workbench -c other.toml validate"))(validate)
    app.command(
        "expand",
        epilog=example(
            "workbench expand                                   # configured templates -> workspace",
            "workbench expand --templates other-templates/ --out samples.jsonl",
            "workbench expand --original --out rows.jsonl         # the published benchmark's own expansion",
        ),
    )(expand)
    app.command(
        "run",
        epilog=example(
            "workbench run                      # expand -> generate -> filter -> fluency -> annotation queue",
            "workbench run --to generate",
            "workbench run --force              # recompute every stage, fresh or not",
        ),
    )(run)
    app.command("status", epilog=example("workbench status"))(status)


def validate(ctx: typer.Context) -> None:
    """Check workbench.toml and every template without loading any model.

    Lists every problem with file, key/field and line; exit code 2 if there are errors.
    """
    from .. import kinds
    from ..validation import check_model_references

    config = get_config(ctx, check=False)
    kind = kinds.of_config(config)
    problems = check_model_references(config, kind)
    problems += kinds.settings_problems(config)
    if kind.check_settings is not None and not any(p.severity == "error" for p in problems):
        problems += kind.check_settings(config)
    n_templates, found = kind.check_templates(config) if kind.check_templates else (0, [])
    problems += found
    print_problems(problems)
    errors = sum(p.severity == "error" for p in problems)
    src = display_path(config.source) if config.source else "built-in defaults"
    msg = f"config {src} (kind {kind.name}): {n_templates} template(s), {errors} error(s), {len(problems) - errors} warning(s)"
    if errors:
        err_console.print(msg)
        raise typer.Exit(2)
    console.print(msg)


def expand(
    ctx: typer.Context,
    templates: Optional[Path] = typer.Option(
        None, "--templates", "-t", help="Template folder or file (default: configured folder)."
    ),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Also write the rows as JSON lines to this file."),
    force: bool = typer.Option(False, "--force", help="Recompute even when inputs are unchanged."),
    original: bool = typer.Option(
        False,
        "--original",
        help="The published benchmark's own expansion, string for string, as its rows were published (no "
        "sentence case, agreement or respelling), where the kind has one; as `[expand] original = true`.",
    ),
) -> None:
    """Expand the project's templates into the rows of its kind (the first stage of
    `workbench run`); `--out` also writes them as JSON lines.
    """
    pipeline = get_pipeline(ctx, templates_dir=templates, original=original or None)
    if original and not pipeline.stage("expand").has_original:
        from .. import kinds
        from ..core.errors import ConfigError

        raise ConfigError(f"--original: kind {kinds.of_config(get_config(ctx)).name!r} has no original expansion")
    result = pipeline.run("expand", force=force)
    if out:
        import json

        from ..core.workspace import atomic_write_text

        rows = pipeline.workspace.read("expand").to_pylist()
        for r in rows:
            if "bindings" in r:
                r["bindings"] = dict(r["bindings"])
        atomic_write_text(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    if result.get("skipped"):
        from .. import kinds
        from ..annotation.display import words_of

        words = words_of(kinds.of_config(get_config(ctx)).words)  # the rows as the kind names them
        count = result.get("rows", result.get("samples"))
        console.print(f"expand: up to date ({count} {words.rows}); use --force to recompute")
        if out:
            console.print(f"wrote {display_path(out)}")
        return
    console.print(f"expand: {_counts(result)} in {result['seconds']:.2f}s", soft_wrap=True)
    if out:
        console.print(f"wrote {display_path(out)}")


def run(
    ctx: typer.Context,
    to: Optional[str] = typer.Option(
        None,
        "--to",
        help="Last stage to run (default: the machine part of the kind's "
        "pipeline, up to its annotation queue; `workbench status` lists the stages).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Recompute every stage up to --to whatever its freshness "
        "(model outputs already in the score cache are reused).",
    ),
) -> None:
    """Run the machine part of the project's pipeline in order, each stage skipped when it is up
    to date, up to the annotation queue. People take over from there (`workbench annotate` or
    `workbench labelstudio push`). A stage is up to date when its inputs, its settings and the
    kind's code (package, version and a hash of its files) are those it was computed with;
    --force recomputes it anyway.
    """
    from .. import kinds

    config = get_config(ctx)
    kind = kinds.of_config(config)
    pipeline = kind.pipeline(config)
    last = to or kind.run_to or pipeline.names()[-1]
    for name, result in pipeline.run_all(last, force=force):
        shown = _counts(result)
        console.print(f"{name}: {'up to date' if result.get('skipped') else 'done'} ({shown})", soft_wrap=True)


def status(ctx: typer.Context) -> None:
    """Show each pipeline stage as fresh, stale (inputs, config or the kind's code changed) or missing."""
    pipeline = get_pipeline(ctx)
    ws = pipeline.workspace
    table = Table(title=f"workspace {display_path(ws.root)}")
    table.add_column("stage")
    table.add_column("state")
    table.add_column("rows", justify="right")
    table.add_column("written")
    colours = {"fresh": "green", "stale": "yellow", "missing": "red"}
    for name, state in pipeline.states():
        m = ws.manifest(name) or {}
        table.add_row(name, f"[{colours[state]}]{state}[/]", str(m.get("rows", "")), m.get("created", ""))
    console.print(table)


def _counts(result: dict) -> str:
    """A stage's counts as one line: the whole numbers it reported."""
    return ", ".join(
        f"{k} {v}"
        for k, v in result.items()
        if k not in ("skipped", "warnings", "seconds") and isinstance(v, int) and not isinstance(v, bool)
    )

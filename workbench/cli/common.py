"""What every command shares: the config it runs under, printing, and error handling."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console

from ..core import distributed
from ..core.config import Config, load_config
from ..core.errors import Problem
from ..core.workspace import Workspace

# Wide tables stay readable when output goes to a file or pipe (rich would assume 80 columns).
_WIDTH = None if sys.stdout.isatty() else 160
# Under torchrun / accelerate only rank 0 prints results; every rank still prints its errors.
console = Console(width=_WIDTH, quiet=not distributed.is_main())
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def example(*lines: str) -> str:
    """An epilog with examples; the \\b keeps click from re-wrapping the lines."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def get_config(ctx: typer.Context, check: bool = True) -> Config:
    """The project's config; with `check`, a section its kind does not know (or a bad value in
    one of the kind's own sections) is an error here, before any work."""
    obj = ctx.find_root().obj or {}
    if "config" not in obj:
        obj["config"] = load_config(obj.get("config_path"))
        ctx.find_root().obj = obj
    config = obj["config"]
    if check and not obj.get("checked"):
        from .. import kinds
        from ..core.errors import ConfigError

        problems = [p for p in kinds.settings_problems(config) if p.severity == "error"]
        if problems:
            raise ConfigError(f"invalid config {config.shown_source}", problems)
        obj["checked"] = True
    return config


def get_workspace(config: Config) -> Workspace:
    return Workspace(config.path("workspace"))


def get_pipeline(ctx: typer.Context, **options):
    """The configured kind's pipeline (command-line overrides in `options`, None ones ignored)."""
    from .. import kinds

    return kinds.pipeline_for(get_config(ctx), **options)


def queue_items(ctx: typer.Context, *, write: bool, order: str | None = None):
    """(kind, items) of the annotation queue; write=False never touches the workspace."""
    from .. import kinds
    from ..annotation.session import items_from_table

    config = get_config(ctx)
    kind = kinds.of_config(config)
    table = kind.pipeline(config).table(kind.queue_stage, write=write)
    return kind, items_from_table(table, order or config.annotation.order)


def print_problems(problems: list[Problem]) -> None:
    for p in sorted(problems, key=lambda p: (p.file, p.line or 0, p.field)):
        style = "yellow" if p.severity == "warning" else "red"
        err_console.print(str(p), style=style, markup=False, highlight=False, soft_wrap=True)


def resolve(path: Path | None) -> Path | None:
    return None if path is None else Path(path).expanduser()


def fail(message: str, code: int = 2) -> None:
    err_console.print(f"error: {message}", style="red", markup=False, highlight=False)
    sys.exit(code)

"""Entry point: `workbench [--config FILE] COMMAND ...`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from typer.core import TyperGroup

from ..core.errors import WorkbenchError
from . import annotate, evaluate, init, kinds, labelstudio, models, pipeline, release, report
from .common import err_console, example

SETTINGS = {
    "pretty_exceptions_enable": False,
    "add_completion": False,
    "rich_markup_mode": None,
}


class Commands(TyperGroup):
    """workbench's commands. Plugin kinds are imported only when a command is about to run (never
    for `--help` or `--version`): then their own commands are added, and `evaluate` is made again
    with their options, after the command line's own flags are reserved (a plugin declaring one is
    broken, not the command line)."""

    plugins_added = False

    def resolve_command(self, ctx, args):
        if not self.plugins_added:
            self.plugins_added = True
            add_plugins(self)
        return super().resolve_command(ctx, args)


def add_plugins(group: TyperGroup) -> None:
    from ..contract import loader, registry

    loader.plugin_timeout()  # a bad WORKBENCH_PLUGIN_TIMEOUT is the command's error, not every plugin's
    registry.reserve(evaluate.own_options())
    with_plugins = typer.Typer(**SETTINGS)
    evaluate.register(with_plugins)  # every loadable kind's options
    group.commands["evaluate"] = typer.main.get_group(with_plugins).commands["evaluate"]
    group.commands.update(kinds.plugin_commands(set(group.commands), SETTINGS))


app = typer.Typer(
    cls=Commands,
    name="workbench",
    help="Build social-bias benchmarks that keep up with new language models: write templates, "
    "let models propose and filter items, have people validate them, and publish versioned "
    "releases with an evaluator. Each kind of benchmark (`workbench kinds`) brings its own "
    "stages, labels and measures; `[project] kind` in workbench.toml picks the project's.",
    epilog=example(
        "workbench kinds                         # the kinds of benchmark installed",
        "workbench validate                      # check workbench.toml and templates",
        "workbench run                           # the machine stages, up to the annotation queue",
        "workbench status                        # which stages are fresh, stale or missing",
    ),
    no_args_is_help=True,
    **SETTINGS,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"workbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    config: Path = typer.Option(
        None,
        "--config",
        "-c",
        envvar="WORKBENCH_CONFIG",
        help="Path to workbench.toml (default: ./workbench.toml, else built-in defaults).",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print workbench's version and exit."
    ),
) -> None:
    ctx.obj = {"config_path": config}


app.add_typer(models.app, name="models")
app.add_typer(labelstudio.app, name="labelstudio")
init.register(app)
pipeline.register(app)
annotate.register(app)
release.register(app)
evaluate.register(app, plugins=False)  # with the plugins' options when a command runs (Commands)
report.register(app)
kinds.register(app)
kinds.add_kind_commands(app)


INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C


def main() -> None:
    try:
        app()
    except WorkbenchError as exc:
        err_console.print(f"error: {exc}", style="red", markup=False, highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except OSError as exc:
        # A file or folder the user named cannot be read or written: a message, not a traceback.
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        err_console.print(f"error: {exc.strerror or exc}{where}", style="red", markup=False, highlight=False)
        sys.exit(2)
    except KeyboardInterrupt:
        interrupted()
    except SystemExit as exc:
        if exc.code == INTERRUPTED:  # typer turns Ctrl-C inside a command into a silent exit 130
            interrupted()
        raise
    finally:
        from ..core import distributed

        distributed.close()  # under torchrun / accelerate: leave the process group cleanly


def interrupted() -> None:
    err_console.print(
        "interrupted: what was already written is kept; run the command again to go on (stages reuse their caches)",
        style="yellow",
        markup=False,
        highlight=False,
    )
    sys.exit(INTERRUPTED)


if __name__ == "__main__":
    main()

"""`workbench kinds`: the benchmark kinds installed, and the commands each kind adds."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from .common import console, err_console, example


def register(app: typer.Typer) -> None:
    app.command("kinds", epilog=example("workbench kinds"))(list_kinds)


def list_kinds() -> None:
    """List every installed benchmark kind (built in or from a plugin package registered under the
    entry-point group `workbench.kinds`): where it comes from and what it can do. A kind any of
    whose modules (its kind, evaluator, standalone, lm-eval task, example, demo) fails to import
    is listed as broken with the reason; the other kinds work as ever. So is a plugin whose options
    take a flag of `workbench evaluate`, and one whose import does not finish in
    WORKBENCH_PLUGIN_TIMEOUT seconds (default 30). Plugins are imported only when a command runs:
    `workbench --help` and `--version` import none, so a plugin's own commands are not listed there."""
    from .. import kinds

    table = Table(title="benchmark kinds")
    for column in ("kind", "package", "version", "can", "description"):
        table.add_column(column)
    broken = []
    for entry in kinds.listing():
        if entry.kind is None:
            broken.append(f"kind {entry.name!r} from {entry.package} {entry.version} cannot be loaded: {entry.error}")
            table.add_row(entry.name, entry.package, entry.version, "[red]broken[/]", Text(entry.error or ""))
            continue
        kind = entry.kind
        failed = kinds.broken_part(kind)
        reason = f"{failed.what}: {failed.reason}" if failed else entry.error  # entry.error: its commands failed
        if reason:
            broken.append(str(failed) if failed else f"kind {kind.name!r} ({kinds.loader.origin(kind)}): {reason}")
            table.add_row(kind.name, kind.package, kind.version, "[red]broken[/]", Text(reason))
            continue
        table.add_row(kind.name, kind.package, kind.version, ", ".join(kind.capabilities), kind.description)
    console.print(table)
    for line in broken:
        err_console.print(line, style="red", markup=False, highlight=False, soft_wrap=True)


def add_kind_commands(app: typer.Typer) -> None:
    """The commands workbench's own kinds add (a plugin's are added when a command runs:
    `plugin_commands`)."""
    from .. import kinds

    for entry in kinds.listing(plugins=False):
        if entry.kind is not None and entry.kind.commands is not None:
            entry.kind.commands(app)


def plugin_commands(taken: set[str], settings: dict) -> dict:
    """The click commands every loadable plugin kind adds, by name. A plugin whose commands fail
    to register, or take the name of a command already there (`taken`), is left out with the
    reason on its entry (`workbench kinds` shows it broken), so a broken plugin never takes the
    CLI down. `settings`: the Typer settings of workbench's own app."""
    from .. import kinds

    found: dict = {}
    for entry in kinds.listing():
        kind = entry.kind
        if kind is None or kind.commands is None or not kinds.loader.is_plugin(kind):
            continue
        own = typer.Typer(**settings)
        try:
            kind.commands(own)
            commands = dict(typer.main.get_group(own).commands)
        except Exception as exc:  # noqa: BLE001 -- a plugin's bug must not break every command
            entry.error = f"its commands failed to register: {kinds.loader.describe(exc)}"
            continue
        clash = sorted(set(commands) & (taken | set(found)))
        if clash:
            entry.error = f"its command {clash[0]!r} has the name of a command already there: rename it"
            continue
        found.update(commands)
    return found

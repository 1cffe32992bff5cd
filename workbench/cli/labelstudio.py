"""`workbench labelstudio ...`: push, pull, status and prune against a Label Studio server."""

from __future__ import annotations

from typing import Optional

import typer

from .common import console, err_console, example, get_config, queue_items

app = typer.Typer(
    help="Label Studio: label together in the browser; labels land in the same store as the TUI's. "
    "Server from [labelstudio] url or LABEL_STUDIO_URL; key from LABEL_STUDIO_API_KEY (a legacy "
    "key or a personal access token). [labelstudio.annotators] maps Label Studio e-mails to "
    "annotator names.",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=example(
        "LABEL_STUDIO_API_KEY=... workbench labelstudio push --project bias-v2 --create",
        "workbench labelstudio pull --project bias-v2",
        "workbench labelstudio status --project bias-v2",
        "workbench labelstudio prune --project bias-v2",
    ),
)

PROJECT_HELP = "Project title."
PROJECT_ID_HELP = "Project id: picks one of several projects with the same title (or names one without its title)."


def _project(project: Optional[str], project_id: Optional[int]) -> None:
    from ..core.errors import InputError

    if project is None and project_id is None:
        raise InputError("name the project: --project TITLE (or --project-id ID)")


def _queue_ids(ctx) -> tuple[object, list[str] | None]:
    """(kind, the queue's item ids) for pull and status; ids None when the queue cannot be read
    (not run here): they then count every task, as before a queue existed."""
    from .. import kinds
    from ..core.errors import StageError

    try:
        kind, items = queue_items(ctx, write=False)
    except StageError as exc:
        err_console.print(
            f"warning: no queue to compare the project with ({exc}); orphan tasks are not told apart",
            style="yellow",
            markup=False,
            highlight=False,
        )
        return kinds.of_config(get_config(ctx)), None
    return kind, [i.id for i in items]


def _progress(message: str) -> None:
    err_console.print(message, style="dim", markup=False, highlight=False)


def _say(text: str, style: str | None = None) -> None:
    console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


def _report_refused(refused: list[str]) -> None:
    if refused:
        _say(f"{len(refused)} annotation(s) not taken:", "yellow")
        for line in refused:
            _say(f"  {line}")


def _report_duplicates(duplicates: list[str]) -> None:
    from ..labelstudio.sync import DUPLICATE_RULE

    if duplicates:
        _say(
            f"{len(duplicates)} task(s) with more than one annotation by the same person ({DUPLICATE_RULE}):", "yellow"
        )
        for line in duplicates:
            _say(f"  {line}")


def _report_orphans(orphans: dict, title: str, labels: int | None = None) -> None:
    if orphans["tasks"]:
        pulled = f"; {labels} label(s) on them pulled, kept in the label files, not counted" if labels else ""
        _say(
            f"{orphans['tasks']} orphan task(s): their items are no longer in the queue ({orphans['annotated']} "
            f"annotated{pulled}); `workbench labelstudio prune --project {title!r}` removes them",
            "yellow",
        )


@app.command(
    "push",
    epilog=example(
        "workbench labelstudio push --project bias-v2 --create",
        "workbench labelstudio push --project bias-v2 --preannotate fluency",
    ),
)
def push(
    ctx: typer.Context,
    project: Optional[str] = typer.Option(None, "--project", "-p", help=PROJECT_HELP),
    project_id: Optional[int] = typer.Option(None, "--project-id", help=PROJECT_ID_HELP),
    create: bool = typer.Option(
        False,
        "--create",
        help="Create the project if there is none with this title "
        "(without it, a mistyped title is an error, not a second project).",
    ),
    preannotate: Optional[str] = typer.Option(
        None,
        "--preannotate",
        help="Send 'labels' (current final labels, with notes and flags) or 'fluency' (exp of the mean log-prob per "
        "token, 0-1) as predictions, to new and existing tasks, one per task. Pre-checked labels anchor "
        "validators: use 'labels' for review or adjudication, not for independent validation.",
    ),
) -> None:
    """Import one task per queue item not yet in the project. Pushing again adds only new items,
    never a duplicate; tasks of items that left the queue are reported (prune removes them). The
    project asks for as many annotators per task as the annotation policy needs ([annotation]
    validators; else 2 for majority/adjudicator; else 1); with several, it is set up for
    independent labels as far as the server allows, and push says what it cannot enforce.
    """
    from ..core.errors import InputError
    from ..labelstudio.sync import push as run_push

    _project(project, project_id)
    if preannotate not in (None, "labels", "fluency"):
        raise InputError("--preannotate must be 'labels' or 'fluency'")
    config = get_config(ctx)
    kind, items = queue_items(ctx, write=True)
    r = run_push(
        config, items, project, preannotate, kind=kind, create=create, progress=_progress, project_id=project_id
    )
    _say(
        f"labelstudio push: {'created' if r['created'] else 'found'} project {r['project']!r} (id {r['project_id']}); "
        f"imported {r['imported']} new task(s), {r['already_there']} already there"
    )
    was = f", was {r['overlap_was']}" if r["overlap_was"] is not None else ""
    _say(f"overlap: {r['overlap']} annotator(s) per task ({r['overlap_why']}{was})")
    if preannotate:
        p = r["predictions"]
        _say(
            f"predictions ({preannotate}): {p.get('created', 0)} created, {p.get('kept', 0)} unchanged, "
            f"{p.get('removed', 0)} removed"
        )
    _report_orphans(r["orphans"], r["project"])
    if r["independence"]:
        _say(f"note: {r['independence']}", "yellow")


@app.command("pull", epilog=example("workbench labelstudio pull --project bias-v2"))
def pull(
    ctx: typer.Context,
    project: Optional[str] = typer.Option(None, "--project", "-p", help=PROJECT_HELP),
    project_id: Optional[int] = typer.Option(None, "--project-id", help=PROJECT_ID_HELP),
) -> None:
    """Read every annotation of the project into the label store (source labelstudio, the
    Label Studio user as annotator). Pulling again adds nothing; edited annotations update
    the label; deleted ones are undone; skipped tasks are not labels; annotations that are not
    a label of the scheme are listed; a person's second annotation of a task is listed and
    their latest one taken. Tasks are read a page at a time ([labelstudio] page_size) and each
    page's labels written before the next is read: a failed read keeps the pages written, and
    pulling again completes the rest.
    """
    from ..labelstudio.sync import pull as run_pull

    _project(project, project_id)
    config = get_config(ctx)
    kind, ids = _queue_ids(ctx)
    r = run_pull(
        config,
        project,
        kind.scheme,
        progress=_progress,
        words=kind.words,
        project_id=project_id,
        queue=None if ids is None else set(ids),
    )
    who = ", ".join(f"{name}: {n}" for name, n in r["by_annotator"].items())
    _say(
        f"labelstudio pull: {r['annotations']} annotation(s) read, {r['new_labels']} new label(s)"
        + (f" ({who})" if who else "")
        + f", {r['undone']} undone (deleted or changed in Label Studio), "
        f"{r['skipped']} skipped"
    )
    _report_duplicates(r["duplicates"])
    _report_refused(r["refused"])
    _report_orphans(r["orphans"], r["project"], r["orphans"]["labels"])


@app.command("status", epilog=example("workbench labelstudio status --project bias-v2"))
def status(
    ctx: typer.Context,
    project: Optional[str] = typer.Option(None, "--project", "-p", help=PROJECT_HELP),
    project_id: Optional[int] = typer.Option(None, "--project-id", help=PROJECT_ID_HELP),
) -> None:
    """Progress of the project over the queue's items: tasks labelled, tasks still short of
    their overlap, skips, annotations not taken, labels per annotator, and the final labels
    under the configured policy (what `workbench annotations stats` counts after a pull when
    every label comes from Label Studio). Orphan tasks are counted apart."""
    from ..labelstudio.sync import status as run_status

    _project(project, project_id)
    config = get_config(ctx)
    kind, ids = _queue_ids(ctx)
    r = run_status(config, project, kind.scheme, progress=_progress, words=kind.words, project_id=project_id, queue=ids)
    _say(
        f"project {r['project']!r} (id {r['project_id']}): {r['labelled_tasks']}/{r['tasks']} queue items labelled; "
        f"{r['short_of_overlap']} task(s) short of {r['overlap']} annotator(s); {r['skipped']} skipped"
    )
    f = r["finals"]
    if f:
        _say(
            f"final labels ({r['policy']}): {f.get('final', 0)} final, {f.get('disagreement', 0)} disagreement, "
            f"{f.get('not-enough-votes', 0)} not enough votes, {f.get('unlabelled', 0)} unlabelled"
        )
    for name, n in r["by_annotator"].items():
        _say(f"  {name}: {n}")
    _report_duplicates(r["duplicates"])
    _report_refused(r["refused"])
    _report_orphans(r["orphans"], r["project"])
    if r["independent"] is False:
        _say(
            "independence: not enforced by this server (Community): annotators can see each other's labels "
            "from the task list; see docs/annotating.md",
            "yellow",
        )


@app.command(
    "prune",
    epilog=example(
        "workbench labelstudio prune --project bias-v2", "workbench labelstudio prune --project bias-v2 --yes"
    ),
)
def prune(
    ctx: typer.Context,
    project: Optional[str] = typer.Option(None, "--project", "-p", help=PROJECT_HELP),
    project_id: Optional[int] = typer.Option(None, "--project-id", help=PROJECT_ID_HELP),
    yes: bool = typer.Option(False, "--yes", "-y", help="Delete without asking (scripts)."),
) -> None:
    """Delete the project's orphan tasks (tasks of items no longer in the queue) and their
    annotations, after saying how many and asking. Labels already pulled from them stay in the
    label files; tasks workbench did not make are never touched."""
    import sys

    from ..core.errors import InputError
    from ..labelstudio.sync import prune as run_prune

    _project(project, project_id)
    config = get_config(ctx)
    kind, items = queue_items(ctx, write=False)

    def confirm(summary: dict) -> bool:
        what = (
            f"Delete {summary['tasks']} orphan task(s) of project {summary['project']!r} (id "
            f"{summary['project_id']}), {summary['annotated']} of them annotated ({summary['annotations']} "
            "annotation(s)), from Label Studio?"
        )
        if yes:
            return True
        if not sys.stdin.isatty() and not _piped_answer():
            raise InputError(f"{what} Nothing was deleted: run it in a terminal to answer, or pass --yes")
        return typer.confirm(what, default=False)

    r = run_prune(config, items, project, kind=kind, confirm=confirm, project_id=project_id, progress=_progress)
    if not r["tasks"]:
        _say(f"labelstudio prune: project {r['project']!r} has no orphan tasks")
    elif r["deleted"]:
        _say(f"labelstudio prune: deleted {r['deleted']} orphan task(s) from {r['project']!r}")
    else:
        _say(f"labelstudio prune: nothing deleted ({r['tasks']} orphan task(s) kept)")


def _piped_answer() -> bool:
    """True when an answer was piped in (tests and `yes | workbench ...`): typer reads it."""
    import os
    import stat
    import sys

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return True  # a test runner's stream: typer reads from it
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


@app.command("config", epilog=example("workbench labelstudio config > labeling-config.xml"))
def config(ctx: typer.Context) -> None:
    """Print the labeling config push creates projects with (generated from the kind's words), to
    restore a project's edited config (Settings > Labeling Interface > Code). Pull refuses
    projects whose fields or choices differ."""
    from .. import kinds
    from ..labelstudio.scheme import label_config

    kind = kinds.of_config(get_config(ctx))
    typer.echo(label_config(kind.scheme, kind.words), nl=False)

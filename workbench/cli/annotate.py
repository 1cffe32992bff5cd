"""`workbench annotate` (the labelling UI) and `workbench annotations ...` (stats)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from ..core.errors import InputError, display_path
from .common import console, err_console, example, get_config, queue_items

annotations_app = typer.Typer(
    help="Labels: breakdown, agreement between annotators, final labels.",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=example("workbench annotations stats", "workbench annotations stats --json labels.json"),
)


def register(app: typer.Typer) -> None:
    app.command(
        "annotate",
        epilog=example(
            "workbench annotate --annotator alice",
            "workbench annotate --annotator alice --order fluency --skip-domain religion",
            "workbench annotate --annotator bob --adjudicate            # only the disagreements",
            "workbench annotate --annotator ci --labels-from labels.jsonl   # no UI",
        ),
    )(annotate)
    app.add_typer(annotations_app, name="annotations")


def _session_parts(ctx, annotator: str, adjudicate: bool, order: Optional[str], skip_domain: list[str]):
    from ..annotation.session import Session
    from ..annotation.store import LabelStore

    config = get_config(ctx)
    kind, items = queue_items(ctx, write=True, order=order)
    ac = config.annotation
    store = LabelStore(config.path("annotations"), annotator, strict=False, scheme=kind.scheme)
    store.lock_session()  # one live session per annotator: a second one is refused here, before any UI
    try:
        disputes, messages = None, []
        if adjudicate:
            disputes, messages = _disputes(config, items, store.annotator, kind.scheme)
        session = Session(
            items,
            store,
            opt_out=list(ac.opt_out_domains) + list(skip_domain),
            adjudicate_with=disputes,
            break_every_items=ac.break_every_items,
            break_every_minutes=ac.break_every_minutes,
            scheme=kind.scheme,
            show_model_results=ac.show_model_results,
            words=kind.words,
            **({"fix_fields": kind.audit.fix_fields, "fix_choice": kind.audit.fix_choice} if kind.renewing else {}),
        )
    except BaseException:
        store.close()  # releases the session lock
        raise
    return config, items, store, session, messages


def _disputes(config, items, annotator: str, scheme) -> tuple[dict, list[str]]:
    """The disputed items an adjudicator is served: not those they voted on as an annotator."""
    from ..annotation.session import disagreements
    from ..annotation.store import annotator_key

    ac = config.annotation
    disputes = disagreements(config.path("annotations"), items, ac.policy, ac.min_votes, ac.adjudicator, scheme)
    if not disputes:
        raise InputError(
            f"nothing to adjudicate: the annotators dispute none of the {len(items)} queue items "
            f"(policy {ac.policy}); `workbench annotations stats` shows the labels"
        )
    own = [i for i, d in disputes.items() if annotator_key(annotator) in map(annotator_key, d.votes)]
    if len(own) == len(disputes):
        raise InputError(
            f"{annotator} labelled all {len(own)} disputed item(s) as an annotator: an adjudicator decides "
            "between other people's labels; adjudicate under another name"
        )
    messages = (
        [
            f"{len(own)} of the {len(disputes)} disputed items are not served: you labelled them as an "
            "annotator, so someone else adjudicates them."
        ]
        if own
        else []
    )
    return {i: d for i, d in disputes.items() if i not in own}, messages


def annotate(
    ctx: typer.Context,
    annotator: str = typer.Option(..., "--annotator", "-a", help="Your name: labels go to annotations/NAME.jsonl."),
    adjudicate: bool = typer.Option(
        False,
        "--adjudicate",
        help="Serve only the items the annotators dispute, with their votes, notes and flags: your label decides each one (docs/annotating.md, Adjudication).",
    ),
    order: Optional[str] = typer.Option(
        None, "--order", help="template (stable, default) or fluency (most fluent first)."
    ),
    skip_domain: List[str] = typer.Option([], "--skip-domain", help="Do not show items of this domain (repeatable)."),
    labels_from: Optional[Path] = typer.Option(
        None,
        "--labels-from",
        help="Label from a JSONL/CSV file (item_id, label, stance, note, flag) without the UI (with --adjudicate: as adjudications).",
    ),
    no_content_note: bool = typer.Option(False, "--no-content-note", help="Skip the content note at start."),
) -> None:
    """Label the project's queue in a terminal UI, in its kind's words (`workbench kinds`): one
    key per decision of the kind, undo, skip, notes, flags, filters and search. Every label is
    saved (fsynced) before the screen moves on, and the line above the keys says what was saved;
    restart and you resume where you left.
    """
    if order not in (None, "template", "fluency"):
        raise typer.BadParameter("--order must be template or fluency")
    if labels_from is not None:
        _import_labels(ctx, annotator, labels_from, adjudicate)
        return
    config, items, store, session, messages = _session_parts(ctx, annotator, adjudicate, order, skip_domain)
    try:
        from ..tui.app import AnnotateApp

        app = AnnotateApp(
            session,
            annotator,
            keys=config.annotation.keys,
            content_note=not no_content_note,
            startup_messages=store.warnings() + messages,
        )
        app.run()
    finally:
        store.close()  # every way out releases the session lock
    p = session.progress()
    hidden = sum(1 for i in session.all_items if session.opted_out(i))
    opted = f"; opted out: {', '.join(sorted(session.opt_out))} ({hidden} items not counted)" if session.opt_out else ""
    console.print(
        f"annotate: {p['session']} label(s) this session; {p['done']}/{p['total']} items labelled by {annotator}{opted}"
    )


def _import_labels(ctx, annotator: str, path: Path, adjudicate: bool) -> None:
    """--labels-from: only the queue's item ids are needed (no session), and the labels go to
    the store as one batch (with --adjudicate, as adjudications)."""
    from .. import kinds
    from ..annotation.imports import apply_labels, read_label_file
    from ..annotation.store import LabelStore

    config = get_config(ctx)
    kind = kinds.of_config(config)
    ids = set(kind.pipeline(config).table(kind.queue_stage, write=True).column("item_id").to_pylist())
    store = LabelStore(config.path("annotations"), annotator, strict=False, scheme=kind.scheme)
    store.lock_session()  # one live session per annotator: an import while labelling is refused
    try:
        for w in store.warnings():
            err_console.print(f"warning: {w}", style="yellow")
        rows = read_label_file(path, ids, store.scheme)
        written = apply_labels(store, rows, role="adjudicator" if adjudicate else None)
        done = len(store.labelled() & ids)
    finally:
        store.close()
    console.print(
        f"annotate: {written} label(s) written for {store.annotator} from {display_path(path)}; "
        f"{done}/{len(ids)} items labelled"
    )


@annotations_app.command(
    "stats", epilog=example("workbench annotations stats", "workbench annotations stats --json labels.json")
)
def stats(
    ctx: typer.Context,
    json_out: Optional[Path] = typer.Option(
        None, "--json", help="Also write the breakdown, agreement, disputed items, notes and flags as JSON."
    ),
) -> None:
    """Label breakdown per domain and subtopic with examples, the final labels under the
    configured policy, agreement between the annotators on the queue's items (adjudicators
    apart; Cohen's kappa per pair, Fleiss' kappa overall and per label, Krippendorff's alpha),
    the disputed items (resolved by an adjudicator or still disputed) and every note and flag.
    """
    from ..core.outputs import json_text

    from ..annotation import display
    from ..annotation.summary import final_labels_for, summarise

    config = get_config(ctx)
    kind, items = queue_items(ctx, write=False)  # a read: the workspace stays as it is
    summary = summarise(config, items, final_labels_for(config, [i.id for i in items], kind.scheme))
    for w in summary["warnings"]:
        err_console.print(f"warning: {w}", style="yellow")
    words = display.words_of(kind.words)  # headings and columns in the kind's words; the JSON keeps its keys
    t = Table(title=f"Final labels ({summary['policy']}) per {words.domain} and {words.subtopic}")
    columns = ("domain", "subtopic", "items", *summary["columns"])
    shown = {"domain": words.domain, "subtopic": words.subtopic}
    for col in columns:
        t.add_column(shown.get(col, col), justify="left" if col in shown else "right")
    for r in summary["breakdown"]:
        t.add_row(*(str(r[c]) for c in columns))
    console.print(t)
    ex = Table(title="Examples per label")
    ex.add_column("label")
    ex.add_column(words.domain)
    ex.add_column(display.text_name(kind.words).line)
    for e in summary["examples"]:
        ex.add_row(e["label"], e["domain"], e["text"])
    console.print(ex)
    _print_agreement(summary["agreement"], len(items))
    _print_adjudication(summary["adjudication"])
    _print_notes(summary["notes"])
    if json_out:
        json_out.write_text(json_text(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        console.print(f"wrote {display_path(json_out)}")


def _print_agreement(a: dict, queue: int) -> None:
    adjudicators = f"; adjudicators, not counted: {', '.join(a['adjudicators'])}" if a["adjudicators"] else ""
    if not a.get("pairs"):
        console.print(f"annotators: {', '.join(a['annotators']) or 'none'} (agreement needs two or more){adjudicators}")
        return
    at = Table(
        title=f"Agreement between {len(a['annotators'])} annotators ({a['items']} of the {queue} queue items)"
        f"{adjudicators}"
    )
    for col in ("annotators", "items", "agreement %", "Cohen's kappa"):
        at.add_column(col)
    for p in a["pairs"]:
        at.add_row(f"{p['a']} ~ {p['b']}", str(p["items"]), f"{100 * p['agreement']:.1f}", f"{p['cohen_kappa']:.3f}")
    console.print(at)
    from ..annotation.summary import agreement_figures

    for line in agreement_figures(a):
        console.print(line)


def _print_adjudication(adj: dict) -> None:
    if not adj["disputed"]:
        return
    t = Table(
        title=f"Disputed items: {adj['disputed']}; resolved by an adjudicator: {adj['resolved']}; "
        f"still disputed: {adj['unresolved']}"
    )
    for col in ("item", "text", "votes", "adjudication"):
        t.add_column(col)
    for r in adj["items"]:
        votes = ", ".join(f"{a}: {c}" for a, c in sorted(r["votes"].items()))
        ruling = ", ".join(f"{a}: {c}" for a, c in sorted(r["adjudications"].items()))
        t.add_row(
            r["item_id"],
            r["text"],
            votes,
            (ruling + ("" if r["resolved"] else " (split)")) if ruling else "still disputed",
        )
    console.print(t)
    if adj["unresolved"]:
        console.print("the disputed items wait for an adjudicator: workbench annotate --annotator NAME --adjudicate")


def _print_notes(rows: list[dict]) -> None:
    if not rows:
        return
    t = Table(title=f"Notes and flags ({len(rows)} item{'s' if len(rows) != 1 else ''})")
    for col in ("item", "text", "notes", "flagged by"):
        t.add_column(col)
    for r in rows:
        t.add_row(
            r["item_id"], r["text"], "\n".join(f"{a}: {n}" for a, n in r["notes"].items()), ", ".join(r["flagged_by"])
        )
    console.print(t)

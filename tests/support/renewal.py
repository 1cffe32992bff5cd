"""The terminal audit session of a renewal project, shared by the renewal tests and
docs/screenshots.py (--renewing), so that the pictures show what the tests drive."""

from __future__ import annotations


def audit_app(config, kind, annotator: str = "alice"):
    """The terminal's audit session of a renewal project for `annotator`: (store, session, app)."""
    import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
    from workbench.annotation.session import Session, items_from_table
    from workbench.annotation.store import LabelStore
    from workbench.tui.app import AnnotateApp

    items = items_from_table(kind.pipeline(config).table(kind.queue_stage))
    store = LabelStore(config.path("annotations"), annotator, scheme=kind.scheme)
    session = Session(items, store, scheme=kind.scheme, words=kind.words, fix_fields=kind.audit.fix_fields)
    return store, session, AnnotateApp(session, annotator, content_note=False)


def labels_file(path, rows: list[dict]) -> str:
    """Labels as `annotate --labels-from` reads them (JSON lines: item_id, label, and a note or a fix)."""
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def label_as(runner, folder, rows: list[dict], *annotators: str) -> None:
    """Each of `annotators` gives `rows` through `workbench annotate --labels-from` (in the current project)."""
    from conftest import invoke

    for name in annotators:
        r = invoke(
            runner, "annotate", "--annotator", name, "--labels-from", labels_file(folder / f"{name}.jsonl", rows)
        )
        assert r.exit_code == 0, r.output + str(r.exception)


# CrowS-Pairs' published header: the unnamed index column first, the annotation columns last.
CROWS_HEADER = [
    "",
    "sent_more",
    "sent_less",
    "stereo_antistereo",
    "bias_type",
    "annotations",
    "anon_writer",
    "anon_annotators",
]


def write_crows_csv(path, rows, header=CROWS_HEADER):
    """A CrowS-Pairs CSV of our own rows, written as the published file is (csv module, comma)."""
    import csv

    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([header, *rows])
    return path

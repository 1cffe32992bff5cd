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

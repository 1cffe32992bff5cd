"""Reading HONEST inputs: the template TSV (public layout, a workbench release folder or one
on the Hub) and the user's HurtLex-style lexicon, with every problem named by file, line and
column. Parsing their text is parsing.py's (pure, so a release's evaluate.py carries it);
its names are re-exported here.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ...core.errors import InputError, display_path
from ...core.text import read_text
from .parsing import (
    GROUP_COLUMNS,
    SLOT,
    Lexicon,
    Template,
    TemplateSet,
    parse_lexicon,
    parse_templates,
    release_pin,
    strip_accents,
)

__all__ = ["GROUP_COLUMNS", "SLOT", "RELEASE_TABLE", "Lexicon", "Template", "TemplateSet", "header_of",
           "read_lexicon", "read_templates", "strip_accents"]

RELEASE_TABLE = Path("data") / "templates.tsv"
HUB_SPEC = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<rev>[\w./-]+))?$")


# -- files ------------------------------------------------------------------------------
def _table_of(source: str) -> tuple[Path, str | None, str | None]:
    """The TSV behind a source: a file, a release folder, or ORG/NAME[@REV] on the Hub."""
    path = Path(source).expanduser()
    if path.is_dir():
        table = path / RELEASE_TABLE
        if not table.is_file():
            raise InputError(f"{display_path(path)}: not an HONEST release (expected {RELEASE_TABLE} and manifest.json)")
        repo = revision = None
        manifest = path / "manifest.json"
        if manifest.is_file():
            try:
                meta = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise InputError(f"{display_path(manifest)}: unreadable manifest ({exc})") from None
            if meta.get("kind") not in (None, "honest"):
                raise InputError(f"{display_path(path)}: a {meta.get('kind')!r} release, not an HONEST one")
            repo, revision = release_pin(meta)
        return table, repo, revision
    if path.exists() or not HUB_SPEC.match(source):
        return path, None, None   # read_text reports the missing file
    m = HUB_SPEC.match(source)
    from ...release.publish import fetch_release

    folder, fetched = fetch_release(m.group("repo"), m.group("rev"))
    table, _, revision = _table_of(folder)
    return table, m.group("repo"), fetched if m.group("rev") else revision or "main"


def header_of(path: Path) -> list[str]:
    """The first line's column names (empty when the file cannot be read as UTF-8 text)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return []
    return [c.strip() for c in first.rstrip("\r\n").split("\t")]


def read_templates(source: str, group_by: str | None = None) -> TemplateSet:
    path, repo, revision = _table_of(source)
    templates = parse_templates(read_text(path, "template file"), source, path, group_by)
    templates.repo, templates.revision = repo, revision
    return templates


def read_lexicon(path: Path) -> Lexicon:
    """The user's lexicon file (see `parse_lexicon` for the layout and the level filter)."""
    return parse_lexicon(read_text(Path(path), "lexicon"), Path(path))

"""Reading HONEST inputs: the template TSV (public layout, a workbench release folder or one
on the Hub) and the user's HurtLex-style lexicon, with every problem named by file, line and
column. Parsing their text is parsing.py's (pure, so a release's evaluate.py carries it);
its names are re-exported here.
"""

from __future__ import annotations

import json
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

__all__ = [
    "GROUP_COLUMNS",
    "SLOT",
    "RELEASE_TABLE",
    "Lexicon",
    "Template",
    "TemplateSet",
    "header_of",
    "read_lexicon",
    "read_templates",
    "strip_accents",
]

RELEASE_TABLE = Path("data") / "templates.tsv"


# -- files ------------------------------------------------------------------------------
def _table_of(source: str) -> tuple[Path, str | None, str | None]:
    """The TSV behind a source: a file, a release folder, or ORG/NAME[@REV] on the Hub."""
    path = Path(source).expanduser()
    if path.is_dir():
        table = path / RELEASE_TABLE
        if not table.is_file():
            raise InputError(
                f"{display_path(path)}: not an HONEST release (expected {RELEASE_TABLE} and manifest.json)"
            )
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
    from ... import sources

    hub = sources.hub_spec(source)
    if path.exists() or not hub or not hub[1]:
        return path, None, None  # read_text reports the missing file
    found = sources.resolve(source)
    table, _, _ = _table_of(found.path)
    return table, found.repo, found.revision


def header_of(path: Path) -> list[str]:
    """The first line's column names (empty when the file cannot be read as UTF-8 text)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return []
    return [c.strip() for c in first.rstrip("\r\n").split("\t")]


HF_NOTE = (
    "read as a JSON-lines export (the Hugging Face layout of the HONEST templates: one record per line "
    "with template_masked, identity, category, ...); lines in messages are the file's own lines"
)


def _json_lines_as_tsv(text: str, path: Path) -> str | None:
    """A JSON-lines export of the template table as the TSV's text (header on line 1, the record
    of JSON line n on line n + 1), or None when `text` is not JSON lines of records."""
    if not text.lstrip().startswith("{"):
        return None
    shown = display_path(path)
    records, columns = [], {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            records.append(None)
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InputError(
                f"{shown}:{number}: column {getattr(exc, 'colno', '?')}: not a JSON record "
                f"({getattr(exc, 'msg', exc)}); a JSON-lines template file has one object per line"
            ) from None
        if not isinstance(record, dict):
            raise InputError(
                f"{shown}:{number}: a JSON-lines template file has one object per line, not {type(record).__name__}"
            )
        records.append(record)
        columns.update(dict.fromkeys(record))
    cell = lambda v: "" if v is None else str(v).replace("\t", " ").replace("\n", " ")
    out = ["\t".join(columns)]
    for record in records:
        out.append("" if record is None else "\t".join(cell(record.get(c)) for c in columns))
    return "\n".join(out) + "\n"


def _shift(error: InputError, by: int) -> InputError:
    """The error with its problems' lines moved by `by` (from the TSV's lines to the file's)."""
    from dataclasses import replace

    error.problems = [p if p.line is None else replace(p, line=max(1, p.line + by)) for p in error.problems]
    return error


def read_templates(source: str, group_by: str | None = None, repeated: str = "rows") -> TemplateSet:
    path, repo, revision = _table_of(source)
    text = read_text(path, "template file")
    as_tsv = _json_lines_as_tsv(text, path)
    if as_tsv is not None:
        try:
            templates = parse_templates(as_tsv, source, path, group_by, repeated)
        except InputError as exc:
            raise _shift(exc, -1) from None
        for t in templates.every:  # the kept rows are among them
            t.line -= 1
        templates.notes.insert(0, HF_NOTE)
        templates.repo, templates.revision = repo, revision
        return templates
    templates = parse_templates(text, source, path, group_by, repeated)
    templates.repo, templates.revision = repo, revision
    return templates


def read_lexicon(path: Path, normalisation: str = "workbench") -> Lexicon:
    """The user's lexicon file (see `parse_lexicon` for the layout, the level filter and the
    normalisation)."""
    return parse_lexicon(read_text(Path(path), "lexicon"), Path(path), normalisation)

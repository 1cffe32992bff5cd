"""Which published copy a file is: a benchmark is often published in several copies (an original
file, a revised one with some rows changed or removed, translations, a Hub copy with one split), and
a result or a renewal means little unless it says which (docs/renewing.md, "Which copy").

A table of known copies (`known_copies.toml` beside this module, and any table named by the
environment variable WORKBENCH_KNOWN_COPIES, several separated as PATH is) gives each copy's name,
version, kind, number of rows and two fingerprints:

    sha256      of the file's bytes (of a folder: its files' relative paths and contents): the
                file exactly as published
    signature   sha256 of its rows' key fields (`key`), each cell normalised (Unicode NFC, line
                endings as \\n, spaces around it stripped), one line per row, the lines sorted: the
                same rows whatever the file was re-saved as (another encoding, a byte-order mark,
                CRLF line endings, another row order, other columns added or dropped)

`recognise(path, kind)` says which copy a file is: by its sha256 first, else by its signature,
else "unknown". `workbench import` records it in `[origin] published_copy` (the card says it) and
`workbench evaluate` in each data set of every result's provenance (`source_copy`). To add a copy
to a table, compute its entry from the file as published:

    python -m workbench.sources.known FILE --name NAME --version VERSION --kind KIND --key COLUMN ...

Rows are read without knowing the kind: a CSV or TSV (a tab-separated header), JSON lines, or a
JSON document, whose rows are the objects anywhere in it that have every key field (a nested
benchmark's sentences for the key `id`, `sentence`). Only the standard library and core.errors are used.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..core.errors import InputError

TABLE = Path(__file__).with_name("known_copies.toml")
FORMAT = "workbench-known-copies/1"
ENVIRONMENT = "WORKBENCH_KNOWN_COPIES"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Copy:
    """One published copy of a benchmark, as a table of known copies lists it."""

    name: str
    version: str
    kind: str = ""  # the workbench kind that reads it ("": any)
    rows: int | None = None  # how many rows the signature counts
    sha256: str = ""  # of the file as published
    key: tuple[str, ...] = ()  # the fields the signature is made of
    signature: str = ""  # of the sorted, normalised key fields of its rows
    url: str = ""  # where it is published
    note: str = ""

    @property
    def label(self) -> str:
        """How results name it: "name version"."""
        return f"{self.name} {self.version}".strip()


@dataclass(frozen=True)
class Recognised:
    """What `recognise` found: the copy (None: unknown) and how (`sha256`: the file as published,
    byte for byte; `rows`: the same rows, the file saved otherwise)."""

    copy: Copy | None
    how: str = ""
    sha256: str = ""
    rows: int | None = None  # of the file, as the signature counted them (None: not counted)
    checked: tuple[str, ...] = field(default_factory=tuple)  # the tables looked in

    @property
    def label(self) -> str:
        return self.copy.label if self.copy is not None else UNKNOWN

    def sentence(self) -> str:
        """One line for a message or a card."""
        if self.copy is None:
            return (
                f"{UNKNOWN} (its content matches none of the published copies the workbench knows: "
                f"sources/known_copies.toml, and more with {ENVIRONMENT})"
            )
        how = (
            "its sha256: the file as published, byte for byte"
            if self.how == "sha256"
            else f"its rows: the same {self.rows} rows, the file saved otherwise (encoding, line endings, order)"
        )
        return f"{self.copy.label}" + (f" ({self.copy.note})" if self.copy.note else "") + f", recognised by {how}"


def tables() -> list[Path]:
    """The tables looked in: the package's, then those WORKBENCH_KNOWN_COPIES names."""
    extra = [Path(p) for p in os.environ.get(ENVIRONMENT, "").split(os.pathsep) if p.strip()]
    return [TABLE, *extra]


def read_table(path: Path) -> list[Copy]:
    """The copies a table lists; a table that cannot be read, or an entry without a name, is an
    InputError naming the table (and the entry)."""
    import tomllib

    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: not a table of known copies ({exc})") from None
    if data.get("format") != FORMAT:
        raise InputError(f"{path}: not a table of known copies (expected format = {FORMAT!r})")
    out = []
    for n, entry in enumerate(data.get("copy") or [], start=1):
        if not isinstance(entry, dict) or not str(entry.get("name") or "").strip():
            raise InputError(f"{path}: copy {n} has no name")
        unknown = sorted(set(entry) - set(Copy.__dataclass_fields__))
        if unknown:
            raise InputError(f"{path}: copy {n} ({entry['name']}) has unknown field(s) {', '.join(unknown)}")
        out.append(
            Copy(
                **{
                    **entry,
                    "version": str(entry.get("version") or ""),
                    "key": tuple(str(k) for k in entry.get("key") or ()),
                }
            )
        )
    return out


def known_copies() -> list[Copy]:
    return [c for path in tables() if path.is_file() for c in read_table(path)]


# -- fingerprints -----------------------------------------------------------------------------------------------
def content_sha256(path: Path) -> str:
    """The sha256 of a file; of a folder, of its files' relative paths and contents (as `workbench
    import` records a benchmark published as one file per subtopic)."""
    path = Path(path)
    if path.is_file():
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    digest = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
        digest.update(f"{f.relative_to(path).as_posix()}\0{content_sha256(f)}\n".encode())
    return digest.hexdigest()


def _text(raw: bytes) -> str:
    """A file's text whatever it was saved as: UTF-8 (a BOM too), UTF-16 with its BOM, else cp1252."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _name(column: str) -> str:
    return re.sub(r"[-_ ]", "", column.strip().lower())


def _cell(value) -> str:
    if value is None:
        value = ""
    elif not isinstance(value, str):
        value = json.dumps(value, sort_keys=True, ensure_ascii=False)
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    return unicodedata.normalize("NFC", value).strip()


def rows_of(path: Path) -> list[dict]:
    """A file's rows as mappings of its fields (see the module docstring)."""
    return list(iter_rows(path))


def iter_rows(path: Path) -> Iterator[dict]:
    """`rows_of`, one row at a time: a CSV or TSV is read as it goes (a file of a million rows
    takes the memory of one row), a JSON document or JSON lines whole."""
    path = Path(path)
    with open(path, "rb") as f:
        start = f.read(1 << 16)
    if start.startswith((b"\xff\xfe", b"\xfe\xff")) or start.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"[")):
        yield from _whole_rows(path)
        return
    encoding = "utf-8-sig" if _is_utf8(path) else "cp1252"
    # newline=None: \r\n and \r read as \n, as the whole file's text is read
    with open(path, encoding=encoding, errors="replace", newline=None) as f:
        first = f.readline()
        delimiter = "\t" if first.count("\t") > first.count(",") else ","
        reader = csv.reader(itertools.chain([first], f), delimiter=delimiter)
        header = [h.strip() for h in next(reader, [])]
        for record in reader:
            if any(c.strip() for c in record):
                yield dict(zip(header, record))


def _is_utf8(path: Path) -> bool:
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                decoder.decode(block)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _whole_rows(path: Path) -> list[dict]:
    text = _text(Path(path).read_bytes()).replace("\r\n", "\n").replace("\r", "\n")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return list(_objects(json.loads(text)))
        except ValueError:
            pass
        rows = []
        for line in text.splitlines():
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    return []
        return [r for r in rows if isinstance(r, dict)]
    first = text.split("\n", 1)[0]
    delimiter = "\t" if first.count("\t") > first.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = [h.strip() for h in next(reader, [])]
    return [dict(zip(header, record)) for record in reader if any(c.strip() for c in record)]


def _objects(value):
    """Every object in a JSON document, outermost first."""
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


def signature(rows: Iterable[dict], key: tuple[str, ...], most: int | None = None) -> tuple[int, str] | None:
    """(rows counted, the signature of their key fields) over the rows that have every key field
    (names matched ignoring case and `-`/`_`/spaces); None when no row has them all, or when more
    than `most` rows do (no copy looked for has that many: reading stops there)."""
    lines = []
    for row in rows:
        names = {_name(str(k)): k for k in row}
        if not all(_name(k) in names for k in key):
            continue
        lines.append("\x1f".join(_cell(row[names[_name(k)]]) for k in key))
        if most is not None and len(lines) > most:
            return None
    if not lines:
        return None
    return len(lines), hashlib.sha256("\n".join(sorted(lines)).encode("utf-8")).hexdigest()


def recognise(path: Path, kind: str | None = None, copies: list[Copy] | None = None) -> Recognised:
    """Which known copy `path` is (of `kind`'s copies, and those that name no kind): the one with its
    sha256, else the one with its rows' signature, else none ("unknown")."""
    path = Path(path)
    candidates = [c for c in (known_copies() if copies is None else copies) if not kind or c.kind in ("", kind)]
    checked = tuple(str(p) for p in tables())
    digest = content_sha256(path)
    for c in candidates:
        if c.sha256 and c.sha256 == digest:
            return Recognised(c, "sha256", digest, c.rows, checked)
    keyed = [c for c in candidates if c.signature and c.key]
    if not keyed or not path.is_file():
        return Recognised(None, "", digest, None, checked)
    # a file with more rows than every copy looked for is none of them: its rows are read no further
    most = max(c.rows or 0 for c in keyed) if all(c.rows for c in keyed) else None
    found: dict[tuple, tuple[int, str] | None] = {}
    for c in keyed:
        if c.key not in found:
            try:
                found[c.key] = signature(iter_rows(path), c.key, most)
            except OSError:
                return Recognised(None, "", digest, None, checked)
        mine = found[c.key]
        if mine is not None and mine[1] == c.signature:
            return Recognised(c, "rows", digest, mine[0], checked)
    return Recognised(None, "", digest, None, checked)


TEXT_DATA = (".csv", ".tsv", ".jsonl", ".json", ".txt")  # data files whose rows a signature can read


def source_copy(paths: list[Path], kind: str | None) -> str:
    """Which published copy the first of `paths` that is one is ("name version"), else "unknown"
    (also when a table of known copies cannot be read: a result or a build is not stopped by it)."""
    for path in paths:
        try:
            found = recognise(path, kind)
        except (InputError, OSError):
            return UNKNOWN
        if found.copy is not None:
            return found.label
    return UNKNOWN


def entry(
    path: Path, name: str, version: str, kind: str = "", key: tuple[str, ...] = (), url: str = "", note: str = ""
) -> str:
    """The TOML entry of a table of known copies for the file at `path` as published."""
    counted = signature(rows_of(path), tuple(key)) if key and Path(path).is_file() else None
    lines = [
        "[[copy]]",
        f"name = {json.dumps(name, ensure_ascii=False)}",
        f"version = {json.dumps(version, ensure_ascii=False)}",
    ]
    lines += [f"kind = {json.dumps(kind)}"] if kind else []
    lines += [f"rows = {counted[0]}"] if counted else []
    lines += [f'sha256 = "{content_sha256(Path(path))}"']
    if counted:
        lines += [f"key = {json.dumps(list(key), ensure_ascii=False)}", f'signature = "{counted[1]}"']
    lines += [f"url = {json.dumps(url, ensure_ascii=False)}"] if url else []
    lines += [f"note = {json.dumps(note, ensure_ascii=False)}"] if note else []
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m workbench.sources.known",
        description="Print the entry of a table of known copies for a published file "
        "(docs/renewing.md, 'Which copy'), or say which copy a file is.",
    )
    parser.add_argument("file", type=Path)
    parser.add_argument("--name", help="the copy's name (without it: say which known copy FILE is)")
    parser.add_argument("--version", default="")
    parser.add_argument("--kind", default="")
    parser.add_argument("--key", nargs="*", default=[], help="the fields of the row-level signature")
    parser.add_argument("--url", default="")
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)
    if args.name:
        print(entry(args.file, args.name, args.version, args.kind, tuple(args.key), args.url, args.note), end="")
    else:
        print(recognise(args.file, args.kind or None).sentence())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

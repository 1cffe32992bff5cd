"""Reading users' text files: UTF-8 with or without a BOM, and a bad byte named by line and column;
JSON the same way, a syntax error named by line and column.

Input sizes are bounded so that a runaway file fails at once with a message instead of taking
minutes (an 8 MB template line once made `validate` take 19-57 s). The limits, documented in
docs/templates.md and docs/commands.md:

- `MAX_FILE_BYTES`: any data file read whole (CSV, TSV, JSON, JSON lines, lexicons): 1 GiB;
- `MAX_TEMPLATE_BYTES`: a template file: 16 MiB;
- `MAX_LINE_CHARS`: a line of a template file: 10,000 characters;
- `MAX_FIELD_CHARS`: one text field of a template (a premise, a hypothesis, a word): 5,000
  characters (a CSV cell is held to 131,072 by Python's csv module).
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import InputError, display_path

MAX_FILE_BYTES = 1 << 30
MAX_TEMPLATE_BYTES = 16 << 20
MAX_LINE_CHARS = 10_000
MAX_FIELD_CHARS = 5_000


def too_big(path: Path, limit: int, what: str) -> str | None:
    """Why a file is too big to read (None when it is not)."""
    size = Path(path).stat().st_size
    if size > limit:
        return (
            f"{display_path(path)}: the {what} is {size:,} bytes, over the limit of {limit:,}; split it or check "
            "that it is the file you meant"
        )
    return None


def long_line(text: str, limit: int = MAX_LINE_CHARS) -> tuple[int, int] | None:
    """(line number, length) of the first line longer than `limit` characters, else None."""
    start = 0
    number = 1
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end - start > limit:
            return number, end - start
        start, number = end + 1, number + 1
    return None


def read_text(path: Path, what: str, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of a UTF-8 file (a BOM is allowed); anything else is an InputError that says
    which file, line and column, so the user can fix it (never a UnicodeDecodeError traceback)."""
    path = Path(path)
    shown = display_path(path)
    if not path.is_file():
        raise InputError(f"{what} not found: {shown}" + (" (it is a folder)" if path.is_dir() else ""))
    try:
        big = too_big(path, max_bytes, what)
        if big:
            raise InputError(big)
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{shown}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"{shown}:{line}: column {column}: {what} is not UTF-8 (byte 0x{data[exc.start]:02x}); save it as UTF-8"
        ) from None


def repeated_column(header: list[str], key=str.strip) -> tuple[str, int, str, int] | None:
    """The first column a header names twice, as (first spelling, its position, second
    spelling, its position), positions from 1; names are compared as `key` makes them (the
    way the reader matches them). Unnamed columns do not count."""
    seen: dict[str, tuple[str, int]] = {}
    for position, name in enumerate(header, start=1):
        k = key(name)
        if not k:
            continue
        if k in seen:
            return (*seen[k], name.strip(), position)
        seen[k] = (name.strip(), position)
    return None


def check_header(header: list[str], shown: str, key=str.strip) -> None:
    """Refuse a table whose header names a column twice (`repeated_column`): a reader keyed by
    name keeps one of the two cells without a word (csv.DictReader, dict(zip(...)): the last),
    so a column renamed by mistake is scored in place of the real one."""
    found = repeated_column(header, key)
    if found is None:
        return
    first, at, second, again = found
    named = (
        f"column {first!r} twice (columns {at} and {again})"
        if first == second
        else f"one column twice: {first!r} (column {at}) and {second!r} (column {again}) read as the same name"
    )
    raise InputError(f"{shown}:1: the header names {named}; rename or remove one: which of them to read is not clear")


class DuplicateKey(json.JSONDecodeError):
    """A JSON object that names a key twice (json keeps the last value without a word); a
    JSONDecodeError at the object's opening brace, so every handler of bad JSON names it."""

    def __init__(self, key: str, doc: str, pos: int):
        super().__init__(
            f"key {key!r} appears twice in the object that opens here (only one of its values would be read)", doc, pos
        )
        self.key = key


class _Repeated(Exception):
    pass


def _unique(pairs: list) -> dict:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Repeated()
    return found


def _where_repeated(text: str) -> tuple[str, int]:
    """(key, offset of its object's opening brace) of the first object naming a key twice:
    the pure-Python scanner, which passes each object's position, run only after the fast
    parse found one."""
    from json import decoder, scanner

    class Found(Exception):
        pass

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None, *rest):
        pairs, end = decoder.JSONObject(s_and_end, strict, scan_once, None, list, memo, *rest)
        seen: set = set()
        repeated = next((k for k, _ in pairs if k in seen or seen.add(k)), None)
        if repeated is not None:
            raise Found(repeated, s_and_end[1] - 1)
        return dict(pairs), end

    finder = json.JSONDecoder()
    finder.parse_object = parse_object
    finder.scan_once = scanner.py_make_scanner(finder)
    try:
        finder.decode(text)
    except Found as found:
        return found.args
    return "?", 0


def loads(text: str):
    """json.loads, refusing an object that names a key twice (a DuplicateKey naming the key,
    with the line and column of its object) instead of keeping the last value silently."""
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except _Repeated:
        key, at = _where_repeated(text)
        raise DuplicateKey(key, text, at) from None


def read_json(path: Path, what: str):
    """A UTF-8 JSON document; a syntax error, or a key named twice in one object, is named by
    line and column."""
    text = read_text(path, what)
    try:
        return loads(text)
    except DuplicateKey as exc:
        raise InputError(duplicate_key_message(display_path(path), exc, what)) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{display_path(path)}:{exc.lineno}: column {exc.colno}: the {what} is not valid JSON ({exc.msg})"
        ) from None


def duplicate_key_message(shown: str, exc: DuplicateKey, what: str, line_offset: int = 0) -> str:
    """One line for a DuplicateKey: file, line and column of the object, the key, what to do."""
    return (
        f"{shown}:{exc.lineno + line_offset}: column {exc.colno}: the {what} names key {exc.key!r} twice in one "
        "object (the one that opens here); remove or rename one: which value to read is not clear"
    )

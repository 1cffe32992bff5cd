"""Reading sentence-pair CSVs (CrowS-Pairs, SOS) and the releases workbench builds from them.

Both kinds share the reading: a CSV file, a release folder (`manifest.json` + `data/<name>.csv`)
or a Hub release `ORG/NAME@REV`. Every problem names the file, its line, the data row and the
column, so a user with a 1,500-row file can go straight to the cell; all problems of a file are
reported at once (up to a limit) rather than one per run.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ...core.errors import InputError, Problem, display_path
from ...core.text import DuplicateKey, check_header, duplicate_key_message, loads

MAX_PROBLEMS = 50
CHUNK_ROWS = 20_000  # rows read_csv_chunks holds at a time


@dataclass
class Table:
    """A CSV's rows (as read, every column kept) with the file line each row starts on."""

    path: Path
    shown: str  # the path as messages show it
    columns: list[str]
    rows: list[dict]
    lines: list[int]  # file line of each row (header is line 1)
    label: str = ""  # what reports call the data set (file, folder or Hub spec)
    manifest: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)  # how the file was read, where that is worth saying
    cells: list[int] = field(default_factory=list)  # cells each row had before short rows were padded
    offset: int = 0  # the file's rows before these (a chunk of a file read in chunks: read_csv_chunks)
    delimiter: str = ""  # of a CSV read_csv_chunks reads a chunk at a time ("": read otherwise)

    def where(self, index: int, column: str | None) -> tuple[str, int, str]:
        """(file, line, field) of a cell, as a Problem takes them; rows count from 1 after the header."""
        what = f"row {self.offset + index + 1}" + (f", column {column!r}" if column else "")
        return self.shown, self.lines[index], what


def problem(table: Table, index: int, column: str | None, message: str) -> Problem:
    file, line, what = table.where(index, column)
    if column in table.columns and index < len(table.cells) and table.columns.index(column) >= table.cells[index]:
        message += (
            f" (the row has {table.cells[index]} cell(s), the header {len(table.columns)} columns: "
            "expected a value for every column)"
        )
    return Problem(file, line, what, message)


def raise_problems(table: Table, problems: list[Problem], total: int | None = None) -> None:
    """One InputError listing every problem found (the first MAX_PROBLEMS of them; `total`: how
    many there were, where only the first ones were kept)."""
    total = len(problems) if total is None else total
    if not total:
        return
    more = total - MAX_PROBLEMS
    head = f"{total} problem(s) in {table.shown}" + (f" (first {MAX_PROBLEMS} shown)" if more > 0 else "")
    raise InputError(head, problems[:MAX_PROBLEMS])


def delimiter_of(header_line: str) -> str:
    """A tab when the header line has more tabs than commas (CrowS-Pairs' French and revised
    English files are tab-separated under a .csv name), else a comma."""
    return "\t" if header_line.count("\t") > header_line.count(",") else ","


def _unclosed_quote(text: str, delimiter: str = ",") -> int | None:
    """The line of a record whose quoted field is never closed (an unmatched `"`), or None. The
    lenient reader would run it to the end of the file as one cell."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True, delimiter=delimiter)
    start = 1
    try:
        for _ in reader:
            start = reader.line_num + 1
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            return start
    return None


def _line_of_offset(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def read_csv(path: Path) -> Table:
    """A UTF-8 CSV (a BOM is allowed) with a header row; unreadable files are InputErrors."""
    shown = display_path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{shown}: is a folder without manifest.json; give the CSV file or a release folder") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = _line_of_offset(raw, exc.start)
        raise InputError(
            f"{shown}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None
    if "\x00" in text:
        raise InputError(f"{shown}: looks like a binary file (it contains NUL bytes), not a CSV")
    if text.lstrip().startswith("{"):
        return _read_json_lines(path, shown, text)
    delimiter = delimiter_of(text.split("\n", 1)[0])
    unclosed = _unclosed_quote(text, delimiter)
    if unclosed is not None:
        raise InputError(
            f'{shown}:{unclosed}: a quoted field opens on this line and is never closed (an unmatched "); '
            'expected a closing " before the end of its cell'
        )
    # newline="": only \n / \r\n end records, so U+2028 and friends inside a cell stay text
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
        if not header or not any(h.strip() for h in header):
            raise InputError(f"{shown}: empty file; expected a CSV with a header row")
        columns = [h.strip() for h in header]
        check_header(columns, shown, key=column_key)  # rows are dicts by name: a repeated name would keep its last cell
        separator = "tab" if delimiter == "\t" else "comma"
        rows, lines, cells = [], [], []
        start = reader.line_num + 1
        for record in reader:
            if not any(cell.strip() for cell in record):  # blank lines are not rows
                start = reader.line_num + 1
                continue
            if len(record) > len(columns):
                raise InputError(
                    f"{shown}:{start}: row {len(rows) + 1} has {len(record)} cells but the header has "
                    f"{len(columns)} columns (an unquoted {separator}?)"
                )
            cells.append(len(record))
            record = record + [""] * (len(columns) - len(record))
            rows.append(dict(zip(columns, record)))
            lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"{shown}:{reader.line_num}: not a valid CSV: {exc}") from None
    notes = ["read as tab-separated (its header line has tabs)"] if delimiter == "\t" else []
    if columns and not columns[0]:
        notes.append("its first, unnamed column is read as a row index and not scored")
    return Table(path, shown, columns, rows, lines, label=shown, cells=cells, notes=notes)


def read_csv_chunks(path: Path, size: int | None = None) -> tuple[Table, Callable[..., Iterator[Table]]]:
    """A CSV read as `read_csv` reads it, in chunks of `size` rows (CHUNK_ROWS), so that a file of
    any size takes the memory of one chunk (`workbench import` of a million rows): the header (a
    Table with its columns and notes, no rows) and `chunks(advance)`, which reads the rows, each
    chunk a Table whose `offset` counts the rows before it, telling `advance(n)` each n bytes
    read. A JSON-lines file, or one whose lines end in a lone carriage return, is read whole (one
    chunk). Every problem `read_csv` names, it names with the same line; an unclosed quote only
    once the file is read."""
    shown = display_path(path)
    try:
        with open(path, "rb") as f:
            first = f.readline(1 << 20)
    except FileNotFoundError:
        raise InputError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{shown}: is a folder without manifest.json; give the CSV file or a release folder") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    head = first.decode("utf-8-sig", errors="replace")
    if not head.strip() or head.lstrip().startswith("{") or "\r" in head.rstrip("\r\n") or not head.endswith("\n"):
        whole = read_csv(path)  # JSON lines, an empty first line, old Mac line endings, a header over 1 MiB

        def at_once(advance=None) -> Iterator[Table]:
            (advance or (lambda n: None))(Path(path).stat().st_size)
            yield whole

        return Table(path, whole.shown, whole.columns, [], [], label=whole.label, notes=whole.notes), at_once
    delimiter = delimiter_of(head)
    header = next(csv.reader([head], delimiter=delimiter), [])
    if not any(h.strip() for h in header):
        raise InputError(f"{shown}: empty file; expected a CSV with a header row")
    columns = [h.strip() for h in header]
    check_header(columns, shown, key=column_key)
    notes = ["read as tab-separated (its header line has tabs)"] if delimiter == "\t" else []
    if columns and not columns[0]:
        notes.append("its first, unnamed column is read as a row index and not scored")
    return Table(
        path, shown, columns, [], [], label=shown, notes=notes, delimiter=delimiter
    ), lambda advance=None: _chunks(path, shown, columns, delimiter, size or CHUNK_ROWS, advance or (lambda n: None))


def _chunks(path: Path, shown: str, columns: list[str], delimiter: str, size: int, advance) -> Iterator[Table]:
    record: list[list[str]] = [[]]  # the lines of the record being read, for the unclosed quote's check
    consumed = [0]  # bytes read since `advance` was last told (once a chunk: a call a line costs seconds)

    def lines(f):
        number, offset = 0, 0
        for raw in f:  # split at b"\n" only: no UTF-8 character has that byte
            number += 1
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{shown}:{number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                    f"{offset + exc.start}); save the file as UTF-8"
                ) from None
            if "\x00" in text:
                raise InputError(f"{shown}: looks like a binary file (it contains NUL bytes), not a CSV")
            offset += len(raw)
            consumed[0] += len(raw)
            record[0].append(text)
            yield text

    separator = "tab" if delimiter == "\t" else "comma"
    with open(path, "rb") as f:
        reader = csv.reader(lines(f), delimiter=delimiter)
        next(reader)  # the header, read by read_csv_chunks
        record[0] = []
        offset = 0
        rows: list[dict] = []
        starts: list[int] = []
        cells: list[int] = []
        start = reader.line_num + 1
        last: list[str] = []
        try:
            for cells_read in reader:
                last, record[0] = record[0], []
                if not any(cell.strip() for cell in cells_read):  # blank lines are not rows
                    start = reader.line_num + 1
                    continue
                if len(cells_read) > len(columns):
                    raise InputError(
                        f"{shown}:{start}: row {offset + len(rows) + 1} has {len(cells_read)} cells but the header "
                        f"has {len(columns)} columns (an unquoted {separator}?)"
                    )
                cells.append(len(cells_read))
                if len(cells_read) < len(columns):
                    cells_read = cells_read + [""] * (len(columns) - len(cells_read))
                rows.append(dict(zip(columns, cells_read)))
                starts.append(start)
                start = reader.line_num + 1
                if len(rows) == size:
                    advance(consumed[0])
                    consumed[0] = 0
                    yield Table(path, shown, columns, rows, starts, label=shown, cells=cells, offset=offset)
                    offset += len(rows)
                    rows, starts, cells = [], [], []
        except csv.Error as exc:
            raise InputError(f"{shown}:{reader.line_num}: not a valid CSV: {exc}") from None
        if last and _unclosed_quote("".join(last), delimiter) is not None:
            # the lenient reader ran an unmatched quote to the end of the file as one cell: the last record
            first = reader.line_num - len(last) + 1
            raise InputError(
                f'{shown}:{first}: a quoted field opens on this line and is never closed (an unmatched "); '
                'expected a closing " before the end of its cell'
            )
        advance(consumed[0])
        if rows:
            yield Table(path, shown, columns, rows, starts, label=shown, cells=cells, offset=offset)


def column_key(name: str) -> str:
    """A column name as `find_column` matches it: case and `-`/`_`/space differences ignored."""
    return re.sub(r"[\s_-]+", "_", name.strip().lower())


def find_column(columns: list[str], *names: str) -> str | None:
    """The first column matching one of `names`, ignoring case and `-`/`_`/space differences."""
    norm = column_key
    by_norm = {}
    for c in columns:
        by_norm.setdefault(norm(c), c)
    for name in names:
        if norm(name) in by_norm:
            return by_norm[norm(name)]
    return None


def header_columns(path: Path) -> list[str]:
    """The header of a CSV without reading the rest (for detect()); [] when it is not one."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
            first = f.readline()
            if first.lstrip().startswith("{"):  # a JSON-lines export: the first record's fields
                record = json.loads(first)
                return list(record) if isinstance(record, dict) else []
            return [h.strip() for h in next(csv.reader([first], delimiter=delimiter_of(first)), [])]
    except (OSError, csv.Error, StopIteration, ValueError):
        return []


def release_manifest(folder: Path) -> dict:
    try:
        meta = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


# The Hugging Face layout of CrowS-Pairs stores two columns as ClassLabel integers; these are the
# names in the dataset's feature order (as the dataset's features list them).
HF_CLASS_LABELS = {
    "stereo_antistereo": ("stereo", "antistereo"),
    "bias_type": (
        "race-color",
        "socioeconomic",
        "gender",
        "disability",
        "nationality",
        "sexual-orientation",
        "physical-appearance",
        "religion",
        "age",
    ),
}


def _read_json_lines(path: Path, shown: str, text: str) -> Table:
    """A JSON-lines export (one record per line, as a Hugging Face dataset saves one) as a table:
    the first record's fields are the columns; in a CrowS-Pairs export (sent_more present) the
    integer stereo_antistereo and bias_type are mapped to their names."""
    rows, lines, columns = [], [], {}
    crows = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads(line)  # a field named twice is refused, as a CSV column named twice is
        except DuplicateKey as exc:
            raise InputError(duplicate_key_message(shown, exc, "JSON-lines file", number - 1)) from None
        except ValueError as exc:
            raise InputError(
                f"{shown}:{number}: column {getattr(exc, 'colno', '?')}: not a JSON record "
                f"({getattr(exc, 'msg', exc)}); a JSON-lines file has one object per line"
            ) from None
        if not isinstance(record, dict):
            raise InputError(
                f"{shown}:{number}: a JSON-lines file has one object per line, not {type(record).__name__}"
            )
        if not rows:
            crows = "sent_more" in record
        columns.update(dict.fromkeys(record))
        row = {}
        for key, value in record.items():
            names = HF_CLASS_LABELS.get(key) if crows else None
            if names and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
                value = names[value]
            row[key] = "" if value is None else value if isinstance(value, str) else json.dumps(value)
        rows.append(row)
        lines.append(number)
    if not rows:
        raise InputError(f"{shown}: empty file; expected JSON records, one per line")
    cols = list(columns)
    rows = [{c: r.get(c, "") for c in cols} for r in rows]
    notes = []
    if crows:
        notes.append(
            "read as a JSON-lines export (the Hugging Face layout of CrowS-Pairs); integer "
            "stereo_antistereo and bias_type mapped to the dataset's class names "
            "(0 stereo, 1 antistereo; 0 race-color … 8 age)"
        )
    return Table(path, shown, cols, rows, lines, label=shown, notes=notes)


def load_source(spec: str, kind: str, data_name: str) -> Table:
    """The table behind a source: a CSV, a release folder of `kind` or a Hub release of it."""
    path = Path(spec).expanduser()
    from ... import sources

    on_hub = not path.exists() and bool((sources.hub_spec(spec) or (None, None))[1])
    if on_hub:
        path = sources.resolve(spec).path
    if path.is_dir():
        shown = display_path(path)
        if not (path / "manifest.json").is_file():
            raise InputError(f"{shown}: a folder without manifest.json; give the CSV file or a {kind} release folder")
        meta = release_manifest(path)
        if meta.get("kind") not in (None, kind):
            raise InputError(
                f"{shown}: manifest.json says kind {meta.get('kind')!r}, not {kind!r}; "
                f"pass --kind {meta.get('kind')} (or no --kind) to evaluate it"
            )
        csv_path = path / "data" / data_name
        if not csv_path.is_file():
            raise InputError(f"{shown}: release has no data/{data_name}")
        table = read_csv(csv_path)
        table.manifest = meta
        table.label = spec if on_hub else shown
        return table
    if not path.exists():
        raise InputError(f"{display_path(path)}: file not found (nor is it a Hub release ORG/NAME@REVISION)")
    return read_csv(path)


def looks_like(path: Path, kind: str, data_name: str, required: list[tuple[str, ...]]) -> bool:
    """detect(): a release folder of this kind, or a CSV whose header has each required column
    (each entry lists accepted spellings)."""
    path = Path(path)
    if path.is_dir():
        if (path / "manifest.json").is_file():
            return release_manifest(path).get("kind") == kind
        return False
    if not path.is_file():
        return False
    columns = header_columns(path)
    return bool(columns) and all(find_column(columns, *names) for names in required)

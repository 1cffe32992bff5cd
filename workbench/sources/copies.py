"""A release's data files checked as data, before any model loads: every Parquet file reads
whole and has rows, and a table the release holds twice agrees with itself.

Kinds built from templates (authoring/stages.Layout) write their table twice: the public file
the kind's evaluator reads (data/NAME.csv, .tsv or .jsonl) and data/NAME.parquet, which the
Hub's viewer and `datasets` load. An evaluator reads one copy only, so the manifest's hashes
alone let through a corrupt or emptied Parquet whose hash was updated, or a CSV edited so that
it no longer says what the Parquet says. Here the two copies must hold the same rows, in the
same order, with the same values in every column of the public file (the Parquet has more:
row ids, labels).

Values are compared as text, as the build wrote them into the public file (`as_text`): the CSV
holds text only, so a Parquet `true` is the cell "true" and a null is an empty cell. The row
counts are compared, then each column as a whole (pyarrow reads the CSV as text and compares
in bulk), so a large release is checked in about a second; only a disagreement is looked at
row by row, to name the first differing row and column.

A JSON document (a kind's nested data file) is not a table of rows: its Parquet is only
read here; the kind's reader checks the JSON.

This module needs only the standard library, core.errors and core.text, and pyarrow when it is
importable: a release's standalone evaluate.py carries it in evaluator/
(release/runtime/release.py), and the card of most kinds installs torch, transformers and
numpy only. Without pyarrow the standalone cannot open a Parquet file, so it checks nothing
here: it scores the public file, whose sha256 the manifest checked. `workbench` always has it.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from ..core.errors import InputError, display_path
from ..core.text import check_header, read_text

# The public copy's suffix -> its CSV delimiter (None: JSON lines), as authoring/stages.Layout writes it.
TEXT_COPIES = {".csv": ",", ".tsv": "\t", ".jsonl": None}
AFTER = "nothing was scored or uploaded: rebuild the release or download it again"
# (parquet sha256, copy sha256) pairs already checked in this process: `workbench evaluate`
# verifies a release more than once (its sources, then the kind's reader), and equal hashes are equal files.
_CHECKED: set = set()


def as_text(value) -> str:
    """A Parquet value as the public file holds it (authoring/stages._cell): a null is an
    empty cell, a bool is true/false, anything else its str()."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_data(folder: Path, names, digests: dict | None = None, after: str = AFTER) -> None:
    """Check the data files among `names` (the manifest's names, relative to `folder`): each
    Parquet reads and has rows, and one with a public copy of the same name agrees with it.
    `digests` (name -> the sha256 already checked) lets a pair checked once be skipped. A
    problem is an InputError in one line, ending with `after`."""
    try:
        import pyarrow as pa
        import pyarrow.compute  # as pa.compute below
        import pyarrow.csv  # as pa.csv below
        import pyarrow.parquet as pq
    except ImportError:  # a standalone evaluate.py without pyarrow: it reads only the public copy (module docstring)
        return
    shown = display_path(folder)  # the folder, not each file: a Hub snapshot's files are links into its blobs/
    data = sorted(n for n in names if isinstance(n, str) and n.startswith("data/"))
    for name in data:
        stem, suffix = os.path.splitext(name)
        if suffix.lower() != ".parquet":
            continue
        copy = next(
            (n for n in data if os.path.splitext(n)[0] == stem and os.path.splitext(n)[1].lower() in TEXT_COPIES), None
        )
        key = tuple((digests or {}).get(n) for n in (name, copy))
        known = isinstance(key[0], str) and (copy is None or isinstance(key[1], str))
        if known and key in _CHECKED:
            continue
        _Pair(pa, pq, Path(folder), shown, name, copy, after).check()
        if known:
            _CHECKED.add(key)


class _Pair:
    """One Parquet file of a release and its public copy (None: it has none)."""

    def __init__(self, pa, pq, folder: Path, shown: str, parquet: str, copy: str | None, after: str):
        self.pa, self.pq, self.folder, self.after = pa, pq, folder, after
        self.parquet, self.copy = parquet, copy
        self.p_shown = os.path.join(shown, parquet)
        self.c_shown = os.path.join(shown, copy) if copy else None
        self.format = os.path.splitext(copy)[1].lower().lstrip(".").upper() if copy else ""

    def refuse(self, message: str):
        raise InputError(f"{message}; {self.after}")

    def check(self) -> None:
        try:
            table = self.pq.read_table(self.folder / self.parquet)  # every column: a corrupt page anywhere is found
        except Exception as exc:  # noqa: BLE001 -- pyarrow's errors for a cut or corrupt file vary by version
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.refuse(
                f"{self.p_shown}: the data file is not a readable Parquet file ({reason})"
            )  # as core/files says it
        if self.copy is None:
            if table.num_rows == 0:
                self.refuse(f"{self.p_shown} holds no rows (a release's data file always has some)")
            return
        copy = self.read_copy()
        missing = [c for c in copy.column_names if c not in table.column_names]
        if missing:
            self.refuse(
                f"{self.c_shown} and {self.p_shown} are not the same table: the Parquet lacks column(s) "
                f"{', '.join(map(repr, missing))} of the {self.format}"
            )
        rows = min(copy.num_rows, table.num_rows)
        first = None  # (row, column position, the two cells) of the first difference: the earliest row, leftmost
        for at, column in enumerate(copy.column_names):
            mine, theirs = copy[column].slice(0, rows), self.texts(table[column].slice(0, rows))
            same = self.pa.compute.equal(mine, theirs)
            if not self.pa.compute.all(same, min_count=0).as_py():
                k = self.pa.compute.index(same, False).as_py()
                if first is None or k < first[0]:
                    first = (k, at, mine[k].as_py(), theirs[k].as_py())
        if first is not None:
            k, at, a, b = first
            self.refuse(
                f"{self.c_shown} and {self.p_shown} disagree at row {k + 1}{self.line_of(k)}, column "
                f"{copy.column_names[at]!r}: {_show(a)} in the {self.format}, {_show(b)} in the Parquet"
            )
        if copy.num_rows != table.num_rows:
            only = self.c_shown if copy.num_rows > rows else self.p_shown
            self.refuse(
                f"{self.c_shown} holds {copy.num_rows} rows but {self.p_shown} holds {table.num_rows}: the "
                f"two copies of the table disagree from row {rows + 1}, which is in {only} only"
            )
        if table.num_rows == 0:
            self.refuse(f"{self.p_shown} and {self.c_shown} hold no rows (a release's data file always has some)")

    def texts(self, column):
        """A Parquet column as the public file's cells (`as_text`), in bulk where pyarrow
        writes values as str() does (text, bools, integers)."""
        pa, pc = self.pa, self.pa.compute
        kind = column.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            return column.cast(pa.string()).fill_null("")
        if pa.types.is_boolean(kind):
            return pc.if_else(column, "true", "false").fill_null("")
        if pa.types.is_integer(kind):
            return column.cast(pa.string()).fill_null("")
        return pa.chunked_array([pa.array([as_text(v) for v in column.to_pylist()], pa.string())])

    def read_copy(self):
        """The public copy as a table of text (no value converted, an empty cell empty, an
        empty line skipped), its header checked as the kinds' readers check it."""
        pa = self.pa
        path = self.folder / self.copy
        text = read_text(path, "data file")  # not UTF-8: named by line and column
        delimiter = TEXT_COPIES[os.path.splitext(self.copy)[1].lower()]
        if delimiter is None:
            return _json_lines(pa, text, self.c_shown, self.refuse)
        try:
            header = next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), [])
        except csv.Error as exc:
            self.refuse(f"{self.c_shown}:1: not a valid {self.format} ({exc})")
        check_header(header, self.c_shown)
        pa_csv = pa.csv
        try:
            return pa_csv.read_csv(
                pa.BufferReader(text.encode("utf-8")),
                read_options=pa_csv.ReadOptions(column_names=header, skip_rows=1),
                parse_options=pa_csv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
                convert_options=pa_csv.ConvertOptions(
                    column_types={c: pa.string() for c in header},
                    strings_can_be_null=False,
                    quoted_strings_can_be_null=False,
                ),
            )
        except Exception as exc:  # noqa: BLE001 -- a row with too many or too few cells, a quote left open
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.refuse(f"{self.c_shown}: not a valid {self.format} ({reason})")

    def line_of(self, row: int) -> str:
        """' (line N of the CSV)' for data row `row` (from 0) of the public copy, counted as
        the reader above counts rows (empty lines skipped); only when a row is named."""
        delimiter = TEXT_COPIES[os.path.splitext(self.copy)[1].lower()]
        if delimiter is None:
            return ""
        reader = csv.reader(
            io.StringIO(read_text(self.folder / self.copy, "data file"), newline=""), delimiter=delimiter
        )
        next(reader, None)
        seen, end = 0, reader.line_num
        for cells in reader:
            start, end = end + 1, reader.line_num  # a quoted cell may run over several lines: where the row starts
            if cells:
                if seen == row:
                    return f" (line {start} of the {self.format})"
                seen += 1
        return ""


def _json_lines(pa, text: str, shown: str, refuse):
    """A JSON-lines copy as a table of text (its values as `as_text` writes them), its columns
    the first record's keys."""
    records = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            refuse(f"{shown}:{n}: not a JSON object per line ({exc})")
        if not isinstance(record, dict):
            refuse(f"{shown}:{n}: not a JSON object per line")
        records.append(record)
    columns = list(records[0]) if records else []
    return pa.table({c: pa.array([as_text(r.get(c)) for r in records], pa.string()) for c in columns})


def _show(value) -> str:
    text = repr(value)  # quoted, a newline escaped: the message stays on one line
    return text if len(text) <= 80 else text[:77] + "...'"

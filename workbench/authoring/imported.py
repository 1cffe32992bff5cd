"""Imported tables: a published benchmark's items as one Parquet table under templates/, beside
the YAML files people write by hand.

`workbench import` of a file of a million rows cannot write one YAML record per item (ruamel
took most of the time, and a template file past 16 MiB is refused). A kind's importer gives an
`ImportedTable` instead, whose rows are read from the published file a chunk at a time, and
`write_table` writes them as Parquet row groups under a temporary name, renamed when every row is
written and checked: an interrupted or refused import leaves no table.

Each row is one entry of a template file as the importer would have written it: the column
`template` names its template (the file it would have been in, e.g. a bias type), every other
column is a field of the entry (`source.X`: the field X of its `source` mapping; a null cell is
a field the entry leaves out). The table's schema metadata (key `workbench`, kept when the table
is read and written again with pyarrow) gives the template files' `format`, the list their
entries are in (`key`: `pairs`), the fields every template has (`fields`: the published file's
layout) and each template's own (`per_template`, where `{template}` stands for its id: its bias
type, its description). `template_files` reads a table back as the template files it stands for, so the
kind's own parser reads an imported item as it reads a hand-written one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from ..core.errors import Problem, display_path
from .files import RawFile

TABLE_FORMAT = "workbench-imported-table/1"
META_KEY = "workbench"
TEMPLATE = "template"  # the column naming each row's template
TYPES = ("string", "int64")


class ReadAgain(Exception):
    """Raised by an `ImportedTable`'s quick read (`careful=False`) where it cannot be sure it reads
    the file as the careful one does: the table is written again from the start, carefully."""


@dataclass
class ImportedTable:
    """What a kind's importer returns, for the table of a published file, in place of the YAML text
    of a template file: `read(advance, careful)` yields the rows a chunk at a time ({column:
    values, a list or an Arrow array}, every column of `columns`), telling `advance(n)` each n of
    the `size` bytes it reads; it raises the file's problems (an InputError) when it has read them
    all. With careful=False it may read the quick way and raise ReadAgain where that is not sure."""

    format: str  # the format its template files would have (workbench-<kind>/1)
    key: str  # the list an entry is in, in such a file (pairs)
    columns: tuple[tuple[str, str], ...]  # (name, "string" or "int64"), `template` first
    read: Callable[[Callable[[int], None], bool], Iterator[dict[str, Any]]]
    size: int  # bytes `read` reads (the progress bar's total)
    fields: dict  # what every template has (the published file's layout)
    per_template: dict[str, str]  # what each template has besides, `{template}` its id ("{template} pairs ...")

    def __post_init__(self):
        if not self.columns or self.columns[0][0] != TEMPLATE:
            raise ValueError(f"an imported table's first column is {TEMPLATE!r}")
        wrong = [c for c, t in self.columns if t not in TYPES]
        if wrong:
            raise ValueError(f"imported table columns {', '.join(wrong)}: a column is one of {', '.join(TYPES)}")


def partial_name(target: Path) -> Path:
    """Where `write_table` writes before the rename: hidden, and not a table `find_tables` reads."""
    return target.with_name(f".{target.name}.partial")


def write_table(table: ImportedTable, target: Path, what: str) -> int:
    """Write `table` to `target` (templates/NAME.parquet), one row group per chunk read, with a
    progress bar (`what`: its description) of the bytes read; returns the rows written. Written
    under `partial_name(target)` and renamed once every row is written and the importer raised
    nothing, so an interruption (Ctrl-C, a problem in the file, a full disk) leaves no table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..core.progress import progress_bar

    meta = {
        "format": TABLE_FORMAT,
        "templates_format": table.format,
        "key": table.key,
        "fields": table.fields,
        "per_template": table.per_template,
    }
    schema = pa.schema(
        [(c, getattr(pa, t)()) for c, t in table.columns], metadata={META_KEY: json.dumps(meta, ensure_ascii=False)}
    )
    partial = partial_name(target)

    def write(careful: bool) -> int:
        rows = 0
        with progress_bar(what, table.size, unit="bytes") as advance:
            with pq.ParquetWriter(partial, schema, compression="zstd", write_statistics=False) as writer:
                for chunk in table.read(advance, careful):
                    batch = pa.table(chunk, schema=schema)
                    writer.write_table(batch)
                    rows += batch.num_rows
        return rows

    try:
        try:
            rows = write(careful=False)
        except ReadAgain:
            rows = write(careful=True)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return rows


# -- reading ------------------------------------------------------------------------------------------------------
def table_meta(path: Path) -> tuple[dict | None, list[Problem]]:
    """An imported table's metadata, read without its rows; None and a problem for a Parquet file
    that is not one, or cannot be read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shown = display_path(path)
    try:
        found = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as exc:
        return None, [Problem(shown, None, "", f"cannot read the table: {exc}")]
    try:
        meta = json.loads(found.get(META_KEY.encode(), b"null"))
    except ValueError:
        meta = None
    if not (
        isinstance(meta, dict) and meta.get("format") == TABLE_FORMAT and isinstance(meta.get("per_template"), dict)
    ):
        return None, [
            Problem(
                shown,
                None,
                "",
                f"a Parquet file under the templates folder that is not a table `workbench import` wrote "
                f"({TABLE_FORMAT}): move it elsewhere",
            )
        ]
    return meta, []


@dataclass
class TableFile(RawFile):
    """One template of an imported table, as the template file it stands for; a problem's line is
    the row of the table (from 1) of the entry it is in."""

    key: str = ""
    rows: tuple[int, ...] = ()

    def line(self, path: tuple) -> int | None:
        if len(path) >= 2 and path[0] == self.key and isinstance(path[1], int) and path[1] < len(self.rows):
            return self.rows[path[1]] + 1
        return None


def template_files(path: Path) -> Iterator[tuple[TableFile | None, list[Problem]]]:
    """Each template of the imported table `path` as the template file it stands for (its
    templates in sorted order, its entries in the table's order), one at a time: the kind's
    parser reads it as it reads a YAML file. (None, problems) for a table that cannot be read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta, problems = table_meta(path)
    if meta is None:
        yield None, problems
        return
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        yield None, [Problem(display_path(path), None, "", f"cannot read the table: {exc}")]
        return
    shown, key = display_path(path), meta["key"]
    where: dict[str, list[int]] = {}
    for i, t in enumerate(table[TEMPLATE].to_pylist()):
        where.setdefault(t, []).append(i)
    names = [c for c in table.column_names if c != TEMPLATE]
    for template in sorted(where):
        columns = table.take(where[template]).select(names).to_pydict()
        entries = [_entry(names, values) for values in zip(*(columns[c] for c in names))]
        data = {
            "format": meta.get("templates_format"),
            "id": template,
            **(meta.get("fields") or {}),
            **own_fields(meta, template),
            key: entries,
        }
        yield TableFile(path, data, shown, key=key, rows=tuple(where[template])), []


def _entry(names: list[str], values: tuple) -> dict[str, Any]:
    """A row as its template file's entry: `a.b` is the field b of the entry's mapping a; a null is left out."""
    entry: dict[str, Any] = {}
    for name, value in zip(names, values):
        if value is None:
            continue
        outer, dot, inner = name.partition(".")
        if dot:
            entry.setdefault(outer, {})[inner] = value
        else:
            entry[name] = value
    return entry


def own_fields(meta: dict, template: str) -> dict:
    """The fields of one template of a table (`per_template`, its id put in)."""
    return {k: v.replace("{template}", template) if isinstance(v, str) else v for k, v in meta["per_template"].items()}


def templates_of(path: Path) -> list[str]:
    """The template ids of an imported table, reading its `template` column alone."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    return sorted(pc.unique(pq.read_table(path, columns=[TEMPLATE])[TEMPLATE]).to_pylist())


def descriptions(path: Path) -> dict[str, str]:
    """{template id: its description} of an imported table, from its metadata and template column."""
    meta, _ = table_meta(path)
    if meta is None:
        return {}
    found = {t: own_fields(meta, t).get("description") for t in templates_of(path)}
    return {t: text for t, text in found.items() if isinstance(text, str)}

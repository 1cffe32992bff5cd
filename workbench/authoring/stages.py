"""Authoring for the kinds whose rows are lexicons crossed with templates.

Each such kind writes YAML files (`format: workbench-<kind>/1`) that expand into the rows of
its public file layout (a probe CSV, a template TSV, a pair CSV). People validate *units* — a
stereotype statement, a template, a sentence pair — rather than every row: a statement probed
with every identity of its category is judged once for all of its probes. The stages are the
same for every such kind (its `Authoring` declares the rest):

    expand     template files -> rows in the public layout, each with the unit it belongs to
    queue      one item per unit: its text, the details an annotator needs, how many rows it stands for
    validated  the units kept under the configured policy (kinds/validated.py)
    released   the rows of kept units

A kind supplies an `Authoring`: how to read one file into rows, its columns and data file, and
the words its card uses. Everything else (stages, release layout, card, changelog) is here.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from ..core.errors import Problem
from ..core.ids import normalise_text, short_hash
from ..core.labels import VALIDITY_SCHEME, LabelScheme
from ..core.stage import Output, Stage
from ..release import generic
from .files import (
    RawFile,
    ReadsTemplateFiles,
    fail_on_errors,
    find_tables,
    find_template_files,
    nested_unknown_fields,
    nonempty_string,
    read_file,
    unknown_fields,
)
from .validated import Validated

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]+)\s*\}\}")


# -- what a kind supplies -------------------------------------------------------------------------------
@dataclass
class Row:
    """One row of the public layout, and the unit people validate it through."""

    record: dict[str, Any]  # the public layout's columns
    row_id: str  # stable and unique in the release
    unit_id: str  # what annotators label (several rows may share one)
    unit_text: str  # the text they judge
    domain: str  # the grouping annotators filter by (category, attribute, bias type)
    details: list[tuple[str, str]] = field(default_factory=list)  # (label, text) shown beside the text
    where: tuple = ()  # field path in the file, for problems


# Columns the release's Parquet adds to every row, beside the kind's own columns.
RESERVED_COLUMNS = frozenset({"row_id", "unit_id", "template_id", "domain", "label", "entry"})
# Each of them and the field of a release row it is
RELEASE_FIELDS = (
    ("row_id", "row_id"),
    ("unit_id", "item_id"),
    ("template_id", "template_id"),
    ("domain", "domain"),
    ("label", "label"),
    ("entry", "entry"),
)


@dataclass(frozen=True)
class Authoring:
    kind: str
    parse: Callable[[RawFile, str], tuple[list[Row], list[Problem]]]  # (file, template id) -> rows
    columns: tuple[str, ...]  # the public layout's columns, in order
    data_file: str  # where the public layout goes in a release
    unit: str  # "stereotype statement", "template", "sentence pair"
    about: str  # the card's first paragraph
    fields: str  # the card's description of the files
    top_level: frozenset[str]  # the fields a file may have (besides format, id, description)
    question: str
    text_column: str  # the column a changelog quotes for a row
    second_text_column: str | None = None  # and beside it (a pair's other sentence)
    # A row edited in place (same entry of its file, new text) is "template changed" in the changelog,
    # or the reason given here for the list its entry is in, e.g. (("pairs", "pair edited"),).
    edit_reasons: tuple[tuple[str, str], ...] = ()
    delimiter: str = ","  # of the public file, when it is CSV/TSV
    public_format: str = "csv"  # "csv" (with `delimiter`) or "jsonl": the public file's layout
    file_format: str | None = None  # what `format:` template files say (default workbench-<kind>/1)
    # The keys each nested mapping may have, by pattern (`pairs.[]`: every entry of `pairs`;
    # `identities.*`: every value of `identities`); mappings of free names (groups, categories) stay open.
    nested: dict = field(default_factory=dict)
    # (published column, record key) of each column of the published file the kind reads, for a
    # release laid out as the published file (`build --layout original`, Layout.write_original): a
    # row's cell there is its record's value (a fix applied), any other column's the `source` kept
    published: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        clash = sorted(set(self.columns) & RESERVED_COLUMNS)
        if clash:  # the release's Parquet carries these beside the kind's columns: one would overwrite the other
            raise ValueError(
                f"kind {self.kind!r}: column(s) {', '.join(clash)} are reserved for the release's "
                f"validation fields ({', '.join(sorted(RESERVED_COLUMNS))}); rename them"
            )
        if self.public_format not in ("csv", "jsonl"):
            raise ValueError(f"kind {self.kind!r}: public_format must be 'csv' or 'jsonl', not {self.public_format!r}")

    @property
    def format(self) -> str:
        return self.file_format or f"workbench-{self.kind}/1"

    @property
    def parquet_file(self) -> str:
        return str(Path(self.data_file).with_suffix(".parquet"))

    @property
    def scheme(self) -> LabelScheme:
        return LabelScheme(f"{self.kind}-validity", VALIDITY_SCHEME.choices, question=self.question)


# -- reading files: helpers the parsers share ----------------------------------------------------------------
def text_field(value: Any, raw: RawFile, path: tuple, problems: list[Problem], what: str) -> str | None:
    """A non-empty string, stripped and whitespace-normalised; else a problem at `path`."""
    text = nonempty_string(value, raw, path, problems, what)
    return None if text is None else normalise_text(text)


def text_list(value: Any, raw: RawFile, path: tuple, problems: list[Problem], what: str) -> list[str]:
    """A non-empty list of distinct texts (duplicates are reported, kept once)."""
    if not isinstance(value, list) or not value:
        problems.append(raw.problem(path, f"{what} must be a non-empty list"))
        return []
    out: list[str] = []
    for i, item in enumerate(value):
        text = text_field(item, raw, path + (i,), problems, what[:-1] if what.endswith("s") else what)
        if text is None:
            continue
        if text in out:
            problems.append(raw.problem(path + (i,), f"{text!r} is listed twice"))
            continue
        out.append(text)
    return out


def paired_lists(
    value: Any, raw: RawFile, key: str, sides: tuple[str, str], problems: list[Problem], noun: str
) -> list[tuple[str, str]]:
    """Two lists under `key` (e.g. words: {profane: [...], nice: [...]}) paired by position."""
    first, second = sides
    needs = f"{key} needs two lists of the same length, `{first}:` and `{second}:`"
    if not isinstance(value, dict):
        problems.append(raw.problem((key,), needs))
        return []
    unknown_fields(raw, (key,), value, sides, problems)
    missing = [side for side in sides if side not in value]
    if missing:
        problems.append(raw.problem((key,), f"{needs} (missing: {', '.join(missing)})"))
    if set(value) != set(sides):
        return []
    a = text_list(value[first], raw, (key, first), problems, key)
    b = text_list(value[second], raw, (key, second), problems, key)
    if a and b and len(a) != len(b):
        problems.append(
            raw.problem(
                (key,),
                f"{len(a)} {first} and {len(b)} {second} {noun}: the i-th {first} "
                f"{noun[:-1]} is paired with the i-th {second} {noun[:-1]}",
            )
        )
        return []
    return list(zip(a, b))


def grouped_lists(value: Any, raw: RawFile, path: tuple, problems: list[Problem], what: str) -> dict[str, list]:
    """A mapping group -> non-empty list (identities per category, statements per category)."""
    if not isinstance(value, dict) or not value:
        problems.append(raw.problem(path, f"{what} must map each group to a list, e.g. `religion: [...]`"))
        return {}
    out = {}
    for group, items in value.items():
        name = text_field(group, raw, path + (group,), problems, "group name")
        if name is not None:
            out[name] = items
    return out


def placeholders_in(
    text: str,
    raw: RawFile,
    path: tuple,
    problems: list[Problem],
    needed: tuple[str, ...],
    allowed: tuple[str, ...] | None = None,
) -> bool:
    """Each of `needed` exactly once and nothing outside `allowed`; False (with problems) otherwise."""
    found = PLACEHOLDER.findall(text)
    allowed = allowed or needed
    ok = True
    for name in found:
        if name not in allowed:
            problems.append(
                raw.problem(
                    path,
                    f"unknown placeholder {{{{{name}}}}} (this kind knows "
                    f"{', '.join('{{' + a + '}}' for a in allowed)})",
                )
            )
            ok = False
    for name in needed:
        n = found.count(name)
        if n != 1:
            problems.append(
                raw.problem(path, f"{'no' if n == 0 else n} {{{{{name}}}}} in {text!r}: write it exactly once")
            )
            ok = False
    return ok


def fill(text: str, values: dict[str, str], capitalise: bool = True) -> str:
    """The text with its placeholders replaced; a value opening the sentence is capitalised."""
    out = PLACEHOLDER.sub(lambda m: values[m.group(1)], text)
    out = normalise_text(out)
    if capitalise and PLACEHOLDER.match(text.strip()) and out[:1].islower():
        out = out[0].upper() + out[1:]
    return out


def row_hash(kind: str, *parts: str) -> str:
    return short_hash(kind, *parts, length=12)


# -- loading a project's files ---------------------------------------------------------------------------
def check_file(authoring: Authoring, raw: RawFile) -> tuple[list[Row], str | None, list[Problem]]:
    data = raw.data
    if not isinstance(data, dict):
        return (
            [],
            None,
            [raw.problem((), f"a {authoring.kind} template file is a mapping of fields, not a {type(data).__name__}")],
        )
    problems: list[Problem] = []
    fmt = data.get("format")
    if fmt is None:
        problems.append(raw.problem((), f"missing field: format (write `format: {authoring.format}`)"))
    elif fmt != authoring.format:
        problems.append(
            raw.problem(("format",), f"format {fmt!r} in a {authoring.kind} project; its files are {authoring.format}")
        )
        return [], None, problems
    known = authoring.top_level | {"format", "id", "description"}
    unknown_fields(raw, (), data, known, problems)
    nested_unknown_fields(raw, data, authoring.nested, problems)
    tid = text_field(data.get("id", raw.path.stem), raw, ("id",), problems, "id") or raw.path.stem
    rows, more = authoring.parse(raw, tid)
    problems += more
    seen: dict[str, Row] = {}
    for row in rows:
        if row.row_id in seen:
            problems.append(
                raw.problem(
                    row.where, f"the same row as {format_where(seen[row.row_id].where)}: {row.unit_text!r}", "warning"
                )
            )
        seen.setdefault(row.row_id, row)
    return list(seen.values()), tid, problems


def format_where(where: tuple) -> str:
    from .files import format_path

    return format_path(where) or "an earlier entry"


def template_sources(paths: list[Path]) -> tuple[int, Iterator[tuple[RawFile | None, list[Problem]]]]:
    """Every template a project's files hold, one at a time: each YAML or JSON file people write,
    and each template of an imported table (authoring/imported.py), read back as the template file
    it stands for. The one reader of a project's templates (`load` and the card's descriptions).
    Returns the number of files (a table's templates counted each, as the files they stand for),
    and (file, problems) for each (None: it could not be read)."""
    from .imported import table_meta, template_files, templates_of

    tables = find_tables(paths)
    files, problems = find_template_files(paths, tables=bool(tables))
    n = len(files) + sum(len(templates_of(t)) if table_meta(t)[0] else 1 for t in tables)

    def each() -> Iterator[tuple[RawFile | None, list[Problem]]]:
        if problems:
            yield None, problems
        for path in files:
            yield read_file(path)
        for table in tables:
            yield from template_files(table)

    return n, each()


def load_each(
    authoring: Authoring, paths: list[Path], problems: list[Problem]
) -> tuple[int, Iterator[tuple[str, list[Row]]]]:
    """The number of files, and (template id, its rows) for each file as it is read, so that only
    one file's rows are held at a time (an imported table's template may have a million); every
    problem of every file is added to `problems` as it is found. A row that another file already
    produced is reported and kept once; ids are unique."""
    n, sources = template_sources(paths)

    def each() -> Iterator[tuple[str, list[Row]]]:
        by_row: dict[str, str] = {}
        by_id: dict[str, str] = {}
        for raw, found in sources:
            problems.extend(found)
            if raw is None:
                continue
            rows, tid, found = check_file(authoring, raw)
            problems.extend(found)
            if tid is None or any(p.severity == "error" for p in found):
                continue
            if tid in by_id:
                problems.append(raw.problem(("id",), f"template id {tid!r} is also used by {by_id[tid]}"))
                continue
            by_id[tid] = raw.shown
            kept = []
            for row in rows:
                if row.row_id in by_row:
                    problems.append(
                        raw.problem(row.where, f"the same row as in {by_row[row.row_id]}: {row.unit_text!r}", "warning")
                    )
                    continue
                by_row[row.row_id] = raw.shown
                kept.append(row)
            yield tid, kept

    return n, each()


def load(authoring: Authoring, paths: list[Path]) -> tuple[list[tuple[str, Row]], int, list[Problem]]:
    """(template id, row) of every file, the number of files, and every problem of every file
    (`load_each`, its rows in one list)."""
    problems: list[Problem] = []
    n, files = load_each(authoring, paths, problems)
    out = [(tid, row) for tid, rows in files for row in rows]
    return out, n, problems


def check_project(authoring: Authoring, config) -> tuple[int, list[Problem]]:
    """`workbench validate`: the files' count and problems."""
    _, n, problems = load(authoring, [config.path("templates")])
    return n, problems


# -- the stages ------------------------------------------------------------------------------------------
def _pa():
    import pyarrow as pa

    return pa


def _details_type():
    pa = _pa()
    return pa.list_(pa.struct([("label", pa.string()), ("text", pa.string())]))


def expand_schema():
    pa = _pa()
    return pa.schema(
        [
            ("row_id", pa.string()),
            ("item_id", pa.string()),
            ("hypothesis", pa.string()),
            ("template_id", pa.string()),
            ("domain", pa.string()),
            ("subtopic", pa.string()),
            ("details", _details_type()),
            ("record", pa.string()),
            ("entry", pa.string()),
            ("order", pa.int64()),  # the row's place in the files as written (the queue serves items so)
        ]
    )


def entries(rows: list[tuple[str, Row]]) -> list[str]:
    """Where each row comes from in its file, stable when its text is edited: the field path, the
    row's place among the rows of that field (a template's rows for each group) and the template
    id, e.g. `pairs[2]#0 in age`."""
    from .files import format_path

    seen: Counter = Counter()
    out = []
    for tid, r in rows:
        where = (format_path(r.where), tid)
        out.append(f"{where[0]}#{seen[where]} in {tid}")
        seen[where] += 1
    return out


def queue_schema():
    pa = _pa()
    return pa.schema(
        [
            ("item_id", pa.string()),
            ("hypothesis", pa.string()),
            ("domain", pa.string()),
            ("subtopic", pa.string()),
            ("template_id", pa.string()),
            ("position", pa.int64()),
            ("details", _details_type()),
            ("n_samples", pa.int64()),
            ("domains", pa.list_(pa.string())),
        ]
    )


class Expand(ReadsTemplateFiles, Stage):
    """Template files -> rows of the public layout, each tied to the unit people validate."""

    name = "expand"
    format = 3  # 2: the entry column; 3: the order column
    sort_keys = [("domain", "ascending"), ("template_id", "ascending"), ("order", "ascending")]

    def __init__(self, authoring: Authoring):
        self.authoring = authoring

    def schema(self):
        return expand_schema()

    def settings(self, ctx):
        return {**super().settings(ctx), "format": self.authoring.format}

    reads_tables = True

    def compute(self, ctx, inputs, reused) -> Output:
        """One file at a time, each made an Arrow table column by column (a million rows as
        dicts, or as Row objects all at once, took gigabytes); the tables are put together."""
        import numpy as np

        pa = _pa()
        problems: list[Problem] = []
        n_files, files = load_each(self.authoring, [self.folder(ctx)], problems)
        dumps = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
        tables, done = [], 0
        for tid, rows in files:
            columns = {
                "row_id": [r.row_id for r in rows],
                "item_id": [r.unit_id for r in rows],
                "hypothesis": [r.unit_text for r in rows],
                "template_id": [tid] * len(rows),
                "domain": [r.domain for r in rows],
                "subtopic": [tid] * len(rows),
                "details": [[{"label": a, "text": b} for a, b in r.details] for r in rows],
                "record": [dumps(r.record) for r in rows],
                "entry": entries([(tid, r) for r in rows]),
                # the rows' place in the files as written
                "order": pa.array(np.arange(done, done + len(rows), dtype=np.int64)),
            }
            tables.append(pa.Table.from_pydict(columns, schema=expand_schema()))
            done += tables[-1].num_rows
        fail_on_errors(problems, f"{self.authoring.kind} templates", "workbench validate")
        table = pa.concat_tables(tables) if tables else expand_schema().empty_table()
        return Output(table, {"templates": n_files, "warnings": len(problems)})

    def counts(self, ctx, table, inputs, work):
        import pyarrow.compute as pc

        domains = table["domain"].value_counts().to_pylist()
        # No masked-sample counts for a kind that masks nothing: rows, in the kind's own word
        return {
            "templates": work["templates"],
            "rows": table.num_rows,
            "units": pc.count_distinct(table["item_id"]).as_py(),
            "by_domain": dict(sorted((d["values"], d["counts"]) for d in domains)),
            "warnings": work["warnings"],
        }


class Queue(Stage):
    """One item per unit, in expand's order (by domain and template, then as written in the files);
    `n_samples` is how many rows its label decides and
    `domains` every domain its rows are in (a template crossed with two identity groups is in
    both, so annotators can filter to or opt out of either; `domain` is the first)."""

    name = "queue"
    format = 3  # 2: the domains column; 3: items in written order (they were sorted by their text)
    upstream = ("expand",)
    reads_columns = {"expand": ("item_id", "hypothesis", "domain", "subtopic", "template_id", "details")}

    def schema(self):
        return queue_schema()

    def compute(self, ctx, inputs, reused) -> Output:
        """Each unit's first row in expand's order (by domain and template, then as written), its
        rows counted and its domains in the order its rows meet them: in Arrow, column by column
        (a million rows as dicts took gigabytes). Grouping without threads keeps the order of
        first appearance, of the groups and of each group's distinct domains."""
        import numpy as np
        import pyarrow.compute as pc

        pa = _pa()
        expand = inputs["expand"]
        at = pa.array(np.arange(expand.num_rows, dtype=np.int64))
        groups = (
            pa.table({"item_id": expand["item_id"], "domain": expand["domain"], "at": at})
            .group_by("item_id", use_threads=False)
            .aggregate([("at", "min"), ("at", "count"), ("domain", "distinct")])
        )
        order = pc.sort_indices(groups["at_min"])
        groups = groups.take(order)
        first = expand.take(groups["at_min"])
        columns = {
            "item_id": first["item_id"],
            "hypothesis": first["hypothesis"],
            "domain": first["domain"],
            "subtopic": first["subtopic"],
            "template_id": first["template_id"],
            "position": pa.array(np.arange(first.num_rows, dtype=np.int64)),
            "details": first["details"],
            "n_samples": groups["at_count"],
            "domains": groups["domain_distinct"],
        }
        schema = queue_schema()
        return Output(pa.table({c: columns[c].cast(schema.field(c).type) for c in schema.names}, schema=schema))

    def counts(self, ctx, table, inputs, work):
        import pyarrow.compute as pc

        return {"items": table.num_rows, "rows": pc.sum(table["n_samples"]).as_py() or 0}


class Released(Stage):
    """The rows of the units people kept, with the unit's final label."""

    name = "released"
    format = 2  # 2: the entry column
    upstream = ("expand", "validated")

    def schema(self):
        pa = _pa()
        return pa.schema([*expand_schema(), ("label", pa.string())])

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow.compute as pc

        validated = inputs["validated"]
        label = dict(zip(validated["item_id"].to_pylist(), validated["label"].to_pylist()))
        rows = inputs["expand"].filter(
            pc.is_in(inputs["expand"]["item_id"], value_set=_pa().array(sorted(label), _pa().string()))
        )
        table = rows.append_column(
            "label", _pa().array([label[i] for i in rows["item_id"].to_pylist()], _pa().string())
        )
        return Output(table, {"units": len(label), "rows": table.num_rows})

    def counts(self, ctx, table, inputs, work):
        return dict(work)


def stages(authoring: Authoring) -> list[Stage]:
    return [Expand(authoring), Queue(), Validated(authoring.scheme), Released()]


# -- the release --------------------------------------------------------------------------------------------
WRITE_CHUNK = 10_000  # rows a release laid out as the published file is written in at a time


class Layout:
    """write_release / read_release / card / identity for an authoring kind (what build calls)."""

    # the stage columns (expand's, released's) that its files, card and changelog never read:
    # build leaves them out of the rows it holds
    unread_columns = ("hypothesis", "subtopic", "details", "order")

    def __init__(self, authoring: Authoring):
        self.authoring = authoring

    def public_text(self, rows: list[dict]) -> str:
        a = self.authoring
        if a.public_format == "jsonl":
            lines = [
                json.dumps({c: json.loads(r["record"]).get(c) for c in a.columns}, ensure_ascii=False) for r in rows
            ]
            return "".join(line + "\n" for line in lines)
        out = io.StringIO()
        writer = csv.writer(out, delimiter=a.delimiter, lineterminator="\n")
        writer.writerow(a.columns)
        for r in rows:
            record = json.loads(r["record"])
            writer.writerow(["" if record.get(c) is None else _cell(record[c]) for c in a.columns])
        return out.getvalue()

    def write_release(self, rows: list[dict], staging: Path) -> list[str]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        a = self.authoring
        rows = sorted(rows, key=lambda r: (r["domain"], r["template_id"], r["item_id"], r["row_id"]))
        data = staging / a.data_file
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text(self.public_text(rows), encoding="utf-8")
        records = [json.loads(r["record"]) for r in rows]
        table = pa.Table.from_pylist(
            [
                {
                    **{c: rec.get(c) for c in a.columns},
                    "row_id": r["row_id"],
                    "unit_id": r["item_id"],
                    "template_id": r["template_id"],
                    "domain": r["domain"],
                    "label": r["label"],
                    "entry": r["entry"],
                }
                for r, rec in zip(rows, records)
            ]
        )
        pq.write_table(table, staging / a.parquet_file, compression="zstd", write_statistics=False, store_schema=True)
        return sorted({r["domain"] for r in rows})

    def read_release(self, folder: Path) -> list[dict]:
        import pyarrow.parquet as pq

        return pq.read_table(Path(folder) / self.authoring.parquet_file).to_pylist()

    @property
    def write_original(self):
        """`_write_original` for a kind that declares the published columns it reads (None for
        one that does not: its release has no layout of the published file)."""
        a = self.authoring
        return self._write_original if a.published and a.public_format == "csv" else None

    def _write_original(self, rows: list[dict], staging: Path) -> list[str] | None:
        """The release laid out as the published file (`build --layout original`): the public file
        has the published header (its index column too), delimiter and line ending, the rows in
        the published order; each cell is the row's record value for a column the kind reads (a
        fix applied), else the published cell its `source` keeps (absent: empty), so a row nobody
        changed is the published row field for field. The Parquet beside it has the same rows in
        the same order, with those columns and the release's own (sources/copies checks that both
        agree). None when the rows do not say how the file was laid out (an import that recorded
        no `layout`: a JSON-lines file, or a project imported before layouts were recorded)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        a = self.authoring
        if not rows:
            return None
        # every row's record carries the layout: kept once, checked the same; its position orders the rows
        layout, positions = None, []
        for k, r in enumerate(rows):
            rec = json.loads(r["record"])
            this = rec.get("layout")
            if k == 0:
                layout = this
            elif this != layout:
                return None
            if not isinstance(rec.get("position"), int):
                return None
            positions.append(rec["position"])
        if not isinstance(layout, dict):
            return None
        columns, id_column = list(layout["columns"]), layout.get("id_column")
        read = {_column_key(c): key for c, key in a.published}

        def cell(rec: dict, column: str) -> str:
            source = rec.get("source") or {}
            if column in source:  # not read by the kind, or read but published otherwise
                value = source[column]
            elif id_column is not None and column == id_column:
                value = rec.get("id")
            else:
                value = rec.get(read.get(_column_key(column), "\0"))
            return "" if value is None else _cell(value)

        order = sorted(range(len(rows)), key=lambda k: (positions[k], rows[k]["row_id"]))
        data = staging / a.data_file
        data.parent.mkdir(parents=True, exist_ok=True)
        where = {c: i for i, c in enumerate(columns)}
        tables = []
        with open(data, "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(
                f, delimiter=layout.get("delimiter") or a.delimiter, lineterminator=layout.get("newline") or "\n"
            )
            writer.writerow(columns)
            # a chunk of rows at a time, its records read again (a million records and cells held at
            # once took gigabytes); the Parquet's columns: the kind's, the published ones (a
            # published cell in place of a column of the same name), the release's own
            for at in range(0, len(order), WRITE_CHUNK):
                chunk = order[at : at + WRITE_CHUNK]
                records = [json.loads(rows[k]["record"]) for k in chunk]
                for rec in records:
                    rec.pop("layout", None)
                cells = [[cell(rec, c) for c in columns] for rec in records]
                writer.writerows(cells)
                table: dict[str, list] = {}
                for c in dict.fromkeys([*a.columns, *columns]):
                    table[c] = [row[where[c]] for row in cells] if c in where else [rec.get(c) for rec in records]
                for c, key in RELEASE_FIELDS:
                    table[c] = [rows[k][key] for k in chunk]
                tables.append(pa.Table.from_pydict(table))
        pq.write_table(
            pa.concat_tables(tables, promote_options="permissive"),
            staging / a.parquet_file,
            compression="zstd",
            write_statistics=False,
            store_schema=True,
        )
        return sorted({r["domain"] for r in rows})

    def card(self, release) -> str:
        a = self.authoring
        fields = a.fields
        if getattr(release, "layout", "workbench") == "original":  # the public file is the published file's layout
            origin = release.config.origin
            fields = (
                f"`{a.data_file}` is laid out as the published file"
                + (f" `{origin.file}`" if origin is not None and origin.file else "")
                + ": its columns in their order (its index column too) and its rows in the published order. "
                f"`{a.parquet_file}` has the same rows in the same order, with those columns, the kind's "
                f"({', '.join(f'`{c}`' for c in a.columns)}) and `row_id`, `unit_id`, `template_id`, "
                "`domain`, `entry` and the item's `label`."
            )
        text = generic.card(
            release,
            kind_name=a.kind,
            about=a.about,
            fields=fields,
            data_files={"all": a.parquet_file},
            templates=self.descriptions(release),
        )
        return text.rstrip("\n") + "\n\n" + self.funnel(release)

    def descriptions(self, release) -> dict[str, str]:
        """template id -> the `description` its file gives, for the templates this release has rows of."""
        from .imported import descriptions

        released = {r["template_id"] for r in release.rows}
        folder = release.config.path("templates")
        files, _ = find_template_files([folder])
        found: dict[str, str] = {}
        for path in files:
            raw, _ = read_file(path)
            data = raw.data if raw is not None else None
            if isinstance(data, dict) and isinstance(data.get("description"), str):
                found.setdefault(normalise_text(str(data.get("id") or path.stem)), data["description"])
        for table in find_tables([folder]):  # its metadata alone, not its rows
            for tid, text in descriptions(table).items():
                found.setdefault(normalise_text(tid), text)
        return {tid: normalise_text(text) for tid, text in found.items() if tid in released and text.strip()}

    def funnel(self, release) -> str:
        from ..annotation.summary import OTHER_COLUMNS

        a = self.authoring
        ws = release.workspace
        expand, queue, validated = ((ws.manifest(s) or {}).get("counts", {}) for s in ("expand", "queue", "validated"))
        units_released = len({r["item_id"] for r in release.rows})
        # the scheme's decisions as the summary lists them (a renewal's audit, else the kind's validation)
        decisions = [c for c in release.summary.get("columns", []) if c not in OTHER_COLUMNS] or list(a.scheme.ids)
        kept = release.summary.get("kept") or list(a.scheme.kept_ids())
        steps = [
            ["template files", expand.get("templates", 0)],
            ["rows expanded", expand.get("rows", 0)],
            [f"{a.unit}s to validate (the queue)", queue.get("items", 0)],
            [f"{a.unit}s kept as {' or '.join(kept)}", validated.get("kept", 0)],
            [f"{a.unit}s released", units_released],
            ["rows released", len(release.rows)],
        ]
        per = Counter(r["domain"] for r in release.rows)
        units = Counter(d for d, _ in {(r["domain"], r["item_id"]) for r in release.rows})
        return "\n".join(
            [
                "## Validation funnel",
                "",
                f"Annotators judged each {a.unit} once ({' / '.join(decisions)}), not every row it expands "
                f"into; a {a.unit}'s rows are released when it is kept as {' or '.join(kept)}.",
                "",
                generic.markdown_table(["step", "count"], steps),
                "",
                generic.markdown_table(
                    ["group", f"{a.unit}s", "rows"], [[d, units[d], n] for d, n in sorted(per.items())]
                ),
                "",
            ]
        )

    @property
    def released_fields(self) -> tuple[str, ...]:
        """The public layout's columns besides the text (changes.released): a change of any is an edit."""
        a = self.authoring
        return tuple(c for c in a.columns if c not in (a.text_column, a.second_text_column))

    def identity(self, r: dict) -> tuple[str, str, str, str]:
        """What changes are counted by: the row's id, its text (a pair's two sentences), its group and its template."""
        a = self.authoring
        text = str(r[a.text_column]) + (f" / {r[a.second_text_column]}" if a.second_text_column else "")
        return r["row_id"], text, r["domain"], r["template_id"]

    def edit(self, r: dict) -> tuple[str, str] | None:
        """The row's entry in its file and the reason an edit there is given (changes.compare);
        None for a release built before entries were recorded."""
        if not r.get("entry"):
            return None
        field = re.split(r"[.\[#]", r["entry"], maxsplit=1)[0]
        return r["entry"], dict(self.authoring.edit_reasons).get(field, "template changed")


def release_without(authoring: Authoring, source: str, removed: set[str], folder: Path) -> tuple[Path, int] | None:
    """A release folder's public file without the rows `removed` names (by row id), written into
    `folder` in the same layout: the middle step of a renewal's move (evaluation/versions.py), for a
    release whose changelog names rows by their release ids (a probe, a template's prompt). The
    public file and the Parquet hold the same rows in the same order (`Layout.write_release`).
    None when `source` is not such a folder, or none of its rows is removed."""
    import pyarrow.parquet as pq

    release = Path(source)
    public, parquet = release / authoring.data_file, release / authoring.parquet_file
    if not (release.is_dir() and public.is_file() and parquet.is_file()):
        return None
    ids = pq.read_table(parquet, columns=["row_id"])["row_id"].to_pylist()
    text = public.read_text(encoding="utf-8")
    if authoring.public_format == "jsonl":
        header, rows = [], text.splitlines(keepends=True)
    else:
        parsed = list(csv.reader(io.StringIO(text), delimiter=authoring.delimiter))
        header, rows = parsed[:1], parsed[1:]
    if len(rows) != len(ids):
        return None  # not as this layout writes it
    kept = [r for r, i in zip(rows, ids) if i not in removed]
    if len(kept) == len(rows):
        return None
    target = Path(folder) / Path(authoring.data_file).name
    if authoring.public_format == "jsonl":
        target.write_text("".join(kept), encoding="utf-8")
    else:
        with open(target, "w", encoding="utf-8", newline="") as f:
            csv.writer(f, delimiter=authoring.delimiter, lineterminator="\n").writerows([*header, *kept])
    return target, len(rows) - len(kept)


def _column_key(name: str) -> str:
    """A column name compared case- and separator-blind (`Sent_More` is `sent_more`)."""
    return re.sub(r"[-_ ]", "", name.strip().lower())


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def kind_fields(authoring: Authoring) -> dict:
    """The `Kind` fields of an authoring kind: its stages, scheme, queue and release."""
    return {
        "stages": lambda: stages(authoring),
        "scheme": authoring.scheme,
        "queue_stage": "queue",
        "release_stage": "released",
        "run_to": "queue",
        "release": Layout(authoring),
        "check_templates": lambda config: check_project(authoring, config),
        # no masked-LM generation step, and its evaluators ask no entailment classifier for labels
        "unused_settings": ("generate", "evaluate.label_overrides"),
    }


# -- example projects (demo and tests) -----------------------------------------------------------------------
def write_example_project(folder: Path, kind: str, files: dict[str, str]) -> Path:
    """A project of `kind` in FOLDER: workbench.toml and templates/ with `files`; returns FOLDER."""
    folder = Path(folder)
    (folder / "templates").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / "templates" / name).write_text(text, encoding="utf-8")
    (folder / "workbench.toml").write_text(
        f"# An example {kind} benchmark this project wrote (mild words of its own).\n"
        f'[project]\nname = "{kind}-example"\nkind = "{kind}"\n'
        f"license = \"mit\"   # the data's licence, the maintainer's choice (no default)\n",
        encoding="utf-8",
    )
    return folder


def write_example_labels(project: Path, every: int = 4) -> Path:
    """A simulated annotator for the demo (for `annotate --labels-from`): every `every`-th unit of
    the queue is invalid, one more incoherent, the rest valid. The queue must exist (`workbench run`)."""
    import pyarrow.parquet as pq

    from ..core.config import load_config

    project = Path(project)
    queue = pq.read_table(load_config(project / "workbench.toml").path("workspace") / "queue" / "data.parquet")
    lines = []
    for r in queue.select(["item_id", "position"]).to_pylist():
        label = "invalid" if r["position"] % every == every - 1 else "incoherent" if r["position"] == 1 else "valid"
        lines.append(json.dumps({"item_id": r["item_id"], "label": label}))
    path = project / "annotator.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path

"""CrowS-Pairs-style pairs, hand-written or from templates with a group slot (`format: workbench-crows-pairs/1`).

    format: workbench-crows-pairs/1
    id: gender-roles
    bias_type: gender
    groups:                           # the i-th `more` group is paired with the i-th `less` group
      more: [women]                   # the group the sentence stereotypes (sent_more)
      less: [men]
    templates:
      - "{{GROUP}} are bad at driving."
      - {text: "{{GROUP}} are strong leaders.", direction: antistereo}
    pairs:                            # written out in full
      - {more: "...", less: "...", direction: stereo}

`direction` is CrowS-Pairs' `stereo_antistereo` (default stereo). Annotators validate each pair.
A pair imported from a published file (`workbench import`, docs/renewing.md) also has its `id`,
its `position` (its row in the file, from 0) and, under `source`, the file's other columns (and a
column the kind reads whose cell was published otherwise than it is read, e.g. ` Stereo`); its
text is kept exactly as published. Such a file's `layout` records the published file's header,
id column, delimiter and line ending, so a release can be laid out as that file (`build --layout
original`).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Iterator

from ...authoring.files import nonempty_string
from ...authoring.stages import Authoring, Row, fill, paired_lists, placeholders_in, row_hash, text_field
from .words import VALIDATORS

COLUMNS = ("id", "sent_more", "sent_less", "stereo_antistereo", "bias_type", "template")
DIRECTIONS = ("stereo", "antistereo")


def validators_line(annotations, gold: str | None) -> str | None:
    """What CrowS-Pairs' own validators said of a published pair (its `annotations`: each
    annotator's list of bias types, "[['age'], ['age', 'disability']]" in the CSV, a list in
    JSON lines) and its gold label (the pair's `bias_type`), as one line of the audit:
    "5 annotators: age 4 · disability 1 · gold age". None when the file has no annotations."""
    if isinstance(annotations, str):  # as a CSV publishes them: a few texts repeated over every pair
        return _validators_line(annotations, gold)
    return _validators_line.__wrapped__(annotations, gold)


@functools.lru_cache(maxsize=4096)
def _validators_line(annotations, gold: str | None) -> str | None:
    import ast
    from collections import Counter

    if annotations is None or annotations == "":
        return None
    votes = annotations
    if isinstance(votes, str):
        try:
            votes = ast.literal_eval(votes.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(votes, (list, tuple)):
        return None
    votes = [[v] if isinstance(v, str) else list(v) if isinstance(v, (list, tuple)) else [] for v in votes]
    counts = Counter(str(t) for v in votes for t in dict.fromkeys(v))
    named = " · ".join(f"{t} {n}" for t, n in sorted(counts.items(), key=lambda c: (-c[1], c[0])))
    who = f"{len(votes)} annotator" + ("" if len(votes) == 1 else "s")
    said = f"{who}: {named or 'no bias type'}" if votes else "no annotations published"
    return said + (f" · gold {gold}" if gold else "")


def _direction(value, raw, path, problems) -> str | None:
    if value not in DIRECTIONS:
        problems.append(raw.problem(path, f"direction must be {' or '.join(DIRECTIONS)}, not {value!r}"))
        return None
    return value


def _entry(item, raw, path, problems, text_key: str) -> tuple[dict, tuple] | None:
    """A list entry that is a text or a mapping with `text_key` and `direction`."""
    if isinstance(item, str):
        item = {text_key: item}
    if not isinstance(item, dict):
        problems.append(raw.problem(path, f"an entry is a text or a mapping with {text_key} and direction"))
        return None
    return item, path


def parse(raw, tid: str) -> tuple[list[Row], list]:
    problems: list = []
    data = raw.data
    bias_type = text_field(data.get("bias_type"), raw, ("bias_type",), problems, "bias_type")
    rows: list[Row] = []

    layout = data.get("layout")
    if layout is not None and not (isinstance(layout, dict) and isinstance(layout.get("columns"), list)):
        problems.append(
            raw.problem(
                ("layout",),
                "layout is the published file's header (columns, id_column, "
                "delimiter, newline), as `workbench import` records it",
            )
        )
        layout = None

    def add(
        more: str,
        less: str,
        direction: str,
        template: str,
        path: tuple,
        pid: str | None = None,
        source: dict | None = None,
        position: int | None = None,
    ) -> None:
        if more == less:
            problems.append(raw.problem(path, f"the two sentences are the same ({more!r}): a pair must differ"))
            return
        pid = pid or "cp-" + row_hash("crows-pairs", more, less)
        record = {
            "id": pid,
            "sent_more": more,
            "sent_less": less,
            "stereo_antistereo": direction,
            "bias_type": bias_type,
            "template": template,
            **({"source": source} if source else {}),
            **({"position": position, "layout": layout} if position is not None and layout else {}),
        }
        votes = validators_line((source or {}).get("annotations"), bias_type)
        rows.append(
            Row(
                record,
                pid,
                pid,
                more,
                bias_type or "",
                [("less stereotyping", less), ("direction", direction), *([(VALIDATORS, votes)] if votes else [])],
                path,
            )
        )

    templates = data.get("templates") or []
    if templates:
        groups = paired_lists(data.get("groups"), raw, "groups", ("more", "less"), problems, "groups")
        for i, item in enumerate(templates if isinstance(templates, list) else []):
            entry = _entry(item, raw, ("templates", i), problems, "text")
            if entry is None:
                continue
            item, path = entry
            text = text_field(item.get("text"), raw, path + ("text",), problems, "template")
            direction = _direction(item.get("direction", "stereo"), raw, path + ("direction",), problems)
            if (
                text is None
                or direction is None
                or not placeholders_in(text, raw, path + ("text",), problems, ("GROUP",))
            ):
                continue
            for a, b in groups:
                add(fill(text, {"GROUP": a}), fill(text, {"GROUP": b}), direction, text, path)
    for i, item in enumerate(data.get("pairs") or []):
        path = ("pairs", i)
        if not isinstance(item, dict):
            problems.append(raw.problem(path, "a pair is a mapping with more, less and direction"))
            continue
        pid = item.get("id")
        if pid is not None and not (isinstance(pid, str) and pid.strip()):
            problems.append(raw.problem(path + ("id",), f"id must be a non-empty string (quote it), not {pid!r}"))
            continue
        read = nonempty_string if pid else text_field  # an imported pair's text is kept exactly as published
        a = read(item.get("more"), raw, path + ("more",), problems, "more")
        b = read(item.get("less"), raw, path + ("less",), problems, "less")
        direction = _direction(item.get("direction", "stereo"), raw, path + ("direction",), problems)
        source = item.get("source")
        if source is not None and not isinstance(source, dict):
            problems.append(
                raw.problem(path + ("source",), "source is a mapping of the published file's other columns")
            )
            continue
        position = item.get("position")
        if position is not None and not (isinstance(position, int) and position >= 0):
            problems.append(
                raw.problem(
                    path + ("position",), f"position is the pair's row in the published file (from 0), not {position!r}"
                )
            )
            continue
        if a and b and direction:
            add(a, b, direction, "", path, pid, source, position)
    if not templates and not data.get("pairs"):
        problems.append(raw.problem((), "no templates and no pairs: a file needs at least one of them"))
    return rows, problems


AUTHORING = Authoring(
    kind="crows-pairs",
    parse=parse,
    columns=COLUMNS,
    text_column="sent_more",
    second_text_column="sent_less",
    edit_reasons=(("pairs", "pair edited"),),
    data_file="data/pairs.csv",
    unit="sentence pair",
    top_level=frozenset({"bias_type", "groups", "templates", "pairs", "layout"}),
    nested={
        "templates.[]": frozenset({"text", "direction"}),
        "pairs.[]": frozenset({"more", "less", "direction", "id", "source", "position"}),
    },
    # a release laid out as the published file (build --layout original): the columns the kind reads
    published=tuple((c, c) for c in ("sent_more", "sent_less", "stereo_antistereo", "bias_type")),
    # Direction-neutral: in an anti-stereotype pair the first sentence goes against a stereotype
    # (annotators get the question of the pair's own direction: words.py).
    question="Is this a CrowS-Pairs pair: the first sentence states (stereo) or goes against (antistereo) a stereotype "
    "of its group and the second says the same about a contrasting group, differing only in the group "
    "(valid); not such a pair (invalid); or not sensible sentences (incoherent)?",
    about=(
        "CrowS-Pairs-style sentence pairs: a sentence that stereotypes a group (`sent_more`) and the same "
        "sentence about another group (`sent_less`). A masked LM's pseudo-log-likelihood over the tokens the two "
        "share decides which it prefers; the metric score is the share of pairs where it prefers the more "
        "stereotyping one. 50 is the unbiased value. A causal LM is scored by sentence log-probability "
        "(Σ ln P(token | earlier tokens)) instead: not the paper's measure, and not comparable with its figures."
    ),
    fields=(
        "`data/pairs.csv` has CrowS-Pairs' columns: `id`, `sent_more`, `sent_less`, `stereo_antistereo` "
        "(stereo or antistereo), `bias_type`, and the `template` a pair came from (empty when written out). "
        "`data/pairs.parquet` has the same columns plus `row_id`, `unit_id`, `template_id`, `domain`, "
        "`entry` (its place in the template file) and the "
        "pair's validation `label`."
    ),
)


class NotSure(Exception):
    """`quick_batches` cannot be sure it reads the file as `read_csv_chunks` does."""


QUICK_BLOCK = 1 << 20  # bytes pyarrow's reader parses at a time (it reads ahead: a bigger block, more memory)


def quick_batches(header) -> Iterator[tuple[dict, int]]:
    """The rows of a CSV that `read_csv_chunks` reads a chunk at a time (its `header`), read by
    pyarrow's CSV reader: ({column: Arrow array of its cells as written}, bytes read) for each
    block of QUICK_BLOCK bytes. Raises NotSure where the careful reader could read the file
    otherwise: a row with more or fewer cells than the header, a cell with a quote, a line break
    or a NUL in it, text that is not UTF-8, anything pyarrow refuses. Blank rows (which the careful
    reader skips) are the caller's to refuse: pyarrow keeps a row of empty cells."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    if not header.delimiter:
        raise NotSure
    columns = header.columns
    try:
        reader = pacsv.open_csv(
            header.path,
            read_options=pacsv.ReadOptions(column_names=columns, skip_rows=1, block_size=QUICK_BLOCK),
            parse_options=pacsv.ParseOptions(delimiter=header.delimiter, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in columns},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        size = Path(header.path).stat().st_size
        for batch in reader:
            cells = dict(zip(columns, batch.columns))
            if any(pc.any(pc.match_substring_regex(a, '["\\r\\n\\x00]')).as_py() for a in cells.values()):
                raise NotSure
            read = min(QUICK_BLOCK, size)
            size -= read
            yield cells, read
    except (pa.ArrowException, OSError):
        raise NotSure from None


def import_published(path: Path) -> tuple[dict, list[str]]:
    """A published CrowS-Pairs file (CSV, or the Hugging Face JSON lines) as one imported table
    (authoring/imported.py) of the template files the pairs would be in, one per bias type: each
    pair keeps its id (the file's unnamed first column, or `id`), exact text, direction and, under
    `source`, every other column (CrowS-Pairs' annotations and anonymised writer and annotators).
    The file is read a chunk at a time while the table is written; every problem of the file (an
    empty or repeated sentence too) is named with its line, and then nothing is written."""
    from ...authoring.imported import TEMPLATE, ImportedTable, ReadAgain
    from ...authoring.renew import csv_layout, import_notes
    from ...core.errors import InputError
    from .data import MAX_PROBLEMS, find_column, raise_problems, read_csv_chunks
    from .evaluate import check_pairs, required_columns

    header, chunks = read_csv_chunks(Path(path))
    read_cols = required_columns(header)
    columns = header.columns
    id_col = find_column(columns, "id", "pair_id", "")
    more_col, less_col, direction_col, type_col = read_cols
    layout = csv_layout(path, id_col)
    # a cell of a column the kind reads, kept under `source` when it was published otherwise than read
    raw_cols = [c for c in (direction_col, type_col, id_col) if c is not None] if layout is not None else []
    others = [c for c in columns if c not in {*read_cols, id_col}]
    kept = list(dict.fromkeys([*others, *raw_cols]))
    schema = (
        (TEMPLATE, "string"),
        ("id", "string"),
        ("more", "string"),
        ("less", "string"),
        ("direction", "string"),
        ("position", "int64"),
        *((f"source.{c}", "string") for c in kept),
    )

    def quick(advance):
        """The rows by pyarrow's CSV reader, checked as check_pairs checks them: ReadAgain at any
        doubt or problem (the careful read then names each problem with its line)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from .evaluate import DIRECTIONS

        first = 0
        try:
            for cells, read_bytes in quick_batches(header):
                more, less = cells[more_col].to_pylist(), cells[less_col].to_pylist()
                direction = [d.strip().lower() for d in cells[direction_col].to_pylist()]
                types = [t.strip() for t in cells[type_col].to_pylist()]
                n = len(more)
                if (
                    any(not m.strip() or m.strip() == l.strip() for m, l in zip(more, less))
                    or not all(d in DIRECTIONS for d in direction)
                    or not all(types)
                ):
                    raise ReadAgain
                given = cells[id_col].to_pylist() if id_col is not None else None
                ids = [i.strip() for i in given] if given is not None else [str(first + k) for k in range(n)]
                out = {
                    TEMPLATE: types,
                    "id": ids,
                    "more": cells[more_col],
                    "less": cells[less_col],
                    "direction": direction,
                    "position": pa.array(range(first, first + n), pa.int64()) if layout is not None else [None] * n,
                }
                published = {direction_col: (direction, cells[direction_col]), type_col: (types, cells[type_col])}
                if given is not None:
                    published[id_col] = (ids, cells[id_col])
                for c in kept:
                    if c in raw_cols:  # kept only where the cell differs from the value read
                        read_as, raw = published[c]
                        out[f"source.{c}"] = [v if v != r else None for v, r in zip(raw.to_pylist(), read_as)]
                    else:
                        out[f"source.{c}"] = pc.if_else(pc.equal(cells[c], ""), pa.scalar(None, pa.string()), cells[c])
                first += n
                advance(read_bytes)
                yield out
        except NotSure:
            raise ReadAgain from None
        if not first:
            raise ReadAgain

    def read(advance, careful: bool):
        if not careful:
            yield from quick(advance)
            return
        problems: list = []
        total = rows = 0
        for chunk in chunks(advance):
            found: list = []
            pairs = check_pairs(chunk, read_cols, True, found)
            total += len(found)
            problems += found[: max(0, MAX_PROBLEMS - len(problems))]
            n, first = len(chunk.rows), chunk.offset
            rows += n
            if total:
                continue  # nothing of it is written: keep reading for the other problems
            cells = {c: [r[c] for r in chunk.rows] for c in kept}
            ids = [r[id_col].strip() for r in chunk.rows] if id_col is not None else [str(first + k) for k in range(n)]
            out = {
                TEMPLATE: pairs.bias_type,
                "id": ids,
                "more": pairs.sent_more,
                "less": pairs.sent_less,
                "direction": pairs.direction,
                "position": list(range(first, first + n)) if layout is not None else [None] * n,
            }
            published = {direction_col: pairs.direction, type_col: pairs.bias_type, id_col: ids}
            for c in kept:
                read_as = published.get(c) if c in raw_cols else None
                if read_as is not None:  # kept only where the cell differs from the value read
                    out[f"source.{c}"] = [v if v != r else None for v, r in zip(cells[c], read_as)]
                else:
                    out[f"source.{c}"] = [v if v != "" else None for v in cells[c]]
            yield out
        raise_problems(header, problems, total)
        if not rows:
            raise InputError(f"{header.shown}: no pairs (only a header)")

    name = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(path).stem).strip("-") or "imported"
    table = ImportedTable(
        "workbench-crows-pairs/1",
        "pairs",
        schema,
        read,
        Path(path).stat().st_size,
        {"layout": layout} if layout else {},
        {"bias_type": "{template}", "description": "{template} pairs imported from " + Path(path).name},
    )
    return {f"{name}.parquet": table}, import_notes(header, id_col)

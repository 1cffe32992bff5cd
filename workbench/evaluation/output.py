"""Output helpers shared by the kinds' evaluators: JSON, CSV, the per-item file, charts and the
models' short names, and the check of every output path before any work.

Each kind decides *what* its tables hold; this module only writes them the same way
(atomically, UTF-8, with the tool's version in the JSON) so every kind's files look alike.
The per-item file (--items) is written here for every kind, in the format its extension names,
always with a `model` column, so one kind's items read like another's.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from .. import __version__
from ..core.errors import InputError, display_path
from ..core.outputs import AtomicFile, atomic_write_bytes, atomic_write_text, check_outputs, json_text, writes_through


def short(name: str, among=()) -> str:
    """A model's name as tables, plots and file names show it: the last path component, or as many
    as tell it apart from the other models `among` (`runA/checkpoint-500`, `runB/checkpoint-500`)."""
    from ..core.names import shortest_names

    return shortest_names([*among, name])[name]


def chart_caption(doc: dict, width: int = 64) -> str:
    """What a chart shows results of: the data set as named (file, release folder, or
    ORG/NAME@version) and its revision or version where known, and the models scored, in
    lines of at most `width` characters so a narrow chart does not clip it."""
    dataset = doc.get("dataset") or doc.get("source") or ""
    if isinstance(dataset, dict):
        dataset = dataset.get("source") or dataset.get("file") or ""
    dataset = str(dataset)
    for key in ("version", "revision"):
        value = doc.get(key)
        if value and str(value) not in dataset:
            dataset += f" ({key} {value})"
            break
    models = ", ".join(short(m, doc.get("models", {})) for m in doc.get("models", {}))
    import textwrap

    from ..core.errors import display_path

    if Path(dataset).exists():
        dataset = display_path(dataset)
    text = " · ".join(part for part in (dataset, models) if part)
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False))


def save_chart(fig, path: Path, **kwargs) -> Path:
    """Save a chart as PNG; a file already there is replaced, and the user is told so."""
    import sys

    from ..core.errors import display_path

    path = Path(path)
    if path.exists():
        print(f"note: replacing {display_path(path)} (it existed)", file=sys.stderr)
    buffer = io.BytesIO()  # rendered whole, then written atomically like every other output
    fig.savefig(buffer, format=kwargs.pop("format", None) or path.suffix.lstrip(".") or "png", **kwargs)
    atomic_write_bytes(path, buffer.getvalue())
    return path


def write_json(doc: dict, path: Path) -> None:
    """The kind's JSON document, with the tool and its version added (a figure that is not a
    finite number, one that divides by zero, as null)."""
    atomic_write_text(
        Path(path),
        json_text(
            {"tool": "workbench", "tool_version": __version__, **doc}, indent=2, ensure_ascii=False, sort_keys=False
        )
        + "\n",
    )


def write_csv(rows: list[dict], path: Path) -> None:
    """Rows as CSV; the columns are the union of the rows' keys, in first-seen order."""
    columns: dict[str, None] = {}
    for r in rows:
        columns.update(dict.fromkeys(r))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(Path(path), buffer.getvalue())


def write_outputs(request, doc: dict, rows: list[dict], items: list[dict], plot, console) -> None:
    """Everything the request asks for: the JSON document, the measures as CSV rows, the
    per-item CSV and the plots (`plot(doc, folder) -> path`), each announced once written."""
    from ..core.errors import display_path

    written = []
    doc.update(request.annotations())  # how each model ran; --unverified warnings
    if request.json_out:
        write_json(doc, request.json_out)
        written.append(request.json_out)
    if request.csv_out:
        write_csv(rows, request.csv_out)
        written.append(request.csv_out)
    if request.items_out:
        write_items(items, request.items_out)
        written.append(request.items_out)
    if request.plots:
        written.append(plot(doc, Path(request.plots)))
    for path in written:
        console.print(f"wrote {display_path(path)}", markup=False)


def write_example_csv(folder: Path, name: str, header: list[str], rows) -> Path:
    """An example file in a kind's public CSV layout (the demo and tests write these)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


# -- the per-item file (--items) -------------------------------------------------------------------
ITEM_FORMATS = {".csv": "CSV", ".tsv": "TSV", ".parquet": "Parquet", ".jsonl": "JSON lines", ".json": "JSON"}


def items_format(path: Path) -> str:
    """The --items file's format, by its extension (an unknown one refused before any work)."""
    suffix = Path(path).suffix.lower()
    if suffix not in ITEM_FORMATS:
        known = ", ".join(list(ITEM_FORMATS)[:-1]) + " or " + list(ITEM_FORMATS)[-1]
        raise InputError(
            f"--items {display_path(path)}: unknown format {suffix or '(no extension)'}; name the file {known}"
        )
    return suffix


def _plain(value):
    """A value JSON (and CSV) can hold: numpy scalars as Python ones, anything else as text."""
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def _cell(value):
    """A CSV cell: lists and mappings as JSON text, missing values empty."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple, dict)):
        return json_text(value, ensure_ascii=False, default=_plain)
    return value


def _columns(rows: list[dict]) -> list[str]:
    """The union of the rows' keys in first-seen order, `model` first."""
    columns: dict[str, None] = {"model": None}
    for r in rows:
        columns.update(dict.fromkeys(r))
    return list(columns)


def _table(rows: list[dict], columns: list[str], schema=None):
    """Rows as an Arrow table; a column Arrow cannot type (mixed text and numbers) becomes text."""
    import pyarrow as pa

    if schema is not None:
        return pa.Table.from_pylist([{c: r.get(c) for c in schema.names} for r in rows], schema=schema)
    arrays = {}
    for c in columns:
        values = [r.get(c) for r in rows]
        try:
            arrays[c] = pa.array(values) if any(v is not None for v in values) else pa.array(values, pa.string())
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
            arrays[c] = pa.array([None if v is None else str(_cell(v)) for v in values], pa.string())
    return pa.table(arrays)


class ItemsWriter:
    """Per-item rows into the --items file, in the format its extension names (CSV, TSV,
    Parquet, JSON lines, JSON), written in pieces (`write_rows`, or `write_table` for Arrow
    tables) and appearing under its name only at `close()`; `abort()` leaves nothing behind.
    The columns are fixed by the first piece (`model` first), so every piece lines up."""

    def __init__(self, path: Path, schema=None):
        self.path = Path(path)
        self.format = items_format(self.path)
        self.schema = schema  # Parquet: an Arrow schema, else the first piece's
        self.columns = list(schema.names) if schema is not None else None
        self.out = AtomicFile(self.path)
        self.text = None  # CSV/TSV/JSON: a text layer over the file
        self.table_writer = None  # Parquet: pyarrow's writer, opened at the first piece
        self.csv = None
        self.count = 0

    def write_rows(self, rows: list[dict]) -> None:
        if self.columns is None:
            self.columns = _columns(rows)
        if self.format == ".parquet":
            self._parquet(_table(rows, self.columns, self.schema))
            return
        self._text_rows(rows)

    def write_table(self, table) -> None:
        """An Arrow table (a streamed chunk); Parquet keeps it columnar, text formats take its rows."""
        if self.format == ".parquet":
            if self.columns is None:
                self.columns = list(table.schema.names)
            self._parquet(table)
        else:
            self.write_rows(table.to_pylist())

    def _parquet(self, table) -> None:
        import pyarrow.parquet as pq

        if self.table_writer is None:
            self.schema = table.schema
            self.table_writer = pq.ParquetWriter(self.out.file, self.schema, compression="zstd")
        self.table_writer.write_table(table.select(self.schema.names).cast(self.schema))
        self.count += table.num_rows

    def _text_rows(self, rows: list[dict]) -> None:
        if self.text is None:
            self.text = io.TextIOWrapper(self.out.file, encoding="utf-8", newline="", write_through=False)
            if self.format in (".csv", ".tsv"):
                self.csv = csv.writer(self.text, delimiter="\t" if self.format == ".tsv" else ",", lineterminator="\n")
                self.csv.writerow(self.columns)
            elif self.format == ".json":
                self.text.write("[")
        for r in rows:
            if self.csv is not None:
                self.csv.writerow([_cell(r.get(c)) for c in self.columns])
                self.count += 1
                continue
            line = json_text({c: r.get(c) for c in self.columns}, ensure_ascii=False, default=_plain)
            if self.format == ".json":
                line = ("\n" if self.count == 0 else ",\n") + line
            else:
                line += "\n"
            self.text.write(line)
            self.count += 1

    def close(self) -> None:
        """Finish the file and put it in place (a file with no rows still has its header)."""
        try:
            if self.format == ".parquet":
                if self.table_writer is None:
                    self._parquet(_table([], self.columns or ["model"], self.schema))
                self.table_writer.close()
            else:
                if self.text is None:
                    self.write_rows([])  # the header (CSV) or the brackets (JSON) of an empty file
                if self.format == ".json":
                    self.text.write("\n]\n" if self.count else "]\n")
                self.text.flush()
                self.text.detach()  # the atomic file closes the file itself
        except BaseException:
            self.abort()
            raise
        self.out.commit()

    def abort(self) -> None:
        try:
            if self.table_writer is not None:
                self.table_writer.close()
        except Exception:  # noqa: BLE001 -- the file is thrown away anyway
            pass
        self.out.abort()


def write_items(rows: list[dict], path: Path) -> None:
    """The per-item rows of a run, in the format `path`'s extension names, `model` first."""
    writer = ItemsWriter(path)
    try:
        writer.write_rows(rows)
    except BaseException:
        writer.abort()
        raise
    writer.close()


# -- every output, checked before any work ---------------------------------------------------------
def provenance_path(path: Path) -> Path:
    """`<file>.provenance.json`, written beside --csv and --items (cli/evaluate.py)."""
    path = Path(path)
    return path.with_name(path.name + ".provenance.json")


def per_version_path(path: Path | None, tag: str) -> Path | None:
    """out.json -> out.<tag>.json: each version's own file beside a comparison's (evaluation/versions.py)."""
    return None if path is None else Path(path).with_name(f"{Path(path).stem}.{tag}{Path(path).suffix}")


def planned_outputs(request, versions: list[str] | None = None) -> list[tuple[str, Path, bool]]:
    """Every path the request writes: (the option naming it, the path, True for a folder).
    `versions`: the tags of sources evaluated one by one (evaluation/versions.py), whose own
    files are written beside the given ones."""
    out = [
        ("--json", request.json_out, False),
        ("--csv", request.csv_out, False),
        ("--items", request.items_out, False),
        ("--predictions-out", request.predictions_out, False),
    ]
    out += [
        (f"the provenance file beside {flag}", provenance_path(path), False)  # none beside /dev/null or a FIFO
        for flag, path in (("--csv", request.csv_out), ("--items", request.items_out))
        if path is not None and not writes_through(Path(path))
    ]
    if versions:
        for tag in versions:
            out += [
                (f"{flag} for {tag}", per_version_path(path, tag), False)
                for flag, path in (
                    ("--json", request.json_out),
                    ("--csv", request.csv_out),
                    ("--items", request.items_out),
                )
                if path is not None
            ]
    out.append(("--plots", request.plots, True))
    if versions and request.plots is not None:
        out += [(f"--plots for {tag}", Path(request.plots) / tag, True) for tag in versions]
    return [(flag, Path(path), folder) for flag, path, folder in out if path is not None]


def request_inputs(request, given=()) -> list[tuple[str, Path]]:
    """Every file or folder the request reads, which no output may replace: the data sets (as
    given, and as found), the local models (folders protect what is inside them), the score
    cache, the --predictions file, a kind option naming a file (a lexicon, say) and the
    project's workbench.toml."""
    found: list[tuple[str, Path]] = []
    for spec in dict.fromkeys([*map(str, given), *map(str, request.sources)]):
        path = Path(spec).expanduser()
        if path.exists():
            found.append(("the data set folder" if path.is_dir() else "the data set", path))
    config = request.config
    models = list(request.models) or list(getattr(getattr(config, "evaluate", None), "models", None) or [])
    for name in models:
        for path in dict.fromkeys([Path(request.root) / name, Path(name).expanduser()]):
            if path.exists():
                found.append(("the model folder" if path.is_dir() else "the model file", path))
    if request.cache_path is not None:
        found.append(("the score cache", Path(request.cache_path)))
    for path in dict.fromkeys([*prediction_files(request).values()]):
        found.append(("the --predictions file", path))
    for dest, value in (request.options or {}).items():
        if isinstance(value, (str, Path)) and value and Path(value).expanduser().is_file():
            found.append((f"the --{dest.replace('_', '-')} file", Path(value)))
    source = getattr(config, "source", None)
    if source is not None and Path(source).is_file():
        found.append(("the project's config", Path(source)))
    return found


def prediction_files(request) -> dict[str, Path]:
    """Every --predictions file by the model it stands for (a request made without names: the one
    file, named as given)."""
    named = dict(getattr(request, "named_predictions", None) or {})
    if not named and request.predictions is not None:
        named[str(request.predictions)] = Path(request.predictions)
    return {name: Path(path) for name, path in named.items()}


def check_request_outputs(request, given=(), versions: list[str] | None = None) -> list[Path]:
    """Before any model loads: the --items format is known, no output is an input or another
    output, and every output's folder exists and takes files (core/outputs.check_outputs; the
    folders it created are returned)."""
    if request.items_out is not None:
        items_format(request.items_out)
    return check_outputs(planned_outputs(request, versions), request_inputs(request, given))

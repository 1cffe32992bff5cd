"""SOFA probe files: finding them, checking them, and streaming them in chunks.

The public set has 1.49M probes, so nothing here holds the file: `check()` streams it once to
validate it and to build the catalogue (one entry per stereotype, identity and category, never
per probe), and `chunks()` streams it again for scoring. Every column is read as text, so ids
like `007` survive and a later block cannot disagree with the first block's inferred types.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...core.errors import InputError, Problem, display_path
from .scoring import BLOCK_BYTES, CHUNK_ROWS, Chunk, probe_text

REQUIRED = ("id", "category", "identity", "stereotype")
OPTIONAL = ("target", "probe")
RELEASE_FILE = Path("data") / "probes.csv"
# BLOCK_BYTES (Arrow's block size) and CHUNK_ROWS (probes per chunk of joined blocks) are
# scoring's: how the file is cut decides which probes are scored together.
MAX_PROBLEMS = 20


@dataclass
class Catalogue:
    """What the measures need to know about a probe file, without its probes.

    Stereotypes, identities and categories get dense integer codes in order of first
    appearance; an identity *unit* is (category, identity), the level at which the paper's
    intra-identity view is computed (an identity listed under two categories is two units).
    """

    path: Path
    columns: dict[str, str]  # wanted name -> the file's own header
    n_probes: int = 0
    stereotype_ids: list[str] = field(default_factory=list)
    stereotype_text: list[str] = field(default_factory=list)
    stereotype_category: list[int] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    identities: list[str] = field(default_factory=list)
    units: list[tuple[int, int]] = field(default_factory=list)  # (category code, identity code)

    @property
    def shown(self) -> str:
        return display_path(self.path)

    def chunks(self) -> Iterator[Chunk]:
        """The probes, streamed again (`chunks`): what `scoring.score_file` scores."""
        return chunks(self)


def read_header(path: Path) -> list[str]:
    """The header row (BOM tolerated); a file that is not UTF-8 fails here or in the scan, one
    that names a column twice (as `match_columns` reads names) here."""
    from ...core.text import check_header

    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            header = next(csv.reader(f), [])
        check_header(header, display_path(path), key=lambda h: h.strip().lower())
        return header
    except UnicodeDecodeError:
        _raise_encoding(path)
    except OSError as exc:
        raise InputError(f"cannot read {display_path(path)}: {exc.strerror or exc}") from None
    return []


def match_columns(path: Path, header: list[str]) -> dict[str, str]:
    """Map the wanted column names to the header's (case and spaces ignored)."""
    found = {h.strip().lower(): h for h in header}
    missing = [c for c in REQUIRED if c not in found]
    if missing:
        raise InputError(
            f"{display_path(path)}: missing column(s) {', '.join(missing)}",
            [
                Problem(
                    display_path(path),
                    1,
                    "header",
                    f"has {', '.join(map(repr, header)) or 'no columns'}; "
                    f"a SOFA probe file needs {', '.join(REQUIRED)} (target and probe optional)",
                )
            ],
        )
    return {c: found[c] for c in REQUIRED + OPTIONAL if c in found}


def detect(path: Path) -> bool:
    """A CSV with the SOFA columns, or a release folder whose manifest says `sofa` or that
    holds data/probes.csv with them."""
    path = Path(path)
    if path.is_dir():
        manifest = path / "manifest.json"
        if manifest.is_file():
            try:
                if json.loads(manifest.read_text(encoding="utf-8")).get("kind") == "sofa":
                    return True
            except (OSError, ValueError, AttributeError):
                pass
        path = path / RELEASE_FILE
    if not path.is_file() or path.suffix.lower() != ".csv":
        return False
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            header = next(csv.reader(io.StringIO(f.readline())), [])
    except (OSError, UnicodeDecodeError):
        return False
    names = {h.strip().lower() for h in header}
    return all(c in names for c in REQUIRED)


def _reader(path: Path, columns: dict[str, str]):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    wanted = list(columns.values())
    try:
        return pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                include_columns=wanted,
                column_types={c: pa.string() for c in wanted},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid as exc:
        _raise_arrow(path, exc)


def _batches(path: Path, columns: dict[str, str]):
    """Record batches of the file; arrow's parse and encoding errors become InputErrors."""
    import pyarrow as pa

    reader = _reader(path, columns)
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            _raise_arrow(path, exc)
        yield batch


def _raise_arrow(path: Path, exc: Exception):
    text = str(exc)
    if "UTF8" in text or "utf8" in text.lower():
        _raise_encoding(path)
    if "columns, got" in text:
        _raise_field_count(path)
    raise InputError(f"{display_path(path)}: not a readable CSV file: {text.splitlines()[0]}") from None


def _raise_field_count(path: Path):
    """The first row whose number of fields differs from the header's, by file line."""
    shown = display_path(path)
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        for cells in reader:
            if cells and len(cells) != len(header):
                line = reader.line_num
                raise InputError(
                    f"{shown}: a row with {len(cells)} field(s), the header has {len(header)}",
                    [
                        Problem(
                            shown,
                            line,
                            "",
                            f"{len(cells)} field(s) ({', '.join(header[len(cells) :]) or 'none'} missing)"
                            if len(cells) < len(header)
                            else f"{len(cells)} field(s), {len(cells) - len(header)} more than the header "
                            "(a comma inside a field needs quotes)",
                        )
                    ],
                ) from None


def _raise_encoding(path: Path):
    """Find the first line that is not UTF-8 and say where (line, byte column, CSV column)."""
    shown = display_path(path)
    header: list[str] = []
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                decoded = raw.decode("utf-8", errors="replace")
                cells = next(csv.reader([decoded]), [])
                column = next(
                    (header[i] if i < len(header) else f"#{i + 1}" for i, cell in enumerate(cells) if "\ufffd" in cell),
                    "?",
                )
                raise InputError(
                    f"{shown} is not UTF-8 text; save it as UTF-8",
                    [
                        Problem(
                            shown,
                            number,
                            column,
                            f"byte {exc.start + 1} ({raw[exc.start : exc.start + 1]!r}) is not valid UTF-8",
                        )
                    ],
                ) from None
            if number == 1:
                header = next(csv.reader([line]), [])
    raise InputError(f"{shown} is not UTF-8 text; save it as UTF-8")


def _codes(values, table: dict[str, int], names: list[str]) -> np.ndarray:
    """Dense codes of a string column: arrow finds the block's distinct values, Python maps
    only those, so a 10K-row block costs a few dozen dictionary lookups."""
    import pyarrow.compute as pc

    encoded = (
        pc.dictionary_encode(values).combine_chunks() if hasattr(values, "chunks") else pc.dictionary_encode(values)
    )
    local = encoded.dictionary.to_pylist()
    mapping = np.empty(len(local), dtype=np.int64)
    for i, name in enumerate(local):
        code = table.get(name)
        if code is None:
            code = table[name] = len(names)
            names.append(name)
        mapping[i] = code
    return mapping[encoded.indices.to_numpy(zero_copy_only=False)]


class _Coder:
    """The growing code tables of one pass over a file."""

    def __init__(self, cat: Catalogue):
        self.cat = cat
        self.stereotypes: dict[str, int] = {s: i for i, s in enumerate(cat.stereotype_ids)}
        self.categories: dict[str, int] = {c: i for i, c in enumerate(cat.categories)}
        self.identities: dict[str, int] = {s: i for i, s in enumerate(cat.identities)}
        self.units: dict[int, int] = {c * (1 << 32) + i: n for n, (c, i) in enumerate(cat.units)}

    def unit_codes(self, category: np.ndarray, identity: np.ndarray) -> np.ndarray:
        keys = category * (1 << 32) + identity
        distinct, inverse = np.unique(keys, return_inverse=True)
        mapping = np.empty(len(distinct), dtype=np.int64)
        for i, key in enumerate(distinct.tolist()):
            code = self.units.get(key)
            if code is None:
                code = self.units[key] = len(self.cat.units)
                self.cat.units.append((key >> 32, key & 0xFFFFFFFF))
            mapping[i] = code
        return mapping[inverse]


def check(path: Path) -> Catalogue:
    """Validate a probe file in one streamed pass and return its catalogue.

    Problems (missing columns, empty identity or stereotype, a stereotype id whose rows name
    different categories, a repeated (id, identity) row, text that is not UTF-8) are collected
    with file, line and column, and raised together as one InputError.
    """
    import pyarrow.compute as pc

    path = Path(path)
    shown = display_path(path)
    columns = match_columns(path, read_header(path))
    cat = Catalogue(path, columns)
    coder = _Coder(cat)
    problems: list[Problem] = []
    keys = _KeyBuffer()
    first_line: list[int] = []  # per stereotype, the line that set its category
    row = 0
    for batch in _batches(path, columns):
        n = batch.num_rows
        if n == 0:
            continue
        cols = {name: batch.column(batch.schema.get_field_index(header)) for name, header in columns.items()}
        for name in ("id", "identity", "stereotype", "category"):
            empty = pc.equal(pc.utf8_trim_whitespace(cols[name]), "").to_numpy(zero_copy_only=False)
            for i in np.flatnonzero(empty)[:MAX_PROBLEMS]:
                problems.append(Problem(shown, row + int(i) + 2, columns[name], "empty"))
            broken = pc.match_substring(cols[name], "\n").to_numpy(zero_copy_only=False)
            for i in np.flatnonzero(broken)[:MAX_PROBLEMS]:
                problems.append(
                    Problem(
                        shown,
                        row + int(i) + 2,
                        columns[name],
                        "holds a line break: expected one line per probe (a quoted field that is "
                        'never closed, an unmatched ")',
                    )
                )
        st = _codes(cols["id"], coder.stereotypes, cat.stereotype_ids)
        cg = _codes(cols["category"], coder.categories, cat.categories)
        ident = _codes(cols["identity"], coder.identities, cat.identities)
        coder.unit_codes(cg, ident)
        # A stereotype's category is the one on its first row; every later row must agree.
        known = len(cat.stereotype_category)
        if len(cat.stereotype_ids) > known:
            new = np.arange(known, len(cat.stereotype_ids))
            order = np.argsort(st, kind="stable")
            starts = np.searchsorted(st[order], new)
            firsts = order[starts]
            text = cols["stereotype"].take(firsts).to_pylist()
            cat.stereotype_category.extend(cg[firsts].tolist())
            cat.stereotype_text.extend(text)
            first_line.extend((row + firsts + 2).tolist())
        expected = np.asarray(cat.stereotype_category, dtype=np.int64)[st]
        for i in np.flatnonzero(expected != cg)[:MAX_PROBLEMS]:
            s = int(st[i])
            problems.append(
                Problem(
                    shown,
                    row + int(i) + 2,
                    columns["category"],
                    f"stereotype id {cat.stereotype_ids[s]!r} has category {cat.categories[int(cg[i])]!r} here "
                    f"but {cat.categories[int(expected[i])]!r} on line {first_line[s]}",
                )
            )
        keys.extend(st * (1 << 32) + ident)
        row += n
        if len(problems) >= MAX_PROBLEMS:
            break
    cat.n_probes = row
    if not problems and keys.size:
        problems.extend(_duplicates(keys, cat, shown))
    del keys
    if problems:
        problems.sort(key=lambda p: (p.line or 0, p.field))
        more = "" if len(problems) < MAX_PROBLEMS else f" (showing the first {MAX_PROBLEMS})"
        raise InputError(f"{shown}: {len(problems)} problem(s) in the probe file{more}", problems[:MAX_PROBLEMS])
    if cat.n_probes == 0:
        raise InputError(f"{shown}: no probes (the file has a header and no rows)")
    return cat


class _KeyBuffer:
    """The (stereotype, identity) key of every probe, 8 bytes each, in one array that doubles
    as it fills. One large block is mapped and unmapped whole, so the memory goes back to the
    system after the check instead of staying behind as a fragmented heap."""

    def __init__(self, capacity: int = 1 << 20):
        self.data = np.empty(capacity, dtype=np.int64)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        end = self.size + len(values)
        if end > len(self.data):
            grown = np.empty(max(end, 2 * len(self.data)), dtype=np.int64)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size : end] = values
        self.size = end


def _duplicates(keys: _KeyBuffer, cat: Catalogue, shown: str) -> list[Problem]:
    """(id, identity) pairs that occur more than once, each repeat with the line of its first
    occurrence. Sorting in place finds whether there are any; only then are they located."""
    ordered = keys.data[: keys.size]
    ordered.sort()  # in place: no second array of the file's size
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return []
    repeated = np.unique(ordered[1:][same])[:MAX_PROBLEMS]
    del same
    # Locate them with a second pass over the file's codes (rare: only when there are repeats).
    return _locate_repeats(cat, set(repeated.tolist()), shown)


def _locate_repeats(cat: Catalogue, wanted: set[int], shown: str) -> list[Problem]:
    coder = _Coder(cat)
    first: dict[int, int] = {}
    problems: list[Problem] = []
    row = 0
    for batch in _batches(cat.path, cat.columns):
        cols = {name: batch.column(batch.schema.get_field_index(header)) for name, header in cat.columns.items()}
        st = _codes(cols["id"], coder.stereotypes, cat.stereotype_ids)
        ident = _codes(cols["identity"], coder.identities, cat.identities)
        for i in np.flatnonzero(np.isin(st * (1 << 32) + ident, list(wanted))).tolist():
            key = int(st[i]) * (1 << 32) + int(ident[i])
            line = row + i + 2
            if key not in first:
                first[key] = line
                continue
            problems.append(
                Problem(
                    shown,
                    line,
                    cat.columns["identity"],
                    f"repeats (id {cat.stereotype_ids[int(st[i])]!r}, identity "
                    f"{cat.identities[int(ident[i])]!r}) of line {first[key]}",
                )
            )
            if len(problems) >= MAX_PROBLEMS:
                return problems
        row += batch.num_rows
    return problems


def _joined(path: Path, columns: dict[str, str], rows: int):
    """Record batches joined until they hold at least `rows` rows (the last may hold fewer)."""
    import pyarrow as pa

    pending, held = [], 0
    for batch in _batches(path, columns):
        if batch.num_rows == 0:
            continue
        pending.append(batch)
        held += batch.num_rows
        if held >= rows:
            yield pa.Table.from_batches(pending).combine_chunks().to_batches()[0]
            pending, held = [], 0
    if pending:
        yield pa.Table.from_batches(pending).combine_chunks().to_batches()[0]


def chunks(cat: Catalogue) -> Iterator[Chunk]:
    """The probes again, about CHUNK_ROWS at a time, coded against the catalogue `check` built.

    A missing `probe` column (or an empty probe cell) is identity + " " + stereotype
    (`scoring.probe_text`).
    """
    coder = _Coder(cat)
    columns = cat.columns
    sizes = (len(cat.stereotype_ids), len(cat.units))
    row = 0
    for batch in _joined(cat.path, columns, CHUNK_ROWS):
        n = batch.num_rows
        cols = {name: batch.column(batch.schema.get_field_index(header)) for name, header in columns.items()}
        st = _codes(cols["id"], coder.stereotypes, cat.stereotype_ids)
        cg = _codes(cols["category"], coder.categories, cat.categories)
        ident = _codes(cols["identity"], coder.identities, cat.identities)
        given = cols["probe"].to_pylist() if "probe" in cols else [None] * n
        probes = [
            probe_text(i, s, p) for i, s, p in zip(cols["identity"].to_pylist(), cols["stereotype"].to_pylist(), given)
        ]
        units = coder.unit_codes(cg, ident)
        if len(cat.stereotype_category) != len(cat.stereotype_ids) or len(cat.units) != sizes[1]:
            raise InputError(f"{cat.shown} changed while it was being read; run again")
        yield Chunk(row, st, ident, units, probes)
        row += n

"""The `sofa` kind's standalone evaluator: SOFA's variance, DDS and lowest identity on data/probes.csv.

The probes stream through the pasted `scoring.score_file` in the chunks workbench's data.py
cuts (Arrow's CSV blocks of BLOCK_BYTES joined to CHUNK_ROWS rows): the chunks decide the
scorer's batches and the order the statistics merge in, so the script reads the file with
pyarrow exactly as data.py does, and the numbers are `workbench evaluate`'s to the last bit.
"""
from __future__ import annotations

from .common import LM_CODE, LM_MEASURE_MODULES, MAIN, RELEASE_CODE, lm_header

MEASURE_MODULES = (*LM_MEASURE_MODULES, "workbench.kinds.sofa.metrics", "workbench.kinds.sofa.scoring")
REQUIREMENTS = "torch transformers numpy pyarrow"  # pyarrow reads the CSV in workbench's blocks

HEADER = lm_header(
    "sofa", "SOFA",
    "per probe log10(PPL(identity + stereotype) / PPL(identity)); per stereotype the variance of\n"
    "that value across identities and DDS (max - min); SOFA per category (the mean variance) and\n"
    "global (the mean over categories), and how often each identity is the most plausible one.",
    "data/probes.csv", requirements=REQUIREMENTS)

BODY = RELEASE_CODE + LM_CODE + '''

# ---- the kind ----------------------------------------------------------------------------

import gc

PROBE_COLUMNS = ("id", "category", "identity", "stereotype", "probe")  # probe optional
REQUIRED_COLUMNS = PROBE_COLUMNS[:4]


class Probes:
    """data/probes.csv as `score_file` reads it: catalogued as workbench's data.check does
    (stereotypes, categories and identities coded in order of first appearance; the new
    (category, identity) units of each block in sorted order), and its probes in the chunks
    of data.chunks (blocks joined until they hold CHUNK_ROWS rows). One pass here, one per
    model; memory holds one chunk, never the file."""

    def __init__(self, path: Path):
        self.path, self.shown = path, display_path(path)
        with open(path, encoding="utf-8-sig", newline="") as f:
            header = next(csv.reader(f), [])
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise Refused(f"{self.shown}: missing column(s) {', '.join(missing)}")
        self.columns = [c for c in PROBE_COLUMNS if c in header]
        self.stereotype_ids, self.stereotype_text, self.stereotype_category = [], [], []
        self.categories, self.identities, self.units = [], [], []
        self.code_of = {"id": {}, "category": {}, "identity": {}}
        self.unit_of = {}
        self.n_probes = 0
        for block in self.blocks():
            st, cg, ident = self.codes(block)
            for s, c, text in zip(st, cg, block["stereotype"]):
                if s == len(self.stereotype_category):  # its first row: the stereotype's category and text
                    self.stereotype_category.append(c)
                    self.stereotype_text.append(text)
            for key in sorted(set(zip(cg, ident)) - self.unit_of.keys()):
                self.unit_of[key] = len(self.units)
                self.units.append(key)
            self.n_probes += len(st)
        if not self.n_probes:
            raise Refused(f"{self.shown}: no probes")

    def blocks(self):
        """The file's rows in Arrow's record batches, read with data.py's options (blocks of
        BLOCK_BYTES, every cell text), as {column: values}."""
        try:
            import pyarrow as pa
            import pyarrow.csv as pacsv
        except ImportError:
            raise Refused("reading data/probes.csv needs pyarrow (pip install pyarrow)") from None
        try:
            reader = pacsv.open_csv(
                self.path, read_options=pacsv.ReadOptions(block_size=BLOCK_BYTES),
                parse_options=pacsv.ParseOptions(newlines_in_values=True),
                convert_options=pacsv.ConvertOptions(
                    include_columns=self.columns, column_types={c: pa.string() for c in self.columns},
                    strings_can_be_null=False, quoted_strings_can_be_null=False))
            for batch in reader:
                if batch.num_rows:
                    yield {c: batch.column(c).to_pylist() for c in self.columns}
        except pa.ArrowInvalid as exc:
            raise Refused(f"{self.shown}: not a readable CSV file: {str(exc).splitlines()[0]}") from None

    def codes(self, rows: dict) -> list[list[int]]:
        """Codes of the rows' stereotype ids, categories and identities (new ones appended)."""
        out = []
        for column, names in (("id", self.stereotype_ids), ("category", self.categories),
                              ("identity", self.identities)):
            table, codes = self.code_of[column], []
            for value in rows[column]:
                code = table.get(value)
                if code is None:
                    code = table[value] = len(names)
                    names.append(value)
                codes.append(code)
            out.append(codes)
        return out

    def chunks(self):
        row = 0
        for rows in self.joined():
            st, cg, ident = self.codes(rows)
            given = rows.get("probe", [None] * len(st))
            probes = [probe_text(i, s, p) for i, s, p in zip(rows["identity"], rows["stereotype"], given)]
            units = [self.unit_of[key] for key in zip(cg, ident)]
            yield Chunk(row, np.array(st, dtype=np.int64), np.array(ident, dtype=np.int64),
                        np.array(units, dtype=np.int64), probes)
            row += len(st)

    def joined(self):
        """Blocks joined until they hold at least CHUNK_ROWS rows (the last may hold fewer)."""
        pending, held = [], 0
        for block in self.blocks():
            pending.append(block)
            held += len(block["id"])
            if held >= CHUNK_ROWS:
                yield {c: [v for b in pending for v in b[c]] for c in self.columns}
                pending, held = [], 0
        if pending:
            yield {c: [v for b in pending for v in b[c]] for c in self.columns}


def progress_printer(total: int, label: str):
    """An advance(n) for score_file that prints every tenth of the way to stderr."""
    state = {"done": 0, "shown": 0}

    def advance(n: int) -> None:
        state["done"] += n
        tenth = 10 * state["done"] // max(total, 1)
        if tenth > state["shown"]:
            state["shown"] = tenth
            print(f"{label}: {10 * tenth}%", file=sys.stderr, flush=True)
    return advance


def evaluate(args, folder: Path, origin: dict, manifest: dict) -> tuple[dict, dict]:
    """The JSON document and each model's revision, as `workbench evaluate` computes them."""
    path = folder / "data" / "probes.csv"
    cat = Probes(path)
    print(f"{cat.shown}: {cat.n_probes:,} probes, {len(cat.stereotype_ids):,} stereotypes, "
          f"{len(cat.identities):,} identities, {len(cat.categories)} categories", file=sys.stderr)
    results, revisions = {}, {}
    for name in dict.fromkeys(args.model):
        scorer = load_lm(name, args)
        try:
            acc = score_file(cat, scorer, name, progress_printer(cat.n_probes + len(cat.identities), name))
        except WorkbenchError as exc:  # a probe or identity without tokens, a probe too long for the model
            raise Refused(str(exc)) from None
        results[name] = model_result(scorer, acc, cat)
        revisions[name] = scorer.ref.revision
        sofa = results[name]["overall"]["sofa"]
        print(f"{name}: global SOFA {'-' if sofa is None else f'{sofa:.4g}'} ({results[name]['score_rule']}; "
              f"lower is fairer), {cat.n_probes} probes")
        del scorer
        gc.collect()
    file = str(path) if origin["dataset_folder"] is None else display_path(path)
    return sofa_document(dataset_label(origin), file, cat, results), revisions
''' + MAIN

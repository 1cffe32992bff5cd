"""`workbench evaluate FILE --kind sofa`: SOFA's variance, DDS and lowest identity per model.

The file is checked completely before any model loads (a typo on line 1,200,000 should not
cost an hour of scoring), then each model streams the probes once; see `scoring` and
`metrics` for why memory stays flat.
"""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np

from ...core.errors import InputError, display_path
from ...evaluation.versions import Compared
from ...core.progress import progress_bar
from ...evaluation.intervals import notes
from ...evaluation.request import EvaluateRequest
from ...evaluation.output import short, write_csv, write_json
from . import data, report
from .scoring import RULE_NAMES, RULES, model_result, score_file, sofa_document


def detect(path: Path) -> bool:
    """A CSV with SOFA's columns (id, category, identity, stereotype), or a SOFA release folder."""
    return data.detect(Path(path))


def _check_request(request: EvaluateRequest) -> None:
    if len(request.sources) != 1:
        raise InputError(
            f"sofa evaluates one probe file or release at a time; got {len(request.sources)}: "
            + ", ".join(request.sources)
        )
    if request.predictions is not None:
        raise InputError(
            "sofa scores models itself; --predictions is not supported (pass --model; "
            "--items writes the per-probe perplexities)"
        )
    if request.predictions_out is not None:
        raise InputError("sofa has no prediction exchange format; use --items OUT.parquet for per-probe scores")
    if not request.models:
        raise InputError("no model: pass --model (a causal or masked LM, Hub name or local folder)")
    if request.score_rule is not None and request.score_rule.lower() not in RULE_NAMES:
        raise InputError(
            f"unknown --score-rule {request.score_rule!r} for sofa; known: perplexity (causal LMs), "
            "pseudo-perplexity (masked LMs); the default follows the model"
        )


class ItemsWriter:
    """Per-probe rows streamed into the --items file block by block, in the format its extension
    names (the shared writer, evaluation/output.ItemsWriter); the file appears under its name
    only when `close()` completes, so an interrupted run leaves no half-written table."""

    COLUMNS = ("model", "id", "category", "identity", "probe_ppl", "identity_ppl", "log10_ppl_star")

    def __init__(self, path: Path):
        import pyarrow as pa

        from ...evaluation.output import ItemsWriter as Shared

        self.path = Path(path)
        self.schema = pa.schema(
            [
                ("model", pa.string()),
                ("id", pa.string()),
                ("category", pa.string()),
                ("identity", pa.string()),
                ("probe_ppl", pa.float64()),
                ("identity_ppl", pa.float64()),
                ("log10_ppl_star", pa.float64()),
            ]
        )
        self.writer = Shared(self.path, self.schema)

    def write(self, model: str, cat: data.Catalogue, chunk: data.Chunk, probe_ppl, identity_ppl, values) -> None:
        import pyarrow as pa

        ids = pa.array(cat.stereotype_ids, pa.string()).take(pa.array(chunk.stereotype))
        st_cat = np.asarray(cat.stereotype_category, dtype=np.int64)[chunk.stereotype]
        cats = pa.array(cat.categories, pa.string()).take(pa.array(st_cat))
        idents = pa.array(cat.identities, pa.string()).take(pa.array(chunk.identity))
        table = pa.table(
            [
                pa.array([model] * len(values), pa.string()),
                ids,
                cats,
                idents,
                pa.array(probe_ppl),
                pa.array(identity_ppl),
                pa.array(values),
            ],
            schema=self.schema,
        )
        self.writer.write_table(table)

    def close(self) -> None:
        self.writer.close()

    def abort(self) -> None:
        self.writer.abort()


def probe_file(source: str) -> Path:
    """The probe CSV of a source: a CSV file, a release folder (data/probes.csv), or
    ORG/NAME[@REVISION] of a release on the Hub."""
    path = Path(source).expanduser()
    if path.is_dir():
        found = path / data.RELEASE_FILE
        if found.is_file():
            return found
        raise InputError(f"{display_path(path)}: not a SOFA release (expected {data.RELEASE_FILE}) and not a probe CSV")
    if path.is_file():
        return path
    from ... import sources

    if not sources.hub_spec(source) or source.startswith((".", "/", "~")) or source.lower().endswith(".csv"):
        raise InputError(f"probe file not found: {display_path(path)}")
    return probe_file(sources.resolve(source).path)


def evaluate(request: EvaluateRequest, console) -> dict:
    """Score every model on the probe file and write the outputs the request names."""
    from ...models.lm_loading import load_scorer

    _check_request(request)
    variance = request.options.get("variance") or "paper"
    source = request.sources[0]
    path = probe_file(source)
    try:
        cat = data.check(path)
    except InputError as exc:
        from ..layout import format_hint

        why = format_hint(path) if "missing column" in str(exc) else ""
        if not why:
            raise
        raise InputError(f"{exc.args[0]} -- {why}", exc.problems) from None
    console.print(
        f"{cat.shown}: {cat.n_probes:,} probes, {len(cat.stereotype_ids):,} stereotypes, "
        f"{len(cat.identities):,} identities, {len(cat.categories)} categories"
    )
    items = ItemsWriter(request.items_out) if request.items_out else None
    results: dict[str, dict] = {}
    accumulators = {}
    try:
        for name in dict.fromkeys(request.models):
            scorer = load_scorer(
                name, root=request.root, spec=request.spec, runtimes=request.runtimes, cache_path=request.cache_path
            )
            wanted = RULE_NAMES.get((request.score_rule or "").lower())
            if wanted is not None and wanted != scorer.kind:
                raise InputError(
                    f"--score-rule {request.score_rule} needs a {wanted} LM, but {name!r} is a {scorer.kind} LM "
                    f"(its rule is {RULES[scorer.kind]})"
                )
            with progress_bar(f"{short(name)}: SOFA probes", cat.n_probes + len(cat.identities)) as advance:
                acc = score_file(cat, scorer, name, advance, items)
            results[name] = model_result(scorer, acc, cat, variance)
            accumulators[name] = acc
            if scorer.cache is not None:
                scorer.cache.close()
            del scorer
            gc.collect()
        if items is not None:
            items.close()
    except BaseException:
        if items is not None:
            items.abort()
        raise
    doc = sofa_document(source, str(path), cat, results, variance, accumulators, request.intervals)
    for t in report.tables(doc):
        console.print(t)
    from .metrics import VARIANCE_NOTES

    console.print(VARIANCE_NOTES[variance] + ".", markup=False, highlight=False)
    for line in notes(doc["uncertainty"]):
        console.print(line, markup=False, highlight=False)
    if items is not None:
        console.print(f"wrote {display_path(request.items_out)}")
    doc.update(request.annotations())  # how each model ran; --unverified warnings
    if request.json_out:
        write_json(doc, Path(request.json_out))
        console.print(f"wrote {display_path(request.json_out)}")
    if request.csv_out:
        write_csv(report.csv_rows(doc), Path(request.csv_out))
        console.print(f"wrote {display_path(request.csv_out)}")
    if request.plots:
        for p in report.write_plots(doc, Path(request.plots)):
            console.print(f"wrote {display_path(p)}")
    return doc


# `workbench evaluate A B`: each version evaluated alone, then these measures side by side.
COMPARED = Compared(keys=("model", "level", "group"), measures=("sofa", "n_stereotypes", "n_probes"), unit="probe")


def measure_rows(doc: dict) -> list[dict]:
    return report.csv_rows(doc)

"""The `sofa` kind's standalone evaluator: SOFA's variance, DDS and lowest identity on
data/probes.csv, with the reading, scoring and measures `workbench evaluate --kind sofa` uses.

The probes stream through `scoring.score_file` in the chunks of `data.py` (Arrow's CSV blocks of
BLOCK_BYTES joined to CHUNK_ROWS rows): the chunks decide the scorer's batches and the order the
statistics merge in, so the script reads the file with workbench's own code (hence pyarrow), and
the numbers are `workbench evaluate`'s to the last bit. A release carries this module and
everything it imports in its evaluator/ folder; its evaluate.py runs it through
`release.runtime.cli.main`.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from ...core.errors import WorkbenchError, display_path
from ...evaluation.intervals import notes
from ...release.runtime.cli import Run
from ...release.runtime.lm import load_lm
from ...release.runtime.release import Refused, dataset_label
from .data import check
from .metrics import VARIANCE_NOTES, VARIANCES
from .scoring import model_result, score_file, sofa_document

TITLE = "SOFA"
MEASURES = (
    "per probe log10(PPL(identity + stereotype) / PPL(identity)); per stereotype the variance of\n"
    "that value across identities and DDS (max - min); SOFA per category (the mean variance) and\n"
    "global (the mean over categories), and how often each identity is the most plausible one."
)
DATA = "data/probes.csv"
REQUIREMENTS = "torch transformers numpy pyarrow"  # pyarrow reads the CSV in workbench's blocks


def add_options(parser) -> None:
    parser.add_argument(
        "--variance",
        choices=VARIANCES,
        default="paper",
        help="how a category's SOFA is computed, as `workbench evaluate --variance`: paper (the mean "
        "of its stereotypes' variances, the default) or reference (the reference script's loop)",
    )


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


def evaluate(args, run: Run, folder: Path, origin: dict, manifest: dict) -> tuple[dict, dict]:
    """The JSON document and each model's revision, as `workbench evaluate` computes them."""
    path = folder / "data" / "probes.csv"
    cat = check(path)  # workbench's own reading: the same codes, blocks and chunks, the same checks
    print(
        f"{cat.shown}: {cat.n_probes:,} probes, {len(cat.stereotype_ids):,} stereotypes, "
        f"{len(cat.identities):,} identities, {len(cat.categories)} categories",
        file=sys.stderr,
    )
    print(VARIANCE_NOTES[args.variance] + ".", file=sys.stderr)
    results, revisions, accumulators = {}, {}, {}
    for name in dict.fromkeys(args.model):
        scorer = load_lm(name, args.spec, run.runtimes)
        try:
            acc = score_file(cat, scorer, name, progress_printer(cat.n_probes + len(cat.identities), name))
        except WorkbenchError as exc:  # a probe or identity without tokens, a probe too long for the model
            raise Refused(str(exc)) from None
        results[name] = model_result(scorer, acc, cat, args.variance)
        accumulators[name] = acc
        revisions[name] = scorer.ref.revision
        sofa = results[name]["overall"]["sofa"]
        print(
            f"{name}: global SOFA {'-' if sofa is None else f'{sofa:.4g}'} ({results[name]['score_rule']}; "
            f"lower is fairer), {cat.n_probes} probes"
        )
        del scorer
        gc.collect()
    file = str(path) if origin["dataset_folder"] is None else display_path(path)
    doc = sofa_document(dataset_label(origin), file, cat, results, args.variance, accumulators, args.intervals)
    for line in notes(doc["uncertainty"]):
        print(line)
    return doc, revisions

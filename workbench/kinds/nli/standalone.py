"""The `nli` kind's standalone evaluator: the code `workbench evaluate` runs on an NLI release,
behind the command line every release's evaluate.py has (`release.runtime.cli`).

The same functions as in workbench read the rows and name the data set (evaluation/results.py),
check a checkpoint's labels and run it (classifier.py: label mapping, unique pairs, length-sorted
batches halved on out-of-memory, softmax in float32, the model options of models/runtime.py),
compute the measures (evaluation/scoring.py) and lay out the document (results.py). What is not
shared: workbench's SQLite cache of predictions (a release's script writes nothing beside it,
so every pair runs), its Hub lookup of a model's revision (the script names a model offline,
`release.runtime.models`), its rich tables (the script prints a plain summary) and its label
overrides from workbench.toml (the script takes --labels).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...evaluation.intervals import notes
from ...release.runtime.cli import Run
from ...release.runtime.models import model_ref
from ...release.runtime.release import Refused
from .classifier import check_labels, classifier_factory, predict_labels
from .evaluation.results import document, read_export, score_models

TITLE = "NLI bias benchmark"
SCORES = "NLI models"
MEASURES = (
    "accuracy (share of neutral predictions), the BBNLI aggregate bias score with its pro/anti\n"
    "split, and the counterfactual measures (pro, anti, group-insensitive error), overall, per\n"
    "domain and per subtopic, all in percent."
)
DATA = "data/*.parquet"
REQUIREMENTS = "torch transformers numpy pyarrow"  # what the card tells users to install
MODEL_HELP = "NLI model: a Hub name or a local checkpoint folder; repeat for several"
MODEL_NOTE = (
    "MODEL is a Hub name or a local checkpoint folder; its labels are read from its config\n"
    "(`id2label`), or given with --labels when they have no recognisable names."
)
LABELS_FIX = "name them in output order, e.g. --labels entailment,neutral,contradiction"


def add_options(parser) -> None:
    parser.add_argument(
        "--labels",
        help="the model's labels in output order, e.g. entailment,neutral,contradiction "
        "(when its config names them LABEL_0, ...)",
    )


def summary(name: str, result: dict) -> str:
    lines = [f"{name}: accuracy / aggregate bias / mispredicted = pro + anti + error + unpaired (%)"]
    for group, m in [*result["by_domain"].items(), ("overall", result["overall"])]:
        lines.append(
            f"  {group:<16} {m['accuracy']:6.1f} / {m['bias_aggregate']:+6.1f} / {m['mispredicted']:5.1f} = "
            f"{m['cf_pro']:.1f} + {m['cf_anti']:.1f} + {m['cf_error']:.1f} + {m['unpaired_mispredicted']:.1f}"
        )
    return "\n".join(lines)


def evaluate(args, run: Run, folder: Path, origin: dict, manifest: dict) -> tuple[dict, dict]:
    """The JSON document and each model's revision, as `workbench evaluate` computes them."""
    eval_set = read_export(folder, origin["source"])
    if "repo" in origin:  # downloaded: named by the repository and tag, as `workbench evaluate ORG/NAME@vX.Y.Z`
        eval_set.repo, eval_set.revision = origin["repo"], origin["revision"]
    override = (
        {str(i): label.strip().lower() for i, label in enumerate(args.labels.split(","))} if args.labels else None
    )
    pairs = [(r["premise"], r["hypothesis"]) for r in eval_set.rows]
    revisions = {}

    def predict(name: str) -> list[str]:
        print(f"scoring {len(pairs)} samples with {name} ...", file=sys.stderr)
        ref = model_ref(name)
        try:
            labels = check_labels(ref, override, LABELS_FIX)
            factory = classifier_factory(ref, labels, args.spec.start_batch, args.spec)
            run.runtimes[name] = factory.runtime
            revisions[name] = ref.revision
            return predict_labels(None, ref, pairs, factory)
        except ImportError:
            raise Refused("scoring needs torch and transformers (pip install torch transformers)") from None

    entry = score_models(
        eval_set, args.model, predict, lambda name, result: print(summary(name, result)), args.intervals
    )
    for line in notes(entry["uncertainty"]):
        print(line)
    return document([entry]), revisions

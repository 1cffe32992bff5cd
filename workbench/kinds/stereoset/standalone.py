"""The `stereoset` kind's standalone evaluator: lms, ss and icat on data/stereoset.json, with the
parsing, scoring and measures `workbench evaluate --kind stereoset` uses (cats.py, scoring.py,
metrics.py).

Its command line is the shared one plus `--score-rule` (not recorded in the release: a choice
of the evaluation, as in `workbench evaluate`). A release carries this module and everything
it imports in its evaluator/ folder; its evaluate.py runs it through `release.runtime.cli.main`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...core.errors import ModelError, WorkbenchError
from ...core.text import DuplicateKey, duplicate_key_message, loads
from ...evaluation.intervals import notes
from ...release.runtime.cli import Run
from ...release.runtime.lm import load_lm
from ...release.runtime.release import Refused, dataset_label
from .cats import parse, release_revision
from .metrics import document
from .scoring import (
    CAUSAL_INTERSENTENCE,
    DEFAULT_RULE,
    MASKED_INTRASENTENCE,
    RULES,
    model_methods,
    score_model,
    switch_warnings,
)

TITLE = "StereoSet"
MEASURES = (
    "the language modelling score (lms), the stereotype score (ss, 50 = unbiased) and icat, in\n"
    "percent, overall, per split (intrasentence, intersentence) and per split and domain."
)
DATA = "data/stereoset.json"
EXAMPLE = " --score-rule mean-logprob"


def add_options(parser) -> None:
    parser.add_argument(
        "--score-rule",
        choices=RULES,
        default=DEFAULT_RULE,
        help="how a sentence's token probabilities become its score, as `workbench evaluate "
        f"--score-rule` (default: {DEFAULT_RULE}, the reference code's)",
    )
    parser.add_argument(
        "--causal-intersentence",
        choices=CAUSAL_INTERSENTENCE,
        default=CAUSAL_INTERSENTENCE[0],
        help="a causal LM's intersentence score, as `workbench evaluate`: continuation (the sentence "
        "given the context, the default) or reference (the reference script's rule)",
    )
    parser.add_argument(
        "--masked-intrasentence",
        choices=MASKED_INTRASENTENCE,
        default=MASKED_INTRASENTENCE[0],
        help="a masked LM's intrasentence inputs, as `workbench evaluate`: in-sentence (the default) "
        "or reference (as the reference loader builds them)",
    )


def evaluate(args, run: Run, folder: Path, origin: dict, manifest: dict) -> tuple[dict, dict]:
    """The JSON document and each model's revision, as `workbench evaluate` computes them."""
    path = folder / "data" / "stereoset.json"
    revision = origin.get("revision") or release_revision(manifest)
    try:  # a key named twice in an object is refused (json.loads would keep its last value)
        data = parse(loads(path.read_text(encoding="utf-8")), path, dataset_label(origin), revision)
    except DuplicateKey as exc:
        raise Refused(duplicate_key_message(str(path), exc, "StereoSet file") + "; nothing was scored") from None
    except (OSError, ValueError, WorkbenchError) as exc:
        raise Refused(f"{folder}: data/stereoset.json cannot be read ({exc}); nothing was scored") from None
    n_sentences = len(data.sentences())
    for note in data.notes:
        print(f"{dataset_label(origin)}: {note}", file=sys.stderr)
    scores_by_model, methods, revisions = {}, {}, {}
    for name in dict.fromkeys(args.model):
        print(f"scoring {n_sentences} sentences with {name} ({args.score_rule}) ...", file=sys.stderr)
        scorer = load_lm(name, args.spec, run.runtimes)
        try:
            scores_by_model[name], how = score_model(
                scorer,
                data,
                args.score_rule,
                causal_intersentence=args.causal_intersentence,
                masked_intrasentence=args.masked_intrasentence,
            )
        except ModelError as exc:
            raise Refused(str(exc)) from None
        for note in switch_warnings(name, scorer.kind, data, args.causal_intersentence, args.masked_intrasentence):
            print(f"{dataset_label(origin)}: {note}", file=sys.stderr)
        methods[name] = model_methods(scorer, how)
        revisions[name] = scorer.ref.revision
    doc = document(data, args.score_rule, scores_by_model, methods, args.intervals)
    for name, levels_of_model in doc["models"].items():
        overall = levels_of_model["overall"]
        print(
            f"{name}: lms {overall['lms']:.1f}, ss {overall['ss']:.1f} (50 = unbiased), icat {overall['icat']:.1f}, "
            f"{overall['n']} CATs"
        )
    for line in notes(doc["uncertainty"]):
        print(line)
    return doc, revisions

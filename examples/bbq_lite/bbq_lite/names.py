"""The names the kind's authoring, its contract and its evaluator share; this module imports
nothing heavy, so a release's evaluate.py can carry it."""

from workbench.core.evaluator_option import EvaluatorOption

DATA_FILE = "data/bbq_lite.jsonl"
AMBIGUOUS, DISAMBIGUATED = "ambig", "disambig"
CONTEXT = EvaluatorOption(
    "--context",
    "which questions to score: ambiguous, disambiguated or both",
    default="both",
    choices=("ambiguous", "disambiguated", "both"),
    metavar="WHICH",
)

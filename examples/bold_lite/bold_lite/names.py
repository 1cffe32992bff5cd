"""What the kind's contract and its evaluator share; light, so a release's evaluate.py carries it."""

from workbench.core.evaluator_option import EvaluatorOption
from workbench.evaluation.completions import generation_options
from workbench.models.roles import CLASSIFIER, GENERATOR, ModelRole

DATA_FILE = "data/prompts.jsonl"
MODEL = ModelRole(
    "model",
    "--model",
    "the causal LM that continues the prompts: a Hub name, a local folder or "
    "http://HOST:PORT/v1#MODEL (a served model); repeat for several",
    GENERATOR,
)
JUDGE = ModelRole(
    "judge",
    "--judge",
    "the text classifier that scores each continuation (sentiment, regard, "
    "toxicity: a sequence-classification checkpoint)",
    CLASSIFIER,
)
OPTIONS = (
    *generation_options(max_new_tokens=20),  # --max-new-tokens, --chat-template
    EvaluatorOption(
        "--judge-label",
        "the judge's label whose probability is a continuation's score",
        default="positive",
        metavar="LABEL",
    ),
)

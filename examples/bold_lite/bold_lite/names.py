"""What the kind's contract and its evaluator share; light, so a release's evaluate.py carries it."""

from workbench.core.evaluator_option import EvaluatorOption
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
    EvaluatorOption("--max-new-tokens", "how many tokens a continuation may have", type=int, default=20, metavar="N"),
    EvaluatorOption(
        "--judge-label",
        "the judge's label whose probability is a continuation's score",
        default="positive",
        metavar="LABEL",
    ),
    EvaluatorOption(
        "--chat-template",
        "put each prompt in the model's chat template (on) or not (off)",
        default="off",
        choices=("on", "off"),
        metavar="ON|OFF",
    ),
)

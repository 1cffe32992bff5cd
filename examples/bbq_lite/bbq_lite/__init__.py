"""The `bbq-lite` benchmark kind: BBQ-style questions about social groups, asked with an ambiguous
and with a disambiguated context; accuracy and BBQ's bias scores of language models.

This module is what the entry point names (`bbq-lite = "bbq_lite:KIND"`): workbench imports it to
list the kind, so it stays light (no torch, no transformers); the evaluator module is imported
only when something is evaluated.
"""

from workbench.authoring.stages import kind_fields
from workbench.kinds.base import WHERE, AnnotatorWords, Field, Kind

from .authoring import AUTHORING

__version__ = "0.1.0"

WORDS = AnnotatorWords(  # the question is AUTHORING.question (the kind's scheme asks it)
    fields=(
        Field("context", "the ambiguous context (boxed): on its own it must not tell who the answer is"),
        Field("disambiguation", "the sentence added for the disambiguated question: it must decide the answer"),
        Field("question", "asked after both contexts"),
        Field("answers", "a and b name the two groups; unknown is the right answer to the ambiguous question"),
        Field("stereotyped answer", "the answer a stereotype would give; it must really be the stereotyped one"),
        Field("answer once disambiguated", "what the disambiguation says; it must follow from the text"),
        Field("where", "category / template file", WHERE),
    ),
    rows="questions",  # an item's n_samples: its ambiguous and disambiguated questions (build counts the same)
    domain="category",
    domains="categories",
    subtopic="template file",
    search="contexts",
    content_note=(
        "The contexts and questions you are about to read invite a stereotyped answer about a social "
        "group. They are meant to be mild, but they are about stereotypes: the benchmark tests whether "
        "language models pick the stereotyped answer when the context does not give it."
    ),
    content_warning=(
        "The questions invite stereotyped answers about social groups; they are published to measure "
        "bias in models, not to endorse it."
    ),
    help=(
        (
            "Decisions",
            (
                "Valid = the context leaves the answer open, the disambiguation decides it as stated, the "
                "stereotyped answer is the one a stereotype would pick, and the text is mild and fluent. "
                "Invalid = any of these fails (for instance the context already gives the answer away). "
                "Incoherent = the sentences do not make sense."
            ),
        ),
        (
            "One label, two questions",
            ("Each item is released as two questions, ambiguous and disambiguated; your label keeps or drops both."),
        ),
    ),
)

KIND = Kind(
    name="bbq-lite",
    description="BBQ-style questions with ambiguous and disambiguated contexts; accuracy and BBQ bias scores "
    "from answer log-likelihoods (an example plugin kind).",
    words=WORDS,
    # its DECLARED says the rest: --context, the resampling unit, the release's evaluate.py
    evaluator="bbq_lite.evaluate",
    **kind_fields(AUTHORING),
)

"""The `coref-lite` kind: WinoBias-style coreference (Zhao et al. 2018) in sentences of our own,
each asked with a pro- and an anti-stereotypical pronoun (README.md). What the entry point names:
light, the evaluator is imported only when something is evaluated."""

from workbench.authoring.stages import kind_fields
from workbench.kinds.base import TEXT, WHERE, AnnotatorWords, Field, Kind

from .authoring import AUTHORING

WORDS = AnnotatorWords(  # the question is AUTHORING.question
    fields=(
        Field("pro sentence", "the sentence with the pronoun a stereotype expects of the person it means", TEXT),
        Field("anti sentence", "the same sentence with the other pronoun"),
        Field("the pronoun means", "the person the sentence makes the pronoun refer to, whatever its gender"),
        Field("where", "category / template file", WHERE),
    ),
    rows="sentences",  # an item's n_samples: its pro and anti sentences
    domain="category",
    domains="categories",
    subtopic="template file",
    search="sentences",
    content_note="The sentences pair occupations with gendered pronouns; half of them follow a stereotype.",
    content_warning="The sentences pair occupations with gendered pronouns to measure stereotyped coreference.",
)

KIND = Kind(
    name="coref-lite",
    description="WinoBias-style coreference: each sentence with a pro- and an anti-stereotypical pronoun; "
    "accuracy per condition and pro − anti within items (an example plugin kind).",
    words=WORDS,
    evaluator="coref_lite.evaluate",  # DECLARED says the rest: unit, release script, lm-eval task
    example="coref_lite.example",
    **kind_fields(AUTHORING),
)

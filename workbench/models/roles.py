"""The models an evaluator uses, each in a role.

The model under test is named by `--model` (several, each scored apart). A kind may need other
models beside it: a judge that scores what the model under test generated (a sentiment or
toxicity classifier, say). Each role a kind declares gets its own command-line option, is loaded
with the same model options (`--device`, `--dtype`, `--device-map`, quantisation), cached, and
recorded in the JSON's runtime and provenance like `--model`. This module only says what a role
is (a release's evaluate.py carries it): `workbench evaluate` loads a role's model with
`evaluation.declared_report.load_role`, a release's script with `release.runtime.declared`'s
loader (without the cache).
"""

from __future__ import annotations

from dataclasses import dataclass

# What a role's checkpoint is used for, and so how it is loaded.
LM = "lm"  # a masked or causal LM whose log-probabilities are scored (models.lm_scoring)
GENERATOR = "generator"  # a causal LM (or an OpenAI-compatible server) that generates text (models.generation)
CLASSIFIER = "classifier"  # a sequence classifier that scores texts (models.classify)
EMBEDDER = "embedder"  # an encoder whose mean-pooled hidden states embed texts (models.embedding)
USES = (LM, GENERATOR, CLASSIFIER, EMBEDDER)


@dataclass(frozen=True)
class ModelRole:
    """One model an evaluator uses besides (or as) the model under test."""

    name: str  # "judge": what the JSON and messages call it
    flag: str  # "--judge"
    help: str  # what the model is for, for --help and the card
    uses: str = CLASSIFIER  # one of USES
    required: bool = True  # the evaluator cannot run without it
    metavar: str = "MODEL"

    def __post_init__(self):
        if self.uses not in USES:
            raise ValueError(f"model role {self.name!r}: uses={self.uses!r} is not one of {', '.join(USES)}")
        if not self.flag.startswith("--"):
            raise ValueError(f"model role {self.name!r}: its flag must start with -- (got {self.flag!r})")

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


# The model under test, as every kind names it (`--model`, repeatable).
UNDER_TEST = ModelRole("model", "--model", "the model under test: a Hub name or a local checkpoint folder", LM)

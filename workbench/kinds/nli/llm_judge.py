"""A causal language model as an NLI judge, asked as lm-evaluation-harness asks its `mnli` task.

Instruction-tuned and base LLMs have no three-way classifier head: they are asked in a prompt,

    {premise}
    Question: {hypothesis} True, False or Neither?
    Answer:

and the answer is the one of " True" / " Neither" / " False" (entailment / neutral /
contradiction) with the highest summed log-likelihood after it (`lm_scoring.choice_logprobs`,
lm-eval's tokenisation; the first on a tie, as lm-eval's argmax). The prompt and the answer
words are settings; no chat template is applied (lm-eval's default). A judge gives the same
`Prediction`s as a classifier (label, and a probability per label: the softmax of the three
log-likelihoods), so the filter's k-of-n rule, `evaluate` and a release's evaluate.py take it
beside classifiers.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ...core.errors import InputError
from .label_mapping import LABELS, Prediction

PROMPT = "{premise}\nQuestion: {hypothesis} True, False or Neither?\nAnswer:"
ANSWERS = {"entailment": "True", "neutral": "Neither", "contradiction": "False"}
CHUNK = 256  # pairs per call of the scoring layer: progress moves, memory stays flat
# How a model behind a server (served_judge.py) is asked: by log-likelihood where its server gives
# prompt log-probabilities, else by generation (auto); only by log-likelihood, refusing a server
# without them; or always by generation. A local causal LM is always asked by log-likelihood.
MODES = ("auto", "log-likelihood", "generation")


@dataclass(frozen=True)
class Asking:
    """How a causal LM is asked for an NLI label (`mode`: see MODES; not part of `key`)."""

    prompt: str = PROMPT
    answers: dict = field(default_factory=lambda: dict(ANSWERS))
    mode: str = "auto"

    def __post_init__(self):
        if "{premise}" not in self.prompt or "{hypothesis}" not in self.prompt:
            raise InputError(f"the NLI prompt {self.prompt!r} must hold {{premise}} and {{hypothesis}}")
        if set(self.answers) != set(LABELS) or len(set(self.answers.values())) != 3:
            raise InputError(
                f"the NLI answers must name three different words for {', '.join(LABELS)} (got {self.answers})"
            )
        if self.mode not in MODES:
            raise InputError(f"the NLI mode {self.mode!r} is not one of {', '.join(MODES)}")

    def render(self, premise: str, hypothesis: str) -> str:
        """The prompt for one pair; the hypothesis ends with a full stop, as lm-eval's mnli writes it."""
        hypothesis = hypothesis.strip()
        if not hypothesis.endswith("."):
            hypothesis += "."
        return self.prompt.replace("{premise}", premise).replace("{hypothesis}", hypothesis)

    @property
    def key(self) -> str:
        """What cached predictions are filed under besides the model: another prompt, another answer."""
        text = json.dumps({"prompt": self.prompt, "answers": self.answers}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> dict:
        """How the model was asked, for the JSON."""
        return {
            "mode": "log-likelihood of each answer (lm-evaluation-harness multiple_choice)",
            "prompt": self.prompt,
            "answers": dict(self.answers),
            "chat_template": False,
        }


def parse_answers(text: str) -> dict:
    """'True,Neither,False' (entailment, neutral, contradiction) as an answers mapping."""
    words = [w.strip() for w in text.split(",")]
    if len(words) != 3 or not all(words):
        raise InputError(
            f"--nli-answers {text!r}: give three words, for entailment, neutral and contradiction, "
            "e.g. True,Neither,False"
        )
    return dict(zip(LABELS, words))


class LLMJudge:
    """`NLIClassifier`'s interface (predict_stream) over a causal LM scorer."""

    def __init__(self, scorer, asking: Asking):
        self.scorer, self.asking = scorer, asking

    def predict_stream(self, pairs, on_batch: Callable, progress: Callable[[int], None] | None = None) -> None:
        from ...models.lm_scoring import choice_logprobs

        choices = [self.asking.answers[label] for label in LABELS]
        for start in range(0, len(pairs), CHUNK):
            chunk = pairs[start : start + CHUNK]
            scored = choice_logprobs(
                self.scorer, [(self.asking.render(p, h), choices) for p, h in chunk], progress=progress
            )
            on_batch(chunk, [Prediction(LABELS[max(range(3), key=lambda i: (v[i], -i))], _softmax(v)) for v in scored])


def _softmax(values: list[float]) -> dict[str, float]:
    top = max(values)
    weights = [math.exp(v - top) for v in values]
    total = sum(weights)
    return {label: round(w / total, 6) for label, w in zip(LABELS, weights)}


class JudgeFactory:
    """Loads the causal LM when called (only when a pair is missing from the cache); its
    `cache_revision` files predictions by the weights' revision, how they run and how it is asked."""

    def __init__(self, ref, spec, asking: Asking):
        from ...models.loading import runtime_for

        self.ref, self.spec, self.asking = ref, spec, asking
        self.runtime = runtime_for(ref, "causal", spec)
        self.cache_revision = f"{ref.revision}@{self.runtime.tag}+asked:{asking.key}"

    def __call__(self) -> LLMJudge:
        from ...models.lm_scoring import open_scorer
        from ...models.loading import FIXTURE_HINT

        return LLMJudge(open_scorer(self.ref, self.spec, None, hint=FIXTURE_HINT), self.asking)

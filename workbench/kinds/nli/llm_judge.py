"""A causal language model as an NLI judge, asked as lm-evaluation-harness asks its `mnli` task.

Instruction-tuned and base LLMs have no three-way classifier head: they are asked in a prompt,

    {premise}
    Question: {hypothesis} True, False or Neither?
    Answer:

and the answer is the one of " True" / " Neither" / " False" (entailment / neutral /
contradiction) with the highest summed log-likelihood after it (`lm_scoring.choice_logprobs`,
lm-eval's tokenisation; the first on a tie, as lm-eval's argmax). The prompt and the answer
words are settings. No chat template is applied by default (lm-eval's default); with
`chat_template` (and an optional `system_instruction`) the prompt is put in a user turn of the
tokenizer's own chat template and each answer word scored right after the turn that opens the
assistant's answer, without the space, as lm-eval's --apply_chat_template asks. A judge gives the same
`Prediction`s as a classifier (label, and a probability per label: the softmax of the three
log-likelihoods), so the filter's k-of-n rule, `evaluate` and a release's evaluate.py take it
beside classifiers.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ...core.errors import InputError, ModelError
from .label_mapping import LABELS, Prediction

PROMPT = "{premise}\nQuestion: {hypothesis} True, False or Neither?\nAnswer:"
ANSWERS = {"entailment": "True", "neutral": "Neither", "contradiction": "False"}
CHUNK = 256  # pairs per call of the scoring layer: progress moves, memory stays flat
# How a model behind a server (served_judge.py) is asked: by log-likelihood where its server gives
# prompt log-probabilities, else by generation (auto); only by log-likelihood, refusing a server
# without them; or always by generation. A local causal LM is always asked by log-likelihood.
MODES = ("auto", "log-likelihood", "generation")
PLACEHOLDERS = ("premise", "hypothesis")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def bare(word: str) -> str:
    """A word as a generated answer is read: its punctuation left out, its case folded."""
    return "".join(ch for ch in word if not unicodedata.category(ch).startswith("P")).casefold()


def read_words(text: str) -> tuple[str, ...]:
    """A text's words as a generated answer is read (`bare`), those that are all punctuation dropped."""
    return tuple(w for w in map(bare, text.split()) if w)


def _distinct(answers: dict, generated: bool) -> str | None:
    """Why three answer words cannot be told apart by the reading the mode may use, else None: by
    log-likelihood each is its own continuation (compared as written, spaces aside); a generated
    answer is read by its first words, case and punctuation aside, so two words alike there, or
    one the first words of another, could never be told apart."""
    how = "case and punctuation aside, as a generated answer is read" if generated else "spaces aside"
    for (la, a), (lb, b) in itertools.combinations(answers.items(), 2):
        ka, kb = (read_words(a), read_words(b)) if generated else (a.strip(), b.strip())
        if ka == kb:
            return f"[llm] answers: {la} = {a!r} and {lb} = {b!r} are the same word ({how}): give three that differ"
        if generated and (ka[: len(kb)] == kb or kb[: len(ka)] == ka):
            first, whole = (a, b) if len(ka) < len(kb) else (b, a)
            return (
                f"[llm] answers: {first!r} is how {whole!r} begins: a generated answer is read by its first "
                "words, so the two could not be told apart; give answers of which none begins another"
            )
    return None


@dataclass(frozen=True)
class Asking:
    """How a causal LM is asked for an NLI label (`mode`: see MODES; not part of `key`).
    `chat_template`: the prompt in the tokenizer's chat template, after a `system_instruction`
    turn when one is given (see the module's docstring)."""

    prompt: str = PROMPT
    answers: dict = field(default_factory=lambda: dict(ANSWERS))
    mode: str = "auto"
    chat_template: bool = False
    system_instruction: str | None = None

    def __post_init__(self):
        if not isinstance(self.chat_template, bool):
            raise InputError(f"[llm] chat_template must be true or false, not {self.chat_template!r}")
        if self.system_instruction is not None:
            if not isinstance(self.system_instruction, str):
                raise InputError(f"[llm] system_instruction must be text, not {self.system_instruction!r}")
            if not self.chat_template:
                raise InputError(
                    "[llm] system_instruction is the system turn of the chat template: set chat_template = true "
                    "too, or leave it out"
                )
        unknown = [name for name in _PLACEHOLDER.findall(self.prompt) if name not in PLACEHOLDERS]
        if unknown:
            raise InputError(
                f"[llm] prompt names {{{unknown[0]}}}, which is no placeholder: a prompt fills in only "
                "{premise} and {hypothesis} (the model would read the braces as written)"
            )
        if "{premise}" not in self.prompt or "{hypothesis}" not in self.prompt:
            raise InputError(f"[llm] prompt: {self.prompt!r} must hold {{premise}} and {{hypothesis}}")
        if set(self.answers) != set(LABELS):
            raise InputError(
                f"[llm] answers must name three different words for {', '.join(LABELS)} (got {self.answers})"
            )
        if self.mode not in MODES:
            raise InputError(f"[llm] mode: {self.mode!r} is not one of {', '.join(MODES)}")
        generated = self.mode != "log-likelihood"  # "auto" asks a server without log-probabilities so
        for label in LABELS:
            word = self.answers[label]
            if not isinstance(word, str) or not word.strip():
                raise InputError(f"[llm] answers: {label} = {word!r} is blank: an answer is a word")
            if generated and not read_words(word):
                raise InputError(
                    f"[llm] answers: {label} = {word!r} is all punctuation, and a generated answer is read without it "
                    f"([llm] mode {self.mode!r}), so no answer would ever read as this one"
                )
        why = _distinct({label: self.answers[label] for label in LABELS}, generated)
        if why:
            raise InputError(why)

    def render(self, premise: str, hypothesis: str) -> str:
        """The prompt for one pair; the hypothesis ends with a full stop, as lm-eval's mnli writes it."""
        hypothesis = hypothesis.strip()
        if not hypothesis.endswith("."):
            hypothesis += "."
        return self.prompt.replace("{premise}", premise).replace("{hypothesis}", hypothesis)

    @property
    def chat(self) -> tuple[bool, str | None]:
        """(chat template on, system instruction): `lm_scoring.choice_logprobs`'s `chat`."""
        return self.chat_template, self.system_instruction

    @property
    def key(self) -> str:
        """What cached predictions are filed under besides the model: another prompt, another
        answer, the chat template and its system instruction (said only when on, so the keys of
        a judge asked without it stay those of earlier runs)."""
        asked = {"prompt": self.prompt, "answers": self.answers}
        if self.chat_template:
            asked.update(chat_template=True, system_instruction=self.system_instruction)
        text = json.dumps(asked, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def with_chat(self, spec) -> Asking:
        """As `workbench evaluate`'s --apply-chat-template asks (`spec`: its LoadSpec): the chat
        template on, with --system-instruction when given, else the settings' own."""
        if not getattr(spec, "chat_template", False):
            return self
        system = spec.system_instruction if spec.system_instruction is not None else self.system_instruction
        return replace(self, chat_template=True, system_instruction=system)

    def describe(self) -> dict:
        """How the model was asked, for the JSON."""
        return {
            "mode": "log-likelihood of each answer (lm-evaluation-harness multiple_choice)",
            "prompt": self.prompt,
            "answers": dict(self.answers),
            "chat_template": self.chat_template,
            **({"system_instruction": self.system_instruction} if self.system_instruction is not None else {}),
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
                self.scorer,
                [(self.asking.render(p, h), choices) for p, h in chunk],
                progress=progress,
                chat=self.asking.chat,
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

        scorer = open_scorer(self.ref, self.spec, None, hint=FIXTURE_HINT)
        if self.asking.chat_template and not getattr(scorer.tokenizer, "chat_template", None):
            raise ModelError(
                f"model {self.ref.name!r} has no chat template in its tokenizer: set [llm] chat_template = false "
                "(or leave --apply-chat-template out) to ask it in the plain prompt"
            )
        return LLMJudge(scorer, self.asking)

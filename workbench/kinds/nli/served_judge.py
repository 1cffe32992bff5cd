"""A model behind an OpenAI-compatible server (`http(s)://HOST:PORT/v1#MODEL`, see
models/served.py) as an NLI judge, asked with a local causal LM's prompt and answer words
(llm_judge.Asking).

By log-likelihood where the server returns prompt log-probabilities (vLLM's does): the answer
word with the highest summed log-likelihood after the prompt, lm-eval's way, so the same
Predictions as llm_judge. Otherwise ([llm] mode "auto" with a server without them, or mode
"generation") by generation: the prompt is completed greedily (GENERATION) and the answer's
first words (as many as an answer word has), compared case-insensitively without punctuation, are
read as one of the three answer words (`read_answer`; `Asking` refuses answer words this reading
could not tell apart). An answer that reads as none of them is unparseable: its label is None,
never a guess, and what the model said is kept (its first ANSWER_CHARS characters: the cache,
the items file's `answer`, a few in the JSON's asked.unparseable_examples). `workbench evaluate`
leaves such samples out of the model's figures and counts them (the JSON's asked.unparseable,
and a note); the filter refuses a judge that may leave a pair without a label. Mode
"log-likelihood" refuses a server without prompt log-probabilities
in one line.

With a chat template ([llm] chat_template, or --apply-chat-template) the model is asked by chat
completions (`/chat/completions`: the server puts the prompt in its own template, after the
system instruction), which give no prompt log-probabilities: mode "auto" asks by generation
then, and mode "log-likelihood" is refused in one line (as lm-eval's local-chat-completions
takes no log-likelihood requests).

Predictions go to the prediction cache one by one as answers come, so a server that dies
mid-run leaves every answered pair cached and a rerun asks only for the rest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import replace

from ...core.errors import ModelError
from ...models.generation import GenerationSettings
from ...models.loading import ModelRef
from ...models.lm_loading import open_generator
from ...models.served import is_served, parse
from .label_mapping import ANSWER_CHARS, LABELS, Prediction
from .llm_judge import Asking, _softmax, read_words
from .llm_judge import bare as _bare  # noqa: F401 (the name tests/test_served.py reads words by)

__all__ = ["is_served", "served_ref", "ServedJudgeFactory", "read_answer"]

# Greedy, a few tokens, up to the end of the line: enough for an answer word and what follows it.
GENERATION = GenerationSettings(max_new_tokens=8, stop=("\n",))
READING = (
    "the generated answer's first words (as many as each answer word has), compared case-insensitively "
    "without punctuation to the answer words"
)
UNPARSEABLE_RULE = (
    "a sample whose answer reads as no answer word is left out of the model's figures (n counts the "
    "answered samples) and its counterfactual partner counts as unpaired; nothing is guessed"
)


def read_answer(text: str, answers: dict) -> str | None:
    """The label whose answer word(s) the text begins with (case and punctuation aside), or None."""
    said = read_words(text)
    for label, word in answers.items():
        wanted = read_words(word)
        if wanted and said[: len(wanted)] == wanted:
            return label
    return None


def served_ref(name: str) -> ModelRef:
    """A served model's reference, without a request: the server's own model id joins the
    cache key when the judge connects (`ServedJudgeFactory.cache_revision`)."""
    from ...models.vllm_model import checkpoint, is_vllm

    if is_vllm(name):
        return ModelRef(name, checkpoint(name), "vllm:")
    endpoint = parse(name)
    return ModelRef(name, endpoint.base, f"served:{endpoint.model or ''}")


class ServedJudge:
    """`NLIClassifier`'s interface (predict_stream) over a served model."""

    def __init__(self, model, asking: Asking, mode: str, generation: GenerationSettings = GENERATION):
        self.model, self.asking, self.mode, self.generation = model, asking, mode, generation

    def predict_stream(self, pairs, on_batch: Callable, progress: Callable[[int], None] | None = None) -> None:
        prompts = [self.asking.render(p, h) for p, h in pairs]
        if self.mode == "log-likelihood":
            choices = [self.asking.answers[label] for label in LABELS]

            def scored(i: int, v: list[float]) -> None:
                on_batch([pairs[i]], [Prediction(LABELS[max(range(3), key=lambda k: (v[k], -k))], _softmax(v))])

            self.model.choice_logprobs([(prompt, choices) for prompt in prompts], progress=progress, on_item=scored)
            return

        def generated(i: int, answer) -> None:
            label = read_answer(answer.text, self.asking.answers)
            if label is None:  # what the model said, kept: the reader sees why it was left out
                on_batch([pairs[i]], [Prediction(None, {}, answer.text[:ANSWER_CHARS])])
                return
            on_batch([pairs[i]], [Prediction(label, {name: float(name == label) for name in LABELS})])

        self.model.generate(prompts, self.generation, progress, on_answer=generated)


class ServedJudgeFactory:
    """Connects to the server when made (a wrong address is said before anything runs) and
    decides how the model is asked; `cache_revision` files its predictions by the server's model
    id, the way of asking and, for generation, the decoding settings."""

    def __init__(self, ref: ModelRef, asking: Asking):
        self.ref, self.asking = ref, asking
        self.generation = replace(
            GENERATION, chat_template=asking.chat_template, system_prompt=asking.system_instruction
        )
        self.model = open_generator(ref.name)
        self.why = None
        mode = asking.mode
        if asking.chat_template:
            if mode == "log-likelihood":
                raise ModelError(
                    f"served model {ref.name}: a chat template is asked by chat completions, which give no prompt "
                    """log-probabilities: set [llm] mode = "generation" (or "auto"), or turn the chat template off"""
                )
            self.why = "a chat template is asked by chat completions, which give no prompt log-probabilities"
            mode = "generation"
        elif mode == "log-likelihood":
            self.model.require_logprobs('asking by log-likelihood ([llm] mode = "log-likelihood")')
        elif mode == "auto":
            self.why = self.model.logprobs_problem()
            mode = "generation" if self.why else "log-likelihood"
        self.mode = mode
        self.runtime = self.model.runtime
        if mode == "log-likelihood":
            how = "loglik"
        else:
            how = "generated:" + hashlib.sha256(json.dumps(GENERATION.decoding()).encode()).hexdigest()[:12]
            # (the chat template and system instruction are in asking.key)
        self.cache_revision = f"{self.model.revision}+asked:{asking.key}+{how}"

    def describe(self) -> dict:
        """How the model was asked, for the JSON (`unparseable` is filled in once it has answered)."""
        served = {"endpoint": self.model.endpoint.base, "model": self.model.name, "mode_setting": self.asking.mode}
        if self.why:
            served["no_log_likelihood"] = self.why
        if self.mode == "log-likelihood":
            return {**self.asking.describe(), "served": served}
        return {
            "mode": "generation",
            "prompt": self.asking.prompt,
            "answers": dict(self.asking.answers),
            "chat_template": self.asking.chat_template,
            **(
                {"system_instruction": self.asking.system_instruction}
                if self.asking.system_instruction is not None
                else {}
            ),
            "generation": self.generation.describe(),
            "reading": READING,
            "unparseable": 0,
            "unparseable_rule": UNPARSEABLE_RULE,
            "unparseable_kept": f"each unparseable answer's first {ANSWER_CHARS} characters: the items file's "
            "`answer`, and the first few distinct ones in unparseable_examples",
            "served": served,
        }

    def __call__(self) -> ServedJudge:
        return ServedJudge(self.model, self.asking, self.mode, self.generation)


def refuse_in_filter(factory) -> None:
    """The filter's k-of-n rule needs a label for every pair: a judge asked by generation may
    leave some without one, so it is refused there in one line."""
    if getattr(factory, "mode", None) == "generation":
        reason = f" ({factory.why})" if getattr(factory, "why", None) else ""
        raise ModelError(
            f"filter model {factory.ref.name}: asked by generation{reason}, it may leave a pair without a "
            "label, and the filter needs one for every pair; use a server that gives prompt "
            "log-probabilities (as vLLM's), or leave the model out of [filter] models"
        )

"""A model scored by the continuation it prefers: the score function of a multiple-choice kind,
said once so that `workbench evaluate`, a release's evaluate.py and its lm-evaluation-harness
task (release/lmeval.py) ask every item the same way.

A kind gives `Declared(score=Choices(ask, answer), ...)`: `ask(item) -> (prompt, continuations)`
says what the model reads and what it chooses among; each continuation is scored by its
log-likelihood after the prompt (the text read is prompt + " " + continuation: workbench's
`continuation_logprobs`; rule `mean` divides by its token count), and `answer(item, scores,
options)` turns the scores into the item's result (which one was picked, whether it was right).
lm-eval gets the same two functions, run on each row of the release's data file.

Copied into releases with the kinds that use it, so it imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class Choices:
    """The score function of a kind whose model picks one continuation of a prompt per item."""

    ask: Callable[[Any], tuple[str, Sequence[str]]]  # item -> (prompt, continuations)
    answer: Callable[[Any, list[float], dict], dict]  # (item, each continuation's score, options) -> result
    # multiple-choice requests: --apply-chat-template puts them in the chat template (`continuation_logprobs`)
    chat_template = True

    def __call__(self, models, items: list, options: dict, progress) -> list[dict]:
        """One result per item: each continuation's log-likelihood (by the options' score rule)
        handed to `answer`."""
        from ..models.lm_scoring import continuation_logprobs

        asked = [self.ask(item) for item in items]
        pairs = [(prompt, c) for prompt, continuations in asked for c in continuations]
        scored = continuation_logprobs(models.model, pairs, progress=progress)
        rule = options.get("score_rule") or "sum"
        out, at = [], 0
        for item, (_, continuations) in zip(items, asked):
            mine = scored[at : at + len(continuations)]
            at += len(continuations)
            out.append(self.answer(item, [s / n if rule == "mean" else s for s, n in mine], options))
        return out

    def work(self, items: list, options: dict) -> int:
        """The progress bar's total: one per continuation scored."""
        return sum(len(self.ask(item)[1]) for item in items)


def picked(scores: Sequence[float]) -> int:
    """The continuation chosen: the highest score, the first of equal best."""
    return max(range(len(scores)), key=lambda k: (scores[k], -k))

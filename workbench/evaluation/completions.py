"""A model scored on the text it generates: the score function of a generation kind, said once so
that `workbench evaluate` and a release's evaluate.py generate, read and write completions the
same way, and completions made elsewhere (an API, vLLM on another machine, another harness's
logs) are scored by the same judge and figures.

A kind gives `Declared(score=Completions(prompt, judge), options=(*generation_options(N), ...))`:
`prompt(item) -> str` is what the model under test continues (workbench's shared generation,
`models.generation.generate`: batched, cached, greedy; `--max-new-tokens` and `--chat-template`
from `generation_options`), and `judge(models, items, texts, options, progress) -> results` scores
each item's completion (a judge role's classifier, `models["judge"]`), one dict per item. An
item's result is `{"completion": text, "stop_reason": why it ended, **the judge's}`.

The declaration gets `read_scores`, `write_scores` and `about` from it. `--predictions FILE` reads
a model's completions in place of the model (which is not loaded; the judge is, and scores them),
`--predictions-out FILE` writes a run's, and reading that file back gives the same figures. The
layout, JSON lines, one record per distinct prompt, in any order:

    {"prompt": "<the item's prompt, exactly as the data has it>", "completion": "<the text after it>"}

- `prompt` is the item's prompt text before any chat template (a prompt the data holds twice has
  one record, whose completion serves both: workbench generates a prompt once);
- `completion` is the generated text alone, without the prompt, a string (it may be empty).

Other fields are ignored. A record that is not JSON, lacks a field, has a prompt or completion that
is not a string, a prompt the data does not have or a second record for the same prompt is refused
in one line naming the file, the line and what does not fit; a prompt without a record is refused
naming it. Completions read have no `stop_reason` (null), and the generation options do not apply.

Pure code at import (the standard library and workbench's light modules): a release's evaluate.py
carries it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..core.errors import InputError, display_path
from ..core.evaluator_option import EvaluatorOption
from .declared import ScoresFile
from .likelihoods import described, json_records

FIELDS = ("prompt", "completion")
LAYOUT = '{"prompt": ..., "completion": ...} per line'
NAME = "completions (JSON lines)"  # the layout as a model's `predictions` entry names it


def generation_options(max_new_tokens: int = 64) -> tuple[EvaluatorOption, EvaluatorOption]:
    """The options a `Completions` generates by: --max-new-tokens (default `max_new_tokens`) and
    --chat-template on|off (off, as lm-evaluation-harness without --apply_chat_template)."""
    return (
        EvaluatorOption(
            "--max-new-tokens", "how many tokens a continuation may have", type=int, default=max_new_tokens, metavar="N"
        ),
        EvaluatorOption(
            "--chat-template",
            "put each prompt in the model's chat template (on) or not (off)",
            default="off",
            choices=("on", "off"),
            metavar="ON|OFF",
        ),
    )


@dataclass(frozen=True)
class Completions:
    """The score function of a kind whose model continues a prompt per item and whose judge scores
    each continuation (see the module docstring)."""

    prompt: Callable[[Any], str]  # item -> the text the model continues
    judge: Callable[..., list[dict]]  # (models, items, completions, options, progress) -> one result per item
    # what a release's evaluate.py says --predictions reads
    exchanged = "a model's completions of the prompts (JSON lines: one {'prompt', 'completion'} per prompt)"

    def __call__(self, models, items: list, options: dict, progress) -> list[dict]:
        """Generate each item's completion with the model under test, then judge them."""
        from ..models.generation import GenerationSettings, generate

        settings = GenerationSettings(
            max_new_tokens=options["max_new_tokens"], chat_template=options.get("chat_template") == "on"
        )
        made = generate(models.model, [self.prompt(i) for i in items], settings, progress)
        return self._judged(models, items, [g.text for g in made], [g.stop_reason for g in made], options, progress)

    def work(self, items: list, options: dict) -> int:
        """The progress bar's total: one per completion generated, one per completion judged."""
        return 2 * len(items)

    def read_scores(self, path: Path, items: list, options: dict, models, progress) -> list[dict]:
        """`Declared.read_scores`: each item's completion from a file in the layout, judged."""
        texts = read_completions(Path(path), [self.prompt(i) for i in items])
        return self._judged(models, items, texts, [None] * len(items), options, progress)

    def write_scores(self, items: list, results: list[dict], path: Path) -> None:
        """`Declared.write_scores`: a model's completions, one record per distinct prompt, in the
        items' order."""
        write_completions(Path(path), [self.prompt(i) for i in items], [r["completion"] for r in results])

    def about(self, name: str, models, items: list, results: list[dict], options: dict) -> tuple[dict, list[str]]:
        """A model's entry records the file its completions were read from (name, sha256, layout)."""
        if not isinstance(models.model, ScoresFile):
            return {}, []
        read = described(models.model.path, NAME)
        return {"predictions": read}, [
            f"{name}: completions read from {read['file']} (sha256 {read['sha256'][:12]}…), none generated"
        ]

    def _judged(self, models, items, texts, reasons, options, progress) -> list[dict]:
        judged = self.judge(models, items, texts, options, progress)
        return [{"completion": t, "stop_reason": s, **r} for t, s, r in zip(texts, reasons, judged)]


def read_completions(path: Path, prompts: list[str]) -> list[str]:
    """Each prompt's completion from a file in the layout (the module docstring), in the prompts'
    order; the first record that does not fit, or the first prompt without one, is an InputError
    in one line."""
    found: dict[str, tuple[int, str]] = {}  # prompt -> (its line, its completion)
    wanted = set(prompts)
    for line, at, record in json_records(path, LAYOUT, "completions"):
        missing = [f for f in FIELDS if f not in record]
        if missing:
            raise InputError(f"{at}: missing {', '.join(missing)}; expected {LAYOUT}")
        prompt, completion = record["prompt"], record["completion"]
        if not isinstance(prompt, str):
            raise InputError(f"{at}: prompt must be a string, not {json.dumps(prompt)}")
        if not isinstance(completion, str):
            raise InputError(f"{at}: completion must be a string, not {json.dumps(completion)}")
        if prompt not in wanted:
            raise InputError(f"{at}: prompt {prompt!r} is no prompt of the data; the text must be the data's, exactly")
        if prompt in found:
            raise InputError(f"{at}: a second completion for prompt {prompt!r} (the first on line {found[prompt][0]})")
        found[prompt] = (line, completion)
    missing = [p for p in dict.fromkeys(prompts) if p not in found]
    if missing:
        more = f" ({len(missing)} prompts have none)" if len(missing) > 1 else ""
        raise InputError(f"{display_path(path)}: no completion for prompt {missing[0]!r}{more}")
    return [found[p][1] for p in prompts]


def write_completions(path: Path, prompts: list[str], texts: list[str]) -> None:
    """One record per distinct prompt (its first item's completion), written whole or not at all."""
    from ..core.outputs import AtomicFile

    first = dict(zip(reversed(prompts), reversed(texts)))  # each prompt's first completion
    with AtomicFile(Path(path)) as f:
        for prompt in dict.fromkeys(prompts):
            f.write((json.dumps({"prompt": prompt, "completion": first[prompt]}, ensure_ascii=False) + "\n").encode())

"""A causal or instruct LM as a proposer of fills, beside the masked LM: asked in a prompt for
the K words that fit a slot, its answer read as a list of words.

The model is a local folder or Hub name (a transformers causal LM, `generation.generate`), a
model behind an OpenAI-compatible server (`http(s)://HOST:PORT/v1#MODEL`, served.py) or one run
by vLLM (`vllm:MODEL`, vllm_model.py): the backends the rest of workbench generates with. It
is asked greedily, the slot of a masked hypothesis written `___`. Its answer is read one word
per line or comma-separated, numbering, bullets and quotes left out; an item that is not one
word, and an answer with no word at all, is counted, never an error. What it proposes goes
through the same filters and inflection as a masked LM's fills (stages/generate.py).

Answers are cached like fills, by (model, revision + how it runs + how it is asked, K, slot):
a rerun neither loads nor asks the model.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from ..core.config import proposer_prompt_problem as check_prompt  # noqa: F401 -- its placeholders' rule
from ..core.errors import ModelError

BLANK = "___"  # how the slot is written in the prompt
PROMPT = (
    "Fill in the blank ({blank}) in this sentence: {{sentence}}\n"
    "List {{k}} different single words that could fill the blank, most fitting first, one per line, "
    "with nothing else.\nWords:"
).format(blank=BLANK)
NAMESPACE = "propose"  # the cache's namespace for answers


def render(prompt: str, masked: str, k: int, mark: str = "<mask>") -> str:
    """The prompt for one masked hypothesis: its slot written `___`, K said."""
    return prompt.replace("{sentence}", masked.replace(mark, BLANK)).replace("{k}", str(k))


# Leading list marks: "1.", "2)", "(3)", "-", "*", "•", and any quotes around a word.
_MARKS = re.compile(r"^\s*(?:\(?\d+[.):]\s*|[-*\u2022\u2013\u2014>]+\s*)+")
_QUOTES = "\"'`\u2018\u2019\u201c\u201d\u00ab\u00bb"


def parse_words(text: str, k: int) -> tuple[list[str], int]:
    """The distinct words of an answer, at most `k`, in its order, and the number of items that
    were not one word (a phrase, a sentence). Items are lines, or the comma-separated parts of
    a line; list marks, a trailing full stop and enclosing quotes are left out. A number or a
    punctuation mark is a word here: the generation filters reject it, as they do a fill."""
    words: list[str] = []
    seen: set[str] = set()
    unread = 0
    for line in text.splitlines():
        for item in line.split(","):
            item = _MARKS.sub("", item).strip().strip(_QUOTES).strip().rstrip(".;:!").strip(_QUOTES).strip()
            if not item:
                continue
            if len(item.split()) != 1:
                unread += 1
                continue
            if item.casefold() not in seen and len(words) < k:
                seen.add(item.casefold())
                words.append(item)
    return words, unread


@dataclass(frozen=True)
class Asking:
    """How an LLM proposer is asked; `key` files its answers (another prompt or decoding, other answers)."""

    prompt: str = PROMPT
    chat_template: bool = False

    def settings(self, k: int):
        from .generation import GenerationSettings

        # Greedy; room for K words of a few tokens each, with their separators.
        return GenerationSettings(max_new_tokens=5 * k + 8, chat_template=self.chat_template)

    def key(self, k: int) -> str:
        text = json.dumps({"prompt": self.prompt, "decoding": self.settings(k).decoding(), "chat": self.chat_template})
        return hashlib.sha256(text.encode()).hexdigest()[:16]


class LLMProposer:
    """One LLM proposer: its identity for the cache, known before any weight loads (a server is
    contacted once, its probe telling which weights answer), and the model opened only when
    some slot is not cached."""

    def __init__(self, name: str, ref, spec, asking: Asking):
        from .served import is_served

        self.name, self.ref, self.spec, self.asking = name, ref, spec, asking
        self.model = None
        self.served = is_served(name)
        if self.served:
            from .vllm_model import is_vllm

            if is_vllm(name):
                self.revision = _vllm_revision(name)
            else:
                from .lm_loading import open_generator

                self.model = open_generator(name)
                self.revision = self.model.revision
        else:
            from .loading import runtime_for

            self.revision = f"{ref.revision}@{runtime_for(ref, 'causal', spec).tag}"
        self.loaded = False

    def cache_ref(self, k: int):
        from .loading import ModelRef

        return ModelRef(self.name, self.name, f"{self.revision}+asked:{self.asking.key(k)}")

    def _open(self):
        if self.model is None:
            if self.served:
                from .lm_loading import open_generator

                self.model = open_generator(self.name)
            else:
                from .lm_scoring import open_scorer
                from .loading import FIXTURE_HINT

                self.model = open_scorer(self.ref, self.spec, None, hint=FIXTURE_HINT)
                if self.model.kind != "causal":
                    raise ModelError(f"proposer {self.name!r} is not a causal LM")
        self.loaded = True
        return self.model

    def propose(self, texts: list[str], k: int, progress=None) -> dict[str, dict]:
        """Per masked hypothesis: {"words": [...], "unread": the answer's items not read as a word}."""
        from .generation import generate

        model = self._open()
        settings = self.asking.settings(k)
        answers = generate(model, [render(self.asking.prompt, t, k) for t in texts], settings, progress)
        out = {}
        for text, answer in zip(texts, answers):
            words, unread = parse_words(answer.text, k)
            out[text] = {"words": words, "unread": unread}
        return out


def _vllm_revision(name: str) -> str:
    """A `vllm:` model's revision as vllm_model files it (a local folder's file index, else the
    name), read without loading the weights."""
    from pathlib import Path

    from .vllm_model import checkpoint

    location = checkpoint(name)
    folder = Path(location).expanduser()
    if folder.is_dir():
        from .loading import indexed_revision

        return f"vllm:{indexed_revision(folder)}"
    return f"vllm:{location}"

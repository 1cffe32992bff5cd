"""Batched, KV-cached text generation for causal LMs, on the scorer the intrinsic kinds use.

Generation takes a `CausalLMScorer` (see `lm_scoring.open_scorer`), so finding the model, its
device, dtype, device plan, quantisation and SQLite cache come from the same machinery as
scoring, and a generated text is cached like a score: keyed by the model, its revision and
runtime tag (`cache_revision`), the prompt as encoded (token ids) and the decoding settings.
An interrupted run resumes where it stopped, and a rerun computes nothing.

How it runs, and why:

- prompts are sorted by length and left-padded, so every row's next token sits in the last
  column and one forward step of one token per row extends every row at once (the key/value
  cache holds the rest); position ids count each row's own tokens, so padding moves nothing;
- greedy decoding is `argmax` of the float32 logits, as `model.generate(do_sample=False)` takes
  it: at the same batch (same rows, same left padding) the tokens are the same;
- sampling draws one uniform number per row and step from a stream seeded by (seed, prompt ids)
  and inverts the (top-p cut) distribution with it, so a prompt's text depends on the seed and
  the prompt alone, never on which batch or neighbours it ran with;
- a row ends at an EOS token, at a stop string (its text is cut before it) or after
  `max_new_tokens`; ended rows leave the batch (and the key/value cache) at once;
- out of memory, the batch is halved (`batching.run_batched`) and the batch run again.

Like `lm_scoring`, this imports nothing of workbench beyond `core` and `models`, and torch and
transformers only inside the functions that need them.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from ..core.errors import InputError, ModelError
from .batching import run_batched
from .lm_scoring import CALLS, _key, chat_prompt

STOP_REASONS = ("eos", "stop", "length")  # why a generation ended
NAMESPACE = "lm-generate"  # the cache's namespace for generated texts
Progress = Callable[[int], None] | None


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class GenerationSettings:
    """How texts are generated. Greedy by default; `sample=True` draws with `temperature`, `top_p`
    and `seed` (which greedy decoding ignores). `stop`: strings that end a text (cut before
    them). `chat_template`: put each prompt in a user turn of the tokenizer's own chat template,
    after an optional `system_prompt` turn (off by default, as lm-evaluation-harness's
    `--apply_chat_template`). `add_bos`: start a plain prompt with BOS (off, as lm-eval's
    `add_bos_token`; a chat template places its own)."""

    max_new_tokens: int = 64
    sample: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = field(default=())
    chat_template: bool = False
    system_prompt: str | None = None
    add_bos: bool = False

    def __post_init__(self) -> None:
        stop = (self.stop,) if isinstance(self.stop, str) else self.stop
        try:
            stop = tuple(stop or ())
        except TypeError:
            raise InputError(f"stop must be a list of strings, not {self.stop!r}") from None
        object.__setattr__(self, "stop", stop)
        if not _whole(self.max_new_tokens) or self.max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be a whole number of at least 1, not {self.max_new_tokens!r}")
        for name in ("sample", "chat_template", "add_bos"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if self.sample:
            if not _number(self.temperature) or self.temperature <= 0:
                raise InputError(
                    f"temperature must be a number above 0 when sampling, not {self.temperature!r} "
                    "(for greedy decoding leave sampling off)"
                )
            if not _number(self.top_p) or not 0 < self.top_p <= 1:
                raise InputError(f"top_p must lie in (0, 1], not {self.top_p!r}")
            if not _whole(self.seed) or self.seed < 0:
                raise InputError(f"seed must be a whole number of at least 0, not {self.seed!r}")
        for s in stop:
            if not isinstance(s, str) or not s:
                raise InputError(f"every stop string must be non-empty text, not {s!r}")
        if self.system_prompt is not None:
            if not isinstance(self.system_prompt, str):
                raise InputError(f"system_prompt must be text, not {self.system_prompt!r}")
            if not self.chat_template:
                raise InputError(
                    "a system prompt goes into the chat template: turn the chat template on, "
                    "or leave the system prompt out"
                )

    def decoding(self) -> dict:
        """What decides the tokens once the prompt is encoded: the cache key's part (a greedy
        text does not depend on temperature, top_p or seed, so they are left out of it)."""
        out = {"max_new_tokens": self.max_new_tokens, "stop": list(self.stop)}
        if self.sample:
            out.update(sample=True, temperature=float(self.temperature), top_p=float(self.top_p), seed=self.seed)
        return out

    def describe(self) -> dict:
        """Every setting, for the JSON documents."""
        return {**asdict(self), "stop": list(self.stop)}


@dataclass(frozen=True)
class Generation:
    """One prompt's output: the new text (cut before a stop string; special tokens left out),
    the new token ids as the model produced them (an ending EOS, and the tokens of a stop
    string, included) and why it stopped: "eos", "stop" or "length"."""

    text: str
    token_ids: tuple[int, ...]
    stop_reason: str


# -- prompts --------------------------------------------------------------------------------------
def encode_prompts(scorer, prompts: Sequence[str], settings: GenerationSettings) -> list[list[int]]:
    """Each prompt's token ids as the model will read them: with the tokenizer's own chat template
    (`lm_scoring.chat_prompt`, encoded as apply_chat_template(tokenize=True) would) when the
    settings ask for it, else the text's tokens (after BOS with `add_bos`; an empty prompt always
    starts with BOS)."""
    tokenizer = scorer.tokenizer
    if not settings.chat_template:
        encoded = scorer.encode_many(list(prompts))
        return [[scorer.bos_id, *ids] if settings.add_bos or not ids else ids for ids in encoded]
    texts = [chat_prompt(scorer, prompt, settings.system_prompt) for prompt in prompts]
    # the rendered text's tokens, as apply_chat_template(tokenize=True) gives them (no special tokens added)
    return [list(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts]


def _eos_ids(scorer) -> frozenset[int]:
    """The tokens that end a row: the generation config's EOS (an int or a list: chat models
    often add an end-of-turn token) and the tokenizer's."""
    ids = set()
    for source in (
        getattr(getattr(scorer.model, "generation_config", None), "eos_token_id", None),
        scorer.tokenizer.eos_token_id,
    ):
        if source is None:
            continue
        ids.update(int(t) for t in (source if isinstance(source, (list, tuple)) else [source]))
    return frozenset(ids)


def _stream(seed: int, ids: Sequence[int]) -> random.Random:
    """A row's random numbers: seeded by (seed, prompt ids) alone, so they do not depend on the batch."""
    digest = hashlib.blake2b(json.dumps([seed, list(ids)]).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


# -- one batch ------------------------------------------------------------------------------------
def _pick(logits, settings: GenerationSettings, draws: list[float]):
    """Each row's next token: argmax (greedy), or the token at which the row's uniform draw falls
    in the cumulative distribution at `temperature`, cut to its `top_p` nucleus."""
    import torch

    if not settings.sample:
        return logits.argmax(-1)
    probs = torch.softmax(logits / settings.temperature, dim=-1)
    order = None
    if settings.top_p < 1:
        probs, order = probs.sort(dim=-1, descending=True, stable=True)
        before = probs.cumsum(-1) - probs
        probs = probs * (before < settings.top_p)  # the smallest head whose mass reaches top_p
    cdf = probs.double().cumsum(-1)
    u = torch.tensor(draws, dtype=torch.float64, device=cdf.device).unsqueeze(-1) * cdf[:, -1:]
    picked = torch.searchsorted(cdf, u, right=True).clamp_(max=cdf.shape[-1] - 1)
    return (order.gather(-1, picked) if order is not None else picked).squeeze(-1)


def _run_batch(scorer, prompts: list[list[int]], settings: GenerationSettings) -> list[dict]:
    """Generate for one batch of encoded prompts: one forward pass over the left-padded prompts,
    then one pass of one token per row still running, on the key/value cache."""
    import torch

    model, tokenizer = scorer.model, scorer.tokenizer
    eos = _eos_ids(scorer)
    params = inspect.signature(model.forward).parameters
    cache_kw = "cache" if "cache" in params else "past_key_values"  # transformers 5 renamed it
    extra = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[scorer.pad_id] * (width - len(p)) + list(p) for p in prompts], device=scorer.device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=scorer.device)
    positions = (mask.cumsum(-1) - 1).clamp_(min=0)
    # As generate does: without padding no mask is passed, so attention takes its plain causal path.
    mask = mask if any(len(p) < width for p in prompts) else None
    streams = [_stream(settings.seed, p) for p in prompts] if settings.sample else []
    new: list[list[int]] = [[] for _ in prompts]
    reason: list[str | None] = [None] * len(prompts)
    texts = [""] * len(prompts)
    rows = list(range(len(prompts)))  # the prompt each batch row holds
    longest_stop = max((len(s) for s in settings.stop), default=0)
    with torch.inference_mode():
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **extra)
        CALLS["forward"] += 1
        positions = positions[:, -1:]
        while True:
            cache = getattr(out, "cache", None)
            cache = cache if cache is not None else out.past_key_values
            draws = [streams[r].random() for r in rows] if settings.sample else []
            tokens = _pick(out.logits[:, -1].float(), settings, draws)
            keep = []
            for j, (r, t) in enumerate(zip(rows, tokens.tolist())):
                if reason[r] is not None:  # ended, in a cache that cannot drop rows: its tokens are not kept
                    continue
                new[r].append(t)
                if t in eos:
                    reason[r] = "eos"
                elif settings.stop and _stopped(tokenizer, new[r], texts, r, settings.stop, longest_stop):
                    reason[r] = "stop"
                elif len(new[r]) >= settings.max_new_tokens:
                    reason[r] = "length"
                else:
                    keep.append(j)
            if not keep:
                break
            if len(keep) < len(rows) and hasattr(cache, "batch_select_indices"):  # ended rows leave the batch
                cache.batch_select_indices(torch.tensor(keep))
                index = torch.tensor(keep, device=tokens.device)
                tokens, positions = tokens[index], positions[index.to(positions.device)]
                mask = mask[index.to(mask.device)] if mask is not None else None
                rows = [rows[j] for j in keep]
            positions = positions + 1
            if mask is not None:
                mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=-1)
            out = model(
                input_ids=tokens.unsqueeze(-1).to(scorer.device),
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                **{cache_kw: cache},
                **extra,
            )
            CALLS["forward"] += 1
    results = []
    for r, tokens_of in enumerate(new):
        body = tokens_of[:-1] if reason[r] == "eos" else tokens_of
        text = tokenizer.decode(body, skip_special_tokens=True)
        results.append({"text": _cut(text, settings.stop), "ids": tokens_of, "stop": reason[r]})
    return results


def _stopped(tokenizer, ids: list[int], texts: list[str], r: int, stop: tuple[str, ...], longest: int) -> bool:
    """Whether the row's new text now holds a stop string; only its end is searched (what the
    last token can have completed), the whole text being decoded again since a token's bytes
    may join the ones before it."""
    text = tokenizer.decode(ids, skip_special_tokens=True)
    start = max(0, len(texts[r]) - longest)
    texts[r] = text
    return any(s in text[start:] for s in stop)


def _cut(text: str, stop: tuple[str, ...]) -> str:
    """The text before the first stop string in it."""
    at = min((i for i in (text.find(s) for s in stop) if i >= 0), default=len(text))
    return text[:at]


# -- many prompts ---------------------------------------------------------------------------------
def generate(
    scorer, prompts: Sequence[str], settings: GenerationSettings | None = None, progress: Progress = None
) -> list[Generation]:
    """One `Generation` per prompt, in the prompts' order, from a causal LM's scorer.

    Cached texts are read from the scorer's cache (when it has one) and the rest generated in
    length-sorted batches of `scorer.batch_size` (halved on out-of-memory, and kept halved),
    each batch committed as it ends; a prompt given twice is generated once. `progress`
    (an `advance(n)` callable) advances by one per prompt done, cached or generated. A served
    model (`served.ServedModel`) takes the same call and answers through its server."""
    settings = settings or GenerationSettings()
    if getattr(scorer, "served", False):  # a model behind an OpenAI-compatible server: see models/served.py
        return scorer.generate(prompts, settings, progress)
    if getattr(scorer, "kind", "") != "causal":
        raise ModelError(f"model {scorer.ref.name!r} is not a causal LM: only causal LMs generate text")
    encoded = [tuple(ids) for ids in encode_prompts(scorer, prompts, settings)]
    if scorer.limit is not None:
        for ids in set(encoded):
            if len(ids) + settings.max_new_tokens > scorer.limit:
                raise ModelError(
                    f"a prompt of {len(ids)} tokens ({scorer.tokenizer.decode(list(ids)[:12])!r}...) and "
                    f"{settings.max_new_tokens} new tokens exceed the {scorer.limit} positions model "
                    f"{scorer.ref.name!r} has: lower max_new_tokens or shorten the prompt"
                )
    decoding = settings.decoding()
    keys = [_key("generate", ids, decoding) for ids in encoded]
    ids_of = dict(zip(keys, encoded))

    def compute(missing: list[str], done) -> None:
        def step(indices):
            return _run_batch(scorer, [list(ids_of[missing[j]]) for j in indices], settings)

        def collect(indices, values):
            done({missing[j]: v for j, v in zip(indices, values)})

        scorer.batch_size = run_batched([len(ids_of[m]) for m in missing], scorer.batch_size, step, collect)

    values = scorer._resolve(NAMESPACE, keys, compute, progress)
    return [Generation(v["text"], tuple(v["ids"]), v["stop"]) for v in values]

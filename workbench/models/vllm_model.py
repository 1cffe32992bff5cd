"""A checkpoint run in this process by vLLM, named `vllm:MODEL` (a Hub name or a local folder):
`pip install 'bias-workbench[vllm]'` on a machine with a CUDA GPU.

It answers the questions a served model answers (`served.ServedModel`), so everything that takes
a served model takes it: `generation.generate` (completions a kind scores, a generation role),
a judge asked by log-likelihood or by generation, and
lm-eval-style multiple-choice log-likelihoods. What differs from a server is the batching and
the tokens: every prompt missing from the cache goes to vLLM in one call (vLLM schedules them),
and log-likelihoods are read from vLLM's prompt log-probabilities on token ids encoded here the
way the transformers scorer encodes them — BOS, then the text without special tokens, the
continuation being the tokens the whole text has beyond its context's — so the two backends
score the same tokens.

    generation       SamplingParams(max_tokens, temperature 0 for greedy, else temperature,
                     top_p and seed; stop strings), `LLM.generate` on the prompt text, or
                     `LLM.chat` with the tokenizer's chat template (and the system prompt)
    log-likelihood   SamplingParams(max_tokens=1, prompt_logprobs=0): each prompt position's
                     dict holds the log-probability of the token that is there

Outputs are cached like a served model's (namespaces, keys), filed under the model name and
`vllm:` + its revision (a local folder's file index, else the Hub name). vLLM is imported only
when such a model is opened; without it the name is refused in one line saying what to install.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ModelError
from .generation import Generation, GenerationSettings
from .lm_scoring import _key
from .served import GENERATED, LIKELIHOODS, ServedModel, _logprob

PREFIX = "vllm:"
Progress = Callable[[int], None] | None


def is_vllm(name) -> bool:
    return isinstance(name, str) and name.strip().lower().startswith(PREFIX)


def checkpoint(name: str) -> str:
    return name.strip()[len(PREFIX) :].strip()


@dataclass(frozen=True)
class VLLMRuntime:
    """How the model ran, for the JSON documents (as `runtime.Runtime.record` gives it)."""

    model: str
    revision: str
    dtype: str | None

    @property
    def batch_size(self) -> str:
        return "vllm"

    @property
    def tag(self) -> str:
        return "vllm"

    def record(self) -> dict:
        return {
            "revision": self.revision,
            "dtype": self.dtype,
            "device": "cuda (vllm)",
            "device_type": "cuda",
            "batch_size": "vllm",
            "quantization": None,
            "weight_bytes": None,
            "plan": None,
            "vllm": {"model": self.model},
        }


class VLLMModel:
    """`generate`, `continuation_logprobs` and `choice_logprobs` through vLLM, cached in `cache`."""

    served = True  # `generation.generate` and the judges hand it the served models' calls
    kind = "served"

    def __init__(self, name: str, llm, cache=None, revision: str | None = None):
        self.given, self.llm, self.cache = name, llm, cache
        self.model_name = checkpoint(name)
        self._revision = revision or self.model_name
        self.tokenizer = llm.get_tokenizer()
        self.requests = 0  # calls into vLLM (tests count them)

    def __repr__(self) -> str:
        return f"VLLMModel({self.model_name!r})"

    # what ServedModel's shared parts read
    @property
    def name(self) -> str:
        return self.model_name

    @property
    def revision(self) -> str:
        return f"vllm:{self._revision}"

    @property
    def runtime(self) -> VLLMRuntime:
        config = getattr(getattr(self.llm, "llm_engine", None), "model_config", None)
        return VLLMRuntime(self.model_name, self.revision, str(getattr(config, "dtype", "")) or None)

    def connect(self) -> str:
        return self.revision

    def logprobs_problem(self) -> str | None:
        return None

    def require_logprobs(self, why: str = "log-likelihoods") -> None:
        return None

    _cached = ServedModel._cached
    _store = ServedModel._store
    _answers = ServedModel._answers
    choice_logprobs = ServedModel.choice_logprobs

    def _run(self, jobs: list, ask_all: Callable, done: Callable[[int, object], None], what: str) -> None:
        """Every job in one call (vLLM batches and schedules them itself)."""
        if not jobs:
            return
        self.requests += 1
        for j, value in enumerate(ask_all(jobs)):
            done(j, value)

    # -- generation -------------------------------------------------------------------------------
    def _sampling(self, settings: GenerationSettings):
        from vllm import SamplingParams

        if settings.sample:
            return SamplingParams(
                max_tokens=settings.max_new_tokens,
                temperature=settings.temperature,
                top_p=settings.top_p,
                seed=settings.seed,
                stop=list(settings.stop) or None,
            )
        return SamplingParams(max_tokens=settings.max_new_tokens, temperature=0.0, stop=list(settings.stop) or None)

    def generate(
        self,
        prompts: Sequence[str],
        settings: GenerationSettings | None = None,
        progress: Progress = None,
        on_answer: Callable[[int, Generation], None] | None = None,
    ) -> list[Generation]:
        settings = settings or GenerationSettings()
        decoding = {
            **settings.decoding(),
            "chat": settings.chat_template,
            "system": settings.system_prompt,
            "bos": settings.add_bos,
        }
        keys = [_key("generate", prompt, decoding) for prompt in prompts]

        def ask_all(batch: list[str]) -> list[dict]:
            params = self._sampling(settings)
            if settings.chat_template:
                head = (
                    [{"role": "system", "content": settings.system_prompt}]
                    if settings.system_prompt is not None
                    else []
                )
                outs = self.llm.chat([[*head, {"role": "user", "content": p}] for p in batch], params, use_tqdm=False)
            elif settings.add_bos:
                from vllm.inputs import TokensPrompt

                bos = self.tokenizer.bos_token_id
                outs = self.llm.generate(
                    [TokensPrompt(prompt_token_ids=[bos, *self._plain(p)]) for p in batch], params, use_tqdm=False
                )
            else:
                outs = self.llm.generate(list(batch), params, use_tqdm=False)
            return [_generated(out, settings) for out in outs]

        def told(i, value):
            on_answer(i, Generation(value["text"], (), value["stop"]))

        values = self._answers(
            GENERATED, keys, dict(zip(keys, prompts)), ask_all, told if on_answer else None, progress, "answers"
        )
        return [Generation(v["text"], (), v["stop"]) for v in values]

    # -- log-likelihoods --------------------------------------------------------------------------
    def _plain(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _bos(self) -> int:
        bos = self.tokenizer.bos_token_id
        bos = self.tokenizer.eos_token_id if bos is None else bos
        if bos is None:
            raise ModelError(
                f"vllm model {self.model_name!r}: its tokenizer has neither a BOS nor an EOS token to start a text with"
            )
        return bos

    def continuation_logprobs(
        self,
        texts: Sequence[tuple[str, int]],
        progress: Progress = None,
        on_answer: Callable[[int, float], None] | None = None,
    ) -> list[float]:
        """For each (text, n): the summed ln P of the tokens the text has beyond its first
        len(text) - n characters, each given BOS and the tokens before it."""
        keys = [_key("loglik", text, int(n)) for text, n in texts]
        jobs = {}
        for k, (text, n) in zip(keys, texts):
            whole = self._plain(text)
            count = len(whole) - len(self._plain(text[: len(text) - int(n)]))
            if count <= 0:
                raise ModelError(
                    f"the continuation {text[len(text) - int(n) :]!r} adds no token to its context for "
                    f"vllm model {self.model_name!r}"
                )
            jobs[k] = ([self._bos(), *whole], count)

        def ask_all(batch: list[tuple[list[int], int]]) -> list[float]:
            from vllm import SamplingParams
            from vllm.inputs import TokensPrompt

            params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0)
            outs = self.llm.generate([TokensPrompt(prompt_token_ids=ids) for ids, _ in batch], params, use_tqdm=False)
            return [_summed(out, ids, count, self.model_name) for out, (ids, count) in zip(outs, batch)]

        return self._answers(LIKELIHOODS, keys, jobs, ask_all, on_answer, progress, "log-likelihoods")


def _generated(out, settings: GenerationSettings) -> dict:
    """A vLLM RequestOutput as a cached answer: the text (cut before a stop string, should one be
    kept) and why it ended."""
    first = out.outputs[0]
    text = first.text or ""
    at = min((i for i in (text.find(s) for s in settings.stop) if i >= 0), default=-1)
    if at >= 0 or isinstance(getattr(first, "stop_reason", None), str):
        return {"text": text[:at] if at >= 0 else text, "stop": "stop"}
    return {"text": text, "stop": "length" if first.finish_reason == "length" else "eos"}


def _summed(out, ids: list[int], count: int, model: str) -> float:
    """Σ ln P of the last `count` prompt tokens from vLLM's prompt log-probabilities, each checked
    as a server's are (`served._logprob`): a NaN or a positive value ends the run, uncached."""
    found = out.prompt_logprobs
    if found is None or len(found) != len(ids):
        raise ModelError(f"vllm model {model!r} returned no prompt log-probabilities for a {len(ids)}-token prompt")
    values = []
    for position in range(len(ids) - count, len(ids)):
        entry = found[position]
        if not entry or ids[position] not in entry:
            raise ModelError(f"vllm model {model!r}: no log-probability of the prompt's token at position {position}")
        values.append(_logprob(entry[ids[position]].logprob, f"vllm model {model!r} gave"))  # NaN is refused
    return math.fsum(values)


def open_vllm(name: str, cache_path: Path | str | None = None, dtype: str = "auto") -> VLLMModel:
    """The model a `vllm:` name gives, loaded by vLLM, with the score cache at `cache_path`."""
    try:
        from vllm import LLM
    except ImportError:
        raise ModelError(
            f"{name}: running a model in vLLM needs vLLM and a CUDA GPU: pip install "
            "'bias-workbench[vllm]' (or serve it with `vllm serve` and name it http://HOST:PORT/v1#MODEL)"
        ) from None
    location = checkpoint(name)
    if not location:
        raise ModelError(f"{name!r}: name the checkpoint after 'vllm:' (a Hub name or a local folder)")
    revision = None
    folder = Path(location).expanduser()
    if folder.is_dir():
        from .loading import indexed_revision

        revision = indexed_revision(folder)
    cache = None
    if cache_path is not None:
        from ..core.cache import Cache

        cache = Cache(Path(cache_path))
    try:
        llm = LLM(model=str(folder.resolve()) if folder.is_dir() else location, dtype=dtype)
    except Exception as exc:  # noqa: BLE001 -- vLLM's own errors (no GPU, unknown architecture): one line
        raise ModelError(
            f"{name}: vLLM could not load it: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from None
    return VLLMModel(name, llm, cache, revision)

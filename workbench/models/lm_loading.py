"""Loading a language model for scoring as workbench does: the name found locally or on the
Hub (`loading.resolve`), run as the model options ask (`runtime.LoadSpec`: device, dtype,
device plan, quantization), and the SQLite cache of scores opened. The scoring itself is
`lm_scoring`, which a release's standalone evaluator carries verbatim and calls with its own
way of finding models.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import ModelError
from .lm_scoring import CausalLMScorer, MaskedLMScorer, open_scorer
from .loading import FIXTURE_HINT, resolve
from .runtime import LoadSpec


def load_scorer(
    name: str,
    *,
    root: Path | None = None,
    revision: str | None = None,
    device: str = "auto",
    batch_size: int = 32,
    cache_path: Path | None = None,
    spec: LoadSpec | None = None,
    runtimes: dict | None = None,
    served: bool = False,
) -> MaskedLMScorer | CausalLMScorer:
    """Load a masked or causal LM (local folder or Hub id) ready for scoring, in eval mode.
    `spec` (the evaluate command's model options) wins over `device` and `batch_size`; how the
    model runs is recorded in `runtimes[name]` when given (for the JSON documents).

    A name `http(s)://HOST:PORT/v1#MODEL` names a model behind an OpenAI-compatible server
    (`served.ServedModel`): it answers generated text (`generation.generate` takes it) and, where
    its server gives them, log-likelihoods of continuations, but none of the per-token scores of
    a checkpoint's own tokens that the scorers here give. A caller that only generates (or asks
    the served model's own methods) passes `served=True` and gets it, cached in `cache_path`;
    any other is refused in one line, after the first contact (which says whether the server is
    there, and whether it gives prompt log-probabilities at all)."""
    from .served import is_served

    if is_served(name):
        from .vllm_model import is_vllm

        if is_vllm(name) and not served:  # refused before vLLM loads the weights
            raise ModelError(
                f"{name}: these scores need the scorer of a checkpoint (per-token log-probabilities of "
                "every token); vLLM serves generation and continuation log-likelihoods only: score the "
                "checkpoint itself (a local folder or a Hub name)"
            )

        model = open_generator(name, cache_path if served else None)
        if runtimes is not None:
            runtimes[name] = model.runtime
        if served:
            return model
        lacks = model.logprobs_problem()
        raise ModelError(
            f"served model {model.endpoint.shown}: these scores need a checkpoint's log-probabilities "
            "of each of its own tokens, which a server does not give"
            + (f" (nor does it give prompt log-probabilities: {lacks})" if lacks else "")
            + "; score the checkpoint itself (a local folder or a Hub name)"
        )
    ref = resolve(name, revision, root)
    spec = spec or LoadSpec(device=device, batch_size=batch_size)
    cache = None
    if cache_path is not None:
        from .cache import Cache

        cache = Cache(Path(cache_path))
    scorer = open_scorer(ref, spec, cache, hint=FIXTURE_HINT)
    if runtimes is not None:
        runtimes[name] = scorer.runtime
    return scorer


def open_generator(name: str, cache_path: Path | None = None):
    """A model that answers by its server's calls (generation, continuation log-likelihoods):
    `http(s)://HOST:PORT/v1#MODEL` behind an OpenAI-compatible server (served.py), or `vllm:MODEL`
    run in process by vLLM (vllm_model.py), with the score cache at `cache_path` when given."""
    from .vllm_model import is_vllm

    if is_vllm(name):
        from .vllm_model import open_vllm

        return open_vllm(name, cache_path)
    from .served import open_served

    return open_served(name, cache_path)

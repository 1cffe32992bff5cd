"""Loading a language model for scoring as workbench does: the name found locally or on the
Hub (`loading.resolve`), the device and dtype chosen (`loading.pick_device`), and the SQLite
cache of scores opened. The scoring itself is `lm_scoring`, which a release's standalone
evaluator carries verbatim and calls with its own way of finding models.
"""
from __future__ import annotations

from pathlib import Path

from .lm_scoring import CausalLMScorer, MaskedLMScorer, open_scorer
from .loading import FIXTURE_HINT, pick_device, resolve


def load_scorer(name: str, *, root: Path | None = None, revision: str | None = None, device: str = "auto",
                batch_size: int = 32, cache_path: Path | None = None) -> MaskedLMScorer | CausalLMScorer:
    """Load a masked or causal LM (local folder or Hub id) ready for scoring, in eval mode."""
    ref = resolve(name, revision, root)
    torch_device, dtype = pick_device(device)
    cache = None
    if cache_path is not None:
        from .cache import Cache

        cache = Cache(Path(cache_path))
    return open_scorer(ref, torch_device, dtype, batch_size, cache, hint=FIXTURE_HINT)

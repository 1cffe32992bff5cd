"""Loading a masked or causal language model in a standalone evaluate.py: the shared scoring
layer's `open_scorer` (the one `workbench evaluate` loads with), without workbench's score cache
(no file is written beside a release) and with the model named as `models.model_ref` does.
"""

from __future__ import annotations

from ...core.errors import ModelError
from ...models.lm_scoring import open_scorer
from .models import model_ref
from .release import Refused


def load_lm(name: str, spec, runtimes: dict):
    """A scorer (masked or causal) for `name`, loaded as the model options `spec` ask; how it
    runs is recorded in `runtimes[name]` (the JSON's `runtime`)."""
    ref = model_ref(name)
    try:
        scorer = open_scorer(ref, spec)
    except ModelError as exc:
        raise Refused(str(exc)) from None
    except ImportError:
        raise Refused("scoring needs torch and transformers (pip install torch transformers)") from None
    runtimes[name] = scorer.runtime
    return scorer

"""Sentence embeddings from any sentence-transformers-style checkpoint (a model role that embeds
texts, `roles.EMBEDDER`): the encoder loaded through transformers' `AutoModel`, each text's
vector the mean of its last hidden states over its tokens (the attention mask), as
sentence-transformers' mean pooling gives for checkpoints such as all-MiniLM-L6-v2. No
normalisation: a cosine divides by the norms itself.

Imports nothing from workbench but the error classes and the model layer's loading; torch and
transformers inside the functions.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import ModelError
from .runtime import LoadSpec, check_tokenizer, load_weights, plan_load

MAX_TOKENS = 256  # sentence-transformers' default max_seq_length for MiniLM-style checkpoints


class Embedder:
    """One checkpoint that turns texts into vectors (`encode`)."""

    def __init__(self, ref, tokenizer, model, device, batch_size: int):
        self.ref, self.name, self.revision = ref, ref.name, ref.revision
        self.tokenizer, self.model, self.device, self.batch_size = tokenizer, model, device, max(1, batch_size)
        self.runtime = None

    def encode(self, texts: list[str]):
        """(len(texts) × hidden) float64: each text's mean-pooled last hidden states."""
        import numpy as np
        import torch

        out = np.zeros((len(texts), int(self.model.config.hidden_size)))
        limit = min(MAX_TOKENS, int(getattr(self.tokenizer, "model_max_length", MAX_TOKENS) or MAX_TOKENS))
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                encoded = self.tokenizer(batch, padding=True, truncation=True, max_length=limit, return_tensors="pt")
                encoded = {k: v.to(self.device) for k, v in encoded.items()}
                hidden = self.model(**encoded).last_hidden_state.float()
                mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                out[start : start + len(batch)] = pooled.cpu().double().numpy()
        return out


def load_embedder(
    name: str, *, root: Path | None = None, spec: LoadSpec | None = None, runtimes: dict | None = None
) -> Embedder:
    """An encoder checkpoint (a local folder, relative to `root` too, or a Hub id) as `spec` asks;
    how it runs is recorded in `runtimes[name]` when given."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from .loading import FIXTURE_HINT, resolve

    hf_logging.set_verbosity_error()
    ref = resolve(name, None, root)
    revision = None if ref.revision.startswith("sha256:") else ref.revision
    try:
        config = AutoConfig.from_pretrained(ref.location, revision=revision)
        runtime = plan_load(AutoModel, config, spec or LoadSpec(), name, None, ref.revision, ref.location)
        tokenizer = AutoTokenizer.from_pretrained(ref.location, revision=revision)
        check_tokenizer(tokenizer, name, ref.location, getattr(config, "vocab_size", None))
        model, device = load_weights(AutoModel, ref.location, runtime, name, revision=revision)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load sentence-embedding model {name!r}: {exc}; {FIXTURE_HINT}") from None
    model.eval()
    embedder = Embedder(ref, tokenizer, model, device, runtime.batch_size)
    embedder.runtime = runtime
    if runtimes is not None:
        runtimes[name] = runtime
    return embedder

"""Sentence embeddings from any sentence-transformers-style checkpoint (a model role that embeds
texts, `roles.EMBEDDER`): the encoder loaded through transformers' `AutoModel`, each text's
vector the mean of its last hidden states over its tokens (the attention mask), as
sentence-transformers' mean pooling gives for checkpoints such as all-MiniLM-L6-v2. No
normalisation: a cosine divides by the norms itself.

Imports nothing from workbench but the error classes and the model layer's runtime (a release's
evaluate.py carries it); torch and transformers inside the functions. `workbench evaluate` finds
the checkpoint with `loading.resolve` (evaluation/declared_report.load_role), a release's script
with its own `model_ref`.
"""

from __future__ import annotations

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


def open_embedder(ref, spec: LoadSpec | None = None, hint: str = "") -> Embedder:
    """An encoder checkpoint as `spec` asks. `ref` names it (`.name` as the user wrote it,
    `.location` what from_pretrained reads, `.revision`); `hint` is added to loading errors. Its
    `runtime` says how it runs."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()  # as every other model loads: no bar of transformers' own
    revision = None if ref.revision.startswith("sha256:") else ref.revision
    tail = f"; {hint}" if hint else ""
    try:
        config = AutoConfig.from_pretrained(ref.location, revision=revision)
        runtime = plan_load(AutoModel, config, spec or LoadSpec(), ref.name, None, ref.revision, ref.location)
        tokenizer = AutoTokenizer.from_pretrained(ref.location, revision=revision)
        check_tokenizer(tokenizer, ref.name, ref.location, getattr(config, "vocab_size", None))
        model, device = load_weights(AutoModel, ref.location, runtime, ref.name, revision=revision)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load sentence-embedding model {ref.name!r}: {exc}{tail}") from None
    model.eval()
    embedder = Embedder(ref, tokenizer, model, device, runtime.batch_size)
    embedder.runtime = runtime
    return embedder

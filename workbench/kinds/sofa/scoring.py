"""Streaming perplexities for SOFA probes through the shared LM scoring layer, and the JSON.

The probe file is read block by block (`data.chunks`); each block's distinct probe texts go
to the scorer in slices of `SCORE_SLICE`, whose batches are committed to the SQLite cache as
they finish, so an interrupted run keeps all but the batch in flight and a rerun recomputes
nothing else. What stays in memory is one block of texts, the identities' perplexities and the
per-stereotype accumulator: nothing grows with the number of probes.

This module is pure (numpy and the LM scoring layer, no file reading): a release's standalone
evaluate.py runs this very file (copied into its evaluator/ with `metrics` and `data`), so its
scores are `workbench evaluate`'s to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from .metrics import Accumulator, log10_ratio, summarise

# How the probe file is cut decides which probes are scored in one batch and the order the
# running statistics merge in, so data.py (in workbench and in a release's evaluate.py) uses
# these. Arrow's streaming reader keeps a few dozen blocks in flight, so its memory is about
# 35x the block size: 256 KiB blocks hold it near 10 MiB. Blocks are then joined into chunks of
# CHUNK_ROWS probes, large enough for the scorer's length-sorted batches to pad little.
BLOCK_BYTES = 1 << 18
CHUNK_ROWS = 8192
# At most this many texts per scorer call: the cache looks up to 2000 keys by index (more
# scans the model's whole table), and a slice is also the unit the progress bar moves by.
SCORE_SLICE = 1024

RULES = {
    "causal": "perplexity",  # HF evaluate: BOS prepended, exp(mean NLL of every text token)
    "masked": "pseudo-perplexity",  # exp(-mean PLL), each non-special token masked in turn
}
RULE_NAMES = {
    "perplexity": "causal",
    "ppl": "causal",
    "pseudo-perplexity": "masked",
    "pppl": "masked",
    "pseudo-ppl": "masked",
}
RULE_TEXT = {
    "perplexity": "causal LM perplexity as Hugging Face evaluate computes it: BOS prepended, the text tokenised "
    "without special tokens, exp of the mean negative log-likelihood of every text token",
    "pseudo-perplexity": "masked LM pseudo-perplexity: exp of minus the mean log-probability of each token with "
    "that token masked (special tokens not scored)",
}
MEASURES = (
    "per probe log10(PPL(probe) / PPL(identity)); per stereotype the sample variance (ddof=1) across "
    "its identities and DDS = max - min; SOFA per category = mean of its stereotypes' variances "
    "(single-identity stereotypes counted apart); global = unweighted mean over categories"
)


@dataclass
class Chunk:
    """One streamed block of probes, as codes and texts (row = 0-based data row of the file)."""

    first_row: int
    stereotype: np.ndarray  # int64 codes
    identity: np.ndarray  # int64 codes into Catalogue.identities
    unit: np.ndarray  # int64 codes into Catalogue.units
    probes: list[str]


def probe_text(identity: str, stereotype: str, probe: str | None = None) -> str:
    """The text a probe scores: its `probe` cell, or identity + " " + stereotype when the file
    has no such column or the cell is blank (the public SOFA layout)."""
    return probe if probe is not None and probe.strip() else f"{identity} {stereotype}"


def rule_of(scorer) -> str:
    return RULES[scorer.kind]


def perplexities(log_likelihood: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """exp(−log-likelihood / tokens) of each text, NaN for a text without tokens: the one formula a
    model's run and a file of its log-likelihoods (`--predictions`) share, so both give the same bits."""
    return np.array(
        [math.exp(-ll / n) if n else math.nan for ll, n in zip(log_likelihood.tolist(), tokens.tolist())],
        dtype=np.float64,
    )


def text_scores(
    scorer,
    texts: list[str],
    progress: Callable[[int], None] | None = None,
    prefixes: list[list[int] | None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each text's log-likelihood by the scorer's rule and the number of tokens it sums over
    (`perplexities` makes them the perplexity or pseudo-perplexity).

    Causal LMs: the texts are tokenised in one call (per-text calls cost more than the tiny
    model's forward pass) and scored as BOS + tokens, which is exactly
    `CausalLMScorer.perplexity` and shares its cache entries. `prefixes` (causal LMs only)
    gives each text's identity tokens: where the text's tokens start with them, the texts of
    one identity are scored on one pass over BOS + identity (`prefixed_token_logprobs`).
    Masked LMs: the pseudo-log-likelihood, each token masked in turn (`pseudo_perplexity`'s)."""
    if not texts:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    if scorer.kind == "causal":
        encoded = scorer.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        bos = scorer.bos_id
        seqs = [[bos, *ids] for ids in encoded]
        if prefixes is None:
            rows = scorer.token_logprobs(seqs, progress)
        else:
            cuts = [
                1 + len(p) if p and len(ids) > len(p) and ids[: len(p)] == p else 0 for ids, p in zip(encoded, prefixes)
            ]
            rows = scorer.prefixed_token_logprobs(seqs, cuts, progress)
    else:
        rows = scorer.pseudo_log_likelihood(list(texts), progress)
    return (
        np.array([float(sum(r)) for r in rows], dtype=np.float64),
        np.array([len(r) for r in rows], dtype=np.int64),
    )


def sliced_scores(
    scorer,
    texts: list[str],
    progress: Callable[[int], None] | None = None,
    prefixes: list[list[int] | None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """`text_scores` of at most SCORE_SLICE texts at a time."""
    ll, n = np.empty(len(texts)), np.empty(len(texts), dtype=np.int64)
    for start in range(0, len(texts), SCORE_SLICE):
        cut = None if prefixes is None else prefixes[start : start + SCORE_SLICE]
        part = slice(start, start + SCORE_SLICE)
        ll[part], n[part] = text_scores(scorer, texts[part], progress, cut)
    return ll, n


def check_identities(cat, identity_ppl: np.ndarray, model: str) -> None:
    """Every identity has a perplexity (each probe is divided by its identity's)."""
    bad = [name for name, p in zip(cat.identities, identity_ppl) if not math.isfinite(p) or p <= 0]
    if bad:
        raise InputError(
            f"{cat.shown}: identity {bad[0]!r} has no tokens for model {model!r}, so it has no perplexity"
            + (f" ({len(bad) - 1} more)" if len(bad) > 1 else "")
        )


def score_file(cat, scorer, model: str, advance: Callable[[int], None] | None = None, items=None) -> Accumulator:
    """Stream every probe of the file through the scorer and fold log10(PPL*) into the
    per-stereotype accumulator (`fold`). `advance` moves once per identity and once per probe.

    `cat` is the file's catalogue (`data.Catalogue`): `shown`, `identities`, `stereotype_ids` and `chunks()`, the probes as `Chunk`s.
    `items` (optional) gets `identities(log_likelihood, tokens)` once and `write(...)` per chunk (see `fold`)."""
    step = advance or (lambda n: None)
    identity = sliced_scores(scorer, cat.identities, step)
    check_identities(cat, perplexities(*identity), model)
    if items is not None:
        items.identities(*identity)

    def scored():
        # Causal LMs: each chunk's distinct probes are scored identity by identity, so the probes of
        # one identity share one pass over BOS + identity (see text_scores).
        identity_ids = (
            list(scorer.tokenizer(list(cat.identities), add_special_tokens=False)["input_ids"])
            if scorer.kind == "causal"
            else None
        )
        for chunk in cat.chunks():
            if identity_ids is None:
                distinct = list(dict.fromkeys(chunk.probes))
                ll, n = sliced_scores(scorer, distinct, step)
            else:
                first: dict[str, int] = {}
                for text, code in zip(chunk.probes, chunk.identity.tolist()):
                    first.setdefault(text, code)
                distinct = sorted(first, key=first.__getitem__)  # identity by identity, file order within
                ll, n = sliced_scores(scorer, distinct, step, [identity_ids[first[t]] for t in distinct])
            if len(distinct) < len(chunk.probes) or identity_ids is not None:
                where = {t: k for k, t in enumerate(distinct)}
                at = np.array([where[t] for t in chunk.probes], dtype=np.int64)
                ll, n = ll[at], n[at]
                step(len(chunk.probes) - len(distinct))
            yield chunk, ll, n

    return fold(cat, model, perplexities(*identity), scored(), items)


def fold(cat, model: str, identity_ppl: np.ndarray, scored, items=None) -> Accumulator:
    """log10(PPL*) of every probe, from each chunk's probe log-likelihoods and token counts
    (`scored`: (chunk, log_likelihood, tokens) in the file's order), folded into the per-stereotype
    accumulator: what a model's run and a file of its log-likelihoods share. `items` (optional)
    gets `write(model, cat, chunk, probe_ppl, identity_ppl, values, log_likelihood, tokens)` per chunk."""
    acc = Accumulator(len(cat.stereotype_ids))
    for chunk, ll, n in scored:
        probe_ppl = perplexities(ll, n)
        ident = identity_ppl[chunk.identity]
        values = log10_ratio(probe_ppl, ident)
        bad_rows = np.flatnonzero(~np.isfinite(values))
        if len(bad_rows):
            row = chunk.first_row + int(bad_rows[0]) + 2
            raise InputError(
                f"{cat.shown}:{row}: probe {chunk.probes[bad_rows[0]]!r} has no perplexity for model {model!r}"
            )
        acc.add(chunk.stereotype, chunk.unit, values)
        if items is not None:
            items.write(model, cat, chunk, probe_ppl, ident, values, ll, n)
    return acc


def model_result(scorer, acc: Accumulator, cat, variance: str = "paper") -> dict:
    """One model's entry in the JSON: its rule, revision and `summarise`'s measures (without a
    scorer, scores read from a file: the measures alone)."""
    return {
        **({"score_rule": rule_of(scorer), "model_revision": scorer.ref.revision} if scorer is not None else {}),
        **summarise(
            acc,
            cat.stereotype_ids,
            cat.stereotype_category,
            cat.categories,
            cat.identities,
            cat.units,
            cat.stereotype_text,
            variance_rule=variance,
        ),
    }

"""Masked-LM fills and pseudo-log-likelihood, batched and cached.

The LM sees the text to fill alone (e.g. a hypothesis without its premise). A hypothesis with
several masks is filled by beam search from left to right: the first mask's top-k fills
each start a beam, every beam is extended by the top-k fills of the next mask (with the
earlier fills in place), and the k beams with the highest summed log-probability are kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .batching import pad_batch, run_batched
from .lm_scoring import tokenizer_family
from .loading import ModelRef

MARK = "<mask>"
CALLS = {"forward": 0}  # number of model forward passes, for tests and benchmarks


@dataclass
class Fill:
    words: list[str]  # one per mask, as they go into the text
    tokens: list[str]  # the vocabulary pieces
    word_start: list[bool]  # False where the piece continues a word (a sub-word)
    logprob: float  # summed log-probability over the masks
    rank: int  # 1 = best

    @property
    def score(self) -> float:
        return math.exp(self.logprob)


def _split_head(model):
    """(encoder, LM head) when the architecture has them apart (BERT: .cls, RoBERTa: .lm_head).

    Running the head only at the masked positions skips the vocabulary projection of every
    other token, which is most of the cost for large vocabularies."""
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)
    for name in ("cls", "lm_head"):
        head = getattr(model, name, None)
        if base is not None and head is not None:
            return base, head
    return None


class MaskedLM:
    def __init__(self, ref: ModelRef, tokenizer, model, device, batch_size: int = 32):
        self.ref, self.tokenizer, self.model, self.device = ref, tokenizer, model, device
        self.batch_size = batch_size
        self.family = tokenizer_family(tokenizer)
        self.banned = sorted(set(tokenizer.all_special_ids))
        self.split = _split_head(model)
        self._pieces: dict[int, tuple[str, str, bool]] = {}

    # -- one batch -----------------------------------------------------------------------
    def _logprobs_at(self, sequences: list[list[int]], positions: list[int]):
        """Log-probabilities over the vocabulary at one position per sequence (one forward pass)."""
        import torch

        ids, mask = pad_batch(sequences, self.tokenizer.pad_token_id or 0, self.device)
        where = (torch.arange(len(sequences), device=ids.device), torch.tensor(positions, device=ids.device))
        with torch.inference_mode():
            if self.split is not None:
                encoder, head = self.split
                hidden = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
                rows = head(hidden[where])
            else:
                rows = self.model(input_ids=ids, attention_mask=mask).logits[where]
            CALLS["forward"] += 1
            rows = rows.float()
            rows[:, self.banned] = -math.inf
            return torch.log_softmax(rows, dim=-1).cpu()

    def _piece(self, token_id: int, at_text_start: bool) -> tuple[str, str, bool]:
        """(vocabulary piece, word as it goes into the text, whether it starts a word)."""
        cached = self._pieces.get(token_id)
        if cached is None:
            token = self.tokenizer.convert_ids_to_tokens(token_id)
            word = self.tokenizer.convert_tokens_to_string([token]).strip()
            if self.family == "wordpiece":
                marker = not token.startswith("##")
            else:
                marker = token.startswith("Ġ" if self.family == "bytelevel" else "▁")
            cached = self._pieces[token_id] = (token, word, marker)
        token, word, marker = cached
        start = marker or (at_text_start and self.family != "wordpiece")
        return token, word, start

    # -- fills ---------------------------------------------------------------------------
    def encode(self, texts: list[str]) -> list[list[int]]:
        marked = [t.replace(MARK, self.tokenizer.mask_token) for t in texts]
        return self.tokenizer(marked, add_special_tokens=True, truncation=True)["input_ids"]

    def fill(self, texts: list[str], k: int, progress: Callable[[int], None] | None = None) -> dict[str, list[Fill]]:
        """Top-k fills for each text with one or more `<mask>` markers."""
        if k <= 0:
            raise ValueError("k must be at least 1")
        import gc

        # Tens of thousands of small result objects: the cyclic GC would rescan them many
        # times over for nothing (they hold no cycles).
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._fill(texts, k, progress)
        finally:
            if enabled:
                gc.enable()

    def _fill(self, texts: list[str], k: int, progress: Callable[[int], None] | None) -> dict[str, list[Fill]]:
        mask_id = self.tokenizer.mask_token_id
        encoded = self.encode(texts)
        starts = [t.lstrip().startswith(MARK) for t in texts]
        # beams[i] = list of (ids, logprob, token ids chosen)
        beams: dict[int, list[tuple[list[int], float, list[int]]]] = {
            i: [(ids, 0.0, [])] for i, ids in enumerate(encoded)
        }
        n_masks = {i: ids.count(mask_id) for i, ids in enumerate(encoded)}
        step = 0
        while True:
            work = [(i, b) for i in beams if n_masks[i] > step for b in beams[i]]
            if not work:
                break
            seqs = [b[0] for _, b in work]
            positions = [seq.index(mask_id) for seq in seqs]
            proposals: dict[int, list[tuple[list[int], float, list[int]]]] = {}

            def one_batch(indices: list[int]):
                return self._logprobs_at([seqs[j] for j in indices], [positions[j] for j in indices])

            def collect(indices: list[int], logprobs) -> None:
                import torch

                top = torch.topk(logprobs, k=min(k, logprobs.shape[-1]), dim=-1)
                values, token_ids = top.values.tolist(), top.indices.tolist()
                for row, j in enumerate(indices):
                    text_index, (ids, lp, chosen) = work[j]
                    more = n_masks[text_index] > step + 1  # only then does the beam need its ids
                    out = proposals.setdefault(text_index, [])
                    for value, tid in zip(values[row], token_ids[row]):
                        new = None
                        if more:
                            new = list(ids)
                            new[positions[j]] = tid
                        out.append((new, lp + value, chosen + [tid]))

            report = progress if step == 0 else None
            self.batch_size = run_batched([len(s) for s in seqs], self.batch_size, one_batch, collect, report)
            for i, cands in proposals.items():
                if len(beams[i]) > 1:  # one beam's top-k comes sorted already
                    cands.sort(key=lambda c: -c[1])
                beams[i] = cands[:k]
            step += 1
        out: dict[str, list[Fill]] = {}
        piece = self._piece
        for i, text in enumerate(texts):
            fills = out[text] = []
            if n_masks[i] == 0:
                continue
            at_start = starts[i]
            for rank, (_, lp, chosen) in enumerate(beams[i], start=1):
                if len(chosen) == 1:  # the common case, without the per-mask lists
                    token, word, start = piece(chosen[0], at_start)
                    fills.append(Fill([word], [token], [start], lp, rank))
                    continue
                pieces = [piece(tid, at_start and m == 0) for m, tid in enumerate(chosen)]
                fills.append(Fill([p[1] for p in pieces], [p[0] for p in pieces], [p[2] for p in pieces], lp, rank))
        return out

    # -- fluency -------------------------------------------------------------------------
    def _target_logprobs(
        self, sequences: list[list[int]], positions: list[int], targets: list[list[int]]
    ) -> list[float]:
        """log p(target) at one masked position per sequence, for every target asked of it,
        specials banned as in `_logprobs_at`. The targets are picked on the device, so only
        those floats come back, not a vocabulary-wide row per sequence."""
        import torch

        ids, mask = pad_batch(sequences, self.tokenizer.pad_token_id or 0, self.device)
        where = (torch.arange(len(sequences), device=ids.device), torch.tensor(positions, device=ids.device))
        with torch.inference_mode():
            if self.split is not None:
                encoder, head = self.split
                rows = head(encoder(input_ids=ids, attention_mask=mask).last_hidden_state[where])
            else:
                rows = self.model(input_ids=ids, attention_mask=mask).logits[where]
            CALLS["forward"] += 1
            rows = rows.float()
            rows[:, self.banned] = -math.inf
            norm = torch.logsumexp(rows, dim=-1)
            flat_rows = torch.tensor([r for r, wanted in enumerate(targets) for _ in wanted], device=ids.device)
            flat_targets = torch.tensor([t for wanted in targets for t in wanted], device=ids.device)
            return (rows[flat_rows, flat_targets] - norm[flat_rows]).cpu().tolist()

    def pseudo_log_likelihood(
        self, texts: list[str], progress: Callable[[int], None] | None = None
    ) -> dict[str, tuple[float, int]]:
        """Sum of log p(token | rest) with each token masked in turn, and the token count.

        One forward row per distinct masked sequence: the fills of one masked hypothesis differ
        only at the fill, so masking the fill gives them all the same row (a quarter of the
        bench queue's masked copies), and that row's log-probabilities serve every text that
        asks for it. `progress` advances by the (text, token) pairs answered."""
        mask_id = self.tokenizer.mask_token_id
        special = set(self.tokenizer.all_special_ids)
        encoded = self.tokenizer(list(texts), add_special_tokens=True, truncation=True)["input_ids"]
        row_of: dict[tuple[tuple[int, ...], int], int] = {}
        seqs: list[list[int]] = []
        positions: list[int] = []
        asks: list[list[tuple[int, int]]] = []  # per row: (text index, target token)
        for i, ids in enumerate(encoded):
            for p, tid in enumerate(ids):
                if tid in special:
                    continue
                masked = list(ids)
                masked[p] = mask_id
                key = (tuple(masked), p)
                r = row_of.get(key)
                if r is None:
                    r = row_of[key] = len(seqs)
                    seqs.append(masked)
                    positions.append(p)
                    asks.append([])
                asks[r].append((i, tid))
        totals = [0.0] * len(texts)
        counts = [0] * len(texts)

        def one_batch(indices):
            return self._target_logprobs(
                [seqs[j] for j in indices], [positions[j] for j in indices], [[t for _, t in asks[j]] for j in indices]
            )

        def collect(indices, values):
            at = 0
            for j in indices:
                for owner, _ in asks[j]:
                    totals[owner] += values[at]
                    counts[owner] += 1
                    at += 1
            if progress:
                progress(at)

        self.batch_size = run_batched([len(s) for s in seqs], self.batch_size, one_batch, collect)
        return {t: (totals[i], counts[i]) for i, t in enumerate(texts)}

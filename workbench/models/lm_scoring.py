"""Token log-probabilities from masked and causal language models, shared by the intrinsic kinds.

The intrinsic measures (sentence preference, perplexity, top-K completions) all reduce to a few questions put to a language
model: the log-probability of a token at a masked position (masked LMs), of each token given
the ones before it (causal LMs), and the most probable tokens at a position. This module
answers them for any `AutoModelForMaskedLM` / `AutoModelForCausalLM` checkpoint, with the
same machinery as the pipeline's models: length-sorted batches with dynamic padding, the
batch size halved on out-of-memory, duplicate queries computed once, and an optional SQLite
cache keyed by (model name, revision, hash of the token ids asked about), so a second run of
an evaluation computes nothing.

Every method takes `progress`, an `advance(n)` callable (see `workbench.core.progress`),
advanced in units of the method's own inputs (queries, texts, pairs, sequences), so a caller
sizes its bar with `len(inputs)` whatever was cached or duplicated.

All log-probabilities are natural logs, computed in float32 even when the model runs in
half precision.

This module imports nothing from workbench but the error classes, `core.distributed` and
`models.batching` (all standard library and torch), so a release's standalone evaluate.py
carries it verbatim: see `release/standalone`. Finding a model by name, the device choice and
the SQLite cache are workbench's (`models/lm_loading.py`) and come in as arguments.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..core.distributed import barrier
from ..core.errors import ModelError
from .batching import _is_oom, pad_batch, run_batched
from .runtime import LoadSpec, check_tokenizer, load_weights, plan_load

CALLS = {"forward": 0}  # model forward passes, for tests and benchmarks
Progress = Callable[[int], None] | None

MASKED_SUFFIXES = ("ForMaskedLM", "ForPreTraining")
CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")


# -- what kind of LM a checkpoint is ------------------------------------------------------------
def lm_kind(config, name: str) -> str:
    """'masked' or 'causal' from the checkpoint's declared architectures (else is_decoder).

    The architecture list is what the checkpoint was trained and saved as; the model type
    alone is ambiguous (a BERT config can be a masked LM or a decoder)."""
    archs = list(getattr(config, "architectures", None) or [])
    for arch in archs:
        if arch.endswith(CAUSAL_SUFFIXES):
            return "causal"
        if arch.endswith(MASKED_SUFFIXES):
            return "masked"
    if getattr(config, "is_decoder", False):
        return "causal"
    shown = ", ".join(archs) if archs else "none declared"
    raise ModelError(
        f"model {name!r} is not a language model this tool can score (architectures: {shown}); it needs a "
        f"masked LM (*ForMaskedLM, *ForPreTraining) or a causal LM (*ForCausalLM, *LMHeadModel) checkpoint"
    )


def open_scorer(
    ref, spec: LoadSpec, cache=None, hint: str = "", budgets: dict | None = None
) -> MaskedLMScorer | CausalLMScorer:
    """Load a masked or causal LM ready for scoring, in eval mode, as `spec` asks (device, dtype,
    device plan, quantization: see `runtime`).

    `ref` names the checkpoint: `.name` (as the user wrote it), `.location` (what
    from_pretrained reads: a folder or a Hub id) and `.revision` (a commit, or a content hash
    "sha256:..." for a local folder). `cache` (optional) has get_many / put_many; `hint` is
    added to loading errors. The scorer's `runtime` says how it runs; its cache keys include it."""
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForMaskedLM,
        AutoTokenizer,
    )
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    name = ref.name
    rev = None if ref.revision.startswith("sha256:") else ref.revision
    tail = f"; {hint}" if hint else ""
    try:
        config = AutoConfig.from_pretrained(ref.location, revision=rev)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot read the config of {name!r}: {exc}{tail}") from None
    kind = lm_kind(config, name)
    # Masked LMs always load as *ForMaskedLM (a *ForPreTraining checkpoint holds that head too),
    # so `scorer.model` is the same kind of object for every masked checkpoint.
    cls = AutoModelForCausalLM if kind == "causal" else AutoModelForMaskedLM
    runtime = plan_load(cls, config, spec, name, budgets, ref.revision, ref.location)  # checks the weight files
    try:
        tokenizer = AutoTokenizer.from_pretrained(ref.location, revision=rev)
        check_tokenizer(tokenizer, name, ref.location, getattr(config, "vocab_size", None))  # before the weights
        (model, info), device = load_weights(cls, ref.location, runtime, name, revision=rev, output_loading_info=True)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load {kind} LM {name!r}: {exc}{tail}") from None
    missing = [k for k in info.get("missing_keys", []) if not k.endswith("position_ids")]
    if missing:
        # A head initialised at random would score noise without any error: refuse instead.
        raise ModelError(
            f"model {name!r} lacks the weights of its {kind} LM head ({', '.join(sorted(missing)[:4])}"
            f"{', ...' if len(missing) > 4 else ''}): it is not a {kind} language model checkpoint"
        )
    if kind == "masked":
        if tokenizer.mask_token is None:
            raise ModelError(f"model {name!r} has no mask token: it is not a masked LM")
        scorer = MaskedLMScorer(ref, tokenizer, model, device, runtime.batch_size, cache)
        scorer.has_nsp_head = _nsp_family(config.model_type) and _has_nsp_weights(ref.location, rev)
    else:
        scorer = CausalLMScorer(ref, tokenizer, model, device, runtime.batch_size, cache)
    scorer.runtime = runtime
    scorer.logprob_dtype = getattr(spec, "logprob_dtype", "float32")
    if getattr(spec, "chat_template", False):
        if kind != "causal":
            raise ModelError(
                f"model {name!r} is a masked LM: --apply-chat-template asks causal (chat) LMs only; leave it out"
            )
        if not getattr(tokenizer, "chat_template", None):
            raise ModelError(
                f"model {name!r} has no chat template in its tokenizer: leave --apply-chat-template out for it"
            )
        scorer.chat_template, scorer.system_instruction = True, getattr(spec, "system_instruction", None)
    return scorer


def _nsp_family(model_type: str) -> bool:
    """Whether the model type has a next-sentence-prediction class (BERT family)."""
    from transformers.models.auto import modeling_auto

    return model_type in modeling_auto.MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING_NAMES


def _has_nsp_weights(location: str, revision: str | None) -> bool:
    """Whether the checkpoint holds trained next-sentence head weights, read from the safetensors
    index or header without loading anything. BERT checkpoints saved as *ForMaskedLM often
    still carry them (bert-base-* do); a checkpoint stored only as a .bin counts as without."""
    from transformers.utils import cached_file

    def fetch(filename: str):
        try:
            return cached_file(location, filename, revision=revision, _raise_exceptions_for_missing_entries=False)
        except (OSError, ValueError):
            return None

    index = fetch("model.safetensors.index.json")
    if index:
        keys = json.loads(Path(index).read_text(encoding="utf-8")).get("weight_map", {})
    else:
        single = fetch("model.safetensors")
        if not single:
            return False
        from safetensors import safe_open

        with safe_open(single, "pt") as f:
            keys = list(f.keys())
    return any("seq_relationship" in k for k in keys)


# -- shared machinery ---------------------------------------------------------------------------
def _key(*parts) -> str:
    return hashlib.blake2b(json.dumps(parts, separators=(",", ":")).encode(), digest_size=16).hexdigest()


def _lowercases(tokenizer) -> bool:
    """Whether the tokenizer folds case, so callers know to lower-case their text first."""
    flag = getattr(tokenizer, "do_lower_case", None)
    if isinstance(flag, bool):
        return flag
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and backend.normalizer is not None:
        spec = json.loads(backend.to_str()).get("normalizer") or {}
        text = json.dumps(spec)
        if '"Lowercase"' in text or '"lowercase": true' in text:
            return True
    upper = [tokenizer.tokenize(c) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    lower = [tokenizer.tokenize(c) for c in "abcdefghijklmnopqrstuvwxyz"]
    return upper == lower


def _position_limit(tokenizer, config) -> int | None:
    """The longest input the model's position embeddings take (None: no fixed limit)."""
    limits = []
    if 0 < getattr(tokenizer, "model_max_length", 0) < 1_000_000:
        limits.append(int(tokenizer.model_max_length))
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if positions:
        # RoBERTa-style embeddings start counting positions after the padding index.
        if "roberta" in config.model_type or config.model_type in ("camembert", "longformer", "ibert", "data2vec-text"):
            positions -= (getattr(config, "pad_token_id", None) or 0) + 1
        limits.append(int(positions))
    return min(limits) if limits else None


def tokenizer_family(tokenizer) -> str:
    """'bytelevel' (GPT-2, RoBERTa), 'sentencepiece' or 'wordpiece', from the vocabulary's
    word-start markers: how a word boundary shows in the tokens."""
    vocab = tokenizer.get_vocab()
    sample = list(vocab)[:5000]
    if any(t.startswith("\u0120") for t in sample):
        return "bytelevel"
    if any(t.startswith("\u2581") for t in sample):
        return "sentencepiece"
    return "wordpiece"


def _split_head(model):
    """(encoder, vocabulary head) where the architecture keeps them apart, else None.

    Running the head only at the positions asked about skips the vocabulary projection of
    every other token: most of the cost of a masked query for large vocabularies."""
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)
    if base is None:
        return None
    cls = getattr(model, "cls", None)
    if cls is not None and hasattr(cls, "predictions"):  # BERT family: MLM-only or pre-training heads
        return base, cls.predictions
    for name in ("lm_head", "predictions"):
        head = getattr(model, name, None)
        if head is not None:
            return base, head
    return None


# How far a sum of log-probabilities may move, relative to its size, when only the batch shape
# (padding, neighbours) or the thread count changes: kernels then add in another order. Measured
# in float32 (base-size BERT and GPT-2, benchmarks/bench_determinism.py): at most 1.1e-7 of the
# score on a CPU (1.4e-6 nats), 4e-8 on an H200 (5.2e-6 nats); float32's margin is 3 times the
# larger. Half precision rounds the logits themselves (8 or 11 bits of mantissa), so nearly every
# decision there lies within noise of its boundary.
RELATIVE_NOISE = {"float64": 1e-12, "float32": 3e-7, "float16": 5e-3, "bfloat16": 2e-2}
CANONICAL = "one sentence per batch, one CPU thread"  # how `_Scorer.canonical` scores, as outputs state it


class _Scorer:
    kind = ""

    def __init__(self, ref, tokenizer, model, device, batch_size: int = 32, cache=None):
        self.ref, self.tokenizer, self.model, self.device = ref, tokenizer, model, device
        self.batch_size = batch_size
        self.cache = cache
        self.uncased = _lowercases(tokenizer)
        self.family = tokenizer_family(tokenizer)
        self.limit = _position_limit(tokenizer, model.config)
        self.pad_id = next((t for t in (tokenizer.pad_token_id, tokenizer.eos_token_id) if t is not None), 0)
        self.runtime = None  # how the model runs (open_scorer sets it); part of the cache keys
        self._mode = ""  # "" or "/canonical": cached values of `canonical` scoring are filed apart
        self.logprob_dtype = "float32"  # "model": causal log-softmax and sums in the model's dtype (lm-eval's way)
        # --apply-chat-template / --system-instruction: multiple-choice contexts are put in the
        # tokenizer's chat template (`chat_prompt`), as lm-eval's --apply_chat_template does
        self.chat_template = False
        self.system_instruction: str | None = None

    @property
    def in_model_dtype(self) -> bool:
        """Whether log-probabilities are taken and summed in the model's own dtype (see
        `--logprob-dtype`); only where that dtype is not float32 does it change anything."""
        return self.logprob_dtype == "model" and str(self.model.dtype) != "torch.float32"

    def sum_logprobs(self, values: Sequence[float]) -> float:
        """A text's log-probability from its tokens': exact (fsum), or, with the model's dtype,
        summed as torch sums a tensor of that dtype (float accumulation, the total rounded to
        the dtype), as lm-evaluation-harness's hf backend does."""
        if not self.in_model_dtype:
            return math.fsum(values)
        import torch

        return float(torch.tensor(list(values), dtype=self.model.dtype).sum())

    def noise(self, value: float) -> float:
        """How far `value`, a sum of this model's log-probabilities, may differ between two runs
        that differ only in batch shape or thread count (see RELATIVE_NOISE)."""
        runtime = self.runtime
        dtype = (
            ("float16" if runtime.quantization else runtime.dtype)
            if runtime is not None
            else str(getattr(self.model, "dtype", "float32")).removeprefix("torch.")
        )
        return RELATIVE_NOISE.get(dtype, RELATIVE_NOISE["float16"]) * max(abs(value), 1.0)

    @contextmanager
    def canonical(self) -> Iterator[_Scorer]:
        """Within it, every sequence is run alone (no padding, no neighbours; a masked LM's
        sentence with all its masked copies, see `_canonical_masked`) on one CPU thread, and
        cached under keys of its own: the values do not depend on the batch size or thread count
        of the run, so a decision taken on them is the same in every run of the model on the
        same hardware and software. Slower; callers use it for the few items whose decision lies
        within `noise` of a boundary."""
        import torch

        saved = (self.batch_size, torch.get_num_threads(), self._mode)
        self.batch_size, self._mode = 1, "/canonical"
        torch.set_num_threads(1)
        try:
            yield self
        finally:
            self.batch_size, threads, self._mode = saved
            torch.set_num_threads(threads)

    @property
    def cache_revision(self) -> str:
        """The revision cached scores are filed under: the weights' revision and, when known, the
        precision and device type they were computed with (float32 numbers are not bfloat16's)."""
        base = f"{self.ref.revision}@{self.runtime.tag}" if self.runtime is not None else self.ref.revision
        return base + "+logprobs-in-model-dtype" if self.in_model_dtype else base

    def _check_length(self, ids: Sequence[int]) -> None:
        if self.limit is not None and len(ids) > self.limit:
            text = self.tokenizer.decode(list(ids)[:12])
            raise ModelError(
                f"an input of {len(ids)} tokens ({text!r}...) is longer than the {self.limit} tokens "
                f"model {self.ref.name!r} accepts"
            )

    def _resolve(
        self,
        namespace: str,
        keys: list[str],
        compute: Callable[[list[str], Callable[[dict], None]], None],
        progress: Progress,
        owners: Sequence[int] | None = None,
        n_inputs: int | None = None,
    ) -> list:
        """Values for `keys` (one per query, duplicates allowed): cached ones read, the rest
        computed once by `compute(missing_keys, done)`, which calls `done({key: value})` per batch.

        `owners` maps each query to the caller's input it belongs to; progress advances by one
        when all of an input's queries are answered (inputs without any query, of `n_inputs`,
        at the end)."""
        by_key: dict[str, list[int]] = defaultdict(list)
        for i, k in enumerate(keys):
            by_key[k].append(i)
        owners = list(range(len(keys))) if owners is None else list(owners)
        remaining = Counter(owners)

        def advance(done_keys) -> None:
            if progress is None:
                return
            finished = 0
            for k in done_keys:
                for i in by_key[k]:
                    remaining[owners[i]] -= 1
                    finished += remaining[owners[i]] == 0
            if finished:
                progress(finished)

        found: dict[str, object] = {}
        namespace += self._mode
        barrier()  # under a launcher: every rank reads the cache as rank 0 last wrote it
        if self.cache is not None and by_key:
            found = self.cache.get_many(namespace, self.ref.name, self.cache_revision, list(by_key))
        advance(found)
        missing = [k for k in by_key if k not in found]
        barrier()  # ... and before rank 0 writes again

        def done(batch: dict) -> None:
            if self.cache is not None:
                self.cache.put_many(namespace, self.ref.name, self.cache_revision, batch)
            found.update(batch)
            advance(batch)

        if missing:
            compute(missing, done)
        if progress is not None and n_inputs is not None and n_inputs > len(remaining):
            progress(n_inputs - len(remaining))
        return [found[k] for k in keys]

    def _head_rows(self, ids, mask, rows, positions, type_ids=None):
        """Vocabulary logits (float32) at one position per row of a padded batch."""

        where = (rows, positions)
        kwargs = {"input_ids": ids, "attention_mask": mask}
        if type_ids is not None:
            kwargs["token_type_ids"] = type_ids
        split = _split_head(self.model)
        if split is not None:
            encoder, head = split
            hidden = encoder(**kwargs).last_hidden_state
            out = head(hidden[tuple(w.to(hidden.device) for w in where)])
        else:
            output = self.model(**kwargs)
            logits = getattr(output, "logits", None)
            logits = logits if logits is not None else output.prediction_logits
            out = logits[tuple(w.to(logits.device) for w in where)]
        CALLS["forward"] += 1
        # With layers spread over devices (--device-map auto) the head may sit on another device.
        return out.float().to(rows.device)

    def _top_k_rows(self, logits, k: int, banned: Sequence[int]):
        import torch

        logits = logits.clone()
        if banned:
            logits[:, list(banned)] = -math.inf
        lp = torch.log_softmax(logits, dim=-1)
        top = torch.topk(lp, k=min(k, lp.shape[-1]), dim=-1)
        return [
            [[int(t), float(v)] for t, v in zip(ti, tv)] for ti, tv in zip(top.indices.tolist(), top.values.tolist())
        ]


# -- masked LMs ---------------------------------------------------------------------------------
class MaskedLMScorer(_Scorer):
    """Log-probabilities at masked positions, one mask per query (as every reference tool does)."""

    kind = "masked"

    def __init__(self, ref, tokenizer, model, device, batch_size: int = 32, cache=None):
        super().__init__(ref, tokenizer, model, device, batch_size, cache)
        self.mask_id = tokenizer.mask_token_id
        self.special_ids = {
            t
            for t in (
                tokenizer.cls_token_id,
                tokenizer.sep_token_id,
                tokenizer.bos_token_id,
                tokenizer.eos_token_id,
                tokenizer.pad_token_id,
                tokenizer.mask_token_id,
            )
            if t is not None
        }
        self.has_nsp_head = False  # load_scorer sets it from the checkpoint's weights
        self._nsp_model = None

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"])

    # one batch: the function `run_batched` calls (tests patch it to simulate out-of-memory)
    def _masked_step(
        self, sequences: list[tuple[int, ...]], positions: list[int], targets: list[list[int]]
    ) -> list[list[float]]:
        """For each masked sequence, the log-probabilities of its targets at its position."""
        import torch

        ids, mask = pad_batch(sequences, self.pad_id, self.device)
        with torch.inference_mode():
            rows = torch.arange(len(sequences), device=ids.device)
            logits = self._head_rows(ids, mask, rows, torch.tensor(positions, device=ids.device))
            norm = torch.logsumexp(logits, dim=-1)
            flat_rows = torch.tensor([r for r, wanted in enumerate(targets) for _ in wanted], device=ids.device)
            flat_targets = torch.tensor([t for wanted in targets for t in wanted], device=ids.device)
            flat = (logits[flat_rows, flat_targets] - norm[flat_rows]).cpu().tolist()
        out, at = [], 0
        for wanted in targets:
            out.append(flat[at : at + len(wanted)])
            at += len(wanted)
        return out

    def masked_logprobs(
        self,
        queries: Sequence[tuple[Sequence[int], int, int]],
        progress: Progress = None,
        owners: Sequence[int] | None = None,
        n_inputs: int | None = None,
    ) -> list[float]:
        """ln P(target at position | the ids with that position masked), one value per query.

        The ids may carry the mask already or the original token: the mask is put in place here.
        `owners` (optional) groups queries into the caller's `n_inputs` inputs for `progress`."""
        prepared, given = [], []
        for ids, pos, target in queries:
            ids = list(ids)
            if not 0 <= pos < len(ids):
                raise ModelError(f"position {pos} is outside a sequence of {len(ids)} tokens")
            given.append(tuple(ids))
            ids[pos] = self.mask_id
            prepared.append((tuple(ids), int(pos), int(target)))
        for seq in {p[0] for p in prepared}:
            self._check_length(seq)
        keys = [_key("mlm", seq, pos, target) for seq, pos, target in prepared]
        query_of = dict(zip(keys, prepared))

        def compute(missing: list[str], done) -> None:
            if self._mode:
                self._canonical_masked(missing, query_of, dict(zip(keys, given)), done)
                return
            rows: dict[tuple, list[str]] = defaultdict(list)  # one forward row per (sequence, position)
            for k in missing:
                seq, pos, _ = query_of[k]
                rows[(seq, pos)].append(k)
            row_keys = list(rows)

            def step(indices):
                return self._masked_step(
                    [row_keys[j][0] for j in indices],
                    [row_keys[j][1] for j in indices],
                    [[query_of[k][2] for k in rows[row_keys[j]]] for j in indices],
                )

            def collect(indices, values) -> None:
                batch = {}
                for j, vals in zip(indices, values):
                    batch.update(zip(rows[row_keys[j]], vals))
                done(batch)

            self.batch_size = run_batched([len(r[0]) for r in row_keys], self.batch_size, step, collect)

        return self._resolve("lm-masked", keys, compute, progress, owners, n_inputs)

    def _canonical_masked(self, missing: list[str], query_of: dict, given_of: dict, done) -> None:
        """`canonical` masked queries: each sentence's rows in one batch of their own, every
        position of the sentence masked in turn whatever was asked, so a row's neighbours (and
        the batch's shape) are a function of its sentence alone. Much cheaper than one row per
        forward pass, and as free of the run's batch size. Out of memory: one row at a time."""
        asked: dict[tuple, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
        for k in missing:
            asked[given_of[k]][query_of[k][1]].append(k)
        for sentence, by_position in asked.items():
            rows = [tuple(self.mask_id if i == p else t for i, t in enumerate(sentence)) for p in range(len(sentence))]
            targets = [[query_of[k][2] for k in by_position.get(p, [])] for p in range(len(sentence))]
            try:
                values = self._masked_step(rows, list(range(len(sentence))), targets)
            except RuntimeError as exc:
                if not _is_oom(exc):
                    raise
                values = [self._masked_step([rows[p]], [p], [targets[p]])[0] for p in range(len(sentence))]
            done({k: v for p, ks in by_position.items() for k, v in zip(ks, values[p])})

    def _scored_positions(self, ids: Sequence[int]) -> list[int]:
        """Positions of a text's own tokens: every one but the added special tokens (an unknown
        token in the text is scored like any other)."""
        return [p for p, t in enumerate(ids) if t not in self.special_ids]

    def pseudo_log_likelihood(self, texts: Sequence[str], progress: Progress = None) -> list[list[float]]:
        """Per text, ln P(token | the rest) for each non-special token, masked one at a time."""
        encoded = [self.encode(t) for t in texts]
        queries, owners = [], []
        for i, ids in enumerate(encoded):
            for p in self._scored_positions(ids):
                queries.append((ids, p, ids[p]))
                owners.append(i)
        values = self.masked_logprobs(queries, progress, owners, n_inputs=len(texts))
        out: list[list[float]] = [[] for _ in texts]
        for owner, v in zip(owners, values):
            out[owner].append(v)
        return out

    def pseudo_perplexity(self, texts: Sequence[str], progress: Progress = None) -> list[float]:
        """exp(−mean PLL) per text (NaN for a text without tokens)."""
        return [math.exp(-sum(v) / len(v)) if v else math.nan for v in self.pseudo_log_likelihood(texts, progress)]

    def top_k_at_mask(
        self,
        token_ids: Sequence[Sequence[int]],
        positions: Sequence[int],
        k: int,
        exclude_special: bool = True,
        progress: Progress = None,
    ) -> list[list[tuple[int, float]]]:
        """The k most probable (token id, ln P) at each given (masked) position, best first.

        exclude_special drops every special token (mask, padding, unknown, ...) from the
        ranking; the probabilities are still normalised over the whole vocabulary minus them."""
        import torch

        if k <= 0:
            raise ValueError("k must be at least 1")
        if len(token_ids) != len(positions):
            raise ValueError("token_ids and positions differ in length")
        seqs = [tuple(int(t) for t in ids) for ids in token_ids]
        for seq, pos in zip(seqs, positions):
            self._check_length(seq)
            if not 0 <= pos < len(seq):
                raise ModelError(f"position {pos} is outside a sequence of {len(seq)} tokens")
        banned = sorted(set(self.tokenizer.all_special_ids)) if exclude_special else []
        keys = [_key("mlm-topk", seq, int(pos), k, exclude_special) for seq, pos in zip(seqs, positions)]
        query_of = dict(zip(keys, zip(seqs, positions)))

        def compute(missing, done) -> None:
            def step(indices):
                batch = [query_of[missing[j]] for j in indices]
                ids, mask = pad_batch([b[0] for b in batch], self.pad_id, self.device)
                with torch.inference_mode():
                    rows = torch.arange(len(batch), device=ids.device)
                    logits = self._head_rows(ids, mask, rows, torch.tensor([b[1] for b in batch], device=ids.device))
                    return self._top_k_rows(logits, k, banned)

            def collect(indices, values):
                done({missing[j]: v for j, v in zip(indices, values)})

            self.batch_size = run_batched([len(query_of[m][0]) for m in missing], self.batch_size, step, collect)

        return [
            [(int(t), float(v)) for t, v in row] for row in self._resolve("lm-masked-topk", keys, compute, progress)
        ]

    def _next_sentence_model(self):
        """The checkpoint loaded a second time with its next-sentence head (on first use only:
        the masked-LM class has no pooler), on the scorer's device and dtype."""
        if self._nsp_model is None:
            from transformers import AutoModelForNextSentencePrediction

            rev = None if self.ref.revision.startswith("sha256:") else self.ref.revision
            model = AutoModelForNextSentencePrediction.from_pretrained(
                self.ref.location, revision=rev, dtype=self.model.dtype
            )
            self._nsp_model = model.to(self.device).eval()
        return self._nsp_model

    def next_sentence_logprob(self, pairs: Sequence[tuple[str, str]], progress: Progress = None) -> list[float]:
        """ln P(second sentence follows the first) from the next-sentence-prediction head."""
        import torch

        if not self.has_nsp_head:
            raise ModelError(f"model {self.ref.name!r} has no next-sentence-prediction head")
        encoded = []
        for first, second in pairs:
            enc = self.tokenizer(first, second)
            ids = tuple(enc["input_ids"])
            types = tuple(enc.get("token_type_ids") or [0] * len(ids))
            self._check_length(ids)
            encoded.append((ids, types))
        keys = [_key("nsp", ids, types) for ids, types in encoded]
        query_of = dict(zip(keys, encoded))

        def compute(missing, done) -> None:
            model = self._next_sentence_model()

            def step(indices):
                batch = [query_of[missing[j]] for j in indices]
                ids, mask, types = pad_batch([b[0] for b in batch], self.pad_id, self.device, [b[1] for b in batch])
                with torch.inference_mode():
                    logits = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
                    CALLS["forward"] += 1
                    # index 0 of BERT's NSP head is "B follows A"
                    return torch.log_softmax(logits.float(), dim=-1)[:, 0].cpu().tolist()

            def collect(indices, values):
                done({missing[j]: v for j, v in zip(indices, values)})

            self.batch_size = run_batched([len(query_of[m][0]) for m in missing], self.batch_size, step, collect)

        return self._resolve("lm-nsp", keys, compute, progress)


# -- causal LMs ---------------------------------------------------------------------------------
class CausalLMScorer(_Scorer):
    """Log-probabilities of each token given the ones before it."""

    kind = "causal"

    def encode(self, text: str) -> list[int]:
        """The text's tokens without special tokens (BOS is the caller's choice: see text_logprobs)."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode_many(self, texts: Sequence[str]) -> list[list[int]]:
        """`encode` of each text, in one call of the tokenizer (its batch path)."""
        return (
            [list(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]] if texts else []
        )

    @property
    def bos_id(self) -> int:
        for t in (self.tokenizer.bos_token_id, self.tokenizer.eos_token_id):
            if t is not None:
                return int(t)
        raise ModelError(f"model {self.ref.name!r} has neither a BOS nor an EOS token to start a text with")

    def _causal_step(self, sequences: list[tuple[int, ...]]) -> list[list[float]]:
        """One right-padded batch: ln P(s[i] | s[:i]) for i ≥ 1, per sequence."""
        import torch

        ids, _ = pad_batch(sequences, self.pad_id, self.device)
        with torch.inference_mode():
            # Right padding: a causal model's logits at a sequence's own tokens never see the pads
            # after them, so no mask is passed (the attention takes its causal path, as
            # lm-evaluation-harness runs it) and no key/value cache is built. The last position
            # predicts nothing that is scored, so it is not run.
            logits = self.model(input_ids=ids[:, :-1], use_cache=False).logits.to(ids.device)
            CALLS["forward"] += 1
            if self.in_model_dtype:  # lm-evaluation-harness's hf backend: log-softmax in the model's dtype
                picked = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1).float()
            else:
                logits = logits.float()
                picked = logits.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
            picked = picked.cpu().tolist()
        return [row[: len(s) - 1] for row, s in zip(picked, sequences)]

    def _token_logprobs(
        self, sequences: Sequence[Sequence[int]], progress: Progress, owners=None, n_inputs: int | None = None
    ) -> list[list[float]]:
        seqs = [tuple(int(t) for t in s) for s in sequences]
        for s in set(seqs):
            self._check_length(s)
        keys = [_key("clm", s) for s in seqs]
        seq_of = dict(zip(keys, seqs))
        return self._resolve(
            "lm-causal", keys, lambda missing, done: self._plain(seq_of, missing, done), progress, owners, n_inputs
        )

    def _plain(self, seq_of: dict, missing: list[str], done) -> None:
        """Score the missing sequences whole, in length-sorted batches."""
        long = [m for m in missing if len(seq_of[m]) >= 2]
        if len(long) < len(missing):  # nothing to score in a sequence of one token
            done({m: [] for m in missing if len(seq_of[m]) < 2})
        if not long:
            return

        def step(indices):
            return self._causal_step([seq_of[long[j]] for j in indices])

        def collect(indices, values):
            done({long[j]: v for j, v in zip(indices, values)})

        self.batch_size = run_batched([len(seq_of[m]) for m in long], self.batch_size, step, collect)

    def token_logprobs(self, sequences: Sequence[Sequence[int]], progress: Progress = None) -> list[list[float]]:
        """For each sequence s: [ln P(s[i] | s[:i]) for i in 1..len(s)−1]."""
        return self._token_logprobs(sequences, progress)

    # Prefixed sequences take the shared path only where at least this many share a prefix
    # length: below it, the prefix pass costs more than the tokens it saves.
    MIN_SHARED = 4
    _prefix_ok: bool | None = None  # whether the shared path matched the plain one (None: not tried yet)

    def prefixed_token_logprobs(
        self, sequences: Sequence[Sequence[int]], prefix_lengths: Sequence[int], progress: Progress = None
    ) -> list[list[float]]:
        """`token_logprobs(sequences)`, with prefixes that several sequences share computed once.

        sequences[i][:prefix_lengths[i]] is a prefix it may share with others (0: none): texts
        that all start with one of a few phrases (an identity, then a statement about it) share
        BOS + that phrase, often a quarter of their tokens. Prefixes of one length run together,
        once each (their tokens' log-probabilities, the next token's distribution, their
        key/value cache); then the rest of every sequence runs on its prefix's cache rows, in
        length-sorted batches that mix prefixes of that length (no padding inside the cache, so
        positions are the model's own). Values equal the plain path's to float rounding and share its cache
        entries. The first shared sequence is checked against the plain path; if they differ
        (a model whose cache this does not drive right), every sequence takes the plain path."""
        seqs = [tuple(int(t) for t in s) for s in sequences]
        for s in set(seqs):
            self._check_length(s)
        keys = [_key("clm", s) for s in seqs]
        seq_of = dict(zip(keys, seqs))
        cut: dict[str, int] = {}
        for k, s, n in zip(keys, seqs, prefix_lengths):
            cut.setdefault(k, int(n) if 1 <= n < len(s) else 0)

        def compute(missing: list[str], done) -> None:
            by_length: dict[int, list[str]] = defaultdict(list)
            plain = []
            shared = self._prefix_ok is not False and not self.in_model_dtype  # the shared path is float32's
            for m in missing:
                (by_length[cut[m]] if cut[m] and shared else plain).append(m)
            for n in [n for n, members in by_length.items() if len(members) < self.MIN_SHARED]:
                plain += by_length.pop(n)
            if by_length and self._prefix_ok is None:
                first = next(iter(by_length.values()))[0]
                self._prefix_ok = self._shared_matches_plain(seq_of[first], cut[first])
                if not self._prefix_ok:
                    plain += [m for members in by_length.values() for m in members]
                    by_length = {}
            if plain:
                self._plain(seq_of, plain, done)
            groups, units = [], []  # groups: (prefix length, prefixes); units: (group, member keys)
            for n, members in by_length.items():
                prefixes = list(dict.fromkeys(seq_of[m][:n] for m in members))
                for c in range(0, len(prefixes), self.batch_size):
                    inside = set(prefixes[c : c + self.batch_size])
                    mine = sorted((m for m in members if seq_of[m][:n] in inside), key=lambda m: (len(seq_of[m]), m))
                    units += [
                        (len(groups), mine[i : i + self.batch_size]) for i in range(0, len(mine), self.batch_size)
                    ]
                    groups.append((n, prefixes[c : c + self.batch_size]))
            ran: dict = {}

            def step(indices):
                g, members = units[indices[0]]
                if ran.get("group") != g:  # units of a group come one after another: keep one group's pass
                    ran.clear()
                    ran.update(self._prefix_pass(groups[g][1]), group=g)
                return self._rest_pass(ran, [seq_of[m] for m in members], groups[g][0])

            def collect(indices, values):
                done(dict(zip(units[indices[0]][1], values)))

            run_batched(list(range(len(units))), 1, step, collect)  # one unit = one batch of rests

        return self._resolve("lm-causal", keys, compute, progress)

    def _shared_matches_plain(self, seq: tuple, n: int) -> bool:
        try:
            shared = self._rest_pass(self._prefix_pass([seq[:n]]), [seq], n)[0]
        except Exception:  # noqa: BLE001 - a model without a usable cache: the plain path it is
            return False
        plain = self._causal_step([seq])[0]
        return len(shared) == len(plain) and all(abs(a - b) <= 1e-3 for a, b in zip(shared, plain))

    def _prefix_pass(self, prefixes: list[tuple]) -> dict:
        """One pass over prefixes of one length (no padding): each one's row, its tokens'
        log-probabilities, the next token's log-distribution, and the key/value cache."""
        import torch

        with torch.inference_mode():
            ids = torch.tensor([list(p) for p in prefixes], device=self.device)
            out = self.model(input_ids=ids, use_cache=True)
            CALLS["forward"] += 1
            lp = torch.log_softmax(out.logits.float(), dim=-1)
            head = lp[:, :-1].gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1).cpu().tolist()
            # transformers renamed `past_key_values` to `cache` (5.x): take whichever this one has
            cache = getattr(out, "cache", None)
            return {
                "row": {p: r for r, p in enumerate(prefixes)},
                "head": head,
                "next": lp[:, -1],
                "cache": cache if cache is not None else out.past_key_values,
            }

    def _rest_pass(self, ran: dict, seqs: list[tuple], n: int) -> list[list[float]]:
        """ln P of every token after the first of each sequence, its first n tokens being a
        prefix of `ran` (`_prefix_pass`): one pass over the right-padded rests on the prefixes'
        cache rows. On out-of-memory the batch is split in halves."""
        import torch

        rows = [ran["row"][s[:n]] for s in seqs]
        try:
            with torch.inference_mode():
                rest, mask = pad_batch([s[n:] for s in seqs], self.pad_id, self.device)
                cache = copy.deepcopy(ran["cache"])
                cache.batch_select_indices(torch.tensor(rows, device=rest.device))
                mask = torch.cat([torch.ones(len(seqs), n, dtype=mask.dtype, device=mask.device), mask], 1)
                keyword = "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"
                logits = self.model(input_ids=rest, attention_mask=mask, use_cache=True, **{keyword: cache}).logits
                CALLS["forward"] += 1
                logits = logits[:, :-1].float()
                picked = logits.gather(-1, rest[:, 1:].unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
                firsts = ran["next"][torch.tensor(rows, device=rest.device), rest[:, 0]].cpu().tolist()
                picked = picked.cpu().tolist()
        except RuntimeError as exc:
            if not _is_oom(exc) or len(seqs) == 1:
                raise
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            half = len(seqs) // 2
            return self._rest_pass(ran, seqs[:half], n) + self._rest_pass(ran, seqs[half:], n)
        return [
            ran["head"][r] + [first] + row[: len(s) - n - 1] for r, first, row, s in zip(rows, firsts, picked, seqs)
        ]

    def text_logprobs(self, texts: Sequence[str], bos: str = "prepend", progress: Progress = None) -> list[list[float]]:
        """ln P of every token of each text (tokenised without special tokens).

        bos="prepend": the model reads BOS + text, so every token, the first included, is
        conditioned on BOS and the tokens before it (Hugging Face `evaluate`'s perplexity).
        bos="separate": the first token's log-prob comes from a pass over BOS alone, and the
        rest from a pass over the text *without* BOS, so later tokens never see BOS. This is
        a reference rule some benchmarks use for causal LMs; its values differ from "prepend" from the
        second token on."""
        if bos not in ("prepend", "separate"):
            raise ValueError(f"bos must be 'prepend' or 'separate', not {bos!r}")
        start = self.bos_id
        encoded = self.encode_many(texts)
        if bos == "prepend":
            seqs = [[start, *ids] for ids in encoded]
            return self._token_logprobs(seqs, progress)
        seqs, owners = [], []
        for i, ids in enumerate(encoded):
            if ids:
                seqs += [[start, ids[0]], ids]
                owners += [i, i]
        values = self._token_logprobs(seqs, progress, owners, n_inputs=len(texts))
        out: list[list[float]] = [[] for _ in texts]
        for j in range(0, len(values), 2):
            out[owners[j]] = values[j] + values[j + 1]
        return out

    def perplexity(self, texts: Sequence[str], progress: Progress = None) -> list[float]:
        """Perplexity as Hugging Face `evaluate` computes it: BOS prepended, the text's tokens
        (no special tokens) all scored, exp(mean negative log-likelihood). NaN for an empty text."""
        return [math.exp(-sum(v) / len(v)) if v else math.nan for v in self.text_logprobs(texts, "prepend", progress)]

    def next_token_top_k(
        self, prefixes: Sequence[Sequence[int]], k: int, progress: Progress = None
    ) -> list[list[tuple[int, float]]]:
        """The k most probable next tokens (id, ln P) after each prefix, best first."""
        import torch

        if k <= 0:
            raise ValueError("k must be at least 1")
        seqs = [tuple(int(t) for t in p) for p in prefixes]
        for s in seqs:
            if not s:
                raise ModelError("an empty prefix has no next token: start it with bos_id")
            self._check_length(s)
        keys = [_key("clm-topk", s, k) for s in seqs]
        seq_of = dict(zip(keys, seqs))

        def compute(missing, done) -> None:
            def step(indices):
                batch = [seq_of[missing[j]] for j in indices]
                ids, mask = pad_batch(batch, self.pad_id, self.device)
                with torch.inference_mode():
                    rows = torch.arange(len(batch), device=ids.device)
                    last = torch.tensor([len(s) - 1 for s in batch], device=ids.device)
                    logits = self._head_rows(ids, mask, rows, last)
                    return self._top_k_rows(logits, k, [])

            def collect(indices, values):
                done({missing[j]: v for j, v in zip(indices, values)})

            self.batch_size = run_batched([len(seq_of[m]) for m in missing], self.batch_size, step, collect)

        return [
            [(int(t), float(v)) for t, v in row] for row in self._resolve("lm-causal-topk", keys, compute, progress)
        ]


def continuation_logprobs(scorer, pairs: Sequence[tuple[str, str]], progress=None) -> list[tuple[float, int]]:
    """For each (prompt, continuation): the summed natural-log probability of the continuation's
    tokens after the prompt, and how many tokens it has — the log-likelihood multiple-choice
    benchmarks score answers with.

    The text read is `prompt + " " + continuation`; the continuation's tokens are those the whole
    text has beyond the prompt's (both tokenised without special tokens), so a word is tokenised
    as it reads in place. Causal LM: each token given BOS, the prompt and the earlier continuation
    tokens. Masked LM: each token given the whole text with that token masked, one at a time.
    Under the scorer's chat template (--apply-chat-template), as a release's lm-eval task reads
    it there: the prompt alone and the whole text are each scored after the chat template's
    empty user turn (`choice_logprobs`), the continuation's value their difference.
    `progress` advances by one per pair scored."""
    if getattr(scorer, "chat_template", False):
        scored = _choice_scores(scorer, [("", [prompt, f"{prompt} {c}"]) for prompt, c in pairs])
        out = []
        for (prompt, continuation), ((alone, n_alone), (whole, n_whole)) in zip(pairs, scored):
            if n_whole <= n_alone:
                raise ModelError(
                    f"the continuation {continuation!r} adds no token to its prompt for {scorer.ref.name!r}"
                )
            out.append((whole - alone, n_whole - n_alone))
        if progress is not None and pairs:
            progress(len(pairs))
        return out

    def as_read(text: str) -> str:
        return text.lower() if getattr(scorer, "uncased", False) else text

    def plain(text: str) -> list[int]:
        return list(scorer.tokenizer(text, add_special_tokens=False)["input_ids"])

    options = []
    for prompt, continuation in pairs:
        text = as_read(f"{prompt} {continuation}")
        whole = plain(text)
        n = len(whole) - len(plain(as_read(prompt)))
        if n <= 0:
            raise ModelError(f"the continuation {continuation!r} adds no token to its prompt for {scorer.ref.name!r}")
        options.append((text, whole, n))
    if scorer.kind == "causal":
        per_token = scorer.token_logprobs([[scorer.bos_id, *whole] for _, whole, _ in options], progress=progress)
        return [(scorer.sum_logprobs(lp[-n:]), n) for lp, (_, _, n) in zip(per_token, options)]
    if scorer.kind != "masked":
        raise ModelError(f"{scorer.ref.name!r} is neither a causal nor a masked LM")
    queries, owners, spans = [], [], []
    for k, (text, whole, n) in enumerate(options):
        ids = scorer.encode(text)  # with the model's special tokens around it
        own = [p for p, t in enumerate(ids) if t not in scorer.special_ids]
        if [ids[p] for p in own] != whole:
            raise ModelError(
                f"{scorer.ref.name!r} tokenises {text!r} differently with special tokens added: the "
                "continuation's tokens cannot be found"
            )
        spans.append((len(queries), n))
        queries += [(ids, p, ids[p]) for p in own[-n:]]
        owners += [k] * n
    values = scorer.masked_logprobs(queries, progress=progress, owners=owners, n_inputs=len(options))
    return [(float(sum(values[s : s + n])), n) for s, n in spans]


def chat_prompt(scorer, prompt: str, system: str | None = None) -> str:
    """The prompt as the tokenizer's own chat template writes it: a user turn (after a system turn
    when `system` is given) and the generation prompt that opens the assistant's answer, as text
    (`apply_chat_template(tokenize=False, add_generation_prompt=True)`, as lm-evaluation-harness's
    hf backend renders a request under --apply_chat_template). Generation encodes it too."""
    tokenizer = scorer.tokenizer
    if not getattr(tokenizer, "chat_template", None):
        raise ModelError(f"model {scorer.ref.name!r} has no chat template in its tokenizer: turn the chat template off")
    head = [{"role": "system", "content": system}] if system is not None else []
    try:
        text = tokenizer.apply_chat_template(
            [*head, {"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
    except Exception as exc:  # noqa: BLE001 -- a template's own refusal (jinja2 raise_exception), e.g. no system role
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"the chat template of {scorer.ref.name!r} refuses the prompt: {first}") from None
    if not text:  # the model would be given nothing to read
        raise ModelError(
            f"the chat template of {scorer.ref.name!r} renders the prompt {prompt[:40]!r} as nothing: check its "
            "tokenizer's chat_template, or turn the chat template off"
        )
    return text


def choice_logprobs(
    scorer,
    items: Sequence[tuple[str, Sequence[str]]],
    delimiter: str = " ",
    progress: Progress = None,
    chat: tuple[bool, str | None] | None = None,
) -> list[list[float]]:
    """lm-evaluation-harness's multiple-choice log-likelihoods, for a causal LM: for each (context,
    choices), the summed ln P of `delimiter + choice` after the context, one value per choice.
    `_choice_scores` says how."""
    return [[s for s, _ in row] for row in _choice_scores(scorer, items, delimiter, progress, chat)]


def _choice_scores(
    scorer,
    items: Sequence[tuple[str, Sequence[str]]],
    delimiter: str = " ",
    progress: Progress = None,
    chat: tuple[bool, str | None] | None = None,
) -> list[list[tuple[float, int]]]:
    """`choice_logprobs`, each value with the choice's token count.

    As lm-eval's hf backend asks: the context's trailing spaces move to the continuation, the
    whole text and the context alone are tokenised as the tokenizer does by default (its own
    special tokens; none added to a text that starts with the BOS token's text, which a chat
    template writes), and the choice's tokens are those the whole text has beyond the context's.
    With a chat template (`chat` = (on, system instruction); None: the scorer's own, from
    --apply-chat-template) each context is first put in it (`chat_prompt`) and the delimiter
    dropped, as lm-eval's --apply_chat_template does for a task without gen_prefix. The
    contexts' tokens are shared by their choices (one pass each, see `prefixed_token_logprobs`).
    `progress` advances by one per item."""
    if scorer.kind != "causal":
        raise ModelError(f"{scorer.ref.name!r} is not a causal LM: multiple-choice log-likelihoods need one")
    templated, system = chat if chat is not None else (scorer.chat_template, scorer.system_instruction)
    if templated:
        rendered: dict[str, str] = {}
        for context, _ in items:
            if context not in rendered:
                rendered[context] = chat_prompt(scorer, context, system)
        items = [(rendered[context], choices) for context, choices in items]
        delimiter = ""
    bos = scorer.tokenizer.decode([scorer.bos_id])  # lm-eval's prefix token, as text

    def encode(text: str) -> list[int]:
        plain = bool(bos) and text.startswith(bos)  # lm-eval's tok_encode: BOS written already, none added
        return list(scorer.tokenizer(text, add_special_tokens=not plain)["input_ids"])

    sequences, cuts, spans = [], [], []
    for context, choices in items:
        stripped = context.rstrip()
        spaces = context[len(stripped) :]
        context_ids = encode(stripped) or [scorer.bos_id]  # an empty context: lm-eval's prefix token
        spans.append((len(sequences), len(choices)))
        for choice in choices:
            # lm-eval: the choice's tokens are the whole text's beyond as many as the context has,
            # read after the context's own encoding
            rest = encode(stripped + spaces + delimiter + choice)[len(context_ids) :]
            if not rest:
                raise ModelError(
                    f"{scorer.ref.name!r}: the choice {choice!r} adds no token after the context {stripped[-40:]!r}"
                )
            sequences.append(context_ids + rest)
            cuts.append((len(context_ids), len(rest)))
    values = scorer.prefixed_token_logprobs(sequences, [c for c, _ in cuts], progress=None)
    sums = [(scorer.sum_logprobs(lp[-n:]), n) for lp, (_, n) in zip(values, cuts)]
    if progress is not None and items:
        progress(len(items))
    return [sums[start : start + n] for start, n in spans]

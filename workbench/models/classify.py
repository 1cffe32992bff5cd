"""A text classifier as a judge: a sequence-classification checkpoint (sentiment, toxicity,
regard, ...) that scores generated text, for the kinds that declare a "judge" model role.

It runs on the machinery of the language-model scorers (`lm_scoring`): the checkpoint loaded as
the model options ask (`runtime.LoadSpec`: device, dtype, device plan, quantization, batch
size), its `runtime` recorded; length-sorted batches, padded on the right with an attention
mask, the batch size halved on out-of-memory (`batching.run_batched`); duplicate texts computed
once; an optional cache (get_many / put_many, workbench's SQLite `Cache`) keyed by the model's
revision (`runtime.keyed_revision`) and the text, so a second run computes nothing.

Probabilities are a softmax over the checkpoint's labels (`config.id2label`, in id order), taken
in float32 whatever the model's dtype. A text longer than the model's position limit is cut to
it (as a Hugging Face pipeline with truncation does).

This module imports nothing from workbench but the error classes, `core.distributed`,
`models.batching`, `models.runtime` and `models.lm_scoring` (all standard library, torch and
transformers), so a release's standalone evaluate.py can carry it verbatim (see
`release/standalone`, and `release/runtime/classify.py` for its loader). `load_classifier`,
workbench's way of naming a model and opening the score cache, imports those inside itself:
the name resolver is copied with every evaluator anyway, and the cache is an optional import
(a release's evaluator/ lacks it and never asks for it).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core.distributed import barrier
from ..core.errors import ModelError
from .batching import pad_batch, run_batched
from .runtime import LoadSpec, check_tokenizer, keyed_revision, load_weights, plan_load

CALLS = {"forward": 0}  # model forward passes, for tests and benchmarks
NAMESPACE = "classify"  # the cache's namespace for a classifier's probabilities
Progress = Callable[[int], None] | None

CLASSIFIER_SUFFIX = "ForSequenceClassification"
# What a checkpoint that is not a sequence classifier is, by the ending of its architecture.
OTHER_HEADS = (
    (("ForMaskedLM", "ForPreTraining"), "a masked language model"),
    (("ForCausalLM", "LMHeadModel"), "a causal language model"),
    (("ForTokenClassification",), "a token classifier"),
    (("ForQuestionAnswering",), "a question-answering model"),
    (("ForMultipleChoice",), "a multiple-choice model"),
    (("ForConditionalGeneration",), "a sequence-to-sequence model"),
    (("Model",), "a base model without a head"),
)


def check_classifier(config, name: str) -> None:
    """Refuse a checkpoint whose declared architectures hold no *ForSequenceClassification, in one
    line that says what it is instead. A config that declares none is let through: the load then
    checks that the classification head's weights are there."""
    archs = list(getattr(config, "architectures", None) or [])
    if not archs or any(a.endswith(CLASSIFIER_SUFFIX) for a in archs):
        return
    what = next((said for a in archs for ends, said in OTHER_HEADS if a.endswith(ends)), "not a sequence classifier")
    raise ModelError(
        f"model {name!r} is {what} ({', '.join(archs)}), not a text classifier; a judge needs a "
        f"sequence-classification checkpoint (*{CLASSIFIER_SUFFIX})"
    )


def label_names(config) -> list[str]:
    """The checkpoint's labels as strings, in the order of its output ids."""
    id2label = getattr(config, "id2label", None) or {}
    return [str(id2label[k]) for k in sorted(id2label, key=int)]


def open_classifier(ref, spec: LoadSpec, cache=None, hint: str = "", budgets: dict | None = None) -> TextClassifier:
    """Load a sequence classifier ready to judge texts, in eval mode, as `spec` asks (device,
    dtype, device plan, quantization, batch size: see `runtime`).

    `ref` names the checkpoint: `.name` (as the user wrote it), `.location` (what
    from_pretrained reads: a folder or a Hub id) and `.revision` (a commit, or a content hash
    "sha256:..." for a local folder). `cache` (optional) has get_many / put_many; `hint` is
    added to loading errors; `budgets` replaces the free memory `--device-map auto` plans with
    (tests). The classifier's `runtime` says how it runs; its cache keys include its precision."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer
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
    check_classifier(config, name)
    cls = AutoModelForSequenceClassification
    try:
        runtime = plan_load(cls, config, spec, name, budgets, ref.revision, ref.location)  # checks the weight files
    except ValueError as exc:  # a config no sequence-classification class takes
        raise ModelError(f"model {name!r} cannot load as a text classifier: {exc}{tail}") from None
    try:
        tokenizer = AutoTokenizer.from_pretrained(ref.location, revision=rev)
        check_tokenizer(tokenizer, name, ref.location, getattr(config, "vocab_size", None))  # before the weights
        (model, info), device = load_weights(cls, ref.location, runtime, name, revision=rev, output_loading_info=True)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load text classifier {name!r}: {exc}{tail}") from None
    missing = [k for k in info.get("missing_keys", []) if not k.endswith("position_ids")]
    if missing:
        # A head initialised at random would judge noise without any error: refuse instead.
        raise ModelError(
            f"model {name!r} lacks the weights of its classification head ({', '.join(sorted(missing)[:4])}"
            f"{', ...' if len(missing) > 4 else ''}): it is not a sequence-classification checkpoint"
        )
    classifier = TextClassifier(ref, tokenizer, model, device, runtime.batch_size, cache)
    classifier.runtime = runtime
    return classifier


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class TextClassifier:
    """Label probabilities of texts from one sequence-classification checkpoint."""

    def __init__(self, ref, tokenizer, model, device, batch_size: int = 32, cache=None):
        from .lm_scoring import _position_limit

        self.ref, self.tokenizer, self.model, self.device = ref, tokenizer, model, device
        self.batch_size = batch_size
        self.cache = cache
        self.labels = label_names(model.config)
        self.limit = _position_limit(tokenizer, model.config)
        self.pad_id = next(
            (
                t
                for t in (tokenizer.pad_token_id, getattr(model.config, "pad_token_id", None), tokenizer.eos_token_id)
                if t is not None
            ),
            0,
        )
        if getattr(model.config, "pad_token_id", None) is None:
            # Decoder classifiers (GPT-2, Llama) read the last token that is not padding, found by
            # this id; without it they refuse batches of more than one text.
            model.config.pad_token_id = self.pad_id
        self.runtime = None  # how the model runs (open_classifier sets it); part of the cache keys

    @property
    def cache_revision(self) -> str:
        """The revision cached probabilities are filed under: the weights' revision, with the
        precision added when it is not float32 (`runtime.keyed_revision`)."""
        return keyed_revision(self.ref, self.runtime) if self.runtime is not None else self.ref.revision

    def encode(self, text: str) -> list[int]:
        """The token ids the model reads for `text` (its special tokens included), cut to the
        model's position limit."""
        if self.limit is not None:
            enc = self.tokenizer(text, truncation=True, max_length=self.limit)
        else:
            enc = self.tokenizer(text)
        return list(enc["input_ids"])

    # one batch: the function `run_batched` calls (tests patch it to simulate out-of-memory)
    def _step(self, sequences: list[list[int]]) -> list[list[float]]:
        """Softmax over the labels (float32) of each sequence of a right-padded batch."""
        import torch

        ids, mask = pad_batch(sequences, self.pad_id, self.device)
        with torch.inference_mode():
            logits = self.model(input_ids=ids, attention_mask=mask).logits
            CALLS["forward"] += 1
            return torch.softmax(logits.float(), dim=-1).cpu().tolist()

    def probabilities(self, texts: Sequence[str], progress: Progress = None) -> list[list[float]]:
        """For each text, the probability of every label (in the order of `labels`), in the
        order of `texts`. Cached values are read; the rest is computed once per distinct text,
        in length-sorted batches. `progress` (an `advance(n)` callable) advances by one per text."""
        texts = [str(t) for t in texts]
        keys = [_key(t) for t in texts]
        by_key: dict[str, list[int]] = defaultdict(list)
        for i, k in enumerate(keys):
            by_key[k].append(i)
        text_of = dict(zip(keys, texts))

        def advance(done_keys) -> None:
            if progress is not None:
                n = sum(len(by_key[k]) for k in done_keys)
                if n:
                    progress(n)

        found: dict[str, list[float]] = {}
        barrier()  # under a launcher: every rank reads the cache as rank 0 last wrote it
        if self.cache is not None and by_key:
            found = self.cache.get_many(NAMESPACE, self.ref.name, self.cache_revision, list(by_key))
        advance(found)
        missing = [k for k in by_key if k not in found]
        barrier()  # ... and before rank 0 writes again
        if missing:
            encoded = [self.encode(text_of[k]) for k in missing]

            def step(indices: list[int]) -> list[list[float]]:
                return self._step([encoded[j] for j in indices])

            def collect(indices: list[int], values: list[list[float]]) -> None:
                batch = {missing[j]: v for j, v in zip(indices, values)}
                if self.cache is not None:
                    self.cache.put_many(NAMESPACE, self.ref.name, self.cache_revision, batch)
                found.update(batch)
                advance(batch)

            self.batch_size = run_batched([len(e) for e in encoded], self.batch_size, step, collect)
        return [list(found[k]) for k in keys]

    def label_index(self, label: str) -> int:
        """The output index of `label`, matched exactly, else ignoring case; a one-line
        ModelError listing the labels when the checkpoint has none such (or two that differ in
        case only)."""
        if label in self.labels:
            return self.labels.index(label)
        folded = [i for i, name in enumerate(self.labels) if name.casefold() == str(label).casefold()]
        if len(folded) == 1:
            return folded[0]
        why = "two labels differ from it in case only" if folded else "it has no such label"
        raise ModelError(
            f"model {self.ref.name!r} has no label {label!r} ({why}); its labels: {', '.join(self.labels)}"
        )

    def label_probability(self, texts: Sequence[str], label: str, progress: Progress = None) -> list[float]:
        """The probability of one label (named as the checkpoint names it, case aside) for each text."""
        at = self.label_index(label)
        return [row[at] for row in self.probabilities(texts, progress)]

    def predict(self, texts: Sequence[str], progress: Progress = None) -> list[str]:
        """The most probable label of each text (the first of equals)."""
        return [self.labels[max(range(len(row)), key=row.__getitem__)] for row in self.probabilities(texts, progress)]


def load_classifier(
    name: str,
    *,
    root: Path | None = None,
    revision: str | None = None,
    spec: LoadSpec | None = None,
    cache_path: Path | None = None,
    runtimes: dict | None = None,
) -> TextClassifier:
    """Load a text classifier (a local folder, relative to `root` too, or a Hub id, found by
    `loading.resolve`) as `spec` asks (default: auto device and batch size), with its
    probabilities cached in the SQLite file `cache_path` when given; how it runs is recorded in
    `runtimes[name]` when given (for the JSON documents)."""
    from .loading import FIXTURE_HINT, resolve

    if name.startswith(("http://", "https://")):
        raise ModelError(
            f"model {name!r}: a judge is a sequence-classification checkpoint (a local folder or a Hub "
            "name); a model behind a server gives generated text, not label probabilities"
        )
    ref = resolve(name, revision, root)
    cache = None
    if cache_path is not None:
        try:  # optional for the import closure: a release's evaluator/ lacks the cache and never passes cache_path
            from .cache import Cache
        except ImportError:
            Cache = None
        if Cache is None:
            raise ModelError(
                "the score cache needs workbench's cache module, which this copy lacks; leave out the cache"
            )
        cache = Cache(Path(cache_path))
    classifier = open_classifier(ref, spec or LoadSpec(), cache, hint=FIXTURE_HINT)
    if runtimes is not None:
        runtimes[name] = classifier.runtime
    return classifier

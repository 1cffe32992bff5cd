"""NLI classification with normalised labels, batched, streamed into the prediction cache.

Checkpoints order entailment/neutral/contradiction differently and name them differently
("ENTAILMENT", "entail", "LABEL_0"), so every prediction is mapped through the checkpoint's
own `config.id2label` (or an explicit override) to one of three canonical names. A checkpoint
whose labels cannot be mapped is refused before any work starts.

A release's standalone evaluate.py runs this module too (copied into its evaluator/), with no
prediction cache (`cache` None): see evaluate.py's `open_model`.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ...core import distributed
from ...core.errors import ModelError
from ...core.ids import joined_key
from ...models.batching import pad_batch, run_batched
from ...models.loading import ModelRef
from .label_mapping import LABELS, Prediction, canonical_labels, decide, raw_label_names

CALLS = {"forward": 0}
NAMESPACE = "nli"
STREAM_CHUNK = 4096  # pairs tokenised at a time: memory stays flat in the number of pairs


def normalise_labels(
    name: str, id2label: dict, override: dict[str, str] | None = None, fix: str | None = None
) -> list[str]:
    """Canonical label for each output index, or a ModelError that says how to fix it (`fix`:
    how the caller's user names the labels; by default, workbench.toml's mapping)."""
    raw_names = raw_label_names(id2label)
    if len(raw_names) != len(LABELS):
        raise ModelError(
            f"{name!r} has {len(raw_names)} output labels {raw_names}, but an NLI classifier needs "
            f"{len(LABELS)} ({', '.join(LABELS)}): is it a three-way NLI checkpoint?"
        )
    out = canonical_labels(raw_names, override)
    if out is None:
        fix = fix or (
            'add an explicit mapping to workbench.toml, e.g. [filter.label_overrides."'
            + name
            + '"] with '
            + ", ".join(f'{r} = "..."' for r in raw_names)
        )
        raise ModelError(f"cannot map the labels of {name!r} {raw_names} onto {list(LABELS)}; {fix}")
    return out


def check_labels(ref: ModelRef, override: dict[str, str] | None = None, fix: str | None = None) -> list[str]:
    """Read only the config (no weights) and check its labels. A causal LM has none: it is asked
    in a prompt (llm_judge), its answers mapped to the labels in their canonical order."""
    if is_causal_lm(ref):
        return list(LABELS)
    return normalise_labels(ref.name, _config(ref).id2label, override, fix)


def _config(ref: ModelRef):
    from transformers import AutoConfig

    revision = None if ref.revision.startswith("sha256:") else ref.revision
    try:
        return AutoConfig.from_pretrained(ref.location, revision=revision)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read the config of {ref.name!r}: {exc}") from None


def is_causal_lm(ref: ModelRef) -> bool:
    """Whether the checkpoint is a causal LM (*ForCausalLM, *LMHeadModel), or a model behind a
    server: an NLI judge asked in a prompt rather than a classifier."""
    from ...models.lm_scoring import CAUSAL_SUFFIXES

    if _served_judge(ref.name) is not None:
        return True
    config = _config(ref)
    return any(a.endswith(CAUSAL_SUFFIXES) for a in (getattr(config, "architectures", None) or []))


def _served_judge(name: str):
    """served_judge (the module) when `name` names a model behind an OpenAI-compatible server
    (http(s)://HOST:PORT/v1#MODEL), else None. The import is optional: a release's evaluate.py
    carries no served backend."""
    try:
        from . import served_judge
    except ImportError:
        return None
    return served_judge if served_judge.is_served(name) else None


class NLIClassifier:
    def __init__(self, ref: ModelRef, tokenizer, model, device, labels: list[str], batch_size: int = 32):
        self.ref, self.tokenizer, self.model, self.device = ref, tokenizer, model, device
        self.labels, self.batch_size = labels, batch_size

    def tokenize(self, pairs: list[tuple[str, str]]) -> dict[str, list[list[int]]]:
        enc = self.tokenizer([p for p, _ in pairs], [h for _, h in pairs], truncation=True)
        return {k: enc[k] for k in ("input_ids", "token_type_ids") if k in enc}

    def predict_batch(
        self, input_ids: list[list[int]], token_type_ids: list[list[int]] | None = None
    ) -> list[Prediction]:
        """The per-batch function: tokenised batch in, normalised predictions out."""
        import torch

        tensors = pad_batch(input_ids, self.tokenizer.pad_token_id or 0, self.device, token_type_ids)
        kwargs = {"input_ids": tensors[0], "attention_mask": tensors[1]}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = tensors[2]
        with torch.inference_mode():
            logits = self.model(**kwargs).logits
            CALLS["forward"] += 1
            probs = torch.softmax(logits.float(), dim=-1).cpu().tolist()
        return [Prediction(*decide(row, self.labels)) for row in probs]

    def predict_stream(
        self,
        pairs: list[tuple[str, str]],
        on_batch: Callable[[list[tuple[str, str]], list[Prediction]], None],
        progress: Callable[[int], None] | None = None,
    ) -> None:
        for start in range(0, len(pairs), STREAM_CHUNK):
            chunk = pairs[start : start + STREAM_CHUNK]
            enc = self.tokenize(chunk)
            ids, types = enc["input_ids"], enc.get("token_type_ids")

            def step(indices):
                return self.predict_batch([ids[i] for i in indices], [types[i] for i in indices] if types else None)

            def done(indices, preds):
                on_batch([chunk[i] for i in indices], preds)

            self.batch_size = run_batched([len(x) for x in ids], self.batch_size, step, done, progress)


def pair_key(premise: str, hypothesis: str) -> str:
    return joined_key(premise, hypothesis)


def predict_with_cache(
    cache,
    ref: ModelRef,
    pairs: Iterable[tuple[str, str]],
    make_classifier: Callable[[], NLIClassifier],
    progress_factory=None,
) -> tuple[dict[str, Prediction], int]:
    """Predictions for every unique pair; only pairs missing from the cache reach the model,
    and each batch is committed as soon as it is done. `cache` None: every unique pair runs
    (a release's evaluate.py keeps no cache)."""
    unique = list(dict.fromkeys(pairs))
    keys = [pair_key(p, h) for p, h in unique]
    # Filed under the weights' revision and the precision and device type they run in (a factory
    # from `classifier_factory` knows them), so a float32 run never reads a bfloat16 run's numbers.
    runtime = getattr(make_classifier, "runtime", None)
    revision = getattr(make_classifier, "cache_revision", None) or (
        f"{ref.revision}@{runtime.tag}" if runtime is not None else ref.revision
    )
    found: dict[str, Prediction] = {}
    if cache is not None:
        distributed.barrier()  # under a launcher: every rank reads the cache as rank 0 last wrote it
        cached = cache.get_many(NAMESPACE, ref.name, revision, keys).items()
        # an unparseable answer cached before its text was kept is asked again, so the text is there
        found = {k: Prediction(**v) for k, v in cached if v.get("label") is not None or "answer" in v}
        distributed.barrier()  # ... and before rank 0 writes again
    missing = [pair for pair, key in zip(unique, keys) if key not in found]
    if missing:
        classifier = make_classifier()

        def store(batch_pairs, preds):
            items = {pair_key(p, h): pred.stored() for (p, h), pred in zip(batch_pairs, preds)}
            if cache is not None:
                cache.put_many(NAMESPACE, ref.name, revision, items)
            found.update({k: Prediction(**v) for k, v in items.items()})

        if progress_factory is None:
            classifier.predict_stream(missing, store)
        else:
            with progress_factory(f"NLI {ref.name}", len(missing)) as advance:
                classifier.predict_stream(missing, store, advance)
    return found, len(missing)


def predict_labels(
    cache, ref: ModelRef, pairs: list[tuple[str, str]], factory: "ClassifierFactory", progress_factory=None
) -> list[str]:
    """The predicted label of every (premise, hypothesis), in order: `workbench evaluate`'s and a
    release's evaluate.py's way of running a classifier over a data set."""
    return [found.label for found in predict_all(cache, ref, pairs, factory, progress_factory)]


def predict_all(
    cache, ref: ModelRef, pairs: list[tuple[str, str]], factory: "ClassifierFactory", progress_factory=None
) -> list[Prediction]:
    """The prediction of every (premise, hypothesis), in order (with an unparseable answer's text)."""
    predictions, _ = predict_with_cache(cache, ref, pairs, factory, progress_factory)
    return [predictions[pair_key(p, h)] for p, h in pairs]


def resolve_classifiers(
    names: list[str], *, root, overrides: dict[str, dict[str, str]] | None = None, where=None
) -> list[tuple[ModelRef, list[str]]]:
    """(ref, canonical labels) per model, checked before any weights load. Shared by the filter
    stage and the evaluator. `where(i)` names the config field model i came from, for errors."""
    from ...models.loading import resolve

    out = []
    for i, name in enumerate(names):
        try:
            served = _served_judge(name)
            ref = served.served_ref(name) if served is not None else resolve(name, root=root)
            labels = check_labels(ref, (overrides or {}).get(name))
        except ModelError as exc:
            if where is None:
                raise
            raise ModelError(f"{where(i)}: {exc}") from None
        out.append((ref, labels))
    return out


def classifier_factory(ref: ModelRef, labels: list[str], batch_size: int, device="auto", asking=None):
    """A loader called only when some pair is missing from the cache. `device` is a device name
    (the pipeline's settings) or the evaluate command's `LoadSpec`. A causal LM becomes a judge
    asked in a prompt (`asking`: llm_judge.Asking, lm-eval's mnli way by default; the spec's
    --apply-chat-template turns its chat template on), and so does a model behind a server (served_judge)."""
    from ...models.runtime import LoadSpec

    served = _served_judge(ref.name)
    if served is not None:
        from .llm_judge import Asking

        return served.ServedJudgeFactory(ref, (asking or Asking()).with_chat(device))
    if is_causal_lm(ref):
        from .llm_judge import Asking, JudgeFactory

        spec = device if isinstance(device, LoadSpec) else LoadSpec(device=device, batch_size=batch_size)
        return JudgeFactory(ref, spec, (asking or Asking()).with_chat(spec))
    if getattr(device, "chat_template", False):
        raise ModelError(
            f"model {ref.name!r} is an NLI classifier: --apply-chat-template asks causal LMs (LLM judges) only; "
            "leave it out"
        )
    return ClassifierFactory(ref, labels, batch_size, device)


class ClassifierFactory:
    """Loads the classifier when called; `runtime` (how the model will run, read from its config
    alone) keys the cached predictions."""

    def __init__(self, ref: ModelRef, labels: list[str], batch_size: int, device="auto"):
        from ...models.runtime import LoadSpec

        self.ref, self.labels = ref, labels
        self.spec = device if isinstance(device, LoadSpec) else LoadSpec(device=device, batch_size=batch_size)
        self._runtime = None

    @property
    def runtime(self):
        if self._runtime is None:
            from ...models.loading import runtime_for

            self._runtime = runtime_for(self.ref, "classifier", self.spec)
        return self._runtime

    def __call__(self) -> NLIClassifier:
        from ...models.loading import load

        tok, model, dev = load(self.ref, "classifier", self.spec, self.runtime)
        return NLIClassifier(self.ref, tok, model, dev, self.labels, self.runtime.batch_size)

"""Stage `filter`: adversarial filtering of candidates with NLI models.

Every kept candidate's (premise, hypothesis) pair goes through every filter model. All
samples are neutral by construction, so a model is "fooled" when it predicts anything but
neutral; a candidate is kept when at least `filter.min_fooled` models are fooled (BBNLI-next
used 1 of 3). Every model's label and probabilities are stored for every pair, kept or not.
Held-out evaluation models (`evaluate.models`) are never used here.
"""
from __future__ import annotations

import json
import time

from ..core.config import Config
from ..core.errors import ModelError, StageError
from ..core.ids import json_hash
from ..core.progress import progress_bar
from ..core.workspace import Workspace

NAME = "filter"
CACHE_FILE = "cache/models.sqlite"


def inputs(config: Config, ws: Workspace | None = None) -> dict[str, str]:
    from ..models.loading import fingerprint

    ws = ws or Workspace(config.path("workspace"))
    m = ws.manifest("generate")
    if not m:
        return {}
    return {"generate": m["data_sha256"], **{f"model:{n}": fingerprint(n, None, config.root) for n in config.filter.models}}


def config_hash(config: Config) -> str:
    return config.section_hash("filter")


def resolve_filter_models(config: Config, names: list[str], field: str | None = "filter.models") -> list[tuple]:
    """(ref, labels) for each model; label problems are found before any weights load. An
    error names the config `field` the model was listed under (None: it came from elsewhere)."""
    from ..models.loading import resolve
    from ..models.nli import check_labels

    out = []
    for i, name in enumerate(names):
        try:
            ref = resolve(name, root=config.root)
            labels = check_labels(ref, config.filter.label_overrides.get(name))
        except ModelError as exc:
            if field is None:
                raise
            raise ModelError(f"{config.at(f'{field}[{i}]')}: {exc}") from None
        out.append((ref, labels))
    return out


def classifier_factory(ref, labels, batch_size: int, device: str):
    def make():
        from ..models.loading import load
        from ..models.nli import NLIClassifier

        tok, model, dev = load(ref, "nli", device)
        return NLIClassifier(ref, tok, model, dev, labels, batch_size)
    return make


def template_fingerprints(candidates: list[dict]) -> dict[str, str]:
    per: dict[str, list] = {}
    for r in candidates:
        per.setdefault(r["template_id"], []).append((r["candidate_id"], r["premise"], r["hypothesis"]))
    return {t: json_hash(sorted(v)) for t, v in per.items()}


def run(config: Config, ws: Workspace, *, force: bool = False) -> dict:
    """Templates whose kept candidates, the models and the rule are unchanged keep their
    previous rows; the others are predicted (from the cache where possible) and decided."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..models.cache import Cache
    from ..models.nli import pair_key, predict_with_cache

    started = time.perf_counter()
    current, chash = inputs(config, ws), config_hash(config)
    skipped = ws.skip_if_fresh(NAME, current, chash, force, upstream="generate")
    if skipped:
        return skipped
    fc = config.filter
    models = resolve_filter_models(config, fc.models)
    model_info = [{"name": ref.name, "revision": ref.revision, "labels": labels} for ref, labels in models]
    generated = ws.read("generate")
    kept = generated.filter(generated["kept"])
    if kept.num_rows == 0:
        raise StageError("generation kept no candidates: nothing to filter (see `workbench stats`)")
    fingerprints = template_fingerprints(kept.select(["template_id", "candidate_id", "premise", "hypothesis"]).to_pylist())
    old_table, reused = (None, set()) if force else ws.reusable(NAME, fingerprints, config_hash=chash, models=model_info)
    if reused:
        kept = kept.filter(pc.invert(pc.is_in(kept["template_id"], value_set=pa.array(sorted(reused)))))
    todo = kept.to_pylist()  # only the templates to filter again become Python rows
    pairs = [(r["premise"], r["hypothesis"]) for r in todo]
    per_model, computed = {}, {}
    if todo:
        cache = Cache(ws.root / CACHE_FILE)
        try:
            for ref, labels in models:
                preds, n_new = predict_with_cache(cache, ref, pairs, classifier_factory(ref, labels, fc.batch_size, fc.device),
                                                  progress_bar)
                per_model[ref.name] = preds
                computed[ref.name] = n_new
        finally:
            cache.close()

    rows = []
    for r in todo:
        key = pair_key(r["premise"], r["hypothesis"])
        predictions = {name: per_model[name][key].__dict__ for name in per_model}
        fooled = [name for name, p in predictions.items() if p["label"] != "neutral"]
        rows.append({
            **r,
            "predictions": json.dumps(predictions, sort_keys=True),
            "fooled_by": json.dumps(fooled),
            "n_fooled": len(fooled),
            "adversarial": len(fooled) >= fc.min_fooled,
        })
    table = pa.Table.from_pylist(rows) if rows else None
    if old_table is not None:
        table = old_table if table is None else pa.concat_tables([old_table, table.select(old_table.column_names)],
                                                                 promote_options="permissive")
    from .generate import SORT_KEYS

    table = table.sort_by(SORT_KEYS)
    def fooled(name: str) -> int:  # rows whose fooled_by JSON list holds this model
        return pc.sum(pc.match_substring(table["fooled_by"], json.dumps(name))).as_py() or 0

    histogram = {r["values"]: r["counts"] for r in pc.value_counts(table["n_fooled"]).to_pylist()}
    counts = {
        "candidates": table.num_rows,
        "unique_pairs": pc.count_distinct(pc.binary_join_element_wise(table["premise"], table["hypothesis"], "\x1f")).as_py(),
        "kept": pc.sum(table["adversarial"]).as_py() or 0,
        "fooled_per_model": {ref.name: fooled(ref.name) for ref, _ in models},
        "computed_pairs": {ref.name: computed.get(ref.name, 0) for ref, _ in models},
        "n_fooled_histogram": dict(sorted(histogram.items())),
        "templates_reused": len(reused),
        "templates_filtered": len(fingerprints) - len(reused),
    }
    ws.write(NAME, table, inputs=current, config_hash=chash, counts=counts, started=started,
             extra={"models": model_info, "min_fooled": fc.min_fooled, "template_fingerprints": fingerprints})
    counts["seconds"] = round(time.perf_counter() - started, 3)
    counts["skipped"] = False
    return counts

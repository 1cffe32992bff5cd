"""Stage `generate`: masked samples -> candidates (kept and rejected, each with its reason).

The masked LM sees each *unique* masked hypothesis once; its top-k fills become candidates
for every masked sample that carries that hypothesis. Fills and fluency scores are cached
by (model, revision, text, k), so a rerun computes only new masked hypotheses.
"""
from __future__ import annotations

import json
import math
import time

from ..core.config import Config
from ..core.errors import ModelError, StageError
from ..core.ids import hypothesis_id, json_hash, normalise_text, short_hash
from ..core.progress import progress_bar
from ..core.workspace import Workspace
from ..templates import fills as F

NAME = "generate"
CACHE_FILE = "cache/models.sqlite"
CHUNK = 256  # texts per committed cache write: an interrupted run keeps finished chunks


def inputs(config: Config, ws: Workspace | None = None) -> dict[str, str]:
    from ..models.loading import fingerprint

    ws = ws or Workspace(config.path("workspace"))
    m = ws.manifest("expand")
    if not m:
        return {}
    return {"expand": m["data_sha256"], f"model:{config.generate.model}": fingerprint(config.generate.model, config.generate.revision, config.root)}


def config_hash(config: Config) -> str:
    return config.section_hash("generate")


def _cached_or_computed(cache, namespace, ref, keys, compute, label, unit_total=None):
    """Values for keys from the cache; the missing ones computed in committed chunks."""
    found = cache.get_many(namespace, ref.name, ref.revision, keys)
    missing = [k for k in keys if k not in found]
    if missing:
        with progress_bar(label, unit_total(missing) if unit_total else len(missing)) as advance:
            for i in range(0, len(missing), CHUNK):
                chunk = missing[i:i + CHUNK]
                values = compute(chunk, advance)
                cache.put_many(namespace, ref.name, ref.revision, values)
                found.update(values)
    return found, len(missing)


FINGERPRINT_COLUMNS = ["template_id", "sample_id", "hypothesis", "hypothesis_template", "mask_pos", "groups", "bindings"]


def template_fingerprints(samples: list[dict]) -> dict[str, str]:
    """Per template, a hash of everything of its masked samples that generation reads."""
    per: dict[str, list] = {}
    for s in samples:
        per.setdefault(s["template_id"], []).append(
            (s["sample_id"], s["hypothesis"], s["hypothesis_template"], s["mask_pos"], s["groups"], s["bindings"]))
    return {t: json_hash(sorted(v)) for t, v in per.items()}


SORT_KEYS = [("template_id", "ascending"), ("premise_index", "ascending"), ("hypothesis_index", "ascending"),
             ("bindings", "ascending"), ("stance", "ascending"), ("fill_rank", "ascending")]


def run(config: Config, ws: Workspace, *, force: bool = False, model: str | None = None,
        top_k: int | None = None) -> dict:
    """Templates whose masked samples, the model and the settings are unchanged keep their
    previous candidates; only new or changed templates are generated again."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..models.cache import Cache
    from ..models.loading import resolve

    started = time.perf_counter()
    gen = config.generate.model_copy(update={k: v for k, v in {"model": model, "top_k": top_k}.items() if v is not None})
    if gen.top_k <= 0:
        raise StageError(f"top_k must be at least 1, not {gen.top_k}")
    cfg = config.model_copy(update={"generate": gen})
    current, chash = inputs(cfg, ws), config_hash(cfg)
    skipped = ws.skip_if_fresh(NAME, current, chash, force, upstream="expand")
    if skipped:
        return skipped

    expanded = ws.read("expand")
    masked = expanded.filter(pc.greater(expanded["n_masks"], 0))
    if masked.num_rows == 0:
        raise StageError("the templates have no masked hypotheses: add <mask> to hypotheses "
                         "(see `workbench templates suggest-masks`)")
    try:
        ref = resolve(gen.model, gen.revision, root=config.root)
    except ModelError as exc:
        raise ModelError(f"{config.at('generate.model')}: {exc}" if model is None else str(exc)) from None
    model_info = {"name": ref.name, "revision": ref.revision}
    fingerprints = template_fingerprints(masked.select(FINGERPRINT_COLUMNS).to_pylist())
    old_table, reused = (None, set()) if force else ws.reusable(NAME, fingerprints, config_hash=chash, model=model_info)
    todo = masked
    if reused:
        todo = masked.filter(pc.invert(pc.is_in(masked["template_id"], value_set=pa.array(sorted(reused)))))
    samples_new = todo.to_pylist()  # only the templates to generate again become Python rows
    cache = Cache(ws.root / CACHE_FILE)
    try:
        rows, computed_fills, computed_pll, loaded = _candidates(samples_new, gen, ref, cache)
    finally:
        cache.close()

    table = pa.Table.from_pylist(rows) if rows else None
    if old_table is not None:
        table = old_table if table is None else pa.concat_tables([old_table, table.select(old_table.column_names)],
                                                                 promote_options="permissive")
    table = table.sort_by(SORT_KEYS)
    reasons = {r["values"]: r["counts"] for r in pc.value_counts(table["reject_reason"]).to_pylist() if r["values"]}
    counts = {
        "masked_samples": masked.num_rows,
        "masked_hypotheses": pc.count_distinct(masked["hypothesis"]).as_py(),
        "candidates": table.num_rows,
        "kept": pc.sum(table["kept"]).as_py() or 0,
        "rejected_by_reason": dict(sorted(reasons.items())),
        "computed_fills": computed_fills,
        "computed_pll": computed_pll,
        "templates_reused": len(reused),
        "templates_generated": len(fingerprints) - len(reused),
        "model_loaded": loaded,
    }
    ws.write(NAME, table, inputs=current, config_hash=chash, counts=counts, started=started,
             extra={"model": model_info, "top_k": gen.top_k, "template_fingerprints": fingerprints})
    counts["seconds"] = round(time.perf_counter() - started, 3)
    counts["skipped"] = False
    return counts


def _candidates(samples: list[dict], gen, ref, cache) -> tuple[list[dict], int, int, bool]:
    """Candidate rows (kept and rejected) for these masked samples."""
    if not samples:
        return [], 0, 0, False
    state: dict = {}

    def model():
        if "lm" not in state:
            from ..models.loading import load
            from ..models.mlm import MaskedLM

            tok, mdl, device = load(ref, "mlm", gen.device)
            state["lm"] = MaskedLM(ref, tok, mdl, device, gen.batch_size)
        return state["lm"]

    texts = sorted({r["hypothesis"] for r in samples})
    k = gen.top_k

    def compute_fills(chunk_keys, advance):
        chunk_texts = [key.split("\x1f", 1)[1] for key in chunk_keys]
        result = model().fill(chunk_texts, k, progress=advance)
        return {key: [f.__dict__ for f in result[t]] for key, t in zip(chunk_keys, chunk_texts)}

    fill_keys = [f"{k}\x1f{t}" for t in texts]
    fills, computed_fills = _cached_or_computed(cache, "fill", ref, fill_keys, compute_fills, "fill masks")

    enabled = set(gen.filters)
    rows: list[dict] = []
    seen_hypotheses: set[tuple] = set()
    group_cache = _group_words(cache, {(s["group"], s["counterfactual_group"]) for s in samples})
    for s in samples:
        gkey = (s["group"], s["counterfactual_group"])
        base = {key: s[key] for key in s if key not in ("hypothesis", "n_masks", "mask_pos", "question")}
        base["masked_hypothesis"] = s["hypothesis"]
        for f in fills[f"{k}\x1f{s['hypothesis']}"]:
            filled = F.apply_fills(s["hypothesis"], f["words"])
            reason = None
            for i, word in enumerate(f["words"]):
                r = F.word_filter_reason(word, f["tokens"][i], f["word_start"][i])
                if r is None:
                    r = F.context_filter_reason(word, filled, i, group_cache[gkey])
                if r in enabled:
                    reason = r
                    break
            rows.append({
                **base,
                "candidate_id": short_hash(s["sample_id"], *f["words"]),
                "hypothesis": filled.text,
                "hypothesis_id": hypothesis_id(filled.text),
                "fill": " | ".join(f["words"]),
                "fill_tokens": json.dumps(f["tokens"], ensure_ascii=False),
                "fill_spans": json.dumps(filled.spans),
                "mask_pos": s["mask_pos"],
                "article_fixed": filled.article_fixed,
                "fill_rank": f["rank"],
                "fill_logprob": f["logprob"],
                "fill_score": math.exp(f["logprob"]),
                "mlm_name": ref.name,
                "mlm_revision": ref.revision,
                "reject_reason": reason,
                "pos_found": None,
            })

    if "pos" in enabled:
        _pos_filter(rows, cache)
    if "duplicate" in enabled:
        for r in rows:
            if r["reject_reason"] is None:
                key = (r["template_id"], r["premise"], r["stance"], normalise_text(r["hypothesis"]).lower())
                if key in seen_hypotheses:
                    r["reject_reason"] = "duplicate"
                seen_hypotheses.add(key)
    for r in rows:
        r["kept"] = r["reject_reason"] is None

    kept_texts = sorted({r["hypothesis"] for r in rows if r["kept"]})

    def compute_pll(chunk, advance):
        return {t: list(v) for t, v in model().pseudo_log_likelihood(chunk, progress=advance).items()}

    plls, computed_pll = _cached_or_computed(cache, "pll", ref, kept_texts, compute_pll, "fluency (PLL)",
                                             unit_total=lambda ts: sum(max(1, len(t.split())) for t in ts))
    for r in rows:
        p = plls.get(r["hypothesis"]) if r["kept"] else None
        r["pll"] = p[0] if p else None
        r["pll_per_token"] = (p[0] / p[1]) if p and p[1] else None
    return rows, computed_fills, computed_pll, "lm" in state


def _group_words(cache, pairs: set[tuple]) -> dict[tuple, set[str]]:
    """Group words (with inflected forms) per group pair; cached, as importing inflect is slow."""
    keys = {json.dumps(list(p)): p for p in pairs}
    found = cache.get_many("group_words", "inflect", "1", list(keys))
    missing = {k: sorted(F.group_words(*p)) for k, p in keys.items() if k not in found}
    if missing:
        cache.put_many("group_words", "inflect", "1", missing)
        found.update(missing)
    return {keys[k]: set(v) for k, v in found.items()}


def _pos_filter(rows: list[dict], cache) -> None:
    """Reject fills whose part of speech (spaCy, on the filled sentence) misses the slot's.

    The POS found at each fill is cached by (pipeline, version, text, span)."""
    from ..templates.masks import load_spacy

    from ..templates.masks import default_spacy_pipeline, installed_pipelines

    todo = [r for r in rows if r["reject_reason"] is None and any(json.loads(r["mask_pos"]))]
    if not todo:
        return
    pipeline = default_spacy_pipeline()
    version = installed_pipelines().get(pipeline, "")

    def keys_of(r):
        return [f"{a}:{b}\x1f{r['hypothesis']}" for (a, b) in json.loads(r["fill_spans"])]

    wanted = sorted({k for r in todo for k in keys_of(r)})
    found = cache.get_many("pos", pipeline, version, wanted)
    spans_by_text: dict[str, list[str]] = {}
    for k in wanted:
        if k not in found:
            spans_by_text.setdefault(k.split("\x1f", 1)[1], []).append(k)
    missing_texts = sorted(spans_by_text)
    nlp = load_spacy(pipeline) if missing_texts else None
    for i in range(0, len(missing_texts), 2048):
        chunk = missing_texts[i:i + 2048]
        new = {}
        for text, doc in zip(chunk, nlp.pipe(chunk, batch_size=256)):
            for k in spans_by_text[text]:
                a, b = map(int, k.split("\x1f", 1)[0].split(":"))
                span = doc.char_span(a, b, alignment_mode="expand")
                new[k] = span.root.pos_ if span is not None and len(span) else None
        cache.put_many("pos", pipeline, version, new)
        found.update(new)
    for r in todo:
        for key, allowed in zip(keys_of(r), json.loads(r["mask_pos"])):
            if allowed and found[key] not in allowed:
                r["reject_reason"] = "pos"
                r["pos_found"] = found[key]
                break

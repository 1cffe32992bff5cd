"""`workbench evaluate FILE --kind sofa`: SOFA's variance, DDS and lowest identity per model.

The file is checked completely before any model loads (a typo on line 1,200,000 should not
cost an hour of scoring), then each model streams the probes once; see `scoring` and
`metrics` for why memory stays flat.
"""
from __future__ import annotations

import gc
from pathlib import Path

from ...core.errors import InputError, display_path
from ...core.progress import progress_bar
from ..evaluation import EvaluateRequest
from ..report import short, write_csv, write_json
from . import data, report
from .metrics import summarise
from .scoring import RULE_NAMES, RULES, ItemsWriter, score_file

RULE_TEXT = {
    "perplexity": "causal LM perplexity as Hugging Face evaluate computes it: BOS prepended, the text tokenised "
                  "without special tokens, exp of the mean negative log-likelihood of every text token",
    "pseudo-perplexity": "masked LM pseudo-perplexity: exp of minus the mean log-probability of each token with "
                         "that token masked (special tokens not scored)",
}


def detect(path: Path) -> bool:
    """A CSV with SOFA's columns (id, category, identity, stereotype), or a SOFA release folder."""
    return data.detect(Path(path))


def _check_request(request: EvaluateRequest) -> None:
    if len(request.sources) != 1:
        raise InputError(f"sofa evaluates one probe file or release at a time; got {len(request.sources)}: "
                         + ", ".join(request.sources))
    if request.predictions is not None:
        raise InputError("sofa scores models itself; --predictions is not supported (pass --model; "
                         "--items writes the per-probe perplexities)")
    if request.predictions_out is not None:
        raise InputError("sofa has no prediction exchange format; use --items OUT.parquet for per-probe scores")
    if not request.models:
        raise InputError("no model: pass --model (a causal or masked LM, Hub name or local folder)")
    if request.score_rule is not None and request.score_rule.lower() not in RULE_NAMES:
        raise InputError(f"unknown --score-rule {request.score_rule!r} for sofa; known: perplexity (causal LMs), "
                         "pseudo-perplexity (masked LMs); the default follows the model")
    if request.items_out is not None and Path(request.items_out).suffix.lower() != ".parquet":
        raise InputError(f"--items for sofa writes Parquet: name the file *.parquet, not {display_path(request.items_out)}")


def evaluate(request: EvaluateRequest, console) -> dict:
    """Score every model on the probe file and write the outputs the request names."""
    from ...models.lm_loading import load_scorer

    _check_request(request)
    source = request.sources[0]
    path = data.resolve_source(source)
    cat = data.check(path)
    console.print(f"{cat.shown}: {cat.n_probes:,} probes, {len(cat.stereotype_ids):,} stereotypes, "
                  f"{len(cat.identities):,} identities, {len(cat.categories)} categories")
    items = ItemsWriter(request.items_out) if request.items_out else None
    results: dict[str, dict] = {}
    try:
        for name in dict.fromkeys(request.models):
            scorer = load_scorer(name, root=request.root, device=request.device, batch_size=request.batch_size,
                                 cache_path=request.cache_path)
            wanted = RULE_NAMES.get((request.score_rule or "").lower())
            if wanted is not None and wanted != scorer.kind:
                raise InputError(f"--score-rule {request.score_rule} needs a {wanted} LM, but {name!r} is a {scorer.kind} LM "
                                 f"(its rule is {RULES[scorer.kind]})")
            with progress_bar(f"{short(name)}: SOFA probes", cat.n_probes + len(cat.identities)) as advance:
                acc = score_file(cat, scorer, name, advance, items)
            results[name] = {
                "score_rule": RULES[scorer.kind],
                "model_revision": scorer.ref.revision,
                **summarise(acc, cat.stereotype_ids, cat.stereotype_category, cat.categories, cat.identities,
                            cat.units, cat.stereotype_text),
            }
            if scorer.cache is not None:
                scorer.cache.close()
            del scorer
            gc.collect()
        if items is not None:
            items.close()
    except BaseException:
        if items is not None:
            items.abort()
        raise
    rules = {m["score_rule"] for m in results.values()}
    doc = {
        "kind": "sofa",
        "dataset": {"source": source, "file": str(path), "n_probes": cat.n_probes,
                    "n_stereotypes": len(cat.stereotype_ids), "n_identities": len(cat.identities),
                    "n_categories": len(cat.categories)},
        "score_rule": rules.pop() if len(rules) == 1 else {m: v["score_rule"] for m, v in results.items()},
        "score_rules": {rule: RULE_TEXT[rule] for rule in {m["score_rule"] for m in results.values()}},
        "measures": "per probe log10(PPL(probe) / PPL(identity)); per stereotype the sample variance (ddof=1) across "
                    "its identities and DDS = max - min; SOFA per category = mean of its stereotypes' variances "
                    "(single-identity stereotypes counted apart); global = unweighted mean over categories",
        "models": results,
    }
    for t in report.tables(doc):
        console.print(t)
    if items is not None:
        console.print(f"wrote {display_path(request.items_out)}")
    if request.json_out:
        write_json(doc, Path(request.json_out))
        console.print(f"wrote {display_path(request.json_out)}")
    if request.csv_out:
        write_csv(report.csv_rows(doc), Path(request.csv_out))
        console.print(f"wrote {display_path(request.csv_out)}")
    if request.plots:
        for p in report.write_plots(doc, Path(request.plots)):
            console.print(f"wrote {display_path(p)}")
    return doc

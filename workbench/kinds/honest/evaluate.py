"""`workbench evaluate --kind honest`: HONEST@k of masked or causal LMs on identity templates.

Each template's `[M]` slot gets the model's top-K fills (see fills.py for the rules); a fill
is hurtful when, accents stripped, it equals a lemma of the user's lexicon (case-sensitive),
and it counts for that lemma's first listed category. measure.py turns the hits into the
cumulative HONEST@k curve, per group and per lexicon category.
"""
from __future__ import annotations

import json
from pathlib import Path

from ...core.errors import InputError, display_path
from ...core.workspace import atomic_write_text
from ..report import short, write_csv, write_json
from . import data
from .measure import honest_scores


def detect(path: Path) -> bool:
    """A TSV with template_masked and identity columns, or a release folder holding one."""
    path = Path(path)
    if path.is_dir():
        manifest = path / "manifest.json"
        if not (manifest.is_file() and (path / data.RELEASE_TABLE).is_file()):
            return False
        try:
            return json.loads(manifest.read_text(encoding="utf-8")).get("kind") == "honest"
        except (OSError, ValueError):
            return False
    header = data.header_of(path) if path.is_file() else []
    return "template_masked" in header and "identity" in header


def _check(request) -> None:
    """Everything that can be wrong before a model is loaded."""
    if request.top_k < 1:
        raise InputError(f"--top-k must be at least 1 (got {request.top_k})")
    if request.lexicon is None:
        raise InputError("honest needs the hurtful-word lexicon: pass --lexicon FILE.tsv (HurtLex's layout: "
                         "lemma, category[, level]); workbench ships none")
    if request.predictions is not None or request.predictions_out is not None:
        raise InputError("honest scores models directly: --predictions and --predictions-out do not apply; "
                         "use --model (and --items to keep the fills)")
    if len(request.sources) != 1:
        raise InputError(f"honest evaluates one template file or release at a time ({len(request.sources)} given)")
    if not request.models:
        raise InputError("no model: pass --model (a Hub name or a local folder)")


def _fills_for(scorer, texts: list[str], K: int, rule: str) -> list[list[str]]:
    from ...core.progress import progress_bar
    from .fills import causal_fills, masked_fills

    with progress_bar(f"honest {short(scorer_label(scorer))}", len(texts)) as advance:
        if scorer.kind == "masked":
            return masked_fills(scorer, texts, K, advance)
        return causal_fills(scorer, texts, K, rule, advance)


def scorer_label(scorer) -> str:
    from .fills import scorer_name

    return scorer_name(scorer)


def score_model(scorer, templates: data.TemplateSet, lexicon: data.Lexicon, K: int,
                requested_rule: str | None = None) -> tuple[dict, list[list[str]], list[list[str | None]], str]:
    """(the model's JSON entry, fills per template row, hits per template row, the rule used)."""
    from .fills import score_rule

    rule = score_rule(scorer.kind, requested_rule)
    texts = list(dict.fromkeys(t.text for t in templates.templates))   # duplicates are scored once, counted each
    by_text = dict(zip(texts, _fills_for(scorer, texts, K, rule)))
    fills = [by_text[t.text] for t in templates.templates]
    hits = [[lexicon.category_of(w) for w in row] for row in fills]
    entry = honest_scores(hits, [t.group for t in templates.templates], K, lexicon.categories)
    return entry, fills, hits, rule


def evaluate(request, console) -> dict:
    from ...models.lm_loading import load_scorer

    _check(request)
    K = request.top_k
    templates = data.read_templates(request.sources[0], request.group_by)
    lexicon = data.read_lexicon(Path(request.lexicon))
    for note in templates.notes:
        console.print(f"{request.sources[0]}: {note}", markup=False, highlight=False)
    models: dict[str, dict] = {}
    items: list[dict] = []
    for name in request.models:
        scorer = load_scorer(name, root=request.root, device=request.device, batch_size=request.batch_size,
                             cache_path=request.cache_path)
        entry, fills, hits, rule = score_model(scorer, templates, lexicon, K, request.score_rule)
        models[name] = {"model_kind": scorer.kind, "revision": _revision(scorer), "score_rule": rule, **entry}
        if request.items_out:
            items.extend({"model": name, "line": t.line, "template": t.text, "identity": t.identity,
                          "group": t.group, "fills": row, "hurtful": hit}
                         for t, row, hit in zip(templates.templates, fills, hits))
    doc = {
        "kind": "honest",
        "source": request.sources[0],
        "repo": templates.repo, "revision": templates.revision,
        "measures_unit": "percent",
        "top_k": K,
        "n_templates": len(templates.templates),
        "duplicated_templates": templates.duplicates,
        "group_by": templates.group_by,
        "lexicon": {"file": display_path(lexicon.path), "lemmas": len(lexicon.category),
                    "categories": lexicon.categories, "rows_used": lexicon.rows_used,
                    "rows_skipped_by_level": lexicon.rows_skipped,
                    "level_filter": "conservative" if lexicon.level_filtered else None},
        "matching": "a fill is hurtful when, accents stripped, it equals a lexicon lemma (case-sensitive); "
                    "it counts for the lemma's first listed category",
        "notes": templates.notes,
        "models": models,
    }
    _report(doc, items, request, console)
    return doc


def _revision(scorer) -> str | None:
    for holder in (scorer, getattr(scorer, "ref", None)):
        value = getattr(holder, "revision", None)
        if isinstance(value, str):
            return value
    return None


def _report(doc: dict, items: list[dict], request, console) -> None:
    from .report import csv_rows, tables, write_plot

    for table in tables(doc):
        console.print(table)
    if request.json_out:
        write_json(doc, request.json_out)
        console.print(f"wrote {display_path(request.json_out)}")
    if request.csv_out:
        write_csv(csv_rows(doc), request.csv_out)
        console.print(f"wrote {display_path(request.csv_out)}")
    if request.items_out:
        atomic_write_text(Path(request.items_out), "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items))
        console.print(f"wrote {display_path(request.items_out)}")
    if request.plots:
        console.print(f"wrote {display_path(write_plot(doc, Path(request.plots)))}")

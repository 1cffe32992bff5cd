"""`workbench evaluate --kind honest`: HONEST@k of masked or causal LMs on identity templates.

Each template's `[M]` slot gets the model's top-K fills (see fills.py for the rules); a fill
is hurtful when, accents stripped, it equals a lemma of the user's lexicon (case-sensitive),
and it counts for that lemma's first listed category. With `--score-rule generation` a causal
LM's K generated completions stand for the fills, each hurtful when one of its words is a
lemma (completions.py). measure.py turns the hits into the cumulative HONEST@k curve, per
group and per lexicon category. The JSON is built by scoring.py (pure, shared with a
release's standalone evaluate.py); this module adds reading the files, loading models,
progress bars and the reports.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...core.errors import InputError, display_path
from ...evaluation.versions import Compared
from ...evaluation.intervals import notes
from ...evaluation.output import short, write_csv, write_items, write_json
from . import data
from .completions import Completions, completions_for
from .scoring import distinct_texts, honest_document, model_entry, score_templates


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
    if header and header[0].startswith("{"):  # a JSON-lines export: the first record's fields
        try:
            with open(path, encoding="utf-8-sig") as fh:
                header = list(json.loads(fh.readline()))
        except (OSError, ValueError, TypeError, UnicodeDecodeError):
            return False
    return "template_masked" in header and "identity" in header


def _ks(request) -> list[int]:
    from .scoring import parse_ks

    try:
        return parse_ks(request.options["top_k"])
    except ValueError as exc:
        raise InputError(f"--top-k: {exc}") from None


def _check(request) -> Completions | None:
    """Everything that can be wrong before a model is loaded; the generation rule's settings."""
    ks = _ks(request)
    if min(ks) < 1:
        raise InputError(f"--top-k must be at least 1 (got {request.options['top_k']})")
    completions = completions_for(request.score_rule, max(ks), request.options)
    if request.options["lexicon"] is None:
        raise InputError(
            "honest needs the hurtful-word lexicon: pass --lexicon FILE.tsv (HurtLex's layout: "
            "lemma, category[, level]); workbench ships none"
        )
    if request.predictions is not None or request.predictions_out is not None:
        raise InputError(
            "honest scores models directly: --predictions and --predictions-out do not apply; "
            "use --model (and --items to keep the fills)"
        )
    if len(request.sources) != 1:
        raise InputError(f"honest evaluates one template file or release at a time ({len(request.sources)} given)")
    if not request.models:
        raise InputError("no model: pass --model (a Hub name or a local folder)")
    return completions


def scorer_label(scorer) -> str:
    from .fills import scorer_name

    return scorer_name(scorer)


def score_model(
    scorer,
    templates: data.TemplateSet,
    lexicon: data.Lexicon,
    K: int,
    requested_rule: str | None = None,
    completions: Completions | None = None,
) -> tuple[dict, list[list[str]], list[list[str | None]], str]:
    """(the model's HONEST scores, fills (or completions) per template row, hits per template
    row, the rule used), with a progress bar."""
    from ...core.progress import progress_bar
    from .fills import score_rule

    rule = score_rule(scorer.kind, requested_rule)
    steps = len(distinct_texts(templates.templates)) * (completions.K if completions is not None else 1)
    with progress_bar(f"honest {short(scorer_label(scorer))}", steps) as advance:
        scores, fills, hits = score_templates(scorer, templates.templates, lexicon, K, rule, advance, completions)
    return scores, fills, hits, rule


def evaluate(request, console) -> dict:
    from ...models.lm_loading import load_scorer

    completions = _check(request)
    ks = _ks(request)
    K = max(ks)  # the fills are ranked: HONEST@k for a smaller k reads the first k of the top K
    templates = data.read_templates(
        request.sources[0], request.options["group_by"], request.options.get("repeated_templates") or "rows"
    )
    lexicon = data.read_lexicon(
        Path(request.options["lexicon"]), request.options.get("lemma_normalisation") or "workbench"
    )
    for note in templates.notes:
        console.print(f"{request.sources[0]}: {note}", markup=False, highlight=False)
    for note in lexicon.notes:
        console.print(f"{request.options['lexicon']}: {note}", markup=False, highlight=False)
    models: dict[str, dict] = {}
    hits_by_model: dict[str, list] = {}
    items: list[dict] = []
    for name in request.models:
        # completions by generation may come from a served model (http://HOST:PORT/v1#MODEL, vllm:MODEL)
        scorer = load_scorer(
            name,
            root=request.root,
            spec=request.spec,
            runtimes=request.runtimes,
            cache_path=request.cache_path,
            served=completions is not None,
        )
        own = completions.for_model(scorer) if completions is not None else None
        scores, fills, hits, rule = score_model(scorer, templates, lexicon, K, request.score_rule, own)
        models[name] = model_entry(scorer, rule, scores, own)
        hits_by_model[name] = hits
        if request.items_out:
            items.extend(
                {
                    "model": name,
                    "line": t.line,
                    "template": t.text,
                    "identity": t.identity,
                    "group": t.group,
                    "fills": row,
                    "hurtful": hit,
                }
                for t, row, hit in zip(templates.templates, fills, hits)
            )
    doc = honest_document(request.sources[0], templates, lexicon, K, models, ks, hits_by_model, request.intervals)
    _report(doc, items, request, console)
    return doc


def _report(doc: dict, items: list[dict], request, console) -> None:
    from .report import csv_rows, tables, write_plot

    for table in tables(doc):
        console.print(table)
    for line in notes(doc["uncertainty"]):
        console.print(line, markup=False, highlight=False)
    doc.update(request.annotations())  # how each model ran; --unverified warnings
    if request.json_out:
        write_json(doc, request.json_out)
        console.print(f"wrote {display_path(request.json_out)}")
    if request.csv_out:
        write_csv(csv_rows(doc), request.csv_out)
        console.print(f"wrote {display_path(request.csv_out)}")
    if request.items_out:
        write_items(items, request.items_out)
        console.print(f"wrote {display_path(request.items_out)}")
    if request.plots:
        console.print(f"wrote {display_path(write_plot(doc, Path(request.plots)))}")


# `workbench evaluate A B`: each version evaluated alone, then these measures side by side.
COMPARED = Compared(keys=("model", "scope", "name", "k"), measures=("honest_at_k", "n_templates"), unit="prompt")


def measure_rows(doc: dict) -> list[dict]:
    from .report import csv_rows

    return csv_rows(doc)

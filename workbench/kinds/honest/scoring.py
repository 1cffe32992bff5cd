"""One model's HONEST entry and the JSON document, from the templates, the lexicon and a scorer.

Pure code (standard library, the LM scoring layer's types, fills.py and measure.py): `workbench
evaluate` and a release's standalone evaluate.py, which carries this module verbatim, build
their JSON with the same functions, so the two cannot drift. Loading models, progress bars
and printing are evaluate.py's.
"""
from __future__ import annotations

from ...core.errors import display_path
from ...models.lm_scoring import Progress
from .fills import causal_fills, masked_fills
from .measure import honest_scores
from .parsing import Lexicon, Template, TemplateSet

MATCHING = ("a fill is hurtful when, accents stripped, it equals a lexicon lemma (case-sensitive); "
            "it counts for the lemma's first listed category")


def distinct_texts(templates: list[Template]) -> list[str]:
    """The texts to fill, in first-seen order: a repeated template is scored once, counted per row."""
    return list(dict.fromkeys(t.text for t in templates))


def score_templates(scorer, templates: list[Template], lexicon: Lexicon, K: int, rule: str,
                    progress: Progress = None) -> tuple[dict, list[list[str]], list[list[str | None]]]:
    """(HONEST scores, fills per template row, hits per template row) of one model by `rule`
    (see fills.py); `progress` (optional) is advanced per distinct text."""
    texts = distinct_texts(templates)
    if scorer.kind == "masked":
        found = masked_fills(scorer, texts, K, progress)
    else:
        found = causal_fills(scorer, texts, K, rule, progress)
    by_text = dict(zip(texts, found))
    fills = [by_text[t.text] for t in templates]
    hits = [[lexicon.category_of(w) for w in row] for row in fills]
    return honest_scores(hits, [t.group for t in templates], K, lexicon.categories), fills, hits


def scorer_revision(scorer) -> str | None:
    """The revision the model was read at (a Hub commit, or sha256:... for a local folder)."""
    for holder in (scorer, getattr(scorer, "ref", None)):
        value = getattr(holder, "revision", None)
        if isinstance(value, str):
            return value
    return None


def model_entry(scorer, rule: str, scores: dict) -> dict:
    """A model's entry under the JSON's `models`: its kind, revision and rule, then the scores."""
    return {"model_kind": scorer.kind, "revision": scorer_revision(scorer), "score_rule": rule, **scores}


def honest_document(source: str, templates: TemplateSet, lexicon: Lexicon, K: int, models: dict) -> dict:
    """The JSON document; `source` is the data set as the user named it."""
    return {
        "kind": "honest",
        "source": source,
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
        "matching": MATCHING,
        "notes": templates.notes,
        "models": models,
    }

"""Final labels for the queue's items, and the breakdown (Table 3 shape), examples and
agreement that `workbench annotations stats` and the dataset card show.

Nothing here runs a stage: callers pass the items (from `pipeline.table(...)`), so a read such
as `annotations stats` never writes to the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.config import Config
from ..core.labels import LabelScheme
from .policy import DISAGREEMENT, NOT_ENOUGH_VOTES, UNLABELLED, Final, agreement, final_labels
from .store import ItemState, load_all

OTHER_COLUMNS = (DISAGREEMENT, NOT_ENOUGH_VOTES, UNLABELLED)


@dataclass
class Labels:
    """Every annotator's current labels and the final label of each item, computed once."""

    finals: dict[str, Final]
    states: dict[str, dict[str, ItemState]]
    warnings: list[str]
    scheme: LabelScheme


def final_labels_for(config: Config, item_ids: list[str], scheme: LabelScheme) -> Labels:
    ac = config.annotation
    states, warnings = load_all(config.path("annotations"), scheme)
    finals = final_labels(states, item_ids, ac.policy, ac.min_votes, ac.adjudicator, scheme=scheme)
    return Labels(finals, states, warnings, scheme)


def summarise(config: Config, items: list, labels: Labels) -> dict:
    """Per (domain, subtopic): how many items ended in each choice, disagreed, wait for more
    votes or are unlabelled."""
    scheme = labels.scheme
    columns = (*scheme.ids, *OTHER_COLUMNS)
    rows: dict[tuple, dict] = {}
    examples: dict[str, dict] = {}
    for item in items:
        final = labels.finals[item.id]
        key = (item.domain, item.subtopic)
        r = rows.setdefault(
            key, {"domain": item.domain, "subtopic": item.subtopic, "items": 0, **{c: 0 for c in columns}}
        )
        r["items"] += 1
        column = final.category if final.status == "final" else final.status
        r[column] += 1
        if final.status == "final" and final.category not in examples:
            examples[final.category] = {"label": final.category, "domain": item.domain, "text": item.hypothesis}
    ids = {item.id for item in items}
    ac = config.annotation
    breakdown = [rows[k] for k in sorted(rows)]
    if breakdown:
        total = {"domain": "", "subtopic": "total", **{c: sum(r[c] for r in breakdown) for c in ("items", *columns)}}
        breakdown.append(total)
    return {
        "policy": config.annotation.policy,
        "scheme": scheme.name,
        "columns": list(columns),
        "kept": list(scheme.kept_ids()),
        "breakdown": breakdown,
        "examples": [examples[c] for c in scheme.ids if c in examples],
        # Over the queue's items only: labels of items that left it (retired by an edit, pulled from orphan
        # tasks) are kept in the files but counted nowhere, so this and `labelstudio status` agree.
        "agreement": agreement(labels.states, scheme, ids, ac.adjudicator),
        "adjudication": adjudication(items, labels),
        "notes": notes_and_flags(items, labels.states),
        "warnings": labels.warnings,
    }


def adjudication(items: list, labels: Labels) -> dict:
    """The items the annotators dispute: each with its votes and adjudications, resolved or not."""
    rows = []
    for item in items:
        final = labels.finals[item.id]
        if final.disputed:
            rows.append(
                {
                    "item_id": item.id,
                    "text": item.hypothesis,
                    "votes": final.votes,
                    "adjudications": final.rulings,
                    "resolved": final.adjudicated,
                    "label": final.category if final.adjudicated else None,
                }
            )
    resolved = sum(r["resolved"] for r in rows)
    return {"disputed": len(rows), "resolved": resolved, "unresolved": len(rows) - resolved, "items": rows}


def notes_and_flags(items: list, states: dict[str, dict[str, ItemState]]) -> list[dict]:
    """Per queue item with any: every annotator's note and who flagged it."""
    out = []
    for item in items:
        mine = {a: s[item.id] for a, s in sorted(states.items()) if item.id in s}
        notes = {a: st.note for a, st in mine.items() if st.note}
        flagged = [a for a, st in mine.items() if st.flag]
        if notes or flagged:
            out.append({"item_id": item.id, "text": item.hypothesis, "notes": notes, "flagged_by": flagged})
    return out


def agreement_sentence(a: dict) -> str:
    """What a dataset card says of the people and their agreement (`agreement`'s result)."""
    people = f"Annotators: {len(a.get('annotators', []))}; adjudicators: {len(a.get('adjudicators', []))}"
    if a.get("adjudicators"):
        people += " (an adjudicator's label decides a disputed item and is not counted in agreement)"
    if not a.get("pairs"):
        return people + ". Agreement needs two or more annotators on an item."
    return (
        f"{people}. Agreement between the annotators on {a['items']} items of this version: "
        + ("; ".join(agreement_figures(a)) or "no item labelled by two annotators")
        + "."
    )


def agreement_figures(a: dict) -> list[str]:
    """Fleiss' kappa (overall and per label) and Krippendorff's alpha of an `agreement` result,
    one phrase each, as `annotations stats` and the cards say them."""
    figures = []
    if "fleiss_kappa" in a:
        per_label = ", ".join(f"{c} {k:.3f}" for c, k in a["fleiss_per_label"].items())
        figures.append(
            f"Fleiss' kappa {a['fleiss_kappa']:.3f} over the {a['fleiss_items']} items every annotator "
            f"labelled (per label: {per_label})"
        )
    if "krippendorff_alpha" in a:
        figures.append(f"Krippendorff's alpha {a['krippendorff_alpha']:.3f} (nominal)")
    return figures

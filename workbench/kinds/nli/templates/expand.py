"""Template expansion into (masked) samples, exactly as BBNLI expands its templates.

For every premise, every combination of the word lists (in the order the lists are
defined) and every hypothesis, a row is made once with the groups as written (stance pro)
and once with GROUP1 and GROUP2 swapped in premise and hypothesis (stance anti). Rows that
repeat an earlier row exactly are dropped, which happens when a word list does not occur in
the strings of that row. Masks stay in the hypothesis as `<mask>`; their POS constraints go
to `mask_pos`. Nested values stay Python values (dicts, lists): the workspace stores them as
typed Arrow columns. With the project's language (the `expand` stage), the rows are BBNLI's with
each sentence written as that language writes it (`expand_template`).
"""

from __future__ import annotations

import itertools
from typing import Iterator

from ....core.ids import short_hash
from ....authoring import text as tt
from ....languages import Language
from . import sentences as S
from .counterfactual import _mend as mend_articles, sentence_case
from .schema import Template

SAMPLE_COLUMNS = [
    "sample_id",
    "template_id",
    "domain",
    "subtopic",
    "subtopic_name",
    "premise_index",
    "hypothesis_index",
    "kind",
    "stance",
    "written_stance",
    "premise",
    "hypothesis",
    "hypothesis_template",
    "question",
    "true_label",
    "bias_label",
    "bindings",
    "group",
    "counterfactual_group",
    "groups",
    "n_masks",
    "mask_pos",
    "reference",
    "grammar",
]


def _stance(written: str, swapped: bool) -> str:
    if not swapped:
        return written
    return "anti" if written == "pro" else "pro"


def _groups_in(text: str, values: dict[str, str]) -> tuple[str | None, str | None]:
    """The first group named in the hypothesis, and the other group of the pair."""
    for name in tt.placeholders(text):
        if name in tt.GROUP_KEYS:
            other = "GROUP2" if name == "GROUP1" else "GROUP1"
            return values[name], values[other]
    return None, None


def expand_template(t: Template, language: Language | None = None) -> Iterator[dict]:
    """The template's rows. Without a language, exactly BBNLI's expansion (its reference rows
    are the test); with one, the sentences are written as that language writes them: the words
    that agree with a swapped group put in its number and gender, words respelt where a
    placeholder meets them, premises in sentence case; `grammar` holds the notes for annotators
    where the parse did not settle the agreement."""
    keys = list(t.words)
    combos = list(itertools.product(*(t.words[k] for k in keys)))
    seen: set[tuple] = set()
    for premise in t.premises:
        for combo in combos:
            bound = dict(zip(keys, combo))
            written = {**bound, "GROUP1": t.groups["GROUP1"], "GROUP2": t.groups["GROUP2"]}
            for swapped in (False, True):
                values = dict(bound)
                values["GROUP1"], values["GROUP2"] = (
                    (t.groups["GROUP2"], t.groups["GROUP1"]) if swapped else (t.groups["GROUP1"], t.groups["GROUP2"])
                )
                notes: list[str] = []
                premise_text = _written(premise.text, written, values, language, notes, "premise", sentence=True)
                for h in t.hypotheses:
                    stance = _stance(h.stance, swapped)
                    hypothesis_notes = list(notes)
                    hypothesis = _written(h.text, written, values, language, hypothesis_notes, "hypothesis")
                    question = (
                        _written(h.question, written, values, language, hypothesis_notes, "question")
                        if h.question
                        else None
                    )
                    key = (
                        premise.index,
                        stance,
                        premise_text,
                        h.kind,
                        hypothesis,
                        question,
                        h.true_label,
                        h.bias_label,
                    )
                    if key in seen:
                        continue
                    seen.add(key)
                    group, cf_group = _groups_in(h.text, values)
                    constraints = tt.masks(h.text)
                    used = {k: v for k, v in bound.items() if k in tt.placeholders(h.text + premise.text)}
                    yield {
                        "sample_id": short_hash(
                            t.id, str(premise.index), str(h.index), stance, premise_text, hypothesis, question or ""
                        ),
                        "template_id": t.id,
                        "domain": t.domain,
                        "subtopic": t.id,
                        "subtopic_name": t.name,
                        "premise_index": premise.index,
                        "hypothesis_index": h.index,
                        "kind": h.kind,
                        "stance": stance,
                        "written_stance": h.stance,
                        "premise": premise_text,
                        "hypothesis": hypothesis,
                        "hypothesis_template": h.text,
                        "question": question,
                        "true_label": h.true_label,
                        "bias_label": h.bias_label,
                        "bindings": dict(sorted(used.items())),
                        "group": group,
                        "counterfactual_group": cf_group,
                        "groups": {"GROUP1": values["GROUP1"], "GROUP2": values["GROUP2"]},
                        "n_masks": len(constraints),
                        "mask_pos": [list(c) if c else None for c in constraints],
                        "reference": premise.reference,
                        **({"grammar": hypothesis_notes} if language is not None else {}),
                    }


def _written(
    text: str,
    written: dict[str, str],
    values: dict[str, str],
    language: Language | None,
    notes: list[str],
    where: str,
    sentence: bool = False,
) -> str:
    """A template string rendered (masks kept as `<mask>`, their constraints to `mask_pos`);
    agreement notes go to `notes`, prefixed with `where`."""
    if language is None:
        return tt.strip_mask_constraints(tt.render(text, values))
    pieces, found = S.with_groups(text, written, values, language)
    notes += [f"{where}: {note}" for note in found if f"{where}: {note}" not in notes]
    out, _, group_spans = S.joined(pieces, language)
    names = [pieces.names[i] for i in pieces.groups()]
    spans = [(a, b, written[n], values[n]) for (a, b), n in zip(group_spans, names) if written[n] != values[n]]
    out = mend_articles(out, spans, language)  # "a {{GROUP1}}": none before a plural, one before a bare singular
    return sentence_case(out) if sentence else out


def expand_all(templates: list[Template], language: Language | None = None) -> list[dict]:
    rows: list[dict] = []
    for t in templates:
        rows.extend(expand_template(t, language))
    return rows

"""Group counterfactuals of a hypothesis: the group swapped in the hypothesis only.

The hypothesis is rendered again from its template with GROUP1 and GROUP2 exchanged and the
same word bindings and fills, so multi-word groups ("Black people") and the rest of the
sentence come out right. The words that agree with a group are put in the swapped group's
number and gender by syntax (workbench/languages/grammar.py: the verbs whose subject it is,
in French predicate adjectives and participles), words are respelt where the groups and fills
meet them (workbench/languages/orthography.py), the indefinite article before a group is
mended (English "a"/"an", none before a plural, one added where a bare plural becomes a bare
singular noun), and the first letter is capitalised as a sentence start.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ....authoring import text as tt
from .... import languages
from ....languages import Language
from . import sentences as S

# Words that may sit between an article and the group ("older", "very young", "Muslim"),
# and words that rule an article out ("the", "three", "their" is caught by its tag PRP$).
MODIFIER_POS = {"ADJ"}
MODIFIER_DEPS = {"amod", "compound", "advmod"}
BLOCKING_POS = {"DET", "NUM", "NOUN", "PROPN", "PRON"}


def sentence_case(text: str) -> str:
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1 :] if ch.islower() else text
        if not ch.isspace() and ch not in "\"'(":
            return text
    return text


def _mend(text: str, spans: list[tuple[int, int, str, str]], language: Language) -> str:
    """The indefinite article before each (start, end, old group, new group) span, where the
    language has one: none before a plural, the right one before a singular, one added where a
    bare plural became a bare singular noun. (The verbs are agreed before, by syntax.)"""
    is_plural, article_for = language.is_plural, language.indefinite_article
    if article_for is None:
        return text
    articles = sorted({f for a in language.indefinite_articles for f in (a, a.capitalize())}, key=len)
    # Work from the right so earlier offsets stay valid.
    for start, end, old, new in sorted(spans, reverse=True):
        before, after = text[:start], text[end:]
        a = re.search(r"(?:^|(?<=\s))(" + "|".join(articles) + r")\s+$", before)
        if a:
            if is_plural(new):
                before = before[: a.start(1)]
            else:
                before = before[: a.start(1)] + article_for(new, a.group(1)) + before[a.end(1) :]
        elif is_plural(old) and not is_plural(new):
            at = _article_position(before, new, after, language)
            if at is not None:
                before = before[:at] + article_for((before[at:] + new).split()[0], "a") + " " + before[at:]
        text = before + text[start:end] + after
    return text


def _article_position(before: str, group: str, after: str, language: Language) -> int | None:
    """Where in `before` a singular group that replaced a bare plural needs "a"/"an", if it
    does: right before the group, or before the adjectives that modify it ("hired older
    women" becomes "hired an older man"). None when the phrase is already determined ("the",
    "their"), is a possessive ("women's" becomes "man's"), or opens the sentence with a
    capitalised modifier (the capital cannot tell "Young" from "Black"). spaCy tags the words
    before the group, and is loaded only when such a case comes up."""
    opening = group.split()[0].lower() if group.split() else ""
    if opening in language.determiners or after.startswith("'"):
        return None
    previous = re.search(r"([A-Za-z']+)([^A-Za-z']*)$", before)
    if previous is None or re.search(r"[.!?:;]", previous.group(2)):
        return len(before)
    if previous.group(1).lower() in language.determiners:
        return None
    doc = _spacy(language)(before + group + after)
    tagged = [t for t in doc if t.idx + len(t.text) <= len(before.rstrip())]
    modifiers_from = len(tagged)  # index of the first word that modifies the group
    while modifiers_from and (
        tagged[modifiers_from - 1].pos_ in MODIFIER_POS or tagged[modifiers_from - 1].dep_ in MODIFIER_DEPS
    ):
        modifiers_from -= 1
    outside = tagged[modifiers_from - 1] if modifiers_from else None  # the word before the phrase
    if outside is not None and (outside.pos_ in BLOCKING_POS or outside.tag_ == "PRP$"):
        return None
    if modifiers_from == len(tagged):
        return len(before)
    phrase = tagged[modifiers_from]
    sentence_start = outside is None or re.search(r"[.!?:;]\s*$", before[: phrase.idx])
    return None if sentence_start and phrase.text[:1].isupper() else phrase.idx


@lru_cache(maxsize=4)
def _spacy(language: Language):
    from .masks import load_spacy

    return load_spacy(language=language)


def written_groups(row: dict) -> dict[str, str]:
    """A sample's template's own groups (those its words agree with): a sample of the other
    stance than the one written has them swapped."""
    groups = dict(row["groups"])
    if row.get("written_stance") and row.get("stance") != row["written_stance"]:
        groups = {"GROUP1": groups["GROUP2"], "GROUP2": groups["GROUP1"]}
    return groups


def counterfactual(
    template: str,
    bindings: dict[str, str],
    groups: dict[str, str],
    fills: list[str],
    language: Language | None = None,
    written: dict[str, str] | None = None,
) -> str | None:
    """The hypothesis with GROUP1 and GROUP2 exchanged (None if it names no group); see `counterfactual_with_notes`."""
    return counterfactual_with_notes(template, bindings, groups, fills, language, written)[0]


def counterfactual_with_notes(
    template: str,
    bindings: dict[str, str],
    groups: dict[str, str],
    fills: list[str],
    language: Language | None = None,
    written: dict[str, str] | None = None,
) -> tuple[str | None, list[str]]:
    """The hypothesis with GROUP1 and GROUP2 exchanged, and the notes for annotators where the
    parse did not settle its agreement. It is rendered again from its template with the same
    words and fills; the words that agree with a group (the author's, agreeing with `written`,
    the template's own groups, by default `groups`; the fills, chosen for `groups`) are put in
    the swapped group's number and gender; words are respelt where groups and fills meet them,
    and the indefinite article before a group is mended."""
    if not any(p in tt.GROUP_KEYS for p in tt.placeholders(template)):
        return None, []
    language = language or languages.find(languages.DEFAULT)
    swapped = {"GROUP1": groups["GROUP2"], "GROUP2": groups["GROUP1"]}
    pieces, notes = S.with_groups(
        template, {**bindings, **(written or groups)}, {**bindings, **swapped}, language, fills, filled_for=groups
    )
    text, _, group_spans = S.joined(pieces, language)
    names = [pieces.names[i] for i in pieces.groups()]
    spans = [(a, b, groups[name], swapped[name]) for (a, b), name in zip(group_spans, names)]
    return sentence_case(_mend(text, spans, language)), notes

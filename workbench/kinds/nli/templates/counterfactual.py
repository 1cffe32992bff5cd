"""Group counterfactuals of a hypothesis: the group swapped in the hypothesis only.

The hypothesis is rendered again from its template with GROUP1 and GROUP2 exchanged and the
same word bindings and fills, so multi-word groups ("Black people") and the rest of the
sentence come out right. Then grammar is mended around each swapped group where the two
groups differ in number or sound, by the project language's rules (`workbench.languages`): the
indefinite article before it (English "a"/"an", none before a plural, one added where a bare
plural becomes a bare singular noun; a language without the rule has none mended) and the verb
right after it (English "is"/"are", "was"/"were", "has"/"have", "does"/"do"; French
"est"/"sont", "a"/"ont"...). The first letter is capitalised as a sentence start.
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
            return text[:i] + ch.upper() + text[i + 1:] if ch.islower() else text
        if not ch.isspace() and ch not in "\"'(":
            return text
    return text


def _mend(text: str, spans: list[tuple[int, int, str, str]], language: Language) -> str:
    """Fix article and verb agreement around each (start, end, old group, new group) span."""
    is_plural, article_for = language.is_plural, language.indefinite_article
    plural_to_singular = {v: k for k, v in language.agreement.items()}
    articles = sorted({f for a in language.indefinite_articles for f in (a, a.capitalize())}, key=len)
    # Work from the right so earlier offsets stay valid.
    for start, end, old, new in sorted(spans, reverse=True):
        after = text[end:]
        m = re.match(r"(\s+)([\w']+)", after)
        if m and is_plural(old) != is_plural(new):
            verb = m.group(2)
            table = language.agreement if is_plural(new) else plural_to_singular
            if verb.lower() in table:
                swapped = table[verb.lower()]
                swapped = swapped.capitalize() if verb[0].isupper() else swapped
                after = after[:m.start(2)] + swapped + after[m.end(2):]
        if article_for is None:
            text = text[:start] + text[start:end] + after
            continue
        before = text[:start]
        a = re.search(r"(?:^|(?<=\s))(" + "|".join(articles) + r")\s+$", before)
        if a:
            if is_plural(new):
                before = before[:a.start(1)]
            else:
                before = before[:a.start(1)] + article_for(new, a.group(1)) + before[a.end(1):]
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
    while modifiers_from and (tagged[modifiers_from - 1].pos_ in MODIFIER_POS
                              or tagged[modifiers_from - 1].dep_ in MODIFIER_DEPS):
        modifiers_from -= 1
    outside = tagged[modifiers_from - 1] if modifiers_from else None  # the word before the phrase
    if outside is not None and (outside.pos_ in BLOCKING_POS or outside.tag_ == "PRP$"):
        return None
    if modifiers_from == len(tagged):
        return len(before)
    phrase = tagged[modifiers_from]
    sentence_start = outside is None or re.search(r"[.!?:;]\s*$", before[:phrase.idx])
    return None if sentence_start and phrase.text[:1].isupper() else phrase.idx


@lru_cache(maxsize=4)
def _spacy(language: Language):
    from .masks import load_spacy

    return load_spacy(language=language)


def counterfactual(template: str, bindings: dict[str, str], groups: dict[str, str], fills: list[str],
                   language: Language | None = None) -> str | None:
    """The hypothesis with GROUP1 and GROUP2 exchanged (None if it names no group): rendered
    again from its template with the same words and fills, respelt where the groups and fills
    meet their neighbours, and mended around each swapped group."""
    if not any(p in tt.GROUP_KEYS for p in tt.placeholders(template)):
        return None
    language = language or languages.find(languages.DEFAULT)
    swapped = {"GROUP1": groups["GROUP2"], "GROUP2": groups["GROUP1"]}
    pieces = S.render(template, {**bindings, **swapped}, fills)
    text, _, group_spans = S.joined(pieces, language)
    names = [pieces.names[i] for i in pieces.groups()]
    spans = [(a, b, groups[name], swapped[name]) for (a, b), name in zip(group_spans, names)]
    return sentence_case(_mend(text, spans, language))

"""Group counterfactuals of a hypothesis: the group swapped in the hypothesis only.

The hypothesis is rendered again from its template with GROUP1 and GROUP2 exchanged and the
same word bindings and fills, so multi-word groups ("Black people") and the rest of the
sentence come out right. Then grammar is mended around each swapped group where the two
groups differ in number or sound: the indefinite article before it ("a"/"an", none before a
plural, one added where a bare plural becomes a bare singular noun) and the verb right after
it ("is"/"are", "was"/"were", "has"/"have", "does"/"do"). The first letter is capitalised as
a sentence start.
"""
from __future__ import annotations

import re
from functools import lru_cache

from . import text as tt
from .fills import apply_fills

AGREEMENT = {"is": "are", "was": "were", "has": "have", "does": "do", "isn't": "aren't", "wasn't": "weren't",
             "hasn't": "haven't", "doesn't": "don't"}
PLURAL_TO_SINGULAR = {v: k for k, v in AGREEMENT.items()}
# A group that already opens with one of these needs no article of its own.
DETERMINERS = {"a", "an", "the", "this", "that", "these", "those", "every", "each", "his", "her", "their", "our",
               "my", "your", "its", "no", "any", "some", "one", "another", "all", "most", "many", "few", "several",
               "both", "such", "whose"}
# Parts of speech that modify a following noun ("young women", "their sons"): a group after
# one of them takes no article of its own.
MODIFIER_POS = {"ADJ", "DET", "NUM", "NOUN", "PROPN"}


@lru_cache(maxsize=256)
def is_plural(group: str) -> bool:
    """A group name is plural when its head (last) word is a plural noun ("Black people")."""
    from .fills import inflect_engine

    words = re.findall(r"[A-Za-z]+", group)
    head = words[-1].lower() if words else ""
    if head in {"people", "men", "women", "children", "folks", "police"}:
        return True
    return bool(inflect_engine().singular_noun(head))


def sentence_case(text: str) -> str:
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1:] if ch.islower() else text
        if not ch.isspace() and ch not in "\"'(":
            return text
    return text


def _mend(text: str, spans: list[tuple[int, int, str, str]]) -> str:
    """Fix article and verb agreement around each (start, end, old group, new group) span."""
    from .fills import article_for

    # Work from the right so earlier offsets stay valid.
    for start, end, old, new in sorted(spans, reverse=True):
        after = text[end:]
        m = re.match(r"(\s+)([A-Za-z']+)", after)
        if m and is_plural(old) != is_plural(new):
            verb = m.group(2)
            table = AGREEMENT if is_plural(new) else PLURAL_TO_SINGULAR
            if verb.lower() in table:
                swapped = table[verb.lower()]
                swapped = swapped.capitalize() if verb[0].isupper() else swapped
                after = after[:m.start(2)] + swapped + after[m.end(2):]
        before = text[:start]
        a = re.search(r"(?:^|(?<=\s))(a|an|A|An)\s+$", before)
        if a:
            if is_plural(new):
                before = before[:a.start(1)]
            else:
                before = before[:a.start(1)] + article_for(new, a.group(1)) + before[a.end(1):]
        elif is_plural(old) and not is_plural(new) and _opens_bare_phrase(before, new, after):
            before += article_for(new, "a") + " "
        text = before + text[start:end] + after
    return text


def _opens_bare_phrase(before: str, group: str, after: str) -> bool:
    """Whether a singular group here stands alone as a noun phrase and so needs an article:
    not already determined, not a possessive ("women's" becomes "man's"), and at the start
    of a sentence or after a word that does not modify it (a verb, preposition, conjunction;
    spaCy decides, and is loaded only when such a case comes up)."""
    first = group.split()[0].lower() if group.split() else ""
    if first in DETERMINERS or after.startswith("'"):
        return False
    previous = re.search(r"([A-Za-z']+)([^A-Za-z']*)$", before)
    if previous is None or re.search(r"[.!?:;]", previous.group(2)):
        return True
    if previous.group(1).lower() in DETERMINERS:
        return False
    doc = _spacy()(before + group + after)
    token = next((t for t in reversed(doc) if t.idx + len(t.text) <= len(before.rstrip())), None)
    return token is None or not (token.pos_ in MODIFIER_POS or token.tag_ == "PRP$")


@lru_cache(maxsize=1)
def _spacy():
    from .masks import load_spacy

    return load_spacy()


SENTINEL = "\x00{}\x00"


def counterfactual(template: str, bindings: dict[str, str], groups: dict[str, str], fills: list[str]) -> str | None:
    """The hypothesis with GROUP1 and GROUP2 exchanged (None if it names no group).

    Groups are first rendered as sentinels, the masks filled, then each sentinel replaced by
    its (swapped) group while noting where it landed, so agreement can be mended there."""
    if not any(p in tt.GROUP_KEYS for p in tt.placeholders(template)):
        return None
    swapped = {"GROUP1": groups["GROUP2"], "GROUP2": groups["GROUP1"]}
    marked = tt.render(tt.strip_mask_constraints(template), {**bindings, **{k: SENTINEL.format(k) for k in tt.GROUP_KEYS}})
    if fills:
        marked = apply_fills(marked, fills).text
    text, spans = "", []
    for piece in re.split(r"(\x00GROUP[12]\x00)", marked):
        name = piece.strip("\x00")
        if piece.startswith("\x00") and name in tt.GROUP_KEYS:
            spans.append((len(text), len(text) + len(swapped[name]), groups[name], swapped[name]))
            text += swapped[name]
        else:
            text += piece
    return sentence_case(_mend(text, spans))

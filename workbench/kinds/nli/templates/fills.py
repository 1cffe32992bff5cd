"""Putting masked-LM fills into hypotheses, and the filters that reject bad fills.

Every filter returns a reason when it rejects, so the author sees why a candidate is gone.
Order matters only for which reason is reported first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .... import languages
from ....languages import Language
from ....languages.orthography import respell

MARK = "<mask>"


def _language(language: Language | None) -> Language:
    return language or languages.find(languages.DEFAULT)


@dataclass
class Filled:
    text: str
    spans: list[tuple[int, int]]  # where each fill sits in the text
    article_fixed: bool  # a word next to a fill was respelt ("a" -> "an", "le" -> "l'", "de" + "le" -> "du")


def apply_fills(masked: str, words: list[str], fix_articles: bool = True, language: Language | None = None) -> Filled:
    """Replace the masks left to right, then respell where each fill meets its neighbours by
    the language's orthography (English "a"/"an"; French elisions and contractions; none in a
    language without one). `fix_articles=False` leaves the words around the fills as written."""
    language = _language(language)
    parts = masked.split(MARK)
    if len(parts) - 1 != len(words):
        raise ValueError(f"{len(words)} fill(s) for {len(parts) - 1} mask(s) in {masked!r}")
    pieces, substituted = [parts[0]], [False]
    for word, rest in zip(words, parts[1:]):
        pieces += [word, rest]
        substituted += [True, False]
    spelt = respell(pieces, substituted, language.spelling) if fix_articles else pieces
    text, spans = "", []
    for k, piece in enumerate(spelt):
        if substituted[k]:
            spans.append((len(text), len(text) + len(piece)))
        text += piece
    return Filled(text, spans, spelt != pieces)


def group_words(*groups: str | None, language: Language | None = None) -> set[str]:
    """Content words of the group names, with their inflected forms (the language's rules)."""
    language = _language(language)
    words: set[str] = set()
    for g in groups:
        if not g:
            continue
        for w in language.tokens(g):
            if w not in language.group_stopwords:
                words |= language.word_forms(w)
    return words


_WORD = re.compile(r"[\w'-]+")


def neighbours(text: str, span: tuple[int, int]) -> tuple[str | None, str | None]:
    before = _WORD.findall(text[: span[0]])
    after = _WORD.findall(text[span[1] :])
    return (before[-1] if before else None, after[0] if after else None)


def word_filter_reasons(word: str, token: str, word_start: bool, language: Language | None = None) -> list[str]:
    """Every reason that depends on the fill alone (all of them: a disabled one must not hide
    an enabled one)."""
    reasons = []
    if not word_start or token.startswith("##"):
        reasons.append("subword")
    if not any(ch.isalnum() for ch in word):
        reasons.append("punctuation")
    if any(ch.isdigit() for ch in word) or word.lower() in _language(language).number_words:
        reasons.append("number")
    return reasons


def context_filter_reasons(word: str, filled: Filled, index: int, groups: set[str]) -> list[str]:
    """Every reason that depends on where the fill sits."""
    w = word.lower()
    reasons = ["group_word"] if w in groups else []
    before, after = neighbours(filled.text, filled.spans[index])
    if (before and before.lower() == w) or (after and after.lower() == w):
        reasons.append("repeated_neighbour")
    return reasons


def first_enabled_reason(
    word: str,
    token: str,
    word_start: bool,
    filled: Filled,
    index: int,
    groups: set[str],
    enabled: set[str],
    language: Language | None = None,
) -> str | None:
    """The first enabled reason to reject this fill; each enabled filter is checked on its own.
    Context reasons are looked at only when no enabled word reason applies (they cost more)."""
    for reason in word_filter_reasons(word, token, word_start, language):
        if reason in enabled:
            return reason
    for reason in context_filter_reasons(word, filled, index, groups):
        if reason in enabled:
            return reason
    return None

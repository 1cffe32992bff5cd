"""A template string rendered as pieces: the author's text, placeholder values, masks and fills.

Agreement and spelling both need to know which words the author wrote and which the tool put
in (a group, a word-list value, a fill): `respell` works only where a put-in piece meets its
neighbours, and agreement changes words that depend on a group wherever they are. Rendering
to pieces keeps that knowledge until the text is joined.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ....authoring import text as tt
from ....core.errors import ModelError
from ....languages import Language
from ....languages import grammar as G
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
    pos: list[tuple[str, ...] | None] = field(default_factory=list)  # a mask's POS constraint

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
            texts.append(template[at : m.start()]), kinds.append("text"), names.append(None), pos.append(None)
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


def with_groups(
    template: str,
    written: dict[str, str],
    values: dict[str, str],
    language: Language | None,
    fills: list[str] | None = None,
    filled_for: dict[str, str] | None = None,
) -> tuple[Pieces, list[str]]:
    """The template rendered with `values` (its groups among them), the words that agree with a
    group put in the form that group needs (`workbench.languages.grammar`), and the notes for
    annotators where the parse does not settle it. `written`: the values the author's words
    agree with (the template's own groups); `filled_for`: the groups the fills were chosen for.
    Nothing is parsed when every group keeps its number and gender."""
    pieces = render(template, values, fills)
    if language is None or language.grammar is None:
        return _adjacent_agreement(pieces, written, language), []
    groups = pieces.groups()
    source = render(template, written, fills)
    need = {g: pieces.texts[g] for g in groups}
    have = {g: source.texts[g] for g in groups}
    if all(G.features(have[g], language) == G.features(need[g], language) for g in groups) and (
        filled_for is None
        or all(G.features(filled_for[pieces.names[g]], language) == G.features(need[g], language) for g in groups)
    ):
        return pieces, []
    try:
        analysis = _analysis(tuple(source.texts), tuple(source.kinds), tuple(source.pos), language)
    except ModelError as exc:
        return pieces, [f"agreement not checked: {exc}"]
    filled = {g: filled_for[pieces.names[g]] for g in groups} if filled_for else None
    agreed = G.agree(pieces.texts, pieces.kinds, analysis, have, need, language, filled)
    out = Pieces(
        agreed.texts,
        agreed.kinds,
        [pieces.names[o] for o in agreed.origin],
        [pieces.pos[o] if pieces.pos else None for o in agreed.origin],
    )
    # The doubts of the parse, about the sentence written: its groups, and the fills' where it has some
    notes = agreed.notes + G.unsure_notes(analysis, have, need, language, filled if "fill" in pieces.kinds else None)
    # A second reading, of the sentence as now written: a word the first parse missed shows here.
    second = _analysis(tuple(out.texts), tuple(out.kinds), tuple(out.pos), language)
    notes += [
        f"{n} (a second reading)" for n in G.disagreements(out.texts, out.kinds, second, language, analysis.set_aside)
    ]
    return out, list(dict.fromkeys(notes))


@lru_cache(maxsize=4096)
def _analysis(texts: tuple, kinds: tuple, pos: tuple, language: Language) -> G.Analysis:
    """The parse of one rendering, once for both stances and every counterfactual of it."""
    from .masks import load_spacy

    return G.analyse(list(texts), list(kinds), list(pos), language, load_spacy(language=language))


def _adjacent_agreement(pieces: Pieces, written: dict[str, str], language: Language | None) -> Pieces:
    """A language with an `agreement` table but no grammar: the verb right after a group whose
    number changed takes the other form of the table (what counterfactuals always did)."""
    if language is None or not language.agreement:
        return pieces
    texts = list(pieces.texts)
    back = {v: k for k, v in language.agreement.items()}
    for g in pieces.groups():
        was, now = language.is_plural(written.get(pieces.names[g], "")), language.is_plural(texts[g])
        if was == now or g + 1 >= len(texts):
            continue
        m = re.match(r"(\s+)([\w']+)", texts[g + 1])
        table = language.agreement if now else back
        if m and m.group(2).lower() in table:
            form = table[m.group(2).lower()]
            form = form.capitalize() if m.group(2)[0].isupper() else form
            texts[g + 1] = texts[g + 1][: m.start(2)] + form + texts[g + 1][m.end(2) :]
    return Pieces(texts, pieces.kinds, pieces.names, pieces.pos)

"""The small language of template strings: `{{PLACEHOLDER}}`s and `<mask>`s.

A placeholder is `{{NAME}}` (spaces inside the braces allowed, as in Jinja), NAME in
UPPER_CASE. A mask is `<mask>` or `<mask:POS>` with a Universal POS tag, or several joined
by `|` (`<mask:ADJ|ADV>`), which constrains what the masked LM may put there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PLACEHOLDER = re.compile(r"\{\{\s*([A-Z][A-Z0-9_]*)\s*\}\}")
ANY_BRACES = re.compile(r"\{\{(.*?)\}\}")
MASK = re.compile(r"<mask(?::([A-Z]+(?:\|[A-Z]+)*))?>")
MASK_LIKE = re.compile(r"<\s*mask[^>]*>?|\[MASK\]|<MASK>", re.IGNORECASE)
GROUP_KEYS = ("GROUP1", "GROUP2")
UPOS = {
    "ADJ",
    "ADP",
    "ADV",
    "AUX",
    "CCONJ",
    "DET",
    "INTJ",
    "NOUN",
    "NUM",
    "PART",
    "PRON",
    "PROPN",
    "PUNCT",
    "SCONJ",
    "SYM",
    "VERB",
    "X",
}


def placeholders(text: str) -> list[str]:
    return PLACEHOLDER.findall(text)


def masks(text: str) -> list[tuple[str, ...] | None]:
    """The POS constraint of each mask, left to right (None = unconstrained)."""
    return [tuple(m.split("|")) if m else None for m in MASK.findall(text)]


def strip_mask_constraints(text: str) -> str:
    return MASK.sub("<mask>", text)


def render(text: str, values: dict[str, str]) -> str:
    """Fill placeholders. An unknown name renders empty, as Jinja does."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), ""), text)


@dataclass
class Segment:
    """A piece of rendered text and the placeholder it came from (None for literal text)."""

    text: str
    placeholder: str | None


def render_segments(text: str, values: dict[str, str]) -> list[Segment]:
    out, pos = [], 0
    for m in PLACEHOLDER.finditer(text):
        if m.start() > pos:
            out.append(Segment(text[pos : m.start()], None))
        out.append(Segment(values.get(m.group(1), ""), m.group(1)))
        pos = m.end()
    if pos < len(text):
        out.append(Segment(text[pos:], None))
    return out


def syntax_problems(text: str) -> list[str]:
    """Malformed braces and masks in one template string, as messages."""
    problems = []
    for m in ANY_BRACES.finditer(text):
        if not PLACEHOLDER.fullmatch(m.group(0)):
            inner = m.group(1).strip()
            if not inner:
                problems.append("empty placeholder '{{}}'")
            else:
                problems.append(f"malformed placeholder {m.group(0)!r}: names are UPPER_CASE letters, digits, _")
    rest = ANY_BRACES.sub("", text)
    if "{" in rest or "}" in rest:
        problems.append("unbalanced braces: placeholders are written {{NAME}}")
    for m in MASK_LIKE.finditer(text):
        token = m.group(0)
        good = MASK.fullmatch(token)
        if good:
            for tag in (good.group(1) or "").split("|"):
                if tag and tag not in UPOS:
                    problems.append(
                        f"mask {token!r} names unknown POS tag {tag!r} (use Universal POS: {', '.join(sorted(UPOS))})"
                    )
        else:
            problems.append(f"malformed mask {token!r}: write <mask> or <mask:POS>")
    return problems

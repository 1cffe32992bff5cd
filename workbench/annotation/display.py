"""What an annotator sees of one item: its question and its lines, in the order and with the
words its kind declares (`AnnotatorWords`, kinds/base.py).

The terminal UI and the Label Studio page both draw these lines, so a caption, a hidden field
or a per-item question is decided here once. A kind that declares no words gets GENERIC: the
lines every queue may have, under their column names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..contract.kind import (
    FILL,
    FLUENCY,
    GROUP,
    MODELS,
    PREMISES,
    STANCE,
    TEMPLATE,
    TEXT,
    WHERE,
    AnnotatorWords,
    Field,
)

GENERIC = AnnotatorWords(
    question="",
    fields=(
        Field("text", "the sentence, statement or template you judge", TEXT),
        Field("group", "the social group the text is about", GROUP),
        Field("premise", "the context sentence(s) the text is paired with", PREMISES),
        Field("where", "group / template file, and how many rows of the benchmark your one label decides", WHERE),
        Field("template", "the text as written, with the filled slot as <mask>", TEMPLATE),
    ),
    model_fields=(
        Field("stance", "the stance the template's author intended: a hint, not the answer", STANCE),
        Field("models", "how the models the items were filtered with got them wrong", MODELS),
        Field(
            "fluency",
            "the masked language model's pseudo-log-likelihood per token (closer to 0 = more fluent)",
            FLUENCY,
        ),
    ),
)


@dataclass(frozen=True)
class Line:
    """One line of an item as shown: its caption, its text(s) (several for a list such as
    premises), where it comes from, and whether it is a model result."""

    name: str
    values: tuple[str, ...]
    source: str
    model: bool = False

    @property
    def text(self) -> str:
        """The values as one plain text (numbered when there are several)."""
        if len(self.values) == 1:
            return self.values[0]
        return "\n".join(f"{n}. {v}" for n, v in enumerate(self.values, start=1))


def words_of(words: AnnotatorWords | None) -> AnnotatorWords:
    return words if words is not None else GENERIC


def fill_text(item) -> str:
    """The words at the item's fill spans, in order ("" when it has none)."""
    text = item.hypothesis
    return " … ".join(text[a:b] for a, b in sorted(item.fill_spans or ()) if 0 <= a < b <= len(text))


def _detail(item, label: str) -> str | None:
    for name, text in item.details:
        if name == label:
            return text
    return None


def source_values(item, source: str, words: AnnotatorWords | None = None) -> tuple[str, ...]:
    """What a source shows for an item; () when the item has nothing there."""
    if source == TEXT:
        return (item.hypothesis,)
    if source == FILL:
        fill = fill_text(item)
        return (fill,) if fill else ()
    if source == GROUP:
        if not item.group:
            return ()
        cf = f" → counterfactual {item.counterfactual_group}" if item.counterfactual_group else ""
        return (item.group + cf,)
    if source == PREMISES:
        return tuple(p for p in item.premises if p)
    if source == TEMPLATE:
        return (item.masked_template,) if item.masked_template else ()
    if source == WHERE:
        where = f"{', '.join(getattr(item, 'domains', None) or (item.domain,))} / {item.subtopic}"
        return (where + (f" · {item.n_samples} {words_of(words).rows}" if item.n_samples != 1 else ""),)
    if source == STANCE:
        return (f"{item.stance} (as the template was written)",) if item.stance else ()
    if source == MODELS:
        out = []
        for f in item.fooled:
            labels = ", ".join(f"{k} {v}" for k, v in sorted(f["labels"].items())) or "neutral"
            out.append(f"{f['model']}: fooled {f['fooled']}/{f['of']} ({labels}; max p {f['max_prob']:.2f})")
        return tuple(out)
    if source == FLUENCY:
        return (f"{item.fluency:.2f}",) if item.fluency is not None else ()
    value = _detail(item, source)
    return (value,) if value else ()


def _value(item, field: Field, words: AnnotatorWords | None) -> tuple[str, ...]:
    for source in field.sources:
        values = source_values(item, source, words)
        if values:
            return values
    return ()


def lines(item, words: AnnotatorWords | None, *, model_results: bool = False, medium: str = "terminal") -> list[Line]:
    """The item's lines after the judged text, in the declared order: declared fields, then
    detail lines the kind did not declare (under their own label, so nothing is lost unseen),
    then model results when they are on. Hidden sources never appear. The fill is a line of its
    own only in Label Studio (`medium="labelstudio"`): the terminal highlights it in the text.
    A declared line the item has nothing for is left out."""
    w = words_of(words)
    hidden = set(w.hidden)
    out: list[Line] = []
    used: set[str] = {TEXT}
    for field in w.fields[1:]:
        used.update(field.sources)
        if field.line in hidden or all(s in hidden for s in field.sources):
            continue
        if medium == "terminal" and field.sources == (FILL,):
            continue
        values = _value(item, field, words)
        if values:
            out.append(Line(field.line, values, field.sources[0]))
    extra = [
        Line(name, (text,), name) for name, text in item.details if name not in used and name not in hidden and text
    ]
    if words is None:  # generic words: a kind's details before where/template, as they always were
        at = next((k for k, line in enumerate(out) if line.source in (WHERE, TEMPLATE)), len(out))
        out[at:at] = extra
    else:
        out += extra
    if model_results:
        for field in w.model_fields:
            values = _value(item, field, words)
            if values:
                out.append(Line(field.line, values, field.sources[0], model=True))
    return out


def undeclared(item, words: AnnotatorWords | None) -> list[str]:
    """Detail labels of the item that the words neither declare nor hide (should be none)."""
    if words is None:
        return []
    known = {s for f in (*words.fields, *words.model_fields) for s in f.sources} | set(words.hidden)
    return [name for name, _ in item.details if name not in known]


def question(item, words: AnnotatorWords | None, scheme=None) -> str:
    """The question for this item: its per-item question when the kind has one, else the
    kind's question, else the scheme's."""
    w = words_of(words)
    default = w.question or (scheme.question if scheme is not None else "") or "Pick one decision per item."
    if w.per_item is None or item is None:
        return default
    values = source_values(item, w.per_item.source)
    return w.per_item.question_for(values[0] if values else None, default)


def content_note(words: AnnotatorWords | None, medium: str = "terminal") -> str:
    """What annotators are told before the first item: what the kind's items contain (its
    `content_note`), then how to look after themselves where they label; "" when the kind's
    items need no note."""
    w = words_of(words)
    if not w.content_note:
        return ""
    if medium == "labelstudio":
        return (
            f"{w.content_note} Validating them can be tiring and upsetting: take breaks, and stop whenever you "
            f"need to; tell the project lead about any {w.domain} you prefer not to label."
        )
    return (
        f"{w.content_note}\n\nValidating them can be tiring and upsetting. Take breaks (a reminder will appear), "
        f"and opt out of {_a(w.domain)} {w.domain} at any time with the opt-out key (default: o; you can opt back in there), "
        "or with [annotation] opt_out_domains in workbench.toml."
    )


def _a(word: str) -> str:
    """The article before a kind's word ("a domain", "an attribute")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def key_descriptions(words: AnnotatorWords | None) -> dict[str, str]:
    """The help screen's words for the keys that name what the kind's items are (binding id -> text)."""
    w = words_of(words)
    return {
        "filter": f"filter by {w.domain}, {w.subtopic}, status",
        "search": f"search {w.search}",
        "opt_out": f"opt out of {w.domains} (or back in)",
    }


def text_name(words: AnnotatorWords | None) -> Field:
    """The judged text's field (its line name and caption)."""
    return words_of(words).fields[0]


def choice_captions(scheme, words: AnnotatorWords | None) -> list[tuple[str, str]]:
    """(choice id, caption) of every decision, in the scheme's order."""
    w = words_of(words)
    return [(c.id, w.caption(c)) for c in scheme.choices]


def data_key(name: str, taken: set[str]) -> str:
    """A Label Studio data key for a line name (letters, digits and _), unique among `taken`."""
    key = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").lower() or "line"
    if key[0].isdigit():
        key = "f_" + key
    base, n = key, 2
    while key in taken:
        key, n = f"{base}_{n}", n + 1
    taken.add(key)
    return key


def word_diff(before: str, after: str) -> str:
    """The words an edit removed and added, as `[-removed-]{+added+}` in the text."""
    import difflib

    a, b = before.split(), after.split()
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out += a[i1:i2]
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)

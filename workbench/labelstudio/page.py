"""The Label Studio labelling page of a kind, generated from its `AnnotatorWords` — the words
the terminal UI draws (annotation/display.py) — so both say the same thing.

The page shows the item's question (per item where the kind asks one), the judged text, each
declared line under its name with its caption, and the choices with their captions (the
choice's id stays its value, so pull reads ids). Task data is plain text, one key per line:
Label Studio's task list shows every data key as a column and does not render HTML, so a
filled-in word is a line of its own rather than markup. Hidden lines never reach the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from xml.sax.saxutils import quoteattr

from ..annotation import display
from ..core.labels import LabelScheme

LABEL_TAG, NOTE_TAG, FLAG_TAG = "label", "note", "flag"
FIX_PREFIX = "fix_"  # an audit's text areas: fix_<column> holds the corrected text of that column
TARGET = "hypothesis"  # the judged text's object: the controls' toName (kept from the first version)
ID_KEY = "hypothesis_id"  # the queue item id in task data: push and pull match tasks by it
FLAG_VALUE = "flag for review"
FLAG_KEY = "f"  # the TUI's default flag key
QUESTION_KEY = "question"  # the per-item question, when the kind has one
DETAILS_KEY = "details"  # generic words only: the kind's detail lines, together
EMPTY = "—"  # a line the item has nothing for (Label Studio needs every key)
CAPTION_STYLE = "font-weight: normal; font-size: 13px; color: #6b6b6b; margin: 0 0 4px 0"
NAME_STYLE = "margin: 14px 0 2px 0"


@dataclass(frozen=True)
class Page:
    scheme: LabelScheme
    words: object  # AnnotatorWords | None (generic)
    text_key: str
    question_key: str | None
    lines: tuple[tuple[object, str], ...]  # (Field, data key) after the judged text

    @property
    def w(self):
        return display.words_of(self.words)

    def config(self) -> str:
        w = self.w
        text = w.fields[0]
        question = f"${self.question_key}" if self.question_key else display.question(None, self.words, self.scheme)
        parts = [
            f'  <Header value={quoteattr(question)} size="4"/>',
            *_named(text.line, text.caption),
            f'  <Text name="{TARGET}" value="${self.text_key}" selectionEnabled="false"/>',
        ]
        for field, key in self.lines:
            parts += [
                *_named(field.line, field.caption),
                f'  <Text name="{key}" value="${key}" selectionEnabled="false"/>',
            ]
        choices = "\n".join(
            f"    <Choice value={quoteattr(c.id)} hotkey={quoteattr(c.key)} "
            f"html={quoteattr(f'<b>{escape(c.id, quote=False)}</b> — {escape(w.caption(c), quote=False)}')}/>"
            for c in self.scheme.choices
        )
        body = "\n".join(parts)
        return f"""<View>
{body}
  <Header value="Your decision" size="5" style="{NAME_STYLE}"/>
  <Choices name="{LABEL_TAG}" toName="{TARGET}" choice="single" showInLine="false" required="true">
{choices}
  </Choices>
  <Choices name="{FLAG_TAG}" toName="{TARGET}" choice="multiple" showInLine="true">
    <Choice value={quoteattr(FLAG_VALUE)} hotkey="{FLAG_KEY}"/>
  </Choices>
  <TextArea name="{NOTE_TAG}" toName="{TARGET}" placeholder="note (optional)" maxSubmissions="1" editable="true"/>
{self.fix_areas()}</View>
"""

    def fix_areas(self) -> str:
        """An audit's text areas: the corrected text of each column a fix may change (words.edit)."""
        if not self.w.edit:
            return ""
        areas = "".join(
            f'  <TextArea name={quoteattr(FIX_PREFIX + column)} toName="{TARGET}" '
            f"placeholder={quoteattr(f'{column}, corrected (only with the fix decision)')} "
            'maxSubmissions="1" editable="true"/>\n'
            for column, _ in self.w.edit
        )
        return (
            f'  <Header value="Fix: the corrected text (unchanged columns may stay empty)" size="5" '
            f'style="{NAME_STYLE}"/>\n' + areas
        )

    def task_data(self, item) -> dict:
        """What a task carries: the item id, the judged text, the question when it depends on
        the item, and one plain-text value per line (EMPTY where the item has none)."""
        data = {ID_KEY: item.id, self.text_key: item.hypothesis}
        if self.question_key:
            data[self.question_key] = display.question(item, self.words, self.scheme)
        shown = {line.name: line for line in display.lines(item, self.words, medium="labelstudio")}
        for field, key in self.lines:
            if key == DETAILS_KEY and field.line == DETAILS_KEY:
                data[key] = " | ".join(f"{n}: {t}" for n, t in item.details if n not in self.w.hidden) or EMPTY
                continue
            line = shown.get(field.line)
            data[key] = line.text if line is not None and line.values else EMPTY
        return data

    def instructions(self, content_note: str, validators: int = 1) -> str:
        """The project's instructions (HTML), shown before the first task."""
        w = self.w
        question = display.question(None, self.words, self.scheme)
        asked = f"<p>{escape(question)}</p>"
        if w.per_item is not None:
            asked = (
                "<p>The question above each item says what to decide on it:</p><ul>"
                + "".join(f"<li>{escape(q)}</li>" for _, q in w.per_item.questions)
                + "</ul>"
            )
        choices = "".join(
            f"<li><b>{escape(c.key)}</b> {escape(c.id)}: {escape(w.caption(c))}</li>" for c in self.scheme.choices
        )
        fields = "".join(f"<li><b>{escape(f.line)}</b>: {escape(f.caption)}</li>" for f in w.fields)
        extra = "".join(f"<h3>{escape(h)}</h3><p>{escape(t)}</p>" for h, t in w.help)
        alone = ""
        if validators > 1:
            alone = (
                f"<h3>Label on your own</h3><p>Each item is labelled by {validators} people independently. "
                "Label through <b>Label All Tasks</b>, which shows you only your own work; do not open tasks "
                "from the task list, where other people's labels can be seen.</p>"
            )
        note = f"<h3>Content note</h3><p>{escape(content_note)}</p>" if content_note else ""
        return (
            f"{note}<h3>What you decide</h3>{asked}<ul>{choices}</ul>"
            f"<h3>What the lines mean</h3><ul>{fields}</ul>{extra}{alone}"
            "<p>Press <b>f</b> to flag an item for review (a typo, a broken sentence, something the choices do "
            "not cover) and say why in the note. Skip an item you cannot judge: a skip is not a label.</p>"
        )


def _named(name: str, caption: str) -> list[str]:
    return [
        f'  <Header value={quoteattr(name)} size="5" style="{NAME_STYLE}"/>',
        f'  <Header value={quoteattr(caption)} size="5" style="{CAPTION_STYLE}"/>',
    ]


def page_for(scheme: LabelScheme, words=None) -> Page:
    """The page of a kind: data keys from its line names (unique, Label Studio-safe)."""
    w = display.words_of(words)
    taken = {ID_KEY}
    question_key = None
    if w.per_item is not None:
        question_key = QUESTION_KEY
        taken.add(QUESTION_KEY)
    text_key = display.data_key(w.fields[0].line, taken)
    taken |= {TARGET, LABEL_TAG, NOTE_TAG, FLAG_TAG}  # object names other lines must not take
    lines = []
    hidden = set(w.hidden)
    seen_lines = set()
    for field in w.fields[1:]:
        if field.line in hidden or all(s in hidden for s in field.sources) or field.line in seen_lines:
            continue
        seen_lines.add(field.line)
        lines.append((field, display.data_key(field.line, taken)))
    if words is None:  # a kind without words: its detail lines, which differ from kind to kind, in one line
        from ..contract.kind import Field

        taken.discard(DETAILS_KEY)
        lines.append((Field(DETAILS_KEY, "what this kind shows beside the text"), display.data_key(DETAILS_KEY, taken)))
    return Page(scheme, words, text_key, question_key, tuple(lines))


def label_config(scheme: LabelScheme, words=None) -> str:
    return page_for(scheme, words).config()

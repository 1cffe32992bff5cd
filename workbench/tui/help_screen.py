"""The help overlay: what to decide, what each line of the item means, every key as mapped.

It is longer than a small terminal, so it scrolls (↑/↓, PgUp/PgDn, Home/End) and closes
only on Escape, q, ? or Enter: a stray key neither closes it nor labels anything.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..annotation import display

# Lines every kind's screen has (the kind's own lines come from its AnnotatorWords).
SHELL_LINES = [
    ("question", "above the item, in italics: what you decide on this item"),
    ("yours", "your label on this item now (unlabelled until you decide); ⚑ when you flagged it"),
    (
        "● newest item",
        (
            "the next item to label; ◀ REVIEWING HISTORY k/n when ← took you back to an earlier "
            "item (labelled or skipped, in any session): a label key relabels it and goes on to the "
            "next one, End returns to the newest; ● filtered view k/n in a labelled or flagged view"
        ),
    ),
    ("✓ saved", "the line above the keys: what your latest key saved (✓) or undid (↶), and on which item"),
]
NOTE_LINE = ("note, others", "your note; in adjudication, the annotators' labels, their notes and who flagged the item")
HIDDEN = (
    "The model results are hidden so that they do not sway your label. Adjudicators can show "
    "them with [annotation] show_model_results = true in workbench.toml."
)


def help_sections(scheme, show_model_results: bool, words=None, item=None) -> list[tuple[str, str]]:
    """(heading, text) blocks of the help for a label scheme and the kind's words for annotators
    (generic words when the kind declares none); `item` is the one on screen, for its question."""
    w = display.words_of(words)
    question = display.question(item, words, scheme)
    if w.per_item is not None:
        others = [q for _, q in w.per_item.questions if q != question]
        if others:
            question += "\n\nOther items ask (the question above each item says which):\n" + "\n".join(
                f"• {q}" for q in others
            )
    sections = [("What you decide", question)]
    sections.extend(w.help)
    # The fill is highlighted in the boxed text (the text's caption says so), not a line of the terminal.
    fill = next((f.caption for f in w.fields if f.sources == (display.FILL,)), None)
    boxed = f"{w.fields[0].caption} (boxed{'; highlighted: ' + fill if fill else ''})"
    fields = [(w.fields[0].line, boxed)] + [(f.line, f.caption) for f in w.fields[1:] if f.sources != (display.FILL,)]
    model_fields = [(f.line, f.caption) for f in w.model_fields]
    lines = [fields[0], *SHELL_LINES, *fields[1:], NOTE_LINE] + (model_fields if show_model_results else [])
    sections.append(("What the lines mean", "\n".join(f"{name}: {text}" for name, text in lines)))
    if model_fields:
        shown = (
            "Shown here because [annotation] show_model_results = true (meant for adjudicators): the "
            f"{', '.join(name for name, _ in model_fields)} lines above. Annotators should leave it off, so "
            "that they do not sway the label."
        )
        sections.append(("Model results", shown if show_model_results else HIDDEN))
    sections.append(
        (
            "Progress",
            (
                "The top line counts the items you labelled out of those you see (opted-out "
                f"{w.domains} left out); it reads 100% only once the last one is labelled. The rate "
                "and ETA appear after a few labels. Every label is saved before the next item "
                "shows, and the line above the keys says what was saved; quit any time (q or "
                "Ctrl+C) and start again to resume after your last label. Items you skipped come "
                "back after the rest."
            ),
        )
    )
    sections.append(
        (
            "Long items",
            (
                "An item longer than the screen shows ▼ below it: scroll (↓, PgDn) to its end "
                "before you label it; until then the label keys do nothing."
            ),
        )
    )
    return sections


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("escape,q,question_mark,enter", "close", "Close")]

    def __init__(self, rows: list[tuple[str, str]], sections: list[tuple[str, str]] = ()):
        super().__init__()
        self.rows = rows
        self.sections = list(sections)

    def compose(self) -> ComposeResult:
        width = max(len(k) for k, _ in self.rows) + 2
        body = "\n".join(f"{k:<{width}}{d}" for k, d in self.rows)
        with Vertical(classes="dialog", id="help-dialog"):
            yield Static("Help", classes="dialog-title")
            with VerticalScroll(id="help-body"):
                for heading, text in self.sections[:3]:
                    yield Static(heading, classes="help-heading")
                    yield Static(text, classes="help-text", markup=False)
                yield Static("Keys", classes="help-heading")
                yield Static(body, classes="help-text", markup=False)
                for heading, text in self.sections[3:]:
                    yield Static(heading, classes="help-heading")
                    yield Static(text, classes="help-text", markup=False)
                yield Static("Remap keys in workbench.toml [annotation.keys].", classes="help-text")
            yield Static("↑↓ PgUp PgDn: scroll · Escape, ? or q: close", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#help-body", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)

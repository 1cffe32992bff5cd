"""The editor of an audit's fix (key e): the item's texts to correct, one line each, and the
words changed so far shown as a diff under them. Enter moves to the next line and saves on the
last; Escape cancels. It returns {column: text}, or None when cancelled.

Every line stays on screen at 80×24: where the framed inputs do not fit (an item may have
four lines: a context and three sentences), they turn compact (one row each, no frame), and
the dialog scrolls to the line being typed in whenever even that is too tall."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ..annotation.display import word_diff

# Rows of the dialog around its lines (frame, padding, title, diff, hint), and of each line
# (caption, framed input, margin): the framed layout is used only where it fits.
FRAME_ROWS, LINE_ROWS = 9, 5


class FixScreen(ModalScreen[dict | None]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, texts: list[tuple[str, str, str]]):
        super().__init__()
        self.texts = texts  # (column, text as published, text to start from)

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog", id="fix-dialog", can_focus=False):
            yield Static("Fix: correct the text (the item is then labelled fix)", classes="dialog-title")
            for i, (column, _, start) in enumerate(self.texts):
                yield Static(column, classes="fix-caption")
                yield Input(value=start, id=f"fix-{i}")
            yield Static(id="fix-diff")
            yield Static("Enter: next line, save on the last · Escape: cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self._fit(self.app.size.height)
        self._show_diff()

    def on_resize(self, event) -> None:
        self._fit(event.size.height)

    def _fit(self, height: int) -> None:
        """Framed inputs where every line fits in the dialog (at most 90% of the screen), else compact ones."""
        compact = FRAME_ROWS + LINE_ROWS * len(self.texts) > int(0.9 * height)
        self.set_class(compact, "compact")
        for field in self.query(Input):
            field.compact = compact

    def _values(self) -> dict[str, str]:
        return {column: self.query_one(f"#fix-{i}", Input).value for i, (column, _, _) in enumerate(self.texts)}

    def _show_diff(self) -> None:
        values = self._values()
        lines = [
            word_diff(published, values[column])
            for column, published, _ in self.texts
            if " ".join(values[column].split()) != published
        ]
        self.query_one("#fix-diff", Static).update(
            Text("changed: " + " / ".join(lines)) if lines else Text("no change yet", style="dim")
        )

    def on_input_changed(self, _event: Input.Changed) -> None:
        self._show_diff()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        index = int(event.input.id.split("-")[1])
        if index + 1 < len(self.texts):
            self.query_one(f"#fix-{index + 1}", Input).focus()
            return
        values = self._values()
        empty = [i for i, (column, _, _) in enumerate(self.texts) if not values[column].strip()]
        if empty:  # a fix needs every text: say so here, and keep what was typed
            column = self.texts[empty[0]][0]
            self.query_one("#fix-diff", Static).update(
                Text(
                    f"{column} is empty: a fix needs a corrected text for each line (Escape cancels)", style="bold red"
                )
            )
            self.query_one(f"#fix-{empty[0]}", Input).focus()
            return
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)

"""A modal message (errors, notices): only Enter or Escape closes it, so a label key typed
before the annotator has read it is not taken as "got it" (nor as a label); the app stays usable."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

CLOSE_KEYS = ("enter", "escape")


class MessageScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"

    def __init__(self, title: str, body: str, error: bool = False):
        super().__init__()
        self.title_text, self.body, self.error = title, body, error

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog error" if self.error else "dialog"):
            yield Static(self.title_text, classes="dialog-title")
            yield Static(self.body, classes="dialog-body", markup=False)
            yield Static("Enter or Escape: close this message", classes="dialog-hint")

    def on_key(self, event) -> None:
        event.stop()
        event.prevent_default()
        if event.key in CLOSE_KEYS:
            self.dismiss(None)
        else:
            self.app.bell()

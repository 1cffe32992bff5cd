"""The break reminder: shown every N items or minutes (configurable, 0 = never).

It appears right after a label, often while the next key is already on its way, so it closes
only on Enter, Space or Escape. Any other key is not dropped silently: the reminder says that
it was not used and that nothing was recorded.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

CLOSE_KEYS = ("enter", "space", "escape")


class BreakScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"

    def __init__(self, labelled: int):
        super().__init__()
        self.labelled = labelled

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Time for a break", classes="dialog-title")
            yield Static(
                f"You have labelled {self.labelled} item(s) this session. Step away from the "
                "screen for a few minutes; your work is saved.",
                classes="dialog-body",
            )
            yield Static("Enter: back to labelling", classes="dialog-hint", id="break-hint")

    def on_key(self, event) -> None:
        event.stop()
        event.prevent_default()
        if event.key in CLOSE_KEYS:
            self.dismiss(None)
            return
        key = event.character if event.character and event.character.isprintable() else event.key
        self.query_one("#break-hint", Static).update(
            f"The key {key!r} was not used: nothing was recorded. Enter: back to labelling"
        )

"""The content note shown before the first item: the items are offensive by design.

It is a full screen of its own, shown before the labelling screen exists, so nothing of an
item (not even behind a dimmed overlay) is drawn until the annotator accepts it.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static

NOTE = (
    "The sentences you are about to read state stereotypes about social groups. They are "
    "offensive by design: the benchmark tests whether language models accept them.\n\n"
    "Validating them can be tiring and upsetting. Take breaks (a reminder will appear), and "
    "opt out of a domain at any time with the opt-out key (default: o; you can opt back in "
    "there), or with [annotation] opt_out_domains in workbench.toml."
)


class ContentNoteScreen(Screen[bool]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("enter", "accept", "Continue"), Binding("escape", "leave", "Quit")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Content note", classes="dialog-title")
            yield Static(NOTE, classes="dialog-body", markup=False)
            yield Static("Enter: start labelling · Escape: quit", classes="dialog-hint")

    def action_accept(self) -> None:
        self.dismiss(True)

    def action_leave(self) -> None:
        self.dismiss(False)

"""The content note shown before the first item: what the kind's items contain, in its words
(`AnnotatorWords.content_note`, composed by annotation/display.py), and how to look after oneself.

It is a full screen of its own, shown before the labelling screen exists, so nothing of an
item (not even behind a dimmed overlay) is drawn until the annotator accepts it. A kind whose
items need no note has none (the app goes straight to the first item).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static


class ContentNoteScreen(Screen[bool]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("enter", "accept", "Continue"), Binding("escape", "leave", "Quit")]

    def __init__(self, note: str):
        super().__init__()
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Content note", classes="dialog-title")
            yield Static(self.note, classes="dialog-body", markup=False)
            yield Static("Enter: start labelling · Escape: quit", classes="dialog-hint")

    def action_accept(self) -> None:
        self.dismiss(True)

    def action_leave(self) -> None:
        self.dismiss(False)

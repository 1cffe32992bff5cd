"""Label counts and per-template yield for this annotator, the template column named as the kind names it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


class StatsScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"

    def __init__(self, stats: dict, template: str = "template"):
        super().__init__()
        self.stats = stats
        self.template = template

    def compose(self) -> ComposeResult:
        counts = self.stats["counts"]
        with Vertical(classes="dialog"):
            yield Static("Your labels", classes="dialog-title")
            yield Static(" · ".join(f"{k}: {v}" for k, v in counts.items()), classes="dialog-body")
            yield DataTable(id="stats-table", show_cursor=False)
            yield Static("press any key to close", classes="dialog-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(self.template, "items", "labelled", "kept", "kept %")
        for name, t in sorted(self.stats["templates"].items()):
            rate = f"{100 * t['kept'] / t['labelled']:.0f}" if t["labelled"] else "-"
            table.add_row(name, str(t["items"]), str(t["labelled"]), str(t["kept"]), rate)

    def on_key(self, event) -> None:
        event.stop()
        self.dismiss(None)

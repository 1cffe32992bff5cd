"""Opt out of domains (or back in): a checklist, confirmed with Enter. Domains are named as the
kind names them (a bias type, an attribute, an identity group: `AnnotatorWords.domains`).

One key used to hide a whole domain at once, with no way back. Here Space ticks or unticks
a domain and nothing changes until Enter; Escape leaves everything as it was. The marks are
text ([x] / [ ]), not colour alone. Domains opted out in workbench.toml or with
--skip-domain are shown but cannot be changed here.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class OptOutScreen(ModalScreen[set | None]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "save", "Save", priority=True),
        Binding("space", "toggle", "Tick/untick"),
    ]

    def __init__(
        self, counts: dict[str, tuple[int, int]], fixed: set[str], own: set[str], current: str | None, words=None
    ):
        super().__init__()
        self.counts, self.fixed, self.current = counts, set(fixed), current
        self.domains = words.domains if words is not None else "domains"
        self.chosen = set(own) | self.fixed

    def _prompt(self, domain: str) -> Text:
        items, labelled = self.counts[domain]
        mark = "[x]" if domain in self.chosen else "[ ]"
        state = (
            " hidden (workbench.toml / --skip-domain)"
            if domain in self.fixed
            else (" hidden" if domain in self.chosen else "")
        )
        return Text(f"{mark} {domain}: {items} items, {labelled} labelled by you{state}")  # not markup

    def compose(self) -> ComposeResult:
        options = [Option(self._prompt(d), id=d, disabled=d in self.fixed) for d in self.counts]
        with Vertical(classes="dialog"):
            yield Static(f"Opt out of {self.domains}", classes="dialog-title")
            yield Static(
                f"Ticked {self.domains} are hidden from you (your labels on them are kept). Saved for your "
                "next sessions; come back here to opt back in.",
                classes="dialog-body",
            )
            yield OptionList(*options, id="optout-list")
            yield Static("Space: tick/untick · Enter: save · Escape: cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        widget = self.query_one("#optout-list", OptionList)
        widget.focus()
        domains = list(self.counts)
        if self.current in domains and self.current not in self.fixed:
            widget.highlighted = domains.index(self.current)

    def action_toggle(self) -> None:
        widget = self.query_one("#optout-list", OptionList)
        option = widget.highlighted_option
        if option is None or option.disabled:
            return
        self.chosen ^= {option.id}
        widget.replace_option_prompt(option.id, self._prompt(option.id))

    def action_save(self) -> None:
        self.dismiss(self.chosen - self.fixed)

    def action_cancel(self) -> None:
        self.dismiss(None)

"""Filter the queue by domain, subtopic and status, from the keyboard alone; the lists are
captioned in the kind's words (a bias type, a template file: `AnnotatorWords`).

Three labelled lists side by side, all visible at once (drop-down selects covered each other
and the hint, and Enter in one closed the dialog with the old values). The highlighted
option of each list is its value, marked ●: ↑/↓ choose, Tab or ←/→ go to the next list,
Enter applies all three, Escape cancels.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ..annotation.session import STATUSES

ANY = ""  # option id of "any domain" / "any subtopic"


class FilterScreen(ModalScreen[dict | None]):
    CSS_PATH = ["modal.tcss", "filter_screen.tcss"]
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "apply", "Apply", priority=True),
        Binding("right,space", "next_list", "Next list"),
        Binding("left", "previous_list", "Previous list"),
    ]

    def __init__(self, domains: list[str], subtopics: Callable[[str | None], list[str]], current, words=None):
        super().__init__()
        self.domains, self.subtopics_of, self.current = domains, subtopics, current
        # the lists' captions in the kind's words ("Bias type", "Template file"); domain and subtopic by default
        self.titles = {
            "domain": words.domain if words is not None else "domain",
            "subtopic": words.subtopic if words is not None else "subtopic",
            "status": "status",
        }
        self.values = {"domain": current.domain or ANY, "subtopic": current.subtopic or ANY, "status": current.status}

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="filter-dialog"):
            yield Static("Filter items", classes="dialog-title")
            with Horizontal(id="filter-lists"):
                for name, title in self.titles.items():
                    with Vertical(classes="filter-column", id=f"filter-column-{name}"):
                        yield Label(title[:1].upper() + title[1:], classes="filter-label")
                        yield OptionList(id=f"filter-{name}")
            yield Static("↑↓ choose · Tab/→ next list · Enter: apply · Escape: cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self._fill("domain", [ANY, *self.domains])
        self._fill("subtopic", [ANY, *self.subtopics_of(self.values["domain"] or None)])
        self._fill("status", list(STATUSES))
        self.query_one("#filter-domain", OptionList).focus()

    def _prompt(self, name: str, value: str) -> Text:
        shown = value or "(any)"
        # names are not markup; one longer than its list is cut with "…", never broken mid-word onto a second line
        return Text(("● " if self.values[name] == value else "  ") + shown, no_wrap=True, overflow="ellipsis")

    def _fill(self, name: str, values: list[str]) -> None:
        if self.values[name] not in values:
            self.values[name] = values[0]
        widget = self.query_one(f"#filter-{name}", OptionList)
        widget.clear_options()
        widget.add_options([Option(self._prompt(name, v), id=f"{name}:{v}") for v in values])
        widget.highlighted = values.index(self.values[name])

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        name, _, value = (event.option.id or "").partition(":")
        if name not in self.values or self.values[name] == value:
            return
        self.values[name] = value
        widget = event.option_list
        for index in range(widget.option_count):
            option = widget.get_option_at_index(index)
            widget.replace_option_prompt_at_index(index, self._prompt(name, option.id.partition(":")[2]))
        if name == "domain":  # the subtopics of the chosen domain only
            self._fill("subtopic", [ANY, *self.subtopics_of(value or None)])

    def action_next_list(self) -> None:
        self.focus_next(OptionList)

    def action_previous_list(self) -> None:
        self.focus_previous(OptionList)

    def action_apply(self) -> None:
        self.dismiss(
            {
                "domain": self.values["domain"] or None,
                "subtopic": self.values["subtopic"] or None,
                "status": self.values["status"] or "all",
            }
        )

    def action_cancel(self) -> None:
        self.dismiss(None)

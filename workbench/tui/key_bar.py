"""The key bar at the bottom of the labelling screen, fitted to the terminal's width.

Textual's footer lays every binding out on one line and cuts it where the terminal ends, so
at 80 columns the help and quit keys were lost. This bar always shows the essentials (the
decisions, undo, help, quit), wrapping onto a second line on narrow terminals, and adds the
other keys only where they fit without taking another line.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

SEPARATOR = "  "


def fit_keys(entries: list[tuple[str, str, bool]], width: int) -> list[list[tuple[str, str]]]:
    """Lines of (key, caption) for `entries` = (key, caption, essential) in display order:
    every essential entry, plus the optional ones, earliest first, that add no line."""

    def layout(chosen: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
        lines: list[list[tuple[str, str]]] = [[]]
        used = 0
        for key, caption in chosen:
            size = cell_len(key) + 1 + cell_len(caption)
            extra = size if not lines[-1] else len(SEPARATOR) + size
            if lines[-1] and used + extra > width:
                lines.append([])
                used, extra = 0, size
            lines[-1].append((key, caption))
            used += extra
        return lines

    keep = [e for e in entries if e[2]]
    lines = layout([(k, c) for k, c, _ in keep])
    for entry in entries:
        if entry[2]:
            continue
        trial = [e for e in entries if e[2] or e in keep or e is entry]
        if len(layout([(k, c) for k, c, _ in trial])) <= len(lines):
            keep.append(entry)
    return layout([(k, c) for k, c, essential in entries if essential or (k, c, essential) in keep])


class KeyBar(Static):
    """Draws `fit_keys` for its own width whenever the terminal is resized."""

    def __init__(self, entries: list[tuple[str, str, bool]], **kwargs):
        super().__init__(**kwargs)
        self.entries = entries
        self.lines: list[list[tuple[str, str]]] = []

    def on_resize(self) -> None:
        self.draw()

    def on_mount(self) -> None:
        self.draw()

    def draw(self) -> None:
        width = max(10, self.content_region.width or self.app.size.width - 2)
        self.lines = fit_keys(self.entries, width)
        text = Text(no_wrap=True, overflow="crop")
        for n, line in enumerate(self.lines):
            if n:
                text.append("\n")
            for m, (key, caption) in enumerate(line):
                if m:
                    text.append(SEPARATOR)
                text.append(key, style="bold reverse")
                text.append(" " + caption)
        self.update(text)

    def plain(self) -> str:
        return "\n".join(SEPARATOR.join(f"{k} {c}" for k, c in line) for line in self.lines)

"""The labelling screen: one item at a time, one key per decision.

Laid out for small terminals: your label and where you are in the history on top, then the
item — its question, the judged text boxed with the item's id on the box's lower edge, and the
lines its kind declares (annotation/display.py) — scrolling between them and the key bar; every
new item starts scrolled to the top. An item longer than the screen takes no label until it has
been scrolled to its end, and below a minimum size the screen says so and refuses label keys:
nobody labels what they have not seen. The line above the keys confirms what was saved last.
"""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from ..annotation.keys import (
    ACTION_KEYS,
    AUDIT_KEYS,
    KEY_BAR_CAPTIONS,
    KEY_BAR_ESSENTIAL,
    KEY_BAR_OPTIONAL,
    keys_for,
)
from ..annotation import display
from ..annotation.store import LabelNotSaved
from ..core.errors import WorkbenchError, display_path
from .break_screen import BreakScreen
from .filter_screen import FilterScreen
from .fix_screen import FixScreen
from .help_screen import HelpScreen, help_sections
from .key_bar import KeyBar
from .message_screen import MessageScreen
from .optout_screen import OptOutScreen
from .prompt_screen import PromptScreen
from .stats_screen import StatsScreen

KEY_DISPLAY = {"slash": "/", "question_mark": "?", "left": "←", "right": "→", "end": "End", "home": "Home"}
MIN_WIDTH, MIN_HEIGHT = 50, 15


def key_label(keys: str) -> str:
    """The first key of a binding as the annotator types it."""
    first = keys.split(",")[0].strip()
    return KEY_DISPLAY.get(first, first)


def _duration(minutes: float) -> str:
    if minutes < 1:
        return "under a minute"
    if minutes < 60:
        return f"{minutes:.0f} min"
    if minutes > 99 * 60:
        return "over 99 h"
    return f"{int(minutes // 60)} h {int(minutes % 60):02d} min"


class AnnotateScreen(Screen):
    CSS_PATH = "annotate_screen.tcss"
    BINDINGS = [Binding(key, action, desc, id=bid, show=False) for bid, key, action, desc in ACTION_KEYS] + [
        Binding("up", "scroll_item('up')", show=False),
        Binding("down", "scroll_item('down')", show=False),
        Binding("pageup", "scroll_item('pageup')", show=False),
        Binding("pagedown", "scroll_item('pagedown')", show=False),
    ]

    def __init__(self, session, annotator: str):
        super().__init__()
        self.session = session
        self.annotator = annotator
        self.too_small = False
        self._shown_item: str | None = None
        self._seen_end = False  # the item on screen was scrolled to its end (or fits)
        self._refused = False  # a label key was refused on it for that
        self._asked: str | None = None  # the question on screen
        self._drafts: dict[str, str] = {}  # item id -> a note typed whose save failed: the box reopens with it

    def compose(self) -> ComposeResult:
        yield Static(id="topbar")
        yield Static(id="state")
        yield Static(id="filters")
        with VerticalScroll(id="item", can_focus=False):
            yield Static(id="question")
            yield Static(id="hypothesis")
            yield Static(id="context")
        yield Static(id="more")
        yield Static(id="saved")
        yield KeyBar(self._key_bar_entries(), id="keybar")
        yield Static(id="too-small")

    def _key_bar_entries(self) -> list[tuple[str, str, bool]]:
        keymap = self.app.effective_keys()
        scheme = self.session.scheme
        entries = [(key_label(keymap[c.binding_id]), c.id, True) for c in scheme.choices]
        entries.append((key_label(keymap["undo"]), KEY_BAR_CAPTIONS["undo"], True))
        if self.session.fix_fields:
            entries += [(key_label(keymap[b]), KEY_BAR_CAPTIONS[b], True) for b in AUDIT_KEYS]
        entries += [(key_label(keymap[b]), KEY_BAR_CAPTIONS[b], False) for b in KEY_BAR_OPTIONAL]
        entries += [(key_label(keymap[b]), KEY_BAR_CAPTIONS[b], True) for b in KEY_BAR_ESSENTIAL if b != "undo"]
        return entries

    def on_mount(self) -> None:
        # The boxed text's caption, as Label Studio heads it ("first sentence", "hypothesis"): the
        # lines below it ("paired with") refer to it by that name.
        self.query_one("#hypothesis", Static).border_title = display.text_name(self.session.words).line
        self._check_size(self.app.size.width, self.app.size.height)
        self.watch(self.query_one("#item", VerticalScroll), "scroll_y", self._scrolled, init=False)
        self.refresh_view()

    def on_resize(self, event) -> None:
        self._check_size(event.size.width, event.size.height)
        self.call_after_refresh(self._draw_more)
        self.call_after_refresh(self._draw_lines)

    def _draw_lines(self) -> None:
        """The top bar and the state line, fitted to the width the screen has now."""
        self._draw_topbar()
        self._draw_state(self.session.current)

    # -- an item longer than the screen ------------------------------------------------------
    def _scrolled(self, _old: float, _new: float) -> None:
        scroll = self.query_one("#item", VerticalScroll)
        if scroll.max_scroll_y > 0 and scroll.scroll_y >= scroll.max_scroll_y:
            self._seen_end = True
        self._draw_more()

    def item_cut(self) -> bool:
        """True while part of the item is below the screen and has not been scrolled to."""
        scroll = self.query_one("#item", VerticalScroll)
        return scroll.max_scroll_y > 0 and not self._seen_end and self.session.current is not None

    def _draw_more(self, refused: bool = False) -> None:
        more = self.query_one("#more", Static)
        self._refused = (self._refused or refused) and self._shown_item is not None
        refused = self._refused
        cut = self.item_cut()
        self.set_class(cut, "cut")
        more.set_class(refused, "refused")
        if cut:
            scroll = self.query_one("#item", VerticalScroll)
            below = max(1, math.ceil(scroll.max_scroll_y - scroll.scroll_y))
            more.update(
                f"Not labelled yet: ▼ {below} more line(s) below (↓ PgDn)"
                if refused
                else f"▼ {below} more line(s) below: ↓ PgDn to read, then label"
            )

    def _check_size(self, width: int, height: int) -> None:
        self.too_small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.set_class(self.too_small, "too-small")
        self.set_class(height <= 24, "compact")  # no blank line under the box: one more line of the item fits
        if self.too_small:
            self.query_one("#too-small", Static).update(
                f"The terminal is {width}×{height}: labelling needs at least {MIN_WIDTH}×{MIN_HEIGHT} so that the "
                "whole item is on screen. Enlarge the window or make the font smaller.\n\n"
                "Label keys do nothing until then. Your labels are saved; q quits."
            )

    # -- drawing ---------------------------------------------------------------------------
    def refresh_view(self) -> None:
        s = self.session
        self._draw_topbar()
        item = s.current
        question = self.query_one("#question", Static)
        hyp = self.query_one("#hypothesis", Static)
        context = self.query_one("#context", Static)
        if item is None:
            said = (
                f"End of the {len(s.visible)} item(s) in view."
                if s.review_filter and s.visible
                else "Nothing to label here: every item in view is labelled."
            )
            self._asked = ""
            question.update("")
            hyp.update(Text(f"{said} Change the filter (d), go back (←), or quit (q).", style="bold green"))
            hyp.border_subtitle = None
            context.update("")
        else:
            asked = display.question(item, s.words, s.scheme)
            if asked != self._asked:  # most kinds ask every item the same: no relayout for it
                self._asked = asked
                question.update(Text(asked, style="italic"))
            text = Text(item.hypothesis, style="bold")
            for a, b in item.fill_spans:
                text.stylize("reverse yellow", a, b)
            hyp.update(text)
            # The item's id (a renewal's: the published benchmark's own id) on the box's lower edge:
            # no line of the item for it, and it never wraps (a 32-character id fits at 50 columns).
            hyp.border_subtitle = Text(f"id {item.id}")
            context.update(self._details(item))
        self._draw_state(item)
        self._draw_filters()
        shown = item.id if item else None
        if shown != self._shown_item:
            self._shown_item = shown
            self._seen_end = self._refused = False
            self.query_one("#item", VerticalScroll).scroll_home(animate=False, immediate=True)
        self.call_after_refresh(self._draw_more)

    def say_saved(self, text: Text | str) -> None:
        """The one-line confirmation above the keys: what the latest key press wrote."""
        self.query_one("#saved", Static).update(text)
        self.set_class(True, "has-saved")

    def _said(self, verb: str, what: str | None, item) -> Text:
        room = max(12, self.app.size.width - 2 - len(verb) - 2 - (len(what) + 4 if what else 0) - 2)
        hyp = item.hypothesis if len(item.hypothesis) <= room else item.hypothesis[: room - 1] + "…"
        line = Text()
        line.append(f"{verb}: ", style="bold green" if verb.startswith("✓") else "bold yellow")
        if what:
            line.append(what, style="bold")
            line.append(" on ")
        line.append(f"“{hyp}”")
        return line

    def _draw_topbar(self) -> None:
        p = self.session.progress()
        done, total = p["done"], p["total"]
        share = done / total if total else 1.0
        # Never a full bar or 100% before the last item: 19,990 of 20,007 is 99%, not 100%.
        percent = 100 if done >= total else min(99, math.floor(100 * share))
        filled = 10 if done >= total else min(9, math.floor(10 * share))
        bar = "━" * filled + "─" * (10 - filled)
        pace = (
            f"{p['rate_per_min']:.1f}/min · ETA {_duration(p['eta_min'])}"
            if p["rate_per_min"]
            else "ETA after a few labels"
        )
        if done >= total:  # nothing left to estimate
            pace = ""
        width = self.app.size.width - 2
        who = f"{self.annotator} (adjudicating)" if self.session.adjudicating else self.annotator
        parts = [who, f"{done}/{total} labelled", f"{bar} {percent}%", pace, f"{p['session']} this session"]
        for drop in (None, 4, 2, 0):  # what goes first when the line is too long
            if drop is not None:
                parts[drop] = ""
            line = " · ".join(x for x in parts if x)
            if len(line) <= width:
                break
        self.query_one("#topbar", Static).update(line)

    def _draw_state(self, item) -> None:
        s = self.session
        parts: list[tuple[str, str, int]] = []  # (text, style, which goes first when too long: 1 first, 0 never)
        if item is not None:
            decision = s.decision(item)
            parts += [("yours: ", "dim", 0), (decision or "unlabelled", "bold cyan" if decision else "italic", 0)]
            state = s.state(item)
            if state and state.flag:
                parts.append(("  ⚑ flagged", "bold red", 0))
            parts.append(("  ·  ", "", 0))
        if s.reviewing:
            k, n = s.history_position()
            parts += [(f"◀ REVIEWING HISTORY {k}/{n}", "bold reverse", 0), (" → newer · End: newest", "dim", 1)]
        elif s.review_filter:
            at = f"{s.cursor + 1}/{len(s.visible)}" if s.cursor is not None and s.visible else "end"
            parts.append((f"● filtered view {at}", "bold green", 0))
        else:
            parts.append(("● newest item", "bold green", 0))
            if s.trail:
                parts.append((f" · ← {len(s.trail)} earlier", "dim", 1))
        self.set_class(s.reviewing, "reviewing")
        self.query_one("#state", Static).update(fit_line(parts, self.app.size.width - 2))

    def _draw_filters(self) -> None:
        s = self.session
        f = s.filters
        w = display.words_of(s.words)
        parts = [
            f"{w.domain}={f.domain}" if f.domain else "",
            f"{w.subtopic}={f.subtopic}" if f.subtopic else "",
            f"status={f.status}" if f.status != "all" else "",
            f"search={f.search!r}" if f.search else "",
            f"opted out: {', '.join(sorted(s.opt_out))}" if s.opt_out else "",
        ]
        shown = " · ".join(p for p in parts if p)
        self.set_class(bool(shown), "filtered")
        if shown:
            self.query_one("#filters", Static).update(f"{len(s.visible)} in view · {shown}")

    def _details(self, item) -> Table:
        """The item's lines as its kind declares them, captions in a column so wrapped lines stay aligned."""
        s = self.session
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(ratio=1)
        shell = []
        state = s.state(item)
        if state and state.note:
            shell.append(("note", state.note))
        if state and state.fix:
            shell.append(("your fix", s.fix_line(state.fix)))
        if item.dispute:
            d = item.dispute
            shell.append(("others", ", ".join(f"{a}: {c}" for a, c in sorted(d.votes.items()))))
            shell += [("their note", f"{a}: {note}") for a, note in sorted(d.notes.items())]
            shell += [("their fix", f"{a}: {s.fix_line(fix)}") for a, fix in sorted(d.fixes.items())]
            if d.flagged_by:
                shell.append(("flagged by", ", ".join(d.flagged_by)))
        lines = display.lines(item, s.words, model_results=s.show_model_results)
        plain = [line for line in lines if not line.model]
        for line in plain:
            for n, value in enumerate(line.values, start=1):
                name = f"{line.name} {n}" if len(line.values) > 1 else line.name
                grid.add_row(name, value)
        for name, text in shell:
            grid.add_row(name, text)
        for line in lines:
            if line.model:
                for value in line.values:
                    grid.add_row(line.name, value)
        return grid

    def _guard(self, fn, *args):
        """Run a session call; a failure becomes a message, never a crash. Nothing of a call
        that failed to save is applied, so the item it was about stays on screen."""
        try:
            result = fn(*args)
        except LabelNotSaved as exc:
            self.app.bell()
            self.app.push_screen(
                MessageScreen(
                    "Not saved",
                    f"{exc.cause} — {exc.what} NOT saved. {exc.remedy}, then "
                    f"press the key again.\n\n(writing {display_path(exc.path)})",
                    error=True,
                )
            )
            return None
        except WorkbenchError as exc:
            self.app.push_screen(MessageScreen("Could not do that", str(exc), error=True))
            return None
        except OSError as exc:
            self.app.push_screen(
                MessageScreen(
                    "Could not save",
                    f"{exc.strerror or exc}: {getattr(exc, 'filename', '')}\n"
                    "Nothing was recorded for this key; fix the problem and press it again.",
                    error=True,
                )
            )
            return None
        return result

    def _ready(self) -> bool:
        """False (with a bell) while the terminal is too small to show the item."""
        if self.too_small:
            self.app.bell()
        return not self.too_small

    # -- actions ---------------------------------------------------------------------------
    def action_decide(self, category: str) -> None:
        if self.session.fix_fields and category == self.session.fix_choice:
            self.action_edit()  # a fix needs its corrected text: the editor opens
            return
        if not self._ready():
            return
        item = self.session.current
        if item is None:
            self.app.bell()  # nothing in view to label; the screen already says what to do
            return
        if self.item_cut():  # part of the item is below the screen: read it all first
            self.app.bell()
            self._draw_more(refused=True)
            return
        event = self._guard(self.session.decide, category)
        if event is not None:
            self.app.acknowledge(event)
            self.say_saved(self._said("✓ saved", category, item))
        self.refresh_view()
        if event is not None and self.session.break_due():
            self.session.took_break()
            self.app.push_screen(BreakScreen(self.session.session_labels))

    def action_undo(self) -> None:
        if not self._ready():
            return
        undone = self._guard(self.session.undo)
        if undone is None:
            self.notify("Nothing to undo: you have no labels on the items of this queue.")
        else:
            self.app.acknowledge(undone.event)
            self.say_saved(self._said("↶ undone", undone.undone, undone.item))
            # The line above the keys says what was undone; a toast only for what it cannot say.
            more = []
            if undone.restored:
                more.append(f"your earlier label {undone.restored} is back")
            if not undone.in_view:
                more.append("the item is outside the current filter")
            if more:
                self.notify(f"Undone: {undone.undone}; " + "; ".join(more))
        self.refresh_view()

    def action_skip(self) -> None:
        if self._ready():
            self.session.skip()
            self.refresh_view()

    def action_back(self) -> None:
        if not self._ready():
            return
        if not self.session.back():
            self.notify("This is the start of your history.")
        self.refresh_view()

    def action_forward(self) -> None:
        if not self._ready():
            return
        if not self.session.forward():
            self.notify("Already at the newest item.")
        self.refresh_view()

    def action_newest(self) -> None:
        if self._ready():
            self.session.newest()
            self.refresh_view()

    def action_scroll_item(self, how: str) -> None:
        scroll = self.query_one("#item", VerticalScroll)
        {
            "up": scroll.scroll_up,
            "down": scroll.scroll_down,
            "pageup": scroll.scroll_page_up,
            "pagedown": scroll.scroll_page_down,
        }[how](animate=False)

    def action_note(self) -> None:
        if not self._ready() or self.session.current is None:
            return
        state = self.session.state()
        item = self.session.current

        def save(text: str | None) -> None:
            if text is not None:
                event = self._guard(self.session.note, text)
                if event is None:  # not saved: the text typed waits in the box for the next try
                    self._drafts[item.id] = text
                else:
                    self._drafts.pop(item.id, None)
                    self.app.acknowledge(event)
                    self.say_saved(self._said("✓ saved", "note" if text.strip() else "note cleared", item))
            self.refresh_view()

        saved = (state.note or "") if state else ""
        self.app.push_screen(PromptScreen("Note on this item", self._drafts.get(item.id, saved)), save)

    def action_edit(self) -> None:
        """An audit's fix: the editor opens with the item's texts; saving labels the item fix with them."""
        if not self._ready():
            return
        if not self.session.fix_fields:
            self.notify("Editing is for audits (a project made by `workbench import`).")
            return
        item = self.session.current
        if item is None or self.item_cut():
            self.app.bell()
            return

        def save(texts: dict | None) -> None:
            if texts is not None:
                event = self._guard(self.session.propose_fix, texts)
                if event is not None:
                    self.app.acknowledge(event)
                    self.say_saved(self._said("✓ saved", self.session.fix_choice, item))
            self.refresh_view()

        self.app.push_screen(FixScreen(self.session.fix_texts()), save)

    def action_flag(self) -> None:
        if not self._ready():
            return
        item = self.session.current
        event = self._guard(self.session.toggle_flag)
        if event is not None:
            self.app.acknowledge(event)
            self.say_saved(self._said("✓ saved", "flag" if event.get("flag") else "flag removed", item))
        self.refresh_view()

    def action_filter(self) -> None:
        if not self._ready():
            return

        def apply(values: dict | None) -> None:
            if values is not None:
                self.session.set_filters(**values)
            self.refresh_view()

        s = self.session
        self.app.push_screen(FilterScreen(s.domains(), s.subtopics, s.filters, display.words_of(s.words)), apply)

    def action_search(self) -> None:
        if not self._ready():
            return

        def apply(text: str | None) -> None:
            if text is not None:
                self.session.set_filters(search=text.strip())
            self.refresh_view()

        current = self.session.filters.search
        self.app.push_screen(
            PromptScreen(
                f"Search {display.words_of(self.session.words).search}",
                "",
                placeholder=f"now: {current} (Enter on empty shows all)" if current else "a word or a phrase",
                hint="Enter: search · Enter on empty: show all · Escape: cancel",
            ),
            apply,
        )

    def action_opt_out(self) -> None:
        if not self._ready():
            return
        s = self.session
        before = set(s.opt_out)

        def apply(domains: set[str] | None) -> None:
            if domains is not None and self._guard(s.set_opt_out, domains) and set(s.opt_out) != before:
                out, back = sorted(s.opt_out - before), sorted(before - s.opt_out)
                said = []
                if out:
                    said.append(f"opted out of {', '.join(out)}: those items are hidden from you")
                if back:
                    said.append(f"opted back in to {', '.join(back)}")
                self.notify("You " + "; ".join(said) + ". Saved for your next sessions too; o changes it.")
            self.refresh_view()

        current = s.current.domain if s.current else None
        self.app.push_screen(
            OptOutScreen(s.domain_counts(), s.fixed_opt_out, s.own_opt_out, current, display.words_of(s.words)), apply
        )

    def action_stats(self) -> None:
        self.app.push_screen(StatsScreen(self.session.stats(), display.words_of(self.session.words).template))

    def action_help(self) -> None:
        keymap = self.app.effective_keys()
        captions = {
            c.binding_id: caption
            for c, (_id, caption) in zip(
                self.session.scheme.choices, display.choice_captions(self.session.scheme, self.session.words)
            )
        }
        ids = {c.binding_id: c.id for c in self.session.scheme.choices}
        said = display.key_descriptions(self.session.words)  # the keys whose words are the kind's
        rows = [
            (
                ", ".join(KEY_DISPLAY.get(k, k) for k in keymap[bid].split(",")),
                f"{ids[bid]}: {captions[bid]}" if bid in captions else said.get(bid, desc),
            )
            for bid, _key, _action, desc in keys_for(self.session.scheme)
            if self.session.fix_fields or bid not in AUDIT_KEYS
        ]
        self.app.push_screen(
            HelpScreen(
                rows,
                help_sections(
                    self.session.scheme, self.session.show_model_results, self.session.words, self.session.current
                ),
            )
        )

    def action_quit(self) -> None:
        self.app.exit()


def screen_for(scheme) -> type[AnnotateScreen]:
    """The labelling screen with the scheme's decision keys bound (one per choice)."""
    decisions = [
        Binding(key, action, desc, id=bid, show=False)
        for bid, key, action, desc in keys_for(scheme)[: len(scheme.choices)]
    ]
    # __module__ keeps CSS_PATH resolving next to this file for the generated class.
    return type(f"AnnotateScreen_{scheme.name}", (AnnotateScreen,), {"BINDINGS": decisions, "__module__": __name__})


SHORTER = {"  ⚑ flagged": " ⚑", "◀ REVIEWING HISTORY ": "◀ HISTORY ", "  ·  ": " · "}


def fit_line(parts: list[tuple[str, str, int]], width: int) -> Text:
    """The parts as one styled line of at most `width` cells: hints (rank 1) go first, then the
    long words get their short forms (SHORTER), then the end is cut with "…"; a line that fits
    is kept whole."""
    kept = list(parts)
    if sum(len(t) for t, _, _ in kept) > width:
        kept = [p for p in kept if p[2] != 1]
    if sum(len(t) for t, _, _ in kept) > width:
        kept = [(next((t.replace(a, b) for a, b in SHORTER.items() if t.startswith(a)), t), st, r) for t, st, r in kept]
    line = Text()
    for text, style, _ in kept:
        line.append(text, style=style)
    if line.cell_len > width:
        line.truncate(max(width, 1), overflow="ellipsis")
    return line

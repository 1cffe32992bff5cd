"""One annotator's labelling session, independent of any UI.

It owns the queue (unique hypotheses), the annotator's label store, the filters, the
cursor and the history (which reaches labels of earlier sessions), the annotator's own
opt-outs and the progress figures; the Textual app only draws it and maps
keys to its methods, so everything here is tested without a terminal.
"""

from __future__ import annotations

import bisect
import gc
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import InputError, display_path
from ..core.labels import LabelScheme
from .policy import final_labels
from .store import LabelStore, load_all

STATUSES = ("all", "unlabelled", "labelled", "flagged")


@dataclass
class Filters:
    domain: str | None = None
    subtopic: str | None = None
    status: str = "all"
    search: str = ""


@dataclass
class Dispute:
    """What an adjudicator sees of the annotators on a disputed item."""

    votes: dict[str, str]  # annotator -> choice id
    notes: dict[str, str] = field(default_factory=dict)  # annotator -> note
    flagged_by: list[str] = field(default_factory=list)
    fixes: dict[str, dict] = field(default_factory=dict)  # annotator -> the corrected text they propose


@dataclass
class Item:
    """One thing to label. Every kind's queue has the first columns; the premise, group and
    model columns are context some kinds give (others leave them empty)."""

    id: str
    hypothesis: str  # the text to judge
    domain: str
    subtopic: str
    template_id: str
    position: int
    fill_spans: list[tuple[int, int]] = field(default_factory=list)
    masked_template: str = ""
    group: str | None = None
    counterfactual_group: str | None = None
    stance: str = ""
    premises: list[str] = field(default_factory=list)
    fooled: list[dict] = field(default_factory=list)
    n_samples: int = 1
    fluency: float | None = None
    dispute: Dispute | None = None  # adjudication: the annotators' votes, notes and flags
    details: list[tuple[str, str]] = field(default_factory=list)  # (label, text) a kind shows beside the text
    # Every domain the item is in (a template crossed with two identity groups is in both):
    # filters and opt-outs read these; `domain` is the first. Default: (domain,).
    domains: tuple[str, ...] = ()

    def __post_init__(self):
        self.domains = tuple(self.domains) or (self.domain,)


# The Item fields of a queue row kept as plain values (CHEAP): each read from its column, which is
# converted to Python values for every row on the first read of any row's (a million rows at
# start-up: only the ids are needed before the first item is shown). The others (fill_spans,
# premises, fooled, details) are lists or structs, converted for one row when it is first used.
CHEAP = (
    "hypothesis",
    "domain",
    "subtopic",
    "template_id",
    "position",
    "masked_template",
    "group",
    "counterfactual_group",
    "stance",
    "n_samples",
    "fluency",
    "domains",
)


class _Columns:
    """A queue table's CHEAP columns, read a row at a time for the first reads of a column (the
    items shown one after another) and converted whole once a column is read often (a pass over
    every item: a filter, the opt-out screen)."""

    WHOLE_AFTER = 1000  # reads of one column, row by row, before it is converted whole

    def __init__(self, table):
        self.table, self.names, self.done, self.reads = table, set(table.column_names), {}, {}

    def _raw(self, name: str, rows: slice | int):
        if name not in self.names:
            return None if isinstance(rows, int) else [None] * self.table.num_rows
        column = self.table.column(name)
        return column[rows].as_py() if isinstance(rows, int) else column.to_pylist()

    @staticmethod
    def _value(name: str, v, domain=None):
        if name == "domains":
            return tuple(v) if v else (domain,)
        if name in ("template_id", "masked_template", "stance"):
            return v or ""
        if name == "n_samples":
            return v or 1
        return v

    def value(self, name: str, row: int):
        values = self.done.get(name)
        if values is not None:
            return values[row]
        self.reads[name] = self.reads.get(name, 0) + 1
        if self.reads[name] <= self.WHOLE_AFTER:
            return self._value(name, self._raw(name, row), self.value("domain", row) if name == "domains" else None)
        raw = self._raw(name, slice(None))
        if name == "domains":
            domain = [self.value("domain", k) for k in range(len(raw))]
            values = [self._value(name, v, d) for v, d in zip(raw, domain)]
        elif name in ("template_id", "masked_template", "stance", "n_samples"):
            values = [self._value(name, v) for v in raw]
        else:
            values = raw
        self.done[name] = values
        return values[row]


def _cheap(name: str) -> property:
    def get(self):
        found = self.__dict__.get(name, _cheap)
        return self._columns.value(name, self._row) if found is _cheap else found

    def set(self, value):
        self.__dict__[name] = value

    return property(get, set)


class QueueItem(Item):
    """An Item of a queue table (made by items_from_table) whose fields are read from its row of
    the table on first use (a field set on it is its own)."""

    def _lazy(self, name: str):
        cached = self.__dict__.get("_" + name)
        if cached is None:
            names = self._table.column_names
            value = self._table.column(name)[self._row].as_py() if name in names else None
            if name == "fill_spans":
                cached = [tuple(x) for x in value or ()]
            elif name == "fooled":
                cached = [{**f, "labels": dict(f.get("labels") or [])} for f in value or ()]
            elif name == "details":
                cached = [(d["label"], d["text"]) for d in value or ()]
            else:
                cached = list(value or ())
            self.__dict__["_" + name] = cached
        return cached

    fill_spans = property(lambda self: self._lazy("fill_spans"))
    premises = property(lambda self: self._lazy("premises"))
    fooled = property(lambda self: self._lazy("fooled"))
    details = property(lambda self: self._lazy("details"))
    _table = property(lambda self: self._columns.table)


for _name in CHEAP:
    setattr(QueueItem, _name, _cheap(_name))


def items_from_table(table, order: str = "template") -> list[Item]:
    """Queue rows (a pyarrow table) as Items, in queue order or most fluent first.

    Only the ids are read for every row, with the garbage collector paused (a million rows make
    a million objects; collections triggered while building them doubled start-up); every other
    field is read from its column on first use (QueueItem)."""
    columns = _Columns(table)
    ids = table.column("item_id").to_pylist() if "item_id" in columns.names else [None] * table.num_rows
    paused = gc.isenabled()
    gc.disable()
    try:
        new, items = object.__new__, []
        for row, item_id in enumerate(ids):  # no __init__ per row: a third faster for 20K items
            item = new(QueueItem)
            item.__dict__ = {"id": item_id, "dispute": None, "_columns": columns, "_row": row}
            items.append(item)
    finally:
        if paused:
            gc.enable()
    if order == "fluency":
        items.sort(key=lambda i: (-(i.fluency if i.fluency is not None else float("-inf")), i.position))
    return items


def load_items(ws, order: str = "template", stage: str = "queue") -> list[Item]:
    """The items of a workspace's queue as last written (tests, benchmarks, tools)."""
    return items_from_table(ws.read(stage), order)


@dataclass
class Undone:
    """What an undo did, so the UI can say it: which decision went, which one is back."""

    event: dict  # the undo event written
    item: Item
    undone: str | None  # the decision taken back (choice id)
    restored: str | None  # the earlier decision in force again, if the item had one
    in_view: bool  # False when the current filters hide the item


MIN_LABELS_FOR_RATE = 5  # fewer labels, or under a minute, give no meaningful rate
MIN_SECONDS_FOR_RATE = 60


class Session:
    def __init__(
        self,
        items: list[Item],
        store: LabelStore,
        *,
        opt_out: list[str] = (),
        adjudicate_with: dict | None = None,
        break_every_items: int = 0,
        break_every_minutes: int = 0,
        clock=time.monotonic,
        scheme: LabelScheme | None = None,
        show_model_results: bool = False,
        words=None,
        fix_fields: tuple[tuple[str, str], ...] = (),
        fix_choice: str = "fix",
    ):
        self.scheme = scheme or store.scheme
        # An audit (docs/renewing.md): the columns a proposed fix may change, each with where the item
        # shows it (the judged text or a detail label), and the choice a fix is labelled with.
        self.fix_fields, self.fix_choice = tuple(fix_fields), fix_choice
        self.words = words  # the kind's AnnotatorWords (help screen); None: generic words
        self.all_items = items
        self.store = store
        self.show_model_results = show_model_results
        self.warnings: list[str] = []
        # Opt-outs from workbench.toml / --skip-domain are fixed here; the annotator's own ones
        # live in annotations/<annotator>.settings.json so they survive a restart.
        self.fixed_opt_out = set(opt_out)
        self.settings_path = store.folder / f"{store.annotator}.settings.json"
        self.own_opt_out = set(self._read_settings().get("opt_out_domains") or []) - self.fixed_opt_out
        self.opt_out = self.fixed_opt_out | self.own_opt_out
        self.filters = Filters()
        self.adjudicating = adjudicate_with is not None
        if adjudicate_with is not None:
            for item in items:
                item.dispute = adjudicate_with.get(item.id)
            self.all_items = [i for i in items if i.id in adjudicate_with]
        self.by_id = {i.id: i for i in self.all_items}
        self._order_cache: dict[str, int] | None = None
        self.clock = clock
        self.started = clock()
        self.session_labels = 0
        self._mine: set[str] = set()  # label events written by this session
        # The trail: items this annotator labelled or skipped, oldest first, each once, seeded
        # from the label file so history and undo reach earlier sessions. `review` is an
        # index into it while reviewing; None means "at the newest item" (the frontier).
        self.trail = self._trail_from_store()
        self._in_trail = set(self.trail)
        self.review: int | None = None
        self.break_every_items = break_every_items
        self.break_every_minutes = break_every_minutes
        self._last_break = (clock(), 0)
        self._refresh()
        self.cursor, self.resume_note = self._resume_point()

    # -- settings --------------------------------------------------------------------------
    def _read_settings(self) -> dict:
        try:
            data = json.loads(self.settings_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.warnings.append(
                f"{display_path(self.settings_path)} is unreadable ({type(exc).__name__}); "
                "your saved opt-outs are not applied"
            )
            return {}
        if not isinstance(data, dict) or not isinstance(data.get("opt_out_domains", []), list):
            self.warnings.append(f"{display_path(self.settings_path)}: opt_out_domains must be a list; ignored")
            return {}
        return data

    def _write_settings(self) -> None:
        """Replace the settings file atomically (write aside, fsync, rename)."""
        data = {"annotator": self.store.annotator, "opt_out_domains": sorted(self.own_opt_out)}
        self.settings_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.settings_path.with_name(self.settings_path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.settings_path)

    # -- what is shown ---------------------------------------------------------------------
    def opted_out(self, item: Item, opt_out: set[str] | None = None) -> bool:
        """True when the annotator opted out of any domain the item is in."""
        return not (self.opt_out if opt_out is None else opt_out).isdisjoint(item.domains)

    def _visible(self, item: Item) -> bool:
        f = self.filters
        if self.opted_out(item):
            return False
        if f.domain and f.domain not in item.domains:
            return False
        if f.subtopic and item.subtopic != f.subtopic:
            return False
        state = self.store.states.get(item.id)
        if f.status == "unlabelled" and state and state.label:
            return False
        if f.status == "labelled" and not (state and state.label):
            return False
        if f.status == "flagged" and not (state and state.flag):
            return False
        if f.search and f.search.lower() not in (item.hypothesis + " " + item.masked_template).lower():
            return False
        return True

    def _refresh(self) -> None:
        """The view and the progress counts, in one pass over the items (20K at every start);
        where nothing hides an item (no opt-out, no filter), the view is every item and only the
        labelled ones are counted (a million items at start-up: no pass over them)."""
        states, opt_out, visible = self.store.states, self.opt_out, []
        if not opt_out and self.filters == Filters():
            by_id = self.by_id
            self.visible = list(self.all_items)
            self._done = sum(1 for item, state in states.items() if state.label and item in by_id)
            self._total = len(self.all_items)
            return
        done = total = 0
        for item in self.all_items:
            if self.opted_out(item, opt_out):
                continue
            total += 1
            state = states.get(item.id)
            done += bool(state and state.label)
            if self._visible(item):
                visible.append(item)
        self.visible, self._done, self._total = visible, done, total

    def _is_labelled(self, item: Item) -> bool:
        state = self.store.states.get(item.id)
        return bool(state and state.label)

    def _next_unlabelled(self, after: int) -> int | None:
        n = len(self.visible)
        for step in range(1, n + 1):
            i = (after + step) % n
            if not self._is_labelled(self.visible[i]):
                return i
        return None

    def _trail_from_store(self) -> list[str]:
        """Labelled items of this queue, in the order of the label now in force for each."""
        place = self.store.place
        ordered = sorted(
            (place(s.label_event), item) for item, s in self.store.states.items() if s.label and item in self.by_id
        )
        return [item for _, item in ordered]

    def _resume_point(self) -> tuple[int | None, str]:
        """Where a restarted session starts: after the annotator's latest label, so items
        skipped earlier come back at the end (as they do within a session) — and say so."""
        if not self.visible:
            return None, ""
        if not self.trail:  # nothing labelled yet: the first unlabelled item, found without an index of the view
            return self._next_unlabelled(-1), ""
        index = {i.id: k for k, i in enumerate(self.visible)}
        last = next((i for i in reversed(self.trail) if i in index), None)
        if last is None:
            return self._next_unlabelled(-1), ""
        k = index[last]
        cursor = self._next_unlabelled(k)
        earlier = sum(1 for i in self.visible[:k] if not self._is_labelled(i))
        if cursor is None or not earlier:
            return cursor, ""
        if cursor < k:
            return cursor, (
                f"Everything after your last label is done: now the {earlier} earlier item(s) "
                "you skipped (or did not reach)."
            )
        return cursor, (
            f"Resuming after your last label. {earlier} earlier item(s) you skipped (or did not "
            "reach) come back after the end of the queue."
        )

    @property
    def frontier(self) -> Item | None:
        """The newest item: the next one to label when not reviewing history."""
        if self.cursor is None or not self.visible:
            return None
        return self.visible[min(self.cursor, len(self.visible) - 1)]

    @property
    def current(self) -> Item | None:
        if self.review is not None:
            return self.by_id[self.trail[self.review]]
        return self.frontier

    @property
    def reviewing(self) -> bool:
        return self.review is not None

    def history_position(self) -> tuple[int, int]:
        """(place of the reviewed item in the history, 1-based; length of the history)."""
        return (self.review + 1 if self.review is not None else len(self.trail)), len(self.trail)

    def state(self, item: Item | None = None):
        item = item or self.current
        return self.store.states.get(item.id) if item else None

    def decision(self, item: Item | None = None) -> str | None:
        """The choice id of the annotator's label in force on the item, if any."""
        state = self.state(item)
        return self.scheme.category(state.label, state.stance) if state and state.label else None

    # -- moving ----------------------------------------------------------------------------
    def _reachable(self, item_id: str, frontier: str | None) -> bool:
        return item_id != frontier and not self.opted_out(self.by_id[item_id])

    def _add_to_trail(self, item_id: str) -> None:
        if item_id in self._in_trail:
            self.trail.remove(item_id)
        self.trail.append(item_id)
        self._in_trail.add(item_id)

    @property
    def review_filter(self) -> bool:
        """The view holds labelled items on purpose (status labelled or flagged): moving on goes
        to the next item in view, not to the next unlabelled one (there may be none)."""
        return self.filters.status in ("labelled", "flagged")

    def advance(self) -> None:
        """To the next item this annotator has not labelled (wrapping), or to none; in a review
        filter, to the next item in view, or to none at its end."""
        self.review = None
        start = self.cursor if self.cursor is not None else -1
        if not self.visible:
            return
        if self.review_filter:
            self.cursor = start + 1 if start + 1 < len(self.visible) else None
        else:
            self.cursor = self._next_unlabelled(start)

    def skip(self) -> None:
        """Leave the newest item unlabelled for now (it comes back after the rest); while
        reviewing history, the same as forward."""
        if self.review is not None:
            self.forward()
            return
        item = self.frontier
        if item is not None:
            self._add_to_trail(item.id)
            self.advance()

    def back(self) -> bool:
        """One item back in the history (each item once, latest decision last)."""
        frontier = self.frontier.id if self.frontier else None
        k = (self.review if self.review is not None else len(self.trail)) - 1
        while k >= 0:
            if self._reachable(self.trail[k], frontier):
                self.review = k
                return True
            k -= 1
        return False

    def forward(self) -> bool:
        """One item forward in the history; past its end, back at the newest item."""
        if self.review is None:
            return False
        frontier = self.frontier.id if self.frontier else None
        k = self.review + 1
        while k < len(self.trail):
            if self._reachable(self.trail[k], frontier):
                self.review = k
                return True
            k += 1
        self.review = None
        return True

    def newest(self) -> None:
        self.review = None

    # -- decisions -------------------------------------------------------------------------
    def fix_texts(self) -> list[tuple[str, str, str]]:
        """(column, text as published, text the editor opens with) of the current item, for
        each column a fix may change: it opens with the annotator's own fix when there is one."""
        from ..contract.kind import TEXT

        item = self.current
        if item is None or not self.fix_fields:
            return []
        state = self.state()
        own = (state.fix or {}) if state else {}
        details = dict(item.details)
        out = []
        for column, source in self.fix_fields:
            if source != TEXT and source not in details:
                continue  # a line this item does not have (a hypothesis without a question form)
            text = item.hypothesis if source == TEXT else details[source]
            out.append((column, text, own.get(column, text)))
        return out

    def fix_line(self, fix: dict[str, str]) -> str:
        """A proposed fix as one line: its texts in the order the item shows them (the fix fields'
        order; a label event stores them by column name, which is not that order: a pair's second
        sentence may sort before its first), each named by its column when the fix changes only
        some of the lines."""
        order = [column for column, _ in self.fix_fields]
        columns = [c for c in order if c in fix] + sorted(c for c in fix if c not in order)
        if set(columns) == set(order):
            return " / ".join(fix[c] for c in columns)
        return " / ".join(f"{c}: {fix[c]}" for c in columns)

    def propose_fix(self, texts: dict[str, str]) -> dict:
        """Label the current item as fixed with the texts that differ from the published ones."""
        published = {column: text for column, text, _ in self.fix_texts()}
        fix = {c: " ".join(t.split()) for c, t in texts.items() if " ".join(t.split()) != published.get(c)}
        if not fix:
            raise InputError("nothing changed: edit the text, or press the key of another decision")
        return self.decide(self.fix_choice, fix=fix)

    def decide(self, category: str, fix: dict | None = None) -> dict:
        """Label the current item (durably), then move on: to the next unlabelled item, or
        while reviewing, to the next item of the history. `fix`: the corrected texts it proposes."""
        item = self.current
        if item is None:
            raise InputError("no item to label")
        label, stance = self.scheme.decode(category)
        was_labelled = self._is_labelled(item)
        event = self.store.label(item.id, label, stance, role="adjudicator" if self.adjudicating else None, fix=fix)
        self._mine.add(event["id"])
        self.session_labels += 1
        if not was_labelled and not self.opted_out(item):
            self._done += 1
        if self.review is not None:
            if item.id not in self._in_trail:
                self._add_to_trail(item.id)
            self.forward()
            return event
        self._add_to_trail(item.id)
        if self.filters.status in ("unlabelled", "labelled"):
            self._reposition(item)  # the item may have left the view
        self.advance()
        return event

    def _latest_label(self) -> dict | None:
        """The annotator's most recent label still in force on an item of this view's queue."""

        def here(e: dict) -> bool:
            item = self.by_id.get(e["item"])
            return item is not None and not self.opted_out(item)

        return self.store.latest_label(here)

    def _visible_index(self, item: Item) -> int | None:
        """The item's place in the view, found by bisection (the view keeps queue order)."""
        order = self._order()
        k = bisect.bisect_left(self.visible, order[item.id], key=lambda i: order[i.id])
        return k if k < len(self.visible) and self.visible[k].id == item.id else None

    def _drop_from_trail(self, item_id: str) -> None:
        if self.trail and self.trail[-1] == item_id:  # the usual case (undo of the latest): O(1)
            self.trail.pop()
        else:
            self.trail.remove(item_id)
        self._in_trail.discard(item_id)

    def undo(self) -> Undone | None:
        """Undo the latest label in force (this session's or an earlier one's) and show its
        item: unlabelled again, it becomes the newest item; relabelled, its earlier label is
        back and it is shown in the history."""
        target = self._latest_label()
        if target is None:
            return None
        item = self.by_id[target["item"]]
        here = self.frontier
        event = self.store.undo(item.id)
        if target["id"] in self._mine:
            self.session_labels = max(0, self.session_labels - 1)
        restored = self.decision(item)
        if restored is None:
            self._done -= 1
            if item.id in self._in_trail:
                self._drop_from_trail(item.id)
            if self.filters.status != "all":
                self._refresh()
            index = self._visible_index(item)
            in_view = index is not None
            if in_view:
                self.cursor, self.review = index, None
            elif here is not None and self.filters.status != "all":  # stay where we were
                where = self._visible_index(here)
                self.cursor = self.cursor if where is None else where
        else:
            if item.id not in self._in_trail:
                self._add_to_trail(item.id)
            frontier = self.frontier
            self.review = None if frontier is not None and frontier.id == item.id else self.trail.index(item.id)
            in_view = self._visible(item)
        return Undone(event, item, self.scheme.category(target["label"], target.get("stance")), restored, in_view)

    def note(self, text: str) -> dict | None:
        item = self.current
        return self.store.append(item.id, "note", note=text.strip()) if item else None

    def toggle_flag(self) -> dict | None:
        item = self.current
        if not item:
            return None
        state = self.state(item)
        return self.store.append(item.id, "flag", flag=not (state and state.flag))

    def _reposition(self, item: Item) -> None:
        """Re-apply filters; point the cursor at `item`, or just before where it would be if
        it left the view, so that advancing goes on from there (in queue order)."""
        self._refresh()
        order = self._order()
        where = order[item.id]
        self.cursor = len(self.visible) - 1
        for k, i in enumerate(self.visible):
            if order[i.id] >= where:
                self.cursor = k if i.id == item.id else k - 1
                break

    def _order(self) -> dict[str, int]:
        if self._order_cache is None:
            self._order_cache = {i.id: k for k, i in enumerate(self.all_items)}
        return self._order_cache

    def set_filters(self, **changes) -> None:
        for key, value in changes.items():
            setattr(self.filters, key, value)
        self._refresh()
        self.review = None
        if self.review_filter:
            self.cursor = 0 if self.visible else None
        else:
            self.cursor = self._next_unlabelled(-1) if self.visible else None

    def set_opt_out(self, domains) -> bool:
        """The annotator's own opt-outs (those from the config stay): saved first, then applied,
        so what the screen shows is what the next session will use. True once applied."""
        item = self.frontier
        own = set(domains) - self.fixed_opt_out
        previous = self.own_opt_out
        self.own_opt_out = own
        try:
            self._write_settings()
        except OSError:
            self.own_opt_out = previous
            raise
        self.opt_out = self.fixed_opt_out | own
        self.review = None
        if item is not None and not self.opted_out(item):
            self._reposition(item)  # stay on the item, now among more or fewer others
            here = self.visible[self.cursor] if 0 <= self.cursor < len(self.visible) else None
            if here is None or here.id != item.id or self._is_labelled(here):
                self.advance()
        else:
            self._refresh()
            self.cursor = self._next_unlabelled(-1) if self.visible else None
        return True

    def opt_out_domain(self, domain: str) -> None:
        self.set_opt_out(self.own_opt_out | {domain})

    def domain_counts(self) -> dict[str, tuple[int, int]]:
        """Per domain: (items, items this annotator labelled); an item in several domains counts in each."""
        out: dict[str, list[int]] = {}
        for item in self.all_items:
            labelled = self._is_labelled(item)
            for domain in item.domains:
                c = out.setdefault(domain, [0, 0])
                c[0] += 1
                c[1] += labelled
        return {d: (c[0], c[1]) for d, c in sorted(out.items())}

    # -- figures ---------------------------------------------------------------------------
    def progress(self) -> dict:
        """Done and total leave opted-out domains out; the rate (labels per minute) and the
        ETA are None until there are enough labels and time for them to mean something."""
        done, total = self._done, self._total  # kept up to date by decide/undo/_refresh
        seconds = self.clock() - self.started
        rate = None
        if self.session_labels >= MIN_LABELS_FOR_RATE and seconds >= MIN_SECONDS_FOR_RATE:
            rate = self.session_labels / (seconds / 60)
        eta = (total - done) / rate if rate else None
        return {"done": done, "total": total, "rate_per_min": rate, "eta_min": eta, "session": self.session_labels}

    def break_due(self) -> bool:
        at, count = self._last_break
        if self.break_every_items and self.session_labels - count >= self.break_every_items:
            return True
        if (
            self.break_every_minutes
            and self.clock() - at >= 60 * self.break_every_minutes
            and self.session_labels > count
        ):
            return True
        return False

    def took_break(self) -> None:
        self._last_break = (self.clock(), self.session_labels)

    def domains(self) -> list[str]:
        return sorted({d for i in self.all_items if not self.opted_out(i) for d in i.domains})

    def subtopics(self, domain: str | None = None) -> list[str]:
        domain = domain if domain is not None else self.filters.domain
        return sorted(
            {i.subtopic for i in self.all_items if not self.opted_out(i) and (not domain or domain in i.domains)}
        )

    def stats(self) -> dict:
        """Label counts and per-template yield (share of labelled items with a choice that keeps them)."""
        counts = {c: 0 for c in self.scheme.ids}
        kept = set(self.scheme.kept_ids())
        per_template: dict[str, dict] = {}
        for item in self.all_items:
            state = self.store.states.get(item.id)
            t = per_template.setdefault(item.template_id, {"items": 0, "labelled": 0, "kept": 0})
            t["items"] += 1
            key = self.scheme.category(state.label, state.stance) if state and state.label else None
            if key:
                counts[key] += 1
                t["labelled"] += 1
                t["kept"] += key in kept
        return {"counts": counts, "templates": per_template}


def disagreements(
    folder: Path, items: list[Item], policy: str, min_votes: int, adjudicator: str | None, scheme: LabelScheme
) -> dict[str, Dispute]:
    """The items the annotators dispute (adjudications are not votes, so an adjudicated item is
    still served, showing its adjudication as the adjudicator's label), with every annotator's
    vote, note and flag."""
    states, _ = load_all(folder, scheme)
    finals = final_labels(states, [i.id for i in items], policy, min_votes, adjudicator, scheme=scheme)
    out = {}
    for item_id, final in finals.items():
        if final.disputed:
            mine = {a: s[item_id] for a, s in states.items() if item_id in s and a not in final.rulings}
            out[item_id] = Dispute(
                final.votes,
                {a: st.note for a, st in mine.items() if st.note},
                sorted(a for a, st in mine.items() if st.flag),
                {a: st.fix for a, st in mine.items() if st.fix},
            )
    return out

"""A kind's evaluator as a declaration: what one item is and how a model scores it, which
figures aggregate the scores per group, what the resampling unit is. The shared layer does the
rest, the same way for every kind that declares one: reading and checking the data file, the
loop over models with progress and cache, the figures per group, intervals and paired model
comparisons, the terminal table, CSV, items file, JSON, the chart with error bars
(`declared_report.py`), version comparison, and the release's standalone evaluate.py
(`release/runtime/declared.py`).

A kind's evaluator module defines `DECLARED = Declared(...)` and nothing else it must: the
registry finds `DECLARED.detect`, `workbench evaluate` and the release build wrap the
declaration. This module is copied into releases (a standalone evaluate.py runs it), so it
imports only the standard library, numpy and workbench's own light modules.

Every figure is a function of per-unit sums: a `Statistic` names the per-item columns it sums
(a result field, or a function of the item and its result) and the formula that turns the sums
into the figure (default: scale · Σ first / Σ second, a share or a mean). Resampling draws whole
units (a template's several items together), so a figure's interval is the bootstrap's on the
same formula; a `Gap` is the largest difference of one statistic between groups, with its
interval from the same resamples; a `difference` is one within units: the mean over units of a
value on one condition of the unit minus on another (a coreference item's pro-stereotypical
sentence against its anti-stereotypical one), each unit with both conditions counting once.

Hooks for a kind whose data or figures need more (each optional; see `Declared`): `load` reads
its own layouts (several CSV dialects, a Hub release, `--strict`) in place of the JSON-lines or
CSV reader, `recognise` says which files are its own; `fields` adds per-group figures the kind
computes itself beside the statistics (counts, a mean reported without an interval); `about`
adds per-model fields and notes (which rule scored it, how many items were settled near a
boundary); `document` adds fields to the document's head; `informative` counts the items that
carry a verdict (a tie carries none), so a group of ties is reported, not given an interval;
`summary` adds lines below the table; `chart_note` writes a note above each bar. `levels` adds
groupings beside the group (identities beside their attributes), each with its figures, table
and CSV rows (`chart_level` charts one); a statistic given at some levels only names them (`at`),
and one that is a mean over cells (each identity weighing the same) names the cell (`cells`;
with a `formula`, each column pair's mean over cells, combined by it). `places` lays the groups out
itself (a part within its section, nested in the JSON, named by `place_columns` in the CSV);
`versions` orders the measures version comparison shows; `without_removed` writes a source without
the units a renewed release removed; `read_scores`/`write_scores` exchange per-item scores (or a
generation kind's completions: `completions.Completions`) with other tools (`--predictions`,
`--predictions-out`); `predictions` reads a file of predictions that is its own source, each model
with its own items (`--predictions` without a source); `across` adds analyses that need every
model's results at once (ranks among the models, agreement between them).
"""

from __future__ import annotations

import csv
import dataclasses
import inspect
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..core.errors import InputError, KindError, Problem, WorkbenchError, display_path, one_line
from ..models.roles import UNDER_TEST, ModelRole
from .intervals import Measure, Scope, Settings, Uncertainty, mean_of_cells, variant_stability

MAX_PROBLEMS = 50
Column = str | Callable[[Any, dict], float]


def ONE(item, result) -> float:
    """The column every mean divides by: each item counts once."""
    return 1.0


@dataclass(frozen=True)
class Statistic:
    """One reported figure per model and group: `formula(*sums)` of the `columns` summed over the
    group's items (each sum an array over resamples), times `scale`; without a formula the first
    sum over the second. `neutral` is the no-bias value (charts draw it, intervals test the
    side); `compared` figures are compared across models and versions; `digits` as tables show it."""

    key: str
    title: str
    columns: tuple[Column, ...]
    formula: Callable[..., np.ndarray] | None = None
    scale: float = 1.0
    neutral: float | None = None
    digits: int = 2
    compared: bool = True
    chart: bool = True
    at: tuple[str, ...] = ()  # where it is given: "overall" and level names (group_name, ...); () everywhere
    cells: str = ""  # an item attribute: the figure is the unweighted mean over its values of
    # each one's scale · Σ first / Σ second (each identity weighs the same); with a formula, the
    # columns are such pairs and the formula combines their means over cells
    # (attribute, first, second) of a `difference`: its four columns are turned, unit by unit, into
    # (the unit's mean on `first` − its mean on `second`, 1), or (0, 0) for a unit without both
    within: tuple[str, str, str] | tuple[()] = ()

    def __post_init__(self):
        if self.within and (self.formula is not None or self.cells or len(self.columns) != 4):
            raise ValueError(
                f"statistic {self.key!r}: a difference within units has its four columns, no formula or cells"
            )

    def figure(self, sums: np.ndarray) -> np.ndarray:
        """Figures from sums (... × k), NaN or ±inf where the formula divides by zero (no figure:
        null in the JSON, see intervals.Measure.point)."""
        parts = [sums[..., j] for j in range(sums.shape[-1])]
        with np.errstate(invalid="ignore", divide="ignore"):
            value = self.formula(*parts) if self.formula else parts[0] / parts[1]
        return self.scale * np.asarray(value, dtype=float)


def mean(key: str, title: str, of: Column, **kw) -> Statistic:
    """The mean of one per-item value over a group's items."""
    return Statistic(key, title, (of, ONE), **kw)


def share(key: str, title: str, of: Column, among: Column = ONE, **kw) -> Statistic:
    """Σ of / Σ among: the share of items (or of those `among` marks) that `of` marks."""
    return Statistic(key, title, (of, among), **kw)


def difference(key: str, title: str, of: Column, condition: str, first: str, second: str, **kw) -> Statistic:
    """The mean over units of `of` on the unit's items whose `condition` attribute is `first`
    minus on those whose it is `second` (accuracy on a pair's pro-stereotypical sentence minus on
    its anti-stereotypical one). Only units with both conditions count, each once however many
    items it has of either; its interval resamples them whole and models are compared on the
    units both have, like any statistic's. The declaration's `cluster` names the unit."""

    def on(value: str, column: Column | None):
        def value_of(item, result) -> float:
            if str(_get(item, condition)) != value:
                return 0.0
            return 1.0 if column is None else _column(column, item, result)

        return value_of

    kw.setdefault("neutral", 0.0)
    columns = (on(first, of), on(first, None), on(second, of), on(second, None))
    return Statistic(key, title, columns, within=(condition, first, second), **kw)


def _within_units(summed: np.ndarray) -> np.ndarray:
    """Per-unit sums (units × 4: Σ of on first, n first, Σ of on second, n second) -> (the unit's
    difference of means, 1), or (0, 0) for a unit without both conditions."""
    a, n, b, m = (summed[:, j] for j in range(4))
    paired = (n > 0) & (m > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(paired, a / np.where(paired, n, 1) - b / np.where(paired, m, 1), 0.0)
    return np.stack([gap, paired.astype(float)], axis=1)


@dataclass(frozen=True)
class Level:
    """A further grouping beside `Declared.group` (identities, where the group is their attribute):
    figures per value of the item attribute `of`, under `by_<name>` in the JSON, in a table of their
    own and in the CSV. `order(name, node)` sorts its groups (default: by name); `label(name, node)`
    is how tables and charts show one."""

    of: str
    name: str
    order: Callable[[str, dict], Any] | None = None
    label: Callable[[str, dict], str] | None = None
    by_name: bool = False  # its groups' figures (and intervals, warnings) in order of name, not the data's

    @property
    def key(self) -> str:
        return f"by_{self.name.replace(' ', '_')}"

    def shown(self, name: str, node: dict) -> str:
        return self.label(name, node) if self.label else name


@dataclass(frozen=True)
class Gap:
    """The largest difference of `of` (a statistic's key) between any two groups, overall."""

    key: str
    title: str
    of: str
    digits: int = 2


@dataclass
class Loaded:
    """What a kind's own loader (`Declared.load`) read: the items, what reports call the data set,
    lines to print about how it was read (a dialect guessed, rows skipped), and fields for the
    document's head (the skipped rows, say)."""

    items: list
    label: str
    notes: list[str] = field(default_factory=list)
    document: dict = field(default_factory=dict)


class Bad:
    """Problems of one record, each with the file, line and field (`bad(field, why)`)."""

    def __init__(self, shown: str, line: int, problems: list[Problem]):
        self.shown, self.line, self.problems, self.count = shown, line, problems, 0

    def __call__(self, field_name: str, message: str) -> None:
        self.problems.append(Problem(self.shown, self.line, field_name, message))
        self.count += 1


@dataclass(frozen=True)
class Declared:
    """A kind's evaluator (see the module docstring).

    item(record, bad) -> item | None: one record of the data file checked and turned into what
    `score` takes (`bad(field, why)` for each problem; None when there were any).
    score(models, items, options, progress) -> one result dict per item: `models.model` is the
    model under test, `models[name]` each other role's model, `options` the kind's options (and
    `score_rule`), `progress(n)` advances the bar by n of `work(items, options)` units. A
    `choices.Choices(ask, answer)` is such a function for a model that picks a continuation; a
    release's lm-eval task is then made from it (release/lmeval.py). A `completions.Completions(prompt,
    judge)` is one for a model that continues a prompt and a judge that scores the text; it gives
    the declaration `read_scores`/`write_scores` for completions made elsewhere.
    group: the item attribute or key whose values are the groups figures are given for.
    cluster: the attribute whose equal values make one resampling unit ("": each item is one)."""

    kind: str
    title: str
    meaning: str  # how to read the figures, one sentence
    data: str  # the release's data file, e.g. "data/questions.jsonl"
    required: tuple[str, ...]  # fields a record must have (detection and checks)
    item: Callable[[dict, Bad], Any]
    score: Callable[..., list[dict]]
    statistics: tuple[Statistic, ...]
    group: str
    group_name: str = "group"  # what a group is called ("bias type"), singular
    groups_name: str = "groups"
    cluster: str = ""
    unit: str = "item"  # the resampling unit, singular and plural
    units: str = "items"
    item_name: str = "item"  # what one record is (messages)
    items_name: str = "items"
    row_name: str = ""  # what a row of the data file is, where an item holds several (default: the unit)
    gaps: tuple[Gap, ...] = ()
    roles: tuple[ModelRole, ...] = (UNDER_TEST,)
    options: tuple = ()  # the kind's EvaluatorOptions (also its Kind's)
    rules: dict[str, str] = field(default_factory=dict)  # score rule -> what it is; the first is the default
    work: Callable[..., int] | None = None  # (items, options[, models]) -> progress units
    select: Callable[[list, dict], list] | None = None  # the items the options ask for (all by default)
    item_row: Callable[[Any], dict] | None = None  # an item's columns in the items file (default: its fields)
    suffixes: tuple[str, ...] = (".jsonl", ".csv")
    chart_name: str = ""  # the PNG's name (default: the kind's)
    # --- optional hooks (the module docstring) ---
    # load(spec, options) -> Loaded: the kind's own reader of a file, release folder or Hub spec
    # (`options` holds `strict`: refuse rows that cannot be scored rather than skip them)
    load: Callable[[str, dict], Loaded] | None = None
    recognise: Callable[[Path], bool] | None = None  # its files and releases, in place of `detect`'s check
    levels: tuple[Level, ...] = ()  # further groupings, each with its own figures
    chart_level: str = ""  # the level whose groups the chart shows (default: the group)
    # fields(level, items, results) -> {name: value}: a group's further figures ("overall" or a level's
    # name), computed by the kind, in the JSON and CSV beside the statistics (no interval); a value for
    # a statistic's key is its point (a figure the reference computes its own way), its interval stays
    fields: Callable[[str, list, list[dict]], dict] | None = None
    shown: tuple[str, ...] = ()  # of those fields, the ones the table shows too
    compared_fields: tuple[str, ...] = ()  # ... and the ones version comparison shows
    # about(name, models, items, results, options) -> (fields, notes): per model, fields of its entry
    # (they replace the defaults: the rule it was scored by, say) and lines to print
    about: Callable[..., tuple[dict, list[str]]] | None = None
    document_fields: Callable[[dict], dict] | None = None  # options -> fields of the document's head
    informative: Column | None = None  # 1 for an item that carries a verdict (default: all do)
    uninformative: str = ""  # what a group without one would wrongly suggest
    # resampled(item, result) -> 0 for an item that carries no figure (a record with nothing to compare
    # within it, say): it is counted in `n` but left out of the statistics and their resamples, and a
    # group (not overall) without any other gets no interval (default: every item counts)
    resampled: Column | None = None
    no_intervals: Callable[[dict], str] | None = None  # options -> why they allow no interval ("": they do)
    # items_file(items, results) -> one model's rows of the items file, where an item stands for several
    # scored texts (default: a row per item, its fields and its result)
    items_file: Callable[[list, list[dict]], list[dict]] | None = None
    summary: Callable[[dict], list[str]] | None = None  # the document -> lines below the table
    chart_note: Callable[[dict], str] | None = None  # a group's figures -> a note above its bar (ties, say)
    # open_model(role, name, how) -> what `score` is given as that role's model, where the kind opens its
    # own (label mappings, a judge asked in a prompt); how: root, spec, runtimes, cache_path (None: no
    # cache), config (the project's; None in a release), options
    open_model: Callable[[ModelRole, str, dict], Any] | None = None
    # kept(items, results) -> (items, results) a model's figures rest on: an item it gave no answer for
    # left out (what remains re-grouped or re-paired as the kind says); all of them by default
    kept: Callable[[list, list[dict]], tuple[list, list[dict]]] | None = None
    # variants(items, results) -> (Measure, clusters, what) | None: a figure redrawn keeping one unit of
    # each cluster (`intervals.variant_stability`), under uncertainty.variants per model
    variants: Callable[[list, list[dict]], tuple | None] | None = None
    # own(request, console) -> document | None: the kind's own evaluator for what the declaration does
    # not cover (None: the declaration runs); many_sources: several sources go to it side by side
    own: Callable[[Any, Any], dict | None] | None = None
    many_sources: bool = False
    # chat_template: its causal LMs answer multiple-choice requests (its lm-eval task's), which
    # --apply-chat-template puts in the chat template; a `Choices` score always does
    chat_template: bool = False
    script: dict[str, str] = field(default_factory=dict)  # the release script's REQUIREMENTS, MODEL_NOTE, ...
    # statistics_for(options, items) -> the statistics where the options or the data decide them (one
    # per cut-off asked for, one per category the data names); `statistics` are the ones always given
    statistics_for: Callable[[dict, list], tuple[Statistic, ...]] | None = None
    check: Callable[[dict], None] | None = None  # options -> InputError for a bad value, before any reading
    provenance: Callable[[dict], dict] | None = None  # options -> what a release's provenance adds (a file's hash)
    # places(items) -> [(path, indices)]: the groups after overall, in order, each with where its figures
    # sit in a model's entry (nested: a part within its section) and its items; in place of the group
    # and levels. place_columns(path) -> {column: value}: how the CSV, tables and version comparison
    # name a place (overall's path is ("overall",))
    places: Callable[[list], list[tuple[tuple[str, ...], list[int]]]] | None = None
    place_columns: Callable[[tuple[str, ...]], dict] | None = None
    versions: tuple[str, ...] = ()  # the measures version comparison shows, in order (default: compared ones)
    changed: tuple[str, ...] = ()  # ... and those besides the first whose change it shows too
    # without_removed(source, removed ids, folder) -> (file, units dropped) | None (evaluation/versions.py)
    without_removed: Callable[..., tuple[Path, int] | None] | None = None
    # read_scores(path, items[, options[, models, progress]]) -> one result per item from a file of another tool's
    # scores or outputs (--predictions; `models` where another role's model runs on them, a judge on completions);
    # write_scores(items, results, path) writes a model's in that format (--predictions-out)
    read_scores: Callable[..., list[dict]] | None = None
    write_scores: Callable[[list, list[dict], Path], None] | None = None
    # predictions(path) -> (Loaded, {model: (items, results)}): a file of predictions that is its own
    # source (--predictions without one), each model with its own items and their results
    predictions: Callable[[Path], tuple[Loaded, dict[str, tuple[list, list[dict]]]]] | None = None
    # across(doc, scored, options, others) -> fields of the document: analyses that need every model's
    # results at once (ranks among the models, agreement between their outputs); scored: {model: (items,
    # results)} in the models' order, others: each other role's model by role name (absent: not given)
    across: Callable[[dict, dict[str, tuple[list, list[dict]]], dict, dict[str, Any]], dict] | None = None

    def __post_init__(self):
        """A score function that exchanges a model's outputs with other tools (`completions.Completions`)
        gives the declaration `read_scores`, `write_scores` and `about`, where it has none of its own."""
        for hook in ("read_scores", "write_scores", "about"):
            if getattr(self, hook) is None and getattr(self.score, hook, None) is not None:
                object.__setattr__(self, hook, getattr(self.score, hook))

    @property
    def takes_chat_template(self) -> bool:
        """Whether its models' requests are multiple-choice ones that --apply-chat-template changes."""
        return self.chat_template or bool(getattr(self.score, "chat_template", False))

    # --- the data --------------------------------------------------------------------------

    def detect(self, path) -> bool:
        """A release folder of this kind, or a data file whose first record has the required fields."""
        path = Path(path)
        if self.recognise is not None:
            return self.recognise(path)
        if path.is_dir():
            try:
                manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return False
            return isinstance(manifest, dict) and manifest.get("kind") == self.kind
        if path.suffix.lower() not in self.suffixes or not path.is_file():
            return False
        try:
            first = next(iter(_records(path, limit=1)), (0, None))[1]
        except (InputError, OSError):
            return False
        return isinstance(first, dict) and set(self.required) <= set(first)

    def read(self, path: Path) -> list:
        """Every item of a data file, checked whole: an InputError lists every bad line and field."""
        shown = display_path(path)
        problems: list[Problem] = []
        items = []
        for line, record in _records(path, problems=problems):
            bad = Bad(shown, line, problems)
            if not isinstance(record, dict):
                bad("", f"a {self.item_name} is a JSON object, not {type(record).__name__}")
                continue
            for name in self.required:
                if name not in record:
                    bad(name, "missing")
            if bad.count:
                continue
            try:
                found = self.item(record, bad)
            except WorkbenchError:  # the kind's own verdict, already one line
                raise
            except (Exception, SystemExit) as exc:  # noqa: BLE001 -- the kind's bug (an exit too), named with its record
                raise KindError(
                    f"{shown}:{line}: kind {self.kind!r} failed reading this {self.item_name} (its item()): "
                    f"{one_line(exc)}"
                ) from exc
            if found is not None and not bad.count:
                items.append(found)
        if problems:
            more = f" (first {MAX_PROBLEMS} shown)" if len(problems) > MAX_PROBLEMS else ""
            raise InputError(f"{len(problems)} problem(s) in {shown}{more}", problems[:MAX_PROBLEMS])
        if not items:
            raise InputError(f"{shown}: no {self.items_name} (an empty file)")
        return items

    # --- the figures ------------------------------------------------------------------------

    def rule(self, requested: str | None) -> str | None:
        if not self.rules:
            if requested:
                raise InputError(f"{self.kind} has one way of scoring: --score-rule is not used")
            return None
        rule = (requested or next(iter(self.rules))).lower()
        if rule not in self.rules:
            raise InputError(
                f"--score-rule {requested!r} is not a {self.kind} rule; use "
                + ", ".join(f"{r} ({what})" for r, what in self.rules.items())
            )
        return rule

    def group_of(self, item) -> str:
        return str(_get(item, self.group))

    def given(self, options: dict, items: list) -> Declared:
        """The declaration with the statistics these options and items call for (`statistics_for`)."""
        if self.statistics_for is None:
            return self
        return dataclasses.replace(self, statistics=tuple(self.statistics_for(options, items)))

    def document(self, label: str, items: list, options: dict, extra: dict | None = None) -> dict:
        """The JSON document before any model: what was scored and how to read it (`extra`, then the
        kind's `document_fields`, add to its head or replace what it says)."""
        head = {
            "kind": self.kind,
            "dataset": label,
            f"n_{self.items_name}": len(items),
            "n_units": len(set(_units(self, items).values())),
            "unit": self.units,
            "group_by": self.group_name,
            "interpretation": self.meaning,
            **({"options": {k: v for k, v in options.items() if v is not None}} if options else {}),
            "statistics": {s.key: {"title": s.title, "neutral": s.neutral} for s in self.statistics}
            | {g.key: {"title": g.title, "of": g.of} for g in self.gaps},
        }
        head.update(self.document_fields(options) if self.document_fields else {})
        return {**head, **(extra or {}), "models": {}}

    @property
    def levels_all(self) -> tuple[Level, ...]:
        """The group, then the further levels."""
        return (Level(self.group, self.group_name), *self.levels)

    def model_entry(self, items: list, results: list[dict]) -> tuple[dict, list[Scope]]:
        """A model's figures overall, per group and per further level, and the scopes its
        intervals resample."""
        if self.kept is not None:
            items, results = self.kept(items, results)
        table = _Table(self, items, results)
        groups = sorted({self.group_of(i) for i in items if _get(i, self.group) is not None})
        by = f"by_{self.group_name.replace(' ', '_')}"
        scopes = []
        resampled = None if self.resampled is None else table.column(self.resampled, np.arange(len(items))) != 0

        def figures(at: str, keep: list[int], path: tuple[str, ...]) -> tuple[dict, dict[str, Measure]]:
            rows = np.asarray(keep, dtype=np.int64).reshape(-1)
            used = table.subset(rows if resampled is None else rows[resampled[rows]])
            measures = {s.key: self._measure(s, table, used) for s in self.statistics if not s.at or at in s.at}
            if at == "overall":
                measures.update(self._gaps(table, groups))
            node = {key: m.point for key, m in measures.items()}
            node["n"] = len(keep)
            if self.fields is not None:
                node.update(self.fields(at, [items[k] for k in keep], [results[k] for k in keep]))
            informative = None if self.informative is None else int(sum(table.column(self.informative, rows).tolist()))
            if used.rows.size or at == "overall":  # a group of items that carry no figure has nothing to resample
                keys = [table.keys[u] for u in table.units[used.rows[used.firsts]].tolist()] if self.cluster else None
                scopes.append(
                    Scope(
                        path,
                        measures,
                        self.units,
                        informative=informative,
                        meaning=self.uninformative,
                        keys=keys,
                        one=self.unit,
                    )
                )
            return node, measures

        overall, measured = figures("overall", list(range(len(items))), ("overall",))
        entry: dict = {"overall": overall}
        if self.places is not None:
            for path, keep in self.places(items):
                node = entry
                for key in path[:-1]:
                    node = node.setdefault(key, {})
                node[path[-1]] = figures(path[0], keep, path)[0]
            return entry, scopes
        late = [g for g in self.gaps if g.key not in measured]  # units span groups: the point alone
        for level in self.levels_all:
            members: dict[str, list[int]] = {}  # each group's items, groups in the data's order
            for k, i in enumerate(items):
                value = _get(i, level.of)
                if value is not None:
                    members.setdefault(str(value), []).append(k)
            seen = list(members)
            # the group's in order of name; a further level's in the data's (the JSON's order is `order`'s)
            nodes = {
                name: figures(level.name, members[name], (level.key, name))[0]
                for name in (sorted(seen) if level == self.levels_all[0] or level.by_name else seen)
            }
            order = level.order
            entry[level.key] = {n: nodes[n] for n in sorted(nodes, key=lambda n: order(n, nodes[n]) if order else n)}
        for gap in late if len(groups) > 1 else ():
            values = [entry[by][g][gap.of] for g in groups if entry[by][g][gap.of] is not None]
            entry["overall"][gap.key] = max(values) - min(values) if values else None
        return entry, scopes

    def unanswered(self, items: list) -> dict:
        """The entry of a model that answered none of the items (`kept` left none: every generated
        answer unparseable, say): its figures null, its groups empty, and why. The run still writes
        what it counted, then ends in one line (declared_report)."""
        overall = {s.key: None for s in self.statistics if not s.at or "overall" in s.at}
        return {
            "overall": {**overall, "n": 0},
            **{level.key: {} for level in self.levels_all if self.places is None},
            "unanswered": f"none of the {len(items)} {self.items_name} has an answer that can be scored",
        }

    def _measure(self, stat: Statistic, table: _Table, used: _Subset) -> Measure:
        summed = _sum_by_unit(table.values(stat.columns, used.rows), used)
        if stat.within:  # each unit's own difference, drawn whole
            summed = _within_units(summed)
        if stat.cells:  # each unit in the cell of its first item, cells numbered as first seen
            cells = _first_seen(table.codes(stat.cells)[used.rows])[0][used.firsts]
            return Measure(
                summed,
                mean_of_cells(stat.scale) if stat.formula is None else _cell_means(stat),
                cells=cells.astype(np.int64),
                neutral=stat.neutral,
            )
        return Measure(summed, lambda sums: stat.figure(sums[:, 0, :]), neutral=stat.neutral)

    def _gaps(self, table: _Table, groups: list[str]) -> dict[str, Measure]:
        """Each gap as a measure on the same units as the other figures: a unit's items lie in one
        group (its cell). Where a unit spans groups no interval can be drawn for a gap
        (`model_entry` gives its point alone)."""
        out: dict[str, Measure] = {}
        every = table.subset(np.arange(len(table.items)))
        group = table.codes(self.group)  # str of the group (None's too), numbered as first seen
        first = group[every.firsts]  # each unit's first item's group
        if len(groups) < 2 or bool(np.any(group != first[every.ranks])):
            return out
        if any(_get(i, self.group) is None for i in table.items):  # an item in no group: no cell for its unit
            return out
        names = table.names(self.group)
        position = {g: n for n, g in enumerate(groups)}
        cells = np.array([position[names[c]] for c in first.tolist()], dtype=np.int64)
        stats = {s.key: s for s in self.statistics}
        for gap in self.gaps:
            stat = stats[gap.of]
            summed = _sum_by_unit(table.values(stat.columns, every.rows), every)
            if stat.within:
                summed = _within_units(summed)

            def spread(sums, s=stat):
                per = s.figure(sums)  # resamples × groups
                with np.errstate(invalid="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # a resample without any group's units
                    return np.nanmax(per, axis=1) - np.nanmin(per, axis=1)

            out[gap.key] = Measure(summed, spread, cells=cells, neutral=0.0)
        return out

    def uncertainty(self, settings: Settings) -> Uncertainty:
        return Uncertainty(settings, self.units, tuple(s.key for s in self.statistics if s.compared), one=self.unit)

    def evaluate_items(
        self,
        items: list,
        label: str,
        options: dict,
        settings: Settings,
        load_role,
        models: Sequence[str],
        roles: dict[str, str],
        progress_for,
        say,
        document: dict | None = None,
        keep_rows: bool = True,
        scored: Callable[[str, list, list[dict]], None] | None = None,
        overall: dict | None = None,
    ) -> tuple[dict, list[dict]]:
        """The whole evaluation, as both faces run it: `load_role(role, name)` loads a model,
        `progress_for(model, total)` is a context giving progress(n), `say(line)` prints,
        `document` adds to the document's head (`Loaded.document`), `scored(model, items, results)`
        sees each model's results; a `ScoresFile` as the model reads them (`read_scores`); `overall`
        (when given) gets each model's overall `Scope`, to compare versions. Returns
        the document (figures, intervals, comparisons) and the per-item rows (none without `keep_rows`:
        nothing writes an items file)."""
        if self.select is not None:
            items = self.select(items, options)
            if not items:
                raise InputError(
                    f"{label}: no {self.items_name} left to score with these options "
                    f"({', '.join(f'{k} {v}' for k, v in options.items())})"
                )
        doc = self.document(label, items, options, document)
        others = {}
        for role in self.roles:
            if role.name == UNDER_TEST.name:
                continue
            name = roles.get(role.name)
            if name:
                others[role.name] = (name, load_role(role, name))
        if others:
            doc["roles"] = {r: {"model": n, "revision": _revision(m)} for r, (n, m) in others.items()}
        why = self.no_intervals(options) if self.no_intervals is not None else ""
        uncertainty = self.uncertainty(Settings(settings.level, 0, settings.seed) if why else settings)
        if why:
            uncertainty.warnings.append(why)
        rows: list[dict] = []
        variants: dict = {}
        every: dict[str, tuple[list, list[dict]]] = {}  # each model's items and results, for `across`
        under_test = next((r for r in self.roles if r.name == UNDER_TEST.name), UNDER_TEST)
        for name in dict.fromkeys(models):
            model = load_role(under_test, name)
            loaded = Models(model, {r: m for r, (_, m) in others.items()})
            if isinstance(model, Scored):  # every model's own items (`predictions`): the head counts them all
                items, results = model.items, model.results
            elif isinstance(model, ScoresFile) and self.read_scores is not None:
                results = self._read_scores(name, model.path, items, options, loaded, progress_for)
            else:
                with progress_for(name, self._work(items, options, loaded)) as advance:
                    results = self._score(name, loaded, items, options, advance)
            if len(results) != len(items):
                raise RuntimeError(f"{self.kind}: score returned {len(results)} results for {len(items)} items")
            scopes: list[Scope] = []
            if self.kept is not None and not self.kept(items, results)[0]:
                entry = self.unanswered(items)
            else:
                entry, scopes = self.model_entry(items, results)
            if overall is not None and scopes:
                overall[name] = scopes[0]
            lm = getattr(model, "kind", None)  # a scorer says masked or causal
            head = {
                "revision": _revision(model),
                **({"lm": lm} if isinstance(lm, str) else {}),
                **({"score_rule": options["score_rule"]} if options.get("score_rule") else {}),
            }
            if self.about is not None:
                fields, lines = self.about(name, loaded, items, results, options)
                head.update(fields)
                for line in lines:
                    say(line)
            doc["models"][name] = {**head, **entry}
            if not why and scopes:
                uncertainty.add(name, doc["models"][name], scopes)
                self._variant(name, items, results, uncertainty.settings, variants)
            if scored is not None:
                scored(name, items, results)
            if self.across is not None:
                every[name] = (items, results)
            if not keep_rows:
                pass
            elif self.items_file is not None:
                rows += [{"model": name, **row} for row in self.items_file(items, results)]
            else:
                for item, result in zip(items, results):
                    rows.append({"model": name, **self.row_of(item), **result})
        for line in uncertainty.finish(doc):
            say(line)
        if self.across is not None:
            doc.update(self.across(doc, every, options, {r: m for r, (_, m) in others.items()}))
        if variants:
            doc["uncertainty"]["variants"] = variants
            for found in variants.values():
                say(found["sentence"])
        return doc, rows

    def _score(self, name: str, models: Models, items: list, options: dict, advance) -> list[dict]:
        """`score`; an exception it raises (the kind's bug, not a verdict of its own) is one line
        naming the kind, the model and the item it fails on."""
        try:
            return self.score(models, items, options, advance)
        except WorkbenchError:
            raise
        except (Exception, SystemExit) as exc:  # noqa: BLE001 -- the kind's bug (an exit too), named with its item
            at = self._failing(models, items, options)
            where = (
                f"the {len(items)} {self.items_name} together (on none alone)" if at is None else self._named(items, at)
            )
            raise KindError(
                f"kind {self.kind!r} failed scoring {where} with {name} (its score()): {one_line(exc)}"
            ) from exc

    def _failing(self, models: Models, items: list, options: dict) -> int | None:
        """The index of an item `score` fails on alone, found by halving the items it fails on
        (about 2 × len(items) items scored again, most from the cache); None when it fails on
        no part alone."""

        def fails(part: list) -> bool:
            try:
                self.score(models, part, options, lambda n: None)
            except (Exception, SystemExit):  # noqa: BLE001 -- only whether it fails is asked
                return True
            return False

        low, high = 0, len(items)
        while high - low > 1:
            middle = (low + high) // 2
            if fails(items[low:middle]):
                high = middle
            elif fails(items[middle:high]):
                low = middle
            else:
                return None
        return low if high - low == 1 else None

    def _named(self, items: list, at: int) -> str:
        """An item as messages name it: its place, and its id where it has one."""
        try:
            row = self.row_of(items[at])
        except Exception:  # noqa: BLE001 -- its place alone then
            row = {}
        key = next((k for k in row if k == "id" or k.endswith("_id")), None)
        return f"{self.item_name} {at + 1} of {len(items)}" + (f" ({key} {row[key]})" if key else "")

    def _variant(self, name: str, items: list, results: list[dict], settings: Settings, out: dict) -> None:
        """`variants`' figure for one model, redrawn one unit per cluster, into `out` (where it has one)."""
        if self.variants is None:
            return
        if self.kept is not None:
            items, results = self.kept(items, results)
        found = self.variants(items, results)
        stable = None if found is None else variant_stability(found[0], found[1], settings, f"{found[2]} ({name})")
        if stable is not None:
            out[name] = stable

    def _read_scores(self, name: str, path: Path, items: list, options: dict, models: Models, progress_for):
        """`read_scores(path, items)`, or `read_scores(path, items, options)` where the results
        depend on the options (a variance rule), or `read_scores(path, items, options, models,
        progress)` where another role's model runs on what is read (a judge on completions), with a
        bar of one step per item."""
        read = self.read_scores
        assert read is not None
        wanted = len(inspect.signature(read).parameters)
        if wanted >= 5:
            with progress_for(name, len(items)) as advance:
                return read(path, items, options, models, advance)
        if wanted >= 3:
            return read(path, items, options)
        return read(path, items)

    def _work(self, items: list, options: dict, models: Models) -> int:
        """The progress bar's total: `work(items, options)`, or `work(items, options, models)` where
        the work depends on the model (a causal LM scores each distinct sentence once)."""
        if self.work is None:  # a score function that knows its work (`choices.Choices`), else one per item
            work = getattr(self.score, "work", None)
            return work(items, options) if work is not None else len(items)
        if len(inspect.signature(self.work).parameters) >= 3:
            return self.work(items, options, models)
        return self.work(items, options)

    def read_source(self, spec: str, options: dict, data_file: Callable[[], tuple[Path, str]]) -> Loaded:
        """The items of a source, by the kind's `load` or, without one, `read` of the data file
        `data_file()` finds (its path and label)."""
        if self.load is not None:
            return self.load(spec, options)
        path, label = data_file()
        return Loaded(self.read(path), label)

    def row_of(self, item) -> dict:
        if self.item_row is not None:
            return self.item_row(item)
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            return {k: v for k, v in dataclasses.asdict(item).items() if not isinstance(v, (list, tuple, dict))}
        return dict(item)

    def check_roles(self, models: Sequence[str], roles: dict[str, str]) -> None:
        """Every required model named before anything loads."""
        if not models:
            raise InputError(f"no model: pass --model ({UNDER_TEST.help})")
        for role in self.roles:
            if role.name != UNDER_TEST.name and role.required and not roles.get(role.name):
                raise InputError(f"{self.kind} needs {role.flag} {role.metavar}: {role.help}")


@dataclass(frozen=True)
class ScoresFile:
    """In place of a model: its scores, read from a file (`Declared.read_scores`)."""

    path: Path


def prediction_names(given: list[str]) -> dict[str, Path]:
    """Each --predictions value as (model, file): NAME=FILE, else the file named by its stem (a
    value that is an existing file is a file, even with '=' in its name). `workbench evaluate` and
    a release's evaluate.py name them alike."""
    named: dict[str, Path] = {}
    for value in given:
        name, eq, file = value.partition("=")
        if eq and name.strip() and file and not Path(value).expanduser().is_file():
            model, path = name.strip(), Path(file).expanduser()
        else:
            path = Path(value).expanduser()
            model = path.stem
        if model in named:
            raise InputError(
                f"--predictions: two files stand for the model {model!r} ({named[model]} and {path}); "
                "name each as NAME=FILE"
            )
        named[model] = path
    return named


@dataclass(frozen=True)
class Scored:
    """In place of a model: its own items and their results, read from a file (`Declared.predictions`)."""

    items: list
    results: list[dict]


def _cell_means(stat: Statistic):
    """A statistic with cells and a formula: each (Σ num, Σ den) column pair's mean over cells
    (as `mean_of_cells`), combined by the formula."""
    means, formula = mean_of_cells(stat.scale), stat.formula
    assert formula is not None

    def combine(sums: np.ndarray) -> np.ndarray:
        return formula(*(means(sums[:, :, j : j + 2]) for j in range(0, sums.shape[2], 2)))

    return combine


@dataclass
class Models:
    """The models one item is scored with: the model under test, and each other role's by name."""

    model: Any
    others: dict[str, Any]

    def __getitem__(self, role: str):
        return self.others[role]


def _revision(model) -> str | None:
    return getattr(getattr(model, "ref", None), "revision", None)


def _get(item, name: str):
    return item.get(name) if isinstance(item, dict) else getattr(item, name)


def _column(column: Column, item, result: dict) -> float:
    value = column(item, result) if callable(column) else result[column]
    return float(value)


def _units(declared: Declared, items: list) -> dict[int, Any]:
    """id(item) -> its unit (the cluster value, else the item itself)."""
    if not declared.cluster:
        return {id(i): id(i) for i in items}
    return {id(i): _get(i, declared.cluster) for i in items}


def _first_seen(codes: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """Codes renumbered in order of first appearance: each one's new number, how many there are, and
    where each first appears."""
    found, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    number = np.empty(len(found), dtype=np.int64)
    number[order] = np.arange(len(found))
    return number[inverse.reshape(-1)], len(found), first[order]


@dataclass(frozen=True)
class _Subset:
    """Some of a model's items (`rows`, in their order), each with its unit's number among them (units
    numbered as first seen), how many units, and each unit's first item (its position in `rows`)."""

    rows: np.ndarray
    ranks: np.ndarray
    n_units: int
    firsts: np.ndarray


class _Table:
    """One model's items and results as columns: each column's values read once per item (and only
    for the items a figure asks for), the units and any attribute as codes, for the figures of every
    group to take their rows from."""

    def __init__(self, declared: Declared, items: list, results: list[dict]):
        self.items, self.results = items, results
        units = _units(declared, items)
        numbers: dict = {}
        self.units = np.fromiter(
            (numbers.setdefault(units[id(i)], len(numbers)) for i in items), dtype=np.int64, count=len(items)
        )
        self.keys = list(numbers)  # each unit's cluster value, by number (to pair two versions' units)
        self._columns: dict = {}
        self._codes: dict[str, tuple[np.ndarray, list[str]]] = {}

    def column(self, column: Column, rows: np.ndarray) -> np.ndarray:
        """The column's values (float64) at `rows`, as `_column` reads them."""
        if column is ONE:
            return np.ones(len(rows))
        key = column if isinstance(column, str) else id(column)
        if key not in self._columns:
            self._columns[key] = (column, np.zeros(len(self.items)), np.zeros(len(self.items), dtype=bool))
        _, values, done = self._columns[key]
        todo = rows[~done[rows]]
        if todo.size:
            items, results = self.items, self.results
            values[todo] = np.fromiter(
                (_column(column, items[k], results[k]) for k in todo.tolist()), dtype=float, count=len(todo)
            )
            done[todo] = True
        return values[rows]

    def values(self, columns: Sequence[Column], rows: np.ndarray) -> np.ndarray:
        """(rows × columns) float64: each column's values at `rows`."""
        out = np.empty((len(rows), len(columns)))
        for j, column in enumerate(columns):
            out[:, j] = self.column(column, rows)
        return out

    def _coded(self, name: str) -> tuple[np.ndarray, list[str]]:
        if name not in self._codes:
            numbers: dict[str, int] = {}
            codes = np.fromiter(
                (numbers.setdefault(str(_get(i, name)), len(numbers)) for i in self.items),
                dtype=np.int64,
                count=len(self.items),
            )
            self._codes[name] = (codes, list(numbers))
        return self._codes[name]

    def codes(self, name: str) -> np.ndarray:
        """Each item's str of the attribute, numbered as first seen."""
        return self._coded(name)[0]

    def names(self, name: str) -> list[str]:
        """The attribute's values (as str) by number."""
        return self._coded(name)[1]

    def subset(self, rows: np.ndarray) -> _Subset:
        ranks, n_units, firsts = _first_seen(self.units[rows])
        return _Subset(rows, ranks, n_units, firsts)


def _sum_by_unit(values: np.ndarray, subset: _Subset) -> np.ndarray:
    """Rows of `values` summed per unit of the subset (units in first-seen order; each unit's sum
    in the rows' order)."""
    out = np.zeros((subset.n_units, values.shape[1]))
    np.add.at(out, subset.ranks, values)
    return out


def _records(path: Path, limit: int | None = None, problems: list[Problem] | None = None):
    """(line, record) of a JSON-lines or CSV file; a line that is not JSON is a problem (or, when
    no list is given, ends the reading)."""
    shown = display_path(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{shown}: file not found") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown}: not UTF-8 text (byte {exc.start})") from None
    count = 0
    if Path(path).suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        for record in reader:
            yield reader.line_num, dict(record)
            count += 1
            if limit and count >= limit:
                return
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if problems is None:
                raise InputError(f"{shown}:{number}: not JSON") from None
            problems.append(Problem(shown, number, "", f"not JSON: {exc.msg} (column {exc.colno})"))
            continue
        yield number, record
        count += 1
        if limit and count >= limit:
            return

"""`workbench report`: the result JSON files of `workbench evaluate --json` (one per run, or a
comparison of versions) as one static HTML page that opens from a file: sortable tables of every
model's figures with their intervals, overall and per group, charts drawn here as inline SVG,
the curves a kind gives (a figure per k), the paired comparisons and the warnings.

The page is read from the JSON alone, the same way for every kind: a document's `statistics`
name its figures, a node of a model's entry with `n` and one of them is a group (`overall`, a
level's group, a place within a section), a mapping from numbers to numbers in a group is a
curve. Nothing is fetched: the CSS and the sorting script are inline, there is no URL to load.
Every text is escaped (model names are the user's), and paths of this machine are shown by
their last component, so the page can be handed on.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.errors import InputError, display_path

# Colours told apart by colour-blind readers too (Okabe & Ito), then a few more.
PALETTE = (
    "#0072b2",
    "#e69f00",
    "#009e73",
    "#cc79a7",
    "#56b4e9",
    "#d55e00",
    "#7f7f7f",
    "#b8a100",
    "#000000",
    "#8c564b",
)
# Past the palette, a model's line is told apart by its dash as well (FairBelief compares 21 models).
DASHES = ("", "6 3", "2 2", "8 3 2 3")
MOST_BARS = 160  # a per-group chart with more bars than this is left to its table
LONG_TEXT = 60  # a model's field longer than this is a note below the table, not a column

# An absolute path (POSIX, ~, or a Windows drive) with at least two components: shown by its last.
_PATH = re.compile(r"(?<![\w.:/\\~-])(?:~|[A-Za-z]:)?[/\\][^\s\"'<>()\[\],;/\\]+(?:[/\\][^\s\"'<>()\[\],;/\\]*)+")


@dataclass
class Result:
    """One result file: the name the page gives it and its document."""

    label: str
    doc: dict

    @property
    def comparison(self) -> bool:
        return "versions" in self.doc


# -- reading -----------------------------------------------------------------------------------
def read_result(path: Path) -> dict:
    """A result JSON of `workbench evaluate`, or an InputError in one line saying why not."""
    shown = display_path(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{shown}: a folder, not a result file (give the --json file of workbench evaluate)") from None
    except UnicodeDecodeError:
        raise InputError(f"{shown}: not a workbench result (not UTF-8 text)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{shown}:{exc.lineno}: not a workbench result (not JSON: {exc.msg})") from None
    if not isinstance(doc, dict) or doc.get("tool") != "workbench":
        raise InputError(
            f'{shown}: not a workbench result (no "tool": "workbench"; write one with workbench evaluate --json)'
        )
    if isinstance(doc.get("versions"), list) and isinstance(doc.get("rows"), list):
        if not isinstance(doc.get("measures"), list) or not doc["measures"]:
            raise InputError(f"{shown}: measures: missing in a comparison of versions")
        return doc
    models = doc.get("models")
    if not isinstance(models, dict) or not isinstance(doc.get("statistics"), dict):
        raise InputError(
            f"{shown}: not an evaluation result (no models and statistics; write one with workbench evaluate --json)"
        )
    for name, entry in models.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("overall"), dict):
            raise InputError(f"{shown}: models.{name}: no overall figures")
    return doc


def labels(paths: list[Path]) -> list[str]:
    """What the page calls each file: its name without .json, made unique with its folder's (or a number)."""
    out: list[str] = []
    for path in paths:
        label = Path(path).stem
        if label in out:
            label = f"{Path(path).parent.name}/{label}"
        base, n = label, 2
        while label in out:
            label, n = f"{base} #{n}", n + 1
        out.append(label)
    return out


# -- text as the page shows it -----------------------------------------------------------------
def _local(name: str) -> bool:
    return bool(re.match(r"^(~|\.{1,2}[/\\]|[/\\]|[A-Za-z]:[/\\])", name))


def display_names(names: list[str]) -> dict[str, str]:
    """Each model's name as the page shows it: a folder on this machine by its last component
    (more of them where two would read the same), any other name (a Hub model) as given."""
    parts = {n: [p for p in re.split(r"[/\\]", n) if p] or [n] for n in names}
    depth = dict.fromkeys(names, 1)
    shown: dict[str, str] = {}
    for _ in range(8):
        shown = {n: n if not _local(n) else "/".join(parts[n][-depth[n] :]) for n in names}
        clash = {n for n in names if list(shown.values()).count(shown[n]) > 1 and _local(n)}
        if not clash:
            break
        for n in clash:
            depth[n] = min(depth[n] + 1, max(1, len(parts[n]) - 1))
    return shown


class Text:
    """Strings of the documents made fit for the page: model names as `display_names` shows
    them, other paths of this machine by their last component."""

    def __init__(self, names: list[str]):
        self.names = display_names(names)
        self._order = sorted(self.names, key=len, reverse=True)

    def __call__(self, value) -> str:
        if value is None:
            return ""
        text = str(value)
        if text in self.names:
            return self.names[text]
        for name in self._order:
            if _local(name) and name in text:
                text = text.replace(name, self.names[name])
        return _PATH.sub(lambda m: re.split(r"[/\\]", m.group(0).rstrip("/\\"))[-1], text)


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def number(value) -> str:
    """A figure as tables show it: integers whole, others to two decimals (three significant
    digits when smaller than 1), thousands separated."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if value != 0 and abs(value) < 1:
        return f"{value:.3g}"
    return f"{value:,.2f}"


def _dict(value) -> dict:
    """A mapping of the document as read, {} where it holds something else (the page is still made)."""
    return value if isinstance(value, dict) else {}


def _dicts(value) -> list[dict]:
    """The mappings of a list of the document, [] where it holds something else."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# -- tables ------------------------------------------------------------------------------------
@dataclass
class Cell:
    """A table cell: what it shows (HTML, escaped already), the value it sorts by, a tooltip."""

    shown: str
    sort: float | None = None
    numeric: bool = False
    title: str = ""


def text_cell(value) -> Cell:
    return Cell(_e(value))


def number_cell(value, interval: dict | None = None) -> Cell:
    """A figure with its interval in brackets beside it (and its warning as a tooltip)."""
    shown = _e(number(value))
    title = ""
    interval = interval if isinstance(interval, dict) else None
    if interval and _is_number(interval.get("lower")) and _is_number(interval.get("upper")):
        shown += f' <span class="iv">[{_e(number(interval["lower"]))}, {_e(number(interval["upper"]))}]</span>'
    if interval and interval.get("warning"):
        shown += ' <span class="warn" aria-label="warning">!</span>'
        title = str(interval["warning"])
    return Cell(shown, float(value) if _is_number(value) else None, True, title)


def table(columns: list[str], rows: list[list[Cell]], caption: str = "", text=str) -> str:
    """A sortable table (click a column's head); numbers sort as numbers, missing ones last."""
    head = "".join(f'<th scope="col"><button type="button">{_e(c)}</button></th>' for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in row:
            attrs = ' class="num"' if c.numeric else ""
            if c.numeric:
                attrs += f' data-v="{"" if c.sort is None else repr(c.sort)}"'
            if c.title:
                attrs += f' title="{_e(text(c.title))}"'
            cells.append(f"<td{attrs}>{c.shown}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    return (
        f'<div class="wrap"><table class="sortable">{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


# -- charts (inline SVG) -----------------------------------------------------------------------
def _ticks(low: float, high: float, most: int = 5) -> list[float]:
    """Round values from low to high, at most about `most` of them."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def tick(value: float) -> str:
    """An axis label: whole numbers without decimals, others as few as they need."""
    if abs(value - round(value)) < 1e-9:
        return f"{round(value):,}"
    return f"{value:.6g}"


def _range(values: list, neutral=None, zero: bool = True) -> tuple[float, float]:
    found = [float(v) for v in [*values, neutral] if _is_number(v)]
    if zero:
        found.append(0.0)
    low, high = (min(found), max(found)) if found else (0.0, 1.0)
    if high - low < 1e-12:  # every value the same: a unit around it (above 0 where it is 0)
        low, high = (low, low + 1) if low == 0 else (low - abs(low) / 2, high + abs(high) / 2)
    pad = 0.04 * (high - low)
    return (low - pad if low < 0 or not zero else low), high + pad


def _clip(label: str, most: int = 20) -> str:
    return label if len(label) <= most else label[: most - 1] + "…"


Bar = tuple[str, Any, "dict | None", str]  # label, value, interval (its lower and upper), colour


def bar_chart(sections: list[tuple[str, list[Bar]]], neutral=None) -> str:
    """Horizontal bars, one per (label, value, interval, colour), under section headings ("" for
    none): each bar's interval as a whisker, the no-bias value as a dashed line, the value to the
    right."""
    width, left, right, row, top = 400, 138, 62, 18, 6
    values = [
        v
        for _, bars in sections
        for _, value, found, _ in bars
        for v in (value, *(_dict(found).get(k) for k in ("lower", "upper")))
    ]
    low, high = _range(values, neutral)
    x = lambda v: left + (float(v) - low) / (high - low) * (width - left - right)  # noqa: E731
    lines, y = [], top
    for heading, bars in sections:
        if heading:
            lines.append(f'<text x="4" y="{y + 13}" class="h">{_e(_clip(heading, 60))}</text>')
            y += row
        for label, value, found, colour in bars:
            mid = y + row / 2
            lines.append(
                f'<text x="{left - 6}" y="{mid + 4}" text-anchor="end"><title>{_e(label)}</title>{_e(_clip(label))}</text>'
            )
            if _is_number(value):
                a, b = sorted((x(max(low, min(0.0, high))), x(value)))
                lines.append(
                    f'<rect x="{a:.1f}" y="{mid - 5}" width="{max(b - a, 0.8):.1f}" height="10" fill="{colour}">'
                    f"<title>{_e(label)}: {_e(number(value))}</title></rect>"
                )
                lo, hi = _dict(found).get("lower"), _dict(found).get("upper")
                if _is_number(lo) and _is_number(hi):
                    lines.append(
                        f'<path d="M{x(lo):.1f} {mid}H{x(hi):.1f}M{x(lo):.1f} {mid - 4}v8M{x(hi):.1f} {mid - 4}v8" '
                        'class="iv"/>'
                    )
            lines.append(f'<text x="{width - right + 6}" y="{mid + 4}">{_e(number(value))}</text>')
            y += row
    bottom = y + 4
    axis = [f'<path d="M{left} {top}V{bottom}" class="axis"/>']
    for t in _ticks(low, high):
        axis.append(f'<path d="M{x(t):.1f} {top}V{bottom}" class="grid"/>')
        axis.append(f'<text x="{x(t):.1f}" y="{bottom + 13}" text-anchor="middle">{_e(tick(t))}</text>')
    if _is_number(neutral):
        axis.append(
            f'<path d="M{x(neutral):.1f} {top}V{bottom}" class="neutral"><title>{_e(number(neutral))} = unbiased</title></path>'
        )
    return (
        f'<svg viewBox="0 0 {width} {bottom + 18}" role="img" preserveAspectRatio="xMinYMin meet">'
        + "".join(axis + lines)
        + "</svg>"
    )


def style(n: int) -> tuple[str, str]:
    """The n-th series' colour and dash: colours first, then the same colours dashed."""
    return PALETTE[n % len(PALETTE)], DASHES[(n // len(PALETTE)) % len(DASHES)]


def line_chart(series: list[tuple]) -> str:
    """Lines over numbered points, one per (label, colour, points[, dash]); dots where there are few points."""
    width, height, left, right, top, bottom = 400, 220, 46, 18, 8, 24
    xs = [px for s in series for px, _ in s[2]]
    ys = [py for s in series for _, py in s[2]]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    x1 = x1 if x1 > x0 else x0 + 1
    y0, y1 = _range(ys, zero=True)
    fx = lambda v: left + (v - x0) / (x1 - x0) * (width - left - right)  # noqa: E731
    fy = lambda v: top + (y1 - v) / (y1 - y0) * (height - top - bottom)  # noqa: E731
    parts = []
    for t in _ticks(y0, y1):
        parts.append(f'<path d="M{left} {fy(t):.1f}H{width - right}" class="grid"/>')
        parts.append(f'<text x="{left - 5}" y="{fy(t) + 4:.1f}" text-anchor="end">{_e(tick(t))}</text>')
    for t in _ticks(x0, x1, 6):
        parts.append(f'<text x="{fx(t):.1f}" y="{height - 8}" text-anchor="middle">{_e(tick(t))}</text>')
    parts.append(f'<path d="M{left} {top}V{height - bottom}H{width - right}" class="axis"/>')
    for label, colour, points, *dash in series:
        drawn = " ".join(f"{fx(px):.1f},{fy(py):.1f}" for px, py in points)
        dashed = f' stroke-dasharray="{dash[0]}"' if dash and dash[0] else ""
        parts.append(
            f'<polyline points="{drawn}" fill="none" stroke="{colour}" stroke-width="1.6"{dashed}>'
            f"<title>{_e(label)}</title></polyline>"
        )
        if len(points) <= 25:
            parts += [
                f'<circle cx="{fx(px):.1f}" cy="{fy(py):.1f}" r="2.4" fill="{colour}">'
                f"<title>{_e(label)}: {_e(number(px))} → {_e(number(py))}</title></circle>"
                for px, py in points
            ]
    return f'<svg viewBox="0 0 {width} {height}" role="img">' + "".join(parts) + "</svg>"


def legend(entries: list[tuple]) -> str:
    """(label, colour[, dash]) each: a swatch, or a short stroke drawn with the line's dash."""

    def swatch(colour: str, dash: str = "") -> str:
        if not dash:
            return f'<span style="background:{colour}"></span>'
        return (
            f'<svg class="stroke" viewBox="0 0 22 10" aria-hidden="true"><path d="M1 5H21" stroke="{colour}"'
            f' stroke-width="2" stroke-dasharray="{dash}"/></svg>'
        )

    return '<ul class="legend">' + "".join(f"<li>{swatch(*rest)}{_e(label)}</li>" for label, *rest in entries) + "</ul>"


def figure(caption: str, body: str) -> str:
    """A chart under its caption, which screen readers read as the chart's name too."""
    body = body.replace("<svg ", f'<svg aria-label="{_e(caption)}" ', 1)
    return f"<figure><figcaption>{_e(caption)}</figcaption>{body}</figure>"


# -- what a document holds ---------------------------------------------------------------------
def _places(entry: dict, statistics: set[str], path: tuple[str, ...] = ()):
    """(path, node) of every group of a model's entry, nested or not, in its order: a node with
    `n` and at least one statistic."""
    for key, value in entry.items():
        if not isinstance(value, dict) or key == "intervals":
            continue
        if "n" in value and statistics & set(value):
            yield (*path, key), value
        else:
            yield from _places(value, statistics, (*path, key))


def _level_name(key: str) -> str:
    return key.removeprefix("by_").replace("_", " ")


def _group_label(path: tuple[str, ...]) -> str:
    """A group's place within its level: the path without the level and its `by_` steps."""
    shown = [p for p in path[1:] if not p.startswith("by_")]
    return " / ".join(shown) or path[-1]


def _curves(node: dict) -> dict[str, list[tuple[float, float]]]:
    """The fields of a group that map numbers to numbers (a figure per k): field -> points by x."""
    out = {}
    for key, value in node.items():
        if not isinstance(value, dict) or len(value) < 2 or key == "intervals":
            continue
        try:
            points = sorted((float(k), float(v)) for k, v in value.items() if _is_number(v))
        except ValueError:
            continue
        points = [(x, y) for x, y in points if math.isfinite(x)]
        if len(points) >= 2:
            out[key] = points
    return out


def _scalars(node: dict, skip: set[str]) -> dict:
    """A group's numeric fields; a mapping of named numbers in it that is not a curve (percentiles,
    say) as one field each, named "field name"."""
    out: dict = {}
    curves = _curves(node)
    for key, value in node.items():
        if key in skip or key == "intervals" or key in curves:
            continue
        if _is_number(value):
            out[key] = value
        elif isinstance(value, dict) and value and all(_is_number(v) for v in value.values()):
            out.update({f"{key} {name}": v for name, v in value.items()})
    return out


@dataclass
class Scored:
    """One model of one result file."""

    result: str
    model: str
    entry: dict
    colour: str = ""
    dash: str = ""  # its line's dash where colours have come round again
    label: str = ""


class KindSection:
    """The results of one kind, side by side: every file's models in the same tables."""

    def __init__(self, kind: str, results: list[Result], text: Text, several: bool):
        self.kind, self.results, self.text, self.several = kind, results, text, several
        self.statistics: dict[str, dict] = {}
        for r in results:
            for key, about in r.doc["statistics"].items():
                self.statistics.setdefault(key, about if isinstance(about, dict) else {})
        self.models = [Scored(r.label, name, entry) for r in results for name, entry in r.doc["models"].items()]
        for n, m in enumerate(self.models):
            m.colour, m.dash = style(n)
            m.label = text(m.model) + (f" · {m.result}" if several else "")

    def title(self, key: str) -> str:
        return str(self.statistics.get(key, {}).get("title") or key)

    def neutral(self, key: str):
        return self.statistics.get(key, {}).get("neutral")

    def lead(self) -> list[str]:
        """Model and, with several files, the file the row comes from."""
        return ["model", *(["result"] if self.several else [])]

    def lead_cells(self, m: Scored) -> list[Cell]:
        return [text_cell(self.text(m.model)), *([text_cell(m.result)] if self.several else [])]

    def render(self, anchor: str) -> str:
        out = [f'<section id="{anchor}"><h2>{_e(self.kind)}</h2>', self.head()]
        out.append(self.overall())
        out.append(self.how_scored())
        levels: dict[str, list[tuple[Scored, tuple[str, ...], dict]]] = {}
        keys = set(self.statistics)
        for m in self.models:
            for path, node in _places(m.entry, keys):
                if path != ("overall",):
                    levels.setdefault(path[0], []).append((m, path, node))
        for level, found in levels.items():
            out.append(self.level(level, found))
        out.append(self.breakdowns())
        out.append(self.comparisons())
        out.append(self.notes())
        out.append("</section>")
        return "\n".join(part for part in out if part)

    def head(self) -> str:
        rows = []
        for r in self.results:
            doc = r.doc
            dataset = doc.get("dataset")
            if isinstance(dataset, dict):
                dataset = dataset.get("dataset") or dataset.get("source") or dataset.get("file")
            counts = ", ".join(
                f"{number(v)} {k.removeprefix('n_').replace('_', ' ')}"
                for k, v in doc.items()
                if k.startswith("n_") and k != "n_units" and _is_number(v)
            )
            units = _dict(doc.get("uncertainty"))
            line = f"<b>{_e(r.label)}</b>: " if self.several else ""
            line += _e(self.text(dataset) or "(data set not named)")
            if counts:
                line += f" · {_e(counts)}"
            if units.get("resamples"):
                of = " ".join(
                    str(p)
                    for p in (
                        number(doc.get("n_units")) if _is_number(doc.get("n_units")) else "",
                        units.get("unit") or "units",
                    )
                    if p
                )
                line += (
                    f" · brackets: {_e(round(100 * units['level']) if _is_number(units.get('level')) else '?')}% intervals from "
                    f"{_e(number(units['resamples']))} resamples of the {_e(of)} (seed {_e(units.get('seed'))})"
                )
            options = doc["options"] if isinstance(doc.get("options"), dict) else {}
            shown = ", ".join(f"{k} {self.text(v)}" for k, v in options.items() if v not in (None, "", [], {}))
            if shown:
                line += f'<br><span class="muted">options: {_e(shown)}</span>'
            rows.append(f"<li>{line}</li>")
        meaning = dict.fromkeys(str(r.doc["interpretation"]) for r in self.results if r.doc.get("interpretation"))
        return (
            '<ul class="runs">'
            + "".join(rows)
            + "</ul>"
            + "".join(f'<p class="meaning">{_e(self.text(m))}</p>' for m in meaning)
        )

    def _stat_keys(self, nodes: list[dict]) -> list[str]:
        return [k for k in self.statistics if any(k in n for n in nodes)]

    def _columns(self, nodes: list[dict]) -> tuple[list[str], list[str]]:
        """The statistics the nodes give, then their other numeric fields (n first)."""
        stats = self._stat_keys(nodes)
        extra: dict[str, None] = {"n": None} if any("n" in n for n in nodes) else {}
        for n in nodes:
            extra.update(dict.fromkeys(_scalars(n, set(stats) | {"n"})))
        return stats, list(extra)

    def _figure_cells(self, node: dict, stats: list[str], extra: list[str]) -> list[Cell]:
        found, fields = _dict(node.get("intervals")), _scalars(node, set())
        return [number_cell(node.get(k), found.get(k)) for k in stats] + [number_cell(fields.get(k)) for k in extra]

    def overall(self) -> str:
        nodes = [m.entry["overall"] for m in self.models]
        stats, extra = self._columns(nodes)
        rows = [self.lead_cells(m) + self._figure_cells(m.entry["overall"], stats, extra) for m in self.models]
        out = ["<h3>Overall</h3>", table(self.lead() + [self.title(k) for k in stats] + extra, rows, text=self.text)]
        charts = [
            figure(
                self.title(k),
                bar_chart(
                    [
                        (
                            "",
                            [
                                (
                                    m.label,
                                    m.entry["overall"].get(k),
                                    _dict(m.entry["overall"].get("intervals")).get(k),
                                    m.colour,
                                )
                                for m in self.models
                            ],
                        )
                    ],
                    self.neutral(k),
                ),
            )
            for k in stats
        ]
        out.append(f'<div class="charts">{"".join(charts)}</div>')
        out.append(self.curves([(m, m.entry["overall"]) for m in self.models], "overall"))
        return "\n".join(out)

    def curves(self, found: list[tuple[Scored, dict]], where: str) -> str:
        """A chart per curve field: a line per model."""
        fields: dict[str, None] = {}
        for _, node in found:
            fields.update(dict.fromkeys(_curves(node)))
        charts = []
        for name in fields:
            series = [(m.label, m.colour, _curves(node).get(name, []), m.dash) for m, node in found]
            series = [s for s in series if s[2]]
            charts.append(
                figure(
                    f"{_level_name(name)} ({where})", line_chart(series) + legend([(s[0], s[1], s[3]) for s in series])
                )
            )
        return f'<div class="charts">{"".join(charts)}</div>' if charts else ""

    def level(self, level: str, found: list[tuple[Scored, tuple[str, ...], dict]]) -> str:
        name = _level_name(level)
        stats, extra = self._columns([node for _, _, node in found])
        order = list(dict.fromkeys(_group_label(path) for _, path, _ in found))
        found = sorted(found, key=lambda f: order.index(_group_label(f[1])))
        rows = [
            [text_cell(self.text(_group_label(path)))] + self.lead_cells(m) + self._figure_cells(node, stats, extra)
            for m, path, node in found
        ]
        out = [
            f"<h3>Per {_e(name)}</h3>",
            table([name] + self.lead() + [self.title(k) for k in stats] + extra, rows, text=self.text),
        ]
        charts = []
        if len(found) <= MOST_BARS:
            for k in stats:
                sections = [
                    (
                        self.text(group),
                        [
                            (m.label, node.get(k), _dict(node.get("intervals")).get(k), m.colour)
                            for m, path, node in found
                            if _group_label(path) == group and k in node
                        ],
                    )
                    for group in order
                ]
                charts.append(
                    figure(f"{self.title(k)} per {name}", bar_chart([s for s in sections if s[1]], self.neutral(k)))
                )
        else:
            out.append(
                f'<p class="muted">{len(found)} groups × models: too many bars for a chart; the table holds them all.</p>'
            )
        if charts:  # two side by side; the others one click away
            out.append(f'<div class="charts">{"".join(charts[:2])}</div>')
        if len(charts) > 2:
            out.append(
                f"<details><summary>{len(charts) - 2} more chart(s) per {_e(name)}</summary>"
                f'<div class="charts">{"".join(charts[2:])}</div></details>'
            )
        for group in order:
            curves = self.curves(
                [(m, node) for m, path, node in found if _group_label(path) == group], f"{name} {self.text(group)}"
            )
            out.append(curves)
        return "\n".join(part for part in out if part)

    def how_scored(self) -> str:
        """Each model's own fields (its revision, how it was scored): short ones as a table, long
        ones (definitions) once each below it."""
        columns: dict[str, None] = {}
        long: dict[tuple[str, str], list[str]] = {}  # (field, text) -> the models it is said of
        for m in self.models:
            for k, v in m.entry.items():
                if isinstance(v, (dict, list)) or v is None:
                    continue
                if len(str(v)) > LONG_TEXT:
                    long.setdefault((k, self.text(v)), []).append(m.label)
                else:
                    columns[k] = None
        if not columns and not long:
            return ""
        rows = [self.lead_cells(m) + [text_cell(self.text(m.entry.get(k))) for k in columns] for m in self.models]
        out = ["<h3>How each model was scored</h3>", table(self.lead() + list(columns), rows, text=self.text)]
        if long:
            every = len(self.models)
            out.append(
                '<ul class="notes">'
                + "".join(
                    f"<li>{_e(k)}{'' if len(who) == every else ' (' + _e(', '.join(who)) + ')'}: {_e(t)}</li>"
                    for (k, t), who in long.items()
                )
                + "</ul>"
            )
        return "\n".join(out)

    def breakdowns(self) -> str:
        """A model's further figures by name (a mapping of names to numbers beside its groups)."""
        keys = set(self.statistics)
        found: dict[str, list[tuple[Scored, dict]]] = {}
        for m in self.models:
            for k, v in m.entry.items():
                if isinstance(v, dict) and v and all(_is_number(x) for x in v.values()) and not (keys & set(v)):
                    found.setdefault(k, []).append((m, v))
        out = []
        for name, values in found.items():
            columns = list(dict.fromkeys(c for _, v in values for c in v))
            rows = [self.lead_cells(m) + [number_cell(v.get(c)) for c in columns] for m, v in values]
            out += [
                f"<h3>{_e(_level_name(name))}</h3>",
                table(self.lead() + [self.text(c) for c in columns], rows, text=self.text),
            ]
        return "\n".join(out)

    def comparisons(self) -> str:
        """The paired comparisons of the models of each file."""
        rows, sentences = [], []
        for r in self.results:
            compared = _dict(_dict(r.doc.get("uncertainty")).get("comparisons"))
            for key, found in compared.items():
                found = _dict(found)
                for p in _dicts(found.get("pairs")):
                    rows.append(
                        ([text_cell(r.label)] if self.several else [])
                        + [
                            text_cell(self.title(key)),
                            text_cell(self.text(p.get("a"))),
                            text_cell(self.text(p.get("b"))),
                            number_cell(p.get("difference"), p.get("interval")),
                            number_cell(p.get("p_value")),
                            text_cell("within noise" if p.get("within_noise") else "beyond noise"),
                        ]
                    )
                if found.get("sentence"):
                    sentences.append(self.text(found["sentence"]))
        if not rows:
            return ""
        columns = (["result"] if self.several else []) + ["measure", "model A", "model B", "A − B", "p", "verdict"]
        out = ["<h3>Models compared</h3>", table(columns, rows, text=self.text)]
        out.append('<ul class="notes">' + "".join(f"<li>{_e(s)}</li>" for s in sentences) + "</ul>")
        return "\n".join(out)

    def notes(self) -> str:
        lines: dict[str, None] = {}
        for r in self.results:
            uncertainty = _dict(r.doc.get("uncertainty"))
            warnings, notes = uncertainty.get("warnings"), r.doc.get("notes")
            found = [*(warnings if isinstance(warnings, list) else []), uncertainty.get("caution")]
            found += notes if isinstance(notes, list) else []
            for line in found:
                if isinstance(line, str) and line:
                    lines[(f"{r.label}: " if self.several else "") + self.text(line)] = None
        if not lines:
            return ""
        found = [f"<li>{_e(t)}</li>" for t in lines]
        more = (
            f'<details><summary>{len(found) - 5} more</summary><ul class="notes">{"".join(found[5:])}</ul></details>'
            if len(found) > 5
            else ""
        )
        return f'<h3>Warnings and notes</h3><ul class="notes">{"".join(found[:5])}</ul>{more}'


def versions_section(result: Result, text: Text, anchor: str) -> str:
    """A comparison of versions: its rows (every measure per version, and the change), the
    headline per row and version as a chart, and the paired changes of each model."""
    doc = result.doc
    tags = [str(v.get("tag")) for v in doc["versions"] if isinstance(v, dict)]
    keys = [str(k) for k in doc.get("keys") or []] if isinstance(doc.get("keys"), list) else []
    rows = [r for r in doc["rows"] if isinstance(r, dict)]
    columns = list(dict.fromkeys(c for r in rows for c in r)) or keys
    out = [f'<section id="{anchor}"><h2>{_e(doc.get("kind", ""))}: {_e(" vs ".join(tags))}</h2>']
    out.append(
        '<ul class="runs">'
        + "".join(
            f"<li><b>{_e(v.get('tag'))}</b>: {_e(text(v.get('source')))}"
            + (f" · {_e(text(v.get('source_copy')))}" if v.get("source_copy") not in (None, "unknown") else "")
            + "</li>"
            for v in doc["versions"]
            if isinstance(v, dict)
        )
        + "</ul>"
    )
    cells = [
        [
            text_cell(text(r.get(c)))
            if c in keys
            else number_cell(r.get(c))
            if _is_number(r.get(c)) or r.get(c) is None
            else text_cell(text(r.get(c)))
            for c in columns
        ]
        for r in rows
    ]
    out += ["<h3>Side by side</h3>", table(columns, cells, text=text)]
    headline = str(doc["measures"][0])
    colours = {t: PALETTE[n % len(PALETTE)] for n, t in enumerate(tags)}
    sections: list[tuple[str, list[Bar]]] = [
        (
            " / ".join(text(r.get(k)) for k in keys if r.get(k) not in (None, "")),
            [(t, r.get(f"{headline} {t}"), None, colours[t]) for t in tags],
        )
        for r in rows
    ]
    if 0 < len(rows) * len(tags) <= MOST_BARS:
        out.append(
            f'<div class="charts">{figure(f"{headline} per version", bar_chart(sections) + legend(list(colours.items())))}</div>'
        )
    paired = []
    for step in _dicts(doc.get("paired")):
        for model in _dicts(step.get("models")):
            for measure, found in _dict(model.get("measures")).items():
                found = _dict(found)
                paired.append(
                    [
                        text_cell(f"{step.get('from')} → {step.get('to')}"),
                        text_cell(text(model.get("model"))),
                        text_cell(measure),
                        number_cell(found.get("difference"), found.get("interval")),
                        number_cell(found.get("p_value")),
                        text_cell(
                            ""
                            if "difference" not in found
                            else "within noise"
                            if found.get("within_noise")
                            else "beyond noise"
                        ),
                        number_cell(model.get("shared")),
                    ]
                )
    if paired:
        out += [
            "<h3>Paired changes</h3>",
            table(["versions", "model", "measure", "change", "p", "verdict", "units in both"], paired, text=text),
        ]
    how = _dict(doc.get("decomposition")).get("how")
    if how:
        out.append(f'<p class="meaning">{_e(text(how))}</p>')
    out.append("</section>")
    return "\n".join(out)


# -- the page ----------------------------------------------------------------------------------
STYLE = """
:root{--fg:#1b1f24;--muted:#58636f;--line:#d5dbe1;--bg:#fff;--alt:#f5f7f9;--accent:#0b5fad}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1200px;margin:0 auto;padding:14px 24px 48px}
h1{font-size:1.45rem;margin:.3em 0}
h2{font-size:1.25rem;margin:1.6em 0 .4em;padding-bottom:.2em;border-bottom:2px solid var(--line)}
h3{font-size:1.02rem;margin:1.3em 0 .3em}
nav ul{display:flex;flex-wrap:wrap;gap:4px 14px;padding:0;margin:.3em 0;list-style:none}
a{color:var(--accent)}
.muted,.meaning{color:var(--muted)}
.meaning{margin:.2em 0 .6em;max-width:70em}
ul.runs{padding-left:1.1em;margin:.3em 0}
ul.notes{padding-left:1.1em;color:var(--muted);font-size:13px}
.wrap{overflow-x:auto;border:1px solid var(--line);border-radius:6px;margin:6px 0 14px}
table{border-collapse:collapse;width:100%;font-size:14px}
caption{text-align:left;padding:4px 8px;color:var(--muted)}
th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap;vertical-align:top}
thead th{background:var(--alt);position:sticky;top:0}
th button{font:inherit;font-weight:600;color:inherit;background:none;border:0;padding:0;cursor:pointer;text-align:left}
th[aria-sort=ascending] button::after{content:" \\25B2";font-size:10px}
th[aria-sort=descending] button::after{content:" \\25BC";font-size:10px}
tbody tr:nth-child(even){background:var(--alt)}
th:first-child,td:first-child{position:sticky;left:0;background:inherit;z-index:1}
tbody tr{background:var(--bg)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.iv{color:var(--muted);font-size:12px}
.warn{display:inline-block;padding:0 5px;border-radius:8px;background:#f4d58d;color:#5c4400;font-size:11px;font-weight:700}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,350px),1fr));gap:14px;margin:8px 0 14px}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:8px 10px;min-width:0}
figcaption{font-weight:600;font-size:14px;margin-bottom:4px}
svg{display:block;width:100%;height:auto}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;font-size:12px;fill:#2b3138}
svg text.h{font-weight:600}
svg .axis{stroke:#7b848e;fill:none}
svg .grid{stroke:#e3e7eb;fill:none}
svg .iv{stroke:#2b3138;stroke-width:1.1;fill:none}
svg .neutral{stroke:#b00020;stroke-dasharray:4 3;fill:none}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:3px 12px;padding:0;margin:6px 0 0;font-size:12px}
.legend span{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.legend svg.stroke{display:inline-block;width:22px;height:10px;margin-right:5px;vertical-align:-1px}
details{margin:0 0 14px}summary{cursor:pointer;color:var(--accent)}
footer{margin-top:3em;color:var(--muted);font-size:12px}
@media (max-width:640px){main{padding:10px 12px 32px}body{font-size:14px}svg text{font-size:13px}table{font-size:13px}th,td{padding:3px 7px}h1{font-size:1.25rem}}
"""

SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, column) {
    th.querySelector("button").addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var key = function (row) {
        var cell = row.cells[column];
        if (!cell) return null;
        if (cell.hasAttribute("data-v")) { var v = cell.getAttribute("data-v"); return v === "" ? null : parseFloat(v); }
        return cell.textContent.trim();
      };
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
        var order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), undefined, {numeric: true});
        return up ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def render(results: list[Result]) -> str:
    """The whole page for the results, in the order given: one section per kind (every file
    of it side by side) and one per comparison of versions."""
    names = [n for r in results if not r.comparison for n in r.doc["models"]]
    names += [
        str(row.get("model"))
        for r in results
        if r.comparison
        for row in r.doc["rows"]
        if isinstance(row, dict) and row.get("model")
    ]
    names += [
        str(m.get("model"))
        for r in results
        if r.comparison
        for s in _dicts(r.doc.get("paired"))
        for m in _dicts(s.get("models"))
    ]
    text = Text(list(dict.fromkeys(names)))
    kinds: dict[str, list[Result]] = {}
    parts: list[tuple[str, str]] = []  # (anchor, title) for the contents
    order: list[Result | str] = []
    for r in results:
        if r.comparison:
            order.append(r)
        else:
            kind = str(r.doc.get("kind") or "results")
            if kind not in kinds:
                order.append(kind)
            kinds.setdefault(kind, []).append(r)
    sections = []
    for n, item in enumerate(order, start=1):
        anchor = f"s{n}"
        if isinstance(item, Result):
            parts.append(
                (
                    anchor,
                    f"{item.doc.get('kind', '')}: {' vs '.join(str(v.get('tag')) for v in item.doc['versions'] if isinstance(v, dict))}",
                )
            )
            sections.append(versions_section(item, text, anchor))
        else:
            parts.append((anchor, f"{item} ({len(kinds[item])} file{'s' if len(kinds[item]) > 1 else ''})"))
            sections.append(KindSection(item, kinds[item], text, len(kinds[item]) > 1).render(anchor))
    models = len(dict.fromkeys(n for r in results if not r.comparison for n in r.doc["models"]))
    title = "Evaluation report: " + ", ".join(dict.fromkeys(str(r.doc.get("kind", "")) for r in results))
    contents = "".join(f'<li><a href="#{a}">{_e(t)}</a></li>' for a, t in parts) if len(parts) > 1 else ""
    tools = ", ".join(dict.fromkeys(f"workbench {r.doc.get('tool_version', '?')}" for r in results))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body><main>"
        f"<h1>{_e(title)}</h1>"
        f'<p class="muted">{len(results)} result file{"s" if len(results) != 1 else ""}: {_e(", ".join(r.label for r in results))}'
        + (f" · {models} model{'s' if models != 1 else ''}" if models else "")
        + " · click a column's head to sort the table by it</p>"
        + (f"<nav><ul>{contents}</ul></nav>" if contents else "")
        + "\n".join(sections)
        + f"<footer>Written by workbench {_e(__version__)} from results of {_e(tools)}.</footer>"
        f"</main><script>{SCRIPT}</script></body></html>\n"
    )


def write_report(paths: list[Path], out: Path) -> Path:
    """Read every result (all of them before anything is written), then write `out`/index.html."""
    from ..core.outputs import atomic_write_text, check_outputs

    if not paths:
        raise InputError("no result file: give the --json files of workbench evaluate")
    docs = [read_result(Path(p)) for p in paths]
    target = Path(out) / "index.html"
    check_outputs([("--out", target, False)], [("the result file", Path(p)) for p in paths])
    page = render([Result(label, doc) for label, doc in zip(labels([Path(p) for p in paths]), docs)])
    atomic_write_text(target, page)
    return target

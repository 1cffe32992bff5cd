"""`workbench evaluate` for a kind that declares its evaluator (`declared.Declared`): the loop
with progress bars and the score cache, then the terminal table, the CSV of figures, the items
file, the JSON and the chart with error bars, and the figures `workbench evaluate A B` compares.
Every declared kind gets these the same way; the kind writes none of them.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from ..core.errors import InputError
from .declared import Declared
from .intervals import bar_errors, interval_columns, with_interval
from .output import chart_caption, save_chart, short, write_outputs
from .versions import Compared


def evaluator_of(module):
    """What `workbench evaluate` calls for a kind's evaluator module: the module itself, or for a
    module that declares (`DECLARED`) the evaluator made from its declaration."""
    declared = getattr(module, "DECLARED", None)
    return DeclaredEvaluator(declared) if isinstance(declared, Declared) else module


def load_role(role, name: str, *, root: Path | None, spec, runtimes: dict, cache_path: Path | None):
    """A role's model as `workbench evaluate` loads it: found locally or on the Hub, run as the
    model options say, its outputs cached in `cache_path`, how it ran recorded in `runtimes`."""
    from ..models.roles import CLASSIFIER, GENERATOR

    if role.uses == CLASSIFIER:
        from ..models.classify import load_classifier

        return load_classifier(name, root=root, spec=spec, cache_path=cache_path, runtimes=runtimes)
    from ..models.lm_loading import load_scorer

    return load_scorer(name, root=root, spec=spec, runtimes=runtimes, cache_path=cache_path,
                       served=role.uses == GENERATOR)


class DeclaredEvaluator:
    """The `Evaluator` of kinds/base.py, made from a declaration."""

    def __init__(self, declared: Declared):
        self.declared = declared
        keys = tuple(s.key for s in declared.statistics if s.compared)
        self.COMPARED = Compared(keys=("model", "level", "group"), measures=(*keys, "n"), unit=declared.unit)

    def detect(self, path) -> bool:
        return self.declared.detect(path)

    def evaluate(self, request, console) -> dict:
        from .. import sources
        from ..core.progress import progress_bar

        d = self.declared
        if request.predictions is not None or request.predictions_out is not None:
            raise InputError(f"{d.kind} scores models directly: --predictions/--predictions-out are not used "
                             "(--items writes each item's scores)")
        if len(request.sources) != 1:
            raise InputError(f"{d.kind} evaluates one file or release at a time (got {len(request.sources)})")
        roles = {r.name: request.options.get(r.dest) for r in d.roles}
        d.check_roles(request.models, roles)
        options = {o.dest: request.options.get(o.dest, o.default) for o in d.options}
        rule = d.rule(request.score_rule)
        if rule:
            options["score_rule"] = rule
        path, label = sources.data_file(request.sources[0], d.kind, d.data, d.suffixes)
        items = d.read(path)                  # checked whole before any model loads

        def loaded(role, name):
            return load_role(role, name, root=request.root, spec=request.spec, runtimes=request.runtimes,
                             cache_path=request.cache_path)

        @contextmanager
        def progress_for(name, total):
            with progress_bar(f"{short(name)}: {d.title}", total) as advance:
                yield advance

        notes: list[str] = []
        doc, rows = d.evaluate_items(items, label, options, request.intervals, loaded, request.models, roles,
                                     progress_for, notes.append)
        console.print(table(d, doc))
        console.print(d.meaning, markup=False, highlight=False)
        for line in notes:
            console.print(line, markup=False, highlight=False)
        write_outputs(request, doc, csv_rows(d, doc), rows, lambda doc, folder: plot(d, doc, folder), console)
        return doc

    def measure_rows(self, doc: dict) -> list[dict]:
        return csv_rows(self.declared, doc)


def _levels(d: Declared, entry: dict):
    """(level, group, figures): overall (group "all", as every kind's CSV says it), then each group."""
    by = f"by_{d.group_name.replace(' ', '_')}"
    return [("overall", "all", entry["overall"]), *((d.group_name, g, v) for g, v in entry[by].items())]


def _shown(level: str, group: str) -> str:
    return "overall" if level == "overall" else group


def table(d: Declared, doc: dict):
    """One row per group and overall; per model, each statistic with its interval."""
    from rich.table import Table

    t = Table(title=f"{d.title}: " + ", ".join(s.title for s in d.statistics)
              + (f" ({d.units} resampled)" if doc.get("uncertainty", {}).get("resamples") else ""))
    t.add_column(d.group_name)
    t.add_column(d.items_name, justify="right")
    models = doc["models"]
    for name in models:
        for n, s in enumerate(d.statistics):
            t.add_column(f"{short(name)}\n{s.title}" if n == 0 else s.title, justify="right")
    first = _levels(d, next(iter(models.values())))
    for k, (level, group, node) in enumerate(first):
        cells = []
        for entry in models.values():
            v = _levels(d, entry)[k][2]
            cells += [with_interval(v.get(s.key), (v.get("intervals") or {}).get(s.key), s.digits)
                      for s in d.statistics]
        t.add_row(_shown(level, group), str(node["n"]), *cells, end_section=k == 0)
    for gap in d.gaps:
        for name, entry in models.items():
            v = entry["overall"]
            if gap.key in v:
                t.caption = (t.caption + "; " if t.caption else "") + \
                    f"{short(name)}: {gap.title} {with_interval(v[gap.key], (v.get('intervals') or {}).get(gap.key), gap.digits)}"
    return t


def csv_rows(d: Declared, doc: dict) -> list[dict]:
    keys = tuple(s.key for s in d.statistics) + tuple(g.key for g in d.gaps)
    out = []
    for name, entry in doc["models"].items():
        for level, group, node in _levels(d, entry):
            present = tuple(k for k in keys if k in node)
            out.append({"model": name, **({"score_rule": entry["score_rule"]} if "score_rule" in entry else {}),
                        "level": level, "group": group, **{k: node[k] for k in present}, "n": node["n"],
                        **interval_columns(node, present)})
    return out


def plot(d: Declared, doc: dict, folder: Path) -> Path:
    """One panel per charted statistic: a bar per group (and overall) per model, each with its
    interval as an error bar, and the statistic's no-bias line where it has one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    charted = [s for s in d.statistics if s.chart] or list(d.statistics)
    models = doc["models"]
    levels = _levels(d, next(iter(models.values())))
    labels = [f"{_shown(level, g)}\n(n={node['n']})" for level, g, node in levels]
    width = 0.8 / max(1, len(models))
    fig, axes = plt.subplots(1, len(charted), figsize=(max(6.0, 0.5 * len(levels) * max(1, len(models)) + 2.5)
                                                        * len(charted), 4.6), squeeze=False)
    x = np.arange(len(levels))
    for ax, s in zip(axes[0], charted):
        for i, (name, entry) in enumerate(models.items()):
            nodes = [node for _, _, node in _levels(d, entry)]
            values = [node.get(s.key) for node in nodes]
            yerr, _ = bar_errors(values, [(node.get("intervals") or {}).get(s.key) for node in nodes])
            ax.bar(x - 0.4 + width * (i + 0.5), [np.nan if v is None else v for v in values], width,
                   label=short(name), yerr=yerr, error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "0.25"})
        if s.neutral is not None:
            ax.axhline(s.neutral, color="black", linestyle="--", linewidth=1, label=f"{s.neutral:g} = unbiased")
        ax.set_xticks(x, labels, fontsize=8, rotation=30 if len(levels) > 5 else 0,
                      ha="right" if len(levels) > 5 else "center")
        ax.set_title(s.title, fontsize=10)
    axes[0][0].legend(fontsize=8)
    gaps = "; ".join(f"{short(name)}: {g.title} {with_interval(entry['overall'].get(g.key), (entry['overall'].get('intervals') or {}).get(g.key), g.digits)}"
                     for g in d.gaps for name, entry in models.items() if g.key in entry["overall"])
    fig.suptitle(f"{d.title} per {d.group_name}\n{chart_caption(doc)}" + (f"\n{gaps}" if gaps else ""), fontsize=10)
    fig.tight_layout()
    path = folder / f"{d.chart_name or d.kind.replace('-', '_')}.png"
    save_chart(fig, path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path

"""Evaluator outputs: terminal tables (the paper's Tables 5 and 7 shape), JSON, CSV, PNG plots."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rich.table import Table

from .... import __version__
from ....core.workspace import atomic_write_text
from ....evaluation.intervals import bar_errors, with_interval
from ....evaluation.output import save_chart
from .metrics.nli_bias import MEASURES
from .metrics.nli_scores import SHARES
from .results import document


def short(name: str) -> str:
    return name.rstrip("/").split("/")[-1]


def _domains(results: list[dict]) -> list[str]:
    return sorted({d for entry in results for m in entry["models"].values() for d in m["by_domain"]})


def tables(results: list[dict]) -> list[Table]:
    domains = _domains(results)
    several = len(results) > 1
    t5 = Table(title="Accuracy / BBNLI aggregate bias score (%) per domain")
    t7 = Table(title="Counterfactual measures (%): mispredicted = pro + anti + error + unpaired")
    for t in (t5, t7):
        if several:
            t.add_column("dataset")
        t.add_column("model")
    for d in domains + ["overall"]:
        t5.add_column(f"{d}\nacc / bias", justify="right")
        t7.add_column(f"{d}\nmis / pro / anti / err", justify="right")
    for entry in results:
        for model, m in entry["models"].items():
            cells5, cells7 = [], []
            for d in domains + ["overall"]:
                v = m["overall"] if d == "overall" else m["by_domain"].get(d)
                if v is None:
                    cells5.append("-")
                    cells7.append("-")
                    continue
                found = v.get("intervals", {})
                cells5.append(
                    f"{with_interval(v['accuracy'], found.get('accuracy'))} / "
                    f"{with_interval(v['bias_aggregate'], found.get('bias_aggregate'))}"
                )
                cells7.append(f"{v['mispredicted']:.1f} / {v['cf_pro']:.1f} / {v['cf_anti']:.1f} / {v['cf_error']:.1f}")
            lead = ([entry["dataset"]] if several else []) + [short(model)]
            t5.add_row(*lead, *cells5)
            t7.add_row(*lead, *cells7)
    return [t5, t7]


def to_json(results: list[dict], annotations: dict | None = None) -> dict:
    """`annotations`: how the models ran, --unverified warnings (EvaluateRequest.annotations)."""
    return {"tool": "workbench", "tool_version": __version__, **document(results, annotations)}


def write_json(results: list[dict], path: Path, annotations: dict | None = None) -> None:
    atomic_write_text(path, json.dumps(to_json(results, annotations), indent=2, sort_keys=True) + "\n")


def write_csv(results: list[dict], path: Path) -> None:
    """The measures as CSV rows, written atomically like every output."""
    import io

    f = io.StringIO(newline="")
    w = csv.writer(f)
    w.writerow(
        [
            "dataset",
            "revision",
            "model",
            "level",
            "group",
            *MEASURES,
            *(f"{k}_{end}" for k in SHARES for end in ("lower", "upper")),
        ]
    )
    for entry in results:
        for model, m in entry["models"].items():
            w.writerow(
                [
                    entry["dataset"],
                    entry["revision"] or "",
                    model,
                    "overall",
                    "all",
                    *(m["overall"][k] for k in MEASURES),
                    *_bounds(m["overall"]),
                ]
            )
            for level in ("by_domain", "by_subtopic"):
                for group, v in m[level].items():
                    w.writerow(
                        [
                            entry["dataset"],
                            entry["revision"] or "",
                            model,
                            level.removeprefix("by_"),
                            group,
                            *(v[k] for k in MEASURES),
                            *_bounds(v),
                        ]
                    )
    atomic_write_text(Path(path), f.getvalue())


def _bounds(node: dict) -> list:
    """Each share's interval bounds (empty cells without intervals)."""
    found = node.get("intervals", {})
    return [found.get(k, {}).get(end) for k in SHARES for end in ("lower", "upper")]


BAR_PX = 18  # at least this many pixels per bar, so a vertical value label fits inside its bar
DPI = 120
CF_COLOURS = {"cf_pro": "#d62728", "cf_anti": "#1f77b4", "cf_error": "#7f7f7f", "unpaired_mispredicted": "#c7c7c7"}
CF_NAMES = {
    "cf_pro": "pro-stereotypical",
    "cf_anti": "anti-stereotypical",
    "cf_error": "group-insensitive error",
    "unpaired_mispredicted": "unpaired mispredicted",
}


def _wrap(text: str, width: int = 26) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=True, break_long_words=True)) or text


def _value(m: dict, domain: str, key: str) -> float:
    return (m["overall"] if domain == "overall" else m["by_domain"].get(domain, {})).get(key, 0.0)


def accuracy_figure(results: list[dict]):
    """Accuracy per domain: one panel per release, one bar per model with its interval as an
    error bar (when intervals were computed), the legend beside the panels (names wrapped),
    domain names wrapped under wide enough slots, and value labels turned upright above their
    bars and error bars so neighbours never collide."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    domains = _domains(results) + ["overall"]
    models = list(dict.fromkeys(model for e in results for model in e["models"]))
    panel_in = max(3.2, len(domains) * max(0.75, len(models) * BAR_PX * 1.25 / DPI))
    fig, axes = plt.subplots(
        1,
        len(results),
        figsize=(panel_in * len(results) + 3.2, 4.4),
        sharey=True,
        squeeze=False,
        layout="constrained",
        dpi=DPI,
    )
    width = 0.8 / max(1, len(models))
    x = np.arange(len(domains))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, entry in zip(axes[0], results):
        for i, model in enumerate(models):
            m = entry["models"].get(model)
            if m is None:
                continue
            values = [_value(m, d, "accuracy") for d in domains]
            scopes = [m["overall"] if d == "overall" else m["by_domain"].get(d, {}) for d in domains]
            yerr, beyond = bar_errors(values, [(scope.get("intervals") or {}).get("accuracy") for scope in scopes])
            at = x + i * width - 0.4 + width / 2
            ax.bar(
                at,
                values,
                width,
                color=colours[i % len(colours)],
                label=_wrap(short(model)),
                yerr=yerr,
                error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "0.25"},
            )
            for left, value, above in zip(at, values, beyond):  # the value above its error bar
                ax.annotate(
                    f"{value:.0f}",
                    (left, value + above),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    rotation=90,
                )
        ax.set_xticks(x, [_wrap(d, 10) for d in domains], fontsize=8)
        ax.set_ylim(0, 118)
        ax.set_title(_wrap(entry["dataset"], 40) if len(results) > 1 else "Accuracy per domain", fontsize=9)
    axes[0][0].set_ylabel("accuracy (% neutral predictions)")
    if len(results) > 1:
        fig.suptitle("Accuracy per domain")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize=7, title="model", title_fontsize=8)
    return fig


def counterfactual_figure(results: list[dict]):
    """Mispredictions split into pro / anti / group-insensitive error: one panel per release and
    model (rows: releases, columns: models), stacked bars per domain, one legend below them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    domains = _domains(results) + ["overall"]
    models = list(dict.fromkeys(model for e in results for model in e["models"]))
    panel_in = max(2.6, len(domains) * 0.75)
    fig, axes = plt.subplots(
        len(results),
        len(models),
        figsize=(panel_in * len(models) + 0.8, 3.1 * len(results) + 1.0),
        sharey=True,
        squeeze=False,
        layout="constrained",
        dpi=DPI,
    )
    for r, entry in enumerate(results):
        for c, model in enumerate(models):
            ax = axes[r][c]
            m = entry["models"].get(model)
            if m is None:
                ax.set_axis_off()
                continue
            bottom = [0.0] * len(domains)
            for key, colour in CF_COLOURS.items():
                values = [_value(m, d, key) for d in domains]
                ax.bar(range(len(domains)), values, 0.75, bottom=bottom, color=colour, label=CF_NAMES[key])
                bottom = [b + v for b, v in zip(bottom, values)]
            ax.set_xticks(range(len(domains)), [_wrap(d, 10) for d in domains], fontsize=7)
            title = _wrap(short(model), 30) + (f"\n{_wrap(entry['dataset'], 30)}" if len(results) > 1 else "")
            ax.set_title(title, fontsize=7)
        axes[r][0].set_ylabel("% of samples", fontsize=8)
    fig.suptitle("Mispredictions: pro / anti / group-insensitive error")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", fontsize=7, ncol=2 if len(models) == 1 else 4)
    return fig


def write_plots(results: list[dict], folder: Path) -> list[Path]:
    """accuracy.png: accuracy per domain per model; counterfactual.png: stacked pro/anti/error."""
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in (("accuracy.png", accuracy_figure), ("counterfactual.png", counterfactual_figure)):
        fig = make(results)
        path = folder / name
        save_chart(fig, path, dpi=DPI)
        plt.close(fig)
        written.append(path)
    return written

"""StereoSet outputs: the terminal table, CSV rows, per-sentence items and the ss/lms chart."""

from __future__ import annotations

from pathlib import Path

from ...evaluation.intervals import bar_errors, interval_columns, with_interval
from ...evaluation.output import chart_caption, save_chart, short
from .data import SPLITS

MEASURES = ("lms", "ss", "icat")


def _figures(node: dict) -> dict:
    """A group's figures and their interval columns (without the nested `intervals`)."""
    return {**{k: v for k, v in node.items() if k != "intervals"}, **interval_columns(node, MEASURES)}


def rows(doc: dict) -> list[dict]:
    """One row per model and level: overall, each split, each split × domain."""
    out = []
    for model, m in doc["models"].items():
        out.append({"model": model, "split": "overall", "domain": "all", **_figures(m["overall"])})
        for split in SPLITS:
            if split not in m:
                continue
            out.append({"model": model, "split": split, "domain": "all", **_figures(m[split]["overall"])})
            for domain, v in m[split]["by_domain"].items():
                out.append({"model": model, "split": split, "domain": domain, **_figures(v)})
    return out


def table(doc: dict):
    from rich.table import Table

    t = Table(
        title=f"StereoSet ({doc.get('score_rule', 'mean-prob')}): lms / ss / icat in percent "
        "(ideal: lms 100, ss 50, icat 100)"
    )
    for name, justify in (
        ("model", "left"),
        ("split", "left"),
        ("domain", "left"),
        ("n", "right"),
        ("lms", "right"),
        ("ss", "right"),
        ("icat", "right"),
    ):
        t.add_column(name, justify=justify)
    previous = None
    for r in rows(doc):
        model = short(r["model"]) if r["model"] != previous else ""
        previous = r["model"]
        style = "bold" if r["domain"] == "all" else None
        shown = [with_interval(r[k], {"lower": r.get(f"{k}_lower"), "upper": r.get(f"{k}_upper")}, 2) for k in MEASURES]
        t.add_row(model, r["split"], r["domain"], str(r["n"]), *shown, style=style)
    return t


def item_rows(data, scores_by_model: dict[str, dict[str, float]]) -> list[dict]:
    """Per sentence and model: where it comes from, its gold label and its score."""
    out = []
    for model, scores in scores_by_model.items():
        for e, s in data.sentences():
            out.append(
                {
                    "model": model,
                    "split": e.split,
                    "domain": e.domain,
                    "target": e.target,
                    "example_id": e.id,
                    "sentence_id": s.id,
                    "gold_label": s.gold,
                    "sentence": s.text,
                    "score": scores[s.id],
                }
            )
    return out


def write_items(items: list[dict], path: Path) -> None:
    """In the format the file's extension names: the shared writer every kind's --items uses."""
    from ...evaluation.output import write_items as shared

    shared(items, path)


def write_plot(doc: dict, folder: Path) -> Path:
    """stereoset.png: ss (x) against lms (y), one marker per model and level, the ideal point
    (ss 50, lms 100) starred, each marker with its ss and lms intervals as error bars (none where
    a group has no verdict). Distance to the star reads as distance from an ideal model. Each
    model's name and icat are in the legend beside the axes, where no marker can cover them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 6), dpi=120)
    markers = {"overall": ("o", 90), "intrasentence": ("s", 45), "intersentence": ("^", 45)}
    colours = plt.get_cmap("tab10")
    for i, (model, m) in enumerate(doc["models"].items()):
        colour = colours(i % 10)
        for level, (marker, size) in markers.items():
            if level not in m:
                continue
            v = m[level] if level == "overall" else m[level]["overall"]
            found = v.get("intervals", {})
            xerr, yerr = bar_errors([v["ss"]], [found.get("ss")])[0], bar_errors([v["lms"]], [found.get("lms")])[0]
            if xerr is not None or yerr is not None:
                ax.errorbar(
                    [v["ss"]],
                    [v["lms"]],
                    xerr=xerr,
                    yerr=yerr,
                    fmt="none",
                    ecolor=colour,
                    elinewidth=0.8,
                    capsize=2,
                    zorder=2,
                )
            ax.scatter(
                v["ss"],
                v["lms"],
                marker=marker,
                s=size,
                color=colour,
                edgecolor="black",
                linewidth=0.5,
                zorder=3,
                label=f"{short(model)} (icat {m['overall']['icat']:.1f})" if level == "overall" else None,
            )
    ax.scatter(
        [50], [100], marker="*", s=260, color="gold", edgecolor="black", zorder=4, label="ideal (ss 50, lms 100)"
    )
    ax.axvline(50, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 108)  # the star at lms 100 stays off the frame
    ax.set_xlabel("stereotype score ss (%)  ← anti-stereotypical · stereotypical →")
    ax.set_ylabel("language modeling score lms (%)")
    ax.set_title(
        f"StereoSet: ss against lms (○ overall, □ intrasentence, △ intersentence)\n{chart_caption(doc)}", fontsize=10
    )
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8, frameon=False)
    fig.tight_layout()
    path = folder / "stereoset.png"
    save_chart(fig, path)
    plt.close(fig)
    return path

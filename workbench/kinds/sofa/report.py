"""SOFA's terminal tables, CSV rows and PNG charts, all drawn from the JSON document.

Higher SOFA (variance of log10 PPL* across identities) means the model treats identities more
unequally for the same stereotype, so every ranking puts the highest first.
"""

from __future__ import annotations

from pathlib import Path

from ...evaluation.intervals import bar_errors, interval_columns
from ...evaluation.output import chart_caption, save_chart, short

TOP_STEREOTYPES = 5
TOP_IDENTITIES = 3
PLOT_IDENTITIES = 12


def with_bounds(node: dict) -> str:
    """A group's SOFA with its interval: "0.0123 [0.0101, 0.0150]"."""
    found = node.get("intervals", {}).get("sofa")
    if node["sofa"] is None or not found or found["lower"] is None:
        return fmt(node["sofa"])
    return f"{fmt(node['sofa'])} [{fmt(found['lower'])}, {fmt(found['upper'])}]"


def fmt(value) -> str:
    return "-" if value is None else f"{value:.4g}"


def ranked_models(doc: dict) -> list[str]:
    """Models by global SOFA, highest first (models without a score last)."""
    models = doc["models"]
    return sorted(models, key=lambda m: (models[m]["overall"]["sofa"] is None, -(models[m]["overall"]["sofa"] or 0.0)))


def ranked_categories(doc: dict) -> list[str]:
    """Categories by their mean SOFA over the models, highest first."""
    scores: dict[str, list[float]] = {}
    for m in doc["models"].values():
        for c, v in m["by_category"].items():
            scores.setdefault(c, [])
            if v["sofa"] is not None:
                scores[c].append(v["sofa"])
    return sorted(scores, key=lambda c: (not scores[c], -(sum(scores[c]) / len(scores[c]) if scores[c] else 0.0), c))


def tables(doc: dict) -> list:
    from rich.table import Table

    order = ranked_models(doc)
    models = doc["models"]
    out = []

    t = Table(
        title="SOFA: models ranked by global score (mean over categories of the per-stereotype variance of "
        "log10 PPL*; higher = more disparate treatment)"
    )
    for name, justify in (
        ("rank", "right"),
        ("model", "left"),
        ("score rule", "left"),
        ("global SOFA", "right"),
        ("probes", "right"),
        ("stereotypes", "right"),
        ("single-identity", "right"),
    ):
        t.add_column(name, justify=justify)
    for rank, name in enumerate(order, start=1):
        o = models[name]["overall"]
        t.add_row(
            str(rank),
            short(name),
            models[name]["score_rule"],
            with_bounds(o),
            f"{o['n_probes']:,}",
            f"{o['n_stereotypes']:,}",
            f"{o['n_single_identity']:,}",
        )
    out.append(t)

    t = Table(title="SOFA per category, ranked (value and the category's rank within each model)")
    t.add_column("category")
    for name in order:
        t.add_column(short(name), justify="right")
    per_model_rank = {}
    for name in order:
        scored = [(c, v["sofa"]) for c, v in models[name]["by_category"].items() if v["sofa"] is not None]
        per_model_rank[name] = {c: i for i, (c, _) in enumerate(sorted(scored, key=lambda x: -x[1]), start=1)}
    for c in ranked_categories(doc):
        cells = []
        for name in order:
            v = models[name]["by_category"].get(c)
            if v is None:
                cells.append("-")
                continue
            rank = per_model_rank[name].get(c)
            cells.append(f"{with_bounds(v)} ({rank})" if rank else with_bounds(v))
        t.add_row(c, *cells)
    t.add_row("global", *(fmt(models[name]["overall"]["sofa"]) for name in order), style="bold")
    out.append(t)

    t = Table(
        title=f"Stereotypes with the highest delta disparity (DDS = max - min log10 PPL*), top {TOP_STEREOTYPES} per model"
    )
    for name in ("model", "id", "category", "stereotype", "DDS", "variance", "lowest identity"):
        t.add_column(name, justify="right" if name in ("DDS", "variance") else "left")
    for name in order:
        for e in models[name]["highest_dds"][:TOP_STEREOTYPES]:
            text = e.get("stereotype") or ""
            t.add_row(
                short(name),
                e["id"],
                e["category"],
                text if len(text) <= 48 else text[:47] + "…",
                fmt(e["dds"]),
                fmt(e["variance"]),
                e["lowest_identity"] or "-",
            )
    out.append(t)

    t = Table(
        title=f"Identities most often lowest (the model's likeliest identity for a stereotype), top {TOP_IDENTITIES} per category"
    )
    t.add_column("category")
    for name in order:
        t.add_column(short(name))
    for c in ranked_categories(doc):
        cells = []
        for name in order:
            members = [
                (i, v) for i, v in models[name]["by_identity"].items() if v["category"] == c and v["share_lowest"]
            ]
            members.sort(key=lambda x: (-x[1]["share_lowest"], x[0]))
            cells.append("\n".join(f"{i}: {100 * v['share_lowest']:.0f}%" for i, v in members[:TOP_IDENTITIES]) or "-")
        t.add_row(c, *cells)
    out.append(t)
    return out


def csv_rows(doc: dict) -> list[dict]:
    """One row per model and level: overall, category, identity, stereotype."""
    rows = []
    for model in ranked_models(doc):
        m = doc["models"][model]
        base = {"model": model, "score_rule": m["score_rule"]}
        o = m["overall"]
        rows.append(
            {
                **base,
                "level": "overall",
                "group": "all",
                "category": "",
                "sofa": o["sofa"],
                "n_stereotypes": o["n_stereotypes"],
                "n_single_identity": o["n_single_identity"],
                "n_probes": o["n_probes"],
                **interval_columns(o, ("sofa",)),
            }
        )
        for c, v in m["by_category"].items():
            rows.append(
                {
                    **base,
                    "level": "category",
                    "group": c,
                    "category": c,
                    "sofa": v["sofa"],
                    "n_stereotypes": v["n_stereotypes"],
                    "n_single_identity": v["n_single_identity"],
                    "n_probes": v["n_probes"],
                    **interval_columns(v, ("sofa",)),
                }
            )
        for i, v in m["by_identity"].items():
            rows.append(
                {
                    **base,
                    "level": "identity",
                    "group": i,
                    "category": v["category"],
                    "share_lowest": v["share_lowest"],
                    "n_lowest": v["n_lowest"],
                }
            )
        for s, v in m["by_stereotype"].items():
            rows.append(
                {
                    **base,
                    "level": "stereotype",
                    "group": s,
                    "category": v["category"],
                    "variance": v["variance"],
                    "dds": v["dds"],
                    "lowest_identity": v["lowest_identity"],
                    "n_identities": v["n_identities"],
                }
            )
    return rows


def write_plots(doc: dict, folder: Path) -> list[Path]:
    """sofa_by_category.png (SOFA per category per model, global last) and share_lowest.png
    (per category, the identities most often lowest, per model)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    order = ranked_models(doc)
    models = doc["models"]
    categories = ranked_categories(doc)
    written = []

    groups = categories + ["global"]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(groups) * max(1, len(order)) ** 0.5 + 2), 4.4))
    width = 0.8 / max(1, len(order))
    x = np.arange(len(groups))
    for k, name in enumerate(order):
        m = models[name]
        scopes = [m["overall"] if g == "global" else (m["by_category"].get(g) or {}) for g in groups]
        values = [scope.get("sofa") for scope in scopes]
        yerr, beyond = bar_errors(values, [(scope.get("intervals") or {}).get("sofa") for scope in scopes])
        at = x - 0.4 + width * (k + 0.5)
        ax.bar(
            at,
            [v or 0.0 for v in values],
            width,
            label=short(name),
            yerr=yerr,
            error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "0.25"},
        )
        for left, value, above in zip(at, values, beyond):  # the value above its error bar
            ax.annotate(
                fmt(value),
                (left, (value or 0.0) + above),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
                rotation=90 if len(order) > 2 else 0,
            )
    ax.set_xticks(x, groups)
    ax.set_ylabel("SOFA (mean variance of log10 PPL*)")
    ax.set_title(f"SOFA per category (higher = more disparate treatment)\n{chart_caption(doc)}", fontsize=10)
    ax.margins(y=0.2)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=min(4, len(order)))
    fig.tight_layout()
    path = folder / "sofa_by_category.png"
    save_chart(fig, path, dpi=120)
    plt.close(fig)
    written.append(path)

    cols = min(2, len(categories)) or 1
    rows = (len(categories) + cols - 1) // cols or 1
    fig, axes = plt.subplots(
        rows, cols, figsize=(6.2 * cols, 0.32 * PLOT_IDENTITIES * rows + 1.6 * rows), squeeze=False
    )
    for ax, c in zip(axes.flat, categories):
        shares: dict[str, list[float]] = {}
        for name in order:
            for i, v in models[name]["by_identity"].items():
                if v["category"] == c and v["share_lowest"] is not None:
                    shares.setdefault(i, [0.0] * len(order))[order.index(name)] = 100 * v["share_lowest"]
        shown = sorted(shares, key=lambda i: (-sum(shares[i]), i))[:PLOT_IDENTITIES]
        y = np.arange(len(shown))
        height = 0.8 / max(1, len(order))
        for k, name in enumerate(order):
            ax.barh(y - 0.4 + height * (k + 0.5), [shares[i][k] for i in shown], height, label=short(name))
        ax.set_yticks(y, [i if len(i) <= 28 else i[:27] + "…" for i in shown], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("% of the category's stereotypes where it is lowest")
        more = len(shares) - len(shown)
        ax.set_title(f"{c}" + (f" (top {len(shown)} of {len(shares)} identities)" if more > 0 else ""), fontsize=10)
    for ax in list(axes.flat)[len(categories) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(order)), fontsize=8)
    fig.suptitle(f"Share of stereotypes for which each identity has the lowest log10 PPL*\n{chart_caption(doc)}")
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    path = folder / "share_lowest.png"
    save_chart(fig, path, dpi=120)
    plt.close(fig)
    written.append(path)
    return written

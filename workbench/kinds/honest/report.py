"""HONEST outputs: terminal tables, CSV rows and the HONEST@k curve figure.

The figure follows FairBelief's: x = k, y = HONEST@k, one line per model, one panel per group
(plus the overall panel first), so models are compared inside a panel and groups across them.
"""

from __future__ import annotations

from pathlib import Path

from ...evaluation.intervals import bar_errors, with_interval
from ...evaluation.output import chart_caption, save_chart, short

MARKERS = "os^Dv<>phX*"
STYLES = ["-", "--", "-.", ":"]  # so curves that coincide stay visible under each other


def shown_ks(K: int) -> list[int]:
    """The k values a table has room for: 1, 5, 10, 20, 50, 100 up to K, and K."""
    return sorted({k for k in (1, 5, 10, 20, 50, 100) if k < K} | {K})


def tables(doc: dict) -> list:
    from rich.table import Table

    K = doc["top_k"]
    asked = doc.get("top_ks") or [K]
    ks = asked if len(asked) > 1 else shown_ks(K)
    caption = doc.get("definition") or f"share of hurtful fills among each template's top k fills, k = 1 … {K}"
    if doc.get("computation"):
        caption += f"; {doc['computation']}"
    curve = Table(title="HONEST@k (%)", caption=caption)
    curve.add_column("model")
    curve.add_column("scope")
    curve.add_column("templates", justify="right")
    for k in ks:
        curve.add_column(f"@{k}", justify="right")
    for model, m in doc["models"].items():
        scopes = [("overall", m["overall"])] + list(m["by_group"].items())
        for i, (scope, v) in enumerate(scopes):
            curve.add_row(
                short(model) if i == 0 else "",
                scope,
                str(v["n_templates"]),
                *(with_interval(v["curve"][str(k)], v.get("intervals", {}).get(f"honest@{k}"), 2) for k in ks),
                end_section=i == len(scopes) - 1,
            )
    cats = Table(
        title=f"HONEST@{K} per lexicon category (%)",
        caption=f"hurtful fills of each category / (templates × {K}); a row sums to HONEST@{K}",
    )
    cats.add_column("model")
    categories = list(dict.fromkeys(c for m in doc["models"].values() for c in m["by_lexicon_category"]))
    for c in categories:
        cats.add_column(c, justify="right")
    for model, m in doc["models"].items():
        found = m["overall"].get("intervals", {})
        cats.add_row(
            short(model),
            *(with_interval(m["by_lexicon_category"].get(c, 0.0), found.get(f"category {c}"), 2) for c in categories),
        )
    return [curve, cats]


def _bounds(node: dict, measure: str) -> dict:
    """honest_at_k's interval columns, for the k values that have one."""
    found = node.get("intervals", {}).get(measure)
    return {"lower": found["lower"], "upper": found["upper"], "se": found["se"]} if found else {}


def csv_rows(doc: dict) -> list[dict]:
    """One row per model, scope and k: the curve and the per-rank share; then the categories."""
    rows = []
    for model, m in doc["models"].items():
        for scope, name, v in [("overall", "overall", m["overall"])] + [
            ("group", g, v) for g, v in m["by_group"].items()
        ]:
            for k in range(1, doc["top_k"] + 1):
                rows.append(
                    {
                        "model": model,
                        "scope": scope,
                        "name": name,
                        "k": k,
                        "n_templates": v["n_templates"],
                        "honest_at_k": v["curve"][str(k)],
                        "share_at_rank_k": v["per_rank"][str(k)],
                        **_bounds(v, f"honest@{k}"),
                    }
                )
        for c, value in m["by_lexicon_category"].items():
            rows.append(
                {
                    "model": model,
                    "scope": "lexicon_category",
                    "name": c,
                    "k": doc["top_k"],
                    "n_templates": m["overall"]["n_templates"],
                    "honest_at_k": value,
                    "share_at_rank_k": None,
                    **_bounds(m["overall"], f"category {c}"),
                }
            )
    return rows


def write_plot(doc: dict, folder: Path) -> Path:
    """honest_curve.png in `folder`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    folder.mkdir(parents=True, exist_ok=True)
    K = doc["top_k"]
    models = list(doc["models"])
    panels = ["overall"] + list(dict.fromkeys(g for m in doc["models"].values() for g in m["by_group"]))
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.4 * cols + 0.6, 2.9 * rows + 0.9), sharex=True, sharey=True, squeeze=False
    )
    colours = plt.get_cmap("tab10" if len(models) <= 10 else "tab20")
    ks = list(range(1, K + 1))
    top = 0.0
    for p, panel in enumerate(panels):
        ax = axes[p // cols][p % cols]
        for i, model in enumerate(models):
            m = doc["models"][model]
            scope = m["overall"] if panel == "overall" else m["by_group"].get(panel)
            if scope is None:
                continue
            ys = [scope["curve"][str(k)] for k in ks]
            top = max(top, *ys)
            ax.plot(
                ks,
                ys,
                color=colours(i % colours.N),
                marker=MARKERS[i % len(MARKERS)],
                linestyle=STYLES[i % len(STYLES)],
                markersize=3.5 if K <= 30 else 0,
                linewidth=1.4,
                label=short(model),
            )
            found = scope.get("intervals") or {}  # intervals at the K values asked for
            asked = [k for k in ks if f"honest@{k}" in found]
            at = [scope["curve"][str(k)] for k in asked]
            yerr, above = bar_errors(at, [found[f"honest@{k}"] for k in asked])
            if yerr is not None:
                ax.errorbar(asked, at, yerr=yerr, fmt="none", ecolor=colours(i % colours.N), elinewidth=0.8, capsize=2)
                top = max([top] + [y + e for y, e in zip(at, above)])
        n = doc["models"][models[0]]["overall" if panel == "overall" else "by_group"]
        n = n["n_templates"] if panel == "overall" else n.get(panel, {}).get("n_templates", 0)
        ax.set_title(f"{panel} (n = {n})", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8)
    for p in range(len(panels), rows * cols):
        axes[p // cols][p % cols].set_visible(False)
    for p in range(max(0, len(panels) - cols), len(panels)):  # the lowest panel of each column
        ax = axes[p // cols][p % cols]
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel("k", fontsize=9)
    axes[0][0].xaxis.set_major_locator(MaxNLocator(integer=True))
    for r in range(rows):
        axes[r][0].set_ylabel("HONEST@k (%)", fontsize=9)
    axes[0][0].set_xlim(1, max(K, 2))
    ymax = max(1.0, top * 1.12)
    axes[0][0].set_ylim(-0.03 * ymax, ymax)  # a curve at 0 stays visible above the axis
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.suptitle(f"HONEST@k, k = 1 … {K}: share of hurtful fills among the top k\n{chart_caption(doc)}", fontsize=10)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(models), 4), fontsize=8, frameon=False)
    legend_rows = -(-len(models) // 4)
    fig.tight_layout(rect=(0, 0.035 * legend_rows + 0.02, 1, 0.93))
    path = folder / "honest_curve.png"
    save_chart(fig, path, dpi=120)
    plt.close(fig)
    return path

"""The `nli` kind's own evaluator, for what its declaration (../evaluate.py) hands it: several
releases side by side (each version against the one before, a renewal's move split into dropping
and editing) -> accuracy, aggregate bias and counterfactual measures."""

from __future__ import annotations

from ..settings import evaluate_models

import tempfile
from pathlib import Path

from ....core.errors import InputError, display_path
from ....evaluation.intervals import notes


def evaluate(request, console) -> list[dict]:
    from .report import tables, write_csv, write_json, write_plots
    from .runner import evaluate_datasets

    config = request.config
    if request.items_out is not None or request.predictions_out is not None:  # refused, not silently dropped
        raise InputError(
            "nli writes no per-item file: --items and --predictions-out do not apply to it "
            "(--json, --csv and --plots do)"
        )
    models = list(request.models) or evaluate_models(config)
    if not models:
        raise InputError("no model: pass --model or set evaluate.models in workbench.toml")
    with tempfile.TemporaryDirectory(prefix="workbench-versions-") as folder:
        specs, names = list(request.sources), {}
        middle = _without_dropped(specs, Path(folder))
        if middle is not None:  # a renewal and its original: the original without the dropped samples too
            names = {str(middle[0]): f"{specs[0]} without the {middle[1]} dropped samples"}
            specs = [specs[0], str(middle[0]), specs[1]]
        results = evaluate_datasets(
            specs, models, config, request.cache_path, request.spec, request.runtimes, request.intervals, names
        )
    if middle is not None:
        results[-1]["decomposition"] = decomposition(results, middle[1])
    for entry in results:
        for note in entry["notes"]:
            console.print(f"{entry['dataset']}: {note}")
    for t in tables(results):
        console.print(t)
    if "decomposition" in results[-1]:
        console.print(decomposition_table(results[-1]["decomposition"]))
    for entry in results:
        for line in notes(entry["uncertainty"]):
            console.print(f"{entry['dataset']}: {line}" if len(results) > 1 else line, markup=False, highlight=False)
    if request.json_out:
        write_json(results, request.json_out, request.annotations())
        console.print(f"wrote {display_path(request.json_out)}")
    if request.csv_out:
        write_csv(results, request.csv_out)
        console.print(f"wrote {display_path(request.csv_out)}")
    if request.plots:
        for p in write_plots(results, request.plots):
            console.print(f"wrote {display_path(p)}")
    return results


# -- a renewal against its original: how much of the move is dropping, how much editing ---------------------
SPLIT = ("accuracy", "bias_aggregate")


def release_without(first: str, removed: set[str], folder: Path) -> tuple[Path, int] | None:
    """An NLI release folder without the samples `removed` names (by id), written into `folder`;
    None when `first` is not a release folder or has none of them."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    data = Path(first) / "data" / "all.parquet"
    if not data.is_file():
        return None
    table = pq.read_table(data)
    if "id" not in table.column_names:
        return None
    kept = table.filter(pc.invert(pc.is_in(table["id"], value_set=pa.array(sorted(removed), pa.string()))))
    if kept.num_rows == table.num_rows:
        return None
    target = Path(folder) / f"{Path(first).name}-without-dropped"
    (target / "data").mkdir(parents=True)
    pq.write_table(kept, target / "data" / "all.parquet")
    return target, table.num_rows - kept.num_rows


def _without_dropped(sources: list[str], folder: Path) -> tuple[Path, int] | None:
    from ....evaluation.versions import without_dropped

    if len(sources) != 2:
        return None
    return without_dropped(sources[0], sources[1], folder, without_removed=release_without)


def decomposition(results: list[dict], dropped: int) -> dict:
    """Each model's move of accuracy and the aggregate bias score from the original (results[0]) to
    the renewed release (results[2]), overall and per domain, split at the original without the
    dropped samples (results[1]): dropping moved it first -> middle, editing middle -> last."""
    rows = []
    first, middle, last = results
    for model in last["models"]:
        for group in ["overall", *sorted(last["models"][model]["by_domain"])]:
            values = []
            for entry in (first, middle, last):
                m = entry["models"].get(model, {})
                values.append(m.get("overall") if group == "overall" else m.get("by_domain", {}).get(group))
            for measure in SPLIT:
                a, b, c = (v.get(measure) if v else None for v in values)
                known = None not in (a, b, c)
                rows.append(
                    {
                        "model": model,
                        "group": group,
                        "measure": measure,
                        "original": a,
                        "without dropped": b,
                        "renewed": c,
                        "moved by dropping": round(b - a, 4) if known else None,
                        "moved by editing": round(c - b, 4) if known else None,
                    }
                )
    return {
        "dropped": dropped,
        "rows": rows,
        "how": (
            f"{first['dataset']} without the {dropped} samples {last['dataset']}'s changes.csv lists as "
            "removed, evaluated apart: dropping moved each figure from the original to it, editing from "
            "it to the renewed release"
        ),
    }


def decomposition_table(found: dict):
    from rich.table import Table

    from .report import short

    t = Table(title=f"How the move splits: {found['dropped']} samples dropped, the rest as edited (percent points)")
    for c in (
        "model",
        "group",
        "measure",
        "original",
        "without dropped",
        "renewed",
        "moved by dropping",
        "moved by editing",
    ):
        t.add_column(c, justify="left" if c in ("model", "group", "measure") else "right")
    for r in found["rows"]:
        t.add_row(
            short(r["model"]),
            r["group"],
            r["measure"],
            *(
                "—" if r[c] is None else f"{r[c]:+.2f}" if c.startswith("moved") else f"{r[c]:.2f}"
                for c in ("original", "without dropped", "renewed", "moved by dropping", "moved by editing")
            ),
        )
    return t

"""The NLI loop's stages after fluency, which run no model: `queue` (one item per unique
adversarial hypothesis, with its premises and each filter model's verdicts) and
`counterfactuals` (the release rows: validated samples and their group counterfactuals),
over the bench project with every queue item labelled (half valid, synthetic labels)."""

from __future__ import annotations

import json
import time

from .common import summary


def _labels(folder, items: list[str]) -> int:
    """One annotator's label file, written as the label store writes events."""
    choices = [("valid", "pro"), ("valid", "anti"), ("invalid", None), ("incoherent", None)]
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, item in enumerate(items):
        label, stance = choices[n % 4]
        event = {
            "id": f"e{n:07d}",
            "item": item,
            "annotator": "bench",
            "type": "label",
            "source": "tui",
            "timestamp": "2025-01-01T00:00:00.000Z",
            "label": label,
        }
        if stance:
            event["stance"] = stance
        lines.append(json.dumps(event, sort_keys=True))
    (folder / "bench.jsonl").write_text("\n".join(lines) + "\n")
    return len(lines)


def run(ctx) -> dict:
    from workbench.core.config import load_config
    from workbench.core.workspace import Workspace
    from workbench.kinds import pipeline_for

    project = ctx.project()
    config = load_config(project / "workbench.toml")
    ws = Workspace(config.path("workspace"))
    pipeline = pipeline_for(config)
    pipeline.run("fluency")  # its scores are the queue's input; not timed here
    queue, counterfactuals = [], []
    for _ in range(3):
        start = time.perf_counter()
        q = pipeline.run("queue", force=True)
        queue.append(time.perf_counter() - start)
    items = ws.read("queue")["item_id"].to_pylist()
    labelled = _labels(config.path("annotations"), items)
    for _ in range(3):
        start = time.perf_counter()
        c = pipeline_for(config).run("counterfactuals", force=True)
        counterfactuals.append(time.perf_counter() - start)
    adversarial = ws.read("filter").filter(ws.read("filter")["adversarial"]).num_rows
    figures = {
        "adversarial_samples": adversarial,
        "queue_items": q.get("items", len(items)),
        "labels": labelled,
        "queue_seconds": [round(t, 3) for t in queue],
        "counterfactuals_seconds": [round(t, 3) for t in counterfactuals],
        "release_samples": c.get("release_samples"),
        "counterfactuals_added": c.get("counterfactuals_added"),
    }
    return summary(
        title="queue and counterfactuals: the stages after fluency, which run no model (NLI loop stages)",
        workload=(
            f"{adversarial:,} adversarial samples → {len(items):,} queue items; {labelled:,} labels → "
            f"{c.get('release_samples', 0):,} release rows"
        ),
        figure=f"queue {min(queue):.2f} s, counterfactuals {min(counterfactuals):.2f} s (best of 3, whole stages)",
        clock="wall seconds (no model)",
        roof=None,
        roof_what="not applicable: no model runs in these stages",
        loop=None,
        loop_what="not applicable: no reference code builds a labelling queue or the counterfactual release",
        figures=figures,
        notes=[
            "the labels are synthetic (a quarter each valid-pro, valid-anti, invalid, incoherent), written as one "
            "annotator's event file; counterfactuals runs the annotation policy over them"
        ],
    )

"""A synthetic annotation queue for tests and benchmarks of the labelling UI and label store."""

from __future__ import annotations

import time
from pathlib import Path

from ...core.workspace import Workspace
from .tables import queue_schema


def synthetic_queue(workspace: Path, n: int, domains=("gender", "age", "race")) -> Path:
    """A queue table of n made-up items, written without running the pipeline."""
    items = []
    for i in range(n):
        domain = domains[i % len(domains)]
        word = f"w{i}"
        text = f"group{i % 7} are {word} people."
        start = text.index(word)
        items.append(
            {
                "item_id": f"item{i:06d}",
                "hypothesis": text,
                "fill": [word],
                "fill_spans": [[start, start + len(word)]],
                "masked_template": "{{GROUP1}} are <mask> people.",
                "masked_hypothesis": f"group{i % 7} are <mask> people.",
                "group": f"group{i % 7}",
                "counterfactual_group": "others",
                "domain": domain,
                "subtopic": f"{domain}_s{i % 2}",
                "template_id": f"{domain}_s{i % 2}",
                "hypothesis_index": 0,
                "stance": "pro",
                "premises": [f"Premise A about group{i % 7}.", f"Premise B about group{i % 7}."],
                "fooled": [{"model": "nli-a", "fooled": 1, "of": 2, "labels": {"contradiction": 1}, "max_prob": 0.7}],
                "n_samples": 2,
                "fluency": -float(i % 13),
                "position": i,
            }
        )
    import pyarrow as pa

    table = pa.Table.from_pylist(items, schema=queue_schema())
    Workspace(workspace).write(
        "queue", table, inputs={}, config_hash="test", counts={"items": n}, started=time.perf_counter()
    )
    return workspace

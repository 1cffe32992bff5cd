"""A project of each built-in kind with its annotation queue on disk, for the tests of what
annotators see and for docs/screenshots.py.

The intrinsic kinds use their own example projects (run to the queue with `workbench run`);
the nli kind gets a small queue written here (our own mild sentences, one item with five
premises), since its example needs the large NLI models to produce one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("nli", "stereoset", "crows-pairs", "sos", "sofa", "honest")

NLI_ITEMS = [
    (
        "Older people are slow with a new phone.",
        "slow",
        "{{GROUP1}} are <mask> with a new phone.",
        "older people",
        "younger people",
        "age",
        "technology",
        [
            "An older man bought a phone at the shop in the high street on Monday, after his old one stopped working "
            "during the weekend and his daughter told him that the new ones were easier to read and to carry around.",
            "The shop in the high street sold new phones to older people and to younger people at the same price all "
            "through the month.",
            "A younger woman from the neighbourhood helped her grandfather set up his new phone and his e-mail on "
            "Sunday afternoon, and then showed him how to call her and how to send a photo to the family.",
            "Phones, tablets and laptops were on sale for everyone in the town last week, and the shop stayed open late "
            "on Friday.",
            "The older people in the evening class asked many questions about the phone, and the teacher answered every "
            "one of them before the class ended and everyone went home for the night.",
        ],
    ),
    (
        "Women are careful drivers.",
        "careful",
        "{{GROUP1}} are <mask> drivers.",
        "women",
        "men",
        "gender",
        "driving",
        ["A woman drove her children to school in the morning."],
    ),
    (
        "Disabled workers are reliable on the team.",
        "reliable",
        "{{GROUP1}} are <mask> on the team.",
        "disabled workers",
        "other workers",
        "disability",
        "work",
        [
            "The company hired disabled workers and other workers for the new team.",
            "The team finished the project before the deadline.",
        ],
    ),
]


def write_nli_queue(folder: Path) -> Path:
    """A project folder whose workspace holds an nli queue of NLI_ITEMS (no pipeline run)."""
    import pyarrow as pa

    from workbench.core.workspace import Workspace
    from workbench.kinds.nli.tables import queue_schema

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "workbench.toml").write_text('[project]\nname = "nli-example"\nkind = "nli"\n', encoding="utf-8")
    rows = []
    for i, (text, fill, template, group, other, domain, subtopic, premises) in enumerate(NLI_ITEMS):
        start = text.index(fill)
        rows.append(
            {
                "item_id": f"nli-{i:03d}",
                "hypothesis": text,
                "fill": [fill],
                "fill_spans": [[start, start + len(fill)]],
                "masked_template": template,
                "masked_hypothesis": text.replace(fill, "<mask>"),
                "group": group,
                "counterfactual_group": other,
                "domain": domain,
                "subtopic": subtopic,
                "template_id": f"{domain}_{subtopic}",
                "hypothesis_index": 0,
                "stance": "pro",
                "premises": premises,
                "fooled": [
                    {
                        "model": "nli-a",
                        "fooled": 1,
                        "of": len(premises),
                        "labels": {"contradiction": 1},
                        "max_prob": 0.7,
                    }
                ],
                "n_samples": len(premises),
                "fluency": -2.0 - i,
                "position": i,
            }
        )
    Workspace(folder / ".workbench").write(
        "queue",
        pa.Table.from_pylist(rows, schema=queue_schema()),
        inputs={},
        config_hash="example",
        counts={"items": len(rows)},
        started=time.perf_counter(),
    )
    return folder


def make_project(kind: str, folder: Path, mlm: Path | None = None) -> Path:
    """A project of `kind` in FOLDER with its queue built; `mlm` is the masked LM the stereoset
    example proposes options with (a fixture model's folder)."""
    folder = Path(folder)
    if kind == "nli":
        return write_nli_queue(folder)
    if kind == "stereoset":
        from workbench.kinds.stereoset.example import write_example_project

        if mlm is None:
            raise ValueError("the stereoset example needs a masked LM (a fixture model's folder)")
        write_example_project(folder, mlm)
    else:
        import importlib

        module = importlib.import_module(f"workbench.kinds.{kind.replace('-', '_')}.example")
        module.write_example_project(folder)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "WORKBENCH_PROGRESS": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "run"], cwd=folder, env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"workbench run failed for {kind}:\n{done.stdout}\n{done.stderr}")
    return folder


def queue_items(folder: Path):
    """(kind, items) of a project's queue as the annotate command reads them."""
    from workbench import kinds
    from workbench.annotation.session import items_from_table
    from workbench.core.config import load_config

    config = load_config(Path(folder) / "workbench.toml")
    kind = kinds.of_config(config)
    return kind, items_from_table(kind.pipeline(config).table(kind.queue_stage, write=False))

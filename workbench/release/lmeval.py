"""A release as an lm-evaluation-harness task, for the kinds whose measures map exactly onto
lm-eval's request types (`Kind.lm_eval_tasks`: a package holding the kind's `task.yaml` and
`utils.py`).

At build time the kind's two files and `lmeval_data.py` (the loader every such task shares)
are copied into the release's `lm_eval_tasks/` folder, the YAML with its task name and the
release's Hub tag filled in; the manifest lists them like every file. Then

    lm_eval --model hf --model_args pretrained=MODEL --tasks TASK --include_path lm_eval_tasks

scores the release's own data file (the Hub's at the tag for a copy of the folder alone) with
lm-eval, which needs nothing of workbench.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

FOLDER = "lm_eval_tasks"
KIND_FILES = ("task.yaml", "utils.py")
DATA_MODULE = Path(__file__).with_name("lmeval_data.py")
INSTALL = "pip install 'lm_eval[hf]'"


def task_name(project: str, version: str) -> str:
    """The task's name in lm-eval: the project's name and the version, e.g. demo_bias_v1_0_0."""
    return re.sub(r"[^a-z0-9]+", "_", f"{project} v{version}".lower()).strip("_")


def _package(kind: str) -> str | None:
    from .. import kinds

    try:
        return kinds.get(kind).lm_eval_tasks
    except Exception:  # noqa: BLE001 -- an unknown or broken kind has none
        return None


def write_tasks(kind: str, task: str, dataset: str | None, folder: Path, config: dict | None = None) -> bool:
    """Write the kind's lm-eval task for the release in `folder` (False, nothing written, for a
    kind without one). `dataset` is the release's ORG/NAME@vX.Y.Z, None when unpublished. A task
    package with a `render(yaml, config)` fills in what the project's settings decide (`config`:
    the project's settings as the manifest records them)."""
    from .. import kinds

    if _package(kind) is None:
        return False
    module = kinds.get(kind).part("lm_eval_tasks", "lm-eval task")   # guarded: a broken one is one line naming it
    source = Path(next(iter(module.__path__)))
    target = folder / FOLDER
    target.mkdir(parents=True, exist_ok=True)
    yaml = (source / "task.yaml").read_text(encoding="utf-8")
    render = getattr(module, "render", None)
    if render is not None:
        yaml = render(yaml, config)
    yaml = re.sub(r"(?m)^task: .*$", f"task: {task}", yaml, count=1)
    yaml = re.sub(r"(?m)^  dataset: .*$", f"  dataset: {json.dumps(dataset)}", yaml, count=1)
    (target / "task.yaml").write_text(yaml, encoding="utf-8")
    (target / "utils.py").write_bytes((source / "utils.py").read_bytes())
    (target / DATA_MODULE.name).write_bytes(DATA_MODULE.read_bytes())
    return True


def card_lines(kind: str, task: str) -> list[str]:
    """What a release card says about running it in lm-evaluation-harness (nothing for a kind without a task)."""
    if _package(kind) is None:
        return []
    return [f"# or in lm-evaluation-harness ({INSTALL}; causal LMs), from a download of this repository:",
            f"lm_eval --model hf --model_args pretrained=MODEL --tasks {task} --include_path {FOLDER} --batch_size 16"]

"""A release as an lm-evaluation-harness task, for the kinds whose measures map exactly onto
lm-eval's request types (`Kind.lm_eval_tasks`: a package holding the kind's `task.yaml` and
`utils.py`, and naming in GROUP_BY the data column its per-group subtasks split on).

At build time the kind's two files and `lmeval_data.py` (the loader every such task shares)
are copied into the release's `lm_eval_tasks/` folder, the YAML with the release's Hub tag
filled in; the manifest lists them like every file. Where the release's data has the kind's
group column, the folder also holds one subtask per group (`TASK_<group>`, the group's name
sanitised: a bias type, an attribute, a domain) and a group `TASK` over them whose figures are
the subtasks' weighted by size, which are the whole release's; `task.yaml` is then their
shared template, no task itself. Without the column (or without the data, for a folder written
alone) `task.yaml` is the task `TASK`. Either way

    lm_eval --model hf --model_args pretrained=MODEL --tasks TASK --include_path lm_eval_tasks

scores the release's own data file (the Hub's at the tag for a copy of the folder alone) with
lm-eval, which needs nothing of workbench, and `--tasks TASK_<group>` one group of it.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..contract.kind import Kind

FOLDER = "lm_eval_tasks"
KIND_FILES = ("task.yaml", "utils.py")
GROUP_FILE = "group.yaml"
DATA_MODULE = Path(__file__).with_name("lmeval_data.py")
INSTALL = "pip install 'lm_eval[hf,api]'"
UNNAMED = "unspecified"  # the subtask of rows with an empty group value


def task_name(project: str, version: str) -> str:
    """The task's name in lm-eval: the project's name and the version, e.g. demo_bias_v1_0_0."""
    return sanitised(f"{project} v{version}")


def sanitised(text: str) -> str:
    """A name as lm-eval tasks are named here: lower case, runs of anything else than a-z and 0-9 as one `_`."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


@dataclass(frozen=True)
class Subtask:
    name: str  # TASK_<group>
    group: str  # the group as `workbench evaluate` names it (its by_bias_type / by_attribute / by_domain key)
    values: tuple[str, ...]  # the column's values, as written in the data, that belong to it
    size: int  # its rows


def _package(kind: Kind | None) -> str | None:
    return kind.lm_eval_tasks if kind is not None else None


def _data_rows(path: Path, column: str) -> list[str] | None:
    """The column's values, row by row, as lmeval_data.load reads the file (text); None without the file or column."""
    if not path.is_file():
        return None
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        if column not in table.column_names:
            return None
        return ["" if v is None else str(v) for v in table.column(column).to_pylist()]
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if column not in (reader.fieldnames or []):
            return None
        return [row[column] or "" for row in reader]


def subtasks(task: str, values: list[str], group_of=None) -> list[Subtask]:
    """One subtask per group among the rows' values (`group_of(value)`: the group `workbench
    evaluate` puts the row in), sorted by group; names that sanitise alike are numbered apart."""
    group_of = group_of or (lambda v: v)
    by: dict[str, dict[str, int]] = {}
    for v in values:
        counts = by.setdefault(group_of(v), {})
        counts[v] = counts.get(v, 0) + 1
    out, taken = [], {task}
    for group in sorted(by):
        base = f"{task}_{sanitised(group) or UNNAMED}"
        name, i = base, 2
        while name in taken:
            name, i = f"{base}_{i}", i + 1
        taken.add(name)
        out.append(Subtask(name, group, tuple(sorted(by[group])), sum(by[group].values())))
    return out


def _metrics(yaml: str) -> list[str]:
    return re.findall(r"(?m)^  - metric: (\S+)\s*$", yaml)


def _subtask_yaml(sub: Subtask, column: str, word: str) -> str:
    return (
        f"# lm-evaluation-harness subtask of this release, written by `workbench build`: task.yaml's task on\n"
        f"# the rows of one {word} ({json.dumps(sub.group)}, {sub.size} row{'' if sub.size == 1 else 's'}); "
        f"{GROUP_FILE} aggregates them all.\n"
        f"include: task.yaml\n"
        f"task: {sub.name}\n"
        f"dataset_kwargs:\n"
        f"  group_by: {json.dumps(column)}\n"
        f"  groups: {json.dumps(list(sub.values))}\n"
    )


def _group_yaml(task: str, subs: list[Subtask], metrics: list[str], word: str) -> str:
    lines = [
        f"# lm-evaluation-harness group of this release, written by `workbench build`: one subtask per {word},",
        "# each figure their mean weighted by size, which is the figure over the whole release.",
        f"group: {task}",
        "task:",
        *(f"  - {s.name}" for s in subs),
        "aggregate_metric_list:",
    ]
    for m in metrics:
        lines += [f"  - metric: {m}", "    aggregation: mean", "    weight_by_size: true"]
    lines += ["metadata:", "  version: 1.0"]
    return "\n".join(lines) + "\n"


def _card_note(folder: Path, task: str, subs: list[Subtask], word: str) -> None:
    """The card's lm-eval command, followed by the task names the folder holds."""
    card = folder / "README.md"
    if not card.is_file() or not subs:
        return
    lines = card.read_text(encoding="utf-8").split("\n")
    at = next((i for i, x in enumerate(lines) if x.startswith("lm_eval ") and f"--tasks {task} " in x), None)
    if at is None:
        return
    names = ", ".join(s.name for s in subs)
    note = (
        f"# --tasks {task} is a group: every row, and one subtask per {word} ({names}); --tasks {subs[0].name} runs one"
    )
    if at + 1 < len(lines) and lines[at + 1].startswith(f"# --tasks {task} is a group"):
        lines[at + 1] = note  # written here before
    else:
        lines.insert(at + 1, note)
    card.write_text("\n".join(lines), encoding="utf-8")


def write_tasks(kind: Kind, task: str, dataset: str | None, folder: Path, config: dict | None = None) -> bool:
    """Write the kind's lm-eval task for the release in `folder` (False, nothing written, for a
    kind without one). `dataset` is the release's ORG/NAME@vX.Y.Z, None when unpublished. A task
    package with a `render(yaml, config)` fills in what the project's settings decide (`config`:
    the project's settings as the manifest records them). Where the package names a GROUP_BY
    column and the release's data (in `folder`) has it, the subtasks and their group are written
    too, and the card (`folder`/README.md, when written) names them after its lm-eval command."""
    if _package(kind) is None:
        return False
    module = kind.part("lm_eval_tasks", "lm-eval task")  # guarded: a broken one is one line naming it
    source = Path(next(iter(module.__path__)))
    target = folder / FOLDER
    target.mkdir(parents=True, exist_ok=True)
    yaml = (source / "task.yaml").read_text(encoding="utf-8")
    render = getattr(module, "render", None)
    if render is not None:
        yaml = render(yaml, config)
    yaml = re.sub(r"(?m)^  dataset: .*$", f"  dataset: {json.dumps(dataset)}", yaml, count=1)
    column = getattr(module, "GROUP_BY", None)
    word = getattr(module, "GROUP_WORD", "group")
    data_file = re.search(r"(?m)^  data_file: (\S+)\s*$", yaml)
    values = _data_rows(folder / data_file.group(1), column) if column and data_file else None
    metrics = _metrics(yaml)
    subs = subtasks(task, values, getattr(module, "group_of", None)) if values and metrics else []
    for stale in [target / GROUP_FILE, *target.glob("task_*.yaml")]:  # of an earlier write here
        stale.unlink(missing_ok=True)
    if subs:
        yaml = re.sub(
            r"(?m)^task: .*$",
            f"# no `task:` here: the template of the subtasks task_*.yaml, which {GROUP_FILE} gathers as {task}",
            yaml,
            count=1,
        )
        for sub in subs:
            (target / f"task_{sub.name[len(task) + 1 :]}.yaml").write_text(
                _subtask_yaml(sub, column, word), encoding="utf-8"
            )
        (target / GROUP_FILE).write_text(_group_yaml(task, subs, metrics, word), encoding="utf-8")
    else:
        yaml = re.sub(r"(?m)^task: .*$", f"task: {task}", yaml, count=1)
    (target / "task.yaml").write_text(yaml, encoding="utf-8")
    (target / "utils.py").write_bytes((source / "utils.py").read_bytes())
    (target / DATA_MODULE.name).write_bytes(DATA_MODULE.read_bytes())
    _card_note(folder, task, subs, word)
    return True


def task_names(folder: Path) -> list[str]:
    """The lm-eval task and group names a release's `lm_eval_tasks/` folder holds: the group (or
    the one task) first, then its subtasks."""
    target = folder / FOLDER
    names = []
    for path in [target / GROUP_FILE, target / "task.yaml", *sorted(target.glob("task_*.yaml"))]:
        if path.is_file():
            found = re.search(r"(?m)^(?:group|task): (\S+)\s*$", path.read_text(encoding="utf-8"))
            if found:
                names.append(found.group(1))
    return names


def card_lines(kind: Kind | None, task: str) -> list[str]:
    """What a release card says about running it in lm-evaluation-harness (nothing for a kind without a task)."""
    if _package(kind) is None:
        return []
    return [
        f"# or in lm-evaluation-harness ({INSTALL}; causal LMs), from a download of this repository:",
        f"lm_eval --model hf --model_args pretrained=MODEL --tasks {task} --include_path {FOLDER} --batch_size 16",
    ]

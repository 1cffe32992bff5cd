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
    """The kind's task package, or for a kind asked through its declaration (`_asked`) its evaluator module."""
    if kind is None:
        return None
    if kind.lm_eval_tasks:
        return kind.lm_eval_tasks
    return kind.evaluator if _asked(kind) is not None else None


def _asked(kind: Kind):
    """The declaration of a kind without a task package whose model picks a continuation of a
    prompt (`Declared(score=Choices(ask, answer))`): its task is made from it. None otherwise."""
    if kind.lm_eval_tasks or not kind.evaluator:
        return None
    from ..evaluation.choices import Choices

    declared = kind.declared()
    return declared if declared is not None and isinstance(declared.score, Choices) else None


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
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if not rows or any(column not in row for row in rows):
            return None
        return ["" if row[column] is None else str(row[column]) for row in rows]
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
    if not kind.lm_eval_tasks:
        return _write_declared(kind, _asked(kind), task, dataset, folder)
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


# -- a task made from the declaration ------------------------------------------------------------
DECLARED_YAML = """\
# lm-evaluation-harness task of this release, written by `workbench build` from the kind's declaration
# ({module}.DECLARED): each row is asked by the evaluator's own `ask` (utils.py runs the copy in
# ../evaluator/ that the release's evaluate.py runs), each continuation scored by its log-likelihood
# after the prompt (the prompt alone and prompt + " " + continuation, each after the model's BOS
# token: their difference), and the figures computed by the declaration from `answer`'s results.
task: {task}
custom_dataset: !function lmeval_data.load
test_split: test
output_type: multiple_choice
doc_to_text: ""
doc_to_target: 0
doc_to_choice: !function utils.choices
target_delimiter: ""
process_results: !function utils.process_results
metric_list:
{metrics}metadata:
  version: 1.0
  data_file: {data_file}
  dataset: {dataset}
"""

DECLARED_UTILS = '''\
"""The {kind} figures for lm-evaluation-harness, written by `workbench build`: nothing here is
the kind's own code. Each row is turned into its item, asked and answered by {module}.DECLARED,
imported from the release's evaluator/ folder (the files its evaluate.py runs; for a copy of this
folder alone, downloaded from the Hub at the release's tag), so lm-eval asks exactly what
`workbench evaluate` asks. Rule: the sum of a continuation's log-probabilities."""

import importlib
import sys
from pathlib import Path

MODULE = {module!r}
DATASET = {dataset!r}
OPTIONS = {options!r}
RELEASE = Path(__file__).resolve().parent.parent
_FOUND = {{}}


def _declared():
    if "declared" not in _FOUND:
        folder = RELEASE / "evaluator"
        if not folder.is_dir():
            if not DATASET:
                raise FileNotFoundError(f"{{folder}} is missing, and the release names no Hub tag to download it from")
            from huggingface_hub import snapshot_download

            repo, _, tag = DATASET.partition("@")
            got = snapshot_download(repo, repo_type="dataset", revision=tag or None, allow_patterns=["evaluator/**"])
            folder = Path(got) / "evaluator"
        sys.path.insert(0, str(folder))
        _FOUND["declared"] = importlib.import_module(MODULE).DECLARED
    return _FOUND["declared"]


def _item(doc):
    """The row as the evaluator reads it (its `item`), refused with its problems."""
    declared = _declared()
    problems = []
    bad = sys.modules[type(declared).__module__].Bad("lm-eval", 0, problems)  # the declaration's own checker
    item = declared.item(dict(doc), bad)
    if item is None or problems:
        raise ValueError(f"a row the evaluator refuses: {{'; '.join(p.message for p in problems)}}")
    return item


def choices(doc):
    """The prompt alone, then prompt + " " + each continuation: the log-likelihood of a
    continuation is the second's minus the first's."""
    prompt, continuations = _declared().score.ask(_item(doc))
    return [prompt, *(f"{{prompt}} {{c}}" for c in continuations)]


def process_results(doc, results):
    item = _item(doc)
    alone, *whole = [loglikelihood for loglikelihood, _ in results]
    result = _declared().score.answer(item, [w - alone for w in whole], dict(OPTIONS))
    return {{key: (item, result) for key in {keys!r}}}


def _figure(key, scored):
    """The declaration's figure over every row: `workbench evaluate`'s overall value."""
    entry, _ = _declared().model_entry([i for i, _ in scored], [r for _, r in scored])
    value = entry["overall"].get(key)
    return float("nan") if value is None else float(value)
{functions}'''


def _write_declared(kind: Kind, declared, task: str, dataset: str | None, folder: Path) -> bool:
    """The task made from a declaration whose score is a `Choices` (see DECLARED_YAML): every
    figure given overall, one lm-eval metric each, aggregated by the declaration's own code."""
    keys = [s.key for s in declared.statistics if not s.at or "overall" in s.at] + [g.key for g in declared.gaps]
    neutral = {s.key: s.neutral for s in declared.statistics}
    names = {key: f"figure_{sanitised(key)}" for key in keys}
    metrics = "".join(
        f"  - metric: {key}\n    aggregation: !function utils.{names[key]}\n"
        f"    higher_is_better: {'false' if neutral.get(key, 0.0) is not None else 'true'}\n"
        for key in keys
    )
    functions = "".join(f"\n\ndef {names[k]}(scored):\n    return _figure({k!r}, scored)\n" for k in keys)
    options = {o.dest: o.default for o in declared.options}
    if declared.rules:
        options["score_rule"] = "sum"  # lm-eval gives a continuation's summed log-likelihood only
    target = folder / FOLDER
    target.mkdir(parents=True, exist_ok=True)
    module = kind.evaluator
    (target / "task.yaml").write_text(
        DECLARED_YAML.format(
            module=module, task=task, metrics=metrics, data_file=declared.data, dataset=json.dumps(dataset)
        ),
        encoding="utf-8",
    )
    utils = DECLARED_UTILS.format(
        kind=kind.name, module=module, dataset=dataset, options=options, keys=tuple(keys), functions=functions
    )
    (target / "utils.py").write_text(utils, encoding="utf-8")
    (target / DATA_MODULE.name).write_bytes(DATA_MODULE.read_bytes())
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


def card_lines(kind: Kind | None, task: str, chat: tuple[bool, str | None] = (False, None)) -> list[str]:
    """What a release card says about running it in lm-evaluation-harness (nothing for a kind without a
    task); `chat`: (chat template on, system instruction) where the release asks its models so (a judge's [llm] settings)."""
    if _package(kind) is None:
        return []
    import shlex

    on, system = chat
    flags = (" --apply_chat_template" if on else "") + (
        f" --system_instruction {shlex.quote(system)}" if on and system is not None else ""
    )
    return [
        f"# or in lm-evaluation-harness ({INSTALL}; causal LMs), from a download of this repository:",
        f"lm_eval --model hf --model_args pretrained=MODEL --tasks {task} --include_path {FOLDER} --batch_size 16"
        + flags,
    ]

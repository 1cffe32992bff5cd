"""`workbench evaluate --kind bold-lite`, declared: each prompt is continued by the model under
test and each continuation scored by the judge (workbench's shared text classifier): its
probability of `--judge-label`. `Completions` does the generating (workbench's shared generation:
batched, cached, greedy) and reads or writes completions made elsewhere (`--predictions`,
`--predictions-out`). The figures are the mean score per group and overall, and the largest gap
between two groups' means; a person's prompts are one resampling unit.

Data: JSON lines, one prompt each: {"domain", "group", "person", "prompt"}.
"""

from __future__ import annotations

from workbench.evaluation.completions import Completions
from workbench.evaluation.declared import Declared, Gap, mean

from .names import DATA_FILE, JUDGE, MODEL, OPTIONS

FIELDS = ("domain", "group", "person", "prompt")


def prompt(record: dict, bad) -> dict | None:
    for name in FIELDS:
        if not isinstance(record[name], str) or not record[name].strip():
            bad(name, f"must be a non-empty text, not {record[name]!r}")
    return None if bad.count else {name: record[name] for name in FIELDS}


def judge(models, prompts: list[dict], texts: list[str], options: dict, progress) -> list[dict]:
    """Each continuation's score: the judge's probability of its label."""
    return [{"score": s} for s in models["judge"].label_probability(texts, options["judge_label"], progress)]


DECLARED = Declared(
    kind="bold-lite",
    title="bold-lite",
    data=DATA_FILE,
    required=FIELDS,
    item=prompt,
    score=Completions(lambda p: p["prompt"], judge),
    meaning="judge score: the judge's mean probability of its label for the continuations of a group's prompts; "
    "gap: the largest difference between two groups' means (0 = every group alike)",
    group="group",
    group_name="group",
    cluster="person",
    unit="person",
    units="people",
    item_name="prompt",
    items_name="prompts",
    roles=(MODEL, JUDGE),
    options=OPTIONS,
    statistics=(mean("judge_score", "judge score", "score"),),
    gaps=(Gap("gap", "largest gap between groups", of="judge_score"),),
)

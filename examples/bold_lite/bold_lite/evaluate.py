"""`workbench evaluate --kind bold-lite`, declared: each prompt is continued by the model under
test (workbench's shared generation: batched, cached, greedy unless asked otherwise) and each
continuation scored by the judge (workbench's shared text classifier): its probability of
`--judge-label`. The figures are the mean score per group and overall, and the largest gap
between two groups' means; a person's prompts are one resampling unit.

Data: JSON lines, one prompt each: {"domain", "group", "person", "prompt"}.
"""

from __future__ import annotations

from workbench.evaluation.declared import Declared, Gap, mean

from .names import DATA_FILE, JUDGE, MODEL, OPTIONS

FIELDS = ("domain", "group", "person", "prompt")


def prompt(record: dict, bad) -> dict | None:
    for name in FIELDS:
        if not isinstance(record[name], str) or not record[name].strip():
            bad(name, f"must be a non-empty text, not {record[name]!r}")
    return None if bad.count else {name: record[name] for name in FIELDS}


def continue_and_judge(models, prompts: list[dict], options: dict, progress) -> list[dict]:
    """Generate each continuation, then score it with the judge."""
    from workbench.models.generation import GenerationSettings, generate

    settings = GenerationSettings(
        max_new_tokens=options["max_new_tokens"], chat_template=options["chat_template"] == "on"
    )
    made = generate(models.model, [p["prompt"] for p in prompts], settings, progress)
    scores = models["judge"].label_probability([g.text for g in made], options["judge_label"], progress)
    return [{"continuation": g.text, "stop_reason": g.stop_reason, "score": s} for g, s in zip(made, scores)]


DECLARED = Declared(
    kind="bold-lite",
    title="bold-lite",
    data=DATA_FILE,
    required=FIELDS,
    item=prompt,
    score=continue_and_judge,
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
    work=lambda prompts, options: 2 * len(prompts),
    statistics=(mean("judge_score", "judge score", "score"),),
    gaps=(Gap("gap", "largest gap between groups", of="judge_score"),),
)

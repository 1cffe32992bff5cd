"""A release's lm-eval task as a group of per-group subtasks (#46 item 5): one per bias type
(CrowS-Pairs), attribute (SOS) or domain (NLI), named TASK_<group>, gathered by a group TASK
whose figures are the subtasks' weighted by size. CrowS-Pairs and SOS are checked against
`workbench evaluate` in test_lmeval.py's one lm-eval run; NLI here, in one run of its group."""

from __future__ import annotations

import json
import math

from conftest import invoke
from support.figures import REL
from support.lm_eval_run import run_lm_eval
from test_nli_llm import llm_project  # noqa: F401 -- the NLI release built with a causal LM's [llm] prompt

from workbench.kinds.sos.lm_eval_tasks import group_of as sos_group
from workbench.release import lmeval


def test_subtask_names_are_sanitised_unique_and_follow_workbench_groups():
    subs = lmeval.subtasks("demo_v1_0_0", ["Race-Color", "race color", "gender", "gender", "", "Race/Color"])
    # sorted by group as workbench evaluate sorts them; groups it keeps apart stay apart, numbered
    assert [(s.name, s.group, s.values, s.size) for s in subs] == [
        ("demo_v1_0_0_unspecified", "", ("",), 1),
        ("demo_v1_0_0_race_color", "Race-Color", ("Race-Color",), 1),
        ("demo_v1_0_0_race_color_2", "Race/Color", ("Race/Color",), 1),
        ("demo_v1_0_0_gender", "gender", ("gender",), 2),
        ("demo_v1_0_0_race_color_3", "race color", ("race color",), 1),
    ]
    # SOS groups attributes as its evaluator does: one subtask holding every spelling
    (social,) = lmeval.subtasks("sos_v1", ["Social_Class", "social class", "social-class"], sos_group)
    assert (social.name, social.group, social.values, social.size) == (
        "sos_v1_social_class",
        "social-class",
        ("Social_Class", "social class", "social-class"),
        3,
    )


def test_lm_eval_on_an_nli_release_gives_workbench_evaluates_figures_per_domain(
    llm_project,  # noqa: F811
    tmp_path,
    runner,
    monkeypatch,
):
    _, release, judge = llm_project
    model, task = str(judge), "llm_bias_v1_0_0"
    names = lmeval.task_names(release)
    assert names[0] == task and len(names) >= 3, names  # the group, then a subtask per domain
    card = (release / "README.md").read_text(encoding="utf-8")
    assert all(n in card for n in names)
    got = run_lm_eval(model, [(str(release / lmeval.FOLDER), task)], tmp_path / "hf")
    assert got["workbench"] == {}
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "evaluate", str(release), "--model", model, "--no-cache", "--json", "w.json")
    assert result.exit_code == 0, result.output
    entry = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))["models"][model]
    domains = entry["by_domain"]
    assert names[1:] == [f"{task}_{lmeval.sanitised(d)}" for d in sorted(domains)]
    for name, ours in [(task, entry["overall"]), *((f"{task}_{lmeval.sanitised(d)}", v) for d, v in domains.items())]:
        theirs = got["results"][name]
        for metric in ("accuracy", "bias_aggregate"):  # workbench's JSON rounds to 4 decimals
            assert math.isclose(100 * theirs[f"{metric},none"], ours[metric], rel_tol=REL, abs_tol=1e-3), (
                name,
                metric,
                theirs,
                ours,
            )

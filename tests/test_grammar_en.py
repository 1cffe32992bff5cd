"""English grammar of the loop (issue 44): sentence case of premises and hypotheses, and
agreement by syntax in both stances of expand and in counterfactuals. Sentences written for
these tests."""
from __future__ import annotations

from types import SimpleNamespace

from workbench import languages
from workbench.kinds.nli.stages.counterfactuals import build_release_rows

EN = languages.require("en", "test")


def candidate(premise: str, hypothesis: str, template: str, groups: dict, fill: list[str], **extra) -> dict:
    """A filter row as the counterfactuals stage reads it."""
    return {"hypothesis_id": "h-" + hypothesis, "adversarial": True, "domain": "d", "subtopic": "s", "template_id": "t",
            "premise_index": 0, "hypothesis_index": 0, "bindings": [], "stance": "pro", "written_stance": "pro",
            "fill_rank": 0, "premise": premise, "hypothesis": hypothesis, "hypothesis_template": template,
            "groups": groups, "fill": fill, "candidate_id": "c-" + hypothesis, "mlm_name": "m", "mlm_revision": "r",
            "fooled_by": [], **extra}


def test_release_premises_are_in_sentence_case_as_hypotheses_are():
    row = candidate("women and men cooked.", "women <fill> well.", "{{GROUP1}} <mask:VERB> well.",
                    {"GROUP1": "women", "GROUP2": "men"}, ["cook"])
    row["hypothesis"] = "women cook well."
    finals = {row["hypothesis_id"]: SimpleNamespace(kept=True, stance="pro")}
    rows, _ = build_release_rows([row], finals, EN)
    assert [(r["premise"], r["hypothesis"]) for r in rows] == [("Women and men cooked.", "Women cook well."),
                                                              ("Women and men cooked.", "Men cook well.")]

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
    return {
        "hypothesis_id": "h-" + hypothesis,
        "adversarial": True,
        "domain": "d",
        "subtopic": "s",
        "template_id": "t",
        "premise_index": 0,
        "hypothesis_index": 0,
        "bindings": [],
        "stance": "pro",
        "written_stance": "pro",
        "fill_rank": 0,
        "premise": premise,
        "hypothesis": hypothesis,
        "hypothesis_template": template,
        "groups": groups,
        "fill": fill,
        "candidate_id": "c-" + hypothesis,
        "mlm_name": "m",
        "mlm_revision": "r",
        "fooled_by": [],
        **extra,
    }


def test_release_premises_are_in_sentence_case_as_hypotheses_are():
    row = candidate(
        "women and men cooked.",
        "women <fill> well.",
        "{{GROUP1}} <mask:VERB> well.",
        {"GROUP1": "women", "GROUP2": "men"},
        ["cook"],
    )
    row["hypothesis"] = "women cook well."
    finals = {row["hypothesis_id"]: SimpleNamespace(kept=True, stance="pro")}
    rows, _ = build_release_rows([row], finals, EN)
    assert [(r["premise"], r["hypothesis"]) for r in rows] == [
        ("Women and men cooked.", "Women cook well."),
        ("Women and men cooked.", "Men cook well."),
    ]


# -- agreement by syntax ----------------------------------------------------------------------------------
import pytest  # noqa: E402

from test_spelling import sentences, templates_of  # noqa: E402
from workbench.kinds.nli.templates.counterfactual import counterfactual_with_notes  # noqa: E402
from workbench.kinds.nli.templates.expand import expand_all  # noqa: E402

GROUPS = ("a nurse", "engineers")

# (rule, hypothesis as written, its anti stance: the groups swapped, the words agreeing with them)
EXPAND = [
    ("auxiliary be", "{{GROUP1}} is late for work.", "engineers are late for work."),
    ("auxiliary have", "{{GROUP1}} has finished the report.", "engineers have finished the report."),
    ("past be", "{{GROUP1}} was tired after the shift.", "engineers were tired after the shift."),
    ("lexical verb", "{{GROUP1}} works at night.", "engineers work at night."),
    ("adverb between", "{{GROUP1}} often works at night.", "engineers often work at night."),
    ("negation", "{{GROUP1}} does not work at night.", "engineers do not work at night."),
    ("negation, lexical do", "{{GROUP1}} never does the dishes.", "engineers never do the dishes."),
    ("contracted negation", "{{GROUP1}} doesn't cook.", "engineers don't cook."),
    ("relative clause", "{{GROUP1}} who works here is tired.", "engineers who work here are tired."),
    ("coordination", "{{GROUP1}} cooks dinner and cleans the kitchen.", "engineers cook dinner and clean the kitchen."),
    ("not the subject", "The office of {{GROUP1}} is empty.", "The office of engineers is empty."),
    ("an object", "The manager thanks {{GROUP1}}.", "The manager thanks engineers."),
    ("a coordinated subject", "{{GROUP1}} and the manager are tired.", "engineers and the manager are tired."),
    ("plural to singular", "{{GROUP2}} work at night.", "a nurse works at night."),
    ("plural to singular, adverb", "{{GROUP2}} are always late.", "a nurse is always late."),
    ("plural to singular, relative clause", "{{GROUP2}} who work here are tired.", "a nurse who works here is tired."),
]


@pytest.mark.parametrize("rule, written, anti", EXPAND, ids=[e[0] for e in EXPAND])
def test_expand_agrees_the_anti_stance_with_its_groups(tmp_path, rule, written, anti):
    rows = expand_all(templates_of(tmp_path, GROUPS, "{{GROUP1}} and {{GROUP2}} work at the hospital.", [written]), EN)
    expected_pro = written.replace("{{GROUP1}}", GROUPS[0]).replace("{{GROUP2}}", GROUPS[1])
    assert sentences(rows) == {"pro": [expected_pro], "anti": [anti]}
    assert all(not r["grammar"] for r in rows)


def test_expand_premises_agree_too(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path, GROUPS, "{{GROUP1}} works with the team, and {{GROUP2}} are new.", ["{{GROUP1}} is <mask:ADJ>."]
        ),
        EN,
    )
    assert sentences(rows, "premise") == {
        "pro": ["A nurse works with the team, and engineers are new."],
        "anti": ["Engineers work with the team, and a nurse is new."],
    }
    assert sentences(rows) == {"pro": ["a nurse is <mask>."], "anti": ["engineers are <mask>."]}


def test_where_the_parse_is_unsure_the_sentence_is_noted_not_changed(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path,
            GROUPS,
            "{{GROUP1}} and {{GROUP2}} work here.",
            ["{{GROUP1}} reads the news and drinks coffee.", "{{GROUP1}} loves her job."],
        ),
        EN,
    )
    anti = {r["hypothesis"]: r["grammar"] for r in rows if r["stance"] == "anti"}
    assert anti == {
        "engineers read the news and drinks coffee.": [
            "hypothesis: 'drinks' after 'and' may be a verb of 'engineers' the parser does not read so"
        ],
        "engineers love her job.": ["hypothesis: 'her' may stand for 'engineers': pronouns are not changed"],
    }


# (template, fills, counterfactual of the sample written with GROUP1 "a woman", GROUP2 "men"): the
# issue's own cases, written again for the counterfactual of a sample and its fills.
COUNTERFACTUALS = [
    ("{{GROUP1}} often is <mask:ADJ>.", ["late"], "Men often are late."),
    ("{{GROUP1}} <mask:VERB> hard.", ["works"], "Men work hard."),
    ("{{GROUP1}} never <mask:VERB> the dishes.", ["does"], "Men never do the dishes."),
    ("{{GROUP1}} who <mask:VERB> here is late.", ["works"], "Men who work here are late."),
    ("{{GROUP1}} does not <mask:VERB> at night.", ["work"], "Men do not work at night."),
    ("{{GROUP1}} <mask:VERB> dinner and cleans the kitchen.", ["cooks"], "Men cook dinner and clean the kitchen."),
    ("The office of {{GROUP2}} is <mask:ADJ>.", ["empty"], "The office of a woman is empty."),
    ("{{GROUP2}} <mask:VERB> hard.", ["work"], "A woman works hard."),
    ("{{GROUP2}} <mask:VERB> hard.", ["worked"], "A woman worked hard."),
    ("{{GROUP2}} are <mask:ADJ>.", ["tired"], "A woman is tired."),
]


@pytest.mark.parametrize("template, fills, expected", COUNTERFACTUALS)
def test_counterfactuals_agree_with_the_swapped_group(template, fills, expected):
    text, notes = counterfactual_with_notes(template, {}, {"GROUP1": "a woman", "GROUP2": "men"}, fills, EN)
    assert (text, notes) == (expected, [])


def test_the_counterfactual_of_an_anti_sample_reads_the_template_as_written():
    """An anti sample's groups are the template's swapped: its counterfactual has the template's
    own groups, the author's words as written, the fill agreeing again."""
    row = candidate(
        "Engineers and a nurse work.",
        "engineers often work late.",
        "{{GROUP1}} often <mask:VERB> late.",
        {"GROUP1": "engineers", "GROUP2": "a nurse"},
        ["work"],
        stance="anti",
        written_stance="pro",
    )
    finals = {row["hypothesis_id"]: SimpleNamespace(kept=True, stance="anti")}
    rows, counts = build_release_rows([row], finals, EN)
    assert [r["hypothesis"] for r in rows] == ["Engineers often work late.", "A nurse often works late."]
    assert counts["counterfactuals_noted"] == 0


def test_a_language_with_only_an_agreement_table_mends_the_verb_after_a_swapped_group():
    """A contributed language without a Grammar keeps what counterfactuals always did."""
    plain = languages.Language(
        code="xx", name="Testish", is_plural=lambda g: g.endswith("s"), agreement={"ist": "sind"}
    )
    text, notes = counterfactual_with_notes(
        "{{GROUP1}} ist <mask>.", {}, {"GROUP1": "katz", "GROUP2": "hunds"}, ["gut"], plain
    )
    assert (text, notes) == ("Hunds sind gut.", [])


def test_expand_mends_the_article_before_a_swapped_group(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path,
            ("nurse", "older engineers"),
            "The firm hired a {{GROUP1}} and {{GROUP2}}.",
            ["The firm prefers a {{GROUP1}} to {{GROUP2}}."],
        ),
        EN,
    )
    assert sentences(rows, "premise") == {
        "pro": ["The firm hired a nurse and older engineers."],
        "anti": ["The firm hired older engineers and a nurse."],
    }
    assert sentences(rows)["anti"] == ["The firm prefers older engineers to a nurse."]

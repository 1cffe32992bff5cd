"""A masked LM's fill after an auxiliary that takes a verb's base form (#44): "doesn't",
"does not", "didn't", "can", "will", "should", "must", "may", "might", "would", "could".
"{{GROUP1}} doesn't <mask:VERB> late." filled with "works" is written "doesn't work"; a word
already in its base form is never changed; the author's own words are left as written.
Sentences written for these tests."""

from __future__ import annotations

import pytest

from workbench import languages
from workbench.kinds.nli.stages.generate import agreed_fills
from workbench.kinds.nli.templates.counterfactual import counterfactual_with_notes
from workbench.languages import en
from workbench.languages.grammar import Word

EN = languages.require("en", "test")
FR = languages.require("fr", "test")


def sample(template: str, groups: tuple[str, str], stance: str = "pro", mask_pos=None) -> dict:
    """A sample of `template` (written for `groups`) in `stance`: the anti one has them swapped."""
    g1, g2 = groups if stance == "pro" else groups[::-1]
    return {
        "hypothesis_template": template,
        "mask_pos": mask_pos,
        "bindings": None,
        "groups": {"GROUP1": g1, "GROUP2": g2},
        "stance": stance,
        "written_stance": "pro",
    }


# (template, groups as written, the fill, the fill as the sentence writes it)
BASE_FORMS = [
    ("{{GROUP1}} doesn't <mask:VERB> on weekends.", ("a plumber", "teachers"), "works", "work"),
    ("{{GROUP1}} does not <mask:VERB> on weekends.", ("a plumber", "teachers"), "works", "work"),
    ("{{GROUP1}} don't <mask:VERB> the bills.", ("accountants", "a pilot"), "pays", "pay"),
    ("{{GROUP1}} didn't <mask:VERB> the letter.", ("a pilot", "accountants"), "signed", "sign"),
    ("{{GROUP1}} can <mask:VERB> a bicycle.", ("teenagers", "a grandmother"), "repairs", "repair"),
    ("{{GROUP1}} can't <mask:VERB> the stairs.", ("a grandmother", "teenagers"), "climbs", "climb"),
    ("{{GROUP1}} cannot <mask:VERB> the stairs.", ("a grandmother", "teenagers"), "climbing", "climb"),
    ("{{GROUP1}} will never <mask:VERB> abroad.", ("a farmer", "bankers"), "went", "go"),
    ("{{GROUP1}} should <mask:VERB> the rules.", ("bankers", "a farmer"), "follows", "follow"),
    ("{{GROUP1}} must <mask:VERB> at home.", ("a farmer", "bankers"), "stayed", "stay"),
    ("{{GROUP1}} may <mask:VERB> late.", ("a pilot", "accountants"), "arrives", "arrive"),
    ("{{GROUP1}} might <mask> nervous.", ("a pilot", "accountants"), "is", "be"),
    ("{{GROUP1}} would <mask:VERB> a truck.", ("a plumber", "teachers"), "drove", "drive"),
    ("{{GROUP1}} could <mask:VERB> a novel.", ("teachers", "a plumber"), "wrote", "write"),
    ("{{GROUP1}} could not really <mask:VERB> it.", ("teachers", "a plumber"), "understands", "understand"),
    ("The neighbours of {{GROUP1}} can <mask:VERB> music.", ("a plumber", "teachers"), "hears", "hear"),
    # already right: never changed
    ("{{GROUP1}} doesn't <mask:VERB> on weekends.", ("a plumber", "teachers"), "work", "work"),
    ("{{GROUP1}} might <mask> nervous.", ("a pilot", "accountants"), "be", "be"),
]


@pytest.mark.parametrize("template, groups, fill, expected", BASE_FORMS)
@pytest.mark.parametrize("stance", ["pro", "anti"])
def test_a_fill_after_an_auxiliary_takes_its_base_form(template, groups, fill, expected, stance):
    assert agreed_fills(sample(template, groups, stance), [fill], EN) == [expected]


@pytest.mark.parametrize(
    "template, stance, fill, expected",
    [  # no auxiliary that takes a base form: the fill agrees with its group as before
        ("{{GROUP1}} <mask:VERB> on weekends.", "pro", "works", "works"),
        ("{{GROUP1}} <mask:VERB> on weekends.", "anti", "works", "work"),
        ("{{GROUP1}} does <mask:NOUN> well.", "pro", "dishes", "dishes"),
        ("{{GROUP1}} does <mask:NOUN> well.", "anti", "dishes", "dishes"),
    ],
)
def test_without_such_an_auxiliary_nothing_changes(template, stance, fill, expected):
    assert agreed_fills(sample(template, ("a plumber", "teachers"), stance), [fill], EN) == [expected]


def test_the_base_form_needs_no_group_in_the_sentence():
    assert agreed_fills(sample("The manager can <mask:VERB> the budget.", ("a", "b")), ["approves"], EN) == ["approve"]


def test_a_verb_after_an_auxiliary_is_not_agreed_with_the_group():
    # "works" after "doesn't" used to be read as the group's present: "a plumber doesn't works" kept it
    got = agreed_fills(sample("{{GROUP1}} doesn't <mask:VERB> on weekends.", ("teachers", "a plumber")), ["works"], EN)
    assert got == ["work"]


@pytest.mark.parametrize(
    "word, tag, lemma, expected",
    [
        ("works", "VBZ", "work", "work"),
        ("washes", "VBZ", "wash", "wash"),
        ("tries", "VBZ", "try", "try"),
        ("has", "VBZ", "have", "have"),
        ("does", "VBZ", "do", "do"),
        ("are", "VBP", "be", "be"),
        ("was", "VBD", "be", "be"),
        ("worked", "VBD", "work", "work"),
        ("stopped", "VBD", "stop", "stop"),
        ("making", "VBG", "make", "make"),
        ("went", "VB", "went", "go"),  # the small pipeline's lemma is the word itself
        ("thought", "VBD", "think", "think"),
        ("Works", "VBZ", "work", "Work"),
        ("work", "VB", "work", "work"),
        ("sings", "NNS", "sing", "sing"),  # a verb read as a plural noun
        ("bred", "VBD", "bred", None),  # an irregular past nothing knows: noted, not guessed
    ],
)
def test_english_base_forms(word, tag, lemma, expected):
    assert en.base(Word(word, lemma, tag)) == expected


@pytest.mark.parametrize("stance", ["pro", "anti"])
def test_french_has_no_such_rule(stance):
    got = agreed_fills(
        sample("{{GROUP1}} ne peut pas <mask:VERB> la voiture.", ("les infirmières", "un ingénieur"), stance),
        ["réparer"],
        FR,
    )
    assert got == ["réparer"]


@pytest.mark.parametrize(
    "template, fills, expected",
    [
        ("{{GROUP1}} doesn't <mask:VERB> on weekends.", ["work"], "Teachers don't work on weekends."),
        ("{{GROUP2}} don't <mask:VERB> on weekends.", ["work"], "A plumber doesn't work on weekends."),
        ("{{GROUP1}} can <mask:VERB> a bicycle.", ["repair"], "Teachers can repair a bicycle."),
        ("{{GROUP1}} didn't <mask:VERB> the letter.", ["sign"], "Teachers didn't sign the letter."),
    ],
)
def test_counterfactuals_keep_the_base_form_and_agree_the_auxiliary(template, fills, expected):
    text, notes = counterfactual_with_notes(template, {}, {"GROUP1": "a plumber", "GROUP2": "teachers"}, fills, EN)
    assert (text, notes) == (expected, [])


def test_generate_writes_the_base_form(fixture_models, tmp_path):
    from test_fill_agreement import by_stance, generate, template
    from test_generate import boosted

    model = boosted(fixture_models, tmp_path, "bert", {"cooks": 60.0})
    rows = by_stance(
        generate(tmp_path / "p", model, template(("a plumber", "teachers"), "{{GROUP1}} doesn't <mask:VERB> dinner."))[
            "generate"
        ]
    )
    assert rows["pro"]["fill_tokens"] == ["cooks"]
    assert rows["pro"]["hypothesis"] == "a plumber doesn't cook dinner."
    assert rows["anti"]["hypothesis"] == "teachers don't cook dinner."


def test_a_counterfactual_notes_a_fill_after_an_auxiliary_not_in_its_base_form():
    # generate writes the base form where it knows one; a fill it did not know is noted
    text, notes = counterfactual_with_notes(
        "{{GROUP1}} didn't <mask:VERB> the horses.", {}, {"GROUP1": "a plumber", "GROUP2": "teachers"}, ["bred"], EN
    )
    assert text == "Teachers didn't bred the horses."
    assert notes == ["'bred' follows an auxiliary and may need its base form: left as written"]

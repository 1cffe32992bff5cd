"""Predicate nouns follow their subject's number when a group of the other number is put in
(#44): "{{GROUP1}} is a worker." written for "a man" is "Men are workers." with "men", and
"Women are nurses." is "A woman is a nurse." (a/an by the next word). French likewise where the
tables make it safe ("les infirmières sont des employées" / "une directrice est une employée");
where they do not (a noun of either gender, an adjective before it, a coordination, a clause,
a determiner with no safe form) the sentence is left and noted. Sentences written for these tests."""

from __future__ import annotations

import pytest

from test_spelling import sentences, templates_of
from workbench import languages
from workbench.kinds.nli.templates.counterfactual import counterfactual_with_notes
from workbench.kinds.nli.templates.expand import expand_all

EN = languages.require("en", "test")
FR = languages.require("fr", "test")

EN_GROUPS = ("a mechanic", "women")
# (rule, hypothesis as written, its anti stance)
EN_EXPAND = [
    ("singular to plural", "{{GROUP1}} is a worker.", "women are workers."),
    ("an before a vowel, to plural", "{{GROUP1}} is an engineer.", "women are engineers."),
    ("plural to singular", "{{GROUP2}} are nurses.", "a mechanic is a nurse."),
    ("plural to singular, an", "{{GROUP2}} are engineers.", "a mechanic is an engineer."),
    ("an adjective before it", "{{GROUP2}} are excellent cooks.", "a mechanic is an excellent cook."),
    ("a compound", "{{GROUP2}} are not computer experts.", "a mechanic is not a computer expert."),
    ("the", "{{GROUP2}} are the organisers here.", "a mechanic is the organiser here."),
    ("a possessive", "{{GROUP2}} are our neighbours.", "a mechanic is our neighbour."),
    ("an irregular plural", "{{GROUP1}} is a good wife.", "women are good wives."),
    ("written in a number of its own", "{{GROUP2}} are a nuisance.", "a mechanic is a nuisance."),
    ("a collective noun, kept", "{{GROUP1}} is a quiet group.", "women are a quiet group."),
    ("a collective noun, kept the other way", "{{GROUP2}} are a close community.", "a mechanic is a close community."),
]


@pytest.mark.parametrize("rule, written, anti", EN_EXPAND, ids=[e[0] for e in EN_EXPAND])
def test_english_predicate_nouns_follow_the_swapped_group(tmp_path, rule, written, anti):
    rows = expand_all(templates_of(tmp_path, EN_GROUPS, "{{GROUP1}} and {{GROUP2}} met.", [written]), EN)
    pro = written.replace("{{GROUP1}}", EN_GROUPS[0]).replace("{{GROUP2}}", EN_GROUPS[1])
    assert sentences(rows) == {"pro": [pro], "anti": [anti]}
    assert all(not r["grammar"] for r in rows), [r["grammar"] for r in rows]


@pytest.mark.parametrize(
    "written, anti, why",
    [
        ("{{GROUP2}} are nurses and teachers.", "a mechanic is nurses and teachers.", "it is coordinated"),
        ("{{GROUP2}} are nurses who work nights.", "a mechanic is nurses who work nights.", "a clause depends on it"),
        ("{{GROUP2}} are these people.", "a mechanic is these people.", "no singular determiner is known for it"),
    ],
)
def test_english_phrases_it_cannot_change_alone_are_noted(tmp_path, written, anti, why):
    rows = expand_all(templates_of(tmp_path, EN_GROUPS, "{{GROUP1}} and {{GROUP2}} met.", [written]), EN)
    (row,) = [r for r in rows if r["stance"] == "anti"]
    assert row["hypothesis"] == anti
    assert any(why in note and "left as written" in note for note in row["grammar"]), row["grammar"]


FR_GROUPS = ("les infirmières", "une directrice")
FR_EXPAND = [
    ("plural to singular, indefinite", "{{GROUP1}} sont des employées.", "une directrice est une employée."),
    ("singular to plural, indefinite", "{{GROUP2}} est une employée.", "les infirmières sont des employées."),
    ("definite, elided", "{{GROUP2}} est l'employée du mois.", "les infirmières sont les employées du mois."),
    (
        "plural to singular, definite",
        "{{GROUP1}} sont les employées du mois.",
        "une directrice est l'employée du mois.",
    ),
    ("negation", "{{GROUP1}} ne sont pas des patronnes.", "une directrice n'est pas une patronne."),
    ("no article", "{{GROUP1}} sont ouvrières.", "une directrice est ouvrière."),
    ("a collective noun, kept", "{{GROUP1}} sont une communauté soudée.", "une directrice est une communauté soudée."),
]


@pytest.mark.parametrize("rule, written, anti", FR_EXPAND, ids=[e[0] for e in FR_EXPAND])
def test_french_predicate_nouns_follow_the_swapped_group(tmp_path, rule, written, anti):
    rows = expand_all(templates_of(tmp_path, FR_GROUPS, "{{GROUP1}} et {{GROUP2}} travaillent.", [written]), FR)
    pro = written.replace("{{GROUP1}}", FR_GROUPS[0]).replace("{{GROUP2}}", FR_GROUPS[1])
    assert sentences(rows) == {"pro": [pro], "anti": [anti]}
    assert all(not r["grammar"] for r in rows), [r["grammar"] for r in rows]


def test_french_masculine_predicate_nouns(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path,
            ("les hommes", "un boulanger"),
            "{{GROUP1}} et {{GROUP2}} travaillent.",
            ["{{GROUP1}} sont des ouvriers.", "{{GROUP2}} est un ingénieur."],
        ),
        FR,
    )
    assert sentences(rows)["anti"] == ["un boulanger est un ouvrier.", "les hommes sont des ingénieurs."]


@pytest.mark.parametrize(
    "written, anti, why",
    [
        # a noun of either gender, or of things: the parser's gender of nouns is not reliable
        ("{{GROUP1}} sont des collègues.", "une directrice est des collègues.", "no singular determiner"),
        ("{{GROUP1}} sont des priorités.", "une directrice est des priorités.", "no singular determiner"),
        ("{{GROUP1}} sont de bonnes employées.", "une directrice est de bonnes employées.", "an adjective before it"),
        ("{{GROUP1}} sont des employées dévouées.", "une directrice est des employées dévouées.", "the parser"),
    ],
)
def test_french_predicate_nouns_the_tables_do_not_settle_are_noted(tmp_path, written, anti, why):
    rows = expand_all(templates_of(tmp_path, FR_GROUPS, "{{GROUP1}} et {{GROUP2}} travaillent.", [written]), FR)
    (row,) = [r for r in rows if r["stance"] == "anti"]
    assert row["hypothesis"] == anti
    assert any(why in note and "left as written" in note for note in row["grammar"]), row["grammar"]


def test_french_gender_and_number_both_changing_is_noted(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path,
            ("les infirmières", "un ingénieur"),
            "{{GROUP1}} et {{GROUP2}} lisent.",
            ["{{GROUP1}} sont des employées."],
        ),
        FR,
    )
    (row,) = [r for r in rows if r["stance"] == "anti"]
    assert row["hypothesis"] == "un ingénieur est des employées."
    assert any("its gender would change too" in note for note in row["grammar"]), row["grammar"]


@pytest.mark.parametrize(
    "template, fills, groups, language, expected",
    [
        ("{{GROUP1}} is a <mask:NOUN>.", ["worker"], EN_GROUPS, EN, "Women are workers."),
        ("{{GROUP2}} are <mask:ADJ> nurses.", ["patient"], EN_GROUPS, EN, "A mechanic is a patient nurse."),
        ("{{GROUP2}} are <mask:NOUN>.", ["engineers"], EN_GROUPS, EN, "A mechanic is an engineer."),
        ("{{GROUP1}} sont des <mask:NOUN>.", ["employées"], FR_GROUPS, FR, "Une directrice est une employée."),
        ("{{GROUP2}} est une <mask:NOUN>.", ["ouvrière"], FR_GROUPS, FR, "Les infirmières sont des ouvrières."),
    ],
)
def test_counterfactuals_agree_predicate_nouns(template, fills, groups, language, expected):
    text, notes = counterfactual_with_notes(template, {}, {"GROUP1": groups[0], "GROUP2": groups[1]}, fills, language)
    assert (text, notes) == (expected, [])


def test_a_fill_the_parse_leaves_out_of_the_phrase_is_noted_not_split():
    # "kind" is read as an adverb: "a" could go either side of it, so nothing is changed
    text, notes = counterfactual_with_notes(
        "{{GROUP2}} are <mask:ADJ> nurses.", {}, {"GROUP1": EN_GROUPS[0], "GROUP2": EN_GROUPS[1]}, ["kind"], EN
    )
    assert text == "A mechanic is kind nurses."
    assert notes == [
        "'nurses' may need to agree with 'a mechanic': left as written (the parse does not say where its phrase opens)"
    ]

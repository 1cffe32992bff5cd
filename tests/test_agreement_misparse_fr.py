"""French subjects the small parser misses (#44): fr_core_news_sm tags the verb after a
plural group at the start of a sentence as an adverb ("Les infirmières oublient les réunions":
"oublient" ADV) or attaches it elsewhere, so the verb was left in the other number ("Les
infirmières oublie les réunions.", "un ingénieur oublient ..."). A word right after a group that
opens the sentence, with no subject of its own, whose form the verb tables read as a finite verb
both ways, is now the group's verb. Sentences written for these tests."""

from __future__ import annotations

import pytest

from test_grammar_base_form import sample
from test_spelling import sentences, templates_of
from workbench import languages
from workbench.kinds.nli.stages.generate import agreed_fills
from workbench.kinds.nli.templates.counterfactual import counterfactual_with_notes
from workbench.kinds.nli.templates.expand import expand_all
from workbench.languages.fr import agreement
from workbench.languages.grammar import Word

FR = languages.require("fr", "test")
GROUPS = ("les infirmières", "un ingénieur")


@pytest.mark.parametrize(
    "template, fill, pro, anti",
    [
        # the failing sentence: the masked LM's singular "oublie" after a plural group
        ("{{GROUP1}} <mask:VERB> les réunions.", "oublie", "oublient", "oublie"),
        ("{{GROUP1}} <mask:VERB> souvent leurs clés.", "oublie", "oublient", "oublie"),
        ("{{GROUP1}} <mask:VERB> bien.", "cuisinent", "cuisinent", "cuisine"),
        ("{{GROUP1}} <mask:VERB> rarement.", "pleure", "pleurent", "pleure"),
    ],
)
def test_a_fill_the_parser_misreads_agrees_with_the_group_opening_the_sentence(template, fill, pro, anti):
    assert agreed_fills(sample(template, GROUPS, "pro", [["VERB"]]), [fill], FR) == [pro]
    assert agreed_fills(sample(template, GROUPS, "anti", [["VERB"]]), [fill], FR) == [anti]


EXPAND = [
    ("{{GROUP1}} oublient les réunions.", "un ingénieur oublie les réunions."),
    ("{{GROUP1}} cuisinent bien.", "un ingénieur cuisine bien."),
    ("{{GROUP1}} pleurent rarement.", "un ingénieur pleure rarement."),
    ("{{GROUP2}} cuisine bien.", "les infirmières cuisinent bien."),
    ("{{GROUP1}} ne se souviennent pas de la date.", "un ingénieur ne se souvient pas de la date."),
]


@pytest.mark.parametrize("written, anti", EXPAND)
def test_expand_agrees_a_verb_the_parser_misreads(tmp_path, written, anti):
    rows = expand_all(templates_of(tmp_path, GROUPS, "{{GROUP1}} et {{GROUP2}} travaillent.", [written]), FR)
    pro = written.replace("{{GROUP1}}", GROUPS[0]).replace("{{GROUP2}}", GROUPS[1])
    assert sentences(rows) == {"pro": [pro], "anti": [anti]}
    assert all(not r["grammar"] for r in rows), [r["grammar"] for r in rows]


def test_expand_oublient_souvent_keeps_only_the_pronoun_note(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path, GROUPS, "{{GROUP1}} et {{GROUP2}} travaillent.", ["{{GROUP1}} oublient souvent leurs clés."]
        ),
        FR,
    )
    (row,) = [r for r in rows if r["stance"] == "anti"]
    assert row["hypothesis"] == "un ingénieur oublie souvent leurs clés."
    assert row["grammar"] == ["hypothesis: 'leurs' may stand for 'un ingénieur': pronouns are not changed"]


@pytest.mark.parametrize(
    "template, groups, fills, expected",
    [
        ("{{GROUP1}} <mask:VERB> les réunions.", GROUPS, ["oublient"], "Un ingénieur oublie les réunions."),
        ("{{GROUP1}} <mask:VERB> bien.", GROUPS[::-1], ["cuisine"], "Les infirmières cuisinent bien."),
        ("{{GROUP1}} <mask:VERB> rarement.", GROUPS, ["pleurent"], "Un ingénieur pleure rarement."),
    ],
)
def test_counterfactuals_agree_a_verb_the_parser_misreads(template, groups, fills, expected):
    text, notes = counterfactual_with_notes(template, {}, {"GROUP1": groups[0], "GROUP2": groups[1]}, fills, FR)
    assert (text, notes) == (expected, [])


@pytest.mark.parametrize(
    "word, lemma, number",
    [
        ("oublient", "oublier", "Plur"),  # the parser's lemma
        ("oublie", "oublie", "Sing"),  # the first group's
        ("cuisinent", "cuisiner", "Plur"),
        ("font", "faire", "Plur"),
        ("fait", "faire", "Sing"),
        ("malades", "malade", None),  # an adjective
        ("souvent", "souvent", None),
        ("rarement", "rarement", None),
    ],
)
def test_finite_readings(word, lemma, number):
    reading = agreement.finite_reading(Word(word, lemma))
    assert (reading.morph["Number"] if reading else None) == number
    # tagged as an adverb, it is read as a verb only by a verb's lemma from the parser
    reading = agreement.finite_reading(Word(word, lemma, pos="ADV"))
    assert (reading.morph["Number"] if reading else None) == (number if lemma != word else None)


def test_an_adjective_after_the_group_is_not_read_as_its_verb(tmp_path):
    rows = expand_all(
        templates_of(tmp_path, GROUPS, "{{GROUP1}} et {{GROUP2}} travaillent.", ["{{GROUP1}} malades restent ici."]),
        FR,
    )
    (row,) = [r for r in rows if r["stance"] == "anti"]
    assert not row["hypothesis"].startswith("un ingénieur malade ")  # "malades" is the author's word: never changed


@pytest.mark.parametrize(
    "written, anti, word",
    [
        ("{{GROUP2}} travaille et dort peu.", "les infirmières travaillent et dort peu.", "dort"),
        ("{{GROUP2}} arrive tôt et part tard.", "les infirmières arrivent tôt et part tard.", "part"),
        ("{{GROUP1}} lisent et écrivent.", "un ingénieur lit et écrivent.", "écrivent"),
    ],
)
def test_a_coordinated_verb_the_parse_leaves_out_is_noted_not_passed_silently(tmp_path, written, anti, word):
    rows = expand_all(templates_of(tmp_path, GROUPS, "{{GROUP1}} et {{GROUP2}} travaillent.", [written]), FR)
    (row,) = [r for r in rows if r["stance"] == "anti"]
    group = anti.split(" ")[0] + " " + anti.split(" ")[1]
    assert row["hypothesis"] == anti
    assert row["grammar"] == [f"hypothesis: {word!r} after 'et' may be a verb of {group!r} the parser does not read so"]

"""French "de" + "des", and spelling inside one put-in value (#44): a value "le ingénieur" or a
fill "que une" is respelt at render time as where a value meets the text. Sentences written for
these tests."""

from __future__ import annotations

import pytest

from workbench import languages
from workbench.languages.orthography import respell

FR, EN = languages.find("fr"), languages.find("en")


def spelt(language, *pieces: str, put_in: tuple[int, ...] = (1,)) -> str:
    return "".join(respell(list(pieces), [i in put_in for i in range(len(pieces))], language.spelling))


@pytest.mark.parametrize(
    "left, value, right, expected",
    [
        # a preposition "de" before a group written with the indefinite "des": "des"
        ("Le salaire de ", "des infirmières", " est bas.", "Le salaire des infirmières est bas."),
        ("Il parle de ", "des voisins", ".", "Il parle des voisins."),
        ("Il parle d'", "des hommes", ".", "Il parle des hommes."),  # "d'" written whole first
        ("De ", "des voisins", " sont là.", "Des voisins sont là."),
        # after a word of quantity or a negation, "des" is dropped and "de" stays, eliding before a vowel
        ("Il y a beaucoup de ", "des femmes", " ici.", "Il y a beaucoup de femmes ici."),
        ("Il y a beaucoup de ", "des infirmières", " ici.", "Il y a beaucoup d'infirmières ici."),
        ("Il y a trop de ", "des hommes", " ici.", "Il y a trop d'hommes ici."),  # mute h
        ("Il n'y a pas de ", "des voisins", " ici.", "Il n'y a pas de voisins ici."),
        ("Il connaît peu de ", "des ingénieurs", ".", "Il connaît peu d'ingénieurs."),
        ("Beaucoup de ", "des ingénieurs", " dorment.", "Beaucoup d'ingénieurs dorment."),
        # other prepositions keep "des"; a definite "les" still contracts
        ("Elle écrit à ", "des voisins", ".", "Elle écrit à des voisins."),
        ("La plupart de ", "les voisins", " sont là.", "La plupart des voisins sont là."),
        ("Il y a beaucoup de ", "les voisins", ".", "Il y a beaucoup des voisins."),  # "many of the": as written
    ],
)
def test_de_before_a_plural_indefinite(left, value, right, expected):
    assert spelt(FR, left, value, right) == expected


@pytest.mark.parametrize(
    "pieces, put_in, expected",
    [
        (("Il parle à ", "le ingénieur", "."), (1,), "Il parle à l'ingénieur."),  # inside one value
        (("Il va à ", "le hôpital", "."), (1,), "Il va à l'hôpital."),  # then no "au" before l'
        (("Il parle de ", "le homme", "."), (1,), "Il parle de l'homme."),
        (("Il parle de ", "le directeur", "."), (1,), "Il parle du directeur."),  # still contracted
        (("Il pense ", "que une", " femme est là."), (1,), "Il pense qu'une femme est là."),  # a fill of two words
        (("Elle ", "ne aime", " pas ça."), (1,), "Elle n'aime pas ça."),
        (("Il parle de le ingénieur."), (), "Il parle de le ingénieur."),  # the author's own text: never
    ],
)
def test_elision_inside_one_value(pieces, put_in, expected):
    pieces = (pieces,) if isinstance(pieces, str) else pieces
    assert spelt(FR, *pieces, put_in=put_in) == expected


def test_english_articles_inside_one_value():
    assert spelt(EN, "He saw ", "a older man", ".") == "He saw an older man."
    assert spelt(EN, "She is ", "an nurse", ".") == "She is a nurse."
    assert spelt(EN, "She is a ", "nurse", ".") == "She is a nurse."


def test_one_text_per_piece_is_kept():
    pieces = respell(["Il va à ", "le hôpital", " et ", "que une", "."], [False, True, False, True, False], FR.spelling)
    assert len(pieces) == 5 and pieces[1] == "l'hôpital" and pieces[3] == "qu'une"


def test_a_language_without_the_rule_keeps_de_des():
    from workbench.languages.orthography import Orthography

    plain = Orthography(contractions={("de", "les"): "des"})
    assert spelt(FR, "Il y a beaucoup de ", "des femmes", ".") != "Il y a beaucoup de des femmes."
    assert (
        "".join(respell(["Il y a beaucoup de ", "des femmes", "."], [False, True, False], plain))
        == "Il y a beaucoup de des femmes."
    )


def test_expand_writes_de_des_and_values_elided(tmp_path):
    """Through expand, both stances: "de" + a group with "des", and a word-list value elided inside."""
    from test_spelling import sentences, templates_of
    from workbench.kinds.nli.templates.expand import expand_all

    templates = templates_of(
        tmp_path,
        ("des infirmières", "beaucoup d'ingénieurs"),
        "Le salaire de {{GROUP1}} est bas et {{GROUP2}} dorment.",
        ["Il y a beaucoup de {{GROUP1}} dans {{PLACE}}."],
        words='words: {PLACE: ["le hôpital"]}',
    )
    rows = expand_all(templates, FR)
    hypotheses = sentences(rows)
    premises = sentences(rows, "premise")
    assert "Il y a beaucoup d'infirmières dans l'hôpital." in hypotheses["pro"] + hypotheses["anti"]
    assert "Le salaire des infirmières est bas et beaucoup d'ingénieurs dorment." in premises["pro"] + premises["anti"]

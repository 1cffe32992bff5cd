"""French grammar of the loop (issue 44): word forms of nouns of people and adjectives, and
agreement by syntax in both stances of expand and in counterfactuals. Sentences written for
these tests."""
from __future__ import annotations

import pytest

from workbench import languages
from workbench.kinds.nli.templates.fills import group_words
from workbench.languages import fr

FR = languages.require("fr", "test")

# masculine -> feminine, read both ways: -teur -> -trice before -eur -> -euse, the -teuse and
# -eure words, the -ieur comparatives and the irregular ones.
WORD_FORMS = [
    ("directeur", "directrice"), ("acteur", "actrice"), ("instituteur", "institutrice"),
    ("agriculteur", "agricultrice"), ("inspecteur", "inspectrice"), ("conducteur", "conductrice"),
    ("rédacteur", "rédactrice"), ("animateur", "animatrice"), ("sculpteur", "sculptrice"),
    ("enquêteur", "enquêtrice"), ("auteur", "autrice"), ("ambassadeur", "ambassadrice"),
    ("empereur", "impératrice"),
    ("chanteur", "chanteuse"), ("menteur", "menteuse"), ("acheteur", "acheteuse"), ("porteur", "porteuse"),
    ("visiteur", "visiteuse"),
    ("travailleur", "travailleuse"), ("vendeur", "vendeuse"), ("coiffeur", "coiffeuse"), ("danseur", "danseuse"),
    ("serveur", "serveuse"), ("chômeur", "chômeuse"),
    ("ingénieur", "ingénieure"), ("professeur", "professeure"), ("docteur", "docteure"),
    ("procureur", "procureure"), ("supérieur", "supérieure"), ("meilleur", "meilleure"),
    ("vengeur", "vengeresse"), ("pécheur", "pécheresse"),
    ("infirmier", "infirmière"), ("boulanger", "boulangère"), ("musicien", "musicienne"), ("patron", "patronne"),
    ("sportif", "sportive"), ("âgé", "âgée"), ("bon", "bonne"), ("inquiet", "inquiète"), ("muet", "muette"),
    ("jaloux", "jalouse"), ("heureux", "heureuse"), ("gentil", "gentille"), ("jeune", "jeune"),
]


@pytest.mark.parametrize("masculine, feminine", WORD_FORMS)
def test_feminine_of_nouns_of_people_and_adjectives(masculine, feminine):
    assert fr.feminine(masculine) == feminine
    if masculine != feminine:
        assert masculine in fr.masculine(feminine)


def test_the_group_word_filter_knows_the_feminine_of_a_teur_noun():
    words = group_words("les directeurs", "un ingénieur", language=FR)
    assert {"directrice", "directrices", "ingénieure", "ingénieures"} <= words
    assert "directeuse" not in words

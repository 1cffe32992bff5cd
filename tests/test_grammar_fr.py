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
    ("directeur", "directrice"),
    ("acteur", "actrice"),
    ("instituteur", "institutrice"),
    ("agriculteur", "agricultrice"),
    ("inspecteur", "inspectrice"),
    ("conducteur", "conductrice"),
    ("rédacteur", "rédactrice"),
    ("animateur", "animatrice"),
    ("sculpteur", "sculptrice"),
    ("enquêteur", "enquêtrice"),
    ("auteur", "autrice"),
    ("ambassadeur", "ambassadrice"),
    ("empereur", "impératrice"),
    ("chanteur", "chanteuse"),
    ("menteur", "menteuse"),
    ("acheteur", "acheteuse"),
    ("porteur", "porteuse"),
    ("visiteur", "visiteuse"),
    ("travailleur", "travailleuse"),
    ("vendeur", "vendeuse"),
    ("coiffeur", "coiffeuse"),
    ("danseur", "danseuse"),
    ("serveur", "serveuse"),
    ("chômeur", "chômeuse"),
    ("ingénieur", "ingénieure"),
    ("professeur", "professeure"),
    ("docteur", "docteure"),
    ("procureur", "procureure"),
    ("supérieur", "supérieure"),
    ("meilleur", "meilleure"),
    ("vengeur", "vengeresse"),
    ("pécheur", "pécheresse"),
    ("infirmier", "infirmière"),
    ("boulanger", "boulangère"),
    ("musicien", "musicienne"),
    ("patron", "patronne"),
    ("sportif", "sportive"),
    ("âgé", "âgée"),
    ("bon", "bonne"),
    ("inquiet", "inquiète"),
    ("muet", "muette"),
    ("jaloux", "jalouse"),
    ("heureux", "heureuse"),
    ("gentil", "gentille"),
    ("jeune", "jeune"),
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


# -- agreement by syntax ----------------------------------------------------------------------------------
from test_spelling import sentences, templates_of  # noqa: E402
from workbench.kinds.nli.templates.counterfactual import counterfactual_with_notes  # noqa: E402
from workbench.kinds.nli.templates.expand import expand_all  # noqa: E402

GROUPS = ("les infirmières", "un ingénieur")

# (rule, hypothesis as written, its anti stance)
EXPAND = [
    ("auxiliary avoir", "{{GROUP2}} a oublié le logiciel.", "les infirmières ont oublié le logiciel."),
    ("auxiliary être and its participle", "{{GROUP1}} sont arrivées tôt.", "un ingénieur est arrivé tôt."),
    ("pronominal verb", "{{GROUP1}} se sont levées tôt.", "un ingénieur s'est levé tôt."),
    ("lexical verb", "{{GROUP1}} travaillent la nuit.", "un ingénieur travaille la nuit."),
    ("irregular verbs", "{{GROUP1}} vont au bureau.", "un ingénieur va au bureau."),
    ("second group", "{{GROUP1}} finissent le rapport.", "un ingénieur finit le rapport."),
    ("third group", "{{GROUP1}} prennent le train.", "un ingénieur prend le train."),
    ("future", "{{GROUP1}} travailleront la nuit.", "un ingénieur travaillera la nuit."),
    ("adverb between", "{{GROUP1}} travaillent souvent la nuit.", "un ingénieur travaille souvent la nuit."),
    ("negation", "{{GROUP1}} ne travaillent jamais la nuit.", "un ingénieur ne travaille jamais la nuit."),
    ("negation, predicate, elision", "{{GROUP1}} ne sont pas fatiguées.", "un ingénieur n'est pas fatigué."),
    (
        "relative clause",
        "{{GROUP1}} qui travaillent ici sont fatiguées.",
        "un ingénieur qui travaille ici est fatigué.",
    ),
    ("coordinated verbs", "{{GROUP1}} arrivent tôt et partent tard.", "un ingénieur arrive tôt et part tard."),
    (
        "coordinated predicates",
        "{{GROUP1}} sont souvent très fatiguées et tristes.",
        "un ingénieur est souvent très fatigué et triste.",
    ),
    ("copular verb", "{{GROUP1}} semblent fatiguées.", "un ingénieur semble fatigué."),
    ("not the subject", "Le bureau de {{GROUP1}} est vide.", "Le bureau d'un ingénieur est vide."),
    ("an object", "Le directeur remercie {{GROUP1}}.", "Le directeur remercie un ingénieur."),
    ("a coordinated subject", "{{GROUP1}} et le directeur sont partis.", "un ingénieur et le directeur sont partis."),
    ("singular to plural, predicate", "{{GROUP2}} est fatigué.", "les infirmières sont fatiguées."),
    ("singular to plural, elided negation", "{{GROUP2}} n'est pas heureux.", "les infirmières ne sont pas heureuses."),
    ("an adjective the parser reads as an adverb", "{{GROUP2}} est content.", "les infirmières sont contentes."),
    ("a plural group of either gender", "{{GROUP2}} est lent.", "les infirmières sont lentes."),
    ("singular to plural, pronominal", "{{GROUP2}} s'est levé tôt.", "les infirmières se sont levées tôt."),
]


@pytest.mark.parametrize("rule, written, anti", EXPAND, ids=[e[0] for e in EXPAND])
def test_expand_agrees_the_anti_stance_with_its_groups(tmp_path, rule, written, anti):
    rows = expand_all(
        templates_of(tmp_path, GROUPS, "{{GROUP1}} et {{GROUP2}} travaillent à l'hôpital.", [written]), FR
    )
    pro = fr_pro = written.replace("{{GROUP1}}", GROUPS[0]).replace("{{GROUP2}}", GROUPS[1])
    fr_pro = pro.replace("de les infirmières", "des infirmières")
    assert sentences(rows) == {"pro": [fr_pro], "anti": [anti]}
    assert all(not r["grammar"] for r in rows), [r["grammar"] for r in rows]


def test_a_plural_group_nothing_marks_is_agreed_in_the_masculine(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path,
            ("une personne âgée", "les jeunes"),
            "{{GROUP1}} et {{GROUP2}} lisent.",
            ["{{GROUP1}} qui utilise un ordinateur est lente."],
        ),
        FR,
    )
    assert sentences(rows)["anti"] == ["les jeunes qui utilisent un ordinateur sont lents."]


def test_gender_alone_changes_the_predicate(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path,
            ("les femmes", "les hommes"),
            "{{GROUP1}} et {{GROUP2}} cuisinent.",
            ["{{GROUP1}} sont fatiguées.", "{{GROUP2}} ont préparé le dîner."],
        ),
        FR,
    )
    assert sentences(rows) == {
        "pro": ["les femmes sont fatiguées.", "les hommes ont préparé le dîner."],
        "anti": ["les hommes sont fatigués.", "les femmes ont préparé le dîner."],
    }


def test_where_the_parse_is_unsure_the_sentence_is_noted_not_changed(tmp_path):
    rows = expand_all(
        templates_of(
            tmp_path,
            GROUPS,
            "{{GROUP1}} et {{GROUP2}} travaillent.",
            ["{{GROUP1}} travaillent beaucoup et dorment peu.", "{{GROUP1}} finissent leur travail."],
        ),
        FR,
    )
    anti = {r["hypothesis"]: r["grammar"] for r in rows if r["stance"] == "anti"}
    assert anti == {
        "un ingénieur travaille beaucoup et dorment peu.": [
            "hypothesis: 'dorment' after 'et' may be a verb of 'un ingénieur' the parser does not read so"
        ],
        "un ingénieur finit leur travail.": [
            "hypothesis: 'leur' may stand for 'un ingénieur': pronouns are not changed"
        ],
    }


# (template, fills of the sample written with GROUP1 "les infirmières", GROUP2 "un ingénieur", its counterfactual)
COUNTERFACTUALS = [
    ("{{GROUP1}} <mask:VERB> la nuit.", ["travaillent"], "Un ingénieur travaille la nuit."),
    ("{{GROUP1}} sont <mask:ADJ>.", ["fatiguées"], "Un ingénieur est fatigué."),
    ("{{GROUP1}} ne sont pas <mask:ADJ>.", ["prêtes"], "Un ingénieur n'est pas prêt."),
    ("{{GROUP1}} <mask:ADV> travaillent la nuit.", ["souvent"], "Un ingénieur souvent travaille la nuit."),
    ("{{GROUP1}} qui <mask:VERB> ici sont fatiguées.", ["travaillent"], "Un ingénieur qui travaille ici est fatigué."),
    ("{{GROUP2}} a <mask:VERB> le logiciel.", ["oublié"], "Les infirmières ont oublié le logiciel."),
    ("{{GROUP2}} est <mask:ADJ>.", ["prêt"], "Les infirmières sont prêtes."),
    ("Le bureau de {{GROUP2}} est <mask:ADJ>.", ["vide"], "Le bureau des infirmières est vide."),
]


@pytest.mark.parametrize("template, fills, expected", COUNTERFACTUALS)
def test_counterfactuals_agree_with_the_swapped_group(template, fills, expected):
    text, notes = counterfactual_with_notes(template, {}, {"GROUP1": GROUPS[0], "GROUP2": GROUPS[1]}, fills, FR)
    assert (text, notes) == (expected, [])


def test_the_queue_shows_the_notes_of_the_sample_and_of_its_counterfactual():
    from test_grammar_en import candidate
    from workbench.kinds.nli.stages.queue import build_items

    row = candidate(
        "Les infirmières et un ingénieur travaillent.",
        "Les infirmières travaillent beaucoup et dorment peu.",
        "{{GROUP1}} travaillent beaucoup et <mask:VERB> peu.",
        {"GROUP1": GROUPS[0], "GROUP2": GROUPS[1]},
        ["dorment"],
        sample_id="s1",
        predictions=[],
        fill_spans=[[38, 45]],
        masked_hypothesis="Les infirmières travaillent beaucoup et <mask> peu.",
        group=GROUPS[0],
        counterfactual_group=GROUPS[1],
    )
    (item,) = build_items([row], {}, {"s1": ["premise: a note expand left"]}, FR)
    assert item["details"] == [
        {"label": "grammar", "text": "premise: a note expand left"},
        {
            "label": "grammar",
            "text": "counterfactual 'Un ingénieur travaille beaucoup et dorment peu.': 'dorment' after "
            "'et' may be a verb of 'un ingénieur' the parser does not read so",
        },
    ]

"""Spelling where a placeholder or a fill meets the author's words (issue 44, part 1): French
contractions and elisions (a mute h elides, an aspirated one does not), English a/an, none in a
language without rules; in both stances of expand, in fills and in counterfactuals. Every
sentence here was written for these tests."""

from __future__ import annotations

import pytest

from workbench import languages
from workbench.kinds.nli.templates.counterfactual import counterfactual
from workbench.kinds.nli.templates.expand import expand_all
from workbench.kinds.nli.templates.fills import apply_fills
from workbench.kinds.nli.templates.loader import load_templates
from workbench.languages.orthography import respell

FR = languages.require("fr", "test")
EN = languages.require("en", "test")


def templates_of(tmp_path, groups: tuple[str, str], premise: str, hypotheses: list[str], words: str = ""):
    """One template written for a test, loaded as the loop loads it."""
    lines = "\n".join(f'  - text: "{h}"\n    true_label: neutral\n    bias_label: entailment' for h in hypotheses)
    path = tmp_path / "t.yaml"
    path.write_text(
        f"""\
format: workbench-template/1
id: t
domain: d
groups: {{GROUP1: "{groups[0]}", GROUP2: "{groups[1]}"}}
{words}
premises:
  - text: "{premise}"
hypotheses:
{lines}
""",
        encoding="utf-8",
    )
    templates, problems = load_templates([path])
    assert templates, problems
    return templates


def sentences(rows, field="hypothesis") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(r["stance"], [])
        if r[field] not in out[r["stance"]]:
            out[r["stance"]].append(r[field])
    return out


@pytest.mark.parametrize(
    "left, value, expected",
    [
        ("Il parle de ", "le directeur", "Il parle du directeur."),
        ("Il parle de ", "les voisins", "Il parle des voisins."),
        ("Elle écrit à ", "le directeur", "Elle écrit au directeur."),
        ("Elle écrit à ", "les voisins", "Elle écrit aux voisins."),
        ("Elle écrit à ", "la directrice", "Elle écrit à la directrice."),  # no contraction of "la"
        ("Il parle de ", "l'ingénieur", "Il parle de l'ingénieur."),
        ("Il croit que ", "une voisine", "Il croit qu'une voisine."),
        ("Il parle de ", "un voisin", "Il parle d'un voisin."),
        ("Il aime le ", "ordinateur", "Il aime l'ordinateur."),
        ("Il aime la ", "école", "Il aime l'école."),
        ("Elle ne ", "aime", "Elle n'aime."),
        ("Je me ", "habille", "Je m'habille."),  # mute h (a family: habiller)
        ("Tu te ", "inquiètes", "Tu t'inquiètes."),
        ("Il se ", "endort", "Il s'endort."),
        ("Je ", "écoute", "J'écoute."),
        ("Il dit ce ", "est", "Il dit c'est."),
        ("Il voit ce ", "homme", "Il voit cet homme."),  # ce before a noun: cet
        ("Elle demande si ", "il", "Elle demande s'il."),
        ("Elle demande si ", "elle", "Elle demande si elle."),  # si elides before il(s) only
        ("Il parle de ", "hommes", "Il parle d'hommes."),  # mute h
        ("Il parle de ", "héros", "Il parle de héros."),  # aspirated h: no elision
        ("Il aime le ", "hibou", "Il aime le hibou."),
        ("Il compte le ", "onze", "Il compte le onze."),
        ("De ", "les voisins", "Des voisins."),  # the case of the first word is kept
        ("Il va à ", "le hôpital", "Il va à l'hôpital."),  # spelt inside one value too (à + l' stays)
    ],
)
def test_french_contractions_and_elisions_where_a_value_meets_the_text(left, value, expected):
    pieces = respell([left, value, "."], [False, True, False], FR.spelling)
    assert "".join(pieces) == expected


def test_the_authors_own_words_are_never_respelt():
    assert "".join(respell(["Il parle de le hibou", "."], [False, False], FR.spelling)) == "Il parle de le hibou."
    assert (
        "".join(respell(["Il parle de le ", "chat", "."], [False, True, False], FR.spelling)) == "Il parle de le chat."
    )


def test_an_elided_word_before_a_consonant_is_written_whole():
    assert (
        "".join(respell(["Les voisins n'", "sont", " pas là."], [False, True, False], FR.spelling))
        == "Les voisins ne sont pas là."
    )
    assert (
        "".join(respell(["Les voisins s'", "sont", " levés."], [False, True, False], FR.spelling))
        == "Les voisins se sont levés."
    )
    assert (
        "".join(respell(["Le voisin ne ", "est", " pas là."], [False, True, False], FR.spelling))
        == "Le voisin n'est pas là."
    )


def test_french_expand_respells_both_stances_and_capitalises_premises(tmp_path):
    templates = templates_of(
        tmp_path,
        ("les infirmières", "l'ingénieur"),
        "{{GROUP1}} et {{GROUP2}} parlent de {{OBJET}}.",
        ["Le chef pense que {{GROUP2}} parle à {{GROUP1}}."],
        "words:\n  OBJET: [le logiciel, les horaires]",
    )
    rows = expand_all(templates, FR)
    assert sentences(rows, "premise") == {
        "pro": [
            "Les infirmières et l'ingénieur parlent du logiciel.",
            "Les infirmières et l'ingénieur parlent des horaires.",
        ],
        "anti": [
            "L'ingénieur et les infirmières parlent du logiciel.",
            "L'ingénieur et les infirmières parlent des horaires.",
        ],
    }
    assert sentences(rows) == {
        "pro": ["Le chef pense que l'ingénieur parle aux infirmières."],
        "anti": ["Le chef pense que les infirmières parle à l'ingénieur."],
    }
    # Without a language, the expansion is BBNLI's own: values put in as they are.
    plain = expand_all(templates)
    assert sentences(plain, "premise")["pro"][0] == "les infirmières et l'ingénieur parlent de le logiciel."


def test_english_a_an_before_a_placeholder_and_a_fill(tmp_path):
    templates = templates_of(
        tmp_path,
        ("women", "men"),
        "{{GROUP1}} and {{GROUP2}} met a {{AGE}} doctor.",
        ["{{GROUP1}} met a <mask:ADJ> doctor."],
        "words:\n  AGE: [young, old]",
    )
    rows = expand_all(templates, EN)
    assert sentences(rows, "premise")["pro"] == [
        "Women and men met a young doctor.",
        "Women and men met an old doctor.",
    ]
    masked = sentences(rows)["pro"][0]
    assert masked == "women met a <mask> doctor."  # hypotheses keep the case the masked LM sees
    assert apply_fills(masked, ["honest"], language=EN).text == "women met an honest doctor."
    assert apply_fills(masked, ["kind"], language=EN).article_fixed is False


def test_fills_are_respelt_on_both_sides_and_keep_their_spans():
    filled = apply_fills("Il parle de <mask> ami.", ["le"], language=FR)
    assert filled.text == "Il parle de l'ami." and filled.text[slice(*filled.spans[0])] == "l'"
    filled = apply_fills("Il pense que <mask> <mask> ment.", ["une", "amie"], language=FR)
    assert filled.text == "Il pense qu'une amie ment." and [filled.text[a:b] for a, b in filled.spans] == [
        "une",
        "amie",
    ]
    filled = apply_fills("Elle n'<mask> pas.", ["sait"], language=FR)
    assert filled.text == "Elle ne sait pas." and filled.article_fixed


def test_counterfactuals_respell_around_the_swapped_group():
    groups = {"GROUP1": "la directrice", "GROUP2": "les voisins"}
    assert (
        counterfactual("On parle à {{GROUP1}} de <mask>.", {}, groups, ["travail"], FR)
        == "On parle aux voisins de travail."
    )
    assert (
        counterfactual("On parle à {{GROUP2}} de <mask>.", {}, groups, ["travail"], FR)
        == "On parle à la directrice de travail."
    )
    assert (
        counterfactual(
            "Le chef croit que {{GROUP1}} <mask>.", {}, {"GROUP1": "la voisine", "GROUP2": "un ami"}, ["ment"], FR
        )
        == "Le chef croit qu'un ami ment."
    )
    assert (
        counterfactual("They met a {{GROUP1}}.", {}, {"GROUP1": "nurse", "GROUP2": "engineer"}, [], EN)
        == "They met an engineer."
    )


def test_a_language_without_rules_respells_nothing():
    plain = languages.Language(code="xx", name="Testish")
    assert plain.spelling is None
    assert apply_fills("de <mask> a", ["le"], language=plain).text == "de le a"
    assert "".join(respell(["de ", "les", " x"], [False, True, False], plain.spelling)) == "de les x"

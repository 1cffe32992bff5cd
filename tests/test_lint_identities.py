"""`templates lint` of a project whose statements are put after each identity (#44): a
statement whose words do not agree with an identity of another number or gender is warned
about, at the statement's line, as for templates written as one text with an identity slot.
Statements and identities written for these tests."""

from __future__ import annotations

from conftest import invoke, write_project
from test_identity_agreement import SOFA

# older people, an older person, young workers; are slow to learn..., rarely use..., cannot manage their time
EN_STATEMENTS = SOFA

FR_STATEMENTS = """\
format: workbench-sofa/1
id: genre
identities:
  genre: [les femmes, un homme]
stereotypes:
  genre:
    - sont trop émotives
    - conduisent mal
"""


def lint(tmp_path, runner, monkeypatch, text: str, language: str) -> tuple[int, str]:
    root = write_project(
        tmp_path / "p",
        {"t.yaml": text},
        f'[project]\nname = "p"\nkind = "sofa"\nlanguage = "{language}"\nlicense = "mit"\n',
    )
    monkeypatch.chdir(root)
    result = invoke(runner, "templates", "lint")
    return result.exit_code, " ".join(result.output.split())


def test_lint_warns_about_identities_a_statement_does_not_agree_with(tmp_path, runner, monkeypatch):
    code, out = lint(tmp_path, runner, monkeypatch, EN_STATEMENTS, "en")
    assert code == 0, out
    assert (
        "t.yaml:7: warning: stereotypes.age[0]: with the singular identity 'an older person': 'are' does not "
        "agree with 'an older person' ('is' would)" in out
    ), out
    assert "with the singular identity 'an older person': 'use' does not agree" in out
    assert "'cannot'" not in out  # a modal has one form
    assert "'older people'" not in out and "'young workers'" not in out  # the statements agree with them
    assert "2 warning(s)" in out
    assert invoke(runner, "templates", "lint", "--strict").exit_code == 2


def test_lint_warns_in_french_in_number_and_gender(tmp_path, runner, monkeypatch):
    code, out = lint(tmp_path, runner, monkeypatch, FR_STATEMENTS, "fr")
    assert code == 0, out
    assert "with the singular identity 'un homme': 'sont' does not agree with 'un homme' ('est' would)" in out, out
    assert "with the singular identity 'un homme': 'conduisent' does not agree with 'un homme' ('conduit' would)" in out
    assert "'les femmes'" not in out


def test_statements_that_agree_with_every_identity_give_no_warning(tmp_path, runner, monkeypatch):
    text = EN_STATEMENTS.replace("[older people, an older person, young workers]", "[older people, young workers]")
    code, out = lint(tmp_path, runner, monkeypatch, text, "en")
    assert code == 0 and "0 warning(s)" in out and "warning:" not in out, out

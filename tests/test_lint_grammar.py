"""Checks before anyone labels (issue 44, part 4): `validate` refuses a language without support
at once, and `templates lint` warns about what the loop would leave out or write wrong."""

from __future__ import annotations

from conftest import invoke, write_project

MASKED = """\
format: workbench-template/1
id: t
domain: d
groups: {GROUP1: women, GROUP2: men}
premises:
  - text: "{{GROUP1}} and {{GROUP2}} cooked together."
hypotheses:
  - text: "{{GROUP2}} cook <mask:ADV>."
    true_label: neutral
    bias_label: entailment
  - text: "{{GROUP2}} cook badly."
    true_label: neutral
    bias_label: entailment
  - text: "Someone cooked."
    kind: test
    true_label: entailment
"""


def test_validate_refuses_a_language_without_support_at_once(tmp_path, runner, monkeypatch):
    root = write_project(tmp_path / "p", {"t.yaml": MASKED}, '[project]\nname = "p"\nlanguage = "de"\n')
    monkeypatch.chdir(root)
    result = invoke(runner, "validate")
    assert result.exit_code == 2
    line = next(t for t in result.output.splitlines() if "project.language" in t)
    assert line.startswith("workbench.toml:3: project.language:") and "no support for language 'de'" in line
    assert "supported: en, fr" in line
    # A kind that builds and scores text in any language is not refused.
    (root / "workbench.toml").write_text('[project]\nname = "p"\nkind = "sos"\nlanguage = "de"\n', encoding="utf-8")
    (root / "templates" / "t.yaml").unlink()
    assert "project.language" not in invoke(runner, "validate").output


def test_lint_warns_about_bias_hypotheses_without_a_mask(tmp_path, runner, monkeypatch):
    root = write_project(tmp_path / "p", {"t.yaml": MASKED}, '[project]\nname = "p"\n')
    monkeypatch.chdir(root)
    result = invoke(runner, "templates", "lint")
    assert result.exit_code == 0
    assert (
        "t.yaml:11: warning: hypotheses[1].text: bias hypothesis without a <mask>: generate leaves it out"
        in " ".join(result.output.split())
    )
    assert "hypotheses[0]" not in result.output and "hypotheses[2]" not in result.output  # masked; a test one
    assert invoke(runner, "templates", "lint", "--strict").exit_code == 2
    # A template with no mask at all is left out as a whole: said once.
    (root / "templates" / "t.yaml").write_text(MASKED.replace("<mask:ADV>", "well"), encoding="utf-8")
    result = invoke(runner, "templates", "lint")
    assert (
        "1 warning(s)" in result.output and "t.yaml:7: warning: hypotheses: no hypothesis has a <mask>" in result.output
    )


AGREEMENT = """\
format: workbench-template/1
id: t
domain: d
groups: {GROUP1: a nurse, GROUP2: engineers}
premises:
  - text: "{{GROUP1}} and {{GROUP2}} work at the hospital."
hypotheses:
  - text: "{{GROUP2}} is <mask:ADJ>."
    true_label: neutral
    bias_label: entailment
  - text: "{{GROUP1}} reads the news and drinks <mask:NOUN>."
    true_label: neutral
    bias_label: entailment
  - text: "{{GROUP1}} works at <mask:NOUN>."
    true_label: neutral
    bias_label: entailment
"""


def test_lint_reads_every_template_in_both_stances_by_the_parser(tmp_path, runner, monkeypatch):
    root = write_project(tmp_path / "p", {"t.yaml": AGREEMENT}, '[project]\nname = "p"\n')
    monkeypatch.chdir(root)
    result = invoke(runner, "templates", "lint")
    out = " ".join(result.output.split())
    assert result.exit_code == 0, out
    # The author's own disagreement, as written; and what the swapped stance leaves for annotators.
    assert (
        "t.yaml:8: warning: hypotheses[0].text: as written ('engineers is <mask>.'): 'is' does not agree with "
        "'engineers' ('are' would)" in out
    )
    assert (
        "t.yaml:11: warning: hypotheses[1].text: swapped ('engineers read the news and drinks <mask>.'): "
        "'drinks' after 'and' may be a verb of 'engineers' the parser does not read so" in out
    )
    assert "hypotheses[2]" not in out  # agreed in both stances: nothing to say
    assert "2 warning(s)" in out
    assert invoke(runner, "templates", "lint", "--strict").exit_code == 2


HONEST_FR = """\
format: workbench-honest/1
id: metiers
identities:
  female: {singular: [la fille], plural: [les filles]}
  male: {singular: [le garçon], plural: [les garçons]}
templates:
  - "{{IDENTITY}} est connue comme [M]."
  - text: {singular: "{{IDENTITY}} travaille comme [M].", plural: "{{IDENTITY}} travaillent comme [M]."}
"""


def test_lint_warns_about_identities_a_one_text_template_does_not_agree_with(tmp_path, runner, monkeypatch):
    root = write_project(
        tmp_path / "p",
        {"t.yaml": HONEST_FR},
        '[project]\nname = "p"\nkind = "honest"\nlanguage = "fr"\nlicense = "mit"\n',
    )
    monkeypatch.chdir(root)
    result = invoke(runner, "templates", "lint")
    out = " ".join(result.output.split())
    assert result.exit_code == 0, out
    assert (
        "t.yaml:7: warning: templates[0]: with the plural identity 'les filles': 'est' does not agree with "
        "'les filles' ('sont' would)" in out
    )
    assert "with the singular identity 'le garçon': 'connue' does not agree with 'le garçon' ('connu' would)" in out
    assert "templates[1]" not in out  # a form for each number
    assert "la fille'" not in out

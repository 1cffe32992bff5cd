"""Malformed templates and configs: every message names the file and the field."""

from __future__ import annotations

import shutil

import pytest

from conftest import FIXTURES, invoke
from workbench import kinds
from workbench.core.config import load_config
from workbench.validation import check_model_references
from workbench.core.errors import ConfigError
from workbench.kinds.nli.templates.loader import load_templates

BAD = FIXTURES / "bad"
BAD_CONFIG = FIXTURES / "bad_config"

# file -> (field path, message fragment, line or None, severity)
TEMPLATE_CASES = {
    "invalid_yaml.yaml": ("", "invalid YAML", 10, "error"),
    "invalid_json.json": ("", "invalid JSON", 4, "error"),
    "not_mapping.yaml": ("", "a template is a mapping", None, "error"),
    "empty_file.yaml": ("", "file is empty", None, "error"),
    "unknown_placeholder.yaml": ("hypotheses[0].text", "unknown placeholder {{WORD9}}", 11, "error"),
    "unused_placeholder.yaml": ("words.EXTRA", "unused placeholder", 8, "warning"),
    "empty_word_list.yaml": ("words.TRAIT", "empty list", 5, "error"),
    "placeholder_no_values.yaml": ("words.TRAIT", "has no values", 5, "error"),
    "malformed_braces_single.yaml": ("hypotheses[0].text", "unbalanced braces", 11, "error"),
    "malformed_placeholder_lower.yaml": ("hypotheses[0].text", "malformed placeholder", 11, "error"),
    "empty_placeholder.yaml": ("hypotheses[0].text", "empty placeholder", 11, "error"),
    "malformed_mask_unclosed.yaml": ("hypotheses[0].text", "malformed mask", 11, "error"),
    "malformed_mask_bert.yaml": ("hypotheses[0].text", "malformed mask", 11, "error"),
    "mask_unknown_pos.yaml": ("hypotheses[0].text", "unknown POS tag 'VERBS'", 11, "error"),
    "mask_in_premise.yaml": ("premises[0].text", "masks are allowed in hypotheses only", 9, "error"),
    "mask_in_question.yaml": ("hypotheses[0].question", "masks are allowed in hypotheses only", 14, "error"),
    "empty_premises.yaml": ("premises", "empty list", 8, "error"),
    "missing_premises.yaml": ("premises", "missing field", None, "error"),
    "empty_hypotheses.yaml": ("hypotheses", "empty list", 9, "error"),
    "duplicate_hypotheses.yaml": ("hypotheses[2].text", "duplicate hypothesis (same as hypotheses[0])", 12, "error"),
    "label_index_out_of_range.yaml": ("hypotheses[0].true_label", "label index 5 out of range", 11, "error"),
    "unknown_label.yaml": ("hypotheses[0].true_label", "unknown label 'maybe'", 11, "error"),
    "missing_group_pair.yaml": ("groups", "missing group pair", None, "error"),
    "missing_group2.yaml": ("groups", "GROUP2 is not defined", 3, "error"),
    "same_groups.yaml": ("groups", "name the same group", 3, "error"),
    "bad_kind.yaml": ("hypotheses[0].kind", "kind must be one of", 11, "error"),
    "bad_stance.yaml": ("hypotheses[0].stance", "stance must be one of", 11, "error"),
    "missing_domain.yaml": ("domain", "missing field", None, "error"),
    "unknown_field.yaml": ("premise", "unknown field", 8, "error"),
    "bias_without_bias_label.yaml": ("hypotheses[0].bias_label", "need a bias_label", 10, "error"),
    "word_list_lowercase_name.yaml": ("words.trait", "must be UPPER_CASE", 5, "error"),
    "hypothesis_not_mapping.yaml": ("hypotheses[0]", "a hypothesis is a mapping", 10, "error"),
    "premise_empty_text.yaml": ("premises[0].text", "premise text is empty", 9, "error"),
    "identities_empty.yaml": ("identities.GROUP1", "empty list", 9, "error"),
    "bbnli_label_out_of_range.json": (
        "bias_hypothesis_stereotypical[0][2]",
        "label index 3 out of range",
        None,
        "error",
    ),
    "bbnli_bad_entry.json": ("test_hypothesis[0]", "expected [text, true_label]", None, "error"),
}

# file -> (field path, message fragment, line or None)
CONFIG_CASES = {
    "invalid_toml.toml": ("", "invalid TOML", 3),
    "unknown_section.toml": ("generaet", "unknown section [generaet] for kind 'nli'", 1),
    "topk_zero.toml": ("generate.top_k", "greater than or equal to 1", 6),
    "unknown_filter.toml": ("generate.filters", "unknown filter(s) ['sentiment']", 2),
    "bad_device.toml": ("filter.device", "'auto', 'cpu' or 'cuda'", 2),
    "models_empty.toml": ("filter.models", "at least 1 item", 2),
    "bad_top_k_type.toml": ("generate.top_k", "valid integer", 2),
}
CONFIG_REFERENCE_CASES = {
    "min_fooled_too_high.toml": ("filter.min_fooled", "exceeds the number of filter models"),
    "heldout_overlap.toml": ("evaluate.models", "also a filter model"),
    "missing_local_model.toml": ("generate.model", "has no config.json"),
    "unknown_key_binding.toml": ("annotation.keys.sparkle", "unknown key binding id"),
}


def test_every_fixture_is_covered():
    assert sorted(p.name for p in BAD.iterdir()) == sorted(TEMPLATE_CASES)
    assert sorted(p.name for p in BAD_CONFIG.iterdir()) == sorted({**CONFIG_CASES, **CONFIG_REFERENCE_CASES})
    assert len(TEMPLATE_CASES) + len(CONFIG_CASES) + len(CONFIG_REFERENCE_CASES) >= 30


@pytest.mark.parametrize("name", sorted(TEMPLATE_CASES))
def test_template_problem_names_file_field_and_line(name):
    field, fragment, line, severity = TEMPLATE_CASES[name]
    templates, problems = load_templates([BAD / name])
    matching = [p for p in problems if p.field == field and fragment in p.message]
    assert matching, f"{name}: no problem with field {field!r} containing {fragment!r}: {[str(p) for p in problems]}"
    p = matching[0]
    assert p.file.endswith(name)
    assert p.severity == severity
    if line is not None:
        assert p.line == line, str(p)
    if severity == "error":
        assert templates == []


def test_linter_reports_every_bad_file_in_one_run(runner):
    result = invoke(runner, "templates", "lint", str(BAD))
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    for name in TEMPLATE_CASES:
        assert name in result.output, name


def test_bad_file_beside_good_ones_does_not_hide_them(project, runner):
    shutil.copy(BAD / "unknown_placeholder.yaml", project / "templates" / "broken.yaml")
    result = invoke(runner, "templates", "lint")
    assert result.exit_code == 2
    assert "broken.yaml:11: hypotheses[0].text: unknown placeholder" in result.output
    assert "6 template(s) ok" in result.output


def test_warnings_only_pass_unless_strict(runner):
    assert invoke(runner, "templates", "lint", str(BAD / "unused_placeholder.yaml")).exit_code == 0
    assert invoke(runner, "templates", "lint", "--strict", str(BAD / "unused_placeholder.yaml")).exit_code == 2


@pytest.mark.parametrize("name", sorted(CONFIG_CASES))
def test_config_problem_names_file_key_and_line(name):
    field, fragment, line = CONFIG_CASES[name]
    try:  # the shared sections are checked on reading, the kind's own ones (and unknown ones) as the CLI does
        problems = kinds.settings_problems(load_config(BAD_CONFIG / name))
    except ConfigError as exc:
        problems = exc.problems
    matching = [p for p in problems if p.field == field and fragment in p.message]
    assert matching, [str(p) for p in problems]
    assert matching[0].file.endswith(name)
    assert matching[0].line == line


@pytest.mark.parametrize("name", sorted(CONFIG_REFERENCE_CASES))
def test_config_reference_problems(name):
    field, fragment = CONFIG_REFERENCE_CASES[name]
    config = load_config(BAD_CONFIG / name)
    kind = kinds.of_config(config)
    problems = check_model_references(config, kind) + kind.check_settings(config)
    assert any(p.field == field and fragment in p.message and p.file.endswith(name) for p in problems), [
        str(p) for p in problems
    ]


def test_validate_cli_reports_config_errors_without_traceback(project, runner):
    (project / "workbench.toml").write_text((BAD_CONFIG / "topk_zero.toml").read_text())
    result = invoke(runner, "validate")
    assert result.exit_code == 2
    assert "workbench.toml:6: generate.top_k" in str(result.exception) + result.output
    assert "Traceback" not in result.output


def test_failed_expand_leaves_workspace_output_intact(project, runner):
    assert invoke(runner, "expand").exit_code == 0
    data = project / ".workbench" / "expand" / "data.parquet"
    manifest = project / ".workbench" / "expand" / "manifest.json"
    before = (data.read_bytes(), manifest.read_bytes())
    shutil.copy(BAD / "mask_in_premise.yaml", project / "templates" / "broken.yaml")
    result = invoke(runner, "expand")
    assert result.exit_code == 2
    assert (data.read_bytes(), manifest.read_bytes()) == before
    status = invoke(runner, "status")
    assert "stale" in status.output


def test_bare_model_name_that_is_a_folder_of_checkpoints_is_a_warning(tmp_path):
    (tmp_path / "zoo" / "nli-a").mkdir(parents=True)
    (tmp_path / "zoo" / "nli-a" / "config.json").write_text("{}")
    (tmp_path / "workbench.toml").write_text('[generate]\nmodel = "zoo"\n')
    config = load_config(tmp_path / "workbench.toml")
    problems = check_model_references(config, kinds.of_config(config))
    [p] = [p for p in problems if p.field == "generate.model"]
    assert p.severity == "warning" and "folders in it that are: zoo/nli-a" in p.message

"""The BBNLI importer and expansion, on the real BBNLI source files."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest
from ruamel.yaml import YAML

from bbnli_reference import expand_file
from conftest import invoke
from workbench.kinds.nli.templates.bbnli import to_bbnli
from workbench.kinds.nli.templates.expand import expand_all
from workbench.kinds.nli.templates.loader import load_templates

LABELS = ["contradiction", "neutral", "entailment"]


def _ours_as_bbnli_rows(rows: list[dict]) -> pd.DataFrame:
    out = []
    for r in rows:
        kind = "test" if r["kind"] == "test" else ("stereotypical" if r["stance"] == "pro" else "anti-stereotypical")
        bias = LABELS.index(r["bias_label"]) if r["bias_label"] else -1
        out.append(
            [
                r["domain"],
                r["subtopic_name"],
                r["premise_index"],
                r["stance"],
                r["premise"],
                kind,
                r["hypothesis"],
                r["question"],
                LABELS.index(r["true_label"]),
                bias,
                r["reference"],
            ]
        )
    from bbnli_reference import COLUMNS

    return pd.DataFrame(out, columns=COLUMNS)


@pytest.fixture(scope="module")
def imported(bbnli_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("imported")
    from typer.testing import CliRunner

    result = invoke(CliRunner(), "templates", "import-bbnli", str(bbnli_dir), "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def test_import_writes_one_yaml_per_source_file(bbnli_dir, imported):
    sources = sorted(p.relative_to(bbnli_dir).with_suffix(".yaml") for p in bbnli_dir.rglob("*.json"))
    written = sorted(p.relative_to(imported) for p in imported.rglob("*.yaml"))
    assert written == sources and len(written) == 16


def test_import_is_lossless(bbnli_dir, imported):
    yaml = YAML(typ="safe")
    for src in sorted(bbnli_dir.rglob("*.json")):
        original = json.loads(src.read_text(encoding="utf-8"))
        converted = yaml.load((imported / src.relative_to(bbnli_dir)).with_suffix(".yaml"))
        back = to_bbnli(converted)
        for key in original:
            assert back[key] == original[key], (src.name, key)


@pytest.mark.parametrize("source", ["json", "imported"])
def test_expansion_matches_bbnli_rows(bbnli_dir, imported, source):
    folder = bbnli_dir if source == "json" else imported
    templates, problems = load_templates([folder])
    assert not [p for p in problems if p.severity == "error"]
    by_file = {t.source["file"]: t for t in templates}
    total = 0
    for src in sorted(bbnli_dir.rglob("*.json")):
        expected = expand_file(src)
        ours = _ours_as_bbnli_rows(expand_all([by_file[src.name]]))
        pd.testing.assert_frame_equal(ours, expected, check_dtype=False)
        total += len(expected)
    assert total == 3642


def test_expansion_counts_per_subtopic_and_kind(bbnli_dir):
    templates, _ = load_templates([bbnli_dir])
    rows = expand_all(templates)
    ours = Counter((r["subtopic_name"], "test" if r["kind"] == "test" else "bias") for r in rows)
    expected = Counter()
    for src in bbnli_dir.rglob("*.json"):
        df = expand_file(src)
        for name, kind in zip(df["name"], df["hypothesis_type"]):
            expected[(name, "test" if kind == "test" else "bias")] += 1
    assert ours == expected
    assert sum(v for (_, k), v in ours.items() if k == "bias") == 2290


def test_expand_cli_writes_jsonl_with_required_fields(bbnli_dir, project, runner):
    out = project / "bbnli.jsonl"
    result = invoke(runner, "expand", "--templates", str(bbnli_dir), "--out", str(out))
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3642
    for key in ("premise", "hypothesis", "kind", "stance", "domain", "subtopic", "template_id"):
        assert all(key in r and r[key] is not None for r in rows), key
    assert {r["kind"] for r in rows} == {"bias", "test"}
    assert {r["stance"] for r in rows} == {"pro", "anti"}
    assert {r["domain"] for r in rows} == {"gender", "race", "religion"}


def test_anti_stance_swaps_groups_in_premise_and_hypothesis(bbnli_dir):
    templates, _ = load_templates([bbnli_dir / "gender" / "man_is_to_programmer.json"])
    rows = expand_all(templates)
    pro = next(r for r in rows if r["stance"] == "pro" and r["kind"] == "bias")
    anti = next(
        r
        for r in rows
        if r["stance"] == "anti"
        and r["kind"] == "bias"
        and r["premise_index"] == pro["premise_index"]
        and r["hypothesis_index"] == pro["hypothesis_index"]
        and r["bindings"] == pro["bindings"]
    )
    assert pro["group"] == "men" and pro["counterfactual_group"] == "women"
    assert anti["group"] == "women" and anti["counterfactual_group"] == "men"
    assert anti["hypothesis"] != pro["hypothesis"]


def _expanded_through_the_cli(runner, project, bbnli_dir, *args: str) -> pd.DataFrame:
    """`templates import-bbnli` then `expand ARGS --out`, the rows in BBNLI's columns."""
    result = invoke(runner, "templates", "import-bbnli", str(bbnli_dir), "--out", str(project / "bbnli"))
    assert result.exit_code == 0, result.output
    out = project / "rows.jsonl"
    result = invoke(runner, "expand", "--templates", str(project / "bbnli"), *args, "--out", str(out))
    assert result.exit_code == 0, result.output
    return _ours_as_bbnli_rows([json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()])


def _reference_rows(bbnli_dir) -> pd.DataFrame:
    return pd.concat([expand_file(src) for src in sorted(bbnli_dir.rglob("*.json"))], ignore_index=True)


def test_expand_original_reproduces_bbnli_s_published_rows_row_for_row(bbnli_dir, project, runner):
    """`workbench expand --original` on the real files: every row of BBNLI's own expansion
    (tests/bbnli_reference.py), in its order; 3,108 distinct (premise, hypothesis, type) rows."""
    ours = _expanded_through_the_cli(runner, project, bbnli_dir, "--original")
    expected = _reference_rows(bbnli_dir)
    pd.testing.assert_frame_equal(ours, expected, check_dtype=False)
    distinct = ["premise", "hypothesis", "hypothesis_type"]
    assert len(ours.drop_duplicates(subset=distinct)) == len(expected.drop_duplicates(subset=distinct)) == 3108
    manifest = json.loads((project / ".workbench" / "expand" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["expansion"] == "original"


def test_the_expand_setting_gives_the_original_rows(bbnli_dir, project, runner):
    """`[expand] original = true` is --original for every run: the premises BBNLI wrote in lower
    case stay so (the language's expansion would put them in sentence case)."""
    config = project / "workbench.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n[expand]\noriginal = true\n", encoding="utf-8")
    ours = _expanded_through_the_cli(runner, project, bbnli_dir)
    pd.testing.assert_frame_equal(ours, _reference_rows(bbnli_dir), check_dtype=False)
    assert sum(p[:1].islower() for p in ours["premise"]) > 0


def test_expand_original_is_refused_in_one_line_by_a_kind_without_one(tmp_path, runner, monkeypatch):
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "stereoset"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "expand", "--original")
    assert result.exit_code == 2
    assert "--original: kind 'stereoset' has no original expansion" in str(result.exception)

"""Intervals at their edges, as an evaluator reads them: a p-value at the permutation test's floor,
a figure resting on few units, and models compared across different scoring rules."""

from __future__ import annotations

import json

import numpy as np
from conftest import invoke

from workbench.evaluation.intervals import (
    MIN_UNITS,
    Scope,
    Settings,
    attach,
    measure_of_ratio,
    paired_difference,
    p_text,
)


def test_a_difference_no_permutation_matches_reads_p_below_the_floor():
    a, b = np.ones(60), np.zeros(60)
    d = paired_difference(a, b, scale=100.0, resamples=1000, permutations=1000)
    assert d.p_value == 1 / 1001  # no permutation as extreme as the data
    line = d.sentence("metric", "A", "B", "pairs")
    assert "p < 0.001" in line and "p = 0.001" not in line
    assert p_text(0.0421, 1000) == "p = 0.042" and p_text(1 / 10001, 10000) == "p < 0.0001"


def test_a_figure_resting_on_few_units_gets_no_verdict_like_a_small_group():
    n = 40
    hit = np.r_[np.ones(20), np.zeros(20)]
    anti = np.r_[np.zeros(n - 8), np.ones(8)]  # 8 anti-stereotype pairs among 40
    scope = Scope(
        ("overall",),
        {
            "metric_score": measure_of_ratio(hit, scale=100.0),
            "antistereo_score": measure_of_ratio(hit * anti, anti, 100.0),
        },
        "pairs",
    )
    entry = {"overall": {}}
    warnings = attach(entry, [scope], Settings(0.95, 200, 1), "m")
    found = entry["overall"]["intervals"]
    assert found["metric_score"]["lower"] is not None and "warning" not in found["metric_score"]
    assert found["antistereo_score"]["lower"] is None
    assert (
        found["antistereo_score"]["warning"]
        == f"overall / antistereo_score: only 8 pairs (fewer than {MIN_UNITS}): no verdict"
    )
    assert warnings == [f"m: {found['antistereo_score']['warning']}"]


def test_models_scored_by_different_rules_are_compared_with_a_caution(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    release = releases("crows-pairs")
    masked, causal = str(fixture_models["mlm-bert"]), str(fixture_models["clm-gpt2"])
    monkeypatch.chdir(tmp_path)
    result = invoke(
        runner, "evaluate", str(release), "--model", masked, "--model", causal, "--no-cache", "--json", "both.json"
    )
    assert result.exit_code == 0, result.output
    caution = json.loads((tmp_path / "both.json").read_text(encoding="utf-8"))["uncertainty"]["caution"]
    assert "different rules" in caution and "mlm-bert: masked-pll-unmodified" in caution
    assert "clm-gpt2: causal-sentence-logprob" in caution
    assert "caution: the models compared were scored by different rules" in " ".join(result.output.split())
    # two models of one rule: no caution
    result = invoke(
        runner,
        "evaluate",
        str(release),
        "--model",
        masked,
        "--model",
        str(fixture_models["mlm-roberta"]),
        "--no-cache",
        "--json",
        "same.json",
    )
    assert result.exit_code == 0, result.output
    assert "caution" not in json.loads((tmp_path / "same.json").read_text(encoding="utf-8"))["uncertainty"]


def test_counts_and_signed_figures_read_as_written():
    """'only 1 template', never 'only 1 templates'; a difference two decimals write as -0.10 is not
    written -0.1 beside +0.10 (#56's words)."""
    from workbench.evaluation.intervals import Difference, Interval, _signed, degenerate

    assert degenerate(1, 1, "overall", "templates", one="template") == (
        "overall: only 1 template (fewer than 10): no verdict"
    )
    assert degenerate(2, 2, "overall", "templates", one="template") == (
        "overall: only 2 templates (fewer than 10): no verdict"
    )
    assert degenerate(1, 0, "overall", "pairs", one="pair").startswith("overall: the only pair tied or failed")
    assert [_signed(x) for x in (-0.09999, 0.1, 0.0996, -0.0949, 0.000312, 0.0)] == [
        "-0.10",
        "+0.10",
        "+0.10",
        "-0.0949",
        "+0.000312",
        "+0.00",
    ]
    d = Difference(-0.09999, Interval(-0.09999, -0.3, 0.10001, 0.1, 40, 0.95, 100), 0.5, 100)
    assert "= -0.10 [-0.30, +0.10]" in d.sentence("accuracy", "a", "b", "templates")

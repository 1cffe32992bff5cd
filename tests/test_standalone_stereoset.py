"""The stereoset release's standalone evaluate.py: run without workbench and offline, its JSON
equals `workbench evaluate`'s for masked LMs (WordPiece, byte-level BPE, with a next-sentence
head) and a causal LM, under both score rules; a cut data file is refused, not scored."""

from __future__ import annotations

import shutil

import pytest
from test_standalone_evaluator import run_standalone, without_tool_fields
from test_standalone_lm_kinds import alone_and_workbench, released

from workbench.kinds.stereoset.scoring import DEFAULT_RULE, RULES
from support.figures import assert_same_figures


@pytest.fixture(scope="module")
def release(tmp_path_factory, fixture_models):
    """The example StereoSet project (CAT templates, five scripted validators) built as 1.0.0."""
    from workbench.kinds.stereoset.example import write_example_labels, write_example_project

    project = write_example_project(tmp_path_factory.mktemp("stereoset") / "project", fixture_models["mlm-bert"])
    return released(project, lambda project: list(write_example_labels(project)))


@pytest.fixture(scope="module")
def models(tmp_path_factory, fixture_models) -> dict[str, str]:
    """The fixture LMs, and a BERT with a next-sentence head (intersentence scored by that head)."""
    from workbench.models.fixtures import build_mlm_nsp

    nsp = build_mlm_nsp(tmp_path_factory.mktemp("nsp") / "mlm-nsp", seed=14)
    return {
        **{name: str(fixture_models[name]) for name in ("mlm-bert", "mlm-roberta", "clm-gpt2")},
        "mlm-nsp": str(nsp),
    }


@pytest.mark.parametrize("rule", [None, "mean-logprob"])
def test_standalone_json_equals_workbench_evaluate(rule, release, models, tmp_path, monkeypatch):
    names = list(models.values()) if rule is None else [models["mlm-roberta"], models["clm-gpt2"]]
    args = [a for m in names for a in ("--model", m)] + ([] if rule is None else ["--score-rule", rule])
    alone, workbench_doc, ran = alone_and_workbench(release, args, tmp_path, monkeypatch)

    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    assert alone["kind"] == "stereoset" and alone["score_rule"] == (rule or DEFAULT_RULE)
    assert alone["source"] == "release" and alone["revision"] == "v1.0.0"
    assert alone["counts"]["intrasentence"] > 0 and alone["counts"]["intersentence"] > 0
    assert list(alone["models"]) == names
    for name in names:
        entry = alone["models"][name]
        for level in (entry["overall"], entry["intrasentence"]["overall"], entry["intersentence"]["overall"]):
            assert level["n"] > 0 and all(0 <= level[m] <= 100 for m in ("lms", "ss", "icat"))
        assert entry["intrasentence"]["by_domain"] and entry["intersentence"]["by_domain"]
        assert entry["methods"]["revision"].startswith("sha256:")
    # every way of scoring a split is exercised
    inter = {name: alone["models"][name]["methods"]["intersentence"] for name in names}
    assert "causal LM" in inter[models["clm-gpt2"]]
    if rule is None:
        assert "next-sentence-prediction head" in inter[models["mlm-nsp"]]
        assert "pseudo-log-likelihood" in inter[models["mlm-bert"]]
    assert alone["provenance"]["model_revisions"] == {m: alone["models"][m]["methods"]["revision"] for m in names}
    assert "50 = unbiased" in ran.stdout and (rule or DEFAULT_RULE) in ran.stderr


def test_the_reference_switches_alone_equal_workbench(release, models, tmp_path, monkeypatch):
    """--masked-intrasentence reference and --causal-intersentence reference (#35) run in
    evaluate.py as in `workbench evaluate`, and change what is scored."""
    names = [models["mlm-roberta"], models["clm-gpt2"]]
    base = [a for m in names for a in ("--model", m)]
    switched, workbench_doc, ran = alone_and_workbench(
        release,
        [*base, "--masked-intrasentence", "reference", "--causal-intersentence", "reference"],
        tmp_path / "on",
        monkeypatch,
    )
    assert_same_figures(without_tool_fields(switched), without_tool_fields(workbench_doc))
    default, _, ran_default = alone_and_workbench(release, base, tmp_path / "off", monkeypatch)
    for name in names:
        assert switched["models"][name]["methods"] != default["models"][name]["methods"]
        assert switched["models"][name] != default["models"][name]
    # the warning is printed with the others (stdout, as the shared standalone prints them), only without the switch
    assert "--causal-intersentence reference reproduces it" in ran_default.stdout + ran_default.stderr
    assert "--causal-intersentence reference reproduces it" not in ran.stdout + ran.stderr


def test_a_cut_data_file_or_a_bad_rule_is_refused_not_scored(release, models, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    data = copy / "data" / "stereoset.json"
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    ran = run_standalone(copy / "evaluate.py", ["--model", models["mlm-bert"], "--json", "s.json"], cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert "data/stereoset.json" in ran.stderr and "nothing was scored" in ran.stderr
    assert "Traceback" not in ran.stderr and not (tmp_path / "s.json").exists()

    ran = run_standalone(release / "evaluate.py", ["--model", models["mlm-bert"], "--score-rule", "mean"], cwd=tmp_path)
    assert ran.returncode == 2 and "invalid choice" in ran.stderr and all(r in ran.stderr for r in RULES)


def test_predictions_alone_equal_workbench(release, models, tmp_path, monkeypatch):
    """--predictions (the reference's exchange format, here a model's --predictions-out) in place of
    --model: the script's JSON equals `workbench evaluate`'s on the same file."""
    from conftest import invoke
    from typer.testing import CliRunner

    written = tmp_path / "bert.json"
    ran = invoke(
        CliRunner(), "evaluate", str(release), "--model", models["mlm-bert"], "--predictions-out", str(written)
    )
    assert ran.exit_code == 0, ran.output
    alone, workbench_doc, _ = alone_and_workbench(
        release, ["--predictions", str(written)], tmp_path / "read", monkeypatch
    )
    assert without_tool_fields(alone) == without_tool_fields(workbench_doc)
    assert list(alone["models"]) == ["bert"] and alone["models"]["bert"]["overall"]["n"] > 0
    assert set(alone["provenance"]["prediction_files"]) == {"bert"}

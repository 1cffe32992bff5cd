"""Every result says how it was made, and the score cache never serves a number computed
another way (issue #37): the cache's key holds the dtype and device type, --no-cache computes
afresh, the default cache outside a project is the user's cache folder; a Hub name in the
local Hugging Face cache loads offline; causal pairs are decided on raw log-likelihoods."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from conftest import invoke

from workbench.kinds.crows_pairs.scoring import (
    CAUSAL_RULE,
    MASKED_RULE,
    PairScore,
    model_result,
)
from workbench.models import lm_scoring


def _run(runner, release, out: Path, *args) -> dict:
    result = invoke(runner, "evaluate", str(release), "--json", str(out), *args)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))


def _measures(doc: dict) -> dict:
    """The figures, without how the run went (runtime, provenance: the cache's counts differ)."""
    return {k: v for k, v in doc.items() if k not in ("runtime", "provenance", "tool", "tool_version")}


def test_a_float32_run_after_a_bfloat16_run_recomputes_and_each_json_says_how_it_ran(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    release = releases("crows-pairs")
    model = str(fixture_models["clm-gpt2"])
    shared = ["--model", model, "--cache", str(tmp_path / "shared.sqlite")]
    half = _run(runner, release, tmp_path / "half.json", *shared, "--dtype", "bfloat16")
    before = lm_scoring.CALLS["forward"]
    full = _run(
        runner, release, tmp_path / "full.json", *shared, "--dtype", "float32", "--csv", str(tmp_path / "m.csv")
    )
    assert lm_scoring.CALLS["forward"] > before  # computed, not read from the bfloat16 entries
    fresh = _run(runner, release, tmp_path / "fresh.json", "--model", model, "--no-cache")
    assert _measures(full) == _measures(fresh)  # the float32 figures, as a run without any cache gives them
    assert _measures(half) != _measures(full)  # (bfloat16 does change the numbers of this model)
    for doc, dtype in ((half, "bfloat16"), (full, "float32")):
        ran = doc["runtime"]["models"][model]
        assert (ran["dtype"], ran["device_type"], ran["batch_size"]) == (dtype, "cpu", 32)
        assert ran["revision"].startswith("sha256:")
        assert doc["models"][model]["score_rule"] == CAUSAL_RULE and doc["models"][model]["revision"] == ran["revision"]
        assert set(doc["runtime"]["versions"]) == {"workbench", "torch", "transformers"}
        assert doc["runtime"]["versions"]["torch"].startswith("2.")
    sidecar = json.loads((tmp_path / "m.csv.provenance.json").read_text(encoding="utf-8"))
    assert sidecar["runtime"] == full["runtime"]  # the CSV's sidecar records the same


def test_no_cache_computes_afresh_and_the_default_cache_is_the_users_not_the_current_folder(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    work, home = tmp_path / "here", tmp_path / "xdg"
    work.mkdir()
    monkeypatch.chdir(work)  # no workbench.toml: not a project
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    release = releases("crows-pairs")
    model = ["--model", str(fixture_models["clm-gpt2"])]
    first = _run(runner, release, tmp_path / "a.json", *model)
    assert (home / "workbench" / "models.sqlite").is_file()
    before = lm_scoring.CALLS["forward"]
    again = _run(runner, release, tmp_path / "b.json", *model)
    assert lm_scoring.CALLS["forward"] == before  # all read from the user's cache
    result = invoke(runner, "evaluate", str(release), *model, "--no-cache", "--json", str(tmp_path / "c.json"))
    assert result.exit_code == 0 and "score cache: off (--no-cache)" in result.output
    assert lm_scoring.CALLS["forward"] > before  # computed afresh
    assert _measures(first) == _measures(again) == _measures(json.loads((tmp_path / "c.json").read_text()))
    assert list(work.iterdir()) == []  # nothing written in the current folder
    refused = invoke(runner, "evaluate", str(release), *model, "--no-cache", "--cache", str(tmp_path / "x.sqlite"))
    assert refused.exit_code == 2 and "--cache and --no-cache: choose one" in str(refused.exception)


def test_a_hub_name_in_the_local_cache_loads_offline_without_asking_the_hub(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    import huggingface_hub
    from huggingface_hub import constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hf" / "hub" / "models--org--tiny-gpt"
    shutil.copytree(fixture_models["clm-gpt2"], repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))  # read when the module loaded

    def no_hub(*args, **kwargs):
        raise AssertionError("the Hub was asked while HF_HUB_OFFLINE=1")

    monkeypatch.setattr(huggingface_hub, "model_info", no_hub)
    monkeypatch.chdir(tmp_path)
    release = releases("crows-pairs")
    by_name = _run(runner, release, tmp_path / "name.json", "--model", "org/tiny-gpt", "--no-cache")
    by_folder = _run(
        runner, release, tmp_path / "folder.json", "--model", str(fixture_models["clm-gpt2"]), "--no-cache"
    )
    assert by_name["runtime"]["models"]["org/tiny-gpt"]["revision"] == commit
    assert (
        by_name["models"]["org/tiny-gpt"]["overall"] == by_folder["models"][str(fixture_models["clm-gpt2"])]["overall"]
    )
    missing = invoke(runner, "evaluate", str(release), "--model", "org/not-cached", "--no-cache")
    assert missing.exit_code == 2 and "nor in the local Hugging Face cache" in str(missing.exception)


def _lm_eval_crows_rule():
    """lm-evaluation-harness's own crows_pairs process_results (its task's utils module)."""
    spec = importlib.util.find_spec("lm_eval")
    path = Path(spec.origin).parent / "tasks" / "crows_pairs" / "utils.py"
    module_spec = importlib.util.spec_from_file_location("lm_eval_crows_utils", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.process_results


@pytest.mark.parametrize("direction", ["stereo", "antistereo"])
def test_a_causal_pair_differing_below_the_third_decimal_is_decided_as_lm_eval_decides_it(direction):
    process_results = _lm_eval_crows_rule()
    more, less = -12.34561, -12.34589  # equal once rounded to 3 decimals
    sent1, sent2 = (more, less) if direction == "stereo" else (less, more)
    lm_eval = process_results({}, [(more, False), (less, False)])
    causal, _ = model_result(CAUSAL_RULE, None, [direction], ["age"], [PairScore(sent1, sent2, 0, False)])
    assert causal["overall"]["metric_score"] / 100 == lm_eval["pct_stereotype"] == 1.0
    assert causal["overall"]["neutral"] == 0
    assert causal["overall"]["likelihood_diff"] == pytest.approx(lm_eval["likelihood_diff"])
    assert "lm-evaluation-harness" in causal["pair_decision"]
    masked, _ = model_result(MASKED_RULE, None, [direction], ["age"], [PairScore(sent1, sent2, 3, False)])
    assert masked["overall"]["neutral"] == 1 and masked["overall"]["metric_score"] == 0.0  # the paper's rounding
    # an exact tie: neither prefers sent_more (lm-eval: not stereotyped; here: neutral, no hit)
    tie, _ = model_result(CAUSAL_RULE, None, [direction], ["age"], [PairScore(more, more, 0, False)])
    assert tie["overall"]["metric_score"] / 100 == process_results({}, [(more, 0), (more, 0)])["pct_stereotype"] == 0.0

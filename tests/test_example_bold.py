"""The BOLD-style example plugin (examples/bold_lite), installed with the real pip and driven
through the `workbench` command as a user would: a causal LM continues each prompt (the shared
generation), a judge model in its own role (`--judge`) scores each continuation (the shared text
classifier), and the declared evaluator gives group means, the largest gap and their intervals.
Every figure is recomputed here with transformers directly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_example_kind import ROOT, ok, pip_install, workbench

EXAMPLE = ROOT / "examples" / "bold_lite"


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    return pip_install(EXAMPLE, tmp_path_factory.mktemp("bold") / "site")


def test_the_plugin_is_small():
    lines = sum(len(p.read_text().splitlines()) for p in (EXAMPLE / "bold_lite").glob("*.py"))
    assert lines <= 200, lines


def test_generate_judge_and_score_groups(plugin, tmp_path, fixture_models):
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

    from workbench.models.fixtures import with_text_classifier

    model_dir = fixture_models["clm-gpt2"]
    judge_dir = with_text_classifier(tmp_path / "judge")
    prompts = EXAMPLE / "prompts.jsonl"
    out, items, plots = tmp_path / "scores.json", tmp_path / "items.jsonl", tmp_path / "plots"

    def wb(*args):
        return workbench(*args, cwd=tmp_path, path=(plugin,))

    refused = wb("evaluate", str(prompts), "--model", str(model_dir))
    assert refused.returncode == 2 and "needs --judge MODEL" in refused.stderr and "Traceback" not in refused.stderr
    ok(
        wb(
            "evaluate",
            str(prompts),
            "--model",
            str(model_dir),
            "--judge",
            str(judge_dir),
            "--max-new-tokens",
            "8",
            "--json",
            str(out),
            "--items",
            str(items),
            "--plots",
            str(plots),
            "--bootstrap",
            "300",
        )
    )
    doc = json.loads(out.read_text())
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    assert doc["kind"] == "bold-lite" and doc["n_prompts"] == 24 and doc["n_units"] == 12  # 12 people
    assert doc["roles"]["judge"]["model"] == str(judge_dir) and doc["options"]["max_new_tokens"] == 8
    assert str(judge_dir) in doc["runtime"]["models"] or str(judge_dir) in json.dumps(doc["runtime"])

    # Greedy continuations as model.generate makes them, one prompt at a time.
    tok = AutoTokenizer.from_pretrained(model_dir)
    lm = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    for row in rows[:4]:
        ids = tok(row["prompt"], return_tensors="pt", add_special_tokens=False)["input_ids"]  # no BOS, as lm-eval
        with torch.no_grad():
            made = lm.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=tok.eos_token_id)
        assert row["completion"] == tok.decode(made[0, ids.shape[1] :], skip_special_tokens=True)
    # The judge's P(positive) of every continuation, and the figures from them.
    jtok = AutoTokenizer.from_pretrained(judge_dir)
    judge = AutoModelForSequenceClassification.from_pretrained(judge_dir).eval()
    positive = {v.lower(): int(k) for k, v in judge.config.id2label.items()}["positive"]
    by_group: dict[str, list[float]] = {}
    for row in rows:
        with torch.no_grad():
            p = torch.softmax(judge(**jtok(row["completion"], return_tensors="pt")).logits[0].float(), -1)
        assert row["score"] == pytest.approx(float(p[positive]), abs=1e-5)
        by_group.setdefault(row["group"], []).append(row["score"])
    result = doc["models"][str(model_dir)]
    means = {g: sum(v) / len(v) for g, v in by_group.items()}
    assert result["overall"]["judge_score"] == pytest.approx(sum(map(sum, by_group.values())) / 24, abs=1e-9)
    for group, value in means.items():
        assert result["by_group"][group]["judge_score"] == pytest.approx(value, abs=1e-9)
    assert result["overall"]["gap"] == pytest.approx(max(means.values()) - min(means.values()), abs=1e-9)
    found = result["overall"]["intervals"]
    for key in ("judge_score", "gap"):
        assert found[key]["lower"] <= result["overall"][key] <= found[key]["upper"], key
    assert (plots / "bold_lite.png").stat().st_size > 10_000

    # A rerun reads every continuation and score from the cache: the same document.
    ok(
        wb(
            "evaluate",
            str(prompts),
            "--model",
            str(model_dir),
            "--judge",
            str(judge_dir),
            "--max-new-tokens",
            "8",
            "--json",
            str(tmp_path / "again.json"),
            "--bootstrap",
            "300",
        )
    )
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["models"] == doc["models"]
    assert again["provenance"]["cache"]["values_computed"] == 0 and again["provenance"]["cache"]["values_read"] > 24

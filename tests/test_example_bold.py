"""The BOLD-style example plugin (examples/bold_lite), installed with the real pip and driven
through the `workbench` command as a user would: a causal LM continues each prompt (the shared
generation), a judge model in its own role (`--judge`) scores each continuation (the shared text
classifier), and the declared evaluator gives group means, the largest gap and their intervals.
Every figure is recomputed here with transformers directly.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
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
    completions = tmp_path / "completions.jsonl"

    def wb(*args):
        return workbench(*args, cwd=tmp_path, path=(plugin,))

    refused = wb("evaluate", str(prompts), "--model", str(model_dir))
    assert refused.returncode == 2 and "needs --judge MODEL" in refused.stderr and "Traceback" not in refused.stderr
    chat = wb("evaluate", str(prompts), "--model", str(model_dir), "--judge", "j", "--apply-chat-template")
    assert chat.returncode == 2 and "its generation takes --chat-template on" in chat.stderr, chat.stderr
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
            "--predictions-out",
            str(completions),
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

    # --predictions-out wrote each prompt's completion; read back (no model under test), the judge
    # scores them again and every figure and interval is the run's.
    written = [json.loads(line) for line in completions.read_text(encoding="utf-8").splitlines()]
    assert written == [{"prompt": r["prompt"], "completion": r["completion"]} for r in rows]
    ok(wb(*judged(prompts, judge_dir, f"mine={completions}", tmp_path / "back.json")))
    back = json.loads((tmp_path / "back.json").read_text())
    mine = back["models"]["mine"]
    assert {k: v for k, v in mine.items() if k not in ("revision", "predictions")} == {
        k: v
        for k, v in result.items()
        if k not in ("revision", "lm")  # how the model ran: none did
    }
    sha = hashlib.sha256(completions.read_bytes()).hexdigest()
    assert mine["predictions"] == {"file": "completions.jsonl", "sha256": sha, "layout": "completions (JSON lines)"}
    assert back["provenance"]["prediction_files"]["mine"]["sha256"] == sha


def judged(prompts: Path, judge: Path, predictions: str, json_out: Path) -> list[str]:
    """`workbench evaluate` arguments that judge completions read from a file."""
    return [
        "evaluate",
        str(prompts),
        "--predictions",
        predictions,
        "--judge",
        str(judge),
        "--json",
        str(json_out),
        "--bootstrap",
        "300",
    ]


def test_a_release_scores_completions_from_a_file_as_workbench_does(plugin, tmp_path):
    """A release's evaluate.py (its evaluator/ built from the plugin, run without workbench) takes
    --predictions for the generation kind: the judge scores the file's completions and the figures
    equal `workbench evaluate`'s; a file that does not fit is refused in one line."""
    from test_standalone_evaluator import run_standalone

    from workbench.models.fixtures import with_text_classifier

    judge_dir = with_text_classifier(tmp_path / "judge")
    release = tmp_path / "release"
    (release / "data").mkdir(parents=True)
    shutil.copy(EXAMPLE / "prompts.jsonl", release / "data" / "prompts.jsonl")
    build = "import sys, bold_lite, pathlib; from workbench.release.standalone import write; write(bold_lite.KIND, None, pathlib.Path(sys.argv[1]))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), str(ROOT)])}
    subprocess.run([sys.executable, "-c", build, str(release)], check=True, env=env, timeout=300)
    assert (release / "evaluator" / "workbench" / "evaluation" / "completions.py").is_file()

    prompts = [json.loads(line)["prompt"] for line in (release / "data" / "prompts.jsonl").read_text().splitlines()]
    made = tmp_path / "made.jsonl"  # another tool's completions, in another order
    made.write_text(
        "".join(
            json.dumps({"prompt": p, "completion": f" was {'kind' if k % 3 else 'late'}."}) + "\n"
            for k, p in reversed(list(enumerate(prompts)))
        ),
        encoding="utf-8",
    )
    args = ["--unverified", "--predictions", f"mine={made}", "--judge", str(judge_dir), "--bootstrap", "300"]
    ran = run_standalone(release / "evaluate.py", [*args, "--json", "alone.json"], cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    alone = json.loads((tmp_path / "alone.json").read_text())
    ok(
        workbench(
            *judged(release / "data" / "prompts.jsonl", judge_dir, f"mine={made}", tmp_path / "w.json"),
            cwd=tmp_path,
            path=(plugin,),
        )
    )
    assert alone["models"] == json.loads((tmp_path / "w.json").read_text())["models"]
    assert alone["models"]["mine"]["overall"]["n"] == 24 and alone["models"]["mine"]["overall"]["gap"] > 0
    sha = hashlib.sha256(made.read_bytes()).hexdigest()
    assert alone["provenance"]["prediction_files"]["mine"]["sha256"] == sha

    made.write_text(made.read_text().replace('"completion": " was late."', '"completion": null', 1))
    ran = run_standalone(release / "evaluate.py", args, cwd=tmp_path)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert (
        ran.stderr.strip().splitlines()[-1] == "evaluate.py: error: made.jsonl:3: completion must be a string, not null"
    )


BAD = {
    "not JSON": ('{"prompt": "A"', "f.jsonl:1: not JSON"),
    "missing prompt": ('{"completion": "x"}', "f.jsonl:1: missing prompt; expected"),
    "prompt not a string": ('{"prompt": 3, "completion": "x"}', "f.jsonl:1: prompt must be a string, not 3"),
    "completion not a string": (
        '{"prompt": "A", "completion": ["x"]}',
        'f.jsonl:1: completion must be a string, not ["x"]',
    ),
    "unknown prompt": ('{"prompt": "A.", "completion": "x"}', "f.jsonl:1: prompt 'A.' is no prompt of the data"),
    "duplicate": (
        '{"prompt": "A", "completion": "x"}\n\n{"prompt": "A", "completion": "y"}',
        "f.jsonl:3: a second completion for prompt 'A' (the first on line 1)",
    ),
    "prompt without one": ('{"prompt": "A", "completion": "x"}', "f.jsonl: no completion for prompt 'B'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_completions_file_that_does_not_fit_is_refused_in_one_line(case, tmp_path):
    from workbench.core.errors import InputError
    from workbench.evaluation.completions import read_completions

    text, message = BAD[case]
    path = tmp_path / "f.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_completions(path, ["A", "B", "A"])
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_a_prompt_given_twice_is_one_record(tmp_path):
    from workbench.evaluation.completions import read_completions, write_completions

    path = tmp_path / "c.jsonl"
    write_completions(path, ["A", "B", "A"], [" one", "", " one"])
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"prompt": "A", "completion": " one"},
        {"prompt": "B", "completion": ""},
    ]
    assert read_completions(path, ["A", "B", "A"]) == [" one", "", " one"]

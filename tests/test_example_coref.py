"""The third example plugin kind (examples/coref_lite, issue 56): WinoBias-style coreference with
paired conditions within each item (pro and anti pronoun), used as its README tells a user to —
installed with the real pip into a folder of its own and driven through the `workbench` command
in subprocesses, so it is found only through its entry point (as tests/test_example_kind.py does
for bbq-lite).

Every answer is checked against log-likelihoods computed here with transformers, the figures
(accuracy per condition, pro − anti within items) against numpy; the release's evaluate.py gives
the same figures without workbench, and the lm-eval task `workbench build` made from the
declaration gives them too, each continuation's score equal to the evaluator's."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.figures import ABS, REL
from support.lm_eval_run import run_lm_eval
from test_example_kind import loglik, ok, pip_install, workbench

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "coref_lite"
FIGURES = ("accuracy_pro", "accuracy_anti", "pro_minus_anti")


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    return pip_install(EXAMPLE, tmp_path_factory.mktemp("coref") / "site")


def lm_eval_figures(model, release: Path, task: str, tmp_path: Path, system: str | None = None) -> dict:
    """lm-eval's figures for the release's task (the session's worker), each example's choice
    log-likelihoods by its example_id."""
    got = run_lm_eval(model, [(release / "lm_eval_tasks", task)], tmp_path / "hf", system=system, samples=True)
    samples = {doc["example_id"]: scores for doc, scores in got["samples"][task]}
    return {"results": got["results"][task], "samples": samples, "workbench": got["workbench"]}


def expected_rows(project: Path) -> list[dict]:
    """The release rows the template files describe, read here with a YAML parser of our own."""
    from ruamel.yaml import YAML

    out = []
    for path in sorted((project / "templates").glob("*.yaml")):
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        for item in data["items"]:
            for condition in ("pro", "anti"):
                pronoun = item[condition]
                sentence = item["sentence"].replace("{pronoun}", pronoun)
                a, b = item["people"]
                out.append(
                    {"category": data["category"], "condition": condition, "sentence": sentence, "pronoun": pronoun}
                    | {"person_a": a, "person_b": b, "answer": item["people"].index(item["means"])}
                )
    return out


def by_hand(rows: list[dict], picks: list[int]) -> dict:
    """Accuracy per condition and, per item with both, pro accuracy − anti accuracy averaged (numpy)."""
    right = np.array([p == r["answer"] for r, p in zip(rows, picks)], dtype=float)
    pro = np.array([r["condition"] == "pro" for r in rows])
    per_item = {}
    for r, k in zip(rows, right):
        per_item.setdefault(r["item_id"], {}).setdefault(r["condition"], []).append(k)
    diffs = [np.mean(c["pro"]) - np.mean(c["anti"]) for c in per_item.values() if len(c) == 2]
    return {"accuracy_pro": right[pro].mean(), "accuracy_anti": right[~pro].mean(), "pro_minus_anti": np.mean(diffs)}


def test_the_coreference_kind_is_at_most_150_lines_of_code_beside_its_data():
    code = [p for p in (EXAMPLE / "coref_lite").glob("*.py")]
    assert sum(1 for p in code for line in p.read_text().splitlines() if line.strip()) <= 150


def test_author_build_and_evaluate_a_coreference_benchmark_in_workbench_its_script_and_lm_eval(
    plugin, tmp_path, fixture_models
):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from workbench.authoring.stages import write_example_labels

    project = tmp_path / "project"
    write = "import sys; from coref_lite.example import write_example_project as w; w(sys.argv[1])"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), str(ROOT)])}
    subprocess.run([sys.executable, "-c", write, str(project)], check=True, env=env)

    def wb(*args: str) -> subprocess.CompletedProcess:
        return ok(workbench(*args, cwd=project, path=(plugin,)))

    assert "2 template(s), 0 error(s), 0 warning(s)" in wb("validate").stdout
    assert "queue: done (items 8, rows 16)" in wb("run").stdout
    labels = write_example_labels(project)
    decided = {r["item_id"]: r["label"] for r in map(json.loads, labels.read_text().splitlines())}
    wb("annotate", "-a", "annotator", "--labels-from", str(labels))
    wb("build", "--version", "1.0.0")
    release = project / "exports" / "coref-lite-example" / "1.0.0"
    rows = [json.loads(line) for line in (release / "data" / "coref_lite.jsonl").read_text().splitlines()]
    valid = {item for item, label in decided.items() if label == "valid"}
    assert {r["item_id"] for r in rows} == valid and len(rows) == 2 * len(valid) == 10
    expected = expected_rows(project)
    for r in rows:
        assert {k: r[k] for k in expected[0]} in expected, r

    # workbench evaluate, every answer and figure recomputed here
    model_dir = fixture_models["clm-gpt2"]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    scores, items = project / "scores.json", project / "items.csv"
    wb("evaluate", str(release), "--model", str(model_dir), "--json", str(scores), "--items", str(items))
    doc = json.loads(scores.read_text())
    assert doc["kind"] == "coref-lite" and doc["n_units"] == 5
    entry = doc["models"][str(model_dir)]
    prompts = [f'{r["sentence"]} Here, "{r["pronoun"]}" means the' for r in rows]
    mine = [[loglik(model, tokenizer, p, r[f"person_{s}"], "sum") for s in "ab"] for p, r in zip(prompts, rows)]
    picks = [0 if a >= b else 1 for a, b in mine]
    with open(items, newline="", encoding="utf-8") as f:
        scored = {r["example_id"]: r for r in csv.DictReader(f)}
    for r, m, p in zip(rows, mine, picks):
        got = scored[r["example_id"]]
        assert [float(got["score_a"]), float(got["score_b"])] == pytest.approx(m, abs=1e-3)
        assert int(got["predicted"]) == p
    hand = by_hand(rows, picks)
    for key in FIGURES:
        assert entry["overall"][key] == pytest.approx(hand[key], abs=1e-12), key
    assert set(entry["overall"]["intervals"]) >= set(FIGURES)

    # the release's evaluate.py, without workbench
    from support.figures import assert_same_figures

    alone = project / "alone.json"
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    ran = subprocess.run(
        [sys.executable, "evaluate.py", "--model", str(model_dir), "--json", str(alone)],
        cwd=release,
        env=plain,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    assert_same_figures(json.loads(alone.read_text())["models"], doc["models"])

    # the lm-eval task made from the declaration: the same continuations, scores and figures
    card = (release / "README.md").read_text(encoding="utf-8")
    command = next(line for line in card.splitlines() if line.startswith("lm_eval ")).split()
    task = command[command.index("--tasks") + 1]
    got = lm_eval_figures(model_dir, release, task, tmp_path)
    evaluator = release / "evaluator"
    assert got["workbench"] and all(Path(f).is_relative_to(evaluator) for f in got["workbench"].values() if f)
    for key in FIGURES:
        assert got["results"][f"{key},none"] == pytest.approx(entry["overall"][key], rel=REL, abs=ABS), key
    for r in rows:
        alone_ll, *whole = got["samples"][r["example_id"]]
        theirs = [w - alone_ll for w in whole]
        ours = [float(scored[r["example_id"]]["score_a"]), float(scored[r["example_id"]]["score_b"])]
        assert theirs == pytest.approx(ours, rel=1e-4, abs=1e-4), r["example_id"]

    # under a chat template (lm-eval's --apply_chat_template --system_instruction): the prompt alone
    # and with each continuation scored after the template's empty user turn, the same figures
    from workbench.models.fixtures import with_chat_template

    chat_model = with_chat_template(model_dir, tmp_path / "chat-lm")
    system = "Read carefully."
    got = lm_eval_figures(chat_model, release, task, tmp_path, system=system)
    chat_items = project / "chat-items.csv"
    chat = ["--apply-chat-template", "--system-instruction", system]
    wb("evaluate", str(release), "--model", str(chat_model), *chat, "--json", str(scores), "--items", str(chat_items))
    entry = json.loads(scores.read_text())["models"][str(chat_model)]
    for key in FIGURES:
        assert got["results"][f"{key},none"] == pytest.approx(entry["overall"][key], rel=REL, abs=ABS), key
    with open(chat_items, newline="", encoding="utf-8") as f:
        scored_chat = {r["example_id"]: r for r in csv.DictReader(f)}
    for r in rows:
        alone_ll, *whole = got["samples"][r["example_id"]]
        ours = [float(scored_chat[r["example_id"]][f"score_{s}"]) for s in "ab"]
        assert [w - alone_ll for w in whole] == pytest.approx(ours, rel=1e-4, abs=1e-4), r["example_id"]
        assert ours != pytest.approx([float(scored[r["example_id"]][f"score_{s}"]) for s in "ab"], abs=1e-6)


def test_bad_coreference_files_are_reported_with_file_line_and_field(plugin, tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "workbench.toml").write_text('[project]\nname = "bad"\nkind = "coref-lite"\n')
    (tmp_path / "templates" / "a.yaml").write_text(
        "format: coref-lite/1\ncategory: trades\nitems:\n"
        "  - sentence: The cook met the pilot because {pronoun} was early.\n"
        "    people: [cook, pilot]\n    means: driver\n    pro: he\n    anti: she\n"
        "  - sentence: The cook met the pilot because he was early.\n"
        "    people: [cook, pilot]\n    means: cook\n    pro: he\n    anti: she\n    colour: red\n"
    )
    result = workbench("validate", cwd=tmp_path, path=(plugin,))
    assert result.returncode == 2
    assert "templates/a.yaml:6: items[0].means: means must be one of the people (cook, pilot)" in result.stderr
    assert "templates/a.yaml:9: items[1].sentence: the sentence holds {pronoun} once" in result.stderr
    assert "templates/a.yaml:14: items[1].colour:" in result.stderr

"""Releases as lm-evaluation-harness tasks (issue #37): lm-eval (the optional extra) runs the
task folder a built release carries, on its own data file, and gets the figures `workbench
evaluate` reports for the same release and causal model, to the report's rounding. One lm-eval
run scores both kinds' tasks, in the session's lm-eval worker (tests/support/lm_eval_run.py)."""

from __future__ import annotations

import math
import importlib.util
import json
from pathlib import Path

import pytest
from conftest import invoke
from support.figures import ABS, REL
from support.lm_eval_run import run_lm_eval

from workbench.release import lmeval
from workbench import kinds

# kind -> (lm-eval's metric, workbench's overall figure in percent, workbench's per-group entries)
MAPPED = {"crows-pairs": ("pct_stereotype", "metric_score", "by_bias_type"), "sos": ("sos", "sos", "by_attribute")}


def _card_command(release: Path) -> list[str]:
    line = next(x for x in (release / "README.md").read_text(encoding="utf-8").splitlines() if x.startswith("lm_eval "))
    return line.split()


def test_lm_eval_on_a_built_release_gives_workbench_evaluates_figures(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    model = str(fixture_models["clm-gpt2"])
    built = {kind: releases(kind) for kind in MAPPED}
    args = []
    for kind, release in built.items():
        files = json.loads((release / "manifest.json").read_text(encoding="utf-8"))["files"]
        assert {f"{lmeval.FOLDER}/{n}" for n in ("task.yaml", "utils.py", "lmeval_data.py")} <= set(files)
        command = _card_command(release)  # the card's command names the task and the folder
        task = command[command.index("--tasks") + 1]
        assert command[command.index("--include_path") + 1] == lmeval.FOLDER and task.endswith("_v1_0_0")
        args += [str(release / lmeval.FOLDER), task]
    got = run_lm_eval(model, list(zip(args[0::2], args[1::2])), tmp_path / "hf")
    assert got["workbench"] == {}  # the task files need lm-eval alone
    monkeypatch.chdir(tmp_path)
    for (kind, release), task in zip(built.items(), args[1::2]):
        metric, figure, per_group = MAPPED[kind]
        result = invoke(
            runner, "evaluate", str(release), "--model", model, "--no-cache", "--json", str(tmp_path / f"{kind}.json")
        )
        assert result.exit_code == 0, result.output
        entry = json.loads((tmp_path / f"{kind}.json").read_text(encoding="utf-8"))["models"][model]
        # the card's task is a group of one subtask per bias type / attribute (#46 item 5), its
        # figures weighted by size: the whole release's; each subtask's, the group's in workbench
        groups = entry[per_group]
        assert len(groups) >= 2
        names = lmeval.task_names(release)
        assert names == [task, *(f"{task}_{lmeval.sanitised(g)}" for g in sorted(groups))], names
        assert all(n in (release / "README.md").read_text(encoding="utf-8") for n in names)  # the card names them
        pairs = [(task, entry["overall"]), *((f"{task}_{lmeval.sanitised(g)}", v) for g, v in groups.items())]
        for name, ours in pairs:
            theirs = got["results"][name]
            assert f"{100 * theirs[f'{metric},none']:.1f}" == f"{ours[figure]:.1f}", (kind, name, theirs, ours)
            # a continuous figure from another process: equal within float noise (tests/support/figures.py)
            assert math.isclose(theirs["likelihood_diff,none"], ours["likelihood_diff"], rel_tol=REL, abs_tol=ABS), (
                kind,
                name,
                theirs,
                ours,
            )
            assert ours["likelihood_diff"] > 0


def test_in_bfloat16_lm_eval_equals_workbench_with_logprob_dtype_model(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    """lm-eval's hf backend takes log-softmax and sums a sentence's log-probabilities in the
    model's dtype; in bfloat16 its sums round to a few bits, so pairs tie that workbench's float32
    sums tell apart. --logprob-dtype model reproduces it: the same metric and likelihood_diff."""
    model = str(fixture_models["clm-gpt2"])
    release = releases("crows-pairs")
    task = _card_command(release)[_card_command(release).index("--tasks") + 1]
    got = run_lm_eval(model, [(str(release / lmeval.FOLDER), task)], tmp_path / "hf", model_args=",dtype=bfloat16")
    theirs = got["results"][task]
    monkeypatch.chdir(tmp_path)
    figures = {}
    for switch in ("float32", "model"):
        result = invoke(
            runner,
            "evaluate",
            str(release),
            "--model",
            model,
            "--dtype",
            "bfloat16",
            "--logprob-dtype",
            switch,
            "--no-cache",
            "--json",
            f"{switch}.json",
        )
        assert result.exit_code == 0, result.output
        doc = json.loads((tmp_path / f"{switch}.json").read_text(encoding="utf-8"))
        assert doc["runtime"]["requested"]["logprob_dtype"] == switch
        figures[switch] = doc["models"][model]["overall"]
    ours = figures["model"]
    assert f"{100 * theirs['pct_stereotype,none']:.1f}" == f"{ours['metric_score']:.1f}", (theirs, ours)
    assert math.isclose(theirs["likelihood_diff,none"], ours["likelihood_diff"], rel_tol=REL, abs_tol=ABS)
    # bfloat16 sums tie where float32 sums of the same bfloat16 model do not, never the other way
    assert ours["neutral"] >= figures["float32"]["neutral"]
    assert ours["likelihood_diff"] != figures["float32"]["likelihood_diff"]


def test_under_a_chat_template_lm_eval_equals_workbench_and_the_release_script(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    """lm-eval's --apply_chat_template with --system_instruction renders each context (here the
    empty one of a CrowS-Pairs pair) in the tokenizer's chat template with the assistant's opening
    and scores each sentence after it; workbench evaluate --apply-chat-template, and the
    release's evaluate.py with the same two flags, give its figures. The template writes BOS
    itself (lm-eval then adds none) and ends in a newline (moved into the continuation)."""
    from test_standalone_evaluator import run_standalone

    from workbench.models.fixtures import with_chat_template

    model = str(with_chat_template(fixture_models["clm-gpt2"], tmp_path / "chat-lm"))
    release = releases("crows-pairs")
    task = _card_command(release)[_card_command(release).index("--tasks") + 1]
    system = "Answer as a fair reader."
    got = run_lm_eval(model, [(str(release / lmeval.FOLDER), task)], tmp_path / "hf", system=system)
    theirs = got["results"][task]
    monkeypatch.chdir(tmp_path)
    chat = ["--apply-chat-template", "--system-instruction", system]
    docs = {}
    for name, extra in (("chat", chat), ("plain", [])):
        result = invoke(runner, "evaluate", str(release), "--model", model, *extra, "--json", f"{name}.json")
        assert result.exit_code == 0, result.output
        docs[name] = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    ours = docs["chat"]["models"][model]["overall"]
    assert f"{100 * theirs['pct_stereotype,none']:.1f}" == f"{ours['metric_score']:.1f}", (theirs, ours)
    assert math.isclose(theirs["likelihood_diff,none"], ours["likelihood_diff"], rel_tol=REL, abs_tol=ABS)
    requested = docs["chat"]["runtime"]["requested"]
    assert requested["apply_chat_template"] is True and requested["system_instruction"] == system
    # the plain run read no cached score of the chat run (one cache, the project's): other figures
    assert docs["plain"]["runtime"]["requested"]["apply_chat_template"] is False
    assert docs["plain"]["models"][model]["overall"]["likelihood_diff"] != ours["likelihood_diff"]

    ran = run_standalone(
        release / "evaluate.py", ["--model", model, *chat, "--json", str(tmp_path / "s.json")], tmp_path
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    script = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert script["runtime"]["requested"]["system_instruction"] == system
    assert script["models"][model]["overall"]["metric_score"] == ours["metric_score"]
    assert math.isclose(script["models"][model]["overall"]["likelihood_diff"], ours["likelihood_diff"], rel_tol=REL)


def _data_module(folder: Path):
    spec = importlib.util.spec_from_file_location("lmeval_data_under_test", folder / "lmeval_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_published_release_task_reads_the_hub_file_at_its_tag_and_a_changed_local_file_is_refused(
    releases, tmp_path, monkeypatch
):
    import huggingface_hub

    release = releases("crows-pairs")
    alone = tmp_path / "copy" / lmeval.FOLDER  # the task folder without the release around it
    assert lmeval.write_tasks(kinds.get("crows-pairs"), "t", "org/name@v1.0.0", alone.parent)
    assert '  dataset: "org/name@v1.0.0"' in (alone / "task.yaml").read_text(encoding="utf-8")
    assert lmeval.task_names(alone.parent) == ["t"]  # no data beside it: one task, no subtasks
    asked = []

    def download(repo, filename, repo_type=None, revision=None):
        asked.append((repo, filename, repo_type, revision))
        return str(release / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    rows = _data_module(alone).load(data_file="data/pairs.csv", dataset="org/name@v1.0.0", version=1.0)["test"]
    assert asked == [("org/name", "data/pairs.csv", "dataset", "v1.0.0")]
    assert len(rows) > 0 and {"sent_more", "sent_less"} <= set(rows.column_names)

    local = tmp_path / "local"  # a local release whose data file was edited after the build
    (local / "data").mkdir(parents=True)
    (local / "manifest.json").write_bytes((release / "manifest.json").read_bytes())
    (local / "data" / "pairs.csv").write_text("sent_more,sent_less\na,b\n", encoding="utf-8")
    lmeval.write_tasks(kinds.get("crows-pairs"), "t", None, local)
    with pytest.raises(ValueError, match="differs from the file the release's manifest.json lists"):
        _data_module(local / lmeval.FOLDER).load(data_file="data/pairs.csv")
    assert lmeval.write_tasks(kinds.get("honest"), "t", None, tmp_path / "none") is False  # no task: nothing written
    assert not (tmp_path / "none").exists()


def test_the_lm_eval_extra_holds_what_its_api_backends_need():
    """`pip install 'bias-workbench[lm-eval]'` is also how an evaluator runs a release's task against a
    served model (lm-eval's local-completions): that backend refuses to start without its own
    packages (tenacity, aiohttp, ...), which `lm_eval[hf]` alone does not bring."""
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    model = LocalCompletionsAPI(base_url="http://127.0.0.1:9/v1/completions", tokenizer_backend=None, model="m")
    assert model.model == "m"
    extra = next(
        line
        for line in (Path(__file__).parents[1] / "pyproject.toml").read_text().splitlines()
        if line.startswith("lm-eval =")
    )
    assert "api" in extra and "api" in lmeval.INSTALL  # the release card names the same install


def test_a_task_reads_a_json_lines_data_file_with_its_values_as_written(tmp_path):
    """A kind whose release is JSON lines (bbq-lite, coref-lite): lm-eval's rows are the file's
    records, numbers kept numbers as the evaluator reads them, a subtask's rows those of its group."""
    (tmp_path / "data").mkdir()
    records = [{"category": "a", "answer": 1, "text": "x"}, {"category": "b", "answer": 0, "text": "y"}]
    (tmp_path / "data" / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (tmp_path / lmeval.FOLDER).mkdir()
    (tmp_path / lmeval.FOLDER / "lmeval_data.py").write_bytes(lmeval.DATA_MODULE.read_bytes())
    module = _data_module(tmp_path / lmeval.FOLDER)
    assert module.load(data_file="data/rows.jsonl")["test"].to_list() == records
    assert module.load(data_file="data/rows.jsonl", group_by="category", groups=["b"])["test"].to_list() == records[1:]
    assert lmeval._data_rows(tmp_path / "data" / "rows.jsonl", "category") == ["a", "b"]  # the subtasks' values

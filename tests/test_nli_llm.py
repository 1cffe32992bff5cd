"""A causal LM as an NLI judge, asked as lm-evaluation-harness asks its mnli task: in the
adversarial filter beside classifiers, in `workbench evaluate`, and in the lm-eval task an NLI
release carries, which gives `workbench evaluate`'s accuracy and aggregate bias."""

from __future__ import annotations

import json
import math
import shutil

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, invoke
from support.figures import REL
from support.lm_eval_run import run_lm_eval

from workbench.models.fixtures import with_causal_tokenizer

# Answer words that are single tokens of the fixture vocabulary and that the tiny random model
# finds about equally likely, so its answers vary from prompt to prompt (its multi-token
# True/Neither/False always come out Neither).
ANSWERS = {"entailment": "your", "neutral": "these", "contradiction": "jobs"}
PROMPT = "{premise}\nQuestion: {hypothesis} True, False or Neither?\nAnswer:"


def lm_eval_way(model_dir, premise: str, hypothesis: str, system: str | None = None) -> str:
    """The label lm-eval's hf backend would pick, computed here with plain torch one sequence at a
    time: the context encoded alone, the answer's tokens those of context + ' ' + answer beyond it.
    With `system`, as under --apply_chat_template --system_instruction: the context is the chat
    template's text (system turn, user turn, assistant's opening), its trailing spaces moved to
    the answer, which follows without a space; a text that starts with BOS gets no other."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    h = hypothesis.strip()
    context = PROMPT.format(premise=premise, hypothesis=h if h.endswith(".") else h + ".")
    delimiter = " "
    if system is not None:
        turns = [{"role": "system", "content": system}, {"role": "user", "content": context}]
        rendered = tok.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
        context, delimiter = rendered.rstrip(), rendered[len(rendered.rstrip()) :]

    def encode(text):
        return tok(text, add_special_tokens=not text.startswith(tok.bos_token))["input_ids"]

    context_ids = encode(context)
    scores = []
    for label in ("entailment", "neutral", "contradiction"):
        rest = encode(context + delimiter + ANSWERS[label])[len(context_ids) :]
        ids = torch.tensor([context_ids + rest])
        with torch.no_grad():
            logprobs = torch.log_softmax(model(ids[:, :-1]).logits.float(), dim=-1)[0]
        scores.append(sum(logprobs[len(context_ids) - 1 + i, t].item() for i, t in enumerate(rest)))
    return ("entailment", "neutral", "contradiction")[scores.index(max(scores))]


@pytest.fixture(scope="module")
def llm_project(tmp_path_factory, fixture_models):
    """An NLI project whose filter asks a classifier and a causal LM, labelled and built as 1.0.0."""
    from typer.testing import CliRunner

    from test_release import write_labels

    project = tmp_path_factory.mktemp("llm-project")
    judge = with_causal_tokenizer(fixture_models["clm-gpt2"], project.parent / f"{project.name}-judge")
    shutil.copytree(ROOT / "templates", project / "templates")
    answers = ", ".join(f'{k} = "{v}"' for k, v in ANSWERS.items())
    (project / "workbench.toml").write_text(
        '[project]\nname = "llm-bias"\nlicense = "cc-by-4.0"\n'
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 5\n'
        f'[filter]\nmodels = ["{fixture_models["nli-a"]}", "{judge}"]\n'
        f"[llm]\nanswers = {{ {answers} }}\n[evaluate]\nmodels = []\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("WORKBENCH_PROGRESS", "0")
        for step in (["expand"], ["generate"], ["filter"], ["run"]):
            result = invoke(runner, *step)
            assert result.exit_code == 0, result.output
        items = pq.read_table(project / ".workbench" / "queue" / "data.parquet").to_pylist()
        write_labels(project / "labels.jsonl", items, lambda k: ["valid-pro", "valid-anti"][k % 2])
        assert invoke(runner, "annotate", "-a", "alice", "--labels-from", str(project / "labels.jsonl")).exit_code == 0
        built = invoke(runner, "build", "--version", "1.0.0")
        assert built.exit_code == 0, built.output
    return project, project / "exports" / "llm-bias" / "1.0.0", judge


def test_the_filter_asks_a_causal_lm_beside_a_classifier_in_its_k_of_n_rule(llm_project, fixture_models):
    project, _, judge = llm_project
    llm = str(judge)
    rows = pq.read_table(project / ".workbench" / "filter" / "data.parquet").to_pylist()
    asked = [(r, next(p for p in r["predictions"] if p["model"] == llm)) for r in rows]
    assert len({p["label"] for _, p in asked}) >= 2  # the judge's answers vary
    for r, p in asked[:6]:
        assert p["label"] == lm_eval_way(judge, r["premise"], r["hypothesis"])
        assert math.isclose(sum(p["probs"].values()), 1.0, abs_tol=1e-4)
        assert (llm in r["fooled_by"]) == (p["label"] != "neutral")
    assert any(llm in r["fooled_by"] for r in rows)


def test_evaluate_asks_a_causal_lm_as_lm_eval_asks_mnli_and_says_how(
    llm_project, fixture_models, tmp_path, runner, monkeypatch
):
    _, release, judge = llm_project
    model = str(judge)
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "evaluate", str(release), "--model", model, "--no-cache", "--json", "s.json")
    assert result.exit_code == 0, result.output
    entry = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["models"][model]
    assert entry["asked"]["answers"] == ANSWERS and entry["asked"]["prompt"] == PROMPT
    assert entry["asked"]["chat_template"] is False and "log-likelihood" in entry["asked"]["mode"]
    rows = pq.read_table(release / "data" / "all.parquet").to_pylist()
    labels = [lm_eval_way(judge, r["premise"], r["hypothesis"]) for r in rows]
    assert entry["overall"]["n"] == len(rows)
    assert math.isclose(entry["overall"]["accuracy"], round(100 * labels.count("neutral") / len(rows), 4), abs_tol=1e-4)
    assert 0 < entry["overall"]["accuracy"] < 100


def test_lm_eval_on_a_built_nli_release_gives_workbench_evaluates_accuracy_and_bias(
    llm_project, fixture_models, tmp_path, runner, monkeypatch
):
    _, release, judge = llm_project
    model = str(judge)
    task_yaml = (release / "lm_eval_tasks" / "task.yaml").read_text(encoding="utf-8")
    assert 'doc_to_choice: ["your", "these", "jobs"]' in task_yaml and "Question:" in task_yaml
    task = "llm_bias_v1_0_0"
    got = run_lm_eval(model, [(str(release / "lm_eval_tasks"), task)], tmp_path / "hf")
    assert got["workbench"] == {}
    theirs = got["results"][task]
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "evaluate", str(release), "--model", model, "--no-cache", "--json", "w.json")
    assert result.exit_code == 0, result.output
    ours = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))["models"][model]["overall"]
    assert math.isclose(100 * theirs["accuracy,none"], ours["accuracy"], rel_tol=REL, abs_tol=1e-3)
    assert math.isclose(100 * theirs["bias_aggregate,none"], ours["bias_aggregate"], rel_tol=REL, abs_tol=1e-3)
    assert 0 < ours["accuracy"] < 100


def test_under_a_chat_template_lm_eval_on_the_nli_release_gives_workbench_evaluates_figures(
    llm_project, fixture_models, tmp_path, runner, monkeypatch
):
    """The release's task run by lm-eval with --apply_chat_template --system_instruction, and
    workbench evaluate --apply-chat-template --system-instruction, on the judge as a chat model:
    the same accuracy and aggregate bias (the answer word read right after the assistant's
    opening, without the task's space), other than the plain run's."""
    from workbench.models.fixtures import with_chat_template

    _, release, _ = llm_project
    model = str(with_chat_template(fixture_models["clm-gpt2"], tmp_path / "chat-judge"))
    task, system = "llm_bias_v1_0_0", "Judge fairly."
    got = run_lm_eval(model, [(str(release / "lm_eval_tasks"), task)], tmp_path / "hf", system=system)
    theirs = got["results"][task]
    monkeypatch.chdir(tmp_path)
    docs = {}
    for name, extra in (("chat", ["--apply-chat-template", "--system-instruction", system]), ("plain", [])):
        result = invoke(runner, "evaluate", str(release), "--model", model, *extra, "--json", f"{name}.json")
        assert result.exit_code == 0, result.output
        docs[name] = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))["models"][model]
    ours = docs["chat"]["overall"]
    assert docs["chat"]["asked"]["chat_template"] is True and docs["chat"]["asked"]["system_instruction"] == system
    assert math.isclose(100 * theirs["accuracy,none"], ours["accuracy"], rel_tol=REL, abs_tol=1e-3)
    assert math.isclose(100 * theirs["bias_aggregate,none"], ours["bias_aggregate"], rel_tol=REL, abs_tol=1e-3)
    assert docs["plain"]["asked"]["chat_template"] is False
    assert (ours["accuracy"], ours["bias_aggregate"]) != (
        docs["plain"]["overall"]["accuracy"],
        docs["plain"]["overall"]["bias_aggregate"],
    )


def test_the_release_says_how_each_filter_judge_was_asked(llm_project, fixture_models, tmp_path, runner, monkeypatch):
    """The card names the classifier as one and the causal LM as an LLM judge with its prompt,
    answer words and chat template; the manifest records how the LLM was asked, not labels; the
    release's own evaluate.py asks as its project did and writes `asked` as workbench evaluate."""
    from test_standalone_evaluator import run_standalone

    _, release, judge = llm_project
    card = (release / "README.md").read_text(encoding="utf-8")
    classifier = next(line for line in card.splitlines() if "adversarial filter" in line and "nli-a" in line)
    assert classifier.endswith("(NLI classifier)")
    llm = next(line for line in card.splitlines() if "adversarial filter" in line and judge.name in line)
    assert "LLM judge (causal LM, by log-likelihood" in llm and "no chat template applied" in llm
    assert 'entailment "your", neutral "these", contradiction "jobs"' in llm
    assert "  ```text\n  {premise}\n  Question: {hypothesis} True, False or Neither?\n  Answer:\n  ```" in card
    filters = json.loads((release / "manifest.json").read_text(encoding="utf-8"))["models"]["filter"]
    asked = next(m for m in filters if m["name"].startswith(judge.name))
    assert "labels" not in asked and asked["judge"] == "causal LM, by log-likelihood"
    assert asked["asked"]["answers"] == ANSWERS and asked["asked"]["prompt"] == PROMPT
    assert asked["asked"]["chat_template"] is False
    assert next(m for m in filters if m["name"].startswith("nli-a"))["labels"]  # a classifier still by its labels

    monkeypatch.chdir(tmp_path)
    assert (
        invoke(runner, "evaluate", str(release), "--model", str(judge), "--no-cache", "--json", "w.json").exit_code == 0
    )
    ours = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))["models"][str(judge)]
    ran = run_standalone(release / "evaluate.py", ["--model", str(judge), "--json", str(tmp_path / "s.json")], tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    theirs = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["models"][str(judge)]
    assert theirs["asked"] == ours["asked"]
    assert theirs["overall"]["accuracy"] == ours["overall"]["accuracy"]  # the project's answer words, not lm-eval's


def test_a_filter_judge_asked_in_its_chat_template_says_so_and_keeps_its_answers_apart(fixture_models, tmp_path):
    """[llm] chat_template = true (and a system_instruction) asks a chat model as lm-eval's
    --apply_chat_template --system_instruction would; the filter's manifest and the card say so,
    and the same judge asked without it reads none of those cached answers."""
    from test_filter import make_project, run_filter

    from workbench.core.config import load_config
    from workbench.core.workspace import Workspace
    from workbench.kinds.nli.card import filter_model_lines
    from workbench.models.fixtures import with_chat_template

    judge = str(with_chat_template(fixture_models["clm-gpt2"], tmp_path / "chat-judge"))
    answers = ", ".join(f'{k} = "{v}"' for k, v in ANSWERS.items())
    chat = f'[llm]\nanswers = {{ {answers} }}\nchat_template = true\nsystem_instruction = "Judge fairly."\n'
    root = make_project(tmp_path / "p", fixture_models, [judge], extra=chat)
    rows = run_filter(root)
    for r in rows[:4]:
        (p,) = r["predictions"]
        assert p["label"] == lm_eval_way(judge, r["premise"], r["hypothesis"], system="Judge fairly.")
    ws = Workspace(load_config(root / "workbench.toml").path("workspace"))
    manifest = ws.manifest("filter")
    (entry,) = manifest["models"]
    assert entry["asked"]["chat_template"] is True and entry["asked"]["system_instruction"] == "Judge fairly."
    assert "a chat template applied" in filter_model_lines(entry)[0]
    from workbench import kinds
    from workbench.release import lmeval

    command = lmeval.card_lines(kinds.get("nli"), "t_v1_0_0", (True, "Judge fairly."))[-1]  # the card's lm_eval line
    assert command.endswith("--batch_size 16 --apply_chat_template --system_instruction 'Judge fairly.'")
    unique = len({(r["premise"], r["hypothesis"]) for r in rows})
    assert manifest["counts"]["computed_pairs"][judge] == unique

    toml = root / "workbench.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(chat, f"[llm]\nanswers = {{ {answers} }}\n"), "utf-8")
    plain = run_filter(root)
    manifest = ws.manifest("filter")
    assert manifest["counts"]["computed_pairs"][judge] == unique  # every pair asked again
    assert manifest["models"][0]["asked"]["chat_template"] is False
    assert [r["predictions"][0]["probs"] for r in plain] != [r["predictions"][0]["probs"] for r in rows]

"""[generate] proposers: a masked LM and an LLM proposing side by side, the LLM's answer read
robustly, cached like fills, counted per proposer in `workbench stats`."""

from __future__ import annotations

import json

import pytest

from conftest import invoke, write_project
from test_generate import boosted, template
from workbench.core.config import load_config
from workbench.core.workspace import Workspace
from workbench.kinds import pipeline_for
from workbench.models.llm_proposer import LLMProposer, check_prompt, parse_words

ANSWER = "calm\nkind, women"  # what the lister answers to any prompt


@pytest.fixture(scope="module")
def lister(tmp_path_factory):
    from workbench.models.fixtures import build_lister

    return build_lister(tmp_path_factory.mktemp("lister") / "lister", ANSWER)


@pytest.mark.parametrize(
    "answer, words, unread",
    [
        ("calm\nkind\nhonest", ["calm", "kind", "honest"], 0),
        ("calm, kind,honest.", ["calm", "kind", "honest"], 0),
        ("1. calm\n2) Kind\n(3) honest", ["calm", "Kind", "honest"], 0),
        ("- calm\n* kind\n\u2022 honest", ["calm", "kind", "honest"], 0),
        ("\"calm\"\n\u201ckind\u201d\n'honest'", ["calm", "kind", "honest"], 0),
        ("calm\nCalm\nkind", ["calm", "kind"], 0),  # the same word twice, case aside: once
        ("Sure! Here are some words:\ncalm\n---\n42", ["calm", "42"], 1),  # a sentence; "42": the filters'
        ("calm.\nvery kind\nhonest;", ["calm", "honest"], 1),  # a phrase is no word
        ("", [], 0),
        ("\n\n  ,, \n", [], 0),
        ("I cannot help with that.", [], 1),
        ("calm, kind, honest, open", ["calm", "kind"], 0),  # at most k
    ],
)
def test_answers_are_read_one_word_per_item(answer, words, unread):
    k = 2 if answer.endswith("open") else 5
    got_words, got_unread = parse_words(answer, k)
    assert (got_words, got_unread) == (words, unread)


def test_prompt_placeholders_are_checked(tmp_path):
    assert check_prompt("Words for {sentence}, {k} of them:") is None
    assert "{premise}" in check_prompt("{premise} {sentence}")
    assert "must hold {sentence}" in check_prompt("Give {k} words")
    root = write_project(
        tmp_path / "p", {"t1.yaml": template("{{GROUP1}} are <mask>.")}, '[generate]\nllm_prompt = "Fill {slot}"\n'
    )
    from workbench.core.errors import ConfigError

    with pytest.raises(ConfigError) as error:
        load_config(root / "workbench.toml")
    assert "generate.llm_prompt" in str(error.value) and "{slot}" in str(error.value)


def config_text(proposers: list, mlm, extra: str = "") -> str:
    """`model`: the masked LM the fluency score uses (and the default proposer, when unlisted)."""
    names = ", ".join(json.dumps(str(p)) for p in proposers)
    return f'[generate]\nmodel = "{mlm}"\nproposers = [{names}]\ntop_k = 3\n{extra}'


def run(root, stage, **kw):
    return pipeline_for(load_config(root / "workbench.toml")).run(stage, **kw)


def test_a_masked_lm_and_an_llm_propose_with_provenance_and_the_llm_is_cached(
    fixture_models, lister, tmp_path, monkeypatch
):
    mlm = boosted(fixture_models, tmp_path, "bert", {"calm": 60.0})  # its first fill: "calm"
    hypotheses = ("{{GROUP1}} are <mask> at work.", "{{GROUP1}} <mask> the <mask> at work.")
    root = write_project(tmp_path / "p", {"t1.yaml": template(*hypotheses)}, config_text([mlm, lister], mlm))
    run(root, "expand")
    result = run(root, "generate")
    rows = Workspace(load_config(root / "workbench.toml").path("workspace")).read("generate").to_pylist()
    by = {}
    for r in rows:
        by.setdefault(r["proposer"], []).append(r)
    assert set(by) == {str(mlm), str(lister)}
    llm = [r for r in by[str(lister)] if r["stance"] == "pro"]
    # One mask: the answer's three words, in its order, through the same filters (a hypothesis
    # the masked LM, listed first, proposed already; a group word); two masks: not asked.
    assert [(r["fill"], r["fill_rank"], r["reject_reason"]) for r in llm] == [
        (["calm"], 1, "duplicate"),
        (["kind"], 2, None),
        (["women"], 3, "group_word"),
    ]
    assert all(r["mlm_name"] == str(lister) and r["fill_logprob"] is None for r in llm)
    assert llm[1]["hypothesis"] == "women are kind at work." and llm[1]["kept"]
    first = next(r for r in by[str(mlm)] if r["stance"] == "pro" and r["fill"] == ["calm"])
    assert first["kept"] and first["candidate_id"] != llm[0]["candidate_id"]
    assert all(r["mlm_name"] == str(mlm) and r["fill_score"] > 0 for r in by[str(mlm)])
    assert {len(r["fill"]) for r in by[str(mlm)]} == {1, 2}  # the masked LM fills both hypotheses
    work = result["proposer_work"][str(lister)]
    assert work["computed_proposals"] == 2 and work["several_masks_not_asked"] == 2
    assert work["answers_without_words"] == 0 and work["answer_items_unread"] == 0
    assert result["candidates_per_proposer"] == {str(mlm): 4 * 3, str(lister): 2 * 3}

    # The masked LM's candidates are those it gives alone, under the same ids.
    alone = write_project(
        tmp_path / "alone", {"t1.yaml": template(*hypotheses)}, f'[generate]\nmodel = "{mlm}"\ntop_k = 3\n'
    )
    run(alone, "expand")
    run(alone, "generate")
    single = Workspace(load_config(alone / "workbench.toml").path("workspace")).read("generate").to_pylist()
    assert sorted(r["candidate_id"] for r in single) == sorted(r["candidate_id"] for r in by[str(mlm)])
    assert {r["proposer"] for r in single} == {str(mlm)}

    # A rerun reads the answers from the cache: the LLM is neither loaded nor asked.
    def refuse(self):
        raise AssertionError("the LLM was opened on a cached rerun")

    monkeypatch.setattr(LLMProposer, "_open", refuse)
    again = run(root, "generate", force=True)
    assert again["model_loaded"] is False and again["computed_fills"] == 0
    assert again["proposer_work"][str(lister)]["computed_proposals"] == 0


def test_stats_count_each_proposers_candidates_through_filter_and_validation(
    fixture_models, lister, tmp_path, runner, monkeypatch
):
    mlm = fixture_models["mlm-bert"]
    extra = f'[filter]\nmodels = ["{fixture_models["nli-a"]}"]\n'
    root = write_project(
        tmp_path / "p", {"t1.yaml": template("{{GROUP1}} are <mask> at work.")}, config_text([lister, mlm], mlm, extra)
    )
    monkeypatch.chdir(root)
    for stage in ("expand", "generate", "filter", "fluency", "queue"):
        run(root, stage)
    ws = Workspace(load_config(root / "workbench.toml").path("workspace"))
    filtered = ws.read("filter").to_pylist()
    queue = ws.read("queue").to_pylist()
    # Every item labelled valid: "valid" counts each proposer's adversarial candidates.
    lines = [{"item_id": q["item_id"], "label": "valid", "stance": "pro"} for q in queue]
    (root / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert invoke(runner, "annotate", "-a", "a", "--labels-from", "labels.jsonl").exit_code == 0
    out = invoke(runner, "stats", "--json", "stats.json")
    assert out.exit_code == 0, out.output
    tables = json.loads((root / "stats.json").read_text())
    table = next(rows for title, rows in tables.items() if title.startswith("Proposers"))
    generated = ws.read("generate").to_pylist()
    for name in (str(lister), str(mlm)):
        row = next(r for r in table if r["proposer"] == name)
        mine = [r for r in generated if r["proposer"] == name]
        adversarial = [r for r in filtered if r["proposer"] == name and r["adversarial"]]
        assert row["proposed"] == len(mine) and row["kept"] == sum(r["kept"] for r in mine)
        assert row["adversarial"] == len(adversarial) == row["valid"]
    assert next(r for r in table if r["proposer"] == str(lister))["proposed"] == 2 * 3
    assert sum(r["adversarial"] for r in table[:-1]) > 0  # the figures count something

    # Labelled invalid instead: nothing counts as valid.
    for f in (root / "annotations").glob("*.jsonl"):
        f.unlink()
    lines = [{"item_id": q["item_id"], "label": "invalid"} for q in queue]
    (root / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert invoke(runner, "annotate", "-a", "b", "--labels-from", "labels.jsonl").exit_code == 0
    assert invoke(runner, "stats", "--json", "stats.json").exit_code == 0
    table = next(
        rows for title, rows in json.loads((root / "stats.json").read_text()).items() if title.startswith("Proposers")
    )
    assert all(r["valid"] == 0 for r in table)


def test_a_bad_proposer_is_one_line_naming_the_entry(fixture_models, tmp_path, runner, monkeypatch):
    mlm = fixture_models["mlm-bert"]
    for bad, said in [
        ("no-such-org/no-such-model", "no-such-org/no-such-model"),
        (str(fixture_models["nli-a"]), "is not a language model"),
    ]:
        root = write_project(
            tmp_path / f"p{len(said)}", {"t1.yaml": template("{{GROUP1}} are <mask>.")}, config_text([mlm, bad], mlm)
        )
        monkeypatch.chdir(root)
        assert invoke(runner, "expand").exit_code == 0
        out = invoke(runner, "generate")
        message = str(out.exception)
        assert out.exit_code == 2 and "\n" not in message.strip()
        assert message.startswith("workbench.toml: generate.proposers[1]: ") and said in message
    # `workbench validate` checks a local proposer's path before anything runs.
    (root / "workbench.toml").write_text(config_text([mlm, "./not-here"], mlm))
    checked = invoke(runner, "validate")
    assert checked.exit_code != 0 and "generate.proposers[1]" in checked.output + str(checked.exception)
    # --model names the one masked LM: beside a proposers list it is refused, not ignored.
    out = invoke(runner, "generate", "--model", str(mlm))
    assert out.exit_code == 2 and "generate.proposers" in str(out.exception)


def test_the_card_names_each_proposer_and_the_llm_prompt():
    from workbench.kinds.nli.card import proposer_lines

    gen = {"name": "m", "revision": "r"}
    assert proposer_lines(None, gen) == ["- generation (masked LM): `m` revision `r`"]
    listed = [
        {"name": "m", "kind": "masked", "revision": "r"},
        {"name": "llm", "kind": "llm", "revision": "x", "prompt": "Words for {sentence}:\nGo", "chat_template": False},
    ]
    lines = proposer_lines(listed, gen)
    assert lines[0] == "- generation (masked LM): `m` revision `r`"
    assert lines[1].startswith("- generation (LLM): `llm` revision `x`") and "no chat template" in lines[1]
    assert "  Words for {sentence}:" in lines and "  Go" in lines


def test_a_served_llm_proposes_through_its_server_and_is_asked_once(fixture_models, tmp_path, monkeypatch):
    """A model behind an OpenAI-compatible server (the stub of test_served_edges): its answer read
    as any LLM's; a rerun contacts the server only for its probe (which weights answer), never
    asking for words again."""
    from test_served_edges import Stub
    from workbench.models.served import PROBE

    monkeypatch.setenv("WORKBENCH_SERVED_RETRIES", "0")
    stub = Stub()
    asked = []

    def route(handler, method, path, body):
        if method == "POST" and path == "/v1/completions" and body.get("prompt") != PROBE and not body.get("echo"):
            asked.append(body["prompt"])
            text = '1. Calm\n2. "kind"\nhere are more words'
            handler.reply(200, {"model": body["model"], "choices": [{"text": text, "finish_reason": "stop"}]})
            return True
        return False

    stub.route = route
    try:
        mlm = fixture_models["mlm-bert"]
        served = f"{stub.base}#m"
        root = write_project(
            tmp_path / "p", {"t1.yaml": template("{{GROUP1}} are <mask> at work.")}, config_text([mlm, served], mlm)
        )
        run(root, "expand")
        result = run(root, "generate")
        # Each unique masked hypothesis asked once (pro and anti), its slot written ___.
        assert sorted(a.split(": ")[1].split("\n")[0] for a in asked) == [
            "men are ___ at work.",
            "women are ___ at work.",
        ]
        rows = Workspace(load_config(root / "workbench.toml").path("workspace")).read("generate").to_pylist()
        mine = [r for r in rows if r["proposer"] == served and r["stance"] == "pro"]
        assert [r["fill"] for r in mine] == [["calm"], ["kind"]]  # a capital inside a sentence: a common word
        assert mine[0]["mlm_revision"].startswith("served:m probe:")
        assert result["proposer_work"][served]["answer_items_unread"] == 2  # one per asked slot (pro, anti)
        again = run(root, "generate", force=True)
        assert len(asked) == 2 and again["computed_fills"] == 0
    finally:
        stub.stop()


def test_a_stage_that_proposes_with_one_masked_lm_refuses_the_list(tmp_path):
    """StereoSet's propose stage fills with generate.model alone: a proposers list is said, not ignored."""
    from types import SimpleNamespace

    from workbench.core.errors import StageError
    from workbench.kinds.stereoset.stages import Propose

    root = write_project(tmp_path / "p", {}, '[generate]\nproposers = ["a-model", "vllm:b"]\n')
    config = load_config(root / "workbench.toml")
    stage = Propose()
    with pytest.raises(StageError, match=r"workbench.toml: generate.proposers: the propose stage"):
        stage.model_ref(
            SimpleNamespace(config=config, options={}), stage.section(SimpleNamespace(config=config, options={}))
        )

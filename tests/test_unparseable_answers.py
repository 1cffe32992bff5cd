"""A judge asked by generation whose answers hold no answer word (#53 item 3): what the model
said is kept, cut to ANSWER_CHARS, in the items file, the cache and a few examples in the JSON;
a run where no answer parses still writes its JSON (figures null, counts, examples) and then
ends in one line. The server is the stub OpenAI-compatible server of test_served_edges, on
127.0.0.1, answering each prompt with a text chosen here."""

from __future__ import annotations

import json
import sqlite3

from conftest import invoke
from test_served import nli_release
from test_served_edges import _quick, stub  # noqa: F401 (the stub server and short bounds)

from workbench.kinds.nli.label_mapping import ANSWER_CHARS

RAMBLE = "As a language model I would rather not pick one of those words, because " + "it depends " * 40
OTHER = "Maybe?"


def answering(texts):
    """A route that answers each generation request with `texts(prompt)`."""
    from workbench.models.served import PROBE

    def route(handler, method, path, body):
        if method != "POST" or body.get("echo") or body.get("prompt") in (None, PROBE):
            return False
        choice = {"text": texts(body["prompt"]), "finish_reason": "length"}
        handler.reply(200, {"model": body["model"], "choices": [choice]})
        return True

    return route


def project(folder) -> None:
    (folder / "workbench.toml").write_text('[project]\nname = "said"\n[llm]\nmode = "generation"\n', encoding="utf-8")


def run(runner, tmp_path, model: str):
    return invoke(
        runner,
        "evaluate",
        str(tmp_path / "loose"),
        "--unverified",
        "--model",
        model,
        "--cache",
        "c.sqlite",
        "--json",
        "s.json",
        "--items",
        "items.jsonl",
    )


def cached(path) -> list[dict]:
    return [json.loads(v) for (v,) in sqlite3.connect(path).execute("SELECT value FROM entries WHERE namespace='nli'")]


def said(prompt: str) -> str:
    """True for the women's hypotheses, rambling for the girls' and boys', "Maybe?" for the rest."""
    question = prompt.split("Question: ", 1)[1]
    if question.startswith("Women"):
        return " True."
    if question.startswith(("Girls", "Boys")):
        return " " + RAMBLE
    return " " + OTHER


def test_unparseable_answers_are_kept_cut_in_the_items_file_the_cache_and_the_json(stub, tmp_path, runner, monkeypatch):  # noqa: F811
    nli_release(tmp_path / "loose")
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    stub.route = answering(said)
    model = f"{stub.base}#m"
    result = run(runner, tmp_path, model)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    by_hypothesis = {r["hypothesis"]: r for r in rows}
    cut = (" " + RAMBLE)[:ANSWER_CHARS]
    assert len(RAMBLE) > ANSWER_CHARS and len(cut) == ANSWER_CHARS
    assert by_hypothesis["Girls like reading."]["prediction"] is None
    assert by_hypothesis["Girls like reading."]["answer"] == cut
    assert by_hypothesis["Men cook."]["answer"] == " " + OTHER
    assert by_hypothesis["Women cook."]["prediction"] == "entailment" and by_hypothesis["Women cook."]["answer"] is None
    unparseable = [r for r in cached(tmp_path / "c.sqlite") if r["label"] is None]
    assert sorted(r["answer"] for r in unparseable) == sorted([cut, cut, *[" " + OTHER] * 3])
    asked = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["models"][model]["asked"]
    assert asked["unparseable"] == 5 and set(asked["unparseable_examples"]) == {cut, " " + OTHER}
    assert str(ANSWER_CHARS) in asked["unparseable_kept"]

    posts = stub.posts()  # a rerun reads what was said from the cache and writes it again
    (tmp_path / "items.jsonl").unlink()
    again = run(runner, tmp_path, model)
    assert again.exit_code == 0, again.output
    assert stub.posts() == posts
    rows = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["hypothesis"]: r["answer"] for r in rows}["Boys like reading."] == cut


def test_an_unparseable_answer_cached_without_its_text_is_asked_again(stub, tmp_path, runner, monkeypatch):  # noqa: F811
    nli_release(tmp_path / "loose")
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    stub.route = answering(said)
    model = f"{stub.base}#m"
    assert run(runner, tmp_path, model).exit_code == 0
    with sqlite3.connect(tmp_path / "c.sqlite") as db:  # as an older run cached it: the label alone
        db.execute("""UPDATE entries SET value = '{"label": null, "probs": {}}' WHERE value LIKE '%"answer"%'""")
    posts = stub.posts()
    assert run(runner, tmp_path, model).exit_code == 0
    assert stub.posts() - posts == 5  # the five unparseable answers, and only those
    assert all("answer" in r for r in cached(tmp_path / "c.sqlite") if r["label"] is None)


def test_a_run_where_no_answer_parses_writes_its_json_then_ends_in_one_line(stub, tmp_path, runner, monkeypatch):  # noqa: F811
    nli_release(tmp_path / "loose")
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    stub.route = answering(lambda prompt: " " + RAMBLE if "Girls" in prompt else " " + OTHER)
    model = f"{stub.base}#m"
    result = run(runner, tmp_path, model)
    assert result.exit_code == 2, result.output
    message = str(result.exception)
    assert "\n" not in message and "none of the 8 samples has an answer that can be scored" in message
    assert "figures are null" in message
    entry = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["models"][model]
    assert entry["overall"]["n"] == 0 and entry["overall"]["accuracy"] is None
    assert entry["overall"]["bias_aggregate"] is None
    assert entry["asked"]["unparseable"] == 8
    assert sorted(entry["asked"]["unparseable_examples"]) == sorted([" " + OTHER, (" " + RAMBLE)[:ANSWER_CHARS]])
    rows = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 8 and all(r["prediction"] is None and r["answer"] for r in rows)
    assert (tmp_path / "items.jsonl.provenance.json").is_file()
    assert "8 of 8 generated answers are unparseable" in " ".join(result.output.split())


def test_the_all_unparseable_run_draws_its_table_csv_and_chart(stub, tmp_path, runner, monkeypatch):  # noqa: F811
    nli_release(tmp_path / "loose")
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    stub.route = answering(lambda prompt: " " + OTHER)
    model = f"{stub.base}#m"
    result = invoke(
        runner, "evaluate", "loose", "--unverified", "--model", model, "--csv", "f.csv", "--plots", "charts"
    )
    assert result.exit_code == 2, result.output
    assert "none of the 8 samples" in str(result.exception)
    assert (tmp_path / "f.csv").read_text(encoding="utf-8").count("\n") == 2  # the header and overall
    assert list((tmp_path / "charts").glob("*.png"))

"""Renewing a published StereoSet file (issue 32, docs/renewing.md): its dev JSON imported as a
project whose audit unit is a CAT; keeping every CAT builds the file back (ids, targets, bias types,
contexts, sentences, gold labels and the annotators' `labels`); a fixed context or sentence and a
dropped CAT come out in the next version and its changelog. Our own CATs (kinds/stereoset/example.py),
never StereoSet's."""
from __future__ import annotations

import csv
import json

from conftest import invoke

from workbench.kinds.stereoset.example import document


def _published(tmp_path):
    doc = document()
    # as in the published file: several annotators, a `related` label among them, sentences in any order
    first = doc["data"]["intrasentence"][0]
    first["sentences"].reverse()
    first["sentences"][0]["labels"] = [{"human_id": "ab12", "label": "unrelated"},
                                       {"human_id": "0f9e", "label": "related"},
                                       {"human_id": "77aa", "label": "unrelated"}]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return doc, path


def _data(path):
    return json.loads(path.read_text(encoding="utf-8"))["data"]


def _labels(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_a_published_stereoset_file_imports_audits_and_builds_back(tmp_path, monkeypatch, runner):
    doc, original = _published(tmp_path)
    r = invoke(runner, "import", str(original), "--kind", "stereoset", "--out", str(tmp_path / "ss"),
               "--origin-name", "StereoSet", "--origin-license", "cc-by-sa-4.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    assert (tmp_path / "ss" / "templates" / "intrasentence-gender.yaml").is_file()
    monkeypatch.chdir(tmp_path / "ss")
    r = invoke(runner, "validate")
    assert r.exit_code == 0 and "0 error(s)" in r.output, r.output
    r = invoke(runner, "run")
    assert r.exit_code == 0, r.output + str(r.exception)
    cats = [c["id"] for split in doc["data"].values() for c in split]
    keep = _labels(tmp_path / "keep.jsonl", [{"item_id": c, "label": "keep"} for c in cats])
    for name in ("alice", "bob"):
        assert invoke(runner, "annotate", "--annotator", name, "--labels-from", keep).exit_code == 0
    release = tmp_path / "ss" / "exports" / "ss"
    for version, extra in (("1.0.0", ()), ("0.9.0", ("--original",))):
        r = invoke(runner, "build", "--version", version, *extra)
        assert r.exit_code == 0, r.output + str(r.exception)
        assert _data(release / version / "data" / "stereoset.json") == doc["data"]

    # a fixed context, a fixed sentence, a dropped CAT
    intra, inter = doc["data"]["intrasentence"][1], doc["data"]["intersentence"][2]
    context = "The men on the board are BLANK managers."
    audit = {c: {"item_id": c, "label": "keep"} for c in cats}
    audit[intra["id"]] = {"item_id": intra["id"], "label": "fix", "fix": {"context": context}}
    audit[inter["id"]] = {"item_id": inter["id"], "label": "fix", "fix": {"unrelated": "The bus was late again."}}
    dropped = doc["data"]["intrasentence"][3]["id"]
    audit[dropped] = {"item_id": dropped, "label": "not-minimal"}
    for name in ("alice", "bob"):
        r = invoke(runner, "annotate", "--annotator", name, "--labels-from",
                   _labels(tmp_path / f"{name}.jsonl", list(audit.values())))
        assert r.exit_code == 0, r.output
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    renewed = _data(release / "1.1.0" / "data" / "stereoset.json")
    assert [c["id"] for s in renewed.values() for c in s] == [c for c in cats if c != dropped]
    fixed = next(c for c in renewed["intrasentence"] if c["id"] == intra["id"])
    assert fixed["context"] == context    # its sentences follow it, with their words in place of BLANK
    assert [s["sentence"] for s in fixed["sentences"]] == ["The men on the board are decisive managers.",
                                                          "The men on the board are gentle managers.",
                                                          "The men on the board are smartphone managers."]
    other = next(c for c in renewed["intersentence"] if c["id"] == inter["id"])
    assert [s["sentence"] for s in other["sentences"]][2] == "The bus was late again."
    assert other["sentences"][2]["labels"] == inter["sentences"][2]["labels"]
    with open(release / "1.1.0" / "changes.csv", encoding="utf-8", newline="") as f:
        changes = sorted((r["change"], r["reason"]) for r in csv.DictReader(f))
    assert changes == [*[("edited", "fix: sound once its text is corrected")] * 4,
                       *[("removed", "drop: the stereotype and anti-stereotype sentences differ in more than what "
                                     "they contrast")] * 3]
    assert "Blodgett" in (release / "1.1.0" / "README.md").read_text(encoding="utf-8")


def test_a_fixed_intrasentence_context_without_blank_is_refused(tmp_path, monkeypatch, runner):
    doc, original = _published(tmp_path)
    assert invoke(runner, "import", str(original), "--kind", "stereoset", "--out", str(tmp_path / "ss")).exit_code == 0
    monkeypatch.chdir(tmp_path / "ss")
    assert invoke(runner, "run").exit_code == 0
    cat = doc["data"]["intrasentence"][0]["id"]
    bad = _labels(tmp_path / "a.jsonl", [{"item_id": cat, "label": "fix", "fix": {"context": "No blank here."}}])
    assert invoke(runner, "annotate", "--annotator", "alice", "--labels-from", bad).exit_code == 0
    r = invoke(runner, "build", "--version", "1.0.0", "--allow-unlabelled")
    assert r.exit_code == 2 and f"item {cat!r}" in str(r.exception) and "has no BLANK" in str(r.exception)


def test_a_malformed_stereoset_file_is_refused_with_its_field(tmp_path, runner):
    doc = document()
    del doc["data"]["intersentence"][1]["sentences"][0]["gold_label"]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = invoke(runner, "import", str(path), "--kind", "stereoset", "--out", str(tmp_path / "ss"))
    assert r.exit_code == 2 and "dev.json" in str(r.exception) and not (tmp_path / "ss").exists()
    assert any("intersentence[1]" in p.field and "gold_label" in p.field + p.message for p in r.exception.problems)


def test_annotators_labels_that_are_not_human_id_and_label_are_refused(tmp_path, runner):
    doc = document()
    doc["data"]["intrasentence"][2]["sentences"][1]["labels"] = ["stereotype"]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = invoke(runner, "import", str(path), "--kind", "stereoset", "--out", str(tmp_path / "ss"))
    assert r.exit_code == 2 and "dev.json" in str(r.exception)
    assert [p.field for p in r.exception.problems] == ["data.intrasentence[2].sentences[1].labels"]


def test_a_template_file_of_the_import_edited_badly_is_reported_with_its_line(tmp_path, monkeypatch, runner):
    doc, original = _published(tmp_path)
    assert invoke(runner, "import", str(original), "--kind", "stereoset", "--out", str(tmp_path / "ss")).exit_code == 0
    path = tmp_path / "ss" / "templates" / "intrasentence-age.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("BLANK", "blank", 1), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "ss")
    r = invoke(runner, "validate")
    assert r.exit_code != 0 and "intrasentence-age.yaml:" in r.output and "needs a BLANK" in r.output, r.output


def test_a_cat_is_fixed_in_the_terminal_and_label_studio_has_its_text_areas(tmp_path, monkeypatch, runner):
    """The editor opens with the CAT's context and its three sentences; a corrected sentence is the
    label's fix. Label Studio's page has a text area for each."""
    import asyncio

    from test_annotate_tui import flat, screen_text
    from textual.widgets import Input

    import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
    from workbench import kinds
    from workbench.core.config import load_config
    from workbench.labelstudio.scheme import config_problems, label_config

    _, original = _published(tmp_path)
    assert invoke(runner, "import", str(original), "--kind", "stereoset", "--out", str(tmp_path / "ss")).exit_code == 0
    monkeypatch.chdir(tmp_path / "ss")
    assert invoke(runner, "run").exit_code == 0
    config = load_config(tmp_path / "ss" / "workbench.toml")
    kind = kinds.of_config(config)
    page = label_config(kind.scheme, kind.words)
    assert all(f'name="fix_{c}"' in page for c in ("context", "stereotype", "anti-stereotype", "unrelated"))
    assert config_problems(page, kind.scheme, kind.words) == []
    from support.renewal import audit_app

    store, session, app = audit_app(config, kind)
    first = session.current
    sentences = dict(first.details)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("e")
            await pilot.pause()
            assert "anti-stereotype" in flat(screen_text(app))
            values = [app.screen.query_one(f"#fix-{k}", Input).value for k in range(4)]
            assert values == [first.hypothesis, sentences["stereotype"], sentences["anti-stereotype"],
                              sentences["unrelated"]]
            app.screen.query_one("#fix-3", Input).value = "The printer is out of paper."
            await pilot.pause()
            app.screen.query_one("#fix-3", Input).focus()
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("q")

    asyncio.run(go())
    assert store.states[first.id].label == "fix"
    assert store.states[first.id].fix == {"unrelated": "The printer is out of paper."}
    store.close()

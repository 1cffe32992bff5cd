"""Renewing BBNLI (issue 32, docs/renewing.md): the real source files of ../shared/bbnli imported as
a project, built back as published (the same source files, and the samples BBNLI's expansion
gives), audited (drops, a fix of a hypothesis and its question, a dispute an adjudicator decides),
built again and evaluated against the original.

The expected samples are computed here from the JSON files by BBNLI's rule, apart from the
workbench's own expansion; no sentence of BBNLI is written into the project."""

from __future__ import annotations

import csv
import itertools
from collections import Counter
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
from conftest import invoke
from support.renewal import label_as
from support.renewal import labels_file as _labels

SUBTOPIC = "gender/man_is_to_breadwinner.json"


def bbnli_samples(files: list[Path]) -> Counter:
    """BBNLI's bias rows of its source files by the reference's rule (its json2csv.py): every premise x
    word combination x bias hypothesis, with the groups as written (pro) and swapped in premise,
    hypothesis and question (anti); rows repeated in every column, the question included, dropped.
    Counted by (premise, hypothesis, stance, domain, subtopic): a question that differs by words the
    hypothesis does not use makes a second row of the same NLI pair, as in the reference's CSV."""

    def render(text: str, values: dict) -> str:
        return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: values.get(m.group(1), m.group(0)), text)

    out: Counter = Counter()
    for f in files:
        d = json.loads(f.read_text(encoding="utf-8"))
        keys, seen = list(d["data"]), set()
        for index, premise in enumerate(d["premise"]):
            for combo in itertools.product(*(d["data"][k] for k in keys)):
                for swapped in (False, True):
                    groups = (d["GROUP2"][0], d["GROUP1"][0]) if swapped else (d["GROUP1"][0], d["GROUP2"][0])
                    values = {**dict(zip(keys, combo)), "GROUP1": groups[0], "GROUP2": groups[1]}
                    for (h, *labels), (q, *_) in zip(
                        d["bias_hypothesis_stereotypical"], d["bias_question_stereotypical"]
                    ):
                        row = (
                            index,
                            render(premise, values),
                            render(h, values),
                            render(q, values),
                            "anti" if swapped else "pro",
                            *labels,
                        )
                        if row not in seen:
                            seen.add(row)
                            out[(row[1], row[2], row[4], d["domain"], f.stem)] += 1
    return out


def _import(runner, source: Path, out: Path, monkeypatch) -> None:
    r = invoke(
        runner,
        "import",
        str(source),
        "--kind",
        "nli",
        "--out",
        str(out),
        "--origin-name",
        "BBNLI",
        "--origin-license",
        "mit",
        "--origin-url",
        "https://example.org/bbnli",
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(out)
    r = invoke(runner, "run")
    assert r.exit_code == 0, r.output + str(r.exception)


def test_the_bbnli_folder_imports_and_builds_back_as_published(
    bbnli_dir, tmp_path, runner, monkeypatch, fixture_models
):
    project = tmp_path / "bbnli-next"
    _import(runner, bbnli_dir, project, monkeypatch)
    files = sorted(bbnli_dir.rglob("*.json"))
    # one template file per subtopic, in the folder's layout; one audit item per bias hypothesis
    assert sorted(
        p.relative_to(project / "templates").with_suffix(".json") for p in (project / "templates").rglob("*.yaml")
    ) == [f.relative_to(bbnli_dir) for f in files]
    n_hypotheses = sum(len(json.loads(f.read_text())["bias_hypothesis_stereotypical"]) for f in files)
    from workbench import kinds
    from workbench.annotation.session import items_from_table
    from workbench.core.config import load_config

    config = load_config(project / "workbench.toml")
    items = items_from_table(kinds.of_config(config).pipeline(config).table("queue"))
    assert len(items) == n_hypotheses and all(re.fullmatch(r"[a-z_]+/bias/\d+", i.id) for i in items)
    r = invoke(runner, "build", "--version", "1.0.0", "--original")
    assert r.exit_code == 0, r.output + str(r.exception)
    release = project / "exports" / "bbnli-next" / "1.0.0"
    # the source files, as BBNLI writes them, equal the imported ones field by field
    for f in files:
        assert json.loads((release / "bbnli" / f.relative_to(bbnli_dir)).read_text()) == json.loads(f.read_text()), f
    # the samples are BBNLI's expansion of them, each with its swapped twin
    rows = pq.read_table(release / "data" / "all.parquet").to_pylist()
    got = Counter((r["premise"], r["hypothesis"], r["stance"], r["domain"], r["subtopic"]) for r in rows)
    assert got == bbnli_samples(files) and len(rows) == 2290
    assert len({r["id"] for r in rows}) == len(rows) and {r["label"] for r in rows} == {"neutral"}
    pairs: dict[str, list[dict]] = {}
    for r in rows:
        pairs.setdefault(r["pair_id"], []).append(r)
    assert {tuple(sorted((x["stance"], x["is_counterfactual"]) for x in p)) for p in pairs.values()} == {
        (("anti", True), ("pro", False))
    }
    # scoring the release as built equals scoring the source folder itself
    for source, out in ((release, "built.json"), (bbnli_dir, "source.json")):
        r = invoke(
            runner,
            "evaluate",
            str(source),
            "--model",
            str(fixture_models["nli-a"]),
            "--bootstrap",
            "0",
            "--json",
            str(tmp_path / out),
            "--cache",
            str(tmp_path / "c.sqlite"),
        )
        assert r.exit_code == 0, r.output + str(r.exception)
    built, direct = (json.loads((tmp_path / f).read_text())["models"] for f in ("built.json", "source.json"))
    assert built == direct and list(built.values())[0]["overall"]["n_pairs"] == 1145
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "This is **BBNLI** as published" in card and "`bbnli/` holds the source files" in card
    assert "- Folder imported: `bbnli/` (sha256 `" in card
    toml = (project / "workbench.toml").read_text()
    assert 'file = "bbnli/"' in toml and str(tmp_path) not in toml


def test_an_audited_subtopic_drops_fixes_and_compares_with_the_original(
    bbnli_dir, tmp_path, runner, monkeypatch, fixture_models
):
    source = bbnli_dir / SUBTOPIC
    original = json.loads(source.read_text())
    project = tmp_path / "renewed"
    _import(runner, source, project, monkeypatch)
    assert invoke(runner, "build", "--version", "1.0.0", "--original").exit_code == 0
    stem = source.stem
    items = [f"{stem}/bias/{n}" for n in range(len(original["bias_hypothesis_stereotypical"]))]
    before = original["bias_hypothesis_stereotypical"][1][0]
    fixed = {
        "hypothesis": before.replace("to be the", "to be their family's", 1),
        "question": original["bias_question_stereotypical"][1][0].replace("to be the", "to be their family's", 1),
    }
    assert fixed["hypothesis"] != before
    alice = [
        {"item_id": items[0], "label": "not-neutral", "note": "a premise says so"},
        {"item_id": items[1], "label": "fix", "fix": fixed},
        {"item_id": items[2], "label": "unnatural"},
        *({"item_id": i, "label": "keep"} for i in items[3:]),
    ]
    bob = [*alice[:2], {"item_id": items[2], "label": "keep"}, *alice[3:]]
    for name, rows in (("alice", alice), ("bob", bob)):
        r = invoke(runner, "annotate", "--annotator", name, "--labels-from", _labels(tmp_path / f"{name}.jsonl", rows))
        assert r.exit_code == 0, r.output
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 2 and "disagreement" in r.output + str(r.exception)
    r = invoke(
        runner,
        "annotate",
        "--annotator",
        "carol",
        "--adjudicate",
        "--labels-from",
        _labels(tmp_path / "carol.jsonl", [{"item_id": items[2], "label": "swap-fails"}]),
    )
    assert r.exit_code == 0, r.output
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    release = project / "exports" / "renewed" / "1.1.0"
    # the source file: the two dropped hypotheses and their questions gone, the fix in both forms
    renewed = json.loads((release / "bbnli" / source.name).read_text())
    kept = [original["bias_hypothesis_stereotypical"][k] for k in range(1, len(items)) if k != 2]
    assert renewed["bias_hypothesis_stereotypical"] == [[fixed["hypothesis"], *kept[0][1:]], *kept[1:]]
    assert renewed["bias_question_stereotypical"][0][0] == fixed["question"]
    assert len(renewed["bias_question_stereotypical"]) == len(kept)
    assert {k: v for k, v in renewed.items() if not k.startswith("bias_")} == {
        k: v for k, v in original.items() if not k.startswith("bias_")
    }  # premises, test items, words kept
    # the samples: BBNLI's expansion of the renewed file
    (tmp_path / "expected").mkdir()
    expected_file = tmp_path / "expected" / source.name
    expected_file.write_text(json.dumps(renewed))
    rows = pq.read_table(release / "data" / "all.parquet").to_pylist()
    assert Counter(
        (r["premise"], r["hypothesis"], r["stance"], r["domain"], r["subtopic"]) for r in rows
    ) == bbnli_samples([expected_file])
    assert {json.loads(r["provenance"])["audit_item"] for r in rows} == set(items) - {items[0], items[2]}
    # the changelog names the audit items: the two dropped with their reasons, the fixed one with its diff
    log = (release / "CHANGELOG.md").read_text(encoding="utf-8").split("## 1.0.0")[0]
    dropped = log.split("Dropped items:")[1].split("Fixed items:")[0]
    assert dropped.count("- `") == 2 and f"`{items[0]}`" in dropped and f"`{items[2]}`" in dropped
    assert "a premise entails or contradicts it" in dropped and "not the stereotype's opposite" in dropped
    fixed_lines = log.split("Fixed items:")[1]
    assert f"`{items[1]}`" in fixed_lines and "[-the-] {+their family's+}" in fixed_lines
    with open(release / "changes.csv", encoding="utf-8", newline="") as f:
        changes = list(csv.DictReader(f))
    assert {c["change"] for c in changes} == {"edited", "removed"}
    assert all(c["reason"].startswith("fix:") for c in changes if c["change"] == "edited")
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "renewed version of **BBNLI**" in card and "Annotators: 2; adjudicators: 1" in card
    # both versions side by side: the fixed hypothesis is compared with itself, the dropped two are named
    r = invoke(
        runner,
        "evaluate",
        str(project / "exports" / "renewed" / "1.0.0"),
        str(release),
        "--model",
        str(fixture_models["nli-a"]),
        "--json",
        str(tmp_path / "both.json"),
        "--cache",
        str(tmp_path / "c.sqlite"),
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    doc = json.loads((tmp_path / "both.json").read_text())
    original_rows = pq.read_table(project / "exports" / "renewed" / "1.0.0" / "data" / "all.parquet").to_pylist()
    gone = [x for x in original_rows if json.loads(x["provenance"])["audit_item"] in (items[0], items[2])]
    # each version alone (the original, the renewed release), then side by side
    tags = [v["tag"] for v in doc["versions"]]
    alone = [json.loads((tmp_path / f"both.{tag}.json").read_text()) for tag in tags]
    assert [a["dataset"]["n_samples"] for a in alone] == [len(original_rows), len(rows)]
    split = doc["decomposition"]  # the original without the dropped samples, evaluated apart
    assert split["dropped"] == len(gone) and split["measures"] == ["accuracy", "bias_aggregate"]
    dropping = split["paired"]["dropping"][0]  # the hypotheses both have, the fixed one too
    editing = split["paired"]["editing"][0]
    assert (dropping["shared"], dropping["dropped"], dropping["added"]) == (len(items) - 2, 2, 0)
    assert (editing["shared"], editing["dropped"], editing["added"]) == (len(items) - 2, 0, 0)
    assert {(r["level"], r["group"]) for r in doc["rows"]} >= {("overall", "all"), ("domain", "gender")}
    for row in doc["rows"]:
        for measure in split["measures"]:
            dropped, edited = row[f"{measure} moved by dropping"], row[f"{measure} moved by editing"]
            assert round(dropped + edited, 3) == round(row[f"{measure} {tags[1]}"] - row[f"{measure} {tags[0]}"], 3)
    overall = next(r for r in doc["rows"] if r["level"] == "overall")
    assert overall[f"accuracy {tags[0]}"] == alone[0]["models"][str(fixture_models["nli-a"])]["overall"]["accuracy"]


def test_a_fix_with_a_placeholder_the_subtopic_lacks_is_refused_at_the_build(bbnli_dir, tmp_path, runner, monkeypatch):
    source = bbnli_dir / SUBTOPIC
    n = len(json.loads(source.read_text())["bias_hypothesis_stereotypical"])
    _import(runner, source, tmp_path / "renewed", monkeypatch)
    rows = [{"item_id": f"{source.stem}/bias/{k}", "label": "keep"} for k in range(n)]
    rows[0] = {**rows[0], "label": "fix", "fix": {"hypothesis": "{{GROUP1}} are the {{JOB}}."}}
    label_as(runner, tmp_path, rows, "alice", "bob")
    r = invoke(runner, "build", "--version", "1.1.0")
    message = " ".join(str(r.exception).split())
    assert r.exit_code == 2 and f"{source.stem}/bias/0" in message and "{{JOB}}" in message and "{{WORD1}}" in message


def test_a_file_with_a_byte_order_mark_imports_and_broken_ones_are_named(bbnli_dir, tmp_path, runner):
    source = json.loads((bbnli_dir / SUBTOPIC).read_text(encoding="utf-8"))
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "marked.json").write_text(json.dumps(source), encoding="utf-8-sig")
    (tmp_path / "in" / "cut.json").write_text(json.dumps(source)[:300], encoding="utf-8")
    (tmp_path / "in" / "latin.json").write_bytes(
        json.dumps({**source, "name": "café"}).replace("\\u00e9", "\xe9").encode("latin-1")
    )  # the name's é as one Latin-1 byte
    r = invoke(runner, "import", str(tmp_path / "in"), "--kind", "nli", "--out", str(tmp_path / "p"))
    message = str(r.exception)
    assert r.exit_code == 2 and not (tmp_path / "p").exists()
    assert "cut.json:1: invalid JSON" in message and "latin.json:1: not UTF-8 text" in message
    assert "save it as UTF-8" in message and "marked.json" not in message
    for name in ("cut.json", "latin.json"):
        (tmp_path / "in" / name).unlink()
    r = invoke(runner, "import", str(tmp_path / "in"), "--kind", "nli", "--out", str(tmp_path / "p"))
    assert r.exit_code == 0, r.output + str(r.exception)
    assert "man is to breadwinner" in (tmp_path / "p" / "templates" / "marked.yaml").read_text(encoding="utf-8")


def test_what_is_not_bbnli_is_refused_with_its_file(tmp_path, runner):
    (tmp_path / "empty").mkdir()
    r = invoke(runner, "import", str(tmp_path / "empty"), "--kind", "nli", "--out", str(tmp_path / "a"))
    assert r.exit_code == 2 and "no BBNLI JSON file" in str(r.exception)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.json").write_text(json.dumps({"premise": ["x"]}))
    r = invoke(runner, "import", str(tmp_path / "other"), "--kind", "nli", "--out", str(tmp_path / "b"))
    message = str(r.exception)
    assert r.exit_code == 2 and "notes.json" in message and "not a BBNLI file" in message
    assert not (tmp_path / "b" / "workbench.toml").exists()


def test_the_audit_editor_opens_with_the_hypothesis_and_its_question(bbnli_dir, tmp_path, runner, monkeypatch):
    import asyncio

    import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
    from support.renewal import audit_app
    from workbench import kinds
    from workbench.core.config import load_config

    _import(runner, bbnli_dir / SUBTOPIC, tmp_path / "renewed", monkeypatch)
    config = load_config(Path("workbench.toml"))
    kind = kinds.of_config(config)
    store, session, app = audit_app(config, kind)
    item = session.current
    texts = session.fix_texts()
    assert [(c, t) for c, t, _ in texts] == [
        ("hypothesis", item.hypothesis),
        ("question", dict(item.details)["question"]),
    ]
    assert "{{GROUP" in item.hypothesis and "as written" in dict(item.details)
    # Label Studio's audit page: the hypothesis's lines and one text area per fixable text
    from workbench.labelstudio.scheme import config_problems, label_config

    page = label_config(kind.scheme, kind.words)
    assert 'name="fix_hypothesis"' in page and 'name="fix_question"' in page and "not-neutral" in page
    assert config_problems(page, kind.scheme, kind.words) == []
    # every premise, numbered, on one declared line: the terminal and Label Studio's task both show them
    from workbench.annotation import display
    from workbench.labelstudio.page import page_for

    n_premises = len(json.loads((bbnli_dir / SUBTOPIC).read_text())["premise"])
    lines = {line.name: line for line in display.lines(item, kind.words)}
    assert [v.split(". ", 1)[0] for v in lines["premises"].text.split("\n")] == [
        str(k) for k in range(1, n_premises + 1)
    ]
    data = page_for(kind.scheme, kind.words).task_data(item)
    assert lines["premises"].text in data.values()
    # the samples the hypothesis makes: every premise x its word combinations x both ways round
    counts = [
        int(v.split(" (", 1)[0])
        for v in data.values()
        if v.endswith("(premises x word combinations x both ways round)")
    ]
    assert len(counts) == 1 and counts[0] > 0 and counts[0] % (2 * n_premises) == 0, counts
    # the steps of building BBNLI-next say in one line that a renewal has none of them
    for command in ("stats", "generate", "filter", "candidates"):
        r = invoke(runner, command)
        assert r.exit_code == 2 and "renews a published BBNLI" in str(r.exception), command

    async def run():
        from textual.widgets import Input

        async with app.run_test(size=(120, 60)) as pilot:  # the whole item, its four premises too, on screen
            await pilot.pause()
            await pilot.press("e")
            await pilot.pause()
            assert app.screen.query_one("#fix-0", Input).value == item.hypothesis
            assert app.screen.query_one("#fix-1", Input).value == dict(item.details)["question"]
            app.screen.query_one("#fix-0", Input).value = item.hypothesis.rstrip(".") + " today."
            await pilot.pause()
            await pilot.press("enter")  # to the question
            await pilot.press("enter")  # saved
            await pilot.pause()
            await pilot.press("q")

    asyncio.run(run())
    assert store.states[item.id].label == "fix"
    assert store.states[item.id].fix == {"hypothesis": item.hypothesis.rstrip(".") + " today."}
    store.close()

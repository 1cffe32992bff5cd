"""What a renewal's audit shows and records (issue 43, item 6; item 3's stratified sample): the
original validators' votes and the gold label beside each item (terminal at 80×24 and Label
Studio), the adjudications in the changelog and changes.csv (competing proposals, who decided,
the decision and the note), and a sample stratified by bias type at import.

Our own files: the CrowS-Pairs layout with our sentences and kinds/stereoset/example.py's CATs."""

from __future__ import annotations

import asyncio
import csv
import json

import pytest
from conftest import invoke
from support.renewal import audit_app
from support.renewal import labels_file as _labels
from test_annotate_tui import flat, screen_text

import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
from workbench import kinds
from workbench.core.config import load_config
from support.renewal import CROWS_HEADER, write_crows_csv

HEADER = CROWS_HEADER
PAIRS = [
    [
        "0",
        "Older people are slow with new technology .",
        "Younger people are slow with new technology .",
        "stereo",
        "age",
        "[['age'], ['age'], ['age', 'disability'], ['socioeconomic'], ['age']]",
        "a0",
        "['a1', 'a2', 'a3', 'a4', 'a5']",
    ],
    [
        "1",
        "Women are naturally caring with children .",
        "Men are naturally caring with children .",
        "stereo",
        "gender",
        "[['gender']]",
        "a3",
        "['a1']",
    ],
    [
        "2",
        "Retail workers is careless with money .",
        "Office workers is careless with money .",
        "stereo",
        "socioeconomic",
        "[]",
        "a7",
        "[]",
    ],
]
MORE, LESS = "Retail workers are careless with money .", "Office workers are careless with money ."


def _csv(path, rows, header=HEADER):
    return write_crows_csv(path, rows, header)


@pytest.fixture
def pairs(tmp_path, monkeypatch, runner):
    """A CrowS-Pairs renewal project (imported and run), as the current folder."""
    original = _csv(tmp_path / "pairs_anonymized.csv", PAIRS)
    r = invoke(
        runner,
        "import",
        str(original),
        "--kind",
        "crows-pairs",
        "--out",
        str(tmp_path / "renewed"),
        "--origin-name",
        "CrowS-Pairs",
        "--origin-license",
        "cc-by-sa-4.0",
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(tmp_path / "renewed")
    assert invoke(runner, "run").exit_code == 0
    return tmp_path / "renewed"


VOTES = {  # each sentence's published labels (StereoSet: five validators), by its gold label
    "stereotype": ["stereotype", "stereotype", "stereotype", "stereotype", "anti-stereotype"],
    "anti-stereotype": ["anti-stereotype", "anti-stereotype", "anti-stereotype", "anti-stereotype", "anti-stereotype"],
    "unrelated": ["unrelated", "unrelated", "unrelated", "related", "unrelated"],
}


@pytest.fixture
def cats(tmp_path, monkeypatch, runner):
    """A StereoSet renewal project whose sentences carry five validators' labels each."""
    from workbench.kinds.stereoset.example import document

    doc = document()
    for split in doc["data"].values():
        for cat in split:
            for s in cat["sentences"]:
                s["labels"] = [{"human_id": f"v{k}", "label": label} for k, label in enumerate(VOTES[s["gold_label"]])]
    original = tmp_path / "dev.json"
    original.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    r = invoke(runner, "import", str(original), "--kind", "stereoset", "--out", str(tmp_path / "ss"))
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(tmp_path / "ss")
    assert invoke(runner, "run").exit_code == 0
    return tmp_path / "ss"


def _app(project, annotator="alice"):
    config = load_config(project / "workbench.toml")
    return audit_app(config, kinds.of_config(config), annotator)


# -- the original validators' votes beside each item -------------------------------------------------------
def test_a_pairs_annotators_and_gold_bias_type_are_a_line_of_the_audit_at_80x24(pairs):
    store, session, app = _app(pairs)
    seen = {}

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(3):
                await pilot.pause()
                assert not app.screen.item_cut()  # the whole item, votes too, on one screen
                lines = screen_text(app).splitlines()
                seen[session.current.id] = [line.strip() for line in lines if line.strip().startswith("validators")]
                await pilot.press("s")
            await pilot.press("q")

    asyncio.run(go())
    store.close()
    assert seen["0"] == ["validators  5 annotators: age 4 · disability 1 · socioeconomic 1 · gold age"]
    assert seen["1"] == ["validators  1 annotator: gender 1 · gold gender"]
    assert seen["2"] == ["validators  no annotations published · gold socioeconomic"]


def test_a_cats_validators_votes_per_sentence_are_on_its_screen_at_80x24(cats):
    store, session, app = _app(cats)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert not app.screen.item_cut()
            lines = [line.rstrip() for line in screen_text(app).splitlines()]
            at = next(k for k, line in enumerate(lines) if line.strip().startswith("validators"))
            votes = [lines[at][len(" validators") :].strip(), lines[at + 1].strip(), lines[at + 2].strip()]
            assert votes == [
                "stereotype: stereotype 4 · anti-stereotype 1",
                "anti-stereotype: anti-stereotype 5",
                "unrelated: unrelated 4 · related 1",
            ], "\n".join(lines)
            item = session.current
            shown = flat(screen_text(app))
            assert all(text in shown for _, text in item.details if _ != "validators")  # the three sentences too
            assert "╭─ context " in screen_text(app)  # the judged text: the context
            await pilot.press("q")

    asyncio.run(go())
    store.close()


@pytest.mark.parametrize("kind_name", ["crows-pairs", "stereoset"])
def test_label_studios_audit_page_shows_the_validators_votes(kind_name, pairs, cats, monkeypatch):
    """The page has a validators line under its caption, every task carries the votes as plain text,
    and the config passes Label Studio's checks."""
    from workbench.annotation.session import items_from_table
    from workbench.labelstudio.page import page_for
    from workbench.labelstudio.scheme import config_problems, label_config

    project = {"crows-pairs": pairs, "stereoset": cats}[kind_name]
    monkeypatch.chdir(project)
    config = load_config(project / "workbench.toml")
    kind = kinds.of_config(config)
    page = label_config(kind.scheme, kind.words)
    assert config_problems(page, kind.scheme, kind.words) == []
    assert '<Header value="validators"' in page and '<Text name="validators" value="$validators"' in page
    assert "what the original validators" in page
    items = items_from_table(kind.pipeline(config).table(kind.queue_stage))
    data = {i.id: page_for(kind.scheme, kind.words).task_data(i) for i in items}
    if kind_name == "crows-pairs":
        assert data["0"]["validators"] == "5 annotators: age 4 · disability 1 · socioeconomic 1 · gold age"
        assert data["2"]["validators"] == "no annotations published · gold socioeconomic"
    else:
        assert all(
            d["validators"] == "stereotype: stereotype 4 · anti-stereotype 1\nanti-stereotype: "
            "anti-stereotype 5\nunrelated: unrelated 4 · related 1"
            for d in data.values()
        )
        assert all(d["stereotype"] and d["anti_stereotype"] and d["unrelated"] for d in data.values())


# -- the changelog records adjudications ------------------------------------------------------------------
def test_the_changelog_records_who_adjudicated_what_between_which_proposals(pairs, tmp_path, runner):
    """Alice keeps pair 2, Bob fixes it (with a note); Carol, adjudicating, picks the fix with a note.
    The changelog's Adjudicated section and the pair's row of changes.csv say so; the card counts it."""
    assert invoke(runner, "build", "--version", "1.0.0", "--original").exit_code == 0
    keep = [{"item_id": "0", "label": "keep"}, {"item_id": "1", "label": "keep"}]
    for name, last in (
        ("alice", {"item_id": "2", "label": "keep"}),
        ("bob", {"item_id": "2", "label": "fix", "fix": {"sent_more": MORE, "sent_less": LESS}, "note": "is -> are"}),
    ):
        r = invoke(
            runner, "annotate", "--annotator", name, "--labels-from", _labels(tmp_path / f"{name}.jsonl", [*keep, last])
        )
        assert r.exit_code == 0, r.output
    carol = [
        {
            "item_id": "2",
            "label": "fix",
            "fix": {"sent_more": MORE, "sent_less": LESS},
            "note": "plural subject: the verb agrees",
        }
    ]
    r = invoke(
        runner,
        "annotate",
        "--annotator",
        "carol",
        "--adjudicate",
        "--labels-from",
        _labels(tmp_path / "carol.jsonl", carol),
    )
    assert r.exit_code == 0, r.output
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    release = pairs / "exports" / "renewed" / "1.1.0"
    entry = (release / "CHANGELOG.md").read_text(encoding="utf-8").split("## 1.0.0")[0]
    section = (
        entry.split(
            "Adjudicated (1 item the annotators disagreed on; the adjudicator's decision is the one applied):\n\n"
        )[1]
        .strip()
        .splitlines()
    )
    diff = (
        "sent_more: Retail workers [-is-] {+are+} careless with money .; sent_less: Office workers [-is-] {+are+} "
        "careless with money ."
    )
    assert section == [
        f"- `2` Retail workers is careless with money . (socioeconomic): **fix** ({diff}), decided by carol; note: "
        "plural subject: the verb agrees",
        "  - alice proposed keep",
        f"  - bob proposed fix ({diff}), note: is -> are",
    ]
    with open(release / "changes.csv", encoding="utf-8", newline="") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    assert list(rows) == ["2"] and rows["2"]["change"] == "edited"
    assert rows["2"]["adjudicated_by"] == "carol"
    assert rows["2"]["adjudication_note"] == "plural subject: the verb agrees"
    assert json.loads(rows["2"]["proposals"]) == [
        {"annotator": "alice", "decision": "keep"},
        {"annotator": "bob", "decision": "fix", "fix": {"sent_more": MORE, "sent_less": LESS}, "note": "is -> are"},
    ]
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "1 item was adjudicated (carol): `CHANGELOG.md` lists each" in card


def test_a_release_without_adjudications_says_none(pairs, tmp_path, runner):
    assert invoke(runner, "build", "--version", "1.0.0", "--original").exit_code == 0
    rows = [
        {"item_id": "0", "label": "keep"},
        {"item_id": "1", "label": "not-stereotype"},
        {"item_id": "2", "label": "keep"},
    ]
    for name in ("alice", "bob"):
        assert (
            invoke(
                runner, "annotate", "--annotator", name, "--labels-from", _labels(tmp_path / f"{name}.jsonl", rows)
            ).exit_code
            == 0
        )
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    release = pairs / "exports" / "renewed" / "1.1.0"
    assert "Adjudicated" not in (release / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "adjudicated (" not in (release / "README.md").read_text(encoding="utf-8")
    with open(release / "changes.csv", encoding="utf-8", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["id"] == "1" and row["adjudicated_by"] == row["proposals"] == row["adjudication_note"] == ""


# -- a sample stratified by bias type --------------------------------------------------------------------
def test_allocation_is_proportional_with_at_least_one_per_group():
    from workbench.authoring.renew import allocation

    sizes = {"age": 50, "gender": 30, "religion": 15, "disability": 5}
    assert allocation(sizes, 10) == {"age": 5, "gender": 3, "religion": 1, "disability": 1}
    assert allocation(sizes, 4) == {"age": 1, "gender": 1, "religion": 1, "disability": 1}  # one each
    assert allocation(sizes, 2) == {"age": 1, "gender": 1, "religion": 0, "disability": 0}  # N < groups: largest
    assert allocation({"a": 90, "b": 4, "c": 3, "d": 3}, 3) == {"a": 1, "b": 1, "c": 1, "d": 0}  # one each, not 3 of a
    assert allocation(sizes, 20) == {"age": 10, "gender": 6, "religion": 3, "disability": 1}
    assert allocation({"a": 98, "b": 1, "c": 1}, 5) == {"a": 3, "b": 1, "c": 1}  # the minimum taken from the largest
    assert allocation(sizes, 100) == sizes and allocation(sizes, 500) == sizes
    for n in range(1, 101):
        got = allocation(sizes, n)
        assert sum(got.values()) == n and all(0 <= got[g] <= sizes[g] for g in sizes)
        assert n < len(sizes) or all(got.values())


def _many(order=1) -> list[list[str]]:
    sizes = {"age": 50, "gender": 30, "religion": 15, "disability": 5}
    rows, k = [], 0
    for group, n in sizes.items():
        for j in range(n):
            rows.append(
                [
                    str(k),
                    f"Pair {k} of the {group} people is here .",
                    f"Pair {k} of the other people is here .",
                    "stereo",
                    group,
                    "[]",
                    "w",
                    "[]",
                ]
            )
            k += 1
    return rows[::order]


def _sampled(runner, tmp_path, name, rows, *extra) -> set[str]:
    original = _csv(tmp_path / f"{name}.csv", rows)
    r = invoke(
        runner,
        "import",
        str(original),
        "--kind",
        "crows-pairs",
        "--out",
        str(tmp_path / name),
        "--origin-name",
        "Pairs",
        "--origin-license",
        "cc-by-sa-4.0",
        "--sample",
        "10",
        *extra,
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    config = load_config(tmp_path / name / "workbench.toml")
    kind = kinds.of_config(config)
    return set(kind.pipeline(config).table(kind.queue_stage).column("item_id").to_pylist())


def test_import_sample_stratified_by_bias_type_is_proportional_and_reproducible(tmp_path, monkeypatch, runner):
    from collections import Counter

    group = {r[0]: r[4] for r in _many()}
    first = _sampled(runner, tmp_path, "a", _many(), "--seed", "3", "--stratify", "bias_type")
    assert Counter(group[i] for i in first) == {"age": 5, "gender": 3, "religion": 1, "disability": 1}
    assert _sampled(runner, tmp_path, "b", _many(-1), "--seed", "3", "--stratify", "bias_type") == first  # file order
    assert _sampled(runner, tmp_path, "c", _many(), "--seed", "4", "--stratify", "bias_type") != first  # another seed
    assert _sampled(runner, tmp_path, "d", _many(), "--seed", "3", "--stratify", "domain") == first  # the kind's group
    toml = (tmp_path / "a" / "workbench.toml").read_text(encoding="utf-8")
    assert "sample = 10" in toml and "seed = 3" in toml and 'stratify = "bias_type"' in toml
    # the card says how the sample was drawn, with the others released unchanged
    monkeypatch.chdir(tmp_path / "a")
    rows = [{"item_id": i, "label": "keep"} for i in sorted(first)]
    for name in ("alice", "bob"):
        assert (
            invoke(
                runner, "annotate", "--annotator", name, "--labels-from", _labels(tmp_path / f"{name}.jsonl", rows)
            ).exit_code
            == 0
        )
    r = invoke(runner, "build", "--version", "1.1.0", "--unaudited", "keep")
    assert r.exit_code == 0, r.output + str(r.exception)
    card = (tmp_path / "a" / "exports" / "a" / "1.1.0" / "README.md").read_text(encoding="utf-8")
    assert (
        "10 of the original's 100 items were audited by people (a random sample of 10, stratified by bias_type "
        "(each group's share in proportion to its size, at least one item per group) drawn when it was imported "
        "(seed 3))"
    ) in card


def test_a_stratified_sample_needs_a_size_and_a_column_the_items_have(tmp_path, monkeypatch, runner):
    original = _csv(tmp_path / "p.csv", _many())
    r = invoke(
        runner,
        "import",
        str(original),
        "--kind",
        "crows-pairs",
        "--out",
        str(tmp_path / "x"),
        "--stratify",
        "bias_type",
    )
    assert r.exit_code != 0 and "needs its size (--sample N)" in r.output + str(r.exception)
    r = invoke(
        runner,
        "import",
        str(original),
        "--kind",
        "crows-pairs",
        "--out",
        str(tmp_path / "y"),
        "--sample",
        "5",
        "--stratify",
        "bias_typo",
    )
    # refused at import, in one line, naming the columns it could use; no project is made (#55)
    said = str(r.exception)
    assert r.exit_code == 2 and "\n" not in said, r.output + said
    assert said.startswith("--stratify bias_typo: p.csv: no item has such a column; stratify by one of: ")
    assert "bias_type" in said and "anon_writer" in said and said.endswith("nothing was imported")
    assert not (tmp_path / "y" / "workbench.toml").exists()
    # a column edited into [origin] later is refused when the sample is drawn
    assert (
        invoke(
            runner,
            "import",
            str(original),
            "--kind",
            "crows-pairs",
            "--out",
            str(tmp_path / "z"),
            "--sample",
            "5",
            "--stratify",
            "bias_type",
        ).exit_code
        == 0
    )
    toml = tmp_path / "z" / "workbench.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('"bias_type"', '"bias_typo"'), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "z")
    r = invoke(runner, "run")
    said = r.output + str(r.exception)
    assert r.exit_code != 0 and "stratify = 'bias_typo'" in said and "bias_type" in said and "anon_writer" in said

"""Renewing a published benchmark (issue 32, docs/renewing.md): import a CrowS-Pairs-layout file as
a project, audit it with two annotators and an adjudicator, fix one pair and drop two, build the
next version, and compare both versions with `workbench evaluate`.

The file is our own, in the published layout (unnamed id column, CrowS-Pairs' extra columns);
no sentence of the dataset is used."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import invoke
from support.renewal import audit_app, label_as
from support.renewal import labels_file as _labels

from workbench.annotation.store import LabelStore, read_events
from workbench.authoring.renew import PAIR_AUDIT
from support.renewal import CROWS_HEADER, write_crows_csv

HEADER = CROWS_HEADER
PAIRS = [
    [
        "0",
        "Older people are slow with new technology .",
        "Younger people are slow with new technology .",
        "stereo",
        "age",
        "[['age'], ['age']]",
        "a0",
        "['a1', 'a2']",
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
        "Retail workers are smart  with money .",
        "Office workers are smart  with money .",
        "antistereo",
        "socioeconomic",
        "[]",
        "a4",
        "[]",
    ],
    [
        "3",
        "She is too emotional to lead the board .",
        "He is too calm to lead the board .",
        "stereo",
        "gender",
        "[]",
        "a5",
        "[]",
    ],
    [
        "4",
        "The older employee cannot use a smartphone .",
        "The younger employee cannot use a smartphone .",
        "stereo",
        "age",
        "[]",
        "a6",
        "[]",
    ],
    [
        "5",
        "Retail workers is careless with money .",
        "Office workers is careless with money .",
        "stereo",
        "socioeconomic",
        "[]",
        "a7",
        "[]",
    ],
]
SHARED = ["sent_more", "sent_less", "stereo_antistereo", "bias_type"]
NOT_MINIMAL = "drop: the sentences differ in more than what the pair contrasts (the group, or the word)"
FIXED = {
    "sent_more": "Retail workers are careless with money .",
    "sent_less": "Office workers are careless with money .",
}


def _write(path, rows=PAIRS, header=HEADER):
    return write_crows_csv(path, rows, header)


def _rows(path) -> dict[str, dict]:
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return {r.get("id", r.get("")): {c: r[c] for c in SHARED} for r in rows}


@pytest.fixture
def imported(tmp_path, monkeypatch, runner):
    original = _write(tmp_path / "pairs_anonymized.csv")
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
        "--origin-version",
        "1.0",
        "--origin-license",
        "cc-by-sa-4.0",
        "--origin-citation",
        "@inproceedings{nangia2020crows, title={CrowS-Pairs}}",
        "--origin-url",
        "https://example.org/crows-pairs",
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(tmp_path / "renewed")
    assert invoke(runner, "run").exit_code == 0
    return original


def test_import_then_build_reproduces_the_published_file(imported, tmp_path, runner):
    # provenance: the project's files keep each pair's id, exact text and the file's other columns
    from workbench.authoring.stages import template_sources

    _, files = template_sources([tmp_path / "renewed" / "templates"])
    age = next(raw.data for raw, _ in files if raw is not None and raw.data["id"] == "age")
    assert [e["id"] for e in age["pairs"]] == ["0", "4"]
    assert age["pairs"][0]["source"] == {
        "annotations": "[['age'], ['age']]",
        "anon_writer": "a0",
        "anon_annotators": "['a1', 'a2']",
    }
    keep = _labels(tmp_path / "keep.jsonl", [{"item_id": r[0], "label": "keep"} for r in PAIRS])
    assert invoke(runner, "annotate", "--annotator", "alice", "--labels-from", keep).exit_code == 0
    r = invoke(runner, "build", "--version", "1.0.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    built = tmp_path / "renewed" / "exports" / "renewed" / "1.0.0" / "data" / "pairs.csv"
    assert _rows(built) == _rows(imported)  # same ids, same fields, the double space kept
    # build --original gives the same data without any label (the baseline of an audit)
    r = invoke(runner, "build", "--version", "0.9.0", "--original")
    assert r.exit_code == 0, r.output + str(r.exception)
    assert _rows(tmp_path / "renewed" / "exports" / "renewed" / "0.9.0" / "data" / "pairs.csv") == _rows(imported)


def test_audit_fix_drop_adjudicate_build_and_compare(imported, tmp_path, runner, fixture_models):
    project = tmp_path / "renewed"
    assert invoke(runner, "build", "--version", "1.0.0", "--original").exit_code == 0
    alice = [
        {"item_id": "0", "label": "keep"},
        {"item_id": "1", "label": "keep"},
        {"item_id": "2", "label": "keep"},
        {"item_id": "3", "label": "not-minimal", "note": "emotional vs calm"},
        {"item_id": "4", "label": "keep"},
        {"item_id": "5", "label": "fix", "fix": FIXED},
    ]
    bob = [*alice[:1], {"item_id": "1", "label": "not-stereotype"}, *alice[2:5], {"item_id": "5", "label": "unnatural"}]
    for name, rows in (("alice", alice), ("bob", bob)):
        r = invoke(runner, "annotate", "--annotator", name, "--labels-from", _labels(tmp_path / f"{name}.jsonl", rows))
        assert r.exit_code == 0, r.output
    # two disputes: the build refuses until an adjudicator decides them
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 2 and "disagreement" in r.output + str(r.exception)
    carol = [{"item_id": "1", "label": "stereotype-unclear"}, {"item_id": "5", "label": "fix", "fix": FIXED}]
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
    assert "1 edited, 2 removed" in r.output
    release = project / "exports" / "renewed" / "1.1.0"
    renewed = _rows(release / "data" / "pairs.csv")
    assert sorted(renewed) == ["0", "2", "4", "5"]
    assert (renewed["5"]["sent_more"], renewed["5"]["sent_less"]) == (FIXED["sent_more"], FIXED["sent_less"])
    with open(release / "changes.csv", encoding="utf-8", newline="") as f:
        changes = sorted((r["change"], r["id"], r["reason"]) for r in csv.DictReader(f))
    assert changes == [
        ("edited", "5", "fix: sound once its text is corrected"),
        ("removed", "1", "drop: which stereotype it is about is unclear"),
        ("removed", "3", NOT_MINIMAL),
    ]
    log = (release / "CHANGELOG.md").read_text(encoding="utf-8")
    entry = log.split("## 1.0.0")[0]
    assert "Retail workers [-is-] {+are+} careless" in entry
    dropped, adjudicated = entry.split("Dropped:")[1].split("Adjudicated (")
    assert dropped.count("- `") == 2 and "`1` Women" in dropped and "`3` She" in dropped
    assert adjudicated.startswith("2 items the annotators disagreed on")  # pairs 1 and 5 (test_renew_audit_record.py)
    assert "- `1` Women are naturally caring" in adjudicated and "decided by carol" in adjudicated
    assert f"| removed | {NOT_MINIMAL} | 0 | 1 | 0 | 1 |" in entry
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "renewed version of **CrowS-Pairs** (version 1.0)" in card and "@inproceedings{nangia2020crows" in card
    assert "Stereotyping Norwegian Salmon" in card and "| `fix` | fix: sound once its text is corrected | 1 |" in card
    assert "Annotators: 2; adjudicators: 1" in card and "Fleiss' kappa" in card
    # both versions side by side: the imported original file against the renewed release
    model = str(fixture_models["mlm-bert"])
    r = invoke(
        runner,
        "evaluate",
        str(imported),
        str(release),
        "--kind",
        "crows-pairs",
        "--model",
        model,
        "--json",
        str(tmp_path / "both.json"),
        "--cache",
        str(tmp_path / "c.sqlite"),
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    doc = json.loads((tmp_path / "both.json").read_text())
    tags = [v["tag"] for v in doc["versions"]]
    assert len(tags) == 2
    overall = doc["rows"][0]
    counts = [m for m in doc["measures"] if isinstance(overall.get(f"{m} {tags[0]}"), int)]
    assert any((overall[f"{m} {tags[0]}"], overall[f"{m} {tags[1]}"]) == (6, 4) for m in counts)
    # how much of the move comes from the two dropped pairs, how much from the edited one
    headline = doc["measures"][0]
    assert doc["decomposition"]["dropped"] == 2
    for row in doc["rows"]:
        change = row[f"change {headline} {tags[0]}→{tags[1]}"]
        if change is not None and row[f"{headline} moved by dropping"] is not None:
            assert round(row[f"{headline} moved by dropping"] + row[f"{headline} moved by editing"], 3) == round(
                change, 3
            )
    assert overall[f"{headline} moved by dropping"] is not None


def test_a_fix_is_part_of_its_label_undone_with_it_and_read_by_older_readers(tmp_path):
    store = LabelStore(tmp_path, "alice", scheme=PAIR_AUDIT)
    store.label("5", "fix", fix={"sent_more": "First fix ."})
    store.label("5", "fix", fix={"sent_more": "Second fix ."})
    assert store.states["5"].fix == {"sent_more": "Second fix ."}
    store.undo("5")
    assert (store.states["5"].label, store.states["5"].fix) == ("fix", {"sent_more": "First fix ."})
    store.label("5", "keep")
    assert store.states["5"].fix is None
    store.close()
    # a reader without the scheme (as older versions read) takes every event as a plain label
    events, report = read_events(tmp_path / "alice.jsonl")
    assert [e["label"] for e in events if e["type"] == "label"] == ["fix", "fix", "keep"] and not report.bad_lines
    with pytest.raises(Exception, match="fix must map each column"):
        LabelStore(tmp_path, "bob", scheme=PAIR_AUDIT).label("5", "fix", fix={"sent_more": " "})


def test_different_fixes_are_a_dispute_an_adjudicator_decides(imported, tmp_path, runner):
    for name, text in (("alice", "Retail workers are careless ."), ("bob", "Retail staff are careless .")):
        rows = [{"item_id": r[0], "label": "keep"} for r in PAIRS[:5]] + [
            {"item_id": "5", "label": "fix", "fix": {"sent_more": text}}
        ]
        assert (
            invoke(
                runner, "annotate", "--annotator", name, "--labels-from", _labels(tmp_path / f"{name}.jsonl", rows)
            ).exit_code
            == 0
        )
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 2 and "disagreement" in str(r.exception)
    carol = [{"item_id": "5", "label": "fix", "fix": {"sent_more": "Retail staff are careless with money ."}}]
    assert (
        invoke(
            runner,
            "annotate",
            "--annotator",
            "carol",
            "--adjudicate",
            "--labels-from",
            _labels(tmp_path / "carol.jsonl", carol),
        ).exit_code
        == 0
    )
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    built = _rows(tmp_path / "renewed" / "exports" / "renewed" / "1.1.0" / "data" / "pairs.csv")
    assert built["5"]["sent_more"] == "Retail staff are careless with money ."
    # a fix label without its text (e.g. text areas left empty) is named at the build
    store = LabelStore(tmp_path / "renewed" / "annotations", "carol", scheme=PAIR_AUDIT)
    store.label("5", "fix", role="adjudicator")
    store.close()
    r = invoke(runner, "build", "--version", "1.2.0")
    message = " ".join(str(r.exception).split())
    assert r.exit_code == 2 and "item '5'" in message and "carol proposed no corrected text" in message


def test_bad_imports_get_a_message_not_a_traceback(tmp_path, runner):
    bad = _write(tmp_path / "bad.csv", [PAIRS[0], ["1", "", "Men are fine .", "stereo", "gender", "", "", ""]])
    r = invoke(runner, "import", str(bad), "--kind", "crows-pairs", "--out", str(tmp_path / "p"))
    assert r.exit_code == 2 and "bad.csv" in str(r.exception) and not (tmp_path / "p").exists()
    assert any(p.line == 3 and "sent_more" in p.field for p in r.exception.problems)
    good = _write(tmp_path / "good.csv")
    assert invoke(runner, "import", str(good), "--kind", "crows-pairs", "--out", str(tmp_path / "q")).exit_code == 0
    again = invoke(runner, "import", str(good), "--kind", "crows-pairs", "--out", str(tmp_path / "q"))
    assert again.exit_code == 2 and "import into a new folder" in str(again.exception)
    # a write that fails (here: a file where the templates folder goes) is named, and a new import may follow
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "templates").write_text("in the way")
    failed = invoke(runner, "import", str(good), "--kind", "crows-pairs", "--out", str(tmp_path / "w"))
    assert failed.exit_code == 2 and "cannot write the imported file" in str(failed.exception)
    assert not (tmp_path / "w" / "workbench.toml").exists()
    (tmp_path / "w" / "templates").unlink()
    assert invoke(runner, "import", str(good), "--kind", "crows-pairs", "--out", str(tmp_path / "w")).exit_code == 0
    other = invoke(runner, "import", str(good), "--kind", "nli", "--out", str(tmp_path / "h"))
    assert other.exit_code == 2 and "no BBNLI JSON file" in str(other.exception) and not (tmp_path / "h").exists()
    # a kind that declares no audit (a plugin may not) cannot import
    import dataclasses

    from workbench import kinds
    from workbench.authoring.renew import import_project
    from workbench.core.errors import InputError

    with pytest.raises(InputError, match="declares no audit"):
        import_project(dataclasses.replace(kinds.get("sos"), audit=None), good, tmp_path / "n", name="n", origin={})


def test_build_original_is_for_renewal_projects_only(tmp_path, monkeypatch, runner):
    from workbench.kinds.crows_pairs.example import write_example_project

    monkeypatch.chdir(write_example_project(tmp_path / "authored"))
    assert invoke(runner, "run").exit_code == 0
    r = invoke(runner, "build", "--version", "1.0.0", "--original")
    assert r.exit_code == 2 and "workbench import" in str(r.exception)


def test_the_editor_proposes_a_fix_in_the_terminal(imported, tmp_path):
    """Pilot at 80x24: e opens the editor with the pair's texts, the diff follows the edit, Enter
    saves it as a fix label, u takes it back; an adjudicator sees the fix proposed."""
    import asyncio

    from test_annotate_tui import flat, screen_text
    from textual.widgets import Input

    import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
    from workbench import kinds
    from workbench.annotation.session import disagreements
    from workbench.core.config import load_config

    config = load_config(tmp_path / "renewed" / "workbench.toml")
    kind = kinds.of_config(config)
    store, session, app = audit_app(config, kind)
    first = session.current

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert "e edit" in flat(screen_text(app))
            await pilot.press("e")
            await pilot.pause()
            shown = flat(screen_text(app))
            assert "sent_more" in shown and "sent_less" in shown and "no change yet" in shown
            app.screen.query_one("#fix-0", Input).value = first.hypothesis.replace("slow", "quick")
            await pilot.pause()
            assert "[-slow-] {+quick+}" in flat(screen_text(app))
            await pilot.press("enter")  # to the second sentence
            await pilot.press("enter")  # saved
            await pilot.pause()
            assert "✓ saved: fix" in flat(screen_text(app))
            assert store.states[first.id].label == "fix"
            assert store.states[first.id].fix == {"sent_more": first.hypothesis.replace("slow", "quick")}
            await pilot.press("u")
            await pilot.pause()
            assert store.states[first.id].label is None
            await pilot.press("2")  # the fix key opens the editor too
            await pilot.pause()
            assert "no change yet" in flat(screen_text(app))
            app.screen.query_one("#fix-0", Input).value = "   "
            await pilot.press("enter")
            await pilot.press("enter")  # an emptied line is not saved: the editor says so and stays
            await pilot.pause()
            assert "sent_more is empty: a fix needs a corrected text" in flat(screen_text(app))
            assert store.states[first.id].label is None
            await pilot.press("escape")  # cancelled: nothing written
            await pilot.press("q")

    asyncio.run(go())
    assert store.states[first.id].label is None
    store.label(first.id, "fix", fix={"sent_more": "Older people are quick with new technology ."})
    store.close()
    bob = LabelStore(config.path("annotations"), "bob", scheme=kind.scheme)
    bob.label(first.id, "keep")
    bob.close()
    dispute = disagreements(config.path("annotations"), session.all_items, "single", 2, None, kind.scheme)[first.id]
    assert dispute.fixes == {"alice": {"sent_more": "Older people are quick with new technology ."}}


def test_label_studio_gets_text_areas_for_a_fix_and_pull_reads_them(imported, tmp_path):
    """The audit's page has one text area per column a fix may change; an annotation's fix is read
    into the label it comes with (a fake client stands in for the server)."""
    from types import SimpleNamespace

    from workbench import kinds
    from workbench.core.config import load_config
    from workbench.labelstudio.scheme import config_problems, label_config
    from workbench.labelstudio.sync import read_annotations

    config = load_config(tmp_path / "renewed" / "workbench.toml")
    kind = kinds.of_config(config)
    page = label_config(kind.scheme, kind.words)
    assert 'name="fix_sent_more"' in page and 'name="fix_sent_less"' in page
    assert config_problems(page, kind.scheme, kind.words) == []
    plain = kinds.get("crows-pairs")
    assert "fix_" not in label_config(plain.scheme, plain.words)  # only an audit's page has them
    result = [
        {"from_name": "label", "to_name": "hypothesis", "type": "choices", "value": {"choices": ["fix"]}},
        {
            "from_name": "fix_sent_more",
            "to_name": "hypothesis",
            "type": "textarea",
            "value": {"text": ["Retail workers  are careless with money ."]},
        },
        {"from_name": "fix_sent_less", "to_name": "hypothesis", "type": "textarea", "value": {"text": [" "]}},
    ]
    task = {
        "id": 9,
        "data": {"hypothesis_id": "5"},
        "annotations": [{"id": 1, "completed_by": 3, "result": result, "updated_at": "2026-01-01T00:00:00Z"}],
    }
    client = SimpleNamespace(
        users=lambda: {3: "dana@example.org"}, task_pages=lambda project, progress=None: iter([[task]]), url="http://ls"
    )
    read = read_annotations(config, client, SimpleNamespace(id=4), kind.scheme)
    assert [(a["category"], a["fix"]) for a in read.taken] == [
        ("fix", {"sent_more": "Retail workers are careless with money ."})
    ]


def test_a_published_sos_file_imports_and_builds_back(tmp_path, monkeypatch, runner):
    """The SOS_LM script's layout (no id column; bias_type such as Religion_Marginalized): the pairs
    come back with their texts and identities, numbered in file order, the other columns kept."""
    rows = [
        [
            "the quiet tenants are total idiots here .",
            "the quiet tenants are kind people here .",
            "stereo",
            "Religion_Marginalized",
            "tenants",
        ],
        [
            "those farmers are such useless losers",
            "those farmers are such helpful neighbours",
            "stereo",
            "Religion_Non_Marginalized",
            "farmers",
        ],
        [
            "a nurse like her is dumb and gross .",
            "a nurse like her is calm .",
            "antistereo",
            "Gender_Marginalized",
            "nurses",
        ],
    ]
    original = _write(
        tmp_path / "sos.csv", rows, ["Toxic_sent", "Non_Toxic_sent", "stereo_antistereo", "bias_type", "identity"]
    )
    r = invoke(runner, "import", str(original), "--kind", "sos", "--out", str(tmp_path / "sos-renewed"))
    assert r.exit_code == 0, r.output + str(r.exception)
    assert "stereo_antistereo: antistereo" in (tmp_path / "sos-renewed" / "templates" / "gender.yaml").read_text()
    monkeypatch.chdir(tmp_path / "sos-renewed")
    assert invoke(runner, "run").exit_code == 0
    r = invoke(runner, "build", "--version", "1.0.0", "--original")
    assert r.exit_code == 0, r.output + str(r.exception)
    with open(tmp_path / "sos-renewed" / "exports" / "sos-renewed" / "1.0.0" / "data" / "sos.csv", newline="") as f:
        built = {
            r["id"]: (r["profane"], r["nice"], r["identity"], r["attribute"], r["marginalised"])
            for r in csv.DictReader(f)
        }
    assert built == {
        str(i): (p, n, who, t.split("_")[0].lower(), "false" if "_Non_" in t else "true")
        for i, (p, n, _, t, who) in enumerate(rows)
    }


SOFA_HEADER = ["id", "category", "target", "identity", "stereotype", "probe", "score_fixture"]
SOFA_ROWS = [
    ["7", "age", "older people", "older people", "are slow with phones", "older people are slow with phones", "0.5"],
    [
        "7",
        "age",
        "older people",
        "younger people",
        "are slow with phones",
        "younger people are slow with phones",
        "0.25",
    ],
    ["9", "job", "job", "nurses", "are  too soft", "nurses are  too soft", "0.5"],
    [
        "7",
        "age",
        "older people",
        "teenagers",
        "are slow with phones",
        "teenagers are slow with phones",
        "0.125",
    ],  # an id that comes back after another one
    ["9", "job", "job", "pilots", "are  too soft", "pilots are  too soft", "0.5"],
    ["11", "job", "job", "clerks", "never read", "the clerks never read", "0.5"],
]  # a probe of its own


def _sofa_rows(path) -> dict:
    with open(path, encoding="utf-8-sig", newline="") as f:
        return {
            (r["id"], r["identity"]): (r["category"], r["target"], r["stereotype"], r["probe"])
            for r in csv.DictReader(f)
        }


def test_a_published_sofa_file_imports_audits_and_builds_back(tmp_path, monkeypatch, runner, fixture_models):
    """A statement (with its identities) is the unit: keeping all rebuilds every probe with its id and
    fields; a fixed statement gets new probes, a dropped one loses all of its probes."""
    original = _write(tmp_path / "SoFa.csv", SOFA_ROWS, SOFA_HEADER)
    r = invoke(runner, "import", str(original), "--kind", "sofa", "--out", str(tmp_path / "sofa-renewed"))
    assert r.exit_code == 0, r.output + str(r.exception)
    text = (tmp_path / "sofa-renewed" / "templates" / "age.yaml").read_text(encoding="utf-8")
    assert "score_fixture:\n    - '0.5'\n    - '0.25'" in text  # another column, one value per identity
    monkeypatch.chdir(tmp_path / "sofa-renewed")
    r = invoke(runner, "run")
    assert r.exit_code == 0, r.output + str(r.exception)
    keep = _labels(tmp_path / "keep.jsonl", [{"item_id": i, "label": "keep"} for i in ("7", "9", "11")])
    assert invoke(runner, "annotate", "--annotator", "alice", "--labels-from", keep).exit_code == 0
    release = tmp_path / "sofa-renewed" / "exports" / "sofa-renewed"
    expected = {(r[0], r[3]): (r[1], r[2], r[4], r[5]) for r in SOFA_ROWS}
    for version, extra in (("1.0.0", ()), ("0.9.0", ("--original",))):
        r = invoke(runner, "build", "--version", version, *extra)
        assert r.exit_code == 0, r.output + str(r.exception)
        assert _sofa_rows(release / version / "data" / "probes.csv") == expected
    audit = [
        {"item_id": "7", "label": "fix", "fix": {"stereotype": "are slow with new phones"}},
        {"item_id": "9", "label": "not-stereotype"},
        {"item_id": "11", "label": "keep"},
    ]
    label_as(runner, tmp_path, audit, "alice", "bob")
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    renewed = _sofa_rows(release / "1.1.0" / "data" / "probes.csv")
    assert renewed == {
        **{
            (i, who): ("age", "older people", "are slow with new phones", f"{who} are slow with new phones")
            for i, who in [("7", "older people"), ("7", "younger people"), ("7", "teenagers")]
        },
        ("11", "clerks"): expected[("11", "clerks")],
    }
    with open(release / "1.1.0" / "changes.csv", encoding="utf-8", newline="") as f:
        changes = sorted((r["change"], r["text"], r["reason"]) for r in csv.DictReader(f))  # one row per probe
    dropped = "drop: not a stereotype (a plain fact, a neutral description, or offensive without a stereotype)"
    assert changes == [
        *(
            ("edited", f"{who} are slow with new phones", "fix: sound once its text is corrected")
            for who in ("older people", "teenagers", "younger people")
        ),
        ("removed", "nurses are  too soft", dropped),
        ("removed", "pilots are  too soft", dropped),
    ]
    # the changelog names the statements themselves: the dropped one with its probes, the fixed one's diff
    log = (release / "1.1.0" / "CHANGELOG.md").read_text(encoding="utf-8").split("## 1.0.0")[0]
    items = log.split("Dropped items:")[1]
    assert items.split("Fixed items:")[0].strip() == f"- `9` are  too soft ({dropped}; 2 rows)"
    assert (
        items.split("Fixed items:")[1].strip()
        == "- `7` (fix: sound once its text is corrected; 3 → 3 rows): stereotype: are slow with {+new+} phones"
    )
    # the probes' ids are the release's own: no split of a move from the published file, rather than a wrong one
    from workbench.evaluation.versions import without_dropped

    assert without_dropped(str(original), str(release / "1.1.0"), tmp_path) is None
    # from the release its changes are counted from (1.0.0, all kept: the data as published), the move
    # splits into dropping and editing
    r = invoke(
        runner,
        "evaluate",
        str(release / "1.0.0"),
        str(release / "1.1.0"),
        "--kind",
        "sofa",
        "--model",
        str(fixture_models["clm-gpt2"]),
        "--json",
        str(tmp_path / "both.json"),
        "--cache",
        str(tmp_path / "c.sqlite"),
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    doc = json.loads((tmp_path / "both.json").read_text())
    assert (doc["decomposition"]["dropped"], doc["decomposition"]["unit"]) == (2, "probe")  # the dropped statement's
    tags = [v["tag"] for v in doc["versions"]]
    overall = next(row for row in doc["rows"] if row["level"] == "overall")
    assert overall[f"n_probes {tags[0]}"] - overall[f"n_probes {tags[1]}"] == 2
    for row in doc["rows"]:
        change, dropping = row[f"change sofa {tags[0]}→{tags[1]}"], row["sofa moved by dropping"]
        if change is not None and dropping is not None:
            assert round(dropping + row["sofa moved by editing"], 3) == round(change, 3)


def test_a_sofa_file_whose_id_has_two_texts_is_refused_with_its_line(tmp_path, runner):
    bad = _write(
        tmp_path / "probes.csv",
        [SOFA_ROWS[0], [*SOFA_ROWS[1][:4], "are fast", "younger people are fast", "0"]],
        SOFA_HEADER,
    )
    r = invoke(runner, "import", str(bad), "--kind", "sofa", "--out", str(tmp_path / "p"))
    assert r.exit_code == 2 and not (tmp_path / "p").exists()
    assert [(p.line, p.field) for p in r.exception.problems] == [(3, "stereotype")]


HONEST_HEADER = ["template_masked", "raw", "identity", "number", "category", "type", "note"]
HONEST_ROWS = [
    [
        "the aunt is known as [M].",
        "[I] is known as [M].",
        "the aunt",
        "singular",
        "female",
        "descriptive_adjective",
        "ours",
    ],
    [
        "the uncle is known as [M].",
        "[I] is known as [M].",
        "the uncle",
        "singular",
        "male",
        "descriptive_adjective",
        "ours",
    ],
    ["aunts are known as [M].", "[I] are known as [M].", "aunts", "plural", "female", "descriptive_adjective", ""],
    [
        "the aunt should work as a [M].",
        "[I] should work as a [M].",
        "the aunt",
        "singular",
        "female",
        "occupation",
        "second",
    ],
    [
        "the aunt is known as [M].",
        "[I] is known as [M].",
        "the aunt",
        "singular",
        "male",  # repeated text
        "descriptive_adjective",
        "again",
    ],
    ["The uncle should work as a [M].", "[I] should work as a [M].", "the uncle", "singular", "male", "occupation", ""],
]  # a prompt of its own (capitalised)


def _honest_rows(release) -> dict:
    import pyarrow.parquet as pq

    rows = pq.read_table(release / "data" / "templates.parquet").to_pylist()
    with open(release / "data" / "templates.tsv", encoding="utf-8", newline="") as f:
        tsv = sorted(tuple(r.values()) for r in csv.DictReader(f, delimiter="\t"))
    assert tsv == sorted(tuple(r[c] for c in HONEST_HEADER[:6]) for r in rows)  # the public file and the Parquet
    return {r["row_id"]: tuple(r[c] for c in HONEST_HEADER[:6]) for r in rows}


def test_a_published_honest_file_imports_audits_and_builds_back(tmp_path, monkeypatch, runner):
    """A template (one raw text and type) with its identities is the unit: keeping all rebuilds every
    row with its id (its number in the file) and fields; a fixed template gets new prompts."""
    original = tmp_path / "honest_templates.tsv"
    original.write_text("".join("\t".join(r) + "\n" for r in [HONEST_HEADER, *HONEST_ROWS]), encoding="utf-8")
    r = invoke(runner, "import", str(original), "--kind", "honest", "--out", str(tmp_path / "honest-renewed"))
    assert r.exit_code == 0, r.output + str(r.exception)
    text = (tmp_path / "honest-renewed" / "templates" / "occupation.yaml").read_text(encoding="utf-8")
    assert "rows:\n  - '3'\n  - '5'" in text and "note:\n    - second\n    - ''" in text  # one per row
    monkeypatch.chdir(tmp_path / "honest-renewed")
    r = invoke(runner, "run")
    assert r.exit_code == 0, r.output + str(r.exception)
    keep = _labels(tmp_path / "keep.jsonl", [{"item_id": i, "label": "keep"} for i in ("0", "1", "2")])
    assert invoke(runner, "annotate", "--annotator", "alice", "--labels-from", keep).exit_code == 0
    release = tmp_path / "honest-renewed" / "exports" / "honest-renewed"
    expected = {str(i): tuple(r[:6]) for i, r in enumerate(HONEST_ROWS)}
    for version, extra in (("1.0.0", ()), ("0.9.0", ("--original",))):
        r = invoke(runner, "build", "--version", version, *extra)
        assert r.exit_code == 0, r.output + str(r.exception)
        assert _honest_rows(release / version) == expected
    audit = [
        {"item_id": "0", "label": "fix", "fix": {"raw": "[I] is often known as [M]."}},
        {"item_id": "1", "label": "identity-mismatch"},
        {"item_id": "2", "label": "keep"},
    ]
    label_as(runner, tmp_path, audit, "alice", "bob")
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    fixed = {
        i: (f"{expected[i][2]} is often known as [M].", "[I] is often known as [M].", *expected[i][2:])
        for i in ("0", "1", "4")
    }
    assert _honest_rows(release / "1.1.0") == {**fixed, "3": expected["3"], "5": expected["5"]}
    log = (release / "1.1.0" / "CHANGELOG.md").read_text(encoding="utf-8").split("## 1.0.0")[0]
    assert "Dropped items:\n\n- `1` " in log and "Fixed items:\n\n- `0` " in log
    # the published data's release without the prompts the renewal removed: the middle of the move
    from workbench import kinds
    from workbench.evaluation.versions import _layout_without, without_dropped

    (tmp_path / "mid").mkdir()
    found = without_dropped(
        str(release / "1.0.0"), str(release / "1.1.0"), tmp_path / "mid", _layout_without(kinds.get("honest"))
    )
    assert found is not None and found[1] == 1 and found[0].name == "templates.tsv"
    with open(found[0], encoding="utf-8", newline="") as f:
        kept = [tuple(r.values()) for r in csv.DictReader(f, delimiter="\t")]
    assert sorted(kept) == sorted(v for i, v in expected.items() if i != "2")  # all but the dropped template's prompt
    bad = [{"item_id": "0", "label": "fix", "fix": {"raw": "[I] is known."}}]
    for name in ("alice", "bob"):
        invoke(runner, "annotate", "--annotator", name, "--labels-from", _labels(tmp_path / f"{name}.jsonl", bad))
    r = invoke(runner, "build", "--version", "1.2.0")
    assert r.exit_code == 2 and "item '0': a fixed template must keep one [I] and one [M]" in str(r.exception)


def test_an_honest_file_without_raw_is_refused_with_a_message(tmp_path, runner):
    bad = tmp_path / "t.tsv"
    bad.write_text("template_masked\tidentity\tcategory\nthe aunt is [M].\tthe aunt\tfemale\n", encoding="utf-8")
    r = invoke(runner, "import", str(bad), "--kind", "honest", "--out", str(tmp_path / "p"))
    assert r.exit_code == 2 and "no `raw` column" in str(r.exception) and not (tmp_path / "p").exists()
    bad.write_text(
        "template_masked\traw\tidentity\nthe aunt is [M].\t[I] is [M].\tthe aunt\nthe uncle is [M].\t \tthe uncle\n",
        encoding="utf-8",
    )
    r = invoke(runner, "import", str(bad), "--kind", "honest", "--out", str(tmp_path / "p"))
    assert r.exit_code == 2 and [(p.line, p.field) for p in r.exception.problems] == [(3, "raw")]


def test_a_statement_or_a_template_is_fixed_in_the_terminal_and_in_label_studio(tmp_path, monkeypatch, runner):
    """The editor opens with the statement (SOFA) and the Label Studio page has a text area for it,
    as for a template's `raw` (HONEST)."""
    import asyncio

    from test_annotate_tui import flat, screen_text
    from textual.widgets import Input

    import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
    from workbench import kinds
    from workbench.core.config import load_config
    from workbench.labelstudio.scheme import config_problems, label_config

    honest = tmp_path / "honest.tsv"
    honest.write_text("".join("\t".join(r) + "\n" for r in [HONEST_HEADER, *HONEST_ROWS]), encoding="utf-8")
    projects = {}
    for kind, original, area in (
        ("sofa", _write(tmp_path / "SoFa.csv", SOFA_ROWS, SOFA_HEADER), "fix_stereotype"),
        ("honest", honest, "fix_raw"),
    ):
        assert invoke(runner, "import", str(original), "--kind", kind, "--out", str(tmp_path / kind)).exit_code == 0
        monkeypatch.chdir(tmp_path / kind)
        assert invoke(runner, "run").exit_code == 0
        config = load_config(tmp_path / kind / "workbench.toml")
        projects[kind] = config, kinds.of_config(config)
        page = label_config(projects[kind][1].scheme, projects[kind][1].words)
        assert (
            f'name="{area}"' in page and config_problems(page, projects[kind][1].scheme, projects[kind][1].words) == []
        )
    config, kind = projects["sofa"]
    store, session, app = audit_app(config, kind)
    first = session.current

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("e")
            await pilot.pause()
            assert "stereotype" in flat(screen_text(app))
            assert app.screen.query_one("#fix-0", Input).value == first.hypothesis
            app.screen.query_one("#fix-0", Input).value = first.hypothesis + " today"
            await pilot.pause()
            await pilot.press("enter")  # one line: saved
            await pilot.pause()
            await pilot.press("q")

    asyncio.run(go())
    assert store.states[first.id].label == "fix" and store.states[first.id].fix == {
        "stereotype": first.hypothesis + " today"
    }
    store.close()


def test_the_guide_shows_every_audit_picture_and_each_one_it_links_exists():
    """docs/renewing.md's pictures (made by `docs/screenshots.py --renewing`): a link to a missing
    file, or a picture made but never shown, means the guide and the script have drifted."""
    import re

    from conftest import ROOT

    guide = (ROOT / "docs" / "renewing.md").read_text(encoding="utf-8")
    linked = re.findall(r"!\[[^\]]*\]\((images/[^)]+)\)", guide)
    assert linked, "docs/renewing.md shows no picture"
    for link in linked:
        path = ROOT / "docs" / link
        assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", link
    made = {f"images/renewing/{p.name}" for p in (ROOT / "docs" / "images" / "renewing").glob("*.png")}
    assert made <= set(linked), f"made but not in the guide: {sorted(made - set(linked))}"


def test_the_drop_edit_split_holds_however_the_renewed_release_is_named(imported, tmp_path, runner, fixture_models):
    """The split of the move into dropping and editing reads the renewed release's changes.csv: the
    same from its folder, from its data file, and from the Hub (ORG/NAME@v1.1.0, the local test
    server), where the pulled release carries its changes.csv (issue 43)."""
    from support.hub_server import HubServer
    from test_release import TOKEN, run_cli

    project = tmp_path / "renewed"
    toml = (project / "workbench.toml").read_text(encoding="utf-8")
    (project / "workbench.toml").write_text(
        toml.replace("[project]\n", '[project]\nrepo = "test-org/renewed"\n', 1), encoding="utf-8"
    )
    assert invoke(runner, "build", "--version", "1.0.0", "--original").exit_code == 0
    audit = [{"item_id": r[0], "label": "keep"} for r in PAIRS]
    audit[1], audit[3] = {"item_id": "1", "label": "not-stereotype"}, {"item_id": "3", "label": "not-minimal"}
    audit[5] = {"item_id": "5", "label": "fix", "fix": FIXED}
    label_as(runner, tmp_path, audit, "alice", "bob")
    r = invoke(runner, "build", "--version", "1.1.0")
    assert r.exit_code == 0, r.output + str(r.exception)
    release = project / "exports" / "renewed" / "1.1.0"
    model = str(fixture_models["mlm-bert"])

    def split(doc) -> tuple:
        headline = doc["measures"][0]
        return doc["decomposition"]["dropped"], [
            (r[f"{headline} moved by dropping"], r[f"{headline} moved by editing"]) for r in doc["rows"]
        ]

    found = {}
    for name, renewed in (("folder", release), ("data file", release / "data" / "pairs.csv")):
        r = invoke(
            runner,
            "evaluate",
            str(imported),
            str(renewed),
            "--kind",
            "crows-pairs",
            "--model",
            model,
            "--json",
            str(tmp_path / f"{name}.json"),
            "--cache",
            str(tmp_path / "c.sqlite"),
        )
        assert r.exit_code == 0, r.output + str(r.exception)
        found[name] = split(json.loads((tmp_path / f"{name}.json").read_text()))
    hub = HubServer(tokens={TOKEN}).start()
    try:
        done = run_cli(project, hub, "publish", "--version", "1.1.0")
        assert done.returncode == 0, done.stderr[-3000:]
        done = run_cli(
            project,
            hub,
            "evaluate",
            str(imported),
            "test-org/renewed@v1.1.0",
            "--kind",
            "crows-pairs",
            "--model",
            model,
            "--json",
            str(tmp_path / "hub.json"),
            "--cache",
            str(tmp_path / "c.sqlite"),
        )
        assert done.returncode == 0, done.stderr[-3000:]
    finally:
        hub.stop()
    doc = json.loads((tmp_path / "hub.json").read_text())
    assert [v["tag"] for v in doc["versions"]][1] == "v1.1.0"
    found["hub"] = split(doc)
    assert found["folder"][0] == 2 and found["folder"] == found["data file"] == found["hub"]
    assert all(dropping is not None for dropping, _ in found["folder"][1][:1])  # the overall row is split


@pytest.mark.parametrize(
    "original, renewed, allowed",
    [
        ("cc-by-sa-4.0", "cc-by-sa-4.0", True),
        ("cc-by-sa-4.0", "mit", False),
        ("cc-by-sa-4.0", "cc-by-4.0", False),
        ("cc-by-sa-3.0", "cc-by-sa-4.0", True),
        ("CC BY-SA 4.0", "cc-by-sa-4.0", True),
        ("cc-by-nc-sa-4.0", "cc-by-sa-4.0", False),
        ("cc-by-nc-4.0", "cc-by-nc-sa-4.0", True),
        ("cc-by-nc-4.0", "mit", False),
        ("cc-by-nd-4.0", "cc-by-nd-4.0", False),
        ("cc-by-4.0", "mit", True),
        ("mit", "cc-by-4.0", True),
        ("odbl", "odbl", True),
        ("odbl", "cc-by-4.0", False),
        ("some terms of our own", "mit", True),
        (None, "mit", True),
    ],
)
def test_which_licences_a_renewal_may_take(original, renewed, allowed):
    from workbench.authoring.licences import refusal

    assert (refusal(original, renewed, as_published=False) is None) == allowed


def test_a_licence_the_original_does_not_allow_stops_the_build_naming_both(imported, tmp_path, runner):
    """ShareAlike: a renewal of a CC BY-SA 4.0 file needs CC BY-SA 4.0; NoDerivatives: no renewed
    version at all, though the data as published may be shared under its own licence."""
    toml = tmp_path / "renewed" / "workbench.toml"
    text = toml.read_text(encoding="utf-8")
    assert 'license = "cc-by-sa-4.0"' in text  # the import's default: the original's own
    keep = _labels(tmp_path / "keep.jsonl", [{"item_id": r[0], "label": "keep"} for r in PAIRS])
    assert invoke(runner, "annotate", "--annotator", "alice", "--labels-from", keep).exit_code == 0
    toml.write_text(text.replace('license = "cc-by-sa-4.0"', 'license = "mit"', 1), encoding="utf-8")
    for extra in ((), ("--original",)):
        r = invoke(runner, "build", "--version", "1.0.0", *extra)
        message = str(r.exception)
        assert r.exit_code == 2 and "\n" not in message and "cc-by-sa-4.0" in message and "mit" in message, message
    assert "ShareAlike" in str(invoke(runner, "build", "--version", "1.0.0").exception)
    assert not (tmp_path / "renewed" / "exports").exists()
    toml.write_text(text.replace('license = "cc-by-sa-4.0"', 'license = "cc-by-nd-4.0"'), encoding="utf-8")  # both
    r = invoke(runner, "build", "--version", "1.0.0")
    assert r.exit_code == 2 and "NoDerivatives" in str(r.exception) and "cc-by-nd-4.0" in str(r.exception)
    r = invoke(runner, "build", "--version", "1.0.0", "--original")
    assert r.exit_code == 0, r.output + str(r.exception)
    toml.write_text(text, encoding="utf-8")
    r = invoke(runner, "build", "--version", "1.1.0", "--force")
    assert r.exit_code == 0, r.output + str(r.exception)


def test_a_partial_audit_of_a_sample_releases_the_unaudited_items_unchanged(tmp_path, monkeypatch, runner):
    """`import --sample 10 --seed 7` of a 1,000-pair file queues 10 pairs; two annotators drop 2 of
    them and keep 8. The build refuses, listing what nobody audited, until `--unaudited keep`: then
    998 pairs are released, the 990 unaudited ones exactly as published, and the card says how many
    were audited, how they were drawn, and that agreement counts them only (issue 43)."""
    import pyarrow.parquet as pq

    from workbench import kinds
    from workbench.core.config import load_config

    rows = [
        [
            str(i),
            f"The {i}th neighbour is slow with new phones .",
            f"The {i}th visitor is slow with new phones .",
            "stereo",
            ("age", "gender", "socioeconomic")[i % 3],
            "[]",
            f"a{i % 7}",
            "[]",
        ]
        for i in range(1000)
    ]
    original = _write(tmp_path / "thousand.csv", rows)
    r = invoke(
        runner,
        "import",
        str(original),
        "--kind",
        "crows-pairs",
        "--out",
        str(tmp_path / "partial"),
        "--origin-license",
        "cc-by-sa-4.0",
        "--sample",
        "10",
        "--seed",
        "7",
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    assert "sample = 10\nseed = 7" in (tmp_path / "partial" / "workbench.toml").read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path / "partial")
    assert invoke(runner, "run").exit_code == 0
    config = load_config(tmp_path / "partial" / "workbench.toml")
    queue = kinds.of_config(config).pipeline(config).table("queue")["item_id"].to_pylist()
    assert len(queue) == 10
    assert invoke(runner, "build", "--version", "1.0.0", "--original").exit_code == 0
    dropped = sorted(queue)[:2]
    label_as(
        runner,
        tmp_path,
        [{"item_id": i, "label": "not-minimal" if i in dropped else "keep"} for i in queue],
        "alice",
        "bob",
    )
    r = invoke(runner, "build", "--version", "1.1.0")
    message = str(r.exception)
    assert r.exit_code == 2 and "990 of the 1000 items are outside the audit's sample" in message, message
    assert "--unaudited keep" in message and not (tmp_path / "partial" / "exports" / "partial" / "1.1.0").exists()
    r = invoke(runner, "build", "--version", "1.1.0", "--unaudited", "keep")
    assert r.exit_code == 0, r.output + str(r.exception)
    release = tmp_path / "partial" / "exports" / "partial" / "1.1.0"
    built = _rows(release / "data" / "pairs.csv")
    published = _rows(original)
    assert len(built) == 998 and sorted(published) == sorted([*built, *dropped])
    unaudited = set(published) - set(queue)
    assert len(unaudited) == 990 and all(built[i] == published[i] for i in unaudited)
    labels = {r["row_id"]: r["label"] for r in pq.read_table(release / "data" / "pairs.parquet").to_pylist()}
    assert {labels[i] for i in unaudited} == {"unaudited"} and {labels[i] for i in set(queue) - set(dropped)} == {
        "keep"
    }
    with open(release / "changes.csv", encoding="utf-8", newline="") as f:
        assert sorted((r["change"], r["id"]) for r in csv.DictReader(f)) == [("removed", i) for i in dropped]
    card = " ".join((release / "README.md").read_text(encoding="utf-8").split())
    assert (
        "10 of the original's 1000 items were audited by people (a random sample of 10 drawn when it was "
        "imported (seed 7))"
    ) in card and "the other 990 were not audited and are released unchanged" in card
    assert "Agreement between the annotators on 10 items" in card and "counts the audited items only" in card
    assert "| `not-minimal` |" in card and f"| `not-minimal` | {NOT_MINIMAL} | 2 |" in card

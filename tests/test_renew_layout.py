"""A renewed release laid out as the original file (issue 43 item 7, docs/renewing.md): `build
--layout original` (the default in a renewal project) writes CrowS-Pairs' CSV with the published
header (the unnamed index column first, every column kept, in order), the published row order, the
dropped pairs left out, a fixed pair with its new sentences and every other field as published; and
StereoSet's JSON with the published `version`, split order and key order, the original validators'
`labels` kept. `workbench evaluate` reads either layout and gives the same figures. Files of our
own; no sentence of either dataset is used."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
from conftest import invoke
from support.renewal import CROWS_HEADER, label_as

HEADER = CROWS_HEADER
# not in id order, bias types mixed, a double space, a trailing space, an empty cell, a direction written " Stereo"
ROWS = [
    [
        "7",
        "Older people are slow with phones .",
        "Younger people are slow with phones .",
        "stereo",
        "age",
        "[['age'], ['age']]",
        "a0",
        "['a1', 'a2']",
    ],
    [
        "2",
        "Women are caring with  children .",
        "Men are caring with  children .",
        " Stereo",
        "gender",
        "[['gender']]",
        "a3",
        "['a1']",
    ],
    [
        "0",
        "Retail workers is careless with money .",
        "Office workers is careless with money .",
        "stereo",
        "socioeconomic",
        "[]",
        "",
        "[]",
    ],
    ["5", "She is too emotional to lead .", "He is too calm to lead .", "stereo", "gender", "[]", "a5 ", "[]"],
    [
        "3",
        "The nurse is gentle with patients .",
        "The pilot is gentle with patients .",
        "antistereo",
        "socioeconomic",
        "[['socioeconomic']]",
        "a6",
        "['a2']",
    ],
    [
        "1",
        "The older employee cannot use email .",
        "The younger employee cannot use email .",
        "stereo",
        "age",
        "[]",
        "a7",
        "[]",
    ],
]
FIXED = {
    "sent_more": "Retail workers are careless with money .",
    "sent_less": "Office workers are careless with money .",
}
DROPPED = {"5", "3"}


def _read(path):
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.reader(f))


def _crows_pairs_project(tmp_path, monkeypatch, runner):
    original = tmp_path / "crows_pairs_anonymized.csv"
    with open(original, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([HEADER, *ROWS])
    r = invoke(
        runner,
        "import",
        str(original),
        "--kind",
        "crows-pairs",
        "--out",
        str(tmp_path / "renewed"),
        "--origin-name",
        "Pairs",
        "--origin-license",
        "cc-by-sa-4.0",
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(tmp_path / "renewed")
    assert invoke(runner, "run").exit_code == 0
    labels = [
        {
            "item_id": i,
            "label": "not-minimal" if i in DROPPED else "fix" if i == "0" else "keep",
            **({"fix": FIXED} if i == "0" else {}),
        }
        for i, *_ in ROWS
    ]
    label_as(runner, tmp_path, labels, "alice", "bob")
    return original


def test_crows_pairs_renewal_is_laid_out_as_the_published_csv(tmp_path, monkeypatch, runner, fixture_models):
    original = _crows_pairs_project(tmp_path, monkeypatch, runner)
    exports = tmp_path / "renewed" / "exports" / "renewed"
    assert invoke(runner, "build", "--version", "1.0.0", "--original").exit_code == 0
    assert _read(exports / "1.0.0" / "data" / "pairs.csv") == _read(original)  # the published file, field by field
    r = invoke(runner, "build", "--version", "1.1.0")  # a renewal's default: --layout original
    assert r.exit_code == 0, r.output + str(r.exception)
    release = exports / "1.1.0"
    built = _read(release / "data" / "pairs.csv")
    assert built[0] == HEADER  # exactly the original's columns, in order
    assert [row[0] for row in built[1:]] == [row[0] for row in ROWS if row[0] not in DROPPED]  # published order
    for row in built[1:]:
        published = next(p for p in ROWS if p[0] == row[0])
        if row[0] == "0":  # the fixed pair: only its two sentences changed
            assert row[1:3] == [FIXED["sent_more"], FIXED["sent_less"]] and row[3:] == published[3:] and row[0] == "0"
        else:
            assert row == published  # kept pairs: every field as published
    assert json.loads((release / "manifest.json").read_text())["layout"] == "original"
    card = " ".join((release / "README.md").read_text(encoding="utf-8").split())
    assert "laid out as the published file" in card
    assert "`data/pairs.csv` is laid out as the published file `crows_pairs_anonymized.csv`" in card
    with open(release / "changes.csv", encoding="utf-8", newline="") as f:
        assert sorted((c["change"], c["id"]) for c in csv.DictReader(f)) == [
            ("edited", "0"),
            ("removed", "3"),
            ("removed", "5"),
        ]
    # the kind's own layout on request: the same pairs in the workbench's columns
    r = invoke(runner, "build", "--version", "1.1.1", "--layout", "workbench", "--force")
    assert r.exit_code == 0, r.output + str(r.exception)
    workbench = exports / "1.1.1"
    header = _read(workbench / "data" / "pairs.csv")[0]
    assert header == ["id", "sent_more", "sent_less", "stereo_antistereo", "bias_type", "template"]
    assert "layout" not in json.loads((workbench / "manifest.json").read_text())
    ids = {r["id"] for r in pq.read_table(workbench / "data" / "pairs.parquet").to_pylist()}
    assert (
        ids == {r["id"] for r in pq.read_table(release / "data" / "pairs.parquet").to_pylist()} == {"7", "2", "0", "1"}
    )
    # workbench evaluate reads both layouts and gives the same figures
    model = str(fixture_models["mlm-bert"])
    docs = []
    for folder in (release, workbench):
        out = tmp_path / f"{folder.name}.json"
        r = invoke(
            runner, "evaluate", str(folder), "--model", model, "--json", str(out), "--cache", str(tmp_path / "c.sqlite")
        )
        assert r.exit_code == 0, r.output + str(r.exception)
        docs.append(json.loads(out.read_text()))
    assert docs[0]["models"] and docs[0]["models"] == docs[1]["models"]  # every figure, per model


def test_layout_original_is_refused_where_it_cannot_be_built(tmp_path, monkeypatch, runner):
    # a project with no [origin] has no published file to lay the release out as
    from workbench.authoring.stages import write_example_project
    from workbench.kinds.crows_pairs.example import EXAMPLE_TEMPLATES

    write_example_project(tmp_path / "own", "crows-pairs", EXAMPLE_TEMPLATES)
    monkeypatch.chdir(tmp_path / "own")
    r = invoke(runner, "build", "--version", "1.0.0", "--layout", "original")
    assert r.exit_code == 2 and "no [origin]" in str(r.exception)
    r = invoke(runner, "build", "--version", "1.0.0", "--layout", "sideways")
    assert r.exit_code == 2 and "original or workbench" in str(r.exception)


def _ordered(path):
    """The JSON with every object as its list of (key, value) pairs: key order compared too."""
    return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=list)


def test_stereoset_renewal_is_laid_out_as_the_published_json(tmp_path, monkeypatch, runner, fixture_models):
    from workbench.kinds.stereoset.example import document

    made = document()

    def published(cat):  # StereoSet's dev file's key order, not the one the workbench writes
        return {
            "id": cat["id"],
            "target": cat["target"],
            "bias_type": cat["bias_type"],
            "context": cat["context"],
            "sentences": [
                {
                    "sentence": s["sentence"],
                    "id": s["id"],
                    "labels": [{"label": v["label"], "human_id": v["human_id"]} for v in s["labels"]],
                    "gold_label": s["gold_label"],
                }
                for s in cat["sentences"]
            ],
        }

    doc = {
        "version": "1.0-dev",
        "data": {s: [published(c) for c in made["data"][s]] for s in ("intersentence", "intrasentence")},
    }
    original = tmp_path / "dev.json"
    original.write_text(json.dumps(doc), encoding="utf-8")
    r = invoke(
        runner,
        "import",
        str(original),
        "--kind",
        "stereoset",
        "--out",
        str(tmp_path / "ss"),
        "--origin-name",
        "StereoSet",
        "--origin-license",
        "cc-by-sa-4.0",
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(tmp_path / "ss")
    assert invoke(runner, "run").exit_code == 0
    exports = tmp_path / "ss" / "exports" / "ss"
    assert invoke(runner, "build", "--version", "1.0.0", "--original").exit_code == 0
    assert _ordered(exports / "1.0.0" / "data" / "stereoset.json") == _ordered(original)

    intra = doc["data"]["intrasentence"]
    fixed, dropped = intra[0], intra[2]["id"]
    context = fixed["context"].replace("very BLANK", "BLANK")
    cats = [c["id"] for s in doc["data"].values() for c in s]
    labels = [
        {
            "item_id": c,
            "label": "not-minimal" if c == dropped else "fix" if c == fixed["id"] else "keep",
            **({"fix": {"context": context}} if c == fixed["id"] else {}),
        }
        for c in cats
    ]
    label_as(runner, tmp_path, labels, "alice", "bob")
    r = invoke(runner, "build", "--version", "1.1.0", "--layout", "original")  # named (the default as well)
    assert r.exit_code == 0, r.output + str(r.exception)
    release = exports / "1.1.0"
    built = json.loads((release / "data" / "stereoset.json").read_text(encoding="utf-8"))
    assert built["version"] == "1.0-dev"  # the published file's version field
    assert _ordered(release / "data" / "stereoset.json")[0][0] == "version"
    split_keys = [k for k, _ in dict(_ordered(release / "data" / "stereoset.json"))["data"]]
    assert split_keys == ["intersentence", "intrasentence"]
    expected = {s: [c for c in cats_ if c["id"] != dropped] for s, cats_ in doc["data"].items()}
    for split, cats_ in expected.items():
        assert [c["id"] for c in built["data"][split]] == [c["id"] for c in cats_]
        for got, cat in zip(built["data"][split], cats_):
            if cat["id"] != fixed["id"]:
                assert got == cat and list(got) == list(cat)  # kept CATs: every field, in the published order
                assert [list(s) for s in got["sentences"]] == [list(s) for s in cat["sentences"]]
    got = next(c for c in built["data"]["intrasentence"] if c["id"] == fixed["id"])
    assert got["context"] == context and list(got) == list(fixed)
    for s, before in zip(got["sentences"], fixed["sentences"]):  # only the texts changed; labels as published
        assert {k: v for k, v in s.items() if k != "sentence"} == {k: v for k, v in before.items() if k != "sentence"}
        assert s["sentence"] == before["sentence"].replace("very ", "", 1)
    # the workbench layout: the format's own version field; evaluate gives the same figures on both
    r = invoke(runner, "build", "--version", "1.1.1", "--layout", "workbench", "--force")
    assert r.exit_code == 0, r.output + str(r.exception)
    workbench = exports / "1.1.1"
    other = json.loads((workbench / "data" / "stereoset.json").read_text(encoding="utf-8"))
    assert other["version"] == "workbench-stereoset/1" and other["data"] == {
        s: [c for c in built["data"][s]] for s in ("intrasentence", "intersentence")
    }
    model = str(fixture_models["mlm-bert"])
    docs = []
    for folder in (release, workbench):
        out = tmp_path / f"{folder.name}.json"
        r = invoke(
            runner, "evaluate", str(folder), "--model", model, "--json", str(out), "--cache", str(tmp_path / "c.sqlite")
        )
        assert r.exit_code == 0, r.output + str(r.exception)
        docs.append(json.loads(out.read_text()))
    assert docs[0]["models"] and docs[0]["models"] == docs[1]["models"]  # every figure, per model

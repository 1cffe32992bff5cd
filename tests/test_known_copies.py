"""Which published copy a file is (issue 43 item 8, docs/renewing.md "Which copy"): a table of known
copies (name, version, rows, sha256, a row-level signature) recognises a file at `workbench import`
(the message, `[origin] copy`, the card) and at `workbench evaluate` (every data set's
`source_copy` in the result's provenance). Two copies of one file of our own: an original and a
revised copy with 3 rows changed; the original re-saved with CRLF line endings and a byte-order mark
is still recognised by its rows; a copy with one more row changed is unknown."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import invoke
from support.renewal import CROWS_HEADER

from workbench.sources import known

HEADER = CROWS_HEADER  # CrowS-Pairs' published header
GROUPS = [("Older", "Younger", "age"), ("Poor", "Rich", "socioeconomic"), ("Women", "Men", "gender")]
ROWS = [
    [
        str(i),
        f"{a} people number {i} are slow with phones .",
        f"{b} people number {i} are slow with phones .",
        "stereo" if i % 3 else "antistereo",
        t,
        "[]",
        f"w{i}",
        "[]",
    ]
    for i, (a, b, t) in enumerate(GROUPS * 4)
]
KEY = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")


def _write(path: Path, rows, newline="\n", bom=False) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as f:
        if bom:
            f.write("\ufeff")
        csv.writer(f, lineterminator=newline).writerows([HEADER, *rows])
    return path


def _revised(rows, changed: int):
    out = [list(r) for r in rows]
    for r in out[:changed]:
        r[1] = r[1].replace("slow", "quick")
    return out


@pytest.fixture
def copies(tmp_path, monkeypatch):
    """The original, its revised copy (3 rows changed), and a table of both, named by WORKBENCH_KNOWN_COPIES."""
    original = _write(tmp_path / "pairs.csv", ROWS)
    revised = _write(tmp_path / "pairs_revised.csv", _revised(ROWS, 3)[:-1])  # 3 rows changed, one gone
    table = tmp_path / "copies.toml"
    table.write_text(
        f'format = "{known.FORMAT}"\n\n'
        + known.entry(original, "Own pairs", "1.0", "crows-pairs", KEY, note="our own")
        + "\n"
        + known.entry(revised, "Own pairs", "1.1 revised", "crows-pairs", KEY),
        encoding="utf-8",
    )
    monkeypatch.setenv(known.ENVIRONMENT, str(table))
    return original, revised


def test_two_copies_of_one_file_are_told_apart_and_a_resaved_copy_recognised_by_its_rows(copies, tmp_path):
    original, revised = copies
    found = known.recognise(original, "crows-pairs")
    assert (found.label, found.how) == ("Own pairs 1.0", "sha256")
    found = known.recognise(revised, "crows-pairs")
    assert (found.label, found.how, found.rows) == ("Own pairs 1.1 revised", "sha256", len(ROWS) - 1)
    # re-saved: CRLF line endings, a byte-order mark, the rows in another order: not the same bytes, the same rows
    resaved = _write(tmp_path / "pairs_crlf.csv", list(reversed(ROWS)), newline="\r\n", bom=True)
    assert resaved.read_bytes() != original.read_bytes()
    found = known.recognise(resaved, "crows-pairs")
    assert (found.label, found.how, found.rows) == ("Own pairs 1.0", "rows", len(ROWS))
    assert "recognised by its rows" in found.sentence() and "our own" in found.sentence()
    # saved as UTF-16 (with its BOM), or as JSON lines with the same fields: still the same rows
    utf16 = tmp_path / "pairs_utf16.csv"
    utf16.write_bytes(original.read_text(encoding="utf-8").encode("utf-16"))
    assert known.recognise(utf16, "crows-pairs").label == "Own pairs 1.0"
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text("".join(json.dumps(dict(zip(HEADER, r))) + "\n" for r in ROWS), encoding="utf-8")
    assert known.recognise(jsonl, "crows-pairs").label == "Own pairs 1.0"
    # one more row changed: neither copy
    other = _write(tmp_path / "pairs_other.csv", _revised(ROWS, 4))
    found = known.recognise(other, "crows-pairs")
    assert found.copy is None and found.label == "unknown" and found.sentence().startswith("unknown")
    # another kind's copies are not looked at
    assert known.recognise(original, "stereoset").label == "unknown"


def test_import_says_which_copy_and_the_card_and_results_record_it(
    copies, tmp_path, monkeypatch, runner, fixture_models
):
    original, revised = copies
    resaved = _write(tmp_path / "pairs_crlf.csv", ROWS, newline="\r\n", bom=True)
    r = invoke(
        runner,
        "import",
        str(resaved),
        "--kind",
        "crows-pairs",
        "--out",
        str(tmp_path / "renewed"),
        "--origin-name",
        "Own pairs",
        "--origin-license",
        "cc-by-sa-4.0",
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    said = " ".join(r.output.split())
    assert "which copy: Own pairs 1.0 (our own), recognised by its rows" in said, said
    assert 'published_copy = "Own pairs 1.0"' in (tmp_path / "renewed" / "workbench.toml").read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path / "renewed")
    assert invoke(runner, "run").exit_code == 0
    r = invoke(runner, "build", "--version", "1.0.0", "--original")
    assert r.exit_code == 0, r.output + str(r.exception)
    release = tmp_path / "renewed" / "exports" / "renewed" / "1.0.0"
    card = " ".join((release / "README.md").read_text(encoding="utf-8").split())
    assert "Which copy: `Own pairs 1.0`" in card
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["source_copy"] == "Own pairs 1.0"  # the published rows, laid out as published
    from workbench.release.runtime.cli import released_as  # the release's standalone evaluate.py records the same

    recorded = released_as(release, manifest)
    assert (recorded["source_copy"], recorded["origin_copy"]) == ("Own pairs 1.0", "Own pairs 1.0")
    # evaluate: every data set of the result says which copy it is
    model = str(fixture_models["mlm-bert"])
    out = tmp_path / "scores.json"
    other = _write(tmp_path / "pairs_other.csv", _revised(ROWS, 4))
    r = invoke(
        runner,
        "evaluate",
        str(revised),
        str(other),
        str(release),
        "--kind",
        "crows-pairs",
        "--model",
        model,
        "--json",
        str(out),
        "--cache",
        str(tmp_path / "c.sqlite"),
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    doc = json.loads(out.read_text(encoding="utf-8"))
    expected = ["Own pairs 1.1 revised", "unknown", "Own pairs 1.0"]
    assert [v["source_copy"] for v in doc["versions"]] == expected
    datasets = [
        json.loads(Path(v["json"]).read_text(encoding="utf-8"))["provenance"]["datasets"] for v in doc["versions"]
    ]  # each version's own result
    assert [d[0]["source_copy"] for d in datasets] == expected and datasets[2][0]["origin_copy"] == "Own pairs 1.0"
    # an unknown copy is said to be unknown at import too, and in the card
    r = invoke(runner, "import", str(other), "--kind", "crows-pairs", "--out", str(tmp_path / "other"))
    assert r.exit_code == 0 and "which copy: unknown" in " ".join(r.output.split())
    assert 'published_copy = "unknown"' in (tmp_path / "other" / "workbench.toml").read_text(encoding="utf-8")


def test_the_package_table_reads_and_its_example_entry_is_the_example_file(tmp_path, monkeypatch):
    from workbench.kinds.crows_pairs.example import write_example

    monkeypatch.delenv(known.ENVIRONMENT, raising=False)
    copies = known.read_table(known.TABLE)
    assert all(c.name and c.sha256 and c.rows for c in copies)
    path = write_example(tmp_path)
    found = known.recognise(path, "crows-pairs")
    assert (found.label, found.how) == ("Example pairs workbench example", "sha256"), (
        "the example file changed: recompute its entry (python -m workbench.sources.known ...)"
    )


def test_a_json_document_is_signed_by_its_objects_and_a_broken_table_is_named(tmp_path, monkeypatch):
    from workbench.core.errors import InputError
    from workbench.kinds.stereoset.example import document

    doc = document()
    dev = tmp_path / "dev.json"
    dev.write_text(json.dumps(doc), encoding="utf-8")
    table = tmp_path / "copies.toml"
    table.write_text(
        f'format = "{known.FORMAT}"\n' + known.entry(dev, "Own CATs", "dev", "stereoset", ("id", "sentence")),
        encoding="utf-8",
    )
    monkeypatch.setenv(known.ENVIRONMENT, str(table))
    indented = tmp_path / "dev_indented.json"
    indented.write_text("\ufeff" + json.dumps(doc, indent=4).replace("\n", "\r\n"), encoding="utf-8")
    found = known.recognise(indented, "stereoset")
    sentences = sum(len(c["sentences"]) for s in doc["data"].values() for c in s)
    assert (found.label, found.how, found.rows) == ("Own CATs dev", "rows", sentences)
    table.write_text("format = 'something else'\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a table of known copies"):
        known.recognise(indented, "stereoset")
    assert known.source_copy([indented], "stereoset") == "unknown"  # a result is not stopped by it

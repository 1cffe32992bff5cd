"""`build --original` of a renewal reproduces the published file (issue 43): for every kind that
imports (those whose Kind declares an `audit`), a file of our own in the published layout, with the
quirks published files have (a byte-order mark, double and trailing spaces, StereoSet's `version`
field, columns the kind does not read), is imported and built back; the built file equals the
imported one field by field, each text byte for byte. Columns the kind's release does not carry
stay, per item, under `source` in the project's template files. No sentence of any dataset is used
(BBNLI: one of the real files of ../shared/bbnli, copied and given the quirks here)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import invoke

from workbench import kinds
from support.renewal import CROWS_HEADER

BOM = "\ufeff"


def _csv(path: Path, header: list[str], rows: list[list[str]], delimiter: str = ",") -> Path:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(BOM)
        csv.writer(f, delimiter=delimiter, lineterminator="\n").writerows([header, *rows])
    return path


def _read_csv(path: Path, delimiter: str = ",") -> list[dict]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f, delimiter=delimiter))


def _sources(project: Path) -> dict[str, dict]:
    """Item id -> the `source` (the file's other columns) its template file (or imported table) keeps."""
    from workbench.authoring.stages import template_sources

    out = {}
    for raw, _ in template_sources([project / "templates"])[1]:
        for key in ("pairs", "statements"):
            for entry in raw.data.get(key) or []:
                out[str(entry["id"])] = dict(entry.get("source") or {})
    return out


# -- each kind: its file with the quirks, and how the built file is compared with it ---------------------------
def stereoset(tmp_path: Path):
    from workbench.kinds.stereoset.example import document

    doc = document()
    doc["version"] = "1.0-dev"
    cat = doc["data"]["intrasentence"][3]  # a double space, and a trailing one
    cat["context"] = cat["context"].replace("are BLANK", "are  BLANK") + " "
    cat["target"] += " "
    for s in cat["sentences"]:
        s["sentence"] = s["sentence"].replace("are ", "are  ", 1)
    doc["data"]["intersentence"][1]["sentences"][2]["sentence"] += "  "
    path = tmp_path / "dev.json"
    path.write_text(BOM + json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")

    def same(release: Path, project: Path) -> None:
        built = json.loads((release / "data" / "stereoset.json").read_text(encoding="utf-8"))
        assert built == doc  # the version field, every key, every text

    return path, same


CP_HEADER = CROWS_HEADER
CP_ROWS = [
    [
        "0",
        "Older  people are slow with phones . ",
        "Younger  people are slow with phones . ",
        "stereo",
        "age",
        "[['age'], ['age']]",
        "a0",
        "['a1', 'a2']",
    ],
    [
        "3",
        "Nurses are gentle with patients .",
        "Pilots are gentle with patients .",
        "antistereo",
        "socioeconomic",
        "[]",
        "a4 ",
        "[]",
    ],
]


def crows_pairs(tmp_path: Path):
    path = _csv(tmp_path / "crows_pairs_anonymized.csv", CP_HEADER, CP_ROWS)

    def same(release: Path, project: Path) -> None:
        # a renewal's default layout is the published file's: its header (the unnamed index column first), order, cells
        with open(release / "data" / "pairs.csv", encoding="utf-8", newline="") as f:
            assert list(csv.reader(f)) == [CP_HEADER, *CP_ROWS]
        workbench_layout(release, project)

    def workbench_layout(release: Path, project: Path) -> None:
        built = {r["id"]: r for r in pq.read_table(release / "data" / "pairs.parquet").to_pylist()}
        kept = _sources(project)
        assert sorted(built) == sorted(r[0] for r in CP_ROWS)
        for row in CP_ROWS:
            published = dict(zip(CP_HEADER, row))
            for column in CP_HEADER[1:5]:
                assert built[row[0]][column] == published[column], (row[0], column)
            assert kept[row[0]] == {c: published[c] for c in CP_HEADER[5:]}

    return path, same


SOS_HEADER = ["Toxic_sent", "Non_Toxic_sent", "stereo_antistereo", "bias_type", "identity"]
SOS_ROWS = [
    [
        "the  quiet tenants are idiots . ",
        "the  quiet tenants are kind . ",
        "stereo",
        "Religion_Marginalized",
        "tenants ",
    ],
    ["those farmers are losers", "those farmers are neighbours", "stereo", "Religion_Non_Marginalized", "farmers"],
]


def sos(tmp_path: Path):
    path = _csv(tmp_path / "sos.csv", SOS_HEADER, SOS_ROWS)

    def same(release: Path, project: Path) -> None:
        built = {r["id"]: r for r in _read_csv(release / "data" / "sos.csv")}
        kept = _sources(project)
        assert sorted(built) == [str(i) for i in range(len(SOS_ROWS))]
        for i, row in enumerate(SOS_ROWS):
            b, published = built[str(i)], dict(zip(SOS_HEADER, row))
            assert (b["profane"], b["nice"], b["identity"]) == (
                published["Toxic_sent"],
                published["Non_Toxic_sent"],
                published["identity"],
            )
            # bias_type is read as attribute and marginalised (the SOS evaluator's columns), and kept as published
            side = "Marginalized" if b["marginalised"] == "true" else "Non_Marginalized"
            assert f"{b['attribute'].capitalize()}_{side}" == published["bias_type"]
            assert kept[str(i)] == {
                "stereo_antistereo": published["stereo_antistereo"],
                "bias_type": published["bias_type"],
            }

    return path, same


SOFA_HEADER = ["id", "category", "target", "identity", "stereotype", "probe", "note"]
SOFA_ROWS = [
    ["7", "age", "older people", "older people", "are slow  with phones ", "older people are slow  with phones ", "x"],
    ["7", "age", "older people", "teenagers", "are slow  with phones ", "teenagers are slow  with phones ", "y"],
    ["9", "job", "job", "nurses", "never rest", "the nurses never rest", ""],
]


def sofa(tmp_path: Path):
    path = _csv(tmp_path / "SoFa.csv", SOFA_HEADER, SOFA_ROWS)

    def same(release: Path, project: Path) -> None:
        built = {(r["id"], r["identity"]): r for r in _read_csv(release / "data" / "probes.csv")}
        assert sorted(built) == sorted((r[0], r[3]) for r in SOFA_ROWS)
        for row in SOFA_ROWS:
            published = dict(zip(SOFA_HEADER, row))
            assert {c: built[(row[0], row[3])][c] for c in SOFA_HEADER[:6]} == {
                c: published[c] for c in SOFA_HEADER[:6]
            }
        assert _sources(project)["7"] == {"note": ["x", "y"]}

    return path, same


HONEST_HEADER = ["template_masked", "raw", "identity", "number", "category", "type"]
HONEST_ROWS = [
    [
        "the aunt  is known as [M]. ",
        "[I]  is known as [M]. ",
        "the aunt",
        "singular",
        "female",
        "descriptive_adjective",
    ],
    [
        "the uncle  is known as [M]. ",
        "[I]  is known as [M]. ",
        "the uncle",
        "singular",
        "male",
        "descriptive_adjective",
    ],
    ["The aunt should work as a [M].", "[I] should work as a [M].", "the aunt", "singular", "female", "occupation"],
]


def honest(tmp_path: Path):
    path = _csv(tmp_path / "honest_templates.tsv", HONEST_HEADER, HONEST_ROWS, delimiter="\t")

    def same(release: Path, project: Path) -> None:
        rows = pq.read_table(release / "data" / "templates.parquet").to_pylist()
        assert {r["row_id"]: [r[c] for c in HONEST_HEADER] for r in rows} == {
            str(i): row for i, row in enumerate(HONEST_ROWS)
        }
        tsv = _read_csv(release / "data" / "templates.tsv", delimiter="\t")
        assert sorted(tuple(r[c] for c in HONEST_HEADER) for r in tsv) == sorted(map(tuple, HONEST_ROWS))

    return path, same


def nli(tmp_path: Path):
    from conftest import SHARED

    original = SHARED / "bbnli" / "gender" / "man_is_to_breadwinner.json"
    if not original.is_file():
        pytest.fail(f"{original} is missing: tests need the real BBNLI files")
    doc = json.loads(original.read_text(encoding="utf-8"))
    doc["premise"][0] = doc["premise"][0].replace(" ", "  ", 1) + " "  # a double and a trailing space
    folder = tmp_path / "bbnli" / "gender"
    folder.mkdir(parents=True)
    path = folder / original.name
    path.write_text(BOM + json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")

    def same(release: Path, project: Path) -> None:
        assert json.loads((release / "bbnli" / "gender" / path.name).read_text(encoding="utf-8")) == doc

    return tmp_path / "bbnli", same


QUIRKY = {"stereoset": stereoset, "crows-pairs": crows_pairs, "sos": sos, "sofa": sofa, "honest": honest, "nli": nli}


def test_every_kind_that_imports_is_covered():
    assert {k.name for k in kinds.loadable() if k.audit is not None and k.package == "workbench"} == set(QUIRKY)


@pytest.mark.parametrize("kind", sorted(QUIRKY))
def test_build_original_equals_the_published_file_field_by_field(kind, tmp_path, monkeypatch, runner):
    source, same = QUIRKY[kind](tmp_path)
    project = tmp_path / "renewed"
    r = invoke(runner, "import", str(source), "--kind", kind, "--out", str(project))
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(project)
    r = invoke(runner, "run")
    assert r.exit_code == 0, r.output + str(r.exception)
    r = invoke(runner, "build", "--version", "1.0.0", "--original")
    assert r.exit_code == 0, r.output + str(r.exception)
    same(project / "exports" / "renewed" / "1.0.0", project)
